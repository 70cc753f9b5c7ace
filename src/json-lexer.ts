// A resumable, byte-level JSON lexer and grammar checker: UTF-8 bytes go in chunk by chunk, events
// come out (containers, keys, scalars, commas), each with its nesting level and byte offsets.
// Invariants: it accepts exactly what JSON.parse accepts (on the text decoded as Buffer#toString
// decodes it), and stops at the first error with the kind and byte offset V8 would report; it never
// recurses and never builds a value; memory is one byte per open container plus the captured token.

export const KIND_ARRAY = 1;
export const KIND_OBJECT = 2;
export type ContainerKind = typeof KIND_ARRAY | typeof KIND_OBJECT;
/** The container around a value, or 0 for the document's root value. */
export type ParentKind = ContainerKind | 0;

export const SCALAR_STRING = 1;
export const SCALAR_NUMBER = 2;
export const SCALAR_TRUE = 3;
export const SCALAR_FALSE = 4;
export const SCALAR_NULL = 5;
export type ScalarKind = typeof SCALAR_STRING | typeof SCALAR_NUMBER | typeof SCALAR_TRUE | typeof SCALAR_FALSE | typeof SCALAR_NULL;

/** A syntax error, named after V8's message templates; `offset` is the byte V8's cursor was on. */
export type JsonErrorKind =
	| "endOfInput"
	| "unexpectedCharacter"
	| "escapedNonAscii"
	| "noNumberAfterMinus"
	| "unterminatedFraction"
	| "exponentMissing"
	| "badControlCharacter"
	| "badEscape"
	| "badUnicodeEscape"
	| "unterminatedString"
	| "expectedPropertyOrBrace"
	| "expectedQuotedProperty"
	| "expectedColon"
	| "expectedCommaOrBracket"
	| "expectedCommaOrBrace"
	| "nonWhitespaceAfter";

export interface JsonSyntaxError {
	kind: JsonErrorKind;
	/** Absolute byte offset of the character the error is about (the input's length at its end). */
	offset: number;
}

/**
 * One string, number or literal token, reused from event to event: read it inside the event only.
 * `bytes[from..to)` is its captured text (a string's content between the quotes), at most the
 * lexer's captureLimit bytes of it (`truncated` says more followed); numbers are captured whole.
 */
export class JsonToken {
	/** Absolute byte offsets of the whole token (a string's quotes included). */
	start = 0;
	end = 0;
	bytes: Buffer = EMPTY_BUFFER;
	from = 0;
	to = 0;
	truncated = false;
	/** A string holds a backslash escape. */
	hasEscape = false;
	/** With `detail` on: JSON.stringify(the string's value).length, quotes included. */
	chars = 0;
	/** A number without fraction or exponent. */
	integer = false;
}

/** What a lexer reports to. `level` is the number of containers around the token. */
export interface JsonEventHandler {
	onOpen(kind: ContainerKind, level: number, offset: number, parent: ParentKind): void;
	onClose(kind: ContainerKind, level: number, offset: number, empty: boolean): void;
	onKey(level: number, token: JsonToken): void;
	onScalar(kind: ScalarKind, level: number, token: JsonToken, parent: ParentKind): void;
	onComma(level: number, kind: ContainerKind): void;
}

const EMPTY_BUFFER = Buffer.alloc(0);

// Grammar states.
const S_VALUE = 0;
const S_ARRAY_FIRST = 1;
const S_OBJECT_FIRST = 2;
const S_KEY = 3;
const S_COLON_FIRST = 4;
const S_COLON = 5;
const S_AFTER_VALUE = 6;
const S_DONE = 7;
const S_STRING = 8;
const S_ESCAPE = 9;
const S_UNICODE = 10;
const S_NUMBER = 11;
const S_LITERAL = 12;
const S_FAILED = 13;

// Number states, as V8's ParseJsonNumber walks them.
const N_MINUS = 0;
const N_ZERO = 1;
const N_INT = 2;
const N_DOT = 3;
const N_FRACTION = 4;
const N_EXPONENT = 5;
const N_EXPONENT_SIGN = 6;
const N_EXPONENT_DIGITS = 7;

