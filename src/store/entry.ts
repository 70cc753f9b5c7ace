// What a store entry is: its metadata schema (EntryMeta, validated by parseEntryMeta), its id (12
// lowercase hex characters, the only text a store path is ever formed from) and the names of its
// files. Pure, except the process-wide record of issued ids. Invariant: an id this process issued
// or saw in a session is never issued again (see OverflowStore.allocateEntryId).

import { createHash, randomBytes } from "node:crypto";
import { join } from "node:path";
import { createStoreError } from "./fs.js";

export type EntrySource = "spill-file" | "stash" | "current";

export interface EntryMeta {
	id: string;
	sessionId: string;
	toolCallId: string;
	toolName: string;
	/** ISO time the entry was stored. */
	createdAt: string;
	/** Lines of the output (as `wc -l`, plus 1 when the last line has no final newline): the true total. */
	totalLines: number;
	/** Bytes of the output. */
	totalBytes: number;
	/** Bytes of the stored copy: totalBytes, unless the middle was left out (`gap`). */
	storedBytes: number;
	/** Lines of the stored copy, counted like totalLines. */
	storedLines: number;
	/** The stored copy had its middle left out (maxEntryBytes); same as `gap` being set. */
	truncated: boolean;
	/** Where the middle was left out, to map stored line numbers to the output's. */
	gap?: EntryGap;
	source: EntrySource;
	/** E.g. why the spill file was not usable. */
	sourceNote?: string;
	/** Pi's verdict on a failed command ("Command exited with code 2"), shown under the view. */
	status?: string;
	/**
	 * "cr": the output has no LF and at least one CR, and its lines (totalLines, the view's and the
	 * query's numbers) are its CR-separated records (never with a gap). Absent: lines end at LFs,
	 * as in every entry stored before this field. storedLines still counts the stored copy's LFs.
	 */
	separator?: "cr";
	/** What a later run of the same command is compared with (reruns/): absent on entries stored before. */
	run?: RunRecord;
}

/** One line of a run's record: its number in the output, its text as the view shows it, how many lines had it. */
export interface RunLine {
	line: number;
	text: string;
	count: number;
	/**
	 * Set when the line's shape had more lines than its run kept (the signal collector keeps a sample
	 * of a common shape): the shape's lines in all. Such a line is compared by its shape's count only.
	 */
	shapeCount?: number;
}

/** How many signal lines a re-run had that its last run did not (`new`), the other way (`gone`), and both (`still`). */
export interface RunCounts {
	new: number;
	gone: number;
	still: number;
}

/** A stored run of a command, as re-runs compare it (reruns/summary.ts makes it; bounded there). */
export interface RunRecord {
	/** Equal for runs of the same tool with the same arguments (reruns/run-key.ts). */
	key: string;
	/** What was run, for the user: the bash command or the tool's arguments, clipped. */
	label: string;
	/** The signal lines found, in line order. */
	signals: RunLine[];
	/** The run's last verdict line (a summary or the last line), when it has one. */
	verdict?: RunLine;
	/** Set when this run was compared with an earlier one: that run's id (absent when it was not stored) and what its view said. */
	rerunOf?: { id?: string; lines: string[]; counts: RunCounts };
}

/** A left-out middle (see StoredGap in source.ts), with the signal lines the scan found in it. */
export interface EntryGap {
	/** Stored line number of the marker line that stands for the middle. */
	markerLine: number;
	/** Output line number of the stored line right after the marker. */
	firstTailLine: number;
	leftOutBytes: number;
	/** Signal lines found in the left-out middle (they can be shown, never read back), bounded. */
	signals: GapSignal[];
}

export interface GapSignal {
	/** Output line number. */
	line: number;
	/** As shown in the view (clipped). */
	text: string;
	/** Lines that carried this text. */
	count: number;
}

const ENTRY_ID_PATTERN = /^[0-9a-f]{12}$/;
/** `<id>.txt` or `<id>.json`. */
export const ENTRY_FILE_PATTERN = /^([0-9a-f]{12})\.(txt|json)$/;
/** `.<id>.<pid>.<hex>.tmp`: a writer's temp file (createTempName). */
export const TEMP_FILE_PATTERN = /^\.([0-9a-f]{12})\.(\d{1,10})\.([0-9a-f]{1,32})\.tmp$/;
const ENTRY_SOURCES: readonly EntrySource[] = ["spill-file", "stash", "current"];

