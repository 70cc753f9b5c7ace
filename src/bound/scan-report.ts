// Pure reports built from a scan for bound.ts: a stored original's metadata (with the signal lines
// of a left-out middle), whether an earlier layer's cut kept a whole line of the output, and what
// the cut lost (under the recovery marker).
// Invariant: totals and line numbers are the output's own (the scan's), and every list is bounded —
// by MAX_GAP_SIGNAL_CHARS and by the room it is given.

import type { OverflowConfig } from "../config/config.js";
import { renderTerminalLine, type ScannedLine, stripLineEnd } from "../lines/render.js";
import type { ScanResult } from "../scan/scan.js";
import type { PumpResult } from "../io/source.js";
import type { ResolvedOriginal } from "../intake/original.js";
import type { EntryGap, EntryMeta, EntryWriter, GapSignal, RunRecord } from "../store/index.js";
import type { ToolResultInput } from "../intake/tool-result.js";
import { keepStart } from "../lines/text.js";
import { lineNumberWidth } from "../lines/numbered.js";
import { formatLine } from "../view/view.js";

/** Characters of signal lines from a left-out middle kept in the metadata (shown again by overflow_query). */
const MAX_GAP_SIGNAL_CHARS = 16_000;

/** The metadata of a stored original: the output's totals (the scan's) and what the writer kept. */
export function describeEntry(
	id: string,
	event: Pick<ToolResultInput, "toolCallId" | "toolName">,
	deps: { sessionId: string; now?: () => number; config: OverflowConfig },
	original: Pick<ResolvedOriginal, "kind" | "note">,
	copy: { scan: ScanResult; pumped: PumpResult; writer: EntryWriter; status: string | undefined; run?: RunRecord },
): EntryMeta {
	const { scan, pumped, writer, status, run } = copy;
	return {
		id,
		sessionId: deps.sessionId,
		toolCallId: event.toolCallId,
		toolName: event.toolName,
		createdAt: new Date(deps.now ? deps.now() : Date.now()).toISOString(),
		totalLines: scan.totalLines,
		totalBytes: scan.totalBytes,
		storedBytes: writer.bytesWritten,
		storedLines: scan.separator === "cr" ? storedRecords(scan, pumped) : writer.linesWritten,
		truncated: pumped.gap !== undefined,
		...(pumped.gap ? { gap: describeGap(pumped, scan, deps.config) } : {}),
		source: original.kind,
		...(original.note ? { sourceNote: original.note } : {}),
		...(status ? { status } : {}),
		...(scan.separator ? { separator: scan.separator } : {}),
		...(run ? { run } : {}),
	};
}

/**
 * The lines of a CR-separated output's stored copy as it is read (its records, recordsSource): all of
 * them, or those before the gap, its marker line and those after. The writer counts LFs, not records.
 */
function storedRecords(scan: ScanResult, pumped: PumpResult): number {
	const gap = pumped.gap;
	return gap === undefined ? scan.totalLines : gap.markerLine + scan.totalLines - gap.firstTailLine + 1;
}

/** The gap for the metadata, with the signal lines the scan found in the left-out middle (bounded). */
export function describeGap(pumped: PumpResult, scan: ScanResult, config: OverflowConfig): EntryGap {
	const gap = pumped.gap as NonNullable<PumpResult["gap"]>;
	const signals: GapSignal[] = [];
	let chars = 0;
	for (const line of scan.signals) {
		// Another instance of a shape one line stands for is not a line to count again on a new scan.
		if (line.instance || line.lineNumber < gap.markerLine || line.lineNumber >= gap.firstTailLine) continue;
		const text = keepStart(line.text, config.maxLineChars);
		if (chars + text.length > MAX_GAP_SIGNAL_CHARS) break;
		chars += text.length;
		signals.push({ line: line.lineNumber, text, count: line.count });
	}
	return { ...gap, signals };
}

/**
 * Under the recovery marker, what an earlier layer's cut lost: the original's signal lines the
 * kept text lacks (ranked, numbered as in the output) and its last line, as many as fit in `room`.
 */
export function describeWhatTheCutLost(
	scan: ScanResult,
	current: string,
	config: OverflowConfig,
	room: number,
): string[] {
	const width = lineNumberWidth(scan.totalLines);
	const isKept = (text: string) => text.trim() === "" || current.includes(text.trim());
	const lost = [...scan.signals.slice(0, config.maxSignalLines), ...scan.shownSignals].filter(
		(item) => !isKept(item.text),
	);
	const last = scan.tail[scan.tail.length - 1];
	// The last line first, then the signal lines in rank order; shown in line order.
	const candidates: ScannedLine[] = [
		...(last !== undefined && !isKept(last.text) ? [last] : []),
		...lost.filter((item) => item.lineNumber !== last?.lineNumber),
	];
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
	return [
		label,
		...shown.sort((a, b) => a.lineNumber - b.lineNumber).map((line) => formatLine(line, width, config.maxLineChars)),
	];
}

/**
 * True when the text an earlier layer kept holds at least one whole line of the output: one of the
 * output's non-blank first or last lines (the ends a cut keeps) is a line of `current`. False when
 * the cut left nothing useful — nothing, or only a fragment of one line (Pi's 50 KB end of a
 * one-line JSON document) — and the model is better served by the view of the original. An output
 * whose first and last lines are all blank gives no evidence: true. Linear in `current` (which fits
 * the budget) and in the scan's head and tail.
 */
export function cutKeptWholeLine(scan: ScanResult, current: string): boolean {
	const kept = current.split("\n").map((line) => renderTerminalLine(stripLineEnd(line)).trimEnd());
	const keptSet = new Set(kept);
	let judged = false;
	for (const line of [...scan.head, ...scan.tail]) {
		const text = line.text.trimEnd();
		if (text.trim() === "" && !line.partial) continue;
		judged = true;
		if (!line.partial ? keptSet.has(text) : kept.some((candidate) => holdsWholeLine(candidate, line))) return true;
	}
	return !judged;
}

/**
 * A kept line holds the whole of a line the scan kept only part of: it has the part at the same end
 * and is as long as the line (totalChars counts a giant line's bytes; a text has at least as many
 * UTF-8 bytes as UTF-16 units, so a whole line passes either way and a fragment never does).
 */
function holdsWholeLine(candidate: string, line: ScannedLine): boolean {
	if (candidate.length < line.text.length) return false;
	if (!(line.keptEnd ? candidate.endsWith(line.text) : candidate.startsWith(line.text))) return false;
	return Buffer.byteLength(candidate, "utf8") >= line.totalChars;
}
