// One streaming pass over a text (pushed as byte chunks) that collects what the bounded view needs:
// the line and byte totals, the first `headLines` and the last `tailLines` lines, the signal lines
// from anywhere (signals/finder.ts finds them, signals/collector.ts keeps them by shape, with the byte
// offset where each starts so that its block can be read later), and line shapes (signals/shape-counter.ts).
// The result does not depend on how the bytes were chunked. Memory stays bounded whatever the input:
// kept lines are clipped, a line longer than GIANT_LINE_KEEP_BYTES keeps only its two ends, and
// candidates and shapes are capped. Runs of ordinary lines are scanned as one block; only the lines
// that are kept get decoded on their own.

import type { LineFrame } from "../lines/frame.js";
import * as keywordFilterModule from "../prefilter/keyword-filter.js";
import * as recordsModule from "../lines/records.js";
import * as renderModule from "../lines/render.js";
import { PendingLine, type ScannedLine } from "../lines/render.js";
import { SignalCollector, type SignalItem } from "../signals/collector.js";
import * as finderModule from "../signals/finder.js";
import { SignalFinder } from "../signals/finder.js";
import * as policyModule from "../signals/policy.js";
import { ShapeCounter, type ShapeStats } from "../signals/shape-counter.js";
import * as stepsModule from "../signals/steps.js";
import { type Section, StepLog, type StepMarker, type StepMarks } from "../signals/steps.js";
import { GiantLineSearch } from "./giant.js";

// Imported bindings copied into module constants once: under Pi's extension loader (jiti) every
// read of an imported binding goes through an interop Proxy, and these are read on every line.
const { countNewlines } = keywordFilterModule;
const { crAsNewline } = recordsModule;
const { GIANT_LINE_KEEP_BYTES, keepCharsFor, renderGiantLine, renderLine, stripLineEnd } = renderModule;
const { SIGNAL_WINDOW_CHARS } = finderModule;
const { rankCandidates } = policyModule;
const { sectionsOf, stepMarkOf, stepStanding } = stepsModule;

export { SIGNAL_SCAN_BUDGET_MS, SIGNAL_WINDOW_CHARS, SIGNAL_WINDOW_STEP_CHARS } from "../signals/finder.js";

const NEWLINE = 0x0a;
const CARRIAGE_RETURN = 0x0d;

export interface ScanOptions {
	headLines: number;
	tailLines: number;
	maxSignalLines: number;
	maxLineChars: number;
	/** Tested on each line (ANSI escapes removed); compiled again internally with the flags the scan needs. */
	signalRegex: RegExp;
	/** The clock the signal search budget is measured with, in milliseconds. Default performance.now. */
	now?: () => number;
	/** The frame the output's lines are written in (lines/frame.ts learnLineReading, from its first bytes), if any. */
	frame?: LineFrame;
	/** The level every record of the output carries (lines/frame.ts learnLineReading), if any. */
	recordLevel?: string;
}

export interface ScanResult {
	totalLines: number;
	totalBytes: number;
	/** The first `headLines` lines (they may reach into the tail: headEnd says where the head stops). */
	head: ScannedLine[];
	/** The last `tailLines` lines, in line order; always ends with the last line when there is one. */
	tail: ScannedLine[];
	/** The last line the head shows: lines 1..headEnd (0 when none), never a line of the tail. */
	headEnd: number;
	/** The first line of the tail (totalLines + 1 when it is empty): the middle is (headEnd, tailStart). */
	tailStart: number;
	/** Signal lines in the middle (neither in the head nor in the tail), ranked (best first). */
	signals: SignalItem[];
	/** Signal lines in the head or the tail (shown there), ranked. */
	shownSignals: SignalItem[];
	/** Lines that matched the signal pattern in all (repeats, head and tail included). */
	signalMatches: number;
	/** Line shapes: rare and repeated lines (see shape-counter.ts). */
	shapes: ShapeStats;
	/**
	 * Set when looking for signal lines with a configured signalPattern took longer than
	 * SIGNAL_SCAN_BUDGET_MS and was given up (the default pattern is never stopped):
	 * `atLine` is the first line not (fully) searched, `afterMs` the time spent searching.
	 */
	signalSearchStopped?: { atLine: number; afterMs: number };
	/** "cr" when the output has no LF and at least one CR: its lines are the CR-separated records. */
	separator?: "cr";
	/** The step markers of a CI job's log (signals/steps.ts), found with the default pattern's prefilter. */
	steps: StepMarks;
	/** The steps those markers delimit (signals/steps.ts sectionsOf), in line order. */
	sections: Section[];
	/** The frame its lines were read in (ScanOptions.frame). */
	frame?: LineFrame;
}

