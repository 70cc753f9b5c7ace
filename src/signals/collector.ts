// The signal candidates of one scan, kept in bounded memory: lines that matched the signal pattern,
// grouped by shape key (src/signals/shape.ts shapeOf). A shape keeps its first few distinct lines and its
// latest one, with exact repeat counts, and counts every line of its shape; at most MAX_SHAPES
// shapes are kept — past that, the ones that rank lowest are dropped, evenly over the output — so a
// million distinct error lines cost no more memory than a thousand. Order of arrival is line order.
// A line that is not kept costs no copy: it is rendered from the scan's text and dropped.

import * as renderModule from "../lines/render.js";
import { type ScannedLine } from "../lines/render.js";
import * as policyModule from "./policy.js";
import { type Severity } from "./policy.js";
import * as shapeModule from "./shape.js";
import * as textModule from "../lines/text.js";
import * as frameModule from "../lines/frame.js";
import { type LineFrame } from "../lines/frame.js";

// Imported bindings copied into module constants once: under Pi's extension loader (jiti) every
// read of an imported binding goes through an interop Proxy, and these are read on every line.
const { detach, keepCharsFor, renderTerminalLine, renderLine, stripLineEnd } = renderModule;
const { classifySeverity, rankCandidates, SEVERITY_ERROR } = policyModule;
const { COLLAPSE_SHAPE_LINES, shapeOf } = shapeModule;
const { keepEnd, keepStart } = textModule;
const { unframed } = frameModule;

/** Shapes remembered at once (twice this many before a prune). */
export const MAX_SHAPES = 1024;
/** Distinct lines kept per shape, from its first; its latest line is kept too. */
export const LINES_PER_SHAPE = 5;
/**
 * Lines of a collapsed shape kept as its instances, spread evenly over the shape's lines (every
 * stride-th line, the stride doubling as they fill): with room, the view shows distinct instances
 * rather than one line standing for them all.
 */
export const SPREAD_LINES_PER_SHAPE = 40;
/**
 * A line printed at most this many times is a run's line printed again by a re-run (a retry's
 * attempts: retry wrappers run a command two or three times): its last copy may be shown too. A
 * line printed more often is a flood, which its count states.
 */
export const MAX_RERUN_PRINTS = 3;
/** Spread instances kept over all shapes, at most (a flood of distinct shapes stops adding them). */
export const MAX_SPREAD_LINES = 2048;
/** Lines remembered by the shape memo (see findShape) before it starts again, and the longest it remembers. */
export const MAX_MEMO_LINES = 1024;
export const MAX_MEMO_LINE_CHARS = 256;
/** Longest line whose bytes addRawBytes remembers for the next line to be compared with. */
const MAX_LAST_LINE_BYTES = 1024;
const NEWLINE = 0x0a;

/** A signal line the view may show. */
export interface SignalItem extends ScannedLine {
	/** Byte offset of the line's start in the scanned stream (-1 when not known): where its block is read. */
	offset: number;
	/** Lines with exactly this text (shown once, at its first line). */
	count: number;
	severity: Severity;
	/** Signal lines of this line's shape in the whole output. */
	shapeCount: number;
	/** Set when this line stands for the other lines of its shape too: how many lines, and the last one. */
	similar?: { count: number; lastLine: number };
	/**
	 * Set when `count` and `similar` are only lower bounds: lines of its shape (or text) may have been
	 * dropped before (a pruned shape, a latest line replaced) or not searched (the search stopped).
	 */
	atLeast?: boolean;
	/**
	 * Set on another line of a shape that one line stands for (`similar`): shown, after every other
	 * candidate, only when there is room. Its `count` is 1: it states no count.
	 */
	instance?: true;
	/** Set on the last line of a shape that one line stands for, shown beside that line: it states no count. */
	last?: true;
	/**
	 * Set on the last line with exactly the text of an earlier one: that line's number. Shown like
	 * another instance (a re-run's copy of a failure, where the output ends), it states no count.
	 */
	repeatOf?: number;
}

