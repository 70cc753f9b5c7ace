// The shape counter: shape hashes (src/signals/shape.ts hashShape) counted over the whole output,
// for what no keyword finds: a line repeated dozens of times with only its numbers changing (a retry
// loop, a lock wait: why a run hung), and a line whose shape is rare in an output of few shapes (the
// one odd line among thousands of uniform ones). Hashed by the WebAssembly module where it runs, no
// string is made. Cheap by sampling: every line of the first FULL_BYTES bytes and of the last
// END_BYTES (a failing run ends with what went wrong), and the first SAMPLED_SHARE of each block the
// scan passes between them (which lines those are depends on how the output was read: the bound
// stage reads fixed 1 MiB chunks). The blocks past the first FULL_BYTES wait, copied, until END_BYTES
// of them follow (then only their share is hashed) or the output ends (then all of them are), so
// lines are counted in order. Memory: at most MAX_HASHED_SHAPES shapes and END_BYTES plus a block
// of waiting bytes; past MAX_HASHED_SHAPES the output is not "of few shapes" and only the shapes
// already known go on being counted.

import * as frameModule from "../lines/frame.js";
import type { LineFrame } from "../lines/frame.js";
import * as stampModule from "../lines/stamp.js";
import * as keywordFilterModule from "../prefilter/keyword-filter.js";
import * as shapeModule from "./shape.js";

// Imported bindings copied into module constants once: under Pi's extension loader (jiti) every
// read of an imported binding goes through an interop Proxy, and these are read on every line.
const { getShapeHasher } = keywordFilterModule;
const { FRAME_SAMPLE_BYTES, FRAME_SAMPLE_LINES } = frameModule;
const { LOGFMT_MESSAGES, MAX_WRAPPING_RECORD_CHARS } = stampModule;
const {
	COMMON_SHAPE_LINES,
	COMMON_SHAPE_SHARE,
	hashShape,
	isInOnePlace,
	MIN_SHAPED_LINES,
	RARE_SHAPE_LINES,
	REPEAT_MAX_SHARE,
	REPEAT_MAX_SPREAD,
	REPEAT_MIN_LINES,
	SHAPE_HASH_BLANK,
	shapeStart,
	shapeWindowOf,
} = shapeModule;

/**
 * Bytes of output whose every line is shaped (every real output of the recall sets, ≤ 1.7 MB, is
 * shaped whole), then the share of each block shaped. Measured: shaping in JavaScript cost about
 * 9 ns per byte; at 8 MiB and 1/8 it doubled the scan of a 32 MiB log (80 → 200 ms), at 2 MiB and
 * 1/32 it added about 30 ms, with the same recall on every set (the WebAssembly hash: about 4 ns).
 */
const FULL_BYTES = 2 * 1024 * 1024;
const SAMPLED_SHARE = 1 / 32;
/**
 * Bytes at the end of an output whose every line is shaped too: a long CI log's failing step, after
 * megabytes of passing ones. Measured with 70 000 passing lines (3.3 MB) before each recall output:
 * sampled there, its rare lines were lost (tuning sets 472 of 498 decisive lines; shaped whole, 498).
 */
const END_BYTES = 2 * 1024 * 1024;

/** A block past the first FULL_BYTES, waiting to be shaped: a copy of its whole lines (the first `length` bytes of `bytes`). */
interface WaitingBlock {
	bytes: Uint8Array;
	length: number;
	firstLine: number;
	/** Offset of its first byte in the scanned stream. */
	offset: number;
}
/** Shapes remembered. */
const MAX_HASHED_SHAPES = 4096;
/**
 * Shaped lines whose number and hash are recorded, at most (8 bytes each: 1 MiB), and the first
 * allocation: past them, where the output settles into its routine is not looked for.
 */
const MAX_LINE_RECORDS = 131_072;
const INITIAL_LINE_RECORDS = 1024;

const NEWLINE = 0x0a;