/** Ids tried before allocateEntryId gives up (a collision of twelve hex digits a thousand times over). */
export const MAX_ID_ATTEMPTS = 1000;
/** Ids remembered as issued by this process; the oldest are forgotten beyond this. */
const MAX_ISSUED_IDS = 200_000;
const ISSUED_IDS_KEY = Symbol.for("my-pi.pi-overflow.issued-ids.v1");

/**
 * sha1(sessionId + "\0" + toolCallId), first 12 hex characters: the id of the first result of a
 * tool call. A later result with the same toolCallId (providers reuse ids, or send none) gets
 * attempt n ≥ 1: sha1(sessionId + "\0" + toolCallId + "\0" + n).
 */
export function computeEntryId(sessionId: string, toolCallId: string, attempt = 0): string {
	const key = attempt === 0 ? `${sessionId}\0${toolCallId}` : `${sessionId}\0${toolCallId}\0${attempt}`;
	return createHash("sha1").update(key, "utf8").digest("hex").slice(0, 12);
}

/** True for exactly 12 lowercase hex characters: the only text a store path is ever formed from. */
export function isEntryId(value: unknown): value is string {
	return typeof value === "string" && ENTRY_ID_PATTERN.test(value);
}

/** `<agentDir>/my-pi/pi-overflow`. */
export function resolveStoreRoot(agentDir: string): string {
	return join(agentDir, "my-pi", "pi-overflow");
}

/** `.<id>.<pid>.<random hex>.tmp`: names the writing process, so housekeeping can tell an abandoned one. */
export function createTempName(id: string): string {
	return `.${id}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`;
}

/** Every id this process issued or saw in its sessions, across module instances (/reload). */
export function findIssuedIds(): Set<string> {
	const holder = globalThis as typeof globalThis & { [ISSUED_IDS_KEY]?: unknown };
	const existing = holder[ISSUED_IDS_KEY];
	if (existing instanceof Set) return existing as Set<string>;
	const created = new Set<string>();
	holder[ISSUED_IDS_KEY] = created;
	return created;
}

export function rememberIssuedId(issued: Set<string>, id: string): void {
	issued.add(id);
	if (issued.size > MAX_ISSUED_IDS) {
		const oldest = issued.values().next();
		if (!oldest.done) issued.delete(oldest.value);
	}
}

/** Lines as EntryMeta.storedLines counts them: newlines, plus 1 for a last line without one. */
export function countTextLines(bytes: Uint8Array): number {
	let lines = 0;
	for (let index = bytes.indexOf(0x0a); index !== -1; index = bytes.indexOf(0x0a, index + 1)) lines++;
	if (bytes.length > 0 && bytes[bytes.length - 1] !== 0x0a) lines++;
	return lines;
}

/**
 * Validates untrusted JSON as EntryMeta; returns a clean copy or undefined. Entries written before
 * the stored copy had its own counts (no storedBytes) describe the stored copy in totalLines/totalBytes.
 */
export function parseEntryMeta(value: unknown): EntryMeta | undefined {
	if (!isRecord(value)) return undefined;
	const {
		id,
		sessionId,
		toolCallId,
		toolName,
		createdAt,
		totalLines,
		totalBytes,
		truncated,
		source,
		sourceNote,
		status,
		separator,
	} = value;
	const storedBytes = value.storedBytes ?? totalBytes;
	const storedLines = value.storedLines ?? totalLines;
	if (!isEntryId(id)) return undefined;
	if (typeof sessionId !== "string" || typeof toolCallId !== "string" || typeof toolName !== "string") return undefined;
	if (typeof createdAt !== "string" || Number.isNaN(Date.parse(createdAt))) return undefined;
	if (!isCount(totalLines) || !isCount(totalBytes) || !isCount(storedBytes) || !isCount(storedLines)) return undefined;
	if (typeof truncated !== "boolean") return undefined;
	if (typeof source !== "string" || !ENTRY_SOURCES.includes(source as EntrySource)) return undefined;
	if (sourceNote !== undefined && typeof sourceNote !== "string") return undefined;
	if (status !== undefined && typeof status !== "string") return undefined;
	if (separator !== undefined && separator !== "cr") return undefined;
	const gap = value.gap === undefined ? undefined : parseGap(value.gap, storedLines, totalLines);
	if (gap === null || (gap !== undefined) !== (truncated && value.storedBytes !== undefined)) return undefined;
	const meta: EntryMeta = {
		id,
		sessionId,
		toolCallId,
		toolName,
		createdAt,
		totalLines,
		totalBytes,
		storedBytes,
		storedLines,
		truncated,
		source: source as EntrySource,
	};
	if (gap !== undefined) meta.gap = gap;
	if (sourceNote !== undefined) meta.sourceNote = sourceNote;
	if (status !== undefined) meta.status = status;
	if (separator !== undefined) meta.separator = separator;
	// A malformed record costs only the comparison, never the entry.
	const run = value.run === undefined ? undefined : parseRunRecord(value.run);
	if (run !== undefined) meta.run = run;
	return meta;
}