const LITERALS = ["true", "false", "null"] as const;
const LITERAL_KINDS: readonly ScalarKind[] = [SCALAR_TRUE, SCALAR_FALSE, SCALAR_NULL];

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/** JSON.stringify's length for one UTF-16 unit from an escape (surrogates are handled apart). */
function escapedUnitChars(unit: number): number {
	if (unit === 0x22 || unit === 0x5c) return 2;
	if (unit < 0x20) return unit === 0x08 || unit === 0x09 || unit === 0x0a || unit === 0x0c || unit === 0x0d ? 2 : 6;
	return 1;
}

function hexValue(byte: number): number {
	if (byte >= 0x30 && byte <= 0x39) return byte - 0x30;
	if (byte >= 0x61 && byte <= 0x66) return byte - 0x57;
	if (byte >= 0x41 && byte <= 0x46) return byte - 0x37;
	return -1;
}

function isWhitespace(byte: number): boolean {
	return byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09;
}

function isDigit(byte: number): boolean {
	return byte >= 0x30 && byte <= 0x39;
}

export interface JsonLexerOptions {
	/** Bytes of a string kept in a token (default 64 KiB); numbers are always kept whole. */
	captureLimit?: number;
	/** Initial `detail` (default false). */
	detail?: boolean;
}

/** Bytes of a reported string kept in its token: enough for any key a path can name (1 000 characters escaped). */
export const DEFAULT_CAPTURE_LIMIT_BYTES = 64 * 1024;
/** maxEventLevel for "report every level"; a small integer, so the field stays one (no boxed double). */
export const ALL_LEVELS = 2 ** 30 - 1;
/** watchTarget for "count only". */
export const NEVER = 2 ** 30 - 1;

export class JsonLexer {
	/** Events deeper than this level are not reported (their tokens are checked, not captured). */
	maxEventLevel = ALL_LEVELS;
	/**
	 * Commas at this level are counted (watchedCommas); the one that makes the count reach
	 * watchTarget is reported however deep it is. Set with watchCommas().
	 */
	watchLevel = -1;
	watchTarget = NEVER;
	watchedCommas = 0;
	/** Set when the input is not JSON; the lexer then ignores further input. */
	error: JsonSyntaxError | null = null;
	captureLimit: number;
	/**
	 * Reported keys are always captured. With detail on, reported string and number values are
	 * captured too, and every reported string is measured (JsonToken.chars); off, they are only checked.
	 * Read when a token starts.
	 */
	detail: boolean;

	/** Where events go; may be replaced between events. */
	handler: JsonEventHandler;
	private state = S_VALUE;
	private depth = 0;
	private kinds = new Uint8Array(64);
	private pauseRequested = false;
	private readonly token = new JsonToken();

	// The token being read.
	private tokenReported = false;
	private tokenCaptured = false;
	private tokenMeasured = false;
	private tokenLevel = 0;
	private tokenParent: ParentKind = 0;
	private stringIsKey = false;
	private firstKey = false;
	private unicodeDigits = 0;
	private unicodeValue = 0;
	private numberState = N_MINUS;
	private literal = 0;
	private literalIndex = 0;
	// Capture: where the token's text starts in the current chunk, and the copy of earlier chunks.
	private captureFrom = 0;
	private captured = 0;
	private scratch: Buffer = EMPTY_BUFFER;
	private inScratch = false;
	// Measuring a string: UTF-8 decoding state (WHATWG) and a pending high surrogate from \uXXXX.
	private chars = 0;
	private utf8Needed = 0;
	private utf8Seen = 0;
	private utf8Lower = 0x80;
	private utf8Upper = 0xbf;
	private highSurrogate = false;

