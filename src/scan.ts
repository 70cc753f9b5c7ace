// One streaming pass over a text (pushed as byte chunks) that collects what the bounded view
// needs: the line and byte totals, the first `headLines` lines, the last `tailLines` lines and the
// signal lines from anywhere, deduplicated and spread over the whole text. Memory stays bounded
// whatever the input: each kept line is clipped, a line longer than GIANT_LINE_KEEP_BYTES keeps
// only its two ends, and signal candidates are decimated. Chunks are scanned a block of whole
// lines at a time (one regex pass per block, newlines counted with indexOf), and only the lines
// that are kept get decoded on their own.

/** Bytes kept from each end of a line too long to hold whole. */
export const GIANT_LINE_KEEP_BYTES = 64 * 1024;
/** Distinct signal texts remembered for deduplication. */
const MAX_DISTINCT_SIGNALS = 10_000;
/** Characters of a signal line used as its deduplication key. */
const SIGNAL_KEY_CHARS = 512;

const NEWLINE = 0x0a;

/** Lines that only warn: shown after the lines that report a failure when room is short. */
const WEAK_SIGNAL = /\b(?:warn(?:ing)?s?|deprecat\w*|notice|hint|note)\b/i;
const STRONG_SIGNAL =
	/err|fail|fatal|panic|exception|abort|fault|denied|killed|assert|traceback|undefined reference|not ok|cannot|unable|✗|✖/i;

export interface ScanOptions {
	headLines: number;
	tailLines: number;
	maxSignalLines: number;
	maxLineChars: number;
	/** Tested on each line; compiled again internally with the flags the scan needs. */
	signalRegex: RegExp;
}

export interface ScannedLine {
	/** 1-based, as an editor shows it. */
	lineNumber: number;
	/** The line's text without its line ending, possibly shortened to `keptChars` characters. */
	text: string;
	/** Characters of the whole line (code points for lines too long to decode whole). */
	totalChars: number;
	/** True when `text` is only part of the line. */
	partial: boolean;
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
	/** Candidates in line order, not in the head; some may fall in the tail range. */
	signals: SignalLine[];
	/** Lines that matched the signal pattern in all (repeats included). */
	signalMatches: number;
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

function countCodePoints(bytes: Uint8Array, start = 0, end = bytes.length): number {
	let count = 0;
	for (let i = start; i < end; i++) if ((bytes[i] & 0xc0) !== 0x80) count++;
	return count;
}

/** A line still being received, possibly far larger than what is kept of it. */
class PendingLine {
	head: Buffer[] = [];
	headBytes = 0;
	tail: Buffer[] = [];
	tailBytes = 0;
	bytes = 0;
	codePoints = 0;

	append(chunk: Uint8Array): void {
		this.bytes += chunk.length;
		this.codePoints += countCodePoints(chunk);
		let rest = chunk;
		if (this.headBytes < GIANT_LINE_KEEP_BYTES) {
			const take = Math.min(rest.length, GIANT_LINE_KEEP_BYTES - this.headBytes);
			this.head.push(Buffer.from(rest.subarray(0, take)));
			this.headBytes += take;
			rest = rest.subarray(take);
		}
		if (rest.length === 0) return;
		this.tail.push(Buffer.from(rest.subarray(Math.max(0, rest.length - GIANT_LINE_KEEP_BYTES))));
		this.tailBytes += Math.min(rest.length, GIANT_LINE_KEEP_BYTES);
		while (this.tail.length > 1 && this.tailBytes - this.tail[0].length >= GIANT_LINE_KEEP_BYTES) {
			this.tailBytes -= this.tail[0].length;
			this.tail.shift();
		}
	}

