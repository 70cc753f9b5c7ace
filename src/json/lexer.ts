// A resumable, byte-level JSON lexer and grammar checker: UTF-8 bytes go in chunk by chunk, events
// come out (containers, keys, scalars, commas), each with its nesting level and byte offsets.
// Invariants: it accepts exactly what JSON.parse accepts (on the text decoded as Buffer#toString
// decodes it), and stops at the first error with the kind and byte offset V8 would report; it never
// recurses and never builds a value; memory is one byte per open container plus the captured token.

import * as scanner from "./token-scanner.js";
import * as tokens from "./token.js";
import type { ContainerKind } from "./token.js";

// Copied into module constants once: the byte loop compares against them, and V8 folds a module's
// own constants but reads an imported binding on every use (measured: feeding 32 MiB of
// [{},{},…] took 1.4–3× as long with the imported bindings).
const {
	isDigit,
	JsonTokenScanner,
	N_INT,
	N_MINUS,
	N_ZERO,
	QUOTE,
	S_AFTER_VALUE,
	S_ARRAY_FIRST,
	S_COLON,
	S_COLON_FIRST,
	S_DONE,
	S_ESCAPE,
	S_FAILED,
	S_KEY,
	S_LITERAL,
	S_NUMBER,
	S_OBJECT_FIRST,
	S_STRING,
	S_UNICODE,
	S_VALUE,
} = scanner;
const { EMPTY_BUFFER, KIND_ARRAY, KIND_OBJECT } = tokens;

export { ALL_LEVELS, DEFAULT_CAPTURE_LIMIT_BYTES, type JsonLexerOptions } from "./token-scanner.js";

/** watchTarget for "count only". */
export const NEVER = 2 ** 30 - 1;

function isWhitespace(byte: number): boolean {
	return byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09;
}

/** The lexer: the structure between tokens (containers, commas, colons) over JsonTokenScanner's tokens. */
export class JsonLexer extends JsonTokenScanner {
	/**
	 * Commas at this level are counted (watchedCommas); the one that makes the count reach
	 * watchTarget is reported however deep it is. Set with watchCommas().
	 */
	watchLevel = -1;
	watchTarget = NEVER;
	watchedCommas = 0;
	private pauseRequested = false;

	/** Count the commas at `level` from now on; report the `target`-th even when deeper than maxEventLevel. */
	watchCommas(level: number, target: number): void {
		this.watchLevel = level;
		this.watchTarget = target;
		this.watchedCommas = 0;
	}

	/** Stop feeding after the current event; `feed` returns the index just past it. */
	pause(): void {
		this.pauseRequested = true;
	}

	/** The last feed stopped because pause() was called. */
	get paused(): boolean {
		return this.pauseRequested;
	}

	/**
	 * Called inside onOpen: treat the container just opened as a finished value, whose bytes the
	 * caller handles itself; feeding then resumes just past its end.
	 */
	skipOpenedContainer(): void {
		this.depth--;
		this.completeValue();
		this.pauseRequested = true;
	}