interface Shape {
	key: string;
	severity: Severity;
	count: number;
	firstLine: number;
	lastLine: number;
	/** The first distinct lines. */
	items: SignalItem[];
	/**
	 * Where the last line with the text of `items[k]` is, when it was printed again: its number at
	 * 2k and its start at 2k + 1 (made on the first repeat).
	 */
	copies: number[] | undefined;
	/** The latest line not among them, made a SignalItem only when asked for (items()). */
	latest: LatestLine | undefined;
	/** Made after a prune: lines of its shape may have been counted in a shape that was dropped. */
	afterPrune: boolean;
	/** A latest line was replaced: a later one with its text may have had earlier lines not counted with it. */
	latestReplaced: boolean;
	/** Lines sampled every `stride`-th line of the shape (SPREAD_LINES_PER_SHAPE at most), and the next count sampled. */
	spread: SignalItem[];
	/**
	 * Where the shape's last line (lastLine) starts, and the line itself: as it was added, or its raw
	 * text when that is at most maxLineChars long (a string of its own, rendered only if shown), or as
	 * an item when it is longer. The view may show it beside the first: where a run of failures ended.
	 */
	lastOffset: number;
	lastSource: ScannedLine | string | undefined;
	stride: number;
	nextSample: number;
}

/** A shape's latest line, overwritten by each later one: what its SignalItem is made from. */
interface LatestLine {
	lineNumber: number;
	/** As the view shows it (clipped to maxLineChars, see clipForView): what a later line is compared with. */
	shownText: string;
	offset: number;
	count: number;
	/** The line as a SignalItem, or its raw text (at most maxLineChars, a string of its own) to render with renderLine. */
	source: SignalItem | string;
}

/** A line the shape memo has seen, and its shape. */
interface MemoLine {
	text: string;
	shape: string;
	/** renderTerminalLine shows the text as it is (it has no control characters). */
	shownAsIs: boolean;
}

export class SignalCollector {
	private shapes = new Map<string, Shape>();
	/** Lines added in all (repeats included). */
	matches = 0;
	/** Shapes dropped so far: counts of shapes made after that may miss earlier lines. */
	private pruned = false;
	/** Spread instances held over all shapes (MAX_SPREAD_LINES at most). */
	private spreadLines = 0;
	/** What the scan keeps of a line (src/lines/render.ts keepCharsFor): the text a line is rendered, shaped and compared by. */
	private readonly keepChars: number;
	/** Recent lines by digitBlindHash: a line that differs from one of them only in its digits has its shape. */
	private memo = new Map<number, MemoLine>();
	/** The memo's line that the last line matched or was added as: tried first. */
	private lastMemo: MemoLine | undefined;
	/** The shape the last line was added to (cleared by a prune). */
	private lastShape: Shape | undefined;
	/**
	 * The bytes of a line addRawBytes added (without its "\n"), and the memo line it is like (shown as
	 * it is, at most keepChars): a later line whose bytes differ from them only in digits is like it too.
	 */
	private readonly lastBytes = Buffer.allocUnsafe(MAX_LAST_LINE_BYTES);
	private lastBytesLength = 0;
	private lastBytesMemo: MemoLine | undefined;

	/**
	 * `frame`: the frame the output's lines are written in (lines/frame.ts). A level in it (Ruby's
	 * Logger's `INFO -- :` before each line a wrapped program printed) is every line's, so it says
	 * nothing of one: a line's severity is read past it.
	 */
	constructor(
		private readonly maxLineChars: number,
		private readonly frame?: LineFrame,
		/** The level every record of the output carries (ScanOptions.recordLevel): a record at it is read as its line. */
		private readonly recordLevel?: string,
	) {
		this.keepChars = keepCharsFor(maxLineChars);
	}

	/**
	 * What is held now: shapes (at most 2 × MAX_SHAPES), their lines (at most LINES_PER_SHAPE + 1
	 * each, and their spread: at most SPREAD_LINES_PER_SHAPE each and MAX_SPREAD_LINES in all, all of
	 * at most maxLineChars characters), and the shape memo's lines (at most MAX_MEMO_LINES).
	 */
	get retained(): { shapes: number; lines: number; spreadLines: number; longestLineChars: number; memoLines: number } {
		let lines = 0;
		let longestLineChars = 0;
		for (const shape of this.shapes.values()) {
			for (const item of [...shape.items, ...shape.spread])
				longestLineChars = Math.max(longestLineChars, item.text.length);
			lines += shape.items.length + shape.spread.length;
			if (shape.latest === undefined) continue;
			const source = shape.latest.source;
			longestLineChars = Math.max(longestLineChars, typeof source === "string" ? source.length : source.text.length);
			lines++;
		}
		return {
			shapes: this.shapes.size,
			lines,
			spreadLines: this.spreadLines,
			longestLineChars,
			memoLines: this.memo.size,
		};
	}