	constructor(handler: JsonEventHandler, options: JsonLexerOptions = {}) {
		this.handler = handler;
		this.captureLimit = options.captureLimit ?? DEFAULT_CAPTURE_LIMIT_BYTES;
		this.detail = options.detail ?? false;
	}

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
		this.captureFrom = start;
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
							if (++this.watchedCommas === this.watchTarget || depth <= this.maxEventLevel) this.handler.onComma(depth, kind);
						} else if (depth <= this.maxEventLevel) {
							this.handler.onComma(depth, kind);
						}
					} else if (byte === (kind === KIND_ARRAY ? 0x5d : 0x7d)) {
						index = this.close(kind, index, base + index, false);
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
				return this.fail(this.kinds[this.depth - 1] === KIND_ARRAY ? "expectedCommaOrBracket" : "expectedCommaOrBrace", offset);
			case S_STRING:
				return this.fail("unterminatedString", offset);
			case S_UNICODE:
				return this.fail("badUnicodeEscape", offset);
			default:
				return this.fail("endOfInput", offset);
		}
	}

	// -------------------------------------------------------------------------------------------

	private fail(kind: JsonErrorKind, offset: number): void {
		if (this.state === S_FAILED) return;
		this.error = { kind, offset };
		this.state = S_FAILED;
	}

	private completeValue(): void {
		this.state = this.depth === 0 ? S_DONE : S_AFTER_VALUE;
	}

	private push(kind: ContainerKind): void {
		if (this.depth === this.kinds.length) {
			const grown = new Uint8Array(this.kinds.length * 2);
			grown.set(this.kinds);
			this.kinds = grown;
		}
		this.kinds[this.depth++] = kind;
	}

	private parentKind(): ParentKind {
		return this.depth === 0 ? 0 : (this.kinds[this.depth - 1] as ContainerKind);
	}

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
				this.fail(this.kinds[this.depth - 1] === KIND_ARRAY ? "expectedCommaOrBracket" : "expectedCommaOrBrace", offset);
				return index;
			default:
				// S_DONE
				this.fail("nonWhitespaceAfter", offset);
				return index;
		}
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

	private beginToken(index: number, offset: number, isKey: boolean): void {
		this.tokenLevel = this.depth;
		this.tokenParent = this.parentKind();
		this.tokenReported = this.depth <= this.maxEventLevel;
		this.tokenCaptured = this.tokenReported && (isKey || this.detail);
		this.tokenMeasured = this.tokenReported && this.detail;
		this.token.start = offset;
		this.captureFrom = index;
		this.captured = 0;
		this.inScratch = false;
		this.token.truncated = false;
	}

	private startString(index: number, offset: number, isKey: boolean, firstKey: boolean): number {
		this.beginToken(index + 1, offset, isKey);
		this.stringIsKey = isKey;
		this.firstKey = firstKey;
		this.token.hasEscape = false;
		this.chars = 2;
		this.utf8Needed = 0;
		this.highSurrogate = false;
		this.state = S_STRING;
		return index + 1;
	}

	private readString(buffer: Buffer, start: number, end: number, base: number): number {
		const measuring = this.tokenMeasured;
		let index = start;
		if (!measuring) {
			for (; index < end; index++) {
				const byte = buffer[index]!;
				if (byte === QUOTE || byte === BACKSLASH || byte < 0x20) break;
			}
		} else {
			for (; index < end; index++) {
				const byte = buffer[index]!;
				if (byte === QUOTE || byte === BACKSLASH || byte < 0x20) break;
				this.measureByte(byte);
			}
		}
		if (index === end) return end;
		const byte = buffer[index]!;
		if (byte === QUOTE) {
			this.endString(buffer, index, base + index + 1);
			return index + 1;
		}
		if (byte === BACKSLASH) {
			if (measuring) this.measureBreak();
			this.token.hasEscape = true;
			this.state = S_ESCAPE;
			return index + 1;
		}
		this.fail("badControlCharacter", base + index);
		return index;
	}

	/** One content byte of a measured string: UTF-16 units as Buffer#toString decodes them (WHATWG). */
	private measureByte(byte: number): void {
		if (this.highSurrogate) {
			this.highSurrogate = false;
			this.chars += 6;
		}
		if (this.utf8Needed !== 0) {
			if (byte >= this.utf8Lower && byte <= this.utf8Upper) {
				this.utf8Lower = 0x80;
				this.utf8Upper = 0xbf;
				if (++this.utf8Seen === this.utf8Needed) {
					this.chars += this.utf8Needed === 3 ? 2 : 1;
					this.utf8Needed = 0;
				}
				return;
			}
			// A broken sequence is one U+FFFD; the byte then starts afresh.
			this.chars += 1;
			this.utf8Needed = 0;
			this.utf8Lower = 0x80;
			this.utf8Upper = 0xbf;
		}
		if (byte < 0x80) {
			this.chars += 1;
		} else if (byte >= 0xc2 && byte <= 0xdf) {
			this.utf8Needed = 1;
			this.utf8Seen = 0;
		} else if (byte >= 0xe0 && byte <= 0xef) {
			if (byte === 0xe0) this.utf8Lower = 0xa0;
			if (byte === 0xed) this.utf8Upper = 0x9f;
			this.utf8Needed = 2;
			this.utf8Seen = 0;
		} else if (byte >= 0xf0 && byte <= 0xf4) {
			if (byte === 0xf0) this.utf8Lower = 0x90;
			if (byte === 0xf4) this.utf8Upper = 0x8f;
			this.utf8Needed = 3;
			this.utf8Seen = 0;
		} else {
			this.chars += 1;
		}
	}

	/** An ASCII byte that is not content (quote, backslash) ends a pending UTF-8 sequence. */
	private measureBreak(): void {
		if (this.utf8Needed !== 0) {
			this.chars += 1;
			this.utf8Needed = 0;
			this.utf8Lower = 0x80;
			this.utf8Upper = 0xbf;
		}
	}

	private readEscape(buffer: Buffer, index: number, base: number): number {
		const byte = buffer[index]!;
		const measuring = this.tokenMeasured;
		if (byte === 0x75) {
			this.unicodeDigits = 0;
			this.unicodeValue = 0;
			this.state = S_UNICODE;
			return index + 1;
		}
		let unit = -1;
		switch (byte) {
			case QUOTE:
			case BACKSLASH:
			case 0x2f:
				unit = byte;
				break;
			case 0x62:
				unit = 0x08;
				break;
			case 0x66:
				unit = 0x0c;
				break;
			case 0x6e:
				unit = 0x0a;
				break;
			case 0x72:
				unit = 0x0d;
				break;
			case 0x74:
				unit = 0x09;
				break;
		}
		if (unit < 0) {
			// A non-ASCII character: V8 reports it as a bad escape or an unexpected token, by its code.
			this.fail(byte >= 0x80 ? "escapedNonAscii" : "badEscape", base + index);
			return index;
		}
		if (measuring) this.measureUnit(unit);
		this.state = S_STRING;
		return index + 1;
	}

	private readUnicode(buffer: Buffer, index: number, base: number): number {
		const digit = hexValue(buffer[index]!);
		if (digit < 0) {
			this.fail("badUnicodeEscape", base + index);
			return index;
		}
		this.unicodeValue = this.unicodeValue * 16 + digit;
		if (++this.unicodeDigits === 4) {
			if (this.tokenMeasured) this.measureUnit(this.unicodeValue);
			this.state = S_STRING;
		}
		return index + 1;
	}

	/** One UTF-16 unit from an escape; a high surrogate waits for its low half. */
	private measureUnit(unit: number): void {
		if (unit >= 0xdc00 && unit <= 0xdfff) {
			if (this.highSurrogate) {
				this.highSurrogate = false;
				this.chars += 2;
			} else {
				this.chars += 6;
			}
			return;
		}
		if (this.highSurrogate) {
			this.highSurrogate = false;
			this.chars += 6;
		}
		if (unit >= 0xd800 && unit <= 0xdbff) {
			this.highSurrogate = true;
			return;
		}
		this.chars += escapedUnitChars(unit);
	}

	private endString(buffer: Buffer, index: number, endOffset: number): void {
		if (this.tokenMeasured) {
			this.measureBreak();
			if (this.highSurrogate) {
				this.highSurrogate = false;
				this.chars += 6;
			}
		}
		const token = this.token;
		token.end = endOffset;
		token.chars = this.chars;
		if (this.stringIsKey) {
			this.state = this.firstKey ? S_COLON_FIRST : S_COLON;
			if (this.tokenReported) {
				this.closeCapture(buffer, index, this.captureLimit);
				this.handler.onKey(this.tokenLevel, token);
			}
			return;
		}
		this.completeValue();
		if (this.tokenReported) {
			if (this.tokenCaptured) this.closeCapture(buffer, index, this.captureLimit);
			else this.clearCapture();
			this.handler.onScalar(SCALAR_STRING, this.tokenLevel, token, this.tokenParent);
		}
	}

	private readNumber(buffer: Buffer, start: number, end: number, base: number): number {
		let index = start;
		for (; index < end; index++) {
			const byte = buffer[index]!;
			switch (this.numberState) {
				case N_MINUS:
					if (byte === 0x30) this.numberState = N_ZERO;
					else if (isDigit(byte)) this.numberState = N_INT;
					else {
						this.fail("noNumberAfterMinus", base + index);
						return index;
					}
					continue;
				case N_ZERO:
					if (isDigit(byte)) {
						this.fail("unexpectedCharacter", base + index);
						return index;
					}
					if (byte === 0x2e) this.numberState = N_DOT;
					else if (byte === 0x65 || byte === 0x45) this.numberState = N_EXPONENT;
					else break;
					this.token.integer = false;
					continue;
				case N_INT:
					if (isDigit(byte)) continue;
					if (byte === 0x2e) this.numberState = N_DOT;
					else if (byte === 0x65 || byte === 0x45) this.numberState = N_EXPONENT;
					else break;
					this.token.integer = false;
					continue;
				case N_DOT:
					if (!isDigit(byte)) {
						this.fail("unterminatedFraction", base + index);
						return index;
					}
					this.numberState = N_FRACTION;
					continue;
				case N_FRACTION:
					if (isDigit(byte)) continue;
					if (byte === 0x65 || byte === 0x45) {
						this.numberState = N_EXPONENT;
						continue;
					}
					break;
				case N_EXPONENT:
					if (byte === 0x2b || byte === 0x2d) this.numberState = N_EXPONENT_SIGN;
					else if (isDigit(byte)) this.numberState = N_EXPONENT_DIGITS;
					else {
						this.fail("exponentMissing", base + index);
						return index;
					}
					continue;
				case N_EXPONENT_SIGN:
					if (!isDigit(byte)) {
						this.fail("exponentMissing", base + index);
						return index;
					}
					this.numberState = N_EXPONENT_DIGITS;
					continue;
				default:
					// N_EXPONENT_DIGITS
					if (isDigit(byte)) continue;
			}
			// The byte is not part of the number: the number ends before it.
			this.endNumber(buffer, index, base + index);
			return index;
		}
		return end;
	}

	/** The number ends at `index` (absolute `offset`); false when it was incomplete (an error). */
	private endNumber(buffer: Buffer, index: number, offset: number): boolean {
		switch (this.numberState) {
			case N_MINUS:
				this.fail("noNumberAfterMinus", offset);
				return false;
			case N_DOT:
				this.fail("unterminatedFraction", offset);
				return false;
			case N_EXPONENT:
			case N_EXPONENT_SIGN:
				this.fail("exponentMissing", offset);
				return false;
		}
		this.token.end = offset;
		this.completeValue();
		if (this.tokenReported) {
			if (this.tokenCaptured) this.closeCapture(buffer, index, Number.POSITIVE_INFINITY);
			else this.clearCapture();
			this.handler.onScalar(SCALAR_NUMBER, this.tokenLevel, this.token, this.tokenParent);
		}
		return true;
	}

	private readLiteral(buffer: Buffer, index: number, base: number): number {
		const text = LITERALS[this.literal]!;
		if (buffer[index] !== text.charCodeAt(this.literalIndex)) {
			this.fail("unexpectedCharacter", base + index);
			return index;
		}
		if (++this.literalIndex < text.length) return index + 1;
		this.token.end = base + index + 1;
		this.completeValue();
		if (this.tokenReported) this.handler.onScalar(LITERAL_KINDS[this.literal]!, this.tokenLevel, this.token, this.tokenParent);
		return index + 1;
	}

	// Capture ---------------------------------------------------------------------------------

	/** The chunk ends inside a reported string or number: copy what it holds of the token. */
	private keepPartialToken(buffer: Buffer, end: number): void {
		if (!this.tokenCaptured) return;
		const inString = this.state === S_STRING || this.state === S_ESCAPE || this.state === S_UNICODE;
		if (!inString && this.state !== S_NUMBER) return;
		this.appendCapture(buffer, this.captureFrom, end, inString ? this.captureLimit : Number.POSITIVE_INFINITY);
		this.inScratch = true;
	}

	private appendCapture(buffer: Buffer, from: number, to: number, limit: number): void {
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

	private clearCapture(): void {
		this.token.bytes = EMPTY_BUFFER;
		this.token.from = 0;
		this.token.to = 0;
	}

	/** The token's text ends at `index` in `buffer`: point the token at it. */
	private closeCapture(buffer: Buffer, index: number, limit: number): void {
		const token = this.token;
		if (this.inScratch) {
			this.appendCapture(buffer, this.captureFrom, index, limit);
			token.bytes = this.scratch;
			token.from = 0;
			token.to = this.captured;
			return;
		}
		token.bytes = buffer;
		token.from = this.captureFrom;
		token.to = Math.min(index, this.captureFrom + limit);
		if (index - this.captureFrom > limit) token.truncated = true;
	}
}