/** An output's first block or line, copied, while the shape window waits for more of its first lines. */
interface EarlyPart {
	bytes: Uint8Array;
	firstLine: number;
	offset: number;
	/** A line of its own (addLine: its start, without its newline), not a block of whole lines. */
	line: boolean;
}

const LINE_END = new Uint8Array([NEWLINE]);
const OPEN_BRACE = 0x7b;

const QUOTE = 0x22;
const EQUALS = 0x3d;
/** A logfmt member's quoted value starts after it. */
const VALUE_QUOTE = Buffer.from('="', "latin1");
/** What a logfmt record's message member is keyed by: stamp.ts LOGFMT_MESSAGES before their `="`. */
const MESSAGE_KEYS = LOGFMT_MESSAGES.map((member) => Buffer.from(member.slice(0, -VALUE_QUOTE.length), "latin1"));

/** Do the bytes before `at` (and after `from`) end with `key`? */
function endsWith(bytes: Uint8Array, from: number, at: number, key: Uint8Array): boolean {
	if (at - from < key.length) return false;
	for (let k = 0; k < key.length; k++) if (bytes[at - key.length + k] !== key[k]) return false;
	return true;
}

/**
 * The starts of the lines of bytes[from, stop) (whole lines) that may be records wrapping a line,
 * in order: every such record (shape.ts shapeStart) starts with `{` or holds `{"` or a logfmt
 * message member (` msg="`); a line with none of them wraps none, and is hashed as it is without
 * being read as text. One pass over the bytes.
 */
function recordCandidates(bytes: Uint8Array, from: number, stop: number): number[] {
	// Most blocks hold neither a brace nor a `="`: a native search says so, without a pass in JavaScript.
	const view = Buffer.from(bytes.buffer, bytes.byteOffset + from, stop - from);
	if (view.indexOf(OPEN_BRACE) < 0 && view.indexOf(VALUE_QUOTE) < 0) return [];
	const starts: number[] = [];
	let lineStart = from;
	let marked = false;
	for (let at = from; at < stop; at++) {
		const byte = bytes[at];
		if (byte === NEWLINE) {
			if (marked) starts.push(lineStart);
			lineStart = at + 1;
			marked = false;
		} else if (marked) continue;
		else if (byte === OPEN_BRACE) marked = at === lineStart || (at + 1 < stop && bytes[at + 1] === QUOTE);
		else if (byte === QUOTE && at > lineStart && bytes[at - 1] === EQUALS)
			marked = MESSAGE_KEYS.some((key) => endsWith(bytes, lineStart, at - 1, key));
	}
	if (marked) starts.push(lineStart);
	return starts;
}

/**
 * The shape window (shape.ts shapeWindowOf) of an output whose first FRAME_SAMPLE_BYTES bytes (at
 * most) are `text`: the frame its first FRAME_SAMPLE_LINES lines start with (lines/frame.ts reads
 * the same lines), however the scan's blocks cut them.
 */
function windowOfFirstLines(text: string, frame: LineFrame | undefined): number {
	return shapeWindowOf(text.split("\n", FRAME_SAMPLE_LINES), frame);
}

interface ShapeEntry {
	count: number;
	firstLine: number;
	/** Byte offset of its first line in the scanned stream. */
	firstOffset: number;
	lastLine: number;
	/** The second and third lines of a shape seen at most RARE_SHAPE_LINES times: [line, offset]. */
	more?: Array<[number, number]>;
}

/** A line found by shape: rare in an output of few shapes, or repeated. */
export interface ShapeLine {
	lineNumber: number;
	offset: number;
	/** Lines of this shape that were looked at (sampled outputs count only the lines looked at). */
	count: number;
	lastLine: number;
}

