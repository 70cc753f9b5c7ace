// One tool result through stage 2: exempt? → resolve the original → store it → bounded view or
// recovery marker → patch. Invariants: it never throws (a failure yields a bounded result that
// says what went wrong); the text the model receives is never longer than its budget (at most
// thresholdChars, lower when the context window is short: budgetChars); a
// result that fits and was not cut costs no disk I/O and no hashing; every non-text part and
// every details field is preserved, and details.overflow is merged in; a spill path is untrusted
// (source.ts checks the file, and it must agree with the text the tool produced); line numbers and
// totals are the output's own, also when the stored copy leaves out the middle.

import type { OverflowConfig } from "./config.js";
import { describeCapNote } from "./gap.js";
import { findPiBashStatus, isPiBashSpillPath, parsePiBashNotice } from "./pi-bash.js";
import type { ScannedLine } from "./render.js";
import { LineScanner, type ScanResult, scanText } from "./scan.js";
import { type ByteSource, bufferSource, minSourceBytes, openSpillFile, type PumpResult, pumpCapped, type SpillChecks, sourceEndsWith } from "./source.js";
import { joinTextParts, type Stash, takeStashed } from "./stash.js";
import type { EntryGap, EntryMeta, EntrySource, EntryWriter, GapSignal, OverflowStore } from "./store/index.js";
import { formatNotice, formatRecoveryMarker } from "./protocol.js";
import { describeError, keepStart } from "./text.js";
import { composeView } from "./view-build.js";
import { findKeyLines, formatLine, lineNumberWidth } from "./view.js";

/** The fields of Pi's tool_result event that the bound stage reads. */
export interface ToolResultInput {
	toolName: string;
	toolCallId: string;
	content: ReadonlyArray<ContentPart>;
	details?: unknown;
	isError?: boolean;
	/** Set by hosts that run tools inside tools; such nested results are left alone. */
	parentToolCallId?: unknown;
}

/** A part of a tool result's content, as Pi's TextContent and ImageContent. */
export type ContentPart = { type: "text"; text: string } | { type: "image"; data: string; mimeType: string };

export interface ToolResultPatch {
	content: ContentPart[];
	details: unknown;
}

/** What the model can read back about a stored result (merged into details.overflow). */
export interface OverflowDetails {
	/** Absent when the original could not be stored. */
	id?: string;
	/** The output's own totals (also when the stored copy left out its middle). */
	totalLines: number;
	totalBytes: number;
	/** The stored copy left out the middle (maxEntryBytes). */
	truncated: boolean;
	/** Why the original could not be stored. */
	storeError?: string;
	/** The most decisive lines (view.ts findKeyLines), each clipped: what a masked view keeps. */
	top?: Array<{ line: number; text: string }>;
}

export interface BoundDependencies {
	config: OverflowConfig;
	store: OverflowStore;
	sessionId: string;
	/** The stage-1 ring; undefined when capture.ts is not loaded. */
	stash: Stash | undefined;
	now?: () => number;
	/** Epoch ms when the tool started (Pi's tool_call event): a spill file must have been written since. */
	toolStartedAt?: number;
	/** The user running Pi, who must own a spill file; default process.getuid(). */
	uid?: number;
	/**
	 * This result's share of the context window, in characters (budget.ts): a result longer than this
	 * is bounded and its view is at most this long. Default, and never more than, config.thresholdChars.
	 */
	budgetChars?: number;
}

/** A spill file a result names, and what it must agree with to be used. */
interface SpillCandidate {
	path: string;
	/** The output the tool showed: the file, decoded, must end with exactly this. */
	kept: string;
	/** Pi's line count of the whole output ("of N" in its notice): the file must have N - 1 newlines. */
	totalLines?: number;
}

interface ResolvedOriginal {
	source: ByteSource;
	kind: EntrySource;
	/** Why a better source was not used (kept in the metadata and shown in the view). */
	note?: string;
	/** See SpillCandidate.totalLines. */
	expectLines?: number;
}

