// The text of the token being read, kept for the event that reports it: a window on the chunk
// when the token lies inside it, else a copy (grown by doubling) of the chunks it spans, at most
// `limit` bytes of it (the token says when more followed). One scratch buffer, reused.

import * as tokens from "./token.js";

// A module constant, read on every token: an imported binding is read through the loader's interop
// getter on each use under Pi (see json/lexer.ts).
const { EMPTY_BUFFER, JsonToken } = tokens;

export class TokenCapture {
	/** The token every event reports (reused). */
	readonly token = new JsonToken();
	/** Where the token's text starts in the current chunk. */
	from = 0;
	private captured = 0;
	private scratch: Buffer = EMPTY_BUFFER;
	private inScratch = false;

	/** A token's text starts at `index` of the current chunk. */
	begin(index: number): void {
		this.from = index;
		this.captured = 0;
		this.inScratch = false;
		this.token.truncated = false;
	}

	/** The chunk ends inside the token: copy what it holds of it. */
	keepPartial(buffer: Buffer, end: number, limit: number): void {
		this.append(buffer, this.from, end, limit);
		this.inScratch = true;
	}

	private append(buffer: Buffer, from: number, to: number, limit: number): void {
		const room = limit - this.captured;
		const length = to - from;
		if (length > room) this.token.truncated = true;
		const taken = Math.max(0, Math.min(length, room));
		if (taken === 0) return;
		if (this.captured + taken > this.scratch.length) {
			let size = Math.max(256, this.scratch.length * 2);
			while (size < this.captured + taken) size *= 2;
			const grown = Buffer.allocUnsafe(size);
			this.scratch.copy(grown, 0, 0, this.captured);
			this.scratch = grown;
		}
		buffer.copy(this.scratch, this.captured, from, from + taken);
		this.captured += taken;
	}

	clear(): void {
		this.token.bytes = EMPTY_BUFFER;
		this.token.from = 0;
		this.token.to = 0;
	}

	/** The token's text ends at `index` in `buffer`: point the token at it. */
	close(buffer: Buffer, index: number, limit: number): void {
		const token = this.token;
		if (this.inScratch) {
			this.append(buffer, this.from, index, limit);
			token.bytes = this.scratch;
			token.from = 0;
			token.to = this.captured;
			return;
		}
		token.bytes = buffer;
		token.from = this.from;
		token.to = Math.min(index, this.from + limit);
		if (index - this.from > limit) token.truncated = true;
	}
}