export interface ShapeStats {
	/** Lines whose shape was computed. */
	shapedLines: number;
	/** True when every line was shaped (no sampling). */
	complete: boolean;
	/**
	 * When common shapes make COMMON_SHAPE_SHARE of the lines: each line of a shape seen at most
	 * RARE_SHAPE_LINES times, and the first line of a shape printed in one place (all its lines in a
	 * row) more often but fewer than REPEAT_MIN_LINES times; the rarest first, a shape in one place
	 * as rare as a line seen once.
	 */
	rare: ShapeLine[];
	/** Shapes repeated in a burst (REPEAT_MIN_LINES and more) that are not the output's bulk, by first line. */
	repeated: ShapeLine[];
}

export class ShapeCounter {
	/** `frame`: the frame the output's lines are written in (lines/frame.ts), which the shape window reads past. */
	constructor(private readonly frame?: LineFrame) {}

	private readonly shapes = new Map<number, ShapeEntry>();
	/** Each shaped line's number and shape hash, in order, while there are at most MAX_LINE_RECORDS. */
	private recordLines = new Uint32Array(INITIAL_LINE_RECORDS);
	private recordHashes = new Uint32Array(INITIAL_LINE_RECORDS);
	private records = 0;
	private recordsFull = false;
	private overflow = false;
	private shapedLines = 0;
	private seenBytes = 0;
	private sampled = false;
	/** Blocks past the first FULL_BYTES not shaped yet, oldest first, and their bytes. */
	private readonly waiting: WaitingBlock[] = [];
	private waitingBytes = 0;
	/** Copies of blocks shaped already, to copy the next blocks into (a scan's blocks are of a few sizes). */
	private readonly spare: Uint8Array[] = [];
	/** Skeleton bytes each line is hashed on (shape.ts shapeWindowOf), set by the output's first lines; 0 before them. */
	private window = 0;
	/** The output's first blocks and lines, while too few lines have come to set the window. */
	private readonly early: EarlyPart[] = [];
	private earlyBytes = 0;
	private earlyLines = 0;

	/**
	 * The whole lines of bytes[from, end) (each ending in "\n"), the first numbered `firstLine`,
	 * starting at `offset` in the scanned stream.
	 */
	addBlock(bytes: Uint8Array, from: number, end: number, firstLine: number, offset: number): void {
		if (end <= from) return;
		if (this.window === 0 && this.waitForWindow(bytes, from, end, firstLine, offset, false)) return;
		if (this.seenBytes < FULL_BYTES) {
			this.seenBytes += end - from;
			this.shapeLines(bytes, from, end, firstLine, offset - from);
			return;
		}
		this.seenBytes += end - from;
		// A copy: the scan's read buffers are reused (and a Buffer's slice would be a view of one).
		const length = end - from;
		const spare = this.spare.pop();
		// With room to spare: the next blocks are about as long, and reuse it.
		const copy = spare !== undefined && spare.length >= length ? spare : new Uint8Array(length + (length >> 2));
		copy.set(bytes.subarray(from, end));
		this.waiting.push({ bytes: copy, length, firstLine, offset });
		this.waitingBytes += length;
		// A block with END_BYTES after it is not the output's end: its share is shaped, the rest not.
		while (this.waitingBytes - this.waiting[0].length >= END_BYTES) {
			const block = this.waiting.shift() as WaitingBlock;
			this.waitingBytes -= block.length;
			// The block's first lines, up to a whole line.
			const cut = Math.ceil(block.length * SAMPLED_SHARE);
			const lineEnd = cut < block.length ? block.bytes.indexOf(NEWLINE, cut) : -1;
			const stop = lineEnd < 0 || lineEnd >= block.length ? block.length : lineEnd + 1;
			if (stop < block.length) this.sampled = true;
			this.shapeLines(block.bytes, 0, stop, block.firstLine, block.offset);
			this.spare.push(block.bytes);
		}
	}

	/** Shapes the waiting blocks whole: the output's last END_BYTES (or more, up to a block) end it. */
	private shapeWaiting(): void {
		// Called before every count is read (countOf runs per line a view reads): nothing to do once done.
		while (this.shapeNextWaiting());
	}

