// The bounded view: what the model sees in place of an oversized tool result. Pure: a scan result
// and options in, a string out; the same input gives the same bytes. Invariants: the whole view,
// header and footer included, is at most `thresholdChars` characters; every shown line starts with
// its 1-based line number in the stored text; the last line is always shown and the tail is never
// given up to make room for the head or the signal lines; whatever is dropped to fit is counted.

import { open } from "node:fs/promises";
import { LineScanner, renderTerminalLine, type ScannedLine, type ScanOptions, type ScanResult, type SignalLine, scanText } from "./scan.js";
import { READ_CHUNK_BYTES } from "./source.js";
import { keepEnd, keepStart, plural, sizeOf } from "./text.js";

export { renderTerminalLine };

export interface ViewOptions extends ScanOptions {
	/** Longest view, notices included. */
	thresholdChars: number;
	/** The store entry id; absent when the original could not be stored. */
	id?: string;
	/** Named in the header ("bash output: …"). */
	toolName: string;
	/** Why the original could not be stored (shown instead of an id). */
	storeError?: string;
	/** Set when the stored copy had its middle left out (maxEntryBytes). */
	truncatedNote?: string;
	/** Why a better source of the output was not used (e.g. a spill file that failed its checks): a line under the header. */
	sourceNote?: string;
	/** A line above the footer, e.g. Pi's verdict on a failed command: `[bash: Command exited with code 2]`. */
	statusLine?: string;
}

/** Share of the line budget each part may claim before the others; unused room flows on. */
const TAIL_SHARE = 0.45;
const SIGNAL_SHARE = 0.35;
const HEAD_SHARE = 0.2;
/** Longest tool name, store error and capping note repeated in the header, in characters. */
const MAX_TOOL_NAME_CHARS = 40;
const MAX_STORE_ERROR_CHARS = 120;
const MAX_NOTE_CHARS = 160;

interface Part {
	lines: ScannedLine[];
	/** Formatted lines, parallel to `lines`. */
	formatted: string[];
}

/** Width of line numbers, so that the same line looks the same in the view and in query answers. */
export function lineNumberWidth(totalLines: number): number {
	return Math.max(6, String(totalLines).length);
}

export interface ViewResult {
	/** What the model sees. */
	text: string;
	totalLines: number;
	totalBytes: number;
}

/** `<number>: <text>`, the number padded to `width`, the text clipped to `maxChars` with a note of what was cut. */
export function formatLine(line: ScannedLine, width: number, maxChars: number): string {
	// Scanned lines are already rendered; rendering again only matters for hand-made lines.
	const shown = renderTerminalLine(line.text);
	const number = String(line.lineNumber).padStart(width, " ");
	const kept = line.keptEnd ? keepEnd(shown, maxChars) : keepStart(shown, maxChars);
	// Counted from what is really kept: a cut never splits a surrogate pair, so it may keep one less.
	const hidden = shown.length - kept.length + (line.partial ? Math.max(0, line.totalChars - line.text.length) : 0);
	let text = shown;
	if (hidden > 0) text = line.keptEnd ? `[+${hidden} chars] … ${kept}` : `${kept} … [+${hidden} chars]`;
	const count = (line as Partial<SignalLine>).count;
	if (count !== undefined && count > 1) text += `  [×${count}]`;
	return `${number}: ${text}`;
}

/** Takes lines in priority order while they fit in `room`; returns how many were taken. */
function fitCount(formatted: string[], order: "start" | "end", room: number): number {
	let used = 0;
	let taken = 0;
	for (let i = 0; i < formatted.length; i++) {
		const line = formatted[order === "start" ? i : formatted.length - 1 - i];
		if (used + line.length + 1 > room) break;
		used += line.length + 1;
		taken++;
	}
	return taken;
}

/** Picks up to `max` candidates spread evenly over their order (first and last included). */
function spread<T>(items: T[], max: number): T[] {
	if (items.length <= max) return items;
	if (max <= 0) return [];
	if (max === 1) return [items[0]];
	const picked: T[] = [];
	for (let i = 0; i < max; i++) picked.push(items[Math.round((i * (items.length - 1)) / (max - 1))]);
	return picked;
}

/** Failures first, then warnings, each spread over the whole text; returned in line order. */
function chooseSignals(candidates: SignalLine[], max: number): SignalLine[] {
	const strong = candidates.filter((line) => !line.weak);
	const weak = candidates.filter((line) => line.weak);
	const chosen = spread(strong, max);
	const rest = spread(weak, max - chosen.length);
	return [...chosen, ...rest].sort((a, b) => a.lineNumber - b.lineNumber);
}

