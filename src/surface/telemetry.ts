// Recall telemetry: per tool, how many results pi-overflow bounded, how often the model queried one
// of them (overflow_query) and how often it re-ran the same call in the turn right after a bounded
// result (a sign the view missed what it needed). Invariants: only counts are kept, never a command,
// a path or any output (a call is compared by its run text, reruns/run-key.ts, held in memory for one turn);
// the counts file is `<agentDir>/my-pi/pi-overflow-stats.json` beside the store, 0600, written
// atomically and at once (a few hundred bytes, synchronously: no write is left pending when a session
// ends), at most MAX_TOOLS tools; nothing here throws into Pi.

import { randomBytes } from "node:crypto";
import {
	closeSync,
	constants,
	fchmodSync,
	fstatSync,
	mkdirSync,
	openSync,
	readFileSync,
	renameSync,
	unlinkSync,
	writeFileSync,
} from "node:fs";
import { dirname, join } from "node:path";
import { runTextOf } from "../reruns/run-key.js";

/** The counts file's name, in the store directory's parent (`my-pi/`). */
export const TELEMETRY_FILE_NAME = "pi-overflow-stats.json";
/** Tools counted apart; any further tool is counted under "other". */
const MAX_TOOLS = 64;
const FILE_MODE = 0o600;
/** Mode of `my-pi/` when the counts file creates it (as the store does). */
const DIR_MODE = 0o700;
const MAX_FILE_BYTES = 64 * 1024;

export interface ToolCounts {
	/** Results bounded (a view or a recovery marker, with or without a stored entry). */
	bounded: number;
	/** overflow_query calls on one of this tool's entries. */
	queried: number;
	/** The same call again in the turn right after one of its results was bounded. */
	reruns: number;
	/** Views that compared their result with the last run of the same command (compareReruns). */
	compared: number;
	/** …of which showed signal lines gone since that run (something fixed). */
	fixed: number;
}

export interface TelemetryCounts {
	/** ISO time the counts started. */
	since: string;
	tools: Record<string, ToolCounts>;
}

export interface TelemetryOptions {
	/** The store directory; the counts file goes beside it. */
	root: string;
	now?: () => number;
}

export class RecallTelemetry {
	private counts: TelemetryCounts | undefined;
	/** The calls (their run text: reruns/run-key.ts) whose results were bounded in the current turn, and in the turn before. */
	private boundedThisTurn = new Map<string, string>();
	private boundedLastTurn = new Map<string, string>();
	/** Tool name of every id this process bounded (queries name an id). */
	private readonly toolOfId = new Map<string, string>();
	private readonly path: string;
	private readonly now: () => number;

	constructor(options: TelemetryOptions) {
		this.path = join(dirname(options.root), TELEMETRY_FILE_NAME);
		this.now = options.now ?? Date.now;
	}

	/** A tool call started: a call equal to one bounded in the turn before counts as a re-run. */
	noteToolCall(toolName: string, input: unknown): void {
		if (this.boundedLastTurn.size === 0) return; // nothing to compare with
		const key = runTextOf(toolName, input);
		if (key === undefined || this.boundedLastTurn.get(key) !== toolName) return;
		this.boundedLastTurn.delete(key);
		this.bump(toolName, "reruns");
	}

	/** A result was bounded (`id` when it was stored). */
	noteBounded(toolName: string, input: unknown, id: string | undefined): void {
		if (id !== undefined) this.toolOfId.set(id, toolName);
		const key = runTextOf(toolName, input);
		if (key !== undefined) this.boundedThisTurn.set(key, toolName);
		this.bump(toolName, "bounded");
	}

	/** overflow_query was called on `id`; `toolName` from the entry when this process did not bound it. */
	noteQuery(id: string, toolName?: string): void {
		const tool = this.toolOfId.get(id) ?? toolName;
		if (tool !== undefined) this.bump(tool, "queried");
	}

	/** A view compared its result with the last run of the same command; `gone` lines of that run are no longer there. */
	noteRerun(toolName: string, comparison: { gone: readonly unknown[] }): void {
		// One read and one write of the counts file for both counts.
		if (comparison.gone.length > 0) this.bump(toolName, "compared", "fixed");
		else this.bump(toolName, "compared");
	}

