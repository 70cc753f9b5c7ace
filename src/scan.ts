// One streaming pass over a text (pushed as byte chunks) that collects what the bounded view
// needs: the line and byte totals, the first `headLines` lines, the last `tailLines` lines and the
// signal lines from anywhere, deduplicated and spread over the whole text. The result does not
// depend on how the bytes were chunked. Memory stays bounded whatever the input: each kept line is
// clipped, a line longer than GIANT_LINE_KEEP_BYTES keeps only its two ends (whatever the chunking),
// and signal candidates are decimated. Runs of ordinary lines are scanned as one block (one regex
// pass, newlines counted with indexOf); only the lines that are kept get decoded on their own.
// A configured signalPattern never runs on more than SIGNAL_WINDOW_CHARS characters at once (pieces
// of whole lines, windows of a longer line), and the time budget is checked between those runs and
// charged for every line, head and tail included, so the search stops within the budget plus one run.

import { isAscii } from "node:buffer";
import { isByteSafePattern, PATTERN_WINDOW_CHARS } from "./regex-safety.js";
import { createKeywordLineFinder, type KeywordLineFinder } from "./keyword-filter.js";
import { DEFAULT_SIGNAL_PATTERN, DEFAULT_SIGNAL_PREFILTER_KEYWORDS } from "./signals.js";
import { keepEnd, keepStart } from "./text.js";

let defaultAutomaton: KeywordLineFinder | undefined;
/** Built once per process (automaton, SIMD tables and module: about 10–20 ms), on the first scan that needs it. */
function defaultSignalAutomaton(): KeywordLineFinder {
	defaultAutomaton ??= createKeywordLineFinder(DEFAULT_SIGNAL_PREFILTER_KEYWORDS);
	return defaultAutomaton;
}

/** Newlines in text from `from` on (a string's indexOf costs less per call than a Buffer's). */
function countNewlinesIn(text: string, from: number): number {
	let count = 0;
	for (let at = text.indexOf("\n", from); at >= 0; at = text.indexOf("\n", at + 1)) count++;
	return count;
}

/**
 * Newlines in bytes[from, to), without making a string of them (a 1 MiB string per block is garbage
 * that lets the heap, and RSS, grow by tens of MiB over a large middle). A measured hot loop.
 */
function countNewlineBytes(bytes: Uint8Array, from: number, to: number): number {
	let count = 0;
	for (let i = from; i < to; i++) if (bytes[i] === NEWLINE) count++;
	return count;
}

/** U+2028 or U+2029 (as UTF-8 bytes in a Latin-1 view): line terminators for `^`/`$` only when decoded. */
function hasUnicodeLineSeparator(raw: string, from: number): boolean {
	return raw.includes("\xe2\x80\xa8", from) || raw.includes("\xe2\x80\xa9", from);
}

/** Bytes kept from each end of a line too long to hold whole; longer lines are "giant". */
export const GIANT_LINE_KEEP_BYTES = 64 * 1024;
/**
 * Longest the search for signal lines may take in one scan. A configured signalPattern that is
 * slow (not catastrophic: config refuses those) stops being applied after it; head, tail and totals
 * are still complete, and the view says where the search stopped.
 */
export const SIGNAL_SCAN_BUDGET_MS = 2000;
/**
 * Most characters a configured signalPattern runs on at once (regex-safety.ts bounds the cost of
 * that); a longer line is tested in overlapping windows of this size. The default pattern, trusted
 * and linear, always sees whole lines.
 */
export const SIGNAL_WINDOW_CHARS = PATTERN_WINDOW_CHARS;
/** Characters a window (after a line's first) sees before its first start position: for `^`, `\b` and lookbehinds. */
const SIGNAL_WINDOW_CONTEXT_CHARS = 128;
/** How far each window moves on; a match of up to this many characters lies whole in one window. */
export const SIGNAL_WINDOW_STEP_CHARS = (SIGNAL_WINDOW_CHARS - SIGNAL_WINDOW_CONTEXT_CHARS) / 2;
/** Distinct signal texts remembered for deduplication. */
const MAX_DISTINCT_SIGNALS = 10_000;
/** Characters of a signal line used as its deduplication key. */
const SIGNAL_KEY_CHARS = 512;

const NEWLINE = 0x0a;
const CARRIAGE_RETURN = 0x0d;

/** Lines that only warn: shown after the lines that report a failure when room is short. */
const WEAK_SIGNAL = /\b(?:warn(?:ing)?s?|deprecat\w*|notice|hint|note)\b/i;
const STRONG_SIGNAL =
	/err|fail|fatal|panic|exception|abort|fault|denied|killed|assert|traceback|undefined reference|not ok|cannot|unable|✗|✖/i;

