// JSON.parse's error message for a syntax error the lexer found, worded as V8 (Node 20) words it
// from the decoded text around the error. Pure.

import type { JsonErrorKind } from "./token.js";

const QUOTE = 0x22;

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
		if (unit === 0x2d || (unit >= 0x30 && unit <= 0x39))
			return `Unexpected number in JSON at position ${site.position}`;
		if (unit === QUOTE) return `Unexpected string in JSON at position ${site.position}`;
		if (SPECIAL_SOURCES.has(site.source)) return `"${site.source}" is not valid JSON`;
	}
	const token = site.after[0]!;
	if (site.sourceLength <= MAX_WHOLE_SOURCE_CHARS)
		return `Unexpected token '${token}', "${site.source}" is not valid JSON`;
	if (site.position < CONTEXT_CHARS)
		return `Unexpected token '${token}', "${site.before}${site.after.slice(0, CONTEXT_CHARS)}"... is not valid JSON`;
	if (site.after.length > CONTEXT_CHARS)
		return `Unexpected token '${token}', ..."${site.before}${site.after.slice(0, CONTEXT_CHARS)}"... is not valid JSON`;
	return `Unexpected token '${token}', ..."${site.before}${site.after}" is not valid JSON`;
}
