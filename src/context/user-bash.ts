// The user's own `!command` output in what the model is sent. Pi adds it to the session as a
// bashExecution message holding its own 50 KB tail and, when it cut the output, the path of a
// world-readable `<tmpdir>/pi-bash-<hex>.log` that Pi's text for the model names. Invariants: such a
// message reaches the model bounded like a tool result (a view with an id, or its text with a recovery
// marker) and never with a spill path; its text is computed once per message and kept, in memory and
// as a custom session entry, so every later call, and a resumed or forked session, sends the same
// bytes and the same id; `!!` messages (excludeFromContext) are never touched, so Pi keeps them out.

import { createHash } from "node:crypto";
import { type BoundDependencies, boundToolResult, type ToolResultPatch } from "../bound/bound.js";
import { type ContextMessage, type MaskableView, readStubLines, type StubLine } from "./masking.js";
import { isPiBashSpillPath } from "../intake/pi-bash.js";
import { formatNote } from "../lines/protocol.js";
import { minSourceBytes, openSpillFile, sourceEndsWith } from "../io/source.js";
import { joinTextParts } from "../intake/stash.js";

/** customType of the session entries that keep each bounded `!command` text. */
export const USER_BASH_ENTRY_TYPE = "pi-overflow/user-bash";
/** The tool name a `!command`'s stored entry and view carry. */
export const USER_BASH_TOOL_NAME = "user_bash";
/** Longest wait for Pi to finish writing a just-finished command's spill file (Pi does not wait for it). */
export const DEFAULT_SPILL_FLUSH_WAIT_MS = 1_000;
/** A command that finished longer ago than this has long been written out: no wait. */
const RECENT_COMMAND_MS = 10_000;
const SPILL_FLUSH_POLL_MS = 20;
/** `!command` start times remembered (from Pi's user_bash event) for the spill file's age check. */
const MAX_TRACKED_STARTS = 64;
/** What the model reads in place of Pi's spill path. */
const SPILL_PATH_STAND_IN = "(Pi's temp file)";

/** What one `!command` message becomes for the model, kept per message. */
export interface UserBashRecord {
	/** keyOfBashMessage: the message's time and a hash of its command. */
	key: string;
	/** The text the model gets in place of the output. */
	output: string;
	/** The stored entry, when the output was bounded and stored. */
	id?: string;
	totalLines?: number;
	totalBytes?: number;
	/** details.overflow.top of the bound stage, when it gives one. */
	top?: StubLine[];
}

export interface UserBashOptions {
	/** Keeps a record in the session (pi.appendEntry); failures are ignored. */
	persist(record: UserBashRecord): void;
	/** Clock in ms since the epoch; default Date.now. */
	now?: () => number;
	/** See DEFAULT_SPILL_FLUSH_WAIT_MS. */
	flushWaitMs?: number;
	/** Called once a `!command` read from Pi's spill file was bounded (spill-release.ts removes the file). */
	onSpillBounded?(patch: ToolResultPatch, spillPath: string): Promise<unknown>;
}

/** What the bound stage needs for one message; the budget is the message's share of the window. */
export type UserBashBoundDependencies = Omit<BoundDependencies, "stash" | "toolStartedAt"> & { budgetChars: number };

/** The fields of Pi's BashExecutionMessage read here. */
interface BashExecution extends ContextMessage {
	role: "bashExecution";
	command: string;
	output: string;
	timestamp: number;
	truncated?: boolean;
	fullOutputPath?: string;
	excludeFromContext?: boolean;
}

/** The key of a `!command` message: its time and a hash of its command (a session keeps both). */
export function keyOfBashMessage(message: { timestamp: number; command: string }): string {
	return `user-bash:${message.timestamp}:${createHash("sha1").update(message.command, "utf8").digest("hex").slice(0, 16)}`;
}

/** The bounded `!command` texts of one session. */
export class UserBashViews {
	private readonly records = new Map<string, UserBashRecord>();
	/** Messages that fit as they are (decided once, so a later, smaller budget does not change them). */
	private readonly fitting = new Set<string>();
	private readonly pending = new Map<string, Promise<UserBashRecord | undefined>>();
	private readonly starts: Array<{ command: string; at: number }> = [];
	private readonly now: () => number;

	constructor(private readonly options: UserBashOptions) {
		this.now = options.now ?? Date.now;
	}

