// @ts-check
// The search worker's reading: a byte source framed into blocks of whole lines, read chunkBytes at
// a time. Invariant: a "lines" block ends at a newline (or at the end of the source), bytes after
// it are carried to the front of the buffer for the next read, and memory stays bounded by
// chunkBytes plus giantLineBytes: a longer line is handed over ("giant") to be read in segments.

import { isAscii } from "node:buffer";

/**
 * Reads up to `length` bytes at `position` of the source into buffer[offset…]; returns how many (0 at its end).
 * @typedef {(buffer: Buffer, offset: number, length: number, position: number) => number} ReadBytes
 */

/**
 * What the front of the buffer holds after next(): nothing ("end" of the source), whole lines
 * ("lines", up to linesEnd), the start of a line shorter than giantLineBytes, kept for the next read
 * ("partial"), or the first `held` bytes of a line of at least giantLineBytes, without its newline ("giant").
 * @typedef {"end" | "lines" | "partial" | "giant"} FrameKind
 */

export class ChunkFramer {
	/**
	 * @param {ReadBytes} read
	 * @param {number} chunkBytes bytes read at a time
	 * @param {number} giantLineBytes a line at least this long is read in segments
	 */
	constructor(read, chunkBytes, giantLineBytes) {
		this.read = read;
		this.chunkBytes = chunkBytes;
		this.giantLineBytes = giantLineBytes;
		this.buffer = Buffer.allocUnsafe(chunkBytes * 2);
		/** The source position of the next read. */
		this.position = 0;
		/** Bytes at the front of the buffer kept from the last block. */
		this.carry = 0;
		/** Bytes at the front of the buffer after the last read. */
		this.held = 0;
		/** Bytes the last read of next() returned. */
		this.lastRead = 0;
		/** After "lines": the end of the whole lines. */
		this.linesEnd = 0;
		/** After decodeLines: whether the text is the Latin-1 view of buffer[0, linesEnd) (one character per byte). */
		this.decodedAsLatin1 = false;
	}

	/**
	 * Reads chunkBytes into buffer[offset…].
	 * @param {number} offset
	 */
	readAt(offset) {
		const count = this.read(this.buffer, offset, this.chunkBytes, this.position);
		this.position += count;
		return count;
	}

	/**
	 * Reads the next chunk after the bytes carried over and says what the buffer now holds.
	 * @returns {FrameKind}
	 */
	next() {
		const carry = this.carry;
		if (this.buffer.length < carry + this.chunkBytes) {
			const grown = Buffer.allocUnsafe(Math.max(this.buffer.length * 2, carry + this.chunkBytes));
			this.buffer.copy(grown, 0, 0, carry);
			this.buffer = grown;
		}
		const count = this.readAt(carry);
		const total = carry + count;
		this.lastRead = count;
		this.held = total;
		if (total === 0) return "end";
		// At the end of the source its last line counts whole, newline or not.
		const end = count === 0 ? total : this.buffer.lastIndexOf(10, total - 1) + 1;
		if (end > 0) {
			this.linesEnd = end;
			return "lines";
		}
		if (total < this.giantLineBytes) {
			this.carry = total;
			return "partial";
		}
		return "giant";
	}

	/**
	 * The whole lines of a "lines" block as text: its Latin-1 view when asked for (or when the bytes
	 * are ASCII, where both read alike and Latin-1 is faster), else decoded as UTF-8.
	 * @param {boolean} latin1
	 */
	decodeLines(latin1) {
		const end = this.linesEnd;
		this.decodedAsLatin1 = latin1 || isAscii(this.buffer.subarray(0, end));
		return this.decodedAsLatin1 ? this.buffer.toString("latin1", 0, end) : this.buffer.toString("utf8", 0, end);
	}

	/**
	 * Drops the whole lines of a "lines" block and carries the bytes after them. False when the
	 * source has ended (nothing is left to read).
	 */
	dropLines() {
		this.keepFrom(this.linesEnd, this.held);
		return !(this.lastRead === 0 && this.carry === 0);
	}

	/**
	 * A giant line's next segment: reads chunkBytes into the front of the buffer; returns how many.
	 */
	readSegment() {
		return this.readAt(0);
	}

	/**
	 * Carries buffer[start, length) to the front for the next read.
	 * @param {number} start
	 * @param {number} length
	 */
	keepFrom(start, length) {
		this.buffer.copy(this.buffer, 0, start, length);
		this.carry = length - start;
	}
}