// ---------------------------------------------------------------------------------------------
// Token values

/**
 * A captured string token's value, as JSON.parse would give it. A truncated capture gives an exact
 * prefix of the value: an escape or UTF-8 sequence cut by the capture limit is left out, and so is a
 * high surrogate whose low half was cut off.
 */
export function decodeStringToken(token: JsonToken): string {
	let to = token.to;
	if (token.truncated) to = trimIncompleteUtf8(token.bytes, token.from, to);
	let text = token.bytes.toString("utf8", token.from, to);
	if (token.hasEscape) text = unescapeJsonString(text, token.truncated);
	if (token.truncated && text.length > 0) {
		const last = text.charCodeAt(text.length - 1);
		if (last >= 0xd800 && last <= 0xdbff) text = text.slice(0, -1);
	}
	return text;
}

/** A captured number token's value, as JSON.parse would give it. */
export function decodeNumberToken(token: JsonToken): number {
	return Number(token.bytes.toString("latin1", token.from, token.to));
}

/** JSON.stringify(value).length of a number token, without building the string when it is plain. */
export function measureNumberToken(token: JsonToken): number {
	const length = token.to - token.from;
	// Up to 15 digits an integer prints as written (JSON has no leading zeros); "-0" prints as 0.
	if (token.integer && length <= 16) {
		const negative = token.bytes[token.from] === 0x2d;
		if (!(negative && token.bytes[token.from + 1] === 0x30) && length - (negative ? 1 : 0) <= 15) return length;
	}
	return JSON.stringify(decodeNumberToken(token)).length;
}