	/**
	 * Read `buffer[start..end)`, whose first byte is at absolute offset `base + start`. Returns the
	 * index where reading stopped: `end`, or just past the event during which pause() was called,
	 * or the error's index.
	 */
	feed(buffer: Buffer, start: number, end: number, base: number): number {
		this.pauseRequested = false;
		if (this.state === S_FAILED) return end;
		this.capture.from = start;
		let index = start;
		while (index < end) {
			const state = this.state;
			if (state <= S_DONE) {
				// Between tokens: the common structural bytes are handled here, the rest by readStructure.
				let byte = buffer[index]!;
				while (byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09) {
					if (++index === end) return end;
					byte = buffer[index]!;
				}
				if (state === S_AFTER_VALUE) {
					const depth = this.depth;
					const kind = this.kinds[depth - 1] as ContainerKind;
					if (byte === 0x2c) {
						this.state = kind === KIND_ARRAY ? S_VALUE : S_KEY;
						index++;
						if (depth === this.watchLevel) {
							if (++this.watchedCommas === this.watchTarget || depth <= this.maxEventLevel)
								this.handler.onComma(depth, kind);
						} else if (depth <= this.maxEventLevel) {
							this.handler.onComma(depth, kind);
						}
					} else if (byte === (kind === KIND_ARRAY ? 0x5d : 0x7d)) {
						index = this.close(kind, index, base + index, false);
						if (this.depth > this.maxEventLevel) index = this.closeUnreported(buffer, index, end);
					} else {
						index = this.readStructure(buffer, index, end, base);
					}
				} else if ((state === S_VALUE || state === S_ARRAY_FIRST) && (byte === 0x7b || byte === 0x5b)) {
					const kind = byte === 0x7b ? KIND_OBJECT : KIND_ARRAY;
					const level = this.depth;
					const parent = level === 0 ? 0 : (this.kinds[level - 1] as ContainerKind);
					this.push(kind);
					this.state = kind === KIND_OBJECT ? S_OBJECT_FIRST : S_ARRAY_FIRST;
					index++;
					if (level <= this.maxEventLevel) this.handler.onOpen(kind, level, base + index - 1, parent);
					else if (kind === KIND_ARRAY) index = this.openUnreported(buffer, index, end);
				} else if (state === S_OBJECT_FIRST && byte === 0x7d) {
					index = this.close(KIND_OBJECT, index, base + index, true);
				} else if (state === S_ARRAY_FIRST && byte === 0x5d) {
					index = this.close(KIND_ARRAY, index, base + index, true);
				} else {
					index = this.readStructure(buffer, index, end, base);
				}
			} else if (state === S_STRING) {
				index = this.readString(buffer, index, end, base);
			} else if (state === S_NUMBER) {
				index = this.readNumber(buffer, index, end, base);
			} else if (state === S_ESCAPE) {
				index = this.readEscape(buffer, index, base);
			} else if (state === S_UNICODE) {
				index = this.readUnicode(buffer, index, base);
			} else if (state === S_LITERAL) {
				index = this.readLiteral(buffer, index, base);
			} else {
				return index;
			}
			if (this.pauseRequested) return index;
		}
		this.keepPartialToken(buffer, end);
		return end;
	}

	/** The input ended at absolute offset `offset`: finish a number, or report what was missing. */
	finish(offset: number): void {
		if (this.state === S_NUMBER) {
			if (!this.endNumber(EMPTY_BUFFER, 0, offset)) return;
		}
		switch (this.state) {
			case S_DONE:
			case S_FAILED:
				return;
			case S_OBJECT_FIRST:
				return this.fail("expectedPropertyOrBrace", offset);
			case S_KEY:
				return this.fail("expectedQuotedProperty", offset);
			case S_COLON_FIRST:
				return this.fail("expectedColon", offset);
			case S_AFTER_VALUE:
				return this.fail(
					this.kinds[this.depth - 1] === KIND_ARRAY ? "expectedCommaOrBracket" : "expectedCommaOrBrace",
					offset,
				);
			case S_STRING:
				return this.fail("unterminatedString", offset);
			case S_UNICODE:
				return this.fail("badUnicodeEscape", offset);
			default:
				return this.fail("endOfInput", offset);
		}
	}

	// -------------------------------------------------------------------------------------------

