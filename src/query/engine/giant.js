// @ts-check
// The search worker's giant lines: a line of at least giantLineBytes is never held whole. It is
// decoded and searched one segment (chunkBytes) at a time, each segment carrying the last
// GIANT_OVERLAP_CHARS of the one before, so a match across a cut is found. Invariant: memory stays
// bounded by the segment and the overlap; the first hit is shown as a window of it, and the line's
// start is kept as its context.

import { StringDecoder } from "node:string_decoder";
import { PROGRESS_RESUME_LINE, PROGRESS_STEP_LAST_LINE } from "./protocol.js";
import { isLowSurrogate } from "../../lines/text-cut.js";

/** @import { ChunkFramer } from "./frame.js" */
/** @import { ScanParts } from "./scan.js" */
/** @import { SearchLine } from "./protocol.js" */

/** Characters of a giant line carried into its next segment, so a match across the cut is found. */
export const GIANT_OVERLAP_CHARS = 4096;

/**
 * The last GIANT_OVERLAP_CHARS of a segment's text, not starting inside a surrogate pair.
 * @param {string} text
 */
export function takeOverlap(text) {
	let cut = Math.max(0, text.length - GIANT_OVERLAP_CHARS);
	if (cut > 0 && isLowSurrogate(text.charCodeAt(cut))) cut += 1;
	return text.slice(cut);
}

/**
 * Searches giant line n, whose first `length` bytes (no newline among them) are at the front of
 * framer.buffer, to its newline or the end of the source; the bytes after its newline are carried
 * for the framer's next block. False when the deadline passed first (the line counts as not searched).
 * @param {number} n
 * @param {number} length
 * @param {ChunkFramer} framer
 * @param {ScanParts} parts
 */
export function scanGiantLine(n, length, framer, parts) {
	const { pattern, collector, deadline, progress } = parts;
	const decoder = new StringDecoder("utf8");
	let overlap = "";
	/** Characters of the line decoded before this segment. */
	let consumed = 0;
	/** @type {string | null} */
	let head = null;
	/** @type {SearchLine | null} */
	let hit = null;
	for (;;) {
		// An empty read only ends the line (every byte of it was searched): no reason to stop there.
		if (length > 0 && deadline.passed(n)) return false;
		progress[PROGRESS_RESUME_LINE] = n;
		progress[PROGRESS_STEP_LAST_LINE] = n;
		const buffer = framer.buffer;
		const newline = buffer.subarray(0, length).indexOf(10);
		const final = newline !== -1 || length === 0;
		let piece = decoder.write(buffer.subarray(0, newline === -1 ? length : newline));
		if (final) piece += decoder.end();
		if (newline !== -1 && piece.charCodeAt(piece.length - 1) === 13) piece = piece.slice(0, -1);
		if (head === null) head = piece;
		const text = overlap + piece;
		if (hit === null) {
			// Past the overlap's first character: a match there was already looked for in the segment before.
			pattern.chunkRegex.lastIndex = overlap.length > 0 ? 1 : 0;
			const match = pattern.chunkRegex.exec(text);
			// An anchored match that ends at the cut may not be one once the line goes on.
			const atCut = match !== null && !final && match.index + match[0].length >= text.length;
			if (match !== null && !(pattern.needsConfirm && atCut)) {
				hit = collector.createHitLine(n, text, match.index, match[0].length, consumed - overlap.length);
			}
		} else {
			hit.cutAfter += piece.length;
		}
		consumed += piece.length;
		if (hit === null) overlap = takeOverlap(text);
		if (final) {
			const context = collector.createDecodedContextLine(n, head);
			context.cutAfter = consumed - context.text.length;
			collector.addGiantLine(hit, context);
			if (newline === -1) framer.keepFrom(0, 0);
			else framer.keepFrom(newline + 1, length);
			return true;
		}
		length = framer.readSegment();
	}
}
