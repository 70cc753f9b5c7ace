// Reading numbered lines from the middle or the end of a large stored file without rescanning it
// from the start every time. The file is read through the byte source its caller opened (a stored
// text: store.openText). A sparse line index (the byte offset of every `stride`-th line) is
// built on first use by a newline-count pass — only as far as the asked line — and cached in
// memory, keyed by path + size + mtime (at most DEFAULT_LINE_INDEX_CACHE_ENTRIES files, each
// totalLines / stride numbers). Invariant: lines are numbered as scan.ts numbers them (split on
// \n, a \r before it belongs to the ending, a final newline adds no line), memory stays bounded
// by the read chunk and `keepChars` per yielded line, however long a line is.

import { GIANT_LINE_KEEP_BYTES, PendingLine, renderGiantLine, renderLine, type ScannedLine } from "../lines/render.js";
import type { ByteSource } from "../io/source.js";

/** Lines between two indexed offsets: a lookup reads at most this many lines before the one asked. */
export const DEFAULT_LINE_INDEX_STRIDE = 4096;
/** Files whose index is kept in memory (least recently used dropped first). */
export const DEFAULT_LINE_INDEX_CACHE_ENTRIES = 32;
/** Bytes read per step. */
export const DEFAULT_LINE_READ_CHUNK_BYTES = 1024 * 1024;

const NEWLINE = 0x0a;

export interface ReadLinesOptions {
	/** Characters kept of each line (the rest is only counted): keepCharsFor(maxLineChars), as the scan keeps. */
	keepChars: number;
	/** The signal test: a giant line whose end alone signals shows its end, as in the view. */
	isSignal?: (text: string) => boolean;
	/** Default DEFAULT_LINE_INDEX_STRIDE. */
	stride?: number;
	/** Default DEFAULT_LINE_READ_CHUNK_BYTES. */
	chunkBytes?: number;
}

/** A file's bytes, opened by the caller, and what names it in the index cache. */
export interface IndexedText extends ByteSource {
	/** Names the file in the cache; with size and mtimeMs it tells a changed file from the indexed one. */
	readonly path: string;
	readonly mtimeMs: number;
}

interface LineIndex {
	size: number;
	mtimeMs: number;
	stride: number;
	/** offsets[k] is the byte offset where line k * stride + 1 starts. */
	offsets: number[];
	/** The index covers [0, scannedBytes); scannedLines newlines lie in it. */
	scannedBytes: number;
	scannedLines: number;
	complete: boolean;
	/** The extension pass running now, so concurrent readers do not scan twice. */
	extending: Promise<void> | undefined;
}

const indexes = new Map<string, LineIndex>();

/** Forgets every cached index (tests). */
export function clearLineIndexCache(): void {
	indexes.clear();
}

/** What the cache holds for `path` (tests and benchmarks): indexed offsets and bytes covered. */
export function describeLineIndex(
	path: string,
): { offsets: number; scannedBytes: number; complete: boolean } | undefined {
	const index = indexes.get(path);
	return index && { offsets: index.offsets.length, scannedBytes: index.scannedBytes, complete: index.complete };
}

function findIndex(path: string, size: number, mtimeMs: number, stride: number): LineIndex {
	let index = indexes.get(path);
	if (index === undefined || index.size !== size || index.mtimeMs !== mtimeMs || index.stride !== stride) {
		index = {
			size,
			mtimeMs,
			stride,
			offsets: [0],
			scannedBytes: 0,
			scannedLines: 0,
			complete: size === 0,
			extending: undefined,
		};
	}
	// Re-inserting keeps the Map in least-recently-used order.
	indexes.delete(path);
	indexes.set(path, index);
	while (indexes.size > DEFAULT_LINE_INDEX_CACHE_ENTRIES) {
		const oldest = indexes.keys().next().value;
		if (oldest === undefined) break;
		indexes.delete(oldest);
	}
	return index;
}