/** Builds the view from a finished scan. */
export function buildView(scan: ScanResult, options: ViewOptions): string {
	const { thresholdChars, maxLineChars } = options;
	const width = lineNumberWidth(scan.totalLines);

	// Which lines each part may show, before the budget.
	const tailLines = scan.tail.slice(Math.max(0, scan.tail.length - options.tailLines));
	const tailStart = tailLines.length > 0 ? tailLines[0].lineNumber : scan.totalLines + 1;
	const headLines = scan.head.filter((line) => line.lineNumber < tailStart).slice(0, options.headLines);
	const headEnd = headLines.length > 0 ? headLines[headLines.length - 1].lineNumber : 0;
	const candidates = scan.signals.filter((line) => line.lineNumber > headEnd && line.lineNumber < tailStart);
	const signalLines = chooseSignals(candidates, options.maxSignalLines);

	const format = (lines: ScannedLine[]): Part => ({
		lines,
		formatted: lines.map((line) => formatLine(line, width, maxLineChars)),
	});
	const head = format(headLines);
	const signals = format(signalLines);
	const tail = format(tailLines);

	const source = options.id
		? `[pi-overflow id=${options.id}]`
		: `[pi-overflow] full output could not be stored (${oneLine(options.storeError ?? "unknown error", MAX_STORE_ERROR_CHARS)}); this view is all that is kept —`;
	const footer = options.id
		? `[use overflow_query with id=${options.id}: search (regex), lines {start,end}, jsonPath]`
		: "[pi-overflow: nothing was stored, so overflow_query cannot read more of this output]";
	// In the header, so that it shows even when no line is omitted.
	const stopped = scan.signalSearchStopped
		? `; signal search stopped at line ${scan.signalSearchStopped.atLine} of ${scan.totalLines} after ${scan.signalSearchStopped.afterMs} ms (signalPattern too slow)`
		: "";
	const headerFor = (signalCount: number): string => {
		const truncated = options.truncatedNote ? ` (${oneLine(options.truncatedNote, MAX_NOTE_CHARS)})` : "";
		return `${source} ${oneLine(options.toolName, MAX_TOOL_NAME_CHARS)} output: ${plural(scan.totalLines, "line")}, ${scan.totalBytes} bytes${truncated} — showing head, ${plural(signalCount, "signal line")}, tail${stopped}`;
	};
	// The header is measured at its longest so the budget holds whatever is chosen.
	const header = headerFor(signals.lines.length);
	// The notices between the parts, measured with the largest counts they can carry.
	const gapNotice = (omitted: number, droppedHead: number, droppedSignals: number, droppedTail: number): string => {
		const notes: string[] = [];
		if (droppedHead > 0) notes.push(`${droppedHead} head`);
		if (droppedSignals > 0) notes.push(`${droppedSignals} signal`);
		if (droppedTail > 0) notes.push(`${droppedTail} tail`);
		const dropped = notes.length > 0 ? `; ${notes.join(", ")} lines dropped to fit ${thresholdChars} chars` : "";
		const found = scan.signalMatches > 0 ? `; ${plural(scan.signalMatches, "line")} matched the signal pattern` : "";
		return `  ... ${plural(omitted, "line")} omitted${found}${dropped} ...`;
	};
	const tailNotice = (count: number): string => `  ... tail (last ${plural(count, "line")}) ...`;
	const noticeReserve =
		gapNotice(Math.max(1, scan.totalLines), head.lines.length, signals.lines.length, tail.lines.length).length + tailNotice(tail.lines.length).length + 2;
	const noteLine = options.sourceNote ? `[pi-overflow: ${oneLine(options.sourceNote, MAX_NOTE_CHARS)}]` : undefined;
	const statusLine = options.statusLine ? oneLine(options.statusLine, MAX_NOTE_CHARS) : undefined;
	const extras = (noteLine ? noteLine.length + 1 : 0) + (statusLine ? statusLine.length + 1 : 0);
	const budget = thresholdChars - header.length - footer.length - 2 - noticeReserve - extras;

	// The last line is always shown: when it alone is too long, it is clipped harder.
	const last = tail.formatted.length - 1;
	if (last >= 0) {
		const room = Math.max(40, budget);
		if (tail.formatted[last].length + 1 > room) {
			const line = tail.lines[last];
			tail.formatted[last] = formatLine(line, width, Math.max(1, room - width - 40));
		}
	}

	// First each part within its share; then the room left over goes to the tail, then to the
	// signal lines, then to the head, so the head or the signals never take room the tail could use.
	const sizeOfSignals = (picked: number[]): number => sizeOf(picked.map((index) => signals.formatted[index]));
	const sizeOfTail = (count: number): number => sizeOf(tail.formatted.slice(tail.formatted.length - count));
	const lastSize = last >= 0 ? tail.formatted[last].length + 1 : 0;
	let tailCount = Math.max(last >= 0 ? 1 : 0, fitCount(tail.formatted, "end", Math.max(Math.floor(budget * TAIL_SHARE), lastSize)));
	let signalPick = fitSignals(signals, Math.floor(budget * SIGNAL_SHARE));
	let headCount = fitCount(head.formatted, "start", Math.floor(budget * HEAD_SHARE));
	let left = budget - sizeOfTail(tailCount) - sizeOfSignals(signalPick) - sizeOf(head.formatted.slice(0, headCount));
	if (left > 0 && tailCount < tail.formatted.length) {
		const before = sizeOfTail(tailCount);
		tailCount = Math.max(tailCount, fitCount(tail.formatted, "end", before + left));
		left -= sizeOfTail(tailCount) - before;
	}
	if (left > 0 && signalPick.length < signals.formatted.length) {
		const before = sizeOfSignals(signalPick);
		signalPick = fitSignals(signals, before + left);
		left -= sizeOfSignals(signalPick) - before;
	}
	if (left > 0 && headCount < head.formatted.length) headCount = fitCount(head.formatted, "start", sizeOf(head.formatted.slice(0, headCount)) + left);

	const signalCount = signalPick.length;
	const shownHead = head.formatted.slice(0, headCount);
	const shownSignals = signalPick.map((index) => signals.formatted[index]);
	const shownTail = tail.formatted.slice(tail.formatted.length - tailCount);
	const droppedHead = head.formatted.length - headCount;
	const droppedSignals = signals.formatted.length - signalCount;
	const droppedTail = tail.formatted.length - tailCount;

	const out: string[] = [headerFor(signalCount)];
	if (noteLine) out.push(noteLine);
	out.push(...shownHead);
	const firstTail = tailCount > 0 ? tail.lines[tail.lines.length - tailCount].lineNumber : scan.totalLines + 1;
	const lastHead = headCount > 0 ? head.lines[headCount - 1].lineNumber : 0;
	const omitted = firstTail - lastHead - 1;
	if (omitted > 0) out.push(gapNotice(omitted, droppedHead, droppedSignals, droppedTail));
	if (shownSignals.length > 0) out.push(...shownSignals, tailNotice(tailCount));
	out.push(...shownTail);
	if (statusLine) out.push(statusLine);
	out.push(footer);
	const view = out.join("\n");
	// The budget above makes this unreachable; it stays as the guarantee's last line of defence.
	return view.length <= thresholdChars ? view : `${keepStart(view, thresholdChars - footer.length - 2)}\n${footer}`.slice(0, thresholdChars);
}