	/**
	 * Once the output has ended: shapes the oldest waiting block whole (the waiting blocks are the
	 * output's last END_BYTES, or more, up to a block); true while more wait. A caller that gives the
	 * event loop a turn between calls keeps each turn to a block's work (the records of a JSON-lines
	 * log are hashed in JavaScript: about 40 ms a MiB of short ones).
	 */
	shapeNextWaiting(): boolean {
		if (this.window === 0) this.settleWindow();
		const block = this.waiting.shift();
		if (block !== undefined) {
			this.waitingBytes -= block.length;
			this.shapeLines(block.bytes, 0, block.length, block.firstLine, block.offset);
		}
		if (this.waiting.length > 0) return true;
		this.spare.length = 0;
		return false;
	}

	/** One line (its bytes, without the newline; only its start matters) that did not come in a block. */
	addLine(bytes: Uint8Array, lineNumber: number, offset: number): void {
		// Past the first FULL_BYTES, lines of their own are not shaped (their place among the waiting blocks' is not kept).
		if (this.seenBytes >= FULL_BYTES) {
			this.sampled = true;
			return;
		}
		if (this.window === 0 && this.waitForWindow(bytes, 0, bytes.length, lineNumber, offset, true)) return;
		this.seenBytes += bytes.length + 1;
		// Only its start is at hand: a record is read on it as far as it goes (a long one wraps no line).
		const hash = hashShape(bytes, shapeStart(bytes, 0, bytes.length), bytes.length, this.window);
		if (hash !== SHAPE_HASH_BLANK) this.count(hash, lineNumber, offset);
	}

	/**
	 * The lines of bytes[from, stop) (whole lines), hashed by the WebAssembly module (getShapeHasher,
	 * the same hashes) in windows of whole lines; a line longer than a window, or every line where
	 * the module cannot run, by hashShape.
	 */
	private shapeLines(bytes: Uint8Array, from: number, stop: number, firstLine: number, base: number): void {
		// Records that wrap a line are hashed again, in JavaScript, from the line they wrap.
		const candidates = recordCandidates(bytes, from, stop);
		const hasher = getShapeHasher();
		if (hasher === null) {
			this.shapeLinesInJs(bytes, from, stop, firstLine, base, candidates);
			return;
		}
		let next = 0;
		const records = hasher.records;
		let line = firstLine;
		for (let at = from; at < stop;) {
			let end = stop - at <= hasher.windowBytes ? stop : bytes.lastIndexOf(NEWLINE, at + hasher.windowBytes - 1) + 1;
			if (end <= at) {
				end = bytes.indexOf(NEWLINE, at) + 1;
				if (end <= 0 || end > stop) end = stop;
				while (next < candidates.length && candidates[next] < at) next++;
				this.shapeLinesInJs(bytes, at, end, line, base, candidates[next] === at ? [at] : []);
				line++;
				at = end;
				continue;
			}
			const written = hasher.hash(bytes, at, end, this.window);
			for (let k = 0; k < written * 3; k += 3) {
				const start = at + records[k + 2];
				while (next < candidates.length && candidates[next] < start) next++;
				const hash = candidates[next] === start ? this.hashRecord(bytes, start, stop) : records[k];
				this.count(hash, line + records[k + 1], base + start);
			}
			line += hasher.lastLines();
			at = end;
		}
	}

	/**
	 * A measured hot loop: one pass over the bytes, a hash per line, no allocation but for the lines
	 * that may be records (`candidates`: recordCandidates, in order).
	 */
	private shapeLinesInJs(
		bytes: Uint8Array,
		from: number,
		stop: number,
		firstLine: number,
		base: number,
		candidates: readonly number[],
	): void {
		let line = firstLine;
		let next = 0;
		for (let at = from; at < stop; line++) {
			let end = bytes.indexOf(NEWLINE, at);
			if (end < 0 || end > stop) end = stop;
			while (next < candidates.length && candidates[next] < at) next++;
			const hash = candidates[next] === at ? this.hashRecord(bytes, at, end) : hashShape(bytes, at, end, this.window);
			if (hash !== SHAPE_HASH_BLANK) this.count(hash, line, base + at);
			at = end + 1;
		}
	}

