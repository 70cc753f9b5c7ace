// The stored text as jsonPath reads it: one reused buffer, filled from the byte source store.openText
// gave (never a path), with the deadline and the cancel signal checked before every chunk; it
// feeds a lexer from one offset to another, whole or a chunk at a time.

import type { ByteSource } from "../io/source.js";
import type { JsonLexer } from "./lexer.js";

export class DeadlinePassed extends Error {
	constructor(readonly offset: number) {
		super("deadline passed");
	}
}

/** The file, one reused buffer, and the clock every chunk is checked against. */
export class ChunkReader {
	readonly buffer: Buffer;
	private readonly deadline: number;

	constructor(
		readonly source: ByteSource,
		chunkBytes: number,
		readonly started: number,
		timeoutMs: number,
		readonly now: () => number,
		private readonly signal: AbortSignal | undefined,
	) {
		this.buffer = Buffer.allocUnsafe(chunkBytes);
		this.deadline = started + timeoutMs;
	}

	/** Reads from `position` (at most up to `end`) into the buffer; 0 bytes at the end of the file. */
	async read(position: number, end: number): Promise<number> {
		this.signal?.throwIfAborted();
		if (this.now() > this.deadline) throw new DeadlinePassed(position);
		const length = Math.min(this.buffer.length, end - position);
		if (length <= 0) return 0;
		return this.source.read(this.buffer.subarray(0, length), position);
	}

	/**
	 * Feeds the lexer from `position` to `end` (the end of its input) until it pauses, fails or
	 * finishes; returns where it stopped.
	 */
	async feed(lexer: JsonLexer, position: number, end: number): Promise<number> {
		let at = position;
		while (at < end) {
			const bytes = await this.read(at, end);
			if (bytes === 0) break;
			const stopped = lexer.feed(this.buffer, 0, bytes, at);
			at += stopped;
			if (lexer.error) return at;
			if (lexer.paused) return at;
		}
		lexer.finish(at);
		return at;
	}

	/** Feeds one chunk at most; returns where the lexer stopped (`end` when its input is over). */
	async feedChunk(lexer: JsonLexer, position: number, end: number): Promise<number> {
		const bytes = await this.read(position, end);
		if (bytes === 0) {
			lexer.finish(position);
			return end;
		}
		const at = position + lexer.feed(this.buffer, 0, bytes, position);
		if (at >= end && !lexer.paused) lexer.finish(end);
		return at;
	}
}