	get isEmpty(): boolean {
		return this.bytes === 0;
	}
}

export class LineScanner {
	private readonly options: ScanOptions;
	private readonly blockRegex: RegExp;
	private readonly lineRegex: RegExp;
	private readonly keepChars: number;
	private lineCount = 0;
	private byteCount = 0;
	private pending = new PendingLine();
	private readonly head: ScannedLine[] = [];
	private tail: ScannedLine[] = [];
	private readonly distinct = new Map<string, SignalLine | null>();
	private readonly strong: SpreadSample<SignalLine>;
	private readonly weak: SpreadSample<SignalLine>;
	private signalMatches = 0;
	private ended = false;

	constructor(options: ScanOptions) {
		this.options = options;
		const flags = options.signalRegex.flags.replace(/[gmy]/g, "");
		this.blockRegex = new RegExp(options.signalRegex.source, `${flags}gm`);
		this.lineRegex = new RegExp(options.signalRegex.source, `${flags}m`);
		this.keepChars = Math.min(GIANT_LINE_KEEP_BYTES, options.maxLineChars * 4 + 1024);
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
			this.scanBlock(bytes, start, lastNewline + 1);
			start = lastNewline + 1;
		}
		if (start < bytes.length) this.pending.append(bytes.subarray(start));
	}

	end(): ScanResult {
		if (!this.ended) {
			if (!this.pending.isEmpty) this.finishPendingLine();
			this.ended = true;
		}
		const signals = [...this.strong.values(), ...this.weak.values()].sort((a, b) => a.lineNumber - b.lineNumber);
		return {
			totalLines: this.lineCount,
			totalBytes: this.byteCount,
			head: this.head,
			tail: this.tail,
			signals,
			signalMatches: this.signalMatches,
		};
	}

	/** A block of whole lines, each ending in "\n": count them, keep head/tail, find signals. */
	private scanBlock(bytes: Buffer, start: number, end: number): void {
		const firstLine = this.lineCount + 1;
		const text = bytes.toString("utf8", start, end);
		let lines = 0;
		for (let at = text.indexOf("\n"); at >= 0; at = text.indexOf("\n", at + 1)) lines++;

		// Head: decode the block's first lines while the head is short.
		let cursor = 0;
		let lineNumber = firstLine;
		while (this.head.length < this.options.headLines && cursor < text.length) {
			const newline = text.indexOf("\n", cursor);
			this.acceptHeadLine(lineNumber, text.slice(cursor, newline));
			cursor = newline + 1;
			lineNumber++;
		}

		if (this.options.maxSignalLines > 0) this.findSignals(text, cursor, lineNumber);

		// Tail: the block's last lines replace the oldest ones of the previous tail.
		const want = Math.min(this.options.tailLines, lines);
		const fresh: ScannedLine[] = [];
		let lineEnd = text.length - 1;
		for (let i = 0; i < want; i++) {
			const lineStart = text.lastIndexOf("\n", lineEnd - 1) + 1;
			fresh.push(this.makeLine(firstLine + lines - 1 - i, text.slice(lineStart, lineEnd)));
			lineEnd = lineStart - 1;
		}
		fresh.reverse();
		this.pushTail(fresh);
		this.lineCount += lines;
	}

	/** One regex pass over the block; each hit is confirmed on its own line, then the scan resumes on the next line. */
	private findSignals(text: string, from: number, fromLine: number): void {
		const regex = this.blockRegex;
		let countedTo = from;
		let countedLine = fromLine;
		regex.lastIndex = from;
		for (let match = regex.exec(text); match !== null; match = regex.exec(text)) {
			for (let at = text.indexOf("\n", countedTo); at >= 0 && at < match.index; at = text.indexOf("\n", at + 1)) {
				countedLine++;
				countedTo = at + 1;
			}
			const lineStart = countedTo;
			let lineEnd = text.indexOf("\n", match.index);
			if (lineEnd < 0) lineEnd = text.length;
			const line = stripLineEnd(text.slice(lineStart, lineEnd));
			if (this.lineRegex.test(line)) this.acceptSignal(this.makeLine(countedLine, line));
			if (lineEnd >= text.length - 1) break;
			regex.lastIndex = lineEnd + 1;
			countedTo = lineEnd + 1;
			countedLine++;
		}
	}