/**
 * The most signal lines that fit in `room`: failures first, then warnings with the room left, each
 * spread evenly rather than cut from one end (indexes, ascending).
 */
function fitSignals(part: Part, room: number): number[] {
	const strong: number[] = [];
	const weak: number[] = [];
	part.lines.forEach((line, index) => ((line as SignalLine).weak ? weak : strong).push(index));
	const pickedStrong = fitSpread(part.formatted, strong, room);
	const left = room - sizeOf(pickedStrong.map((index) => part.formatted[index]));
	const pickedWeak = fitSpread(part.formatted, weak, left);
	return [...pickedStrong, ...pickedWeak].sort((a, b) => a - b);
}

function fitSpread(formatted: string[], indexes: number[], room: number): number[] {
	for (let keep = indexes.length; keep > 0; keep--) {
		const picked = spread(indexes, keep);
		if (sizeOf(picked.map((index) => formatted[index])) <= room) return picked;
	}
	return [];
}

function oneLine(text: string, max: number): string {
	return keepStart(text.replace(/\s+/g, " ").trim(), max);
}

/** Builds the view of a text held in memory (when the store could not keep it). */
export function buildViewFromText(text: string, options: ViewOptions): ViewResult {
	return toResult(scanText(text, options), options);
}

function toResult(scan: ScanResult, options: ViewOptions): ViewResult {
	return { text: buildView(scan, options), totalLines: scan.totalLines, totalBytes: scan.totalBytes };
}

/**
 * Scans a file as a stream (bounded memory) and builds its view. One buffer is read into again and
 * again (the scanner copies what it keeps): a fresh buffer per chunk costs more than the scan.
 */
export async function buildViewFromFile(path: string, options: ViewOptions): Promise<ViewResult> {
	const scanner = new LineScanner(options);
	const handle = await open(path, "r");
	try {
		const buffer = Buffer.allocUnsafe(READ_CHUNK_BYTES);
		for (;;) {
			const { bytesRead } = await handle.read(buffer, 0, buffer.length, null);
			if (bytesRead === 0) break;
			scanner.push(buffer.subarray(0, bytesRead));
		}
	} finally {
		await handle.close();
	}
	return toResult(scanner.end(), options);
}