/** The metadata in a `<expectedId>.json`'s text, or undefined when it is not valid metadata of that id. */
export function parseMetaText(text: string, expectedId: string): EntryMeta | undefined {
	try {
		const meta = parseEntryMeta(JSON.parse(text));
		return meta !== undefined && meta.id === expectedId ? meta : undefined;
	} catch {
		return undefined;
	}
}

/** A gap that maps stored lines into 1..totalLines, or null. */
function parseGap(value: unknown, storedLines: number, totalLines: number): EntryGap | null {
	if (!isRecord(value)) return null;
	const { markerLine, firstTailLine, leftOutBytes, signals } = value;
	if (!isCount(markerLine) || markerLine < 1 || markerLine > storedLines) return null;
	if (!isCount(firstTailLine) || firstTailLine < markerLine - 1 || firstTailLine > totalLines + 1) return null;
	if (!isCount(leftOutBytes) || !Array.isArray(signals)) return null;
	const clean: GapSignal[] = [];
	for (const signal of signals) {
		if (!isRecord(signal) || !isCount(signal.line) || typeof signal.text !== "string" || !isCount(signal.count))
			return null;
		clean.push({ line: signal.line, text: signal.text, count: signal.count });
	}
	return { markerLine, firstTailLine, leftOutBytes, signals: clean };
}

/** Lines a run record holds at most (summary.ts keeps fewer). */
const MAX_RUN_LINES = 2048;

/** A run record as summary.ts writes it, or undefined. */
function parseRunRecord(value: unknown): RunRecord | undefined {
	if (!isRecord(value) || typeof value.key !== "string" || typeof value.label !== "string") return undefined;
	if (!Array.isArray(value.signals) || value.signals.length > MAX_RUN_LINES) return undefined;
	const signals: RunLine[] = [];
	for (const item of value.signals) {
		const line = parseRunLine(item);
		if (line === undefined) return undefined;
		signals.push(line);
	}
	const verdict = value.verdict === undefined ? undefined : parseRunLine(value.verdict);
	if (value.verdict !== undefined && verdict === undefined) return undefined;
	const record: RunRecord = { key: value.key, label: value.label, signals };
	if (verdict !== undefined) record.verdict = verdict;
	const rerunOf = value.rerunOf;
	if (rerunOf !== undefined) {
		if (!isRecord(rerunOf) || !Array.isArray(rerunOf.lines) || !rerunOf.lines.every((line) => typeof line === "string"))
			return undefined;
		if (rerunOf.id !== undefined && !isEntryId(rerunOf.id)) return undefined;
		const counts = rerunOf.counts as Record<string, unknown> | undefined;
		if (!isRecord(counts) || !isCount(counts.new) || !isCount(counts.gone) || !isCount(counts.still)) return undefined;
		record.rerunOf = {
			...(rerunOf.id !== undefined ? { id: rerunOf.id } : {}),
			lines: [...rerunOf.lines] as string[],
			counts: { new: counts.new, gone: counts.gone, still: counts.still },
		};
	}
	return record;
}

function parseRunLine(value: unknown): RunLine | undefined {
	if (!isRecord(value) || !isCount(value.line) || typeof value.text !== "string" || !isCount(value.count))
		return undefined;
	if (value.shapeCount !== undefined && !isCount(value.shapeCount)) return undefined;
	return {
		line: value.line,
		text: value.text,
		count: value.count,
		...(value.shapeCount !== undefined ? { shapeCount: value.shapeCount } : {}),
	};
}

function isRecord(value: unknown): value is Record<string, unknown> {
	return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isCount(value: unknown): value is number {
	return typeof value === "number" && Number.isSafeInteger(value) && value >= 0;
}

/** Throws (code EINVAL) on anything but an entry id: the guard in front of every path the store forms. */
export function assertEntryId(id: unknown): asserts id is string {
	if (!isEntryId(id)) {
		throw createStoreError(
			"EINVAL",
			`invalid entry id ${JSON.stringify(String(id)).slice(0, 40)}: expected 12 lowercase hex characters`,
		);
	}
}