	/** Whitespace and the one-byte tokens between values. */
	private readStructure(buffer: Buffer, start: number, end: number, base: number): number {
		let index = start;
		while (index < end && isWhitespace(buffer[index]!)) index++;
		if (index === end) return end;
		const byte = buffer[index]!;
		const offset = base + index;
		switch (this.state) {
			case S_VALUE:
			case S_ARRAY_FIRST:
				if (byte === 0x5d && this.state === S_ARRAY_FIRST) return this.close(KIND_ARRAY, index, offset, true);
				return this.startValue(buffer, index, offset);
			case S_OBJECT_FIRST:
				if (byte === QUOTE) return this.startString(index, offset, true, true);
				if (byte === 0x7d) return this.close(KIND_OBJECT, index, offset, true);
				this.fail("expectedPropertyOrBrace", offset);
				return index;
			case S_KEY:
				if (byte === QUOTE) return this.startString(index, offset, true, false);
				this.fail("expectedQuotedProperty", offset);
				return index;
			case S_COLON_FIRST:
			case S_COLON:
				if (byte === 0x3a) {
					this.state = S_VALUE;
					return index + 1;
				}
				// V8 names the colon only after an object's first key.
				this.fail(this.state === S_COLON_FIRST ? "expectedColon" : "unexpectedCharacter", offset);
				return index;
			case S_AFTER_VALUE:
				// feed() took the comma and the closing bracket.
				this.fail(
					this.kinds[this.depth - 1] === KIND_ARRAY ? "expectedCommaOrBracket" : "expectedCommaOrBrace",
					offset,
				);
				return index;
			default:
				// S_DONE
				this.fail("nonWhitespaceAfter", offset);
				return index;
		}
	}

	/**
	 * Past an array that opened deeper than maxEventLevel: the arrays that open right after it, with
	 * no event to report, in one tight loop (a document nested millions deep costs a byte compare and a
	 * push per level, not the whole state machine). State stays S_ARRAY_FIRST.
	 */
	private openUnreported(buffer: Buffer, start: number, end: number): number {
		let index = start;
		while (index < end && buffer[index] === 0x5b) index++;
		const opened = index - start;
		if (opened === 0) return index;
		let kinds = this.kinds;
		if (this.depth + opened > kinds.length) {
			kinds = new Uint8Array(Math.max(kinds.length * 2, this.depth + opened));
			kinds.set(this.kinds);
			this.kinds = kinds;
		}
		kinds.fill(KIND_ARRAY, this.depth, this.depth + opened);
		this.depth += opened;
		return index;
	}

	/**
	 * Past a container that closed deeper than maxEventLevel + 1: the closing brackets that follow
	 * while their closes are still unreported, each checked against the container it closes.
	 */
	private closeUnreported(buffer: Buffer, start: number, end: number): number {
		let index = start;
		const kinds = this.kinds;
		let depth = this.depth;
		while (index < end && depth > this.maxEventLevel + 1) {
			if (buffer[index] !== (kinds[depth - 1] === KIND_ARRAY ? 0x5d : 0x7d)) break;
			depth--;
			index++;
		}
		this.depth = depth;
		return index;
	}

	private close(kind: ContainerKind, index: number, offset: number, empty: boolean): number {
		this.depth--;
		this.completeValue();
		if (this.depth <= this.maxEventLevel) this.handler.onClose(kind, this.depth, offset, empty);
		return index + 1;
	}

	private startValue(buffer: Buffer, index: number, offset: number): number {
		const byte = buffer[index]!;
		if (byte === 0x7b || byte === 0x5b) {
			const kind = byte === 0x7b ? KIND_OBJECT : KIND_ARRAY;
			const level = this.depth;
			const parent = this.parentKind();
			this.push(kind);
			this.state = kind === KIND_OBJECT ? S_OBJECT_FIRST : S_ARRAY_FIRST;
			if (level <= this.maxEventLevel) this.handler.onOpen(kind, level, offset, parent);
			return index + 1;
		}
		if (byte === QUOTE) return this.startString(index, offset, false, false);
		if (byte === 0x2d || isDigit(byte)) {
			this.beginToken(index, offset, false);
			this.numberState = byte === 0x2d ? N_MINUS : byte === 0x30 ? N_ZERO : N_INT;
			this.token.integer = true;
			this.state = S_NUMBER;
			return index + 1;
		}
		const literal = byte === 0x74 ? 0 : byte === 0x66 ? 1 : byte === 0x6e ? 2 : -1;
		if (literal >= 0) {
			this.beginToken(index, offset, false);
			this.literal = literal;
			this.literalIndex = 1;
			this.state = S_LITERAL;
			return index + 1;
		}
		this.fail("unexpectedCharacter", offset);
		return index;
	}
}