	/** A line that matched the signal pattern, in line order. */
	add(line: ScannedLine, offset: number): void {
		this.addLine(line.lineNumber, line.text, this.findShape(line.text), offset, line);
	}

	/**
	 * A line that matched, as the scan decoded it (`raw`, its line ending included or not). The
	 * same as add(renderLine(lineNumber, raw, keepChars)), but the line is copied out of the scan's
	 * text only when it is kept.
	 */
	addRaw(lineNumber: number, raw: string, offset: number): void {
		this.addRawLine(lineNumber, raw, offset);
	}

	/** addRaw; returns the memo line this one is like and shown as it is (see addLike), if any. */
	private addRawLine(lineNumber: number, raw: string, offset: number): MemoLine | undefined {
		const line = stripLineEnd(raw);
		const last = this.lastMemo;
		// Like the last line but for its digits, and that one had no control characters: neither has
		// this one, so it is shown as it is (one pass over it, where rendering and shaping take four).
		if (last?.shownAsIs && line.length <= this.keepChars && isSameButDigits(last.text, line)) {
			this.addLike(last, lineNumber, line, offset, raw);
			return last;
		}
		const rendered = renderTerminalLine(line);
		// renderLine's text: the start of a line longer than keepChars.
		const text = rendered.length <= this.keepChars ? rendered : keepStart(rendered, this.keepChars);
		const memo = this.findMemo(text);
		this.addLine(lineNumber, text, memo?.shape ?? shapeOf(text), offset, raw);
		// Shown as it is: the line rendered as itself, unclipped, like a memo line that does too.
		return memo?.shownAsIs && text === line ? memo : undefined;
	}

	/**
	 * A line (`line`, shown as it is) that differs from `memo`'s only in its digits: it has that shape.
	 * A shape already shown as one line standing for the others only counts it (countOnly).
	 */
	private addLike(memo: MemoLine, lineNumber: number, line: string, offset: number, raw: string): void {
		const shape = this.lastShape;
		if (shape !== undefined && shape.count >= COLLAPSE_SHAPE_LINES && shape.key === memo.shape) {
			this.countOnly(shape, lineNumber, line, offset);
		} else {
			this.addLine(lineNumber, line, memo.shape, offset, raw);
		}
	}

	/**
	 * addRaw for a line of a block of whole lines: `raw` decoded from `bytes` at `lineStart`, where a
	 * "\n" ends it. A line whose bytes differ from the last such line's only in digits has its shape
	 * and is shown as it is: it is compared byte by byte (about half the cost of comparing the text),
	 * and a flood of one shape is mostly that comparison and a count.
	 */
	addRawBytes(lineNumber: number, raw: string, offset: number, bytes: Uint8Array, lineStart: number): void {
		const memo = this.lastBytesMemo;
		const length = this.lastBytesLength;
		if (
			memo !== undefined &&
			bytes[lineStart + length] === NEWLINE &&
			isSameButDigitBytes(this.lastBytes, bytes, lineStart, length)
		) {
			this.addLike(memo, lineNumber, stripLineEnd(raw), offset, raw);
			return;
		}
		const like = this.addRawLine(lineNumber, raw, offset);
		const end = like === undefined ? -1 : bytes.indexOf(NEWLINE, lineStart);
		if (end >= 0 && end - lineStart <= MAX_LAST_LINE_BYTES) {
			this.lastBytes.set(bytes.subarray(lineStart, end));
			this.lastBytesLength = end - lineStart;
			this.lastBytesMemo = like;
		} else {
			this.lastBytesMemo = undefined;
		}
	}