/** Longest reason shown for a spill file that was not used. */
const MAX_NOTE_CHARS = 160;
/** Characters of each decisive line carried in details.overflow.top. */
const TOP_LINE_CHARS = 200;
/** Characters of signal lines from a left-out middle kept in the metadata (shown again by overflow_query). */
const MAX_GAP_SIGNAL_CHARS = 16_000;


function isRecord(value: unknown): value is Record<string, unknown> {
	return typeof value === "object" && value !== null && !Array.isArray(value);
}

function detailsSpillPath(event: ToolResultInput): string | undefined {
	if (isRecord(event.details) && typeof event.details.fullOutputPath === "string" && event.details.fullOutputPath.length > 0) {
		return event.details.fullOutputPath;
	}
	return undefined;
}

/**
 * The spill file a result names, with what the tool showed of it: Pi's bash notice (its kept output
 * and line count) when the text as the tool produced it ends with one naming this file, else the
 * whole produced text (a line naming the path dropped). A path read from text is taken only from
 * Pi's notice on a failed bash command, where Pi threw `details` away.
 */
function findSpillCandidate(event: ToolResultInput, produced: string): SpillCandidate | undefined {
	const detailsPath = detailsSpillPath(event);
	const notice = event.toolName === "bash" ? parsePiBashNotice(produced) : undefined;
	if (detailsPath !== undefined) {
		if (notice !== undefined && notice.path === detailsPath) return { path: detailsPath, kept: notice.kept, totalLines: notice.totalLines };
		// Pi's verdict on a failed command is not part of the output.
		const status = event.toolName === "bash" && event.isError ? findPiBashStatus(produced) : undefined;
		const output = status === undefined ? produced : produced.slice(0, produced.length - status.length).replace(/\n\n$/, "");
		return { path: detailsPath, kept: withoutPathLine(output, detailsPath) };
	}
	if (notice?.status !== undefined && event.isError && isPiBashSpillPath(notice.path)) {
		return { path: notice.path, kept: notice.kept, totalLines: notice.totalLines };
	}
	return undefined;
}

/** The text without a last line that names `path` (a tool's own "full output: <path>" note). */
function withoutPathLine(text: string, path: string): string {
	const trimmed = text.replace(/\n+$/, "");
	const lineStart = trimmed.lastIndexOf("\n") + 1;
	if (!trimmed.slice(lineStart).includes(path)) return text;
	return trimmed.slice(0, lineStart).replace(/\n+$/, "");
}

/**
 * Handles one tool result. Returns undefined when the result is left as it is.
 */
export async function boundToolResult(event: ToolResultInput, given: BoundDependencies): Promise<ToolResultPatch | undefined> {
	const deps = applyBudget(given);
	const { config } = deps;
	const stashed = deps.stash ? takeStashed(deps.stash, event.toolCallId, event) : undefined;
	if (config.exemptTools.includes(event.toolName) || event.parentToolCallId) return undefined;

	const current = joinTextParts(event.content);
	// The text as the tool produced it (a later layer may have cut or rewritten the current text):
	// what a spill file must agree with.
	const produced = stashed?.text ?? current;
	const spill = findSpillCandidate(event, produced);
	const stashLonger = stashed !== undefined && stashed.text.length > current.length;
	// The cheap exit: small, and nothing suggests a longer original.
	if (current.length <= config.thresholdChars && spill === undefined && !stashLonger) return undefined;

	try {
		return await boundLarge(event, deps, current, stashLonger ? stashed.text : undefined, spill);
	} catch (error) {
		// Last line of defence: never let the result through unbounded.
		return await fallbackPatch(event, deps, current, describeError(error));
	}
}

/** The dependencies with thresholdChars lowered to the result's budget, so every decision below holds it. */
function applyBudget(deps: BoundDependencies): BoundDependencies {
	const budget = deps.budgetChars;
	if (budget === undefined || !(budget < deps.config.thresholdChars)) return deps;
	return { ...deps, config: { ...deps.config, thresholdChars: Math.max(1, Math.floor(budget)) } };
}

function spillChecks(deps: BoundDependencies): SpillChecks {
	return { uid: deps.uid ?? process.getuid?.(), notBeforeMs: deps.toolStartedAt };
}