	/** Takes the records a session kept (its custom entries); returns their ids. */
	restore(entries: readonly unknown[]): string[] {
		const ids: string[] = [];
		for (const entry of entries) {
			if (!isRecord(entry) || entry.type !== "custom" || entry.customType !== USER_BASH_ENTRY_TYPE) continue;
			const record = parseRecord(entry.data);
			if (record === undefined) continue;
			this.records.set(record.key, record);
			if (record.id !== undefined) ids.push(record.id);
		}
		return ids;
	}

	/** Pi's user_bash event (interactive mode): when the command started, for the spill file's age check. */
	noteStart(command: string, at: number): void {
		this.starts.push({ command, at });
		if (this.starts.length > MAX_TRACKED_STARTS) this.starts.shift();
	}

	/** The view a message carries once transformed, for masking; undefined for anything else. */
	findView(message: ContextMessage): MaskableView | undefined {
		if (!isBashExecution(message)) return undefined;
		const record = this.records.get(keyOfBashMessage(message));
		if (record?.id === undefined || record.totalLines === undefined || record.totalBytes === undefined)
			return undefined;
		return {
			id: record.id,
			toolName: USER_BASH_TOOL_NAME,
			totalLines: record.totalLines,
			totalBytes: record.totalBytes,
			text: record.output,
			...(record.top ? { top: record.top } : {}),
		};
	}

	/**
	 * The message as the model gets it: a `!command` bounded (computed on first sight, then kept), any
	 * other message as it is. Never throws; the spill path never survives.
	 */
	async transform(message: ContextMessage, deps: () => UserBashBoundDependencies): Promise<ContextMessage> {
		if (!isBashExecution(message) || message.excludeFromContext === true) return message;
		const key = keyOfBashMessage(message);
		if (this.fitting.has(key)) return message;
		let record = this.records.get(key);
		if (record === undefined) {
			let computing = this.pending.get(key);
			if (computing === undefined) {
				computing = this.compute(message, key, deps).finally(() => this.pending.delete(key));
				this.pending.set(key, computing);
			}
			record = await computing;
		}
		if (record === undefined) return message;
		const out: ContextMessage = { ...message, output: record.output, truncated: false };
		delete out.fullOutputPath;
		return out;
	}

	private async compute(
		message: BashExecution,
		key: string,
		depsOf: () => UserBashBoundDependencies,
	): Promise<UserBashRecord | undefined> {
		const spillPath =
			message.truncated === true && typeof message.fullOutputPath === "string" ? message.fullOutputPath : undefined;
		let record: UserBashRecord;
		try {
			const deps = depsOf();
			if (spillPath === undefined && message.output.length <= deps.budgetChars) {
				this.fitting.add(key);
				return undefined;
			}
			// The spill file is checked here first, so that a reason it is refused (which may name it)
			// reaches neither the view nor the stored metadata; the bound stage checks it again.
			let path: string | undefined;
			let note: string | undefined;
			if (spillPath !== undefined) {
				// Only Pi's own spill file is read (a user_bash extension may name anything).
				const refused = isPiBashSpillPath(spillPath)
					? await this.checkSpillFile(spillPath, message, deps)
					: "not Pi's own spill file";
				if (refused === undefined) path = spillPath;
				else
					note = formatNote(
						`Pi kept only the end of this output; its full output could not be read (${hideSpillPath(refused, spillPath).slice(0, 160)})`,
					);
			}
			const budgetChars = note === undefined ? deps.budgetChars : Math.max(1, deps.budgetChars - note.length - 1);
			const patch = await boundToolResult(
				{
					toolName: USER_BASH_TOOL_NAME,
					toolCallId: key,
					content: [{ type: "text", text: message.output }],
					details: path === undefined ? undefined : { fullOutputPath: path },
				},
				{ ...deps, budgetChars, stash: undefined, toolStartedAt: this.findStart(message) },
			);
			if (patch !== undefined && path !== undefined) await this.options.onSpillBounded?.(patch, path);
			if (patch === undefined) {
				if (note === undefined) {
					this.fitting.add(key);
					return undefined;
				}
				record = { key, output: `${message.output}\n${note}` };
			} else {
				const overflow = readOverflow(patch.details);
				const text = hideSpillPath(joinTextParts(patch.content), spillPath);
				const output = note === undefined ? text : insertAfterFirstLine(text, note);
				record = overflow?.id === undefined ? { key, output } : { key, output, ...overflow };
			}
		} catch (error) {
			// Never the spill path, never unbounded: the end Pi kept, said so.
			const budget = safeBudget(depsOf);
			const note = formatNote(
				`this output could not be bounded (${hideSpillPath(String(error instanceof Error ? error.message : error), spillPath).slice(0, 200)}); showing its end`,
			);
			record = {
				key,
				output: `${note}\n${message.output.slice(Math.max(0, message.output.length - Math.max(0, budget - note.length - 1)))}`,
			};
		}
		this.records.set(key, record);
		try {
			this.options.persist(record);
		} catch {
			// The session keeps nothing: a resumed session computes the text again.
		}
		return record;
	}