function trimIncompleteUtf8(bytes: Buffer, from: number, to: number): number {
	// Walk back over at most three continuation bytes to the sequence's lead byte.
	let lead = to - 1;
	while (lead >= from && lead > to - 4 && (bytes[lead]! & 0xc0) === 0x80) lead--;
	if (lead < from) return to;
	const byte = bytes[lead]!;
	const needed = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
	return to - lead < needed ? lead : to;
}

const ESCAPED_UNITS: Readonly<Record<string, string>> = { '"': '"', "\\": "\\", "/": "/", b: "\b", f: "\f", n: "\n", r: "\r", t: "\t" };

/** Undo the escapes of an already validated JSON string body; `cut` drops an escape left incomplete at its end. */
function unescapeJsonString(text: string, cut: boolean): string {
	let out = "";
	let from = 0;
	for (let at = text.indexOf("\\"); at !== -1; at = text.indexOf("\\", from)) {
		out += text.slice(from, at);
		const kind = text[at + 1];
		if (kind === undefined || (kind === "u" && at + 6 > text.length)) {
			if (cut) return out;
			break;
		}
		if (kind === "u") {
			out += String.fromCharCode(Number.parseInt(text.slice(at + 2, at + 6), 16));
			from = at + 6;
		} else {
			out += ESCAPED_UNITS[kind] ?? kind;
			from = at + 2;
		}
	}
	return out + text.slice(from);
}