/** The spill file when it passes every check, else the longer stashed original, else the current text. */
async function resolveOriginal(
	current: string,
	stashedText: string | undefined,
	spill: SpillCandidate | undefined,
	checks: SpillChecks,
): Promise<ResolvedOriginal> {
	let note: string | undefined;
	if (spill !== undefined) {
		const opened = await openSpillFile(spill.path, checks);
		if (!opened.ok) {
			note = `${opened.reason}; not used`;
		} else if (opened.source.size <= minSourceBytes(spill.kept)) {
			// No longer than what the tool showed: not a cut original (each U+FFFD may be one invalid byte).
			await opened.source.close();
			note = "spill file is not longer than the result; not used";
		} else if (!(await sourceEndsWith(opened.source, spill.kept))) {
			await opened.source.close();
			note = "spill file does not end with the output the tool showed; not used";
		} else {
			return { source: opened.source, kind: "spill-file", expectLines: spill.totalLines };
		}
	}
	return fallbackOriginal(current, stashedText, note);
}

function fallbackOriginal(current: string, stashedText: string | undefined, note: string | undefined): ResolvedOriginal {
	if (stashedText !== undefined) return { source: bufferSource(Buffer.from(stashedText, "utf8")), kind: "stash", note };
	return { source: bufferSource(Buffer.from(current, "utf8")), kind: "current", note };
}

interface Copied {
	scan: ScanResult;
	/** The scanner's shape counts (rare lines join a signal's block). */
	countShape: (raw: string) => number;
	pumped: PumpResult;
	/** Set when the store could not keep the original. */
	storeError?: string;
}

async function boundLarge(
	event: ToolResultInput,
	deps: BoundDependencies,
	current: string,
	stashedText: string | undefined,
	spill: SpillCandidate | undefined,
): Promise<ToolResultPatch | undefined> {
	const { config } = deps;
	let original = await resolveOriginal(current, stashedText, spill, spillChecks(deps));
	try {
		if (original.kind === "current" && current.length <= config.thresholdChars) return undefined;
		let id: string | undefined;
		let idError: string | undefined;
		try {
			id = await deps.store.allocateEntryId(deps.sessionId, event.toolCallId);
		} catch (error) {
			idError = describeError(error);
		}
		const status = event.isError ? findPiBashStatus(current) : undefined;
		let copied = await copyOriginal(event, deps, original, id, idError, status);
		if ("newlines" in copied) {
			// The spill file does not have the lines Pi counted: not this command's output.
			const note = `spill file has ${copied.newlines + 1} lines where Pi's notice says ${original.expectLines}; not used`;
			await original.source.close().catch(() => {});
			original = fallbackOriginal(current, stashedText, note);
			if (original.kind === "current" && current.length <= config.thresholdChars) return undefined;
			copied = await copyOriginal(event, deps, original, id, idError, status);
			if ("newlines" in copied) throw new Error("a text in memory cannot disagree with itself");
		}
		const storedId = copied.storeError === undefined ? id : undefined;
		return await finish(event, config, current, copied, original.source, storedId, original.note, status);
	} finally {
		await original.source.close().catch(() => {});
	}
}

/**
 * One pass over the original feeds both the store and the scan; when the store fails, the pass
 * goes on for the scan alone, so the result is bounded without reading anything twice. Returns the
 * newline count instead when the original does not have the lines it must have (nothing is kept).
 */