	/** The shape hash of a line that may be a record (the line at `at`, ending at a newline or at `stop`): the line it wraps' (shape.ts shapeStart). */
	private hashRecord(bytes: Uint8Array, at: number, stop: number): number {
		let end = bytes.indexOf(NEWLINE, at);
		if (end < 0 || end > stop) end = stop;
		return hashShape(bytes, shapeStart(bytes, at, end), end, this.window);
	}

	/**
	 * How many lines of this line's shape were counted (0 when its shape was never seen: a sampled
	 * output may not have looked at it). `text` is the line as it was in the output; a record that
	 * wraps a line is counted as that line (shape.ts shapeStart).
	 */
	countOf(text: string): number {
		this.shapeWaiting();
		// A record is read whole (as the counter read it), up to the longest that wraps a line.
		const record = text.length <= MAX_WRAPPING_RECORD_CHARS;
		const bytes = Buffer.from(record || text.length <= 1024 ? text : text.slice(0, 1024), "utf8");
		const hash = hashShape(bytes, record ? shapeStart(bytes, 0, bytes.length) : 0, bytes.length, this.window);
		return hash === SHAPE_HASH_BLANK ? 0 : (this.shapes.get(hash)?.count ?? 0);
	}

	/**
	 * Before the window is set: keeps a copy of the output's next block (bytes[from, end)) or line
	 * until its first FRAME_SAMPLE_LINES lines or FRAME_SAMPLE_BYTES bytes have come, then sets the
	 * window from them and shapes every part kept, in order. True while the part waits (or was shaped
	 * with the others); false when the output's first part is enough alone (set, not copied).
	 */
	private waitForWindow(
		bytes: Uint8Array,
		from: number,
		end: number,
		firstLine: number,
		offset: number,
		line: boolean,
	): boolean {
		let lines = line ? 1 : 0;
		if (!line)
			for (
				let at = bytes.indexOf(NEWLINE, from);
				at >= 0 && at < end && lines < FRAME_SAMPLE_LINES;
				at = bytes.indexOf(NEWLINE, at + 1)
			)
				lines++;
		if (this.early.length === 0 && (lines >= FRAME_SAMPLE_LINES || end - from >= FRAME_SAMPLE_BYTES)) {
			this.window = windowOfFirstLines(
				Buffer.from(bytes.buffer, bytes.byteOffset + from, Math.min(end - from, FRAME_SAMPLE_BYTES)).toString("utf8"),
				this.frame,
			);
			return false;
		}
		// A copy: the scan's read buffers are reused (and a Buffer's slice would be a view of one).
		const copy = new Uint8Array(end - from);
		copy.set(bytes.subarray(from, end));
		this.early.push({ bytes: copy, firstLine, offset, line });
		this.earlyBytes += end - from + (line ? 1 : 0);
		this.earlyLines += lines;
		if (this.earlyLines < FRAME_SAMPLE_LINES && this.earlyBytes < FRAME_SAMPLE_BYTES) return true;
		this.settleWindow();
		return true;
	}

	/** Sets the window from the output's first lines kept (however few) and shapes them, in order. */
	private settleWindow(): void {
		if (this.window !== 0) return;
		const first = Buffer.concat(this.early.flatMap((part) => (part.line ? [part.bytes, LINE_END] : [part.bytes])));
		this.window = windowOfFirstLines(first.subarray(0, FRAME_SAMPLE_BYTES).toString("utf8"), this.frame);
		for (const part of this.early.splice(0)) {
			if (part.line) this.addLine(part.bytes, part.firstLine, part.offset);
			else this.addBlock(part.bytes, 0, part.bytes.length, part.firstLine, part.offset);
		}
	}