// ANSI: CSI sequences, OSC sequences (ended by BEL or ST, never crossing a line), and two-character
// escapes. Linear, and never matches a newline, so stripping a block keeps its lines in place.
const ANSI_PATTERN = /\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b\n]*(?:\x07|\x1b\\)?|\x1b[@-Z\\-_]/g;
const ERASE_LINE_PATTERN = /^\x1b\[[012]?K/;
// What is left of an escape sequence cut at the end of a kept piece, or at its start (the tail of a
// CSI sequence, recognised only when another escape follows, so visible text is never dropped).
const PARTIAL_ESCAPE_AT_END = /\x1b(?:\[[0-?]*[ -/]*|\][^\x07\x1b\n]*)?$/;
const PARTIAL_ESCAPE_AT_START = /^\[?[0-?]*[ -/]*[@-~](?=\x1b)/;
// C0 controls other than tab, and DEL: shown as U+FFFD so the view stays one line per line.
const CONTROL_PATTERN = /[\x00-\x08\x0b-\x1f\x7f]/g;

export interface ScanOptions {
	headLines: number;
	tailLines: number;
	maxSignalLines: number;
	maxLineChars: number;
	/** Tested on each line (ANSI escapes removed); compiled again internally with the flags the scan needs. */
	signalRegex: RegExp;
	/** The clock the signal search budget is measured with, in milliseconds. Default performance.now. */
	now?: () => number;
}

export interface ScannedLine {
	/** 1-based, as an editor shows it. */
	lineNumber: number;
	/** What a terminal shows of the line (see renderTerminalLine), possibly only part of it. */
	text: string;
	/** Characters (UTF-16 code units) of the whole rendered line; for a giant line, of its raw bytes. */
	totalChars: number;
	/** True when `text` is only part of the line. */
	partial: boolean;
	/** Set when `text` is the end of the line rather than its start (a giant line whose end signals). */
	keptEnd?: true;
}

export interface SignalLine extends ScannedLine {
	/** How many lines carried this exact text (shown once, at its first line). */
	count: number;
	/** Only warns (see WEAK_SIGNAL); such lines yield to real failures when room is short. */
	weak: boolean;
}

export interface ScanResult {
	totalLines: number;
	totalBytes: number;
	head: ScannedLine[];
	/** In line order; always ends with the last line when there is one. */
	tail: ScannedLine[];
	/** Candidates in line order, neither in the head nor in the last `tailLines` lines. */
	signals: SignalLine[];
	/** Lines that matched the signal pattern in all (repeats, head and tail included). */
	signalMatches: number;
	/**
	 * Set when looking for signal lines took longer than SIGNAL_SCAN_BUDGET_MS and was given up:
	 * `atLine` is the first line not (fully) searched, `afterMs` the time spent searching.
	 */
	signalSearchStopped?: { atLine: number; afterMs: number };
}

/**
 * What a terminal would show for a line: "\r" redraws resolved (a later, shorter draw leaves the
 * end of a longer one visible; an erase-line escape clears it), ANSI escapes removed, other control
 * characters shown as U+FFFD. Linear in the line's length.
 */
export function renderTerminalLine(raw: string): string {
	if (!raw.includes("\r") && !raw.includes("\x1b")) return raw.replace(CONTROL_PATTERN, "\ufffd");
	const segments = raw.split("\r");
	let shown = "";
	// From the last draw back: each earlier draw shows only where it is longer than all later ones.
	for (let i = segments.length - 1; i >= 0; i--) {
		const segment = segments[i];
		const visible = segment.replace(ANSI_PATTERN, "");
		if (visible.length > shown.length) shown += visible.slice(shown.length);
		if (ERASE_LINE_PATTERN.test(segment)) break;
	}
	return shown.replace(CONTROL_PATTERN, "\ufffd");
}

/** The text with its ANSI escapes removed (lines stay where they are). */
export function stripAnsi(text: string): string {
	return text.includes("\x1b") ? text.replace(ANSI_PATTERN, "") : text;
}

interface RepeatCount {
	count: number;
}

/** A signal line waiting to be shown, with the counter its repeats increment. */
interface Candidate {
	line: SignalLine;
	repeats: RepeatCount;
}

/** Keeps an evenly spread sample of an unbounded sequence: every `stride`-th item, stride doubling. */
class SpreadSample<T> {
	private items: T[] = [];
	private stride = 1;
	private seen = 0;
	constructor(private readonly capacity: number) {}
	add(item: T): void {
		if (this.seen++ % this.stride !== 0) return;
		this.items.push(item);
		if (this.items.length > this.capacity) {
			this.items = this.items.filter((_, index) => index % 2 === 0);
			this.stride *= 2;
		}
	}
	values(): T[] {
		return this.items;
	}
}

/** Copies a string out of a larger one so that keeping it does not keep the larger one alive. */
function detach(text: string): string {
	return text.length === 0 ? "" : Buffer.from(text, "utf16le").toString("utf16le");
}

function stripLineEnd(text: string): string {
	return text.endsWith("\r") ? text.slice(0, -1) : text;
}

/** UTF-16 code units the bytes decode to (exact for valid UTF-8). */
function countUtf16Units(bytes: Uint8Array): number {
	if (isAscii(bytes)) return bytes.length;
	let count = 0;
	for (let i = 0; i < bytes.length; i++) {
		const byte = bytes[i];
		if ((byte & 0xc0) !== 0x80) count++;
		if (byte >= 0xf0) count++;
	}
	return count;
}

/** The bytes without an incomplete UTF-8 sequence at their end. */
function trimIncompleteEnd(bytes: Buffer): Buffer {
	for (let back = 1; back <= Math.min(4, bytes.length); back++) {
		const byte = bytes[bytes.length - back];
		if ((byte & 0xc0) === 0x80) continue;
		const length = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
		return length > back ? bytes.subarray(0, bytes.length - back) : bytes;
	}
	return bytes;
}

/** The bytes without the continuation bytes of a character that started before them. */
function trimIncompleteStart(bytes: Buffer): Buffer {
	let start = 0;
	while (start < Math.min(3, bytes.length) && (bytes[start] & 0xc0) === 0x80) start++;
	return bytes.subarray(start);
}

/**
 * A line still being received, possibly far larger than what is kept of it: its first
 * GIANT_LINE_KEEP_BYTES bytes in a growing buffer, and the last ones after those in a ring, so
 * pushing it one byte at a time costs as little as pushing it whole.
 */
export class PendingLine {
	private head = Buffer.allocUnsafe(256);
	private headBytes = 0;
	private ring: Buffer | undefined;
	/** Where the next byte goes in the ring. */
	private ringAt = 0;
	bytes = 0;
	units = 0;
	lastByte = -1;

	append(chunk: Uint8Array): void {
		if (chunk.length === 0) return;
		this.bytes += chunk.length;
		this.units += countUtf16Units(chunk);
		this.lastByte = chunk[chunk.length - 1];
		let rest = chunk;
		if (this.headBytes < GIANT_LINE_KEEP_BYTES) {
			const take = Math.min(rest.length, GIANT_LINE_KEEP_BYTES - this.headBytes);
			if (this.headBytes + take > this.head.length) {
				const grown = Buffer.allocUnsafe(Math.min(GIANT_LINE_KEEP_BYTES, Math.max(this.head.length * 2, this.headBytes + take)));
				this.head.copy(grown, 0, 0, this.headBytes);
				this.head = grown;
			}
			this.head.set(rest.subarray(0, take), this.headBytes);
			this.headBytes += take;
			rest = rest.subarray(take);
		}
		if (rest.length === 0) return;
		const ring = (this.ring ??= Buffer.allocUnsafe(GIANT_LINE_KEEP_BYTES));
		if (rest.length > ring.length) rest = rest.subarray(rest.length - ring.length);
		const first = Math.min(rest.length, ring.length - this.ringAt);
		ring.set(rest.subarray(0, first), this.ringAt);
		ring.set(rest.subarray(first), 0);
		this.ringAt = (this.ringAt + rest.length) % ring.length;
	}

	get isEmpty(): boolean {
		return this.bytes === 0;
	}

	get isGiant(): boolean {
		return this.bytes > GIANT_LINE_KEEP_BYTES;
	}

	/** The whole line (only when it is not giant). */
	whole(): string {
		return this.head.toString("utf8", 0, this.headBytes);
	}

	/** The first and the last GIANT_LINE_KEEP_BYTES bytes (at most; never overlapping), cut at character boundaries. */
	ends(): { start: string; end: string } {
		const start = trimIncompleteEnd(this.head.subarray(0, this.headBytes));
		const ring = this.ring ?? Buffer.alloc(0);
		const endBytes = Math.min(ring.length, this.bytes - this.headBytes);
		// The ring's last `endBytes` bytes, oldest first.
		const from = (this.ringAt - endBytes + ring.length) % Math.max(1, ring.length);
		const tail = from + endBytes <= ring.length ? ring.subarray(from, from + endBytes) : Buffer.concat([ring.subarray(from), ring.subarray(0, this.ringAt)]);
		const end = trimIncompleteStart(tail);
		return { start: start.toString("utf8"), end: end.toString("utf8") };
	}
}

export class LineScanner {
	private readonly options: ScanOptions;
	private readonly blockRegex: RegExp;
	private readonly lineRegex: RegExp;
	/** The signal pattern matches alike in UTF-8 and its Latin-1 view (see isByteSafePattern). */
	private readonly byteSafe: boolean;
	/** Cheap first pass for the default pattern (DEFAULT_SIGNAL_PREFILTER_KEYWORDS), else undefined. */
	private readonly automaton: KeywordLineFinder | undefined;
	/** A configured pattern: run on at most SIGNAL_WINDOW_CHARS characters at once (see testInWindows). */
	private readonly windowed: boolean;
	/** For windows of a long line (global, so that a window's first characters can be context only). */
	private readonly windowRegex: RegExp;
	private readonly now: () => number;
	private readonly keepChars: number;
	private lineCount = 0;
	private byteCount = 0;
	private pending = new PendingLine();
	private readonly head: ScannedLine[] = [];
	private tail: ScannedLine[] = [];
	/** Repeat counters by text; null for a text first seen in the head. Small, so dropped candidates cost little. */
	private readonly distinct = new Map<string, RepeatCount | null>();
	/** Signals still within the last `tailLines` lines: they join the sample once they leave it. */
	private recent: Candidate[] = [];
	private recentStart = 0;
	private readonly strong: SpreadSample<Candidate>;
	private readonly weak: SpreadSample<Candidate>;
	private signalMatches = 0;
	private signalMs = 0;
	/** When signal time was last charged (or its clock started). */
	private signalClock = 0;
	private signalStopped: { atLine: number; afterMs: number } | undefined;
	private ended = false;

	constructor(options: ScanOptions) {
		this.options = options;
		const flags = options.signalRegex.flags.replace(/[gmy]/g, "");
		this.blockRegex = new RegExp(options.signalRegex.source, `${flags}gm`);
		this.lineRegex = new RegExp(options.signalRegex.source, `${flags}m`);
		this.byteSafe = isByteSafePattern(options.signalRegex.source);
		this.automaton =
			options.signalRegex.source === DEFAULT_SIGNAL_PATTERN && options.signalRegex.flags.includes("i") ? defaultSignalAutomaton() : undefined;
		this.windowed = options.signalRegex.source !== DEFAULT_SIGNAL_PATTERN;
		this.windowRegex = new RegExp(options.signalRegex.source, `${flags}gm`);
		this.now = options.now ?? (() => performance.now());
		this.keepChars = keepCharsFor(options.maxLineChars);
		const capacity = Math.max(32, options.maxSignalLines * 2);
		this.strong = new SpreadSample(capacity);
		this.weak = new SpreadSample(capacity);
	}

	push(chunk: Uint8Array): void {
		if (this.ended) throw new Error("LineScanner: push after end");
		if (chunk.length === 0) return;
		this.byteCount += chunk.length;
		const bytes = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.length);
		let start = 0;
		if (!this.pending.isEmpty) {
			const newline = bytes.indexOf(NEWLINE);
			if (newline < 0) {
				this.pending.append(bytes);
				return;
			}
			this.pending.append(bytes.subarray(0, newline));
			this.finishPendingLine();
			start = newline + 1;
		}
		const lastNewline = bytes.lastIndexOf(NEWLINE);
		if (lastNewline >= start) {
			this.scanWholeLines(bytes, start, lastNewline + 1);
			start = lastNewline + 1;
		}
		if (start < bytes.length) this.pending.append(bytes.subarray(start));
	}

	/** Lines completed so far: the newlines pushed. */
	get newlines(): number {
		return this.lineCount;
	}

	/**
	 * Jumps over lines that are not pushed (the left-out middle of a stored copy, when its view is
	 * built again): the next line pushed is `nextLine`, `bytes` are counted, and `signals` stand for
	 * the signal lines the first scan found in the lines jumped over.
	 */
	skipTo(nextLine: number, bytes: number, signals: readonly { lineNumber: number; text: string; count: number }[]): void {
		if (this.ended) throw new Error("LineScanner: skip after end");
		if (!this.pending.isEmpty) this.finishPendingLine();
		for (const signal of signals) {
			if (signal.lineNumber <= this.lineCount || signal.lineNumber >= nextLine) continue;
			this.acceptSignal({ lineNumber: signal.lineNumber, text: signal.text, totalChars: signal.text.length, partial: false });
			const last = this.recent[this.recent.length - 1];
			if (last?.line.lineNumber === signal.lineNumber) last.repeats.count = signal.count;
		}
		this.lineCount = Math.max(this.lineCount, nextLine - 1);
		this.byteCount += bytes;
		this.releaseRecentSignals();
	}

	end(): ScanResult {
		if (!this.ended) {
			if (!this.pending.isEmpty) this.finishPendingLine();
			this.ended = true;
		}
		// Stopped after the last line is not stopped: every line was searched.
		const stopped = this.signalStopped && this.signalStopped.atLine <= this.lineCount ? this.signalStopped : undefined;
		const signals = [...this.strong.values(), ...this.weak.values()]
			.map(({ line, repeats }): SignalLine => ({ ...line, count: repeats.count }))
			.sort((a, b) => a.lineNumber - b.lineNumber);
		return {
			totalLines: this.lineCount,
			totalBytes: this.byteCount,
			head: this.head,
			tail: this.tail,
			signals,
			signalMatches: this.signalMatches,
			...(stopped ? { signalSearchStopped: stopped } : {}),
		};
	}

	/**
	 * Whole lines (each ending in "\n"): runs of ordinary lines go to scanBlock, a long line (giant,
	 * or longer than a window for a configured pattern) goes through PendingLine, exactly as when it
	 * arrives in pieces, so chunking never changes the result.
	 */
	private scanWholeLines(bytes: Buffer, start: number, end: number): void {
		const longLineBytes = this.windowed ? SIGNAL_WINDOW_CHARS : GIANT_LINE_KEEP_BYTES;
		let blockStart = start;
		let at = start;
		while (at < end) {
			// Every line starting in [at, newline] ends by that newline, so none of them is long.
			const newline = bytes.lastIndexOf(NEWLINE, Math.min(end - 1, at + longLineBytes));
			if (newline >= at) {
				at = newline + 1;
				continue;
			}
			const lineEnd = bytes.indexOf(NEWLINE, at);
			if (at > blockStart) this.scanBlock(bytes, blockStart, at);
			this.pending.append(bytes.subarray(at, lineEnd));
			this.finishPendingLine();
			at = lineEnd + 1;
			blockStart = at;
		}
		if (blockStart < end) this.scanBlock(bytes, blockStart, end);
	}

	/**
	 * A block of whole lines, each ending in "\n", none giant: count them, keep head/tail, find
	 * signals. The block is viewed as Latin-1 (one character per byte, no UTF-8 decoding, so string
	 * offsets are byte offsets); only the lines that are kept are decoded as UTF-8.
	 */
	private scanBlock(bytes: Buffer, start: number, end: number): void {
		const firstLine = this.lineCount + 1;
		const length = end - start;
		const decode = (from: number, to: number) => bytes.toString("utf8", start + from, start + to);

		// Head: decode the block's first lines while the head is short.
		let cursor = 0;
		let lineNumber = firstLine;
		while (this.head.length < this.options.headLines && cursor < length) {
			const newline = bytes.indexOf(NEWLINE, start + cursor) - start;
			this.acceptLine(lineNumber, decode(cursor, newline), false);
			cursor = newline + 1;
			lineNumber++;
		}

		let lines: number;
		if (this.options.maxSignalLines > 0 && !this.signalStopped && cursor < length) {
			this.startSignalClock();
			if (this.automaton) {
				// The default pattern: one automaton pass over the bytes finds candidates and counts lines.
				lines = lineNumber - firstLine + this.findCandidatesByAutomaton(bytes, start, cursor, end, lineNumber);
			} else {
				const raw = bytes.toString("latin1", start, end);
				lines = lineNumber - firstLine + countNewlinesIn(raw, cursor);
				if (!raw.includes("\x1b", cursor) && (this.byteSafe ? !hasUnicodeLineSeparator(raw, cursor) : isAscii(bytes.subarray(start + cursor, end)))) {
					// Pure ASCII, or a pattern that matches alike in both views (isByteSafePattern), and no
					// escapes: the Latin-1 view finds exactly the lines the decoded text would.
					this.findCandidates(this.blockRegex, raw, decode, cursor, lineNumber);
				} else {
					this.findSignals(decode(cursor, length), 0, lineNumber);
				}
			}
			this.chargeSignalTime(firstLine + lines);
		} else {
			lines = lineNumber - firstLine + countNewlineBytes(bytes, start + cursor, end);
		}

		// Tail: the block's last lines replace the oldest ones of the previous tail.
		const want = Math.min(this.options.tailLines, lines);
		const fresh: ScannedLine[] = [];
		let lineEnd = length - 1;
		for (let i = 0; i < want; i++) {
			const lineStart = lineEnd > 0 ? Math.max(0, bytes.lastIndexOf(NEWLINE, start + lineEnd - 1) - start + 1) : 0;
			fresh.push(this.makeLine(firstLine + lines - 1 - i, decode(lineStart, lineEnd)));
			lineEnd = lineStart - 1;
		}
		fresh.reverse();
		this.pushTail(fresh);
		this.lineCount += lines;
		this.releaseRecentSignals();
	}

	/**
	 * The default pattern's first pass: the keyword automaton over bytes[start + from, end) (whole
	 * lines). A line with a keyword is decoded and tested with the full pattern; the pass then
	 * resumes on the next line. Returns the lines counted.
	 */
	private findCandidatesByAutomaton(bytes: Buffer, start: number, from: number, end: number, fromLine: number): number {
		const found: number[] = [];
		const lines = (this.automaton as KeywordLineFinder).findLines(bytes, start + from, end, found);
		for (let k = 0; k < found.length; k += 2) {
			const lineStart = found[k];
			const text = bytes.toString("utf8", lineStart, bytes.indexOf(NEWLINE, lineStart));
			if (this.isSignal(stripLineEnd(text))) this.acceptSignal(this.makeLine(fromLine + found[k + 1], text));
		}
		return lines;
	}

	/**
	 * The next match of a block pass (`regex` global, its lastIndex at a line start): for the default
	 * pattern one exec over the rest of `text`; for a configured one, execs over pieces of whole lines
	 * of at most SIGNAL_WINDOW_CHARS characters (no line is longer here, see scanWholeLines), the time
	 * charged after each piece. A piece is `text` cut after its last line, so offsets, and what a
	 * lookbehind sees, stay as they are. `lineAt` gives the line number at an offset, for a stop.
	 */
	private execInPieces(regex: RegExp, text: string, lineAt: (offset: number) => number): RegExpExecArray | null {
		if (!this.windowed) return regex.exec(text);
		while (regex.lastIndex < text.length && !this.signalStopped) {
			const from = regex.lastIndex;
			const cut = text.lastIndexOf("\n", from + SIGNAL_WINDOW_CHARS - 1);
			const end = cut >= from ? cut + 1 : text.indexOf("\n", from) + 1 || text.length;
			const match = regex.exec(text.slice(0, end));
			if (match) return match;
			regex.lastIndex = end;
			if (!this.chargeSignalTime(() => lineAt(end))) break;
		}
		return null;
	}

	/**
	 * A pass of `regex` over the Latin-1 view of a block: each hit names a candidate line, which is
	 * decoded and tested with the full signal pattern; the pass resumes on the next line.
	 */
	private findCandidates(regex: RegExp, raw: string, decode: (from: number, to: number) => string, from: number, fromLine: number): void {
		let countedTo = from;
		let countedLine = fromLine;
		const lineAt = (offset: number) => countedLine + countNewlinesIn(raw.slice(0, offset), countedTo);
		regex.lastIndex = from;
		for (let match = this.execInPieces(regex, raw, lineAt); match !== null; match = this.execInPieces(regex, raw, lineAt)) {
			for (let at = raw.indexOf("\n", countedTo); at >= 0 && at < match.index; at = raw.indexOf("\n", at + 1)) {
				countedLine++;
				countedTo = at + 1;
			}
			const lineEnd = raw.indexOf("\n", match.index);
			const line = decode(countedTo, lineEnd);
			if (this.isSignal(stripLineEnd(line))) this.acceptSignal(this.makeLine(countedLine, line));
			if (lineEnd >= raw.length - 1) break;
			regex.lastIndex = lineEnd + 1;
			countedTo = lineEnd + 1;
			countedLine++;
		}
	}

	/**
	 * One regex pass over the block (ANSI escapes removed, which keeps every line in place); each hit
	 * is confirmed on its own line, then the pass resumes on the next line.
	 */
	private findSignals(raw: string, from: number, fromLine: number): void {
		const stripped = raw.includes("\x1b", from);
		const text = stripped ? raw.slice(0, from) + raw.slice(from).replace(ANSI_PATTERN, "") : raw;
		const regex = this.blockRegex;
		let countedTo = from;
		let countedLine = fromLine;
		// The same line in the raw text, whose offsets differ when escapes were removed.
		let rawTo = from;
		let rawLine = fromLine;
		const lineAt = (offset: number) => countedLine + countNewlinesIn(text.slice(0, offset), countedTo);
		regex.lastIndex = from;
		for (let match = this.execInPieces(regex, text, lineAt); match !== null; match = this.execInPieces(regex, text, lineAt)) {
			for (let at = text.indexOf("\n", countedTo); at >= 0 && at < match.index; at = text.indexOf("\n", at + 1)) {
				countedLine++;
				countedTo = at + 1;
			}
			let lineEnd = text.indexOf("\n", match.index);
			if (lineEnd < 0) lineEnd = text.length;
			let line = text.slice(countedTo, lineEnd);
			if (stripped) {
				for (; rawLine < countedLine; rawLine++) rawTo = raw.indexOf("\n", rawTo) + 1;
				line = raw.slice(rawTo, raw.indexOf("\n", rawTo));
			}
			if (this.isSignal(stripLineEnd(line))) this.acceptSignal(this.makeLine(countedLine, line));
			if (lineEnd >= text.length - 1) break;
			regex.lastIndex = lineEnd + 1;
			countedTo = lineEnd + 1;
			countedLine++;
		}
	}

	/** Is the line (without its line ending) a signal line? Tested with its ANSI escapes removed. */
	private isSignal(line: string): boolean {
		return this.options.maxSignalLines > 0 && !this.signalStopped && this.lineRegex.test(stripAnsi(line));
	}

	/**
	 * A line tested on its own (in the head, arriving in pieces, or one end of a giant line), timed
	 * and charged like a block. `done` is false while more of the line is still to be tested.
	 */
	private isSignalLine(line: string, lineNumber: number, done = true): boolean {
		if (this.options.maxSignalLines === 0 || this.signalStopped) return false;
		this.startSignalClock();
		const text = stripAnsi(line);
		const found = this.windowed && text.length > SIGNAL_WINDOW_CHARS ? this.testInWindows(text, lineNumber) : this.lineRegex.test(text);
		this.chargeSignalTime(done ? lineNumber + 1 : lineNumber);
		return found;
	}

	/**
	 * A configured pattern on a line longer than SIGNAL_WINDOW_CHARS: window by window, each of that
	 * many characters, moving on by SIGNAL_WINDOW_STEP_CHARS, so a match up to that long lies whole in
	 * one window. A window after the first starts searching SIGNAL_WINDOW_CONTEXT_CHARS in, so `^`,
	 * `\b` and lookbehinds see the line before it; at a window's end, `$`, `\b` and lookaheads see the
	 * end of the window. The budget is checked between windows.
	 */
	private testInWindows(text: string, lineNumber: number): boolean {
		const regex = this.windowRegex;
		for (let start = 0; ; start += SIGNAL_WINDOW_STEP_CHARS) {
			const from = start === 0 ? 0 : start - SIGNAL_WINDOW_CONTEXT_CHARS;
			const to = Math.min(text.length, from + SIGNAL_WINDOW_CHARS);
			regex.lastIndex = start - from;
			if (regex.exec(text.slice(from, to)) !== null) return true;
			if (to === text.length || !this.chargeSignalTime(lineNumber)) return false;
		}
	}

	private startSignalClock(): void {
		this.signalClock = this.now();
	}

	/**
	 * Adds the time since the signal clock was started or last charged; past the budget, signal lines
	 * are no longer looked for from `atLine` on (the first line not fully searched; a function when
	 * it costs something to know). False once stopped.
	 */
	private chargeSignalTime(atLine: number | (() => number)): boolean {
		if (this.signalStopped) return false;
		const now = this.now();
		this.signalMs += now - this.signalClock;
		this.signalClock = now;
		if (this.signalMs > SIGNAL_SCAN_BUDGET_MS) this.signalStopped = { atLine: typeof atLine === "number" ? atLine : atLine(), afterMs: Math.round(this.signalMs) };
		return !this.signalStopped;
	}

	private makeLine(lineNumber: number, raw: string): ScannedLine {
		return shapeLine(lineNumber, raw, this.keepChars);
	}

	/** One line that is neither in a block's signal pass nor giant: head, signal, tail. */
	private acceptLine(lineNumber: number, raw: string, toTail: boolean): void {
		const line = this.makeLine(lineNumber, raw);
		this.placeLine(line, this.isSignalLine(stripLineEnd(raw), lineNumber), toTail);
	}

	private placeLine(line: ScannedLine, isSignal: boolean, toTail: boolean): void {
		if (this.head.length < this.options.headLines) {
			this.head.push(line);
			// A signal first seen in the head is already shown: its repeats are not shown again.
			if (isSignal) {
				this.signalMatches++;
				this.rememberDistinct(line.text, null);
			}
		} else if (isSignal) {
			this.acceptSignal(line);
		}
		if (toTail) this.pushTail([line]);
	}

	private rememberDistinct(text: string, repeats: RepeatCount | null): void {
		// A copy of the key, so that the map does not keep whole kept lines alive.
		if (this.distinct.size < MAX_DISTINCT_SIGNALS) this.distinct.set(detach(text.slice(0, SIGNAL_KEY_CHARS)), repeats);
	}

	private acceptSignal(line: ScannedLine): void {
		this.signalMatches++;
		const key = line.text.slice(0, SIGNAL_KEY_CHARS);
		if (this.distinct.has(key)) {
			const first = this.distinct.get(key);
			if (first) first.count++;
			return;
		}
		const repeats: RepeatCount = { count: 1 };
		const weak = WEAK_SIGNAL.test(line.text) && !STRONG_SIGNAL.test(line.text);
		this.rememberDistinct(line.text, repeats);
		this.recent.push({ line: { ...line, count: 1, weak }, repeats });
	}

	/** Signals that are no longer within the last `tailLines` lines join the spread sample. */
	private releaseRecentSignals(): void {
		const limit = this.lineCount - this.options.tailLines;
		let at = this.recentStart;
		while (at < this.recent.length && this.recent[at].line.lineNumber <= limit) {
			const candidate = this.recent[at++];
			(candidate.line.weak ? this.weak : this.strong).add(candidate);
		}
		this.recentStart = at;
		if (at > 1024 && at * 2 > this.recent.length) {
			this.recent = this.recent.slice(at);
			this.recentStart = 0;
		}
	}

	private pushTail(fresh: ScannedLine[]): void {
		if (fresh.length >= this.options.tailLines) {
			this.tail = fresh.slice(fresh.length - this.options.tailLines);
			return;
		}
		const keep = this.options.tailLines - fresh.length;
		if (this.tail.length > keep) this.tail = this.tail.slice(this.tail.length - keep);
		for (const line of fresh) this.tail.push(line);
	}

	private finishPendingLine(): void {
		const pending = this.pending;
		this.pending = new PendingLine();
		const lineNumber = this.lineCount + 1;
		if (!pending.isGiant) {
			this.acceptLine(lineNumber, pending.whole(), true);
		} else {
			this.placeLine(...this.makeGiantLine(lineNumber, pending), true);
		}
		this.lineCount++;
		this.releaseRecentSignals();
	}

	private makeGiantLine(lineNumber: number, pending: PendingLine): [ScannedLine, boolean] {
		return shapeGiantLine(lineNumber, pending, this.keepChars, (text, isEnd) => this.isSignalLine(text, lineNumber, isEnd));
	}
}

/** Characters kept of a line for a view that clips lines at `maxLineChars` (room for \r redraws and escapes). */
export function keepCharsFor(maxLineChars: number): number {
	return Math.min(GIANT_LINE_KEEP_BYTES, maxLineChars * 4 + 1024);
}

/**
 * A whole line (with or without its line ending) as the view shows it: what a terminal shows of
 * it, its start kept up to `keepChars`. The one rendering of a stored line: the scan, the line
 * reader and the query answers all shape lines here.
 */
export function shapeLine(lineNumber: number, raw: string, keepChars: number): ScannedLine {
	const text = renderTerminalLine(stripLineEnd(raw));
	if (text.length <= keepChars) return { lineNumber, text: detach(text), totalChars: text.length, partial: false };
	return { lineNumber, text: detach(keepStart(text, keepChars)), totalChars: text.length, partial: true };
}

/**
 * A line too long to hold (more than GIANT_LINE_KEEP_BYTES): only its two ends are looked at. It
 * shows its start — or, for a line redrawn with "\r", its last redraws (what a terminal shows), or
 * its end when only the end is a signal. Returns the line and whether it is a signal.
 */
export function shapeGiantLine(
	lineNumber: number,
	pending: PendingLine,
	keepChars: number,
	isSignal: (text: string, isEnd: boolean) => boolean,
): [ScannedLine, boolean] {
	const ends = pending.ends();
	// The kept ends are cut at arbitrary bytes: drop an escape sequence cut in two at either cut.
	const start = ends.start.replace(PARTIAL_ESCAPE_AT_END, "");
	const end = stripLineEnd(ends.end).replace(PARTIAL_ESCAPE_AT_START, "");
	const totalChars = pending.units - (pending.lastByte === CARRIAGE_RETURN ? 1 : 0);
	const atStart = isSignal(start, false);
	const atEnd = !atStart && isSignal(end, true);
	const redraw = end.indexOf("\r");
	if (redraw >= 0) {
		const shown = renderTerminalLine(end.slice(redraw + 1));
		const text = detach(keepStart(shown, keepChars));
		return [{ lineNumber, text, totalChars: shown.length, partial: text.length < shown.length }, atStart || atEnd];
	}
	if (atEnd) {
		const text = detach(keepEnd(renderTerminalLine(end), keepChars));
		return [{ lineNumber, text, totalChars, partial: true, keptEnd: true }, true];
	}
	const shownStart = renderTerminalLine(start);
	if (shownStart.trim() === "") {
		// Nothing visible in its first 64 KiB (an escape flood): show its end instead.
		const text = detach(keepEnd(renderTerminalLine(end), keepChars));
		return [{ lineNumber, text, totalChars, partial: true, keptEnd: true }, atStart];
	}
	const text = detach(keepStart(shownStart, keepChars));
	return [{ lineNumber, text, totalChars, partial: true }, atStart];
}

/** Scans a whole string (used when the original is only in memory). */
export function scanText(text: string, options: ScanOptions): ScanResult {
	const scanner = new LineScanner(options);
	const bytes = Buffer.from(text, "utf8");
	const step = 1024 * 1024;
	for (let at = 0; at < bytes.length; at += step) scanner.push(bytes.subarray(at, at + step));
	return scanner.end();
}