async function copyOriginal(
	event: ToolResultInput,
	deps: BoundDependencies,
	original: ResolvedOriginal,
	id: string | undefined,
	idError: string | undefined,
	status: string | undefined,
): Promise<Copied | { newlines: number }> {
	const { config } = deps;
	const scanner = new LineScanner(config);
	let storeError = idError;
	let writer: EntryWriter | undefined;
	const giveUpStore = async (error: unknown) => {
		storeError = describeError(error);
		await writer?.abort();
		writer = undefined;
	};
	if (id !== undefined) {
		try {
			writer = await deps.store.beginEntry(id);
		} catch (error) {
			await giveUpStore(error);
		}
	}
	let pumped: PumpResult;
	try {
		pumped = await pumpCapped(original.source, config.maxEntryBytes, {
			scan: (chunk) => scanner.push(chunk),
			store: async (chunk) => {
				if (!writer) return;
				try {
					await writer.write(chunk);
				} catch (error) {
					await giveUpStore(error);
				}
			},
			newlinesSeen: () => scanner.newlines,
		});
	} catch (error) {
		await writer?.abort();
		throw error;
	}
	if (original.expectLines !== undefined && scanner.newlines + 1 !== original.expectLines) {
		await writer?.abort();
		return { newlines: scanner.newlines };
	}
	const scan = scanner.end();
	if (writer !== undefined && id !== undefined) {
		const meta: EntryMeta = {
			id,
			sessionId: deps.sessionId,
			toolCallId: event.toolCallId,
			toolName: event.toolName,
			createdAt: new Date(deps.now ? deps.now() : Date.now()).toISOString(),
			totalLines: scan.totalLines,
			totalBytes: scan.totalBytes,
			storedBytes: writer.bytesWritten,
			storedLines: writer.linesWritten,
			truncated: pumped.gap !== undefined,
			...(pumped.gap ? { gap: describeGap(pumped, scan, config) } : {}),
			source: original.kind,
			...(original.note ? { sourceNote: original.note } : {}),
			...(status ? { status } : {}),
		};
		try {
			await writer.commit(meta);
		} catch (error) {
			await giveUpStore(error);
		}
	}
	return { scan, pumped, countShape: (raw) => scanner.countShape(raw), ...(storeError !== undefined ? { storeError } : {}) };
}

/** The gap for the metadata, with the signal lines the scan found in the left-out middle (bounded). */
function describeGap(pumped: PumpResult, scan: ScanResult, config: OverflowConfig): EntryGap {
	const gap = pumped.gap as NonNullable<PumpResult["gap"]>;
	const signals: GapSignal[] = [];
	let chars = 0;
	for (const line of scan.signals) {
		if (line.lineNumber < gap.markerLine || line.lineNumber >= gap.firstTailLine) continue;
		const text = keepStart(line.text, config.maxLineChars);
		if (chars + text.length > MAX_GAP_SIGNAL_CHARS) break;
		chars += text.length;
		signals.push({ line: line.lineNumber, text, count: line.count });
	}
	return { ...gap, signals };
}

async function finish(
	event: ToolResultInput,
	config: OverflowConfig,
	current: string,
	copied: Copied,
	source: ByteSource,
	id: string | undefined,
	sourceNote: string | undefined,
	status: string | undefined,
): Promise<ToolResultPatch> {
	const { scan, pumped, storeError } = copied;
	const top = findKeyLines(scan, config).map((item) => ({ line: item.lineNumber, text: keepStart(item.text, TOP_LINE_CHARS) }));
	const overflow: OverflowDetails = {
		...(id ? { id } : {}),
		totalLines: scan.totalLines,
		totalBytes: scan.totalBytes,
		truncated: pumped.gap !== undefined,
		...(storeError ? { storeError } : {}),
		...(top.length > 0 ? { top } : {}),
	};
	if (current.length <= config.thresholdChars) {
		const marker = id
			? formatRecoveryMarker(id, scan.totalLines, scan.totalBytes)
			: formatNotice(`an earlier layer cut this output (${scan.totalLines} lines, ${scan.totalBytes} bytes in all) and the full output could not be stored: ${storeError ?? "unknown error"}`).slice(0, 400);
		if (current.length + 1 + marker.length <= config.thresholdChars) {
			const lost = describeWhatTheCutLost(scan, current, config, config.thresholdChars - current.length - 1 - marker.length);
			return { content: appendToLastText(event.content, [marker, ...lost].join("\n")), details: mergeDetails(event.details, overflow) };
		}
	}
	const view = await composeView(
		scan,
		source,
		{
			...config,
			id,
			storeError,
			toolName: event.toolName,
			truncatedNote: pumped.gap ? describeCapNote(pumped.gap, config.maxEntryBytes) : undefined,
			sourceNote: sourceNote ? keepStart(sourceNote, MAX_NOTE_CHARS) : undefined,
			// Pi's verdict on a failed command is not part of the output, so the view carries it on its own line.
			statusLine: status ? `[${event.toolName}: ${status}]` : undefined,
		},
		copied.countShape,
	);
	return { content: replaceText(event.content, view), details: mergeDetails(event.details, overflow) };
}

