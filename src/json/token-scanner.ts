// The token half of the JSON lexer: strings (escapes checked, measured as JSON.stringify prints
// them), numbers (V8's number grammar), literals, each resumable at any byte of a chunk, and the
// grammar position they complete (state, nesting). lexer.ts adds the structure between tokens.
// Invariant: a token is reported once, whole, at its end; an error stops everything at its offset.

import { StringMeasure } from "./string-measure.js";
import * as tokens from "./token.js";
import type {
	ContainerKind,
	JsonErrorKind,
	JsonEventHandler,
	JsonSyntaxError,
	JsonToken,
	ParentKind,
	ScalarKind,
} from "./token.js";
import { TokenCapture } from "./token-capture.js";

// Module constants, not imported bindings, in the byte loops (see lexer.ts).
const { SCALAR_FALSE, SCALAR_NULL, SCALAR_NUMBER, SCALAR_STRING, SCALAR_TRUE } = tokens;

// Grammar states.
export const S_VALUE = 0;
export const S_ARRAY_FIRST = 1;
export const S_OBJECT_FIRST = 2;
export const S_KEY = 3;
export const S_COLON_FIRST = 4;
export const S_COLON = 5;
export const S_AFTER_VALUE = 6;
export const S_DONE = 7;
export const S_STRING = 8;
export const S_ESCAPE = 9;
export const S_UNICODE = 10;
export const S_NUMBER = 11;
export const S_LITERAL = 12;
export const S_FAILED = 13;

// Number states, as V8's ParseJsonNumber walks them.
export const N_MINUS = 0;
export const N_ZERO = 1;
export const N_INT = 2;
export const N_DOT = 3;
export const N_FRACTION = 4;
export const N_EXPONENT = 5;
export const N_EXPONENT_SIGN = 6;
export const N_EXPONENT_DIGITS = 7;

const LITERALS = ["true", "false", "null"] as const;
const LITERAL_KINDS: readonly ScalarKind[] = [SCALAR_TRUE, SCALAR_FALSE, SCALAR_NULL];

export const QUOTE = 0x22;
const BACKSLASH = 0x5c;

function hexValue(byte: number): number {
	if (byte >= 0x30 && byte <= 0x39) return byte - 0x30;
	if (byte >= 0x61 && byte <= 0x66) return byte - 0x57;
	if (byte >= 0x41 && byte <= 0x46) return byte - 0x37;
	return -1;
}