	private count(hash: number, line: number, offset: number): void {
		this.shapedLines++;
		if (!this.recordsFull) this.record(hash, line);
		const entry = this.shapes.get(hash);
		if (entry !== undefined) {
			entry.count++;
			entry.lastLine = line;
			if (entry.count <= RARE_SHAPE_LINES) (entry.more ??= []).push([line, offset]);
			return;
		}
		if (this.shapes.size >= MAX_HASHED_SHAPES) {
			this.overflow = true;
			return;
		}
		this.shapes.set(hash, { count: 1, firstLine: line, firstOffset: offset, lastLine: line });
	}

	/** Records a shaped line, growing the records up to MAX_LINE_RECORDS; past that, records stop. */
	private record(hash: number, line: number): void {
		if (this.records === this.recordLines.length) {
			if (this.records >= MAX_LINE_RECORDS) {
				this.recordsFull = true;
				return;
			}
			const lines = new Uint32Array(this.records * 2);
			const hashes = new Uint32Array(this.records * 2);
			lines.set(this.recordLines);
			hashes.set(this.recordHashes);
			this.recordLines = lines;
			this.recordHashes = hashes;
		}
		this.recordLines[this.records] = line;
		this.recordHashes[this.records] = hash;
		this.records++;
	}

	/**
	 * Where a line of a rare shape stands out: everywhere when the output is of few shapes
	 * (`fewShapes`); else where the MIN_SHAPED_LINES shaped lines around it are (common shapes make
	 * COMMON_SHAPE_SHARE of them). An output is made of steps, each of its own texture: svn's three
	 * `C` lines among 700 `U` stand out after a thousand lines of a bundler's hashed file names as
	 * they do alone. Undefined: nowhere (no line recorded, or a sampled output).
	 */
	private standsOut(
		kept: ReadonlySet<ShapeEntry>,
		fewShapes: boolean,
		own: (lineNumber: number) => boolean,
	): ((lineNumber: number) => boolean) | undefined {
		if (fewShapes) return () => true;
		if (this.overflow || this.recordsFull || this.records < MIN_SHAPED_LINES) return undefined;
		// Prefix counts over the recorded lines: the output's own lines of kept shapes, and of kept common shapes.
		const shaped = new Uint32Array(this.records + 1);
		const common = new Uint32Array(this.records + 1);
		for (let k = 0; k < this.records; k++) {
			const entry = this.shapes.get(this.recordHashes[k]);
			const isKept = entry !== undefined && kept.has(entry) && own(this.recordLines[k]);
			shaped[k + 1] = shaped[k] + (isKept ? 1 : 0);
			common[k + 1] = common[k] + (isKept && entry.count >= COMMON_SHAPE_LINES ? 1 : 0);
		}
		return (lineNumber) => {
			// The recorded line at lineNumber (records are in line order), and the window around it.
			let low = 0;
			let high = this.records;
			while (low < high) {
				const middle = (low + high) >>> 1;
				if (this.recordLines[middle] < lineNumber) low = middle + 1;
				else high = middle;
			}
			const from = Math.max(0, Math.min(low - (MIN_SHAPED_LINES >>> 1), this.records - MIN_SHAPED_LINES));
			const to = from + MIN_SHAPED_LINES;
			// At least half of them the output's own (not lines of shapes set aside).
			const lines = shaped[to] - shaped[from];
			return 2 * lines >= MIN_SHAPED_LINES && common[to] - common[from] >= COMMON_SHAPE_SHARE * lines;
		};
	}