/**
 * Under the recovery marker, what an earlier layer's cut lost: the original's signal lines the
 * kept text lacks (ranked, numbered as in the output) and its last line, as many as fit in `room`.
 */
function describeWhatTheCutLost(scan: ScanResult, current: string, config: OverflowConfig, room: number): string[] {
	const width = lineNumberWidth(scan.totalLines);
	const isKept = (text: string) => text.trim() === "" || current.includes(text.trim());
	const lost = [...scan.signals.slice(0, config.maxSignalLines), ...scan.shownSignals].filter((item) => !isKept(item.text));
	const last = scan.tail[scan.tail.length - 1];
	// The last line first, then the signal lines in rank order; shown in line order.
	const candidates: ScannedLine[] = [...(last !== undefined && !isKept(last.text) ? [last] : []), ...lost.filter((item) => item.lineNumber !== last?.lineNumber)];
	if (candidates.length === 0) return [];
	const label = "[what the cut left out, with the output's line numbers:]";
	const shown: ScannedLine[] = [];
	let left = room - label.length - 1;
	for (const line of candidates) {
		const text = formatLine(line, width, config.maxLineChars);
		if (text.length + 1 > left) continue;
		shown.push(line);
		left -= text.length + 1;
	}
	if (shown.length === 0) return [];
	return [label, ...shown.sort((a, b) => a.lineNumber - b.lineNumber).map((line) => formatLine(line, width, config.maxLineChars))];
}

/** A bounded result built without the store or the original, when everything else failed. */
async function fallbackPatch(event: ToolResultInput, deps: BoundDependencies, current: string, reason: string): Promise<ToolResultPatch | undefined> {
	try {
		if (current.length <= deps.config.thresholdChars) return undefined;
		const scan = scanText(current, deps.config);
		const text = await composeView(scan, bufferSource(Buffer.from(current, "utf8")), { ...deps.config, storeError: reason, toolName: event.toolName });
		return {
			content: replaceText(event.content, text),
			details: mergeDetails(event.details, { totalLines: scan.totalLines, totalBytes: scan.totalBytes, truncated: false, storeError: reason }),
		};
	} catch {
		const notice = formatNotice(`output of ${current.length} characters could not be processed (${reason.slice(0, 200)}); showing its end`);
		const room = Math.max(0, deps.config.thresholdChars - notice.length - 1);
		return { content: replaceText(event.content, `${notice}\n${current.slice(current.length - room)}`), details: event.details };
	}
}

function mergeDetails(details: unknown, overflow: OverflowDetails): unknown {
	if (details === undefined || details === null) return { overflow };
	if (isRecord(details)) return { ...details, overflow };
	return details; // not an object: nothing can be merged without changing its shape
}

/** The text parts replaced by one, at the first text part's place; everything else kept in order. */
function replaceText(content: ReadonlyArray<ContentPart>, text: string): ContentPart[] {
	const out: ContentPart[] = [];
	let placed = false;
	for (const part of content) {
		if (part.type !== "text") {
			out.push(part);
		} else if (!placed) {
			out.push({ type: "text", text });
			placed = true;
		}
	}
	if (!placed) out.unshift({ type: "text", text });
	return out;
}

function appendToLastText(content: ReadonlyArray<ContentPart>, line: string): ContentPart[] {
	let last = -1;
	content.forEach((part, index) => {
		if (part.type === "text") last = index;
	});
	if (last < 0) return [{ type: "text", text: line }, ...content];
	return content.map((part, index) =>
		index === last && part.type === "text" ? { type: "text", text: `${part.text}\n${line}` } : part,
	);
}