// ---------------------------------------------------------------------------------------------
// Messages

const POSITIONED_MESSAGES: Readonly<Partial<Record<JsonErrorKind, string>>> = {
	noNumberAfterMinus: "No number after minus sign in JSON",
	unterminatedFraction: "Unterminated fractional number in JSON",
	exponentMissing: "Exponent part is missing a number in JSON",
	badControlCharacter: "Bad control character in string literal in JSON",
	badEscape: "Bad escaped character in JSON",
	badUnicodeEscape: "Bad Unicode escape in JSON",
	unterminatedString: "Unterminated string in JSON",
	expectedPropertyOrBrace: "Expected property name or '}' in JSON",
	expectedQuotedProperty: "Expected double-quoted property name in JSON",
	expectedColon: "Expected ':' after property name in JSON",
	expectedCommaOrBracket: "Expected ',' or ']' after array element in JSON",
	expectedCommaOrBrace: "Expected ',' or '}' after property value in JSON",
	nonWhitespaceAfter: "Unexpected non-whitespace character after JSON",
};

/** Texts V8 refuses by name rather than by character. */
const SPECIAL_SOURCES = new Set(["undefined", "NaN", "Infinity", "[object Object]"]);
/** V8 quotes the whole source up to this length, else 10 characters around the error. */
const MAX_WHOLE_SOURCE_CHARS = 20;
const CONTEXT_CHARS = 10;