	/**
	 * `text` is the line as renderLine renders it (possibly not yet copied out), `key` its shapeOf;
	 * `source` the line, or its raw text to render when kept.
	 */
	private addLine(lineNumber: number, text: string, key: string, offset: number, source: ScannedLine | string): void {
		this.matches++;
		let shape = this.shapes.get(key);
		if (shape === undefined) {
			if (this.shapes.size >= 2 * MAX_SHAPES) this.prune();
			// Copied: the key may be a slice of a longer line.
			shape = {
				key: detach(key),
				severity: classifySeverity(unframed(this.frame, text), this.recordLevel),
				count: 0,
				firstLine: lineNumber,
				lastLine: lineNumber,
				items: [],
				copies: undefined,
				latest: undefined,
				afterPrune: this.pruned,
				latestReplaced: false,
				spread: [],
				lastOffset: offset,
				lastSource: undefined,
				stride: 1,
				// The first distinct lines are kept anyway (items): the spread starts after them.
				nextSample: LINES_PER_SHAPE + 1,
			};
			this.shapes.set(shape.key, shape);
		}
		this.lastShape = shape;
		shape.count++;
		shape.lastLine = lineNumber;
		shape.lastOffset = offset;
		if (shape.count === shape.nextSample) this.sample(shape, lineNumber, offset, source);
		const same = findSameText(shape, text);
		if (same >= 0) {
			shape.items[same].count++;
			keepCopy(shape, same, lineNumber, offset);
			shape.lastSource = this.keepableSource(lineNumber, offset, source, shape.severity);
			return;
		}
		if (shape.items.length < LINES_PER_SHAPE) {
			const item = this.toItem(lineNumber, offset, 1, source, shape.severity);
			shape.items.push(item);
			shape.lastSource = item;
			return;
		}
		const latest = shape.latest;
		if (latest?.shownText === text) {
			latest.count++;
			shape.lastSource = this.keepableSource(lineNumber, offset, source, shape.severity);
			return;
		}
		// A short raw line (most lines of a flood) is kept as it is, to be rendered in items(); any other
		// line is made a SignalItem now, so that no latest line holds more than the view shows.
		const kept =
			typeof source === "string" && source.length <= this.maxLineChars
				? source
				: this.toItem(lineNumber, offset, 1, source, shape.severity);
		shape.lastSource = kept;
		const shownText = typeof kept === "string" ? text : kept.text;
		if (latest === undefined) {
			shape.latest = { lineNumber, shownText, offset, count: 1, source: kept };
		} else {
			shape.latestReplaced = true;
			latest.lineNumber = lineNumber;
			latest.shownText = shownText;
			latest.offset = offset;
			latest.count = 1;
			latest.source = kept;
		}
	}

	/**
	 * A line of a shape that is already shown as one line standing for the others (COLLAPSE_SHAPE_LINES
	 * or more, see items()) only counts: the shape's count and last line, and the first line's count
	 * when it has the first line's text. Those are all that line shows, so they stay exact; its other
	 * kept lines are not compared with it (a flood of one shape costs a count per line, not a search).
	 */
	private countOnly(shape: Shape, lineNumber: number, text: string, offset: number): void {
		this.matches++;
		shape.count++;
		shape.lastLine = lineNumber;
		const first = shape.items[0];
		if (first !== undefined && first.text === text) {
			first.count++;
			keepCopy(shape, 0, lineNumber, offset);
		}
		shape.lastOffset = offset;
		// Shown as it is and at most keepChars long (addLike): its own text is the line.
		shape.lastSource = text;
		if (shape.count === shape.nextSample) this.sample(shape, lineNumber, offset, text);
	}

	/**
	 * Keeps the shape's line counted now as one of its spread instances; when they are full, every
	 * other one is dropped and the stride doubles (the kept ones stay evenly spread, the first kept).
	 */
	private sample(shape: Shape, lineNumber: number, offset: number, source: ScannedLine | string): void {
		const spread = shape.spread;
		if (spread.length >= SPREAD_LINES_PER_SHAPE) {
			let kept = 0;
			for (let i = 0; i < spread.length; i += 2) spread[kept++] = spread[i];
			this.spreadLines -= spread.length - kept;
			spread.length = kept;
			shape.stride *= 2;
		}
		shape.nextSample = shape.count + shape.stride;
		if (this.spreadLines >= MAX_SPREAD_LINES) return;
		this.spreadLines++;
		spread.push(this.toItem(lineNumber, offset, 1, source, shape.severity));
	}