export function isDigit(byte: number): boolean {
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

export class JsonTokenScanner {
	/** Events deeper than this level are not reported (their tokens are checked, not captured). */
	maxEventLevel = ALL_LEVELS;
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
	protected state = S_VALUE;
	protected depth = 0;
	protected kinds = new Uint8Array(64);
	protected readonly capture = new TokenCapture();
	protected readonly token: JsonToken = this.capture.token;
	protected readonly measure = new StringMeasure();

	// The token being read.
	protected tokenReported = false;
	protected tokenCaptured = false;
	protected tokenMeasured = false;
	protected tokenLevel = 0;
	protected tokenParent: ParentKind = 0;
	protected stringIsKey = false;
	protected firstKey = false;
	protected unicodeDigits = 0;
	protected unicodeValue = 0;
	protected numberState = N_MINUS;
	protected literal = 0;
	protected literalIndex = 0;

	constructor(handler: JsonEventHandler, options: JsonLexerOptions = {}) {
		this.handler = handler;
		this.captureLimit = options.captureLimit ?? DEFAULT_CAPTURE_LIMIT_BYTES;
		this.detail = options.detail ?? false;
	}

	protected fail(kind: JsonErrorKind, offset: number): void {
		if (this.state === S_FAILED) return;
		this.error = { kind, offset };
		this.state = S_FAILED;
	}

	protected completeValue(): void {
		this.state = this.depth === 0 ? S_DONE : S_AFTER_VALUE;
	}

	protected push(kind: ContainerKind): void {
		if (this.depth === this.kinds.length) {
			const grown = new Uint8Array(this.kinds.length * 2);
			grown.set(this.kinds);
			this.kinds = grown;
		}
		this.kinds[this.depth++] = kind;
	}

	protected parentKind(): ParentKind {
		return this.depth === 0 ? 0 : (this.kinds[this.depth - 1] as ContainerKind);
	}

	protected beginToken(index: number, offset: number, isKey: boolean): void {
		this.tokenLevel = this.depth;
		this.tokenParent = this.parentKind();
		this.tokenReported = this.depth <= this.maxEventLevel;
		this.tokenCaptured = this.tokenReported && (isKey || this.detail);
		this.tokenMeasured = this.tokenReported && this.detail;
		this.token.start = offset;
		this.capture.begin(index);
	}

	protected startString(index: number, offset: number, isKey: boolean, firstKey: boolean): number {
		this.beginToken(index + 1, offset, isKey);
		this.stringIsKey = isKey;
		this.firstKey = firstKey;
		this.token.hasEscape = false;
		this.measure.start();
		this.state = S_STRING;
		return index + 1;
	}

	protected readString(buffer: Buffer, start: number, end: number, base: number): number {
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
				this.measure.addByte(byte);
			}
		}
		if (index === end) return end;
		const byte = buffer[index]!;
		if (byte === QUOTE) {
			this.endString(buffer, index, base + index + 1);
			return index + 1;
		}
		if (byte === BACKSLASH) {
			if (measuring) this.measure.breakSequence();
			this.token.hasEscape = true;
			this.state = S_ESCAPE;
			return index + 1;
		}
		this.fail("badControlCharacter", base + index);
		return index;
	}

	protected readEscape(buffer: Buffer, index: number, base: number): number {
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
		if (measuring) this.measure.addUnit(unit);
		this.state = S_STRING;
		return index + 1;
	}

	protected readUnicode(buffer: Buffer, index: number, base: number): number {
		const digit = hexValue(buffer[index]!);
		if (digit < 0) {
			this.fail("badUnicodeEscape", base + index);
			return index;
		}
		this.unicodeValue = this.unicodeValue * 16 + digit;
		if (++this.unicodeDigits === 4) {
			if (this.tokenMeasured) this.measure.addUnit(this.unicodeValue);
			this.state = S_STRING;
		}
		return index + 1;
	}

	protected endString(buffer: Buffer, index: number, endOffset: number): void {
		if (this.tokenMeasured) this.measure.end();
		const token = this.token;
		token.end = endOffset;
		token.chars = this.measure.chars;
		if (this.stringIsKey) {
			this.state = this.firstKey ? S_COLON_FIRST : S_COLON;
			if (this.tokenReported) {
				this.capture.close(buffer, index, this.captureLimit);
				this.handler.onKey(this.tokenLevel, token);
			}
			return;
		}
		this.completeValue();
		if (this.tokenReported) {
			if (this.tokenCaptured) this.capture.close(buffer, index, this.captureLimit);
			else this.capture.clear();
			this.handler.onScalar(SCALAR_STRING, this.tokenLevel, token, this.tokenParent);
		}
	}

	protected readNumber(buffer: Buffer, start: number, end: number, base: number): number {
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
	protected endNumber(buffer: Buffer, index: number, offset: number): boolean {
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
			if (this.tokenCaptured) this.capture.close(buffer, index, Number.POSITIVE_INFINITY);
			else this.capture.clear();
			this.handler.onScalar(SCALAR_NUMBER, this.tokenLevel, this.token, this.tokenParent);
		}
		return true;
	}

	protected readLiteral(buffer: Buffer, index: number, base: number): number {
		const text = LITERALS[this.literal]!;
		if (buffer[index] !== text.charCodeAt(this.literalIndex)) {
			this.fail("unexpectedCharacter", base + index);
			return index;
		}
		if (++this.literalIndex < text.length) return index + 1;
		this.token.end = base + index + 1;
		this.completeValue();
		if (this.tokenReported)
			this.handler.onScalar(LITERAL_KINDS[this.literal]!, this.tokenLevel, this.token, this.tokenParent);
		return index + 1;
	}

	/** The chunk ends inside a reported string or number: copy what it holds of the token. */
	protected keepPartialToken(buffer: Buffer, end: number): void {
		if (!this.tokenCaptured) return;
		const inString = this.state === S_STRING || this.state === S_ESCAPE || this.state === S_UNICODE;
		if (!inString && this.state !== S_NUMBER) return;
		this.capture.keepPartial(buffer, end, inString ? this.captureLimit : Number.POSITIVE_INFINITY);
	}
}