export class LineScanner {
	private readonly options: ScanOptions;
	private readonly finder: SignalFinder;
	private readonly collector: SignalCollector;
	private readonly shapes: ShapeCounter;
	private readonly keepChars: number;
	private lineCount = 0;
	/** Bytes of the output (a jumped-over middle counted too). */
	private byteCount = 0;
	/** Bytes pushed: byte offsets of lines are offsets in what was pushed. */
	private position = 0;
	private pending = new PendingLine();
	private pendingOffset = 0;
	/** The search inside the pending line once it is giant (default pattern only): see giant.ts. */
	private giantSearch: GiantLineSearch | undefined;
	private readonly head: ScannedLine[] = [];
	/** The last lines so far, oldest first: at least `tailLines` of them (when there are), in parts. */
	private tailParts: TailPart[] = [];
	private tailPartLines = 0;
	private ended = false;
	/**
	 * The same output read with each CR as an LF (lines/records.js crAsNewline), scanned beside this one
	 * until the first LF: an output with no LF and at least one CR is CR-separated records (records()).
	 */
	private recordScanner: LineScanner | undefined;
	/** A block's last signal lines (scanBlock). */
	private readonly recentHits: RecentLines;
	private sawCarriageReturn = false;
	private readonly steps = new StepLog();
	/** Where the buffer of the block being searched starts in what was pushed (for the offsets of step markers). */
	private blockBase = 0;

	constructor(options: ScanOptions, readsRecords = true) {
		if (readsRecords) this.recordScanner = new LineScanner(options, false);
		this.options = options;
		this.finder = new SignalFinder(options.signalRegex, options.now, options.frame);
		this.collector = new SignalCollector(options.maxLineChars, options.frame, options.recordLevel);
		this.shapes = new ShapeCounter(options.frame);
		this.keepChars = keepCharsFor(options.maxLineChars);
		this.recentHits = new RecentLines(options.tailLines);
		if (!this.finder.windowed)
			this.finder.onStep = (lineNumber, lineStart, raw, marker) =>
				this.addStep(lineNumber, this.blockBase + lineStart, raw, marker);
	}

	/** A step marker's line (raw, its line ending included or not; its escapes are read for its title). */
	private addStep(lineNumber: number, offset: number, raw: string, marker: StepMarker): void {
		this.steps.add(lineNumber, offset, stripLineEnd(raw), marker);
	}

	/** A line decoded on its own (a head line, a line that arrived in pieces): is it a step marker? */
	private checkStep(lineNumber: number, offset: number, raw: string): void {
		if (this.finder.windowed) return;
		const marker = stepMarkOf(raw);
		if (marker !== undefined) this.addStep(lineNumber, offset, raw, marker);
	}