	private makeLine(lineNumber: number, raw: string): ScannedLine {
		const text = stripLineEnd(raw);
		if (text.length <= this.keepChars) return { lineNumber, text: detach(text), totalChars: text.length, partial: false };
		return { lineNumber, text: detach(text.slice(0, this.keepChars)), totalChars: text.length, partial: true };
	}

	private acceptHeadLine(lineNumber: number, raw: string): void {
		const line = this.makeLine(lineNumber, raw);
		this.head.push(line);
		// A signal first seen in the head is already shown: its repeats are not shown again.
		if (this.options.maxSignalLines > 0 && this.lineRegex.test(line.text)) {
			this.signalMatches++;
			this.rememberDistinct(line.text, null);
		}
	}

	private rememberDistinct(text: string, signal: SignalLine | null): void {
		if (this.distinct.size < MAX_DISTINCT_SIGNALS) this.distinct.set(text.slice(0, SIGNAL_KEY_CHARS), signal);
	}

	private acceptSignal(line: ScannedLine): void {
		this.signalMatches++;
		const key = line.text.slice(0, SIGNAL_KEY_CHARS);
		if (this.distinct.has(key)) {
			const first = this.distinct.get(key);
			if (first) first.count++;
			return;
		}
		const signal: SignalLine = { ...line, count: 1, weak: false };
		signal.weak = WEAK_SIGNAL.test(signal.text) && !STRONG_SIGNAL.test(signal.text);
		this.rememberDistinct(signal.text, signal);
		(signal.weak ? this.weak : this.strong).add(signal);
	}

	private pushTail(fresh: ScannedLine[]): void {
		if (fresh.length >= this.options.tailLines) {
			this.tail = fresh.slice(fresh.length - this.options.tailLines);
			return;
		}
		const keep = this.options.tailLines - fresh.length;
		this.tail = this.tail.slice(Math.max(0, this.tail.length - keep)).concat(fresh);
	}

	private finishPendingLine(): void {
		const pending = this.pending;
		this.pending = new PendingLine();
		const lineNumber = this.lineCount + 1;
		this.lineCount++;
		const start = stripLineEnd(Buffer.concat(pending.head).toString("utf8"));
		let line: ScannedLine;
		let isSignal: boolean;
		if (pending.tailBytes === 0) {
			line = this.makeLine(lineNumber, start);
			isSignal = this.options.maxSignalLines > 0 && this.lineRegex.test(line.text);
		} else {
			// Too long to hold: keep its start — or, for a line redrawn with "\r", the end of its last
			// redraw, which is what a terminal shows. Signals are looked for at both ends.
			const end = stripLineEnd(Buffer.concat(pending.tail).toString("utf8"));
			const redraw = end.lastIndexOf("\r");
			const atStart = this.options.maxSignalLines > 0 && this.lineRegex.test(start);
			const atEnd = this.options.maxSignalLines > 0 && !atStart && this.lineRegex.test(end);
			const shown = redraw >= 0 ? end.slice(redraw + 1) : atEnd ? end.slice(-this.keepChars) : start;
			line = { lineNumber, text: detach(shown.slice(0, this.keepChars)), totalChars: pending.codePoints, partial: true };
			isSignal = atStart || atEnd;
		}
		if (this.head.length < this.options.headLines) {
			this.head.push(line);
			if (isSignal) {
				this.signalMatches++;
				this.rememberDistinct(line.text, null);
			}
		} else if (isSignal) {
			this.acceptSignal(line);
		}
		this.pushTail([line]);
	}
}

/** Scans a whole string (used when the original is only in memory). */
export function scanText(text: string, options: ScanOptions): ScanResult {
	const scanner = new LineScanner(options);
	const bytes = Buffer.from(text, "utf8");
	const step = 1024 * 1024;
	for (let at = 0; at < bytes.length; at += step) scanner.push(bytes.subarray(at, at + step));
	return scanner.end();
}
