// Reading numbered lines from the middle or the end of a large stored file without rescanning it
// from the start every time. A sparse line index (the byte offset of every `stride`-th line) is
// built on first use by a newline-count pass — only as far as the asked line — and cached in
// memory, keyed by path + size + mtime (at most DEFAULT_LINE_INDEX_CACHE_ENTRIES files, each
// totalLines / stride numbers). Invariant: lines are numbered as scan.ts numbers them (split on
// \n, a \r before it belongs to the ending, a final newline adds no line), memory stays bounded
// by the read chunk and `keepChars` per yielded line, however long a line is.

import { open, type FileHandle } from "node:fs/promises";
import { StringDecoder } from "node:string_decoder";
import { keepStart } from "./text.js";

/** Lines between two indexed offsets: a lookup reads at most this many lines before the one asked. */
export const DEFAULT_LINE_INDEX_STRIDE = 4096;
/** Files whose index is kept in memory (least recently used dropped first). */
export const DEFAULT_LINE_INDEX_CACHE_ENTRIES = 32;
/** Bytes read per step. */
export const DEFAULT_LINE_READ_CHUNK_BYTES = 1024 * 1024;

const NEWLINE = 0x0a;
const CARRIAGE_RETURN = 0x0d;

export interface TextLine {
	/** 1-based, as the bounded view numbers it. */
	lineNumber: number;
	/** The line without its ending, at most `keepChars` characters (more only when not `partial`). */
	text: string;
	/** Characters (UTF-16 code units) of the whole line. */
	totalChars: number;
	/** True when `text` is only the start of the line. */
	partial: boolean;
}

export interface ReadLinesOptions {
	/** Characters kept of each line (the rest is only counted). */
	keepChars: number;
	/** Default DEFAULT_LINE_INDEX_STRIDE. */
	stride?: number;
	/** Default DEFAULT_LINE_READ_CHUNK_BYTES. */
	chunkBytes?: number;
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
export function describeLineIndex(path: string): { offsets: number; scannedBytes: number; complete: boolean } | undefined {
	const index = indexes.get(path);
	return index && { offsets: index.offsets.length, scannedBytes: index.scannedBytes, complete: index.complete };
}

function findIndex(path: string, size: number, mtimeMs: number, stride: number): LineIndex {
	let index = indexes.get(path);
	if (index === undefined || index.size !== size || index.mtimeMs !== mtimeMs || index.stride !== stride) {
		index = { size, mtimeMs, stride, offsets: [0], scannedBytes: 0, scannedLines: 0, complete: size === 0, extending: undefined };
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
async function extendIndex(handle: FileHandle, index: LineIndex, wanted: number, chunkBytes: number): Promise<void> {
	const buffer = Buffer.allocUnsafe(chunkBytes);
	while (index.offsets.length <= wanted && !index.complete) {
		const { bytesRead } = await handle.read(buffer, 0, chunkBytes, index.scannedBytes);
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
async function seekLine(handle: FileHandle, path: string, lineNumber: number, stride: number, chunkBytes: number): Promise<{ offset: number; lineNumber: number }> {
	const stats = await handle.stat();
	const index = findIndex(path, stats.size, stats.mtimeMs, stride);
	const wanted = Math.floor((lineNumber - 1) / stride);
	while (index.offsets.length <= wanted && !index.complete) {
		if (index.extending === undefined) {
			const run = extendIndex(handle, index, wanted, chunkBytes);
			index.extending = run.finally(() => {
				index.extending = undefined;
			});
		}
		await index.extending;
	}
	const slot = Math.min(wanted, index.offsets.length - 1);
	return { offset: index.offsets[slot]!, lineNumber: slot * stride + 1 };
}

/** Characters of a decoded piece to add to a line's kept text. */
function keepMore(kept: string, piece: string, keepChars: number): string {
	const room = keepChars + 1 - kept.length;
	if (room <= 0) return kept;
	return kept + (piece.length <= room ? piece : piece.slice(0, room));
}

/**
 * Yields the lines of the file at `path` from line `startLine` on, until the file ends or the
 * caller stops iterating (which closes the file). Seeks through the cached sparse index.
 */
export async function* readLinesFrom(path: string, startLine: number, options: ReadLinesOptions): AsyncGenerator<TextLine> {
	const stride = options.stride ?? DEFAULT_LINE_INDEX_STRIDE;
	const chunkBytes = options.chunkBytes ?? DEFAULT_LINE_READ_CHUNK_BYTES;
	const keepChars = Math.max(1, options.keepChars);
	// A UTF-16 code unit never takes more than 3 bytes of UTF-8.
	const keepBytes = keepChars * 3 + 4;
	const handle = await open(path, "r");
	try {
		const start = await seekLine(handle, path, startLine, stride, chunkBytes);
		const buffer = Buffer.allocUnsafe(chunkBytes);
		let position = start.offset;
		let lineNumber = start.lineNumber;
		// A shown line that began in an earlier chunk: decoded piece by piece, its start kept, its length counted.
		let decoder: StringDecoder | undefined;
		let kept = "";
		let chars = 0;
		let lastCode = -1;

		const addPiece = (piece: string): void => {
			if (piece.length === 0) return;
			chars += piece.length;
			kept = keepMore(kept, piece, keepChars);
			lastCode = piece.charCodeAt(piece.length - 1);
		};

		const finishLine = (): TextLine => {
			let total = chars;
			let text = kept;
			if (lastCode === CARRIAGE_RETURN) {
				total -= 1;
				if (text.length > total) text = text.slice(0, total);
			}
			decoder = undefined;
			kept = "";
			chars = 0;
			lastCode = -1;
			const partial = total > keepChars;
			return { lineNumber: lineNumber++, text: partial ? keepStart(text, keepChars) : text, totalChars: total, partial };
		};

		for (;;) {
			const { bytesRead } = await handle.read(buffer, 0, chunkBytes, position);
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
					if (lineStart < bytesRead) {
						decoder ??= new StringDecoder("utf8");
						addPiece(decoder.write(buffer.subarray(lineStart, bytesRead)));
					}
					break;
				}
				if (decoder !== undefined) {
					addPiece(decoder.write(buffer.subarray(lineStart, end)));
					addPiece(decoder.end());
					yield finishLine();
				} else {
					let contentEnd = end;
					if (contentEnd > lineStart && buffer[contentEnd - 1] === CARRIAGE_RETURN) contentEnd -= 1;
					yield wholeLine(buffer, lineStart, contentEnd, lineNumber++, keepChars, keepBytes);
				}
				lineStart = end + 1;
			}
		}
		if (decoder !== undefined) {
			// The last line has no newline; a \r at its end is still dropped, as the view drops it.
			addPiece(decoder.end());
			yield finishLine();
		}
	} finally {
		await handle.close();
	}
}

/** A line that lies whole in the buffer: decode only its start when it is long. */
function wholeLine(buffer: Buffer, start: number, end: number, lineNumber: number, keepChars: number, keepBytes: number): TextLine {
	if (end - start <= keepBytes) {
		const text = buffer.toString("utf8", start, end);
		if (text.length <= keepChars) return { lineNumber, text, totalChars: text.length, partial: false };
		return { lineNumber, text: keepStart(text, keepChars), totalChars: text.length, partial: true };
	}
	const totalChars = buffer.toString("utf8", start, end).length;
	const head = buffer.toString("utf8", start, start + keepBytes);
	return { lineNumber, text: keepStart(head, keepChars), totalChars, partial: true };
}