	push(chunk: Uint8Array): void {
		if (this.ended) throw new Error("LineScanner: push after end");
		if (chunk.length === 0) return;
		if (this.recordScanner !== undefined) this.pushRecords(chunk);
		const base = this.position;
		this.byteCount += chunk.length;
		this.position += chunk.length;
		const bytes = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.length);
		let start = 0;
		if (!this.pending.isEmpty) {
			const newline = bytes.indexOf(NEWLINE);
			if (newline < 0) {
				this.appendPending(bytes);
				return;
			}
			this.appendPending(bytes.subarray(0, newline));
			this.finishPendingLine();
			start = newline + 1;
		}
		const lastNewline = bytes.lastIndexOf(NEWLINE);
		if (lastNewline >= start) {
			this.scanWholeLines(bytes, start, lastNewline + 1, base);
			start = lastNewline + 1;
		}
		if (start < bytes.length) this.startPending(bytes.subarray(start), base + start);
	}

	/** Feeds the record scanner a copy of the chunk with each CR as an LF, or drops it at the first LF. */
	private pushRecords(chunk: Uint8Array): void {
		if (chunk.indexOf(NEWLINE) !== -1) {
			this.recordScanner = undefined;
			return;
		}
		if (chunk.indexOf(CARRIAGE_RETURN) === -1) {
			(this.recordScanner as LineScanner).push(chunk);
			return;
		}
		this.sawCarriageReturn = true;
		const copy = Buffer.from(chunk);
		crAsNewline(copy, 0, copy.length);
		(this.recordScanner as LineScanner).push(copy);
	}

	/**
	 * After everything was pushed: the scanner of the output's CR-separated records when it has no LF
	 * and at least one CR (its offsets are those of the output read through recordsSource), else undefined.
	 */
	records(): LineScanner | undefined {
		return this.sawCarriageReturn ? this.recordScanner : undefined;
	}

	/**
	 * After everything was pushed: shapes one more block of the output's end that the shape counter
	 * left for it (ShapeCounter.shapeNextWaiting); true while more are left. `end` shapes what is.
	 */
	shapeNextWaiting(): boolean {
		return this.shapes.shapeNextWaiting();
	}

	/** How many lines of the output have this line's shape (0 when not known): see ShapeCounter.countOf. */
	countShape(text: string): number {
		return this.shapes.countOf(text);
	}

	/** Lines completed so far: the newlines pushed. */
	get newlines(): number {
		return this.lineCount;
	}

	/** CR-separated records completed so far, while no LF was pushed (then undefined; see records()). */
	get recordsSeen(): number | undefined {
		return this.recordScanner?.newlines;
	}

	/**
	 * Jumps over lines that are not pushed (the left-out middle of a stored copy, when its view is
	 * built again): the next line pushed is `nextLine`, `bytes` are counted as output, and `signals`
	 * stand for the signal lines the first scan found in the lines jumped over (their blocks cannot
	 * be read: offset -1); `passedBytes` bytes of the source were passed over without being pushed
	 * (the marker line), so later offsets stay offsets in the source.
	 */
	skipTo(
		nextLine: number,
		bytes: number,
		signals: readonly { lineNumber: number; text: string; count: number }[],
		passedBytes = 0,
	): void {
		if (this.ended) throw new Error("LineScanner: skip after end");
		// A stored copy with a left-out middle is read line by line, as when it was first scanned.
		this.recordScanner = undefined;
		if (!this.pending.isEmpty) this.finishPendingLine();
		for (const signal of signals) {
			if (signal.lineNumber <= this.lineCount || signal.lineNumber >= nextLine) continue;
			for (let k = 0; k < Math.max(1, signal.count); k++) {
				this.collector.add(
					{ lineNumber: signal.lineNumber, text: signal.text, totalChars: signal.text.length, partial: false },
					-1,
				);
			}
		}
		this.lineCount = Math.max(this.lineCount, nextLine - 1);
		this.byteCount += bytes;
		this.position += passedBytes;
	}

	end(): ScanResult {
		if (!this.ended) {
			if (!this.pending.isEmpty) this.finishPendingLine();
			this.ended = true;
		}
		const stopped = this.finder.stopped;
		// Stopped after the last line is not stopped: every line was searched.
		const signalSearchStopped = stopped && stopped.atLine <= this.lineCount ? stopped : undefined;
		// Head end and tail start, set once here: the view shows lines 1..headEnd and tailStart..totalLines.
		const tail = this.renderTail();
		const tailStart = tail.length > 0 ? tail[0].lineNumber : this.lineCount + 1;
		const headLast = this.head.length > 0 ? this.head[this.head.length - 1].lineNumber : 0;
		const headEnd = Math.min(headLast, tailStart - 1);
		const isShown = (line: number) => line <= headEnd || line >= tailStart;
		// A search that stopped left lines unsearched: the counts of what it found are lower bounds.
		// A run of one shape that ends within a tail's length of the tail ended the output's signals.
		const collected = this.collector.items(tailStart - this.options.tailLines);
		const items = signalSearchStopped ? collected.map((item) => ({ ...item, atLeast: true })) : collected;
		const steps = this.steps.result();
		const sections = sectionsOf(steps, this.lineCount);
		// In a job whose steps failed, the lines of the others are the job's, not the failing output's.
		const standing = stepStanding(sections);
		return {
			totalLines: this.lineCount,
			totalBytes: this.byteCount,
			head: this.head,
			tail,
			headEnd,
			tailStart,
			signals: rankCandidates(items.filter((item) => !isShown(item.lineNumber))),
			// Shown there already: the other lines of a collapsed shape need no place of their own.
			shownSignals: rankCandidates(items.filter((item) => isShown(item.lineNumber) && !item.instance && !item.last)),
			signalMatches: this.collector.matches,
			shapes: this.shapes.result((line) => standing(line) > 0),
			steps,
			sections,
			...(signalSearchStopped ? { signalSearchStopped } : {}),
			...(this.options.frame !== undefined ? { frame: this.options.frame } : {}),
		};
	}

	private get searching(): boolean {
		return this.options.maxSignalLines > 0 && this.finder.stopped === undefined;
	}

	/**
	 * Whole lines (each ending in "\n"): runs of ordinary lines go to scanBlock, a long line (giant,
	 * or longer than a window for a configured pattern) goes through PendingLine, exactly as when it
	 * arrives in pieces, so chunking never changes the result.
	 */
	private scanWholeLines(bytes: Buffer, start: number, end: number, base: number): void {
		const longLineBytes = this.finder.windowed ? SIGNAL_WINDOW_CHARS : GIANT_LINE_KEEP_BYTES;
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
			if (at > blockStart) this.scanBlock(bytes, blockStart, at, base);
			this.startPending(bytes.subarray(at, lineEnd), base + at);
			this.finishPendingLine();
			at = lineEnd + 1;
			blockStart = at;
		}
		if (blockStart < end) this.scanBlock(bytes, blockStart, end, base);
	}

	/**
	 * A block of whole lines, each ending in "\n", none long: count them, keep head and tail, find
	 * signals, count shapes. Only the lines that are kept are decoded.
	 */
	private scanBlock(bytes: Buffer, start: number, end: number, base: number): void {
		const firstLine = this.lineCount + 1;
		this.shapes.addBlock(bytes, start, end, firstLine, base + start);

		// The block's last signal lines: those that end up in the tail are marked too.
		const hits = this.recentHits;
		hits.clear();
		// Head: decode the block's first lines while the head is short.
		let cursor = start;
		let lineNumber = firstLine;
		while (this.head.length < this.options.headLines && cursor < end) {
			const newline = bytes.indexOf(NEWLINE, cursor);
			const raw = bytes.toString("utf8", cursor, newline);
			const line = renderLine(lineNumber, raw, this.keepChars);
			const isSignal = this.searching && this.finder.testLine(stripLineEnd(raw), lineNumber);
			this.checkStep(lineNumber, base + cursor, raw);
			this.head.push(isSignal ? markSignal(line) : line);
			if (isSignal) {
				hits.push(lineNumber);
				this.collector.add(line, base + cursor);
			}
			cursor = newline + 1;
			lineNumber++;
		}

		let lines = lineNumber - firstLine;
		if (cursor < end) {
			if (this.searching) {
				this.blockBase = base;
				lines += this.finder.findInBlock(bytes, start, cursor - start, end, lineNumber, (hitLine, lineStart, raw) => {
					hits.push(hitLine);
					this.collector.addRawBytes(hitLine, raw, base + lineStart, bytes, lineStart);
				});
			} else {
				// Not searched (the search is off or stopped): counted by the prefilter's SIMD pass alone.
				lines += countNewlines(bytes, cursor, end);
			}
		}

		// Tail: the block's last lines replace the oldest ones of the previous tail. They are decoded as
		// one string and rendered only if they are still in the tail at the end (most blocks' are not).
		const want = Math.min(this.options.tailLines, lines);
		if (want > 0) {
			// Walks back over the last `want` lines, from the newline that ends each to its start.
			let runStart = end;
			for (let i = 0; i < want; i++) {
				const lineEnd = runStart - 1;
				runStart = lineEnd > start ? Math.max(start, bytes.lastIndexOf(NEWLINE, lineEnd - 1) + 1) : start;
			}
			const runFirstLine = firstLine + lines - want;
			const signals: number[] = [];
			hits.collectFrom(runFirstLine, signals);
			const run: TailRun = {
				firstLine: runFirstLine,
				lines: want,
				text: bytes.toString("utf8", runStart, end - 1),
				signals,
			};
			this.pushTail(
				end - runStart <= MAX_TAIL_RUN_BYTES ? { run, lines: want } : { rendered: this.renderRun(run), lines: want },
			);
		}
		this.lineCount += lines;
	}

	/** Adds lines at the end of the tail; drops the oldest parts that are no longer needed for `tailLines` lines. */
	private pushTail(part: TailPart): void {
		this.tailParts.push(part);
		this.tailPartLines += part.lines;
		let drop = 0;
		while (
			drop < this.tailParts.length - 1 &&
			this.tailPartLines - this.tailParts[drop].lines >= this.options.tailLines
		)
			this.tailPartLines -= this.tailParts[drop++].lines;
		if (drop > 0) this.tailParts = this.tailParts.slice(drop);
	}

	/** The run's lines as the view gets them (signal lines marked). */
	private renderRun(run: TailRun): ScannedLine[] {
		return run.text.split("\n").map((raw, i) => {
			const line = renderLine(run.firstLine + i, raw, this.keepChars);
			return run.signals.includes(line.lineNumber) ? markSignal(line) : line;
		});
	}

	/** The last `tailLines` lines, rendered. */
	private renderTail(): ScannedLine[] {
		const lines = this.tailParts.flatMap((part) => ("run" in part ? this.renderRun(part.run) : part.rendered));
		return lines.slice(Math.max(0, lines.length - this.options.tailLines));
	}

	private startPending(bytes: Uint8Array, offset: number): void {
		if (this.pending.isEmpty) this.pendingOffset = offset;
		this.appendPending(bytes);
	}

	/**
	 * Adds bytes to the pending line. Once it is giant (only its ends are kept), the default pattern
	 * searches all of it as it arrives (giant.ts), from its first byte on.
	 */
	private appendPending(bytes: Uint8Array): void {
		const before = this.pending.bytes;
		this.pending.append(bytes);
		if (!this.pending.isGiant || this.finder.windowed || !this.searching) return;
		if (this.giantSearch !== undefined) {
			this.giantSearch.feed(bytes);
			return;
		}
		// Its first GIANT_LINE_KEEP_BYTES bytes are held: the search starts with them.
		this.giantSearch = new GiantLineSearch(this.finder.windowPattern, this.finder.keywordFinder);
		this.giantSearch.feed(this.pending.startBytes());
		this.giantSearch.feed(bytes.subarray(GIANT_LINE_KEEP_BYTES - before));
	}

	/** A line that arrived in pieces, or a long one: head, signal, tail. */
	private finishPendingLine(): void {
		const pending = this.pending;
		const offset = this.pendingOffset;
		const window = this.giantSearch?.end();
		this.pending = new PendingLine();
		this.giantSearch = undefined;
		const lineNumber = this.lineCount + 1;
		this.shapes.addLine(pending.startBytes(), lineNumber, offset);
		let line: ScannedLine;
		let isSignal: boolean;
		if (!pending.isGiant) {
			const raw = pending.whole();
			line = renderLine(lineNumber, raw, this.keepChars);
			isSignal = this.searching && this.finder.testLine(stripLineEnd(raw), lineNumber);
			this.checkStep(lineNumber, offset, raw);
		} else {
			[line, isSignal] = renderGiantLine(
				lineNumber,
				pending,
				this.keepChars,
				(text, isEnd) => this.searching && this.finder.testLine(text, lineNumber, isEnd),
				window,
			);
		}
		const shown = isSignal ? markSignal(line) : line;
		if (this.head.length < this.options.headLines) this.head.push(shown);
		if (isSignal) this.collector.add(line, offset);
		this.pushTail({ rendered: [shown], lines: 1 });
		this.lineCount++;
	}
}