/** Counts newlines from where the index stops until it holds offsets[wanted] or the file ends. */
async function extendIndex(text: IndexedText, index: LineIndex, wanted: number, chunkBytes: number): Promise<void> {
	const buffer = Buffer.allocUnsafe(chunkBytes);
	while (index.offsets.length <= wanted && !index.complete) {
		const bytesRead = await text.read(buffer, index.scannedBytes);
		if (bytesRead === 0) {
			index.complete = true;
			break;
		}
		const base = index.scannedBytes;
		let lines = index.scannedLines;
		const stride = index.stride;
		for (let at = buffer.indexOf(NEWLINE); at !== -1 && at < bytesRead; at = buffer.indexOf(NEWLINE, at + 1)) {
			lines += 1;
			if (lines % stride === 0 && base + at + 1 < index.size) index.offsets.push(base + at + 1);
		}
		index.scannedLines = lines;
		index.scannedBytes = base + bytesRead;
		if (index.scannedBytes >= index.size) index.complete = true;
	}
}

/** The indexed line at or before `lineNumber`: where to start reading. */
async function seekLine(
	text: IndexedText,
	lineNumber: number,
	stride: number,
	chunkBytes: number,
): Promise<{ offset: number; lineNumber: number }> {
	const index = findIndex(text.path, text.size, text.mtimeMs, stride);
	const wanted = Math.floor((lineNumber - 1) / stride);
	while (index.offsets.length <= wanted && !index.complete) {
		if (index.extending === undefined) {
			const run = extendIndex(text, index, wanted, chunkBytes);
			index.extending = run.finally(() => {
				index.extending = undefined;
			});
		}
		await index.extending;
	}
	const slot = Math.min(wanted, index.offsets.length - 1);
	return { offset: index.offsets[slot]!, lineNumber: slot * stride + 1 };
}

/**
 * Yields the lines of `text` from line `startLine` on, until the file ends or the caller stops
 * iterating (the caller closes the text). Seeks through the cached sparse index. Each line
 * is rendered as the scan renders it (renderLine / renderGiantLine), so a line reads the same here as in
 * the view: `\r` redraws resolved and escapes removed before it is clipped.
 */
export async function* readLinesFrom(
	text: IndexedText,
	startLine: number,
	options: ReadLinesOptions,
): AsyncGenerator<ScannedLine> {
	const stride = options.stride ?? DEFAULT_LINE_INDEX_STRIDE;
	const chunkBytes = options.chunkBytes ?? DEFAULT_LINE_READ_CHUNK_BYTES;
	const keepChars = Math.max(1, options.keepChars);
	const isSignal = options.isSignal ?? (() => false);
	const start = await seekLine(text, startLine, stride, chunkBytes);
	const buffer = Buffer.allocUnsafe(chunkBytes);
	let position = start.offset;
	let lineNumber = start.lineNumber;
	// A shown line that began in an earlier chunk: its ends kept, its length counted.
	let pending: PendingLine | undefined;

	const finishPending = (): ScannedLine => {
		const line = pending as PendingLine;
		pending = undefined;
		const number = lineNumber++;
		return line.isGiant
			? renderGiantLine(number, line, keepChars, isSignal)[0]
			: renderLine(number, line.whole(), keepChars);
	};

	for (;;) {
		const bytesRead = await text.read(buffer, position);
		if (bytesRead === 0) break;
		position += bytesRead;
		let lineStart = 0;
		for (;;) {
			let end = buffer.indexOf(NEWLINE, lineStart);
			if (end >= bytesRead) end = -1;
			if (lineNumber < startLine) {
				// Before the asked line: only count (a skipped line may go on in the next chunk).
				if (end === -1) break;
				lineNumber += 1;
				lineStart = end + 1;
				continue;
			}
			if (end === -1) {
				if (lineStart < bytesRead) (pending ??= new PendingLine()).append(buffer.subarray(lineStart, bytesRead));
				break;
			}
			if (pending !== undefined) {
				pending.append(buffer.subarray(lineStart, end));
				yield finishPending();
			} else if (end - lineStart <= GIANT_LINE_KEEP_BYTES) {
				yield renderLine(lineNumber++, buffer.toString("utf8", lineStart, end), keepChars);
			} else {
				pending = new PendingLine();
				pending.append(buffer.subarray(lineStart, end));
				yield finishPending();
			}
			lineStart = end + 1;
		}
	}
	// The last line has no newline.
	if (pending !== undefined) yield finishPending();
}