	/** The latest start of the same command at or before the message, when Pi reported one. */
	private findStart(message: BashExecution): number | undefined {
		for (let index = this.starts.length - 1; index >= 0; index--) {
			const start = this.starts[index];
			if (start.command === message.command && start.at <= message.timestamp) return start.at;
		}
		return undefined;
	}

	/**
	 * Why Pi's spill file cannot be used, or undefined when it passes the bound stage's checks and
	 * holds the output Pi kept. Pi ends the file's stream without waiting for it, so for a command
	 * that has just finished the file is read again (bounded) until it ends with that output.
	 */
	private async checkSpillFile(
		path: string,
		message: BashExecution,
		deps: UserBashBoundDependencies,
	): Promise<string | undefined> {
		const checks = { uid: deps.uid ?? process.getuid?.(), notBeforeMs: this.findStart(message) };
		const recent = this.now() - message.timestamp <= RECENT_COMMAND_MS;
		const deadline = this.now() + (this.options.flushWaitMs ?? DEFAULT_SPILL_FLUSH_WAIT_MS);
		for (;;) {
			const opened = await openSpillFile(path, checks);
			if (!opened.ok) return opened.reason;
			const { source } = opened;
			const complete = await (async () =>
				source.size > minSourceBytes(message.output) && (await sourceEndsWith(source, message.output)))().finally(() =>
				source.close(),
			);
			if (complete) return undefined;
			if (!recent || this.now() >= deadline) return "the file does not hold the output Pi kept";
			await new Promise((resolve) => setTimeout(resolve, SPILL_FLUSH_POLL_MS));
		}
	}
}

function isBashExecution(message: ContextMessage): message is BashExecution {
	return (
		message.role === "bashExecution" &&
		typeof message.command === "string" &&
		typeof message.output === "string" &&
		typeof message.timestamp === "number"
	);
}

/** The note as the view's second line (under its header), so it is read with the header. */
function insertAfterFirstLine(text: string, note: string): string {
	const end = text.indexOf("\n");
	return end < 0 ? `${text}\n${note}` : `${text.slice(0, end)}\n${note}${text.slice(end)}`;
}

function hideSpillPath(text: string, path: string | undefined): string {
	return path === undefined || path === "" ? text : text.split(path).join(SPILL_PATH_STAND_IN);
}

function safeBudget(depsOf: () => UserBashBoundDependencies): number {
	try {
		return depsOf().budgetChars;
	} catch {
		return 2_000;
	}
}

/** details.overflow of a bound result, as a record keeps it. */
function readOverflow(details: unknown): Pick<UserBashRecord, "id" | "totalLines" | "totalBytes" | "top"> | undefined {
	if (!isRecord(details) || !isRecord(details.overflow)) return undefined;
	const { id, totalLines, totalBytes, top } = details.overflow;
	if (typeof id !== "string" || !isCount(totalLines) || !isCount(totalBytes)) return undefined;
	const lines = readStubLines(top);
	return { id, totalLines, totalBytes, ...(lines ? { top: lines } : {}) };
}

/** A record read back from a session entry (written by this module, but a session file is editable). */
function parseRecord(value: unknown): UserBashRecord | undefined {
	if (!isRecord(value) || typeof value.key !== "string" || typeof value.output !== "string") return undefined;
	const record: UserBashRecord = { key: value.key, output: value.output };
	const overflow = readOverflow({ overflow: value });
	return overflow !== undefined && /^[0-9a-f]{12}$/.test(overflow.id ?? "") ? { ...record, ...overflow } : record;
}

function isRecord(value: unknown): value is Record<string, unknown> {
	return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isCount(value: unknown): value is number {
	return typeof value === "number" && Number.isSafeInteger(value) && value >= 0;
}