/**
 * The last `capacity` line numbers pushed, in a ring: a block's signal lines that may end up in the
 * tail (at most tailLines of them), without a list of every signal line of a flood.
 */
class RecentLines {
	private readonly lines: Float64Array;
	private pushed = 0;

	constructor(capacity: number) {
		this.lines = new Float64Array(Math.max(1, capacity));
	}

	clear(): void {
		this.pushed = 0;
	}

	push(line: number): void {
		this.lines[this.pushed++ % this.lines.length] = line;
	}

	/** The remembered lines at or after `first`, newest first, into `out`. */
	collectFrom(first: number, out: number[]): void {
		const capacity = this.lines.length;
		for (let at = this.pushed - 1; at >= 0 && at >= this.pushed - capacity; at--) {
			const line = this.lines[at % capacity];
			if (line < first) return;
			out.push(line);
		}
	}
}

/** Bytes of a block's last lines kept as one string until the end of the scan; longer runs are rendered at once. */
const MAX_TAIL_RUN_BYTES = 256 * 1024;

/** A block's last lines, undecoded into lines: `text` is their bytes decoded, without the last "\n". */
interface TailRun {
	firstLine: number;
	lines: number;
	text: string;
	/** The line numbers among them that the signal pattern matched. */
	signals: number[];
}

/** Lines at the end of what was scanned so far: rendered, or a run rendered only if it stays in the tail. */
type TailPart = { rendered: ScannedLine[]; lines: number } | { run: TailRun; lines: number };

/** A head or tail line the signal pattern matched, as the view gets it (the collector keeps its own). */
function markSignal(line: ScannedLine): ScannedLine {
	return { ...line, signal: true };
}

/** Scans a whole string (used when the original is only in memory). */
export function scanText(text: string, options: ScanOptions): ScanResult {
	return scanBytes(Buffer.from(text, "utf8"), options);
}

/** Scans bytes already in memory, a chunk of a stored copy's size at a time. */
export function scanBytes(bytes: Buffer, options: ScanOptions): ScanResult {
	const scanner = new LineScanner(options);
	const step = 1024 * 1024;
	for (let at = 0; at < bytes.length; at += step) scanner.push(bytes.subarray(at, at + step));
	return scanner.end();
}
