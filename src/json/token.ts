// What the JSON lexer reports: container and scalar kinds, the reused token (a window on the bytes
// it captured), the event handler, syntax errors by kind and offset, and a captured token's value
// as JSON.parse would give it. Pure; no state beyond the token itself.

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
export type ScalarKind =
	typeof SCALAR_STRING | typeof SCALAR_NUMBER | typeof SCALAR_TRUE | typeof SCALAR_FALSE | typeof SCALAR_NULL;

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

export const EMPTY_BUFFER = Buffer.alloc(0);

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

const ESCAPED_UNITS: Readonly<Record<string, string>> = {
	'"': '"',
	"\\": "\\",
	"/": "/",
	b: "\b",
	f: "\f",
	n: "\n",
	r: "\r",
	t: "\t",
};

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