/** What V8 needs to word an error: the decoded text around it. */
export interface JsonErrorSite {
	/** UTF-16 position of the error in the decoded text. */
	position: number;
	/** The decoded text's length in UTF-16 units; any number above 20 when it is long. */
	sourceLength: number;
	/** The whole decoded text when it may be short enough to quote whole (≤ 20 units), else "". */
	source: string;
	/** Up to 10 units before the position, and from the position on (at least 11 when there are). */
	before: string;
	after: string;
}

/** JSON.parse's message (V8, Node 20) for an error, worded from the text around it. */
export function formatJsonSyntaxError(kind: JsonErrorKind, site: JsonErrorSite): string {
	if (kind === "endOfInput") return "Unexpected end of JSON input";
	const positioned = POSITIONED_MESSAGES[kind];
	if (positioned !== undefined) return `${positioned} at position ${site.position}`;
	const unit = site.after.charCodeAt(0);
	if (Number.isNaN(unit)) return "Unexpected end of JSON input";
	if (kind === "escapedNonAscii" && unit <= 0xff) return `Bad escaped character in JSON at position ${site.position}`;
	if (kind === "unexpectedCharacter") {
		if (unit === 0x2d || (unit >= 0x30 && unit <= 0x39)) return `Unexpected number in JSON at position ${site.position}`;
		if (unit === QUOTE) return `Unexpected string in JSON at position ${site.position}`;
		if (SPECIAL_SOURCES.has(site.source)) return `"${site.source}" is not valid JSON`;
	}
	const token = site.after[0]!;
	if (site.sourceLength <= MAX_WHOLE_SOURCE_CHARS) return `Unexpected token '${token}', "${site.source}" is not valid JSON`;
	if (site.position < CONTEXT_CHARS) return `Unexpected token '${token}', "${site.before}${site.after.slice(0, CONTEXT_CHARS)}"... is not valid JSON`;
	if (site.after.length > CONTEXT_CHARS) return `Unexpected token '${token}', ..."${site.before}${site.after.slice(0, CONTEXT_CHARS)}"... is not valid JSON`;
	return `Unexpected token '${token}', ..."${site.before}${site.after}" is not valid JSON`;
}