	/**
	 * The lines the view may show (rank them with src/signals/policy.ts rankCandidates). A common shape
	 * (COLLAPSE_SHAPE_LINES lines or more) gives one line that stands for the others, and its last line
	 * where that says how a run of failures ended: for a failure's shape, and for any shape whose lines
	 * end at or after `endsFrom` (a burst of retries that ran until the output gave up).
	 */
	items(endsFrom = Number.POSITIVE_INFINITY): SignalItem[] {
		const out: SignalItem[] = [];
		for (const shape of this.shapes.values()) {
			const latest = shape.latest;
			const latestItem = latest
				? this.toItem(latest.lineNumber, latest.offset, latest.count, latest.source, shape.severity)
				: undefined;
			if (latestItem && shape.latestReplaced) latestItem.atLeast = true;
			const candidates = latestItem ? [...shape.items, latestItem] : [...shape.items];
			for (const item of candidates) {
				item.shapeCount = shape.count;
				if (shape.afterPrune) item.atLeast = true;
			}
			if (candidates.length === 0) continue;
			if (shape.count >= COLLAPSE_SHAPE_LINES) {
				const first = candidates[0];
				const others = shape.count - first.count;
				out.push(others > 0 ? { ...first, similar: { count: others, lastLine: shape.lastLine } } : first);
				const texts = new Set([first.text]);
				// Its last line (the final error, the last retry), ranked with the first: a line of its own
				// when its text differs from the first's.
				const last =
					shape.severity === SEVERITY_ERROR || shape.lastLine >= endsFrom ? this.lastItemOf(shape) : undefined;
				if (last !== undefined && !texts.has(last.text)) {
					texts.add(last.text);
					out.push(last);
				}
				// The other distinct lines it stands for, spread over its lines (the kept first ones after
				// them; not the latest, which a line only counted does not replace).
				for (const item of [...shape.spread, ...shape.items.slice(1)]) {
					if (texts.has(item.text)) continue;
					texts.add(item.text);
					out.push({ ...item, count: 1, shapeCount: shape.count, instance: true });
				}
			} else {
				out.push(...candidates);
			}
			// The last copy of a line printed again (a re-run's, a retry's: where the output ends), shown
			// like another instance. Exact for the first line of a shape shown as one (countOnly), and
			// for each first distinct line of another.
			const { copies } = shape;
			const copied = shape.count >= COLLAPSE_SHAPE_LINES ? 1 : shape.items.length;
			for (let k = 0; copies !== undefined && k < copied; k++) {
				const item = shape.items[k];
				const lineNumber = copies[2 * k];
				if (lineNumber === undefined || item.count > MAX_RERUN_PRINTS) continue;
				out.push({
					...item,
					lineNumber,
					offset: copies[2 * k + 1],
					count: 1,
					instance: true,
					repeatOf: item.lineNumber,
				});
			}
		}
		return out;
	}

	/** The shape's last line as a SignalItem that states no count. */
	private lastItemOf(shape: Shape): SignalItem | undefined {
		const source = shape.lastSource;
		if (source === undefined) return undefined;
		const {
			atLeast: _,
			similar: __,
			...line
		} = this.toItem(shape.lastLine, shape.lastOffset, 1, source, shape.severity);
		return { ...line, shapeCount: shape.count, last: true };
	}

	/**
	 * A line to keep as a shape's last one: its raw text when short (kept as it is, rendered only if
	 * shown), else as an item now, so that no shape holds more of a line than the view shows.
	 */
	private keepableSource(
		lineNumber: number,
		offset: number,
		source: ScannedLine | string,
		severity: Severity,
	): ScannedLine | string {
		return typeof source === "string" && source.length > this.maxLineChars
			? this.toItem(lineNumber, offset, 1, source, severity)
			: source;
	}

	/**
	 * shapeOf(text), remembered for lines that differ only in their digits: shapeOf gives such lines
	 * one shape (it tells digits apart only in a `0x` prefix, so a line with a digit before an `x` is
	 * always shaped afresh). A flood of numbered lines is shaped once per line length, not per line.
	 */
	private findShape(text: string): string {
		return this.findMemo(text)?.shape ?? shapeOf(text);
	}

	/** The memo line `text` differs from only in its digits (made when new); undefined for a text not remembered. */
	private findMemo(text: string): MemoLine | undefined {
		const last = this.lastMemo;
		if (last !== undefined && isSameButDigits(last.text, text)) return last;
		const hash = text.length <= MAX_MEMO_LINE_CHARS ? digitBlindHash(text) : undefined;
		if (hash === undefined) return undefined;
		let seen = this.memo.get(hash);
		if (seen === undefined || !isSameButDigits(seen.text, text)) {
			if (this.memo.size >= MAX_MEMO_LINES) this.memo.clear();
			// Kept as they are: a line's own text (a string of its own, at most MAX_MEMO_LINE_CHARS) and its shape.
			seen = { text, shape: shapeOf(text), shownAsIs: renderTerminalLine(text) === text };
			this.memo.set(hash, seen);
		}
		this.lastMemo = seen;
		return seen;
	}