	/**
	 * The counts' findings. `setAside(line)`: lines that are not the output's own (a CI job's steps
	 * that passed, around the step that failed). They are no rare lines, and they count neither in the
	 * share that says whether the output has few shapes nor in the stretch an odd line stands out of;
	 * a shape whose first and last lines both are set aside is left out altogether.
	 */
	result(setAside: (lineNumber: number) => boolean = () => false): ShapeStats {
		this.shapeWaiting();
		const entries = [...this.shapes.values()].filter(
			(entry) => !(setAside(entry.firstLine) && setAside(entry.lastLine)),
		);
		const kept = new Set(entries);
		// Where the output settles into its routine: from its first own line of a common shape on. Lines
		// of their own before it (an install step's, a runner's set-up) are a preamble, not odd lines of
		// the routine, and neither count against its few shapes nor stand as rare lines. Only the
		// output's own lines count: the set-aside lines of a shape it shares with them (a runner's
		// `##[endgroup]`, a post-job step repeating a set-up step's line) do not.
		const own = (lineNumber: number) => !setAside(lineNumber);
		let settled = 1;
		let common = 0;
		let counted = 0;
		if (!this.recordsFull && !this.overflow) {
			// One pass over the recorded lines (in line order): the own lines of kept shapes, from the first of a common one.
			settled = Number.POSITIVE_INFINITY;
			for (let k = 0; k < this.records; k++) {
				const line = this.recordLines[k];
				const entry = this.shapes.get(this.recordHashes[k]);
				if (entry === undefined || !kept.has(entry) || !own(line)) continue;
				const isCommon = entry.count >= COMMON_SHAPE_LINES;
				if (settled === Number.POSITIVE_INFINITY) {
					if (!isCommon) continue;
					settled = line;
				}
				counted++;
				if (isCommon) common++;
			}
		} else {
			for (const entry of entries) {
				counted += entry.count;
				if (entry.count >= COMMON_SHAPE_LINES) common += entry.count;
			}
		}
		// Blank lines are never shaped: the lines of the shapes left out are all that goes.
		const shapedLines = this.overflow ? this.shapedLines : counted;
		const fewShapes = !this.overflow && shapedLines >= MIN_SHAPED_LINES && common >= COMMON_SHAPE_SHARE * shapedLines;
		const standsOut = this.standsOut(kept, fewShapes, own);
		const toLine = (entry: ShapeEntry): ShapeLine => ({
			lineNumber: entry.firstLine,
			offset: entry.firstOffset,
			count: entry.count,
			lastLine: entry.lastLine,
		});
		// Each line of a rare shape, the rarest shapes first (a line seen once before one of three). A
		// shape printed in one place more often, but fewer than REPEAT_MIN_LINES times, is as rare as a
		// line seen once: the same line printed in a row is one event however many lines it took
		// (busted prints a failed `before_each` hook's error once for each test of its file). Whether
		// its lines are one line repeated, not a list, is read from the output (hunks.ts); a burst of
		// REPEAT_MIN_LINES or more is a repetition (below).
		const inOnePlace = (entry: ShapeEntry) => isInOnePlace(entry.firstLine, entry.lastLine, entry.count);
		const rarity = (entry: ShapeEntry) => (inOnePlace(entry) ? 1 : entry.count);
		const rare =
			standsOut !== undefined
				? entries
						.filter((entry) => entry.count <= RARE_SHAPE_LINES || (inOnePlace(entry) && entry.count < REPEAT_MIN_LINES))
						.sort((a, b) => rarity(a) - rarity(b) || a.firstLine - b.firstLine)
						.flatMap((entry) => [
							toLine(entry),
							// A shape in one place: its first line stands for it.
							...(inOnePlace(entry) ? [] : (entry.more ?? [])).map(([lineNumber, offset]) => ({
								...toLine(entry),
								lineNumber,
								offset,
							})),
						])
						.filter((line) => line.lineNumber >= settled && own(line.lineNumber) && standsOut(line.lineNumber))
				: [];
		const isBurst = (entry: ShapeEntry) =>
			entry.count >= REPEAT_MIN_LINES &&
			entry.lastLine - entry.firstLine + 1 <= REPEAT_MAX_SPREAD * entry.count &&
			entry.count <= REPEAT_MAX_SHARE * this.shapedLines;
		const repeated = entries.filter(isBurst).map(toLine);
		const byLine = (a: ShapeLine, b: ShapeLine) => a.lineNumber - b.lineNumber;
		return { shapedLines: this.shapedLines, complete: !this.sampled, rare, repeated: repeated.sort(byLine) };
	}
}