	/** The tool name this process recorded for an id. */
	findTool(id: string): string | undefined {
		return this.toolOfId.get(id);
	}

	/** An assistant message ended: the calls it holds are the turn "right after" the results bounded so far. */
	noteTurnEnd(): void {
		this.boundedLastTurn = this.boundedThisTurn;
		this.boundedThisTurn = new Map();
	}

	/** The counts so far (the file's, which every process adds to). */
	read(): TelemetryCounts {
		const counts = this.load();
		return { since: counts.since, tools: structuredClone(counts.tools) };
	}

	/**
	 * Forgets every count and removes the counts file (the user's purge all); counting starts again
	 * at the next bounded result. Returns why the file could not be removed, or undefined.
	 */
	clear(): string | undefined {
		this.counts = undefined;
		this.boundedThisTurn = new Map();
		this.boundedLastTurn = new Map();
		this.toolOfId.clear();
		try {
			unlinkSync(this.path);
			return undefined;
		} catch (error) {
			const code = (error as NodeJS.ErrnoException).code;
			return code === "ENOENT" ? undefined : `cannot remove ${this.path}: ${code ?? String(error)}`;
		}
	}

	/** The counts file's path (`my-pi/pi-overflow-stats.json`). */
	get filePath(): string {
		return this.path;
	}

	private bump(toolName: string, ...fields: Array<keyof ToolCounts>): void {
		// Read again first: another Pi process may have counted since.
		this.counts = undefined;
		const counts = this.load();
		const tool =
			counts.tools[toolName] !== undefined || Object.keys(counts.tools).length < MAX_TOOLS ? toolName : "other";
		counts.tools[tool] ??= { bounded: 0, queried: 0, reruns: 0, compared: 0, fixed: 0 };
		for (const field of fields) counts.tools[tool][field] += 1;
		this.save(counts);
	}

	private load(): TelemetryCounts {
		this.counts ??= readCounts(this.path) ?? { since: new Date(this.now()).toISOString(), tools: {} };
		return this.counts;
	}

	private save(counts: TelemetryCounts): void {
		const temp = `${this.path}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`;
		try {
			mkdirSync(dirname(this.path), { recursive: true, mode: DIR_MODE });
			const fd = openSync(
				temp,
				constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
				FILE_MODE,
			);
			try {
				writeFileSync(fd, `${JSON.stringify(counts)}\n`);
				fchmodSync(fd, FILE_MODE);
			} finally {
				closeSync(fd);
			}
			renameSync(temp, this.path);
		} catch {
			try {
				unlinkSync(temp); // counts are best effort: the next change tries again
			} catch {
				// nothing was created
			}
		}
	}
}

/** The counts file, when it is there and ours; undefined otherwise (a fresh start). */
function readCounts(path: string): TelemetryCounts | undefined {
	try {
		const fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
		let text: string;
		try {
			const stats = fstatSync(fd);
			if (!stats.isFile() || stats.size > MAX_FILE_BYTES) return undefined;
			text = readFileSync(fd, "utf8");
		} finally {
			closeSync(fd);
		}
		return parseCounts(JSON.parse(text));
	} catch {
		return undefined;
	}
}

function parseCounts(value: unknown): TelemetryCounts | undefined {
	if (typeof value !== "object" || value === null) return undefined;
	const { since, tools } = value as { since?: unknown; tools?: unknown };
	if (typeof since !== "string" || typeof tools !== "object" || tools === null) return undefined;
	const parsed: Record<string, ToolCounts> = {};
	for (const [name, counts] of Object.entries(tools as Record<string, unknown>).slice(0, MAX_TOOLS)) {
		const { bounded, queried, reruns, compared = 0, fixed = 0 } = (counts ?? {}) as Record<string, unknown>;
		// Counts files from before re-runs were compared have no `compared` and `fixed`: 0.
		const all = [bounded, queried, reruns, compared, fixed];
		if (all.every((count) => Number.isSafeInteger(count) && (count as number) >= 0)) {
			parsed[name] = {
				bounded: bounded as number,
				queried: queried as number,
				reruns: reruns as number,
				compared: compared as number,
				fixed: fixed as number,
			};
		}
	}
	return { since, tools: parsed };
}