	private toItem(
		lineNumber: number,
		offset: number,
		count: number,
		source: ScannedLine | string,
		severity: Severity,
	): SignalItem {
		const line = typeof source === "string" ? renderLine(lineNumber, source, this.keepChars) : source;
		const text = this.clipForView(line.text, line.keptEnd === true);
		const partial = line.partial || text.length < line.text.length;
		// The line's fields, then the item's: written out where it can be (a spread costs microseconds).
		if (line.keptEnd || line.signal || line.window)
			return { ...line, text, partial, offset, count, severity, shapeCount: 1 };
		return {
			lineNumber: line.lineNumber,
			text,
			totalChars: line.totalChars,
			partial,
			offset,
			count,
			severity,
			shapeCount: 1,
		};
	}

	/** The view clips a line at maxLineChars: more need not be kept (totalChars says how long it was). */
	private clipForView(text: string, keptEnd: boolean): string {
		const max = this.maxLineChars;
		return text.length <= max ? text : keptEnd ? keepEnd(text, max) : keepStart(text, max);
	}

	/** Keeps the MAX_SHAPES shapes that rank highest (errors, rare, spread over the output). */
	private prune(): void {
		this.pruned = true;
		this.lastShape = undefined;
		const ranked = rankCandidates(
			[...this.shapes.values()].map((shape) => ({
				shape,
				lineNumber: shape.firstLine,
				severity: shape.severity,
				shapeCount: shape.count,
			})),
		);
		this.shapes = new Map(ranked.slice(0, MAX_SHAPES).map(({ shape }) => [shape.key, shape]));
		this.spreadLines = 0;
		for (const shape of this.shapes.values()) this.spreadLines += shape.spread.length;
	}
}

/** Where the last line with the text of the shape's `index`-th kept line is (Shape.copies). */
function keepCopy(shape: Shape, index: number, lineNumber: number, offset: number): void {
	const copies = (shape.copies ??= []);
	copies[2 * index] = lineNumber;
	copies[2 * index + 1] = offset;
}

/** The index of the kept line of `shape` with exactly this text, -1 when none. */
function findSameText(shape: Shape, text: string): number {
	const { items } = shape;
	for (let k = 0; k < items.length; k++) if (items[k].text === text) return k;
	return -1;
}

const DIGIT_0 = 0x30;
const DIGIT_9 = 0x39;
const LOWER_X = 0x78;
const UPPER_X = 0x58;

/** A hash of `text` that every digit hashes alike in; undefined when a digit stands before an `x` (a `0x` prefix to shapeOf). */
function digitBlindHash(text: string): number | undefined {
	let hash = text.length;
	for (let i = 0; i < text.length; i++) {
		let code = text.charCodeAt(i);
		if (code >= DIGIT_0 && code <= DIGIT_9) {
			const next = text.charCodeAt(i + 1);
			if (next === LOWER_X || next === UPPER_X) return undefined;
			code = DIGIT_0;
		}
		hash = (Math.imul(hash, 31) + code) & 0x3fffffff; // a small integer: a cheap Map key
	}
	return hash;
}

/** isSameButDigits for bytes: `a[0, length)` and `b[from, from + length)`. */
function isSameButDigitBytes(a: Uint8Array, b: Uint8Array, from: number, length: number): boolean {
	for (let i = 0; i < length; i++) {
		const x = a[i];
		const y = b[from + i];
		if (x !== y && !(x >= DIGIT_0 && x <= DIGIT_9 && y >= DIGIT_0 && y <= DIGIT_9)) return false;
	}
	return true;
}

/** Do `a` and `b` differ only in which digits they have where both have one? */
function isSameButDigits(a: string, b: string): boolean {
	if (a.length !== b.length) return false;
	for (let i = 0; i < a.length; i++) {
		const x = a.charCodeAt(i);
		const y = b.charCodeAt(i);
		if (x !== y && !(x >= DIGIT_0 && x <= DIGIT_9 && y >= DIGIT_0 && y <= DIGIT_9)) return false;
	}
	return true;
}
