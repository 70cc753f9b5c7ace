// The lines around the signal lines a view will show, read back from the output by byte offset once
// the scan has chosen them: a signal line's block (the continuation lines a toolchain prints after
// it) and its leading context (the lines it continues from, its parent, its section header), as
// signal-policy.ts defines them; and the text of the rare and repeated lines the shape counter
// found. Reads at most a few KiB around each chosen line: never the whole output again.

import { type ScannedLine, shapeLine } from "./render.js";
import type { ScanResult } from "./scan.js";
import type { SignalItem } from "./signal-collector.js";
import {
	BLOCK_MESSAGE_LINES,
	BLOCK_SCAN_LINES,
	continuesBlock,
	findLeadingContext,
	HUNK_AFTER_LINES,
	HUNK_HEADER_LOOKBACK_LINES,
	indentOf,
	isBlockMessage,
	opensBlock,
	RARE_CONTEXT_SHAPE_LINES,
} from "./signal-policy.js";
import type { ShapeLine } from "./shape-counter.js";
import type { ByteSource } from "./source.js";

/** Bytes read before a signal line (its leading context and section header) and after it (its block). */
const READ_BEFORE_BYTES = 32 * 1024;
const READ_AFTER_BYTES = 16 * 1024;
/** Rare and repeated lines read, at most. */
export const MAX_SHAPE_LINES = 10;

/** A signal line with the lines around it that belong to it. */
export interface Hunk {
	item: SignalItem;
	/** A section header further up (a test's name, a build step), when there is one. */
	header?: ScannedLine;
	/** Leading context, in line order. */
	before: ScannedLine[];
	/** Its block, in line order. */
	after: ScannedLine[];
	/** Further into a structured block it opens, the lines that say what went wrong (beyond `after`). */
	messages: ScannedLine[];
}

/** A line found by its shape, with its text. */
export interface ShapeFind extends ScannedLine {
	kind: "rare" | "repeated";
	/** Lines of its shape, and the last one's number (repeated lines). */
	count: number;
	lastLine: number;
}

/** What the view shows besides the scan's own lines. */
export interface ViewExtras {
	hunks: Hunk[];
	shapeLines: ShapeFind[];
}

/**
 * Reads the blocks of `items` (the signal lines the view may show, best first) and the text of the
 * rare and repeated lines from `source`, whose byte offsets the scan recorded.
 */
export async function readViewExtras(
	source: ByteSource,
	scan: ScanResult,
	items: readonly SignalItem[],
	keepChars: number,
	countShape: (raw: string) => number = () => 0,
): Promise<ViewExtras> {
	const isRare = (raw: string) => {
		const count = countShape(raw);
		return count > 0 && count <= RARE_CONTEXT_SHAPE_LINES;
	};
	const hunks: Hunk[] = [];
	for (const item of items) hunks.push(await readHunk(source, item, keepChars, isRare));
	// Lines the signal pattern matched were ranked as signals already: not offered again as shapes.
	const taken = new Set<number>([...scan.signals, ...scan.shownSignals].map((item) => item.lineNumber));
	const headEnd = scan.head.length > 0 ? scan.head[scan.head.length - 1].lineNumber : 0;
	const tailStart = scan.tail.length > 0 ? scan.tail[0].lineNumber : scan.totalLines + 1;
	const inMiddle = (line: ShapeLine) => line.lineNumber > headEnd && line.lineNumber < tailStart && !taken.has(line.lineNumber);
	const shapeLines: ShapeFind[] = [];
	const pick = (lines: readonly ShapeLine[], kind: ShapeFind["kind"]) => lines.filter(inMiddle).slice(0, MAX_SHAPE_LINES).map((line) => ({ line, kind }));
	for (const { line, kind } of [...pick(scan.shapes.repeated, "repeated"), ...pick(scan.shapes.rare, "rare")]) {
		const text = await readLineAt(source, line.offset, line.lineNumber, keepChars);
		if (text !== undefined) shapeLines.push({ ...text, kind, count: line.count, lastLine: line.lastLine });
	}
	return { hunks, shapeLines };
}

async function readRange(source: ByteSource, from: number, to: number): Promise<Buffer> {
	const start = Math.max(0, from);
	const end = Math.min(source.size, to);
	if (end <= start) return Buffer.alloc(0);
	const buffer = Buffer.allocUnsafe(end - start);
	const read = await source.read(buffer, start);
	return buffer.subarray(0, read);
}

/** The line that starts at `offset`, shaped as the view shows lines. */
async function readLineAt(source: ByteSource, offset: number, lineNumber: number, keepChars: number): Promise<ScannedLine | undefined> {
	if (offset < 0) return undefined;
	const bytes = await readRange(source, offset, offset + READ_AFTER_BYTES);
	const newline = bytes.indexOf(0x0a);
	return shapeLine(lineNumber, bytes.toString("utf8", 0, newline < 0 ? bytes.length : newline), keepChars);
}

/** One signal line's hunk; a line whose offset is unknown, or whose shown text is its end, stands alone. */
async function readHunk(source: ByteSource, item: SignalItem, keepChars: number, isRare: (raw: string) => boolean): Promise<Hunk> {
	if (item.offset < 0 || item.keptEnd) return { item, before: [], after: [], messages: [] };
	const [beforeBytes, afterBytes] = await Promise.all([
		readRange(source, item.offset - READ_BEFORE_BYTES, item.offset),
		readRange(source, item.offset, item.offset + READ_AFTER_BYTES),
	]);
	// Whole lines only: the window before may start inside a line, the one after may end inside one.
	const aboveRaw = beforeBytes.length === 0 ? [] : beforeBytes.toString("utf8").split("\n").slice(0, -1);
	if (item.offset - READ_BEFORE_BYTES > 0) aboveRaw.shift();
	const belowRaw = afterBytes.toString("utf8").split("\n");
	const reachedEnd = item.offset + afterBytes.length >= source.size;
	if (!reachedEnd) belowRaw.pop();
	belowRaw.shift(); // the signal line itself

	const signalIndent = Math.max(0, indentOf(item.text));
	const after: ScannedLine[] = [];
	for (let k = 0; k < Math.min(HUNK_AFTER_LINES, belowRaw.length); k++) {
		const line = shapeLine(item.lineNumber + 1 + k, belowRaw[k], keepChars);
		if (!continuesBlock(signalIndent, line.text, isRare(belowRaw[k]))) break;
		after.push(line);
	}
	const messages: ScannedLine[] = [];
	if (opensBlock(item.text)) {
		for (let k = after.length; k < Math.min(BLOCK_SCAN_LINES, belowRaw.length) && messages.length < BLOCK_MESSAGE_LINES; k++) {
			const line = shapeLine(item.lineNumber + 1 + k, belowRaw[k], keepChars);
			if (indentOf(line.text) >= 0 && indentOf(line.text) <= signalIndent) break; // the block's closing line
			if (isBlockMessage(line.text)) messages.push(line);
		}
	}
	const aboveLines = aboveRaw.slice(-HUNK_HEADER_LOOKBACK_LINES);
	const above = aboveLines.map((raw, index, all) => shapeLine(item.lineNumber - all.length + index, raw, keepChars));
	const leading = findLeadingContext(
		item.text,
		above.map((line) => line.text),
		(index) => isRare(aboveLines[index]),
	);
	return {
		item,
		before: leading.context.map((index) => above[index]),
		...(leading.header !== undefined ? { header: above[leading.header] } : {}),
		after,
		messages,
	};
}
