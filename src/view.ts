// The bounded view: what the model sees in place of an oversized tool result. Pure: a scan result
// and options in, a string out; the same input gives the same bytes. Invariants: the whole view,
// header and footer included, is at most `thresholdChars` characters; every shown line starts with
// its 1-based line number in the stored text; the last line is always shown and the tail is never
// given up to make room for the head or the signal lines; whatever is dropped to fit is counted.

import { createReadStream } from "node:fs";
import { LineScanner, type ScannedLine, type ScanOptions, type ScanResult, type SignalLine, scanText } from "./scan.js";

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
}

/** Share of the line budget each part may claim before the others; unused room flows on. */
const TAIL_SHARE = 0.45;
const SIGNAL_SHARE = 0.35;
/** Room kept for the gap notices between head, signals and tail. */
const NOTICE_RESERVE_CHARS = 400;

// ANSI: CSI sequences, OSC sequences (ended by BEL or ST), and two-character escapes. Linear.
const ANSI_PATTERN = /\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-Z\\-_]/g;
const ERASE_LINE_PATTERN = /^\x1b\[[012]?K/;
// C0 controls other than tab, and DEL: shown as U+FFFD so the view stays one line per line.
const CONTROL_PATTERN = /[\x00-\x08\x0b-\x1f\x7f]/g;

/** What a terminal would show for a line: "\r" redraws resolved, ANSI escapes removed. */
export function renderTerminalLine(raw: string): string {
	if (!raw.includes("\r") && !raw.includes("\x1b")) return raw.replace(CONTROL_PATTERN, "\ufffd");
	let shown = "";
	for (const segment of raw.split("\r")) {
		const erase = ERASE_LINE_PATTERN.test(segment);
		const visible = segment.replace(ANSI_PATTERN, "");
		if (erase) shown = visible;
		else shown = visible + shown.slice(visible.length);
	}
	return shown.replace(CONTROL_PATTERN, "\ufffd");
}

/** Cuts at a code point boundary, never splitting a surrogate pair. */
function cutChars(text: string, max: number): string {
	if (text.length <= max) return text;
	let end = Math.max(0, max);
	const code = text.charCodeAt(end - 1);
	if (code >= 0xd800 && code <= 0xdbff) end--;
	return text.slice(0, end);
}

interface Part {
	lines: ScannedLine[];
	/** Formatted lines, parallel to `lines`. */
	formatted: string[];
}

export interface ViewResult {
	/** What the model sees. */
	text: string;
	totalLines: number;
	totalBytes: number;
}

function formatLine(line: ScannedLine, width: number, maxChars: number): string {
	const shown = renderTerminalLine(line.text);
	const number = String(line.lineNumber).padStart(width, " ");
	const hiddenInKept = Math.max(0, shown.length - maxChars);
	const hidden = hiddenInKept + (line.partial ? Math.max(0, line.totalChars - line.text.length) : 0);
	let text = hidden > 0 ? `${cutChars(shown, maxChars)} … [+${hidden} chars]` : shown;
	const count = (line as Partial<SignalLine>).count;
	if (count !== undefined && count > 1) text += `  [×${count}]`;
	return `${number}: ${text}`;
}

function sizeOf(lines: string[]): number {
	let size = 0;
	for (const line of lines) size += line.length + 1;
	return size;
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

function plural(count: number, word: string): string {
	return `${count} ${word}${count === 1 ? "" : "s"}`;
}

/** Builds the view from a finished scan. */
export function buildView(scan: ScanResult, options: ViewOptions): string {
	const { thresholdChars, maxLineChars } = options;
	const width = Math.max(6, String(scan.totalLines).length);

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
		: `[pi-overflow] full output could not be stored (${oneLine(options.storeError ?? "unknown error", 160)}); this view is all that is kept —`;
	const footer = options.id
		? `[use overflow_query with id=${options.id}: search (regex), lines {start,end}, jsonPath]`
		: "[pi-overflow: nothing was stored, so overflow_query cannot read more of this output]";
	const headerFor = (signalCount: number): string => {
		const truncated = options.truncatedNote ? ` (${options.truncatedNote})` : "";
		return `${source} ${options.toolName} output: ${plural(scan.totalLines, "line")}, ${scan.totalBytes} bytes${truncated} — showing head, ${plural(signalCount, "signal line")}, tail`;
	};
	// The header is measured at its longest so the budget holds whatever is chosen.
	const header = headerFor(signals.lines.length);
	let budget = thresholdChars - header.length - footer.length - 2 - NOTICE_RESERVE_CHARS;

	// The last line is always shown: when it alone is too long, it is clipped harder.
	const last = tail.formatted.length - 1;
	if (last >= 0) {
		const room = Math.max(40, budget);
		if (tail.formatted[last].length + 1 > room) {
			const line = tail.lines[last];
			tail.formatted[last] = formatLine(line, width, Math.max(1, room - width - 40));
		}
	}

	const tailRoom = Math.max(Math.floor(budget * TAIL_SHARE), last >= 0 ? tail.formatted[last].length + 1 : 0);
	let tailCount = Math.max(last >= 0 ? 1 : 0, fitCount(tail.formatted, "end", tailRoom));
	budget -= sizeOf(tail.formatted.slice(tail.formatted.length - tailCount));
	const signalRoom = Math.floor((budget * SIGNAL_SHARE) / (1 - TAIL_SHARE));
	let signalPick = fitSpread(signals.formatted, signalRoom);
	budget -= sizeOf(signalPick.map((index) => signals.formatted[index]));
	const headCount = fitCount(head.formatted, "start", budget);
	budget -= sizeOf(head.formatted.slice(0, headCount));
	// Room the head did not use flows back: to the signal lines first, then to the tail.
	if (signalPick.length < signals.formatted.length) {
		budget += sizeOf(signalPick.map((index) => signals.formatted[index]));
		signalPick = fitSpread(signals.formatted, budget);
		budget -= sizeOf(signalPick.map((index) => signals.formatted[index]));
	}
	if (tailCount < tail.formatted.length) {
		budget += sizeOf(tail.formatted.slice(tail.formatted.length - tailCount));
		tailCount = Math.max(tailCount, fitCount(tail.formatted, "end", budget));
	}

	const signalCount = signalPick.length;
	const shownHead = head.formatted.slice(0, headCount);
	const shownSignals = signalPick.map((index) => signals.formatted[index]);
	const shownTail = tail.formatted.slice(tail.formatted.length - tailCount);
	const droppedHead = head.formatted.length - headCount;
	const droppedSignals = signals.formatted.length - signalCount;
	const droppedTail = tail.formatted.length - tailCount;

	const out: string[] = [headerFor(signalCount), ...shownHead];
	const firstTail = tailCount > 0 ? tail.lines[tail.lines.length - tailCount].lineNumber : scan.totalLines + 1;
	const lastHead = headCount > 0 ? head.lines[headCount - 1].lineNumber : 0;
	const omitted = firstTail - lastHead - 1;
	if (omitted > 0) {
		const notes: string[] = [];
		if (droppedHead > 0) notes.push(`${droppedHead} head`);
		if (droppedSignals > 0) notes.push(`${droppedSignals} signal`);
		if (droppedTail > 0) notes.push(`${droppedTail} tail`);
		const dropped = notes.length > 0 ? `; ${notes.join(", ")} lines dropped to fit ${thresholdChars} chars` : "";
		const found = scan.signalMatches > 0 ? `; ${plural(scan.signalMatches, "line")} matched the signal pattern` : "";
		out.push(`  ... ${plural(omitted, "line")} omitted${found}${dropped} ...`);
	}
	if (shownSignals.length > 0) {
		out.push(...shownSignals);
		out.push(`  ... tail (last ${plural(tailCount, "line")}) ...`);
	}
	out.push(...shownTail, footer);
	const view = out.join("\n");
	// The budget above makes this unreachable; it stays as the guarantee's last line of defence.
	return view.length <= thresholdChars ? view : `${cutChars(view, thresholdChars - footer.length - 2)}\n${footer}`.slice(0, thresholdChars);
}

/** The most signal lines that fit in `room`, spread evenly rather than cut from one end (indexes, ascending). */
function fitSpread(formatted: string[], room: number): number[] {
	const all = formatted.map((_, index) => index);
	for (let keep = formatted.length; keep > 0; keep--) {
		const picked = spread(all, keep);
		if (sizeOf(picked.map((index) => formatted[index])) <= room) return picked;
	}
	return [];
}

function oneLine(text: string, max: number): string {
	return cutChars(text.replace(/\s+/g, " ").trim(), max);
}

/** Builds the view of a text held in memory (when the store could not keep it). */
export function buildViewFromText(text: string, options: ViewOptions): ViewResult {
	return toResult(scanText(text, options), options);
}

function toResult(scan: ScanResult, options: ViewOptions): ViewResult {
	return { text: buildView(scan, options), totalLines: scan.totalLines, totalBytes: scan.totalBytes };
}

/** Scans a file as a stream (bounded memory) and builds its view. */
export async function buildViewFromFile(path: string, options: ViewOptions): Promise<ViewResult> {
	const scanner = new LineScanner(options);
	for await (const chunk of createReadStream(path, { highWaterMark: 1024 * 1024 })) scanner.push(chunk as Buffer);
	return toResult(scanner.end(), options);
}
