// JSON paths for overflow_query's `jsonPath` selector: parse "a.b[3]['k']" into segments, select a
// value, and print a segment prefix back as `$.a.b[3]["k"]`.
// Invariant: pure and total. Nothing throws; every failure is an { error } whose message starts with
// "jsonPath: ", names the position or the path prefix that failed, and says what was expected or what
// exists there. Only own properties are ever read (`__proto__` and `constructor` are ordinary keys).

import { shortenText } from "../lines/text.js";

/** One step of a path: an object key, or an array index. */
export type PathSegment = string | number;

export type ParseJsonPathResult = { segments: PathSegment[] } | { error: string };
export type SelectJsonPathResult = { value: unknown } | { error: string };

/** Longest accepted path, in characters. */
export const MAX_JSON_PATH_CHARS = 1_000;
/** Most keys of an object listed when a key is missing. */
export const MAX_LISTED_KEYS = 20;
/** Longest echo of one key, a scalar, or a path shown inside an error. */
const MAX_KEY_ECHO_CHARS = 40;
const MAX_SCALAR_ECHO_CHARS = 40;
const MAX_PATH_ECHO_CHARS = 80;
const MAX_PREFIX_ECHO_CHARS = 200;

/** A key that formatPathPrefix may write after a dot and parseJsonPath reads back unchanged. */
const DOT_KEY_PATTERN = /^[\p{L}_$][\p{L}\p{M}\p{N}_$-]*$/u;
const ARRAY_INDEX_PATTERN = /^(?:0|[1-9][0-9]*)$/;

/**
 * Parse a path such as `a.b[3].c`, `items[0]["key.with.dots"]`, `$.a`, `$[0]`, `[0].x` or `$`
 * (the whole document). Grammar, after trimming surrounding whitespace:
 * - an optional leading `$` (only when followed by `.`, `[` or nothing: `$ref.x` is the key `$ref`);
 * - `.key`: any characters up to the next `.` or `[` (unicode, digits, `-`, `_`, `$`, spaces);
 *   the first key may omit the dot, and `.[0]` is read as `[0]`;
 * - `[3]`: a non-negative integer index; `["key"]` / `['key']`: a quoted key with the escapes
 *   `\"` `\'` `\\` `\/` `\n` `\r` `\t` `\b` `\f` `\uXXXX`. Spaces inside the brackets are ignored.
 * Positions in errors are 1-based character positions in the trimmed path.
 */
export function parseJsonPath(path: string): ParseJsonPathResult {
	const text = path.trim();
	if (text === "") {
		return { error: "jsonPath: the path is empty; write e.g. a.b[0].c, or $ for the whole document" };
	}
	if (text.length > MAX_JSON_PATH_CHARS) {
		return { error: `jsonPath: the path is ${text.length} characters; at most ${MAX_JSON_PATH_CHARS} are allowed` };
	}

	const fail = (what: string, index: number, showFound = true, hint = ""): ParseJsonPathResult => {
		let where: string;
		if (index >= text.length) where = ` at position ${index + 1} (end of path)`;
		else if (showFound) where = ` at position ${index + 1}, found '${text[index]}'`;
		else where = ` at position ${index + 1}`;
		return { error: `jsonPath: ${what}${where} in '${echoPath(text, index)}'${hint === "" ? "" : ` (${hint})`}` };
	};

	const segments: PathSegment[] = [];
	let index = 0;
	if (text[0] === "$" && (text.length === 1 || text[1] === "." || text[1] === "[")) index = 1;
	const bodyStart = index;

	while (index < text.length) {
		const char = text[index]!;

		if (char === "." && text[index + 1] === "[") {
			index += 1; // `.[0]`, as jq writes it
			continue;
		}

		if (char === "." || (index === bodyStart && char !== "[" && char !== "]")) {
			if (char === ".") index += 1;
			const start = index;
			while (index < text.length && text[index] !== "." && text[index] !== "[" && text[index] !== "]") index += 1;
			if (index === start) {
				return fail("expected a key after '.'", index, true, "for the whole document write $");
			}
			if (index < text.length && text[index] === "]") {
				return fail("unexpected ']'", index, false, "brackets open with '['");
			}
			segments.push(text.slice(start, index));
			continue;
		}

		if (char === "[") {
			index = skipSpaces(text, index + 1);
			const next = text[index];
			if (next !== undefined && isDigit(next)) {
				const start = index;
				while (index < text.length && isDigit(text[index]!)) index += 1;
				const value = Number(text.slice(start, index));
				if (!Number.isSafeInteger(value))
					return fail("expected an array index no larger than 9007199254740991", start, false);
				index = skipSpaces(text, index);
				if (text[index] !== "]") return fail("expected ']'", index);
				segments.push(value);
				index += 1;
				continue;
			}
			if (next === '"' || next === "'") {
				const quoted = readQuotedKey(text, index);
				if ("error" in quoted) return fail(quoted.error, quoted.index, true, quoted.hint);
				index = skipSpaces(text, quoted.end);
				if (text[index] !== "]") return fail("expected ']' after the quoted key", index);
				segments.push(quoted.key);
				index += 1;
				continue;
			}
			if (next === "-") {
				return fail("expected a non-negative array index", index, true, "negative indexes are not supported");
			}
			return fail('expected an array index like [0] or a quoted key like ["key"]', index);
		}

		if (char === "]") return fail("unexpected ']'", index, false, "brackets open with '['");
		return fail("expected '.' or '[' after a bracket", index);
	}

	return { segments };
}

/**
 * Follow `segments` from `root`. A number segment on an object looks up the key String(n); a
 * string segment that is a canonical non-negative integer ("0", "12") indexes an array. A missing
 * step names the path prefix that failed and what exists there: an object's keys (up to 20, and
 * how many in all), an array's length, or a scalar's type.
 */
export function selectJsonPath(root: unknown, segments: readonly PathSegment[]): SelectJsonPathResult {
	let current: unknown = root;
	for (let index = 0; index < segments.length; index++) {
		const segment = segments[index]!;
		if (Array.isArray(current)) {
			const position = toArrayIndex(segment);
			if (position === undefined) return failStep(segments, index, describeArrayWithoutKey(current.length, segment));
			if (position >= current.length) return failStep(segments, index, describeArrayOutOfRange(current.length));
			current = current[position];
		} else if (typeof current === "object" && current !== null) {
			const key = String(segment);
			if (!Object.prototype.hasOwnProperty.call(current, key)) {
				const keys = Object.keys(current);
				return failStep(segments, index, describeObjectKeys(keys.length, keys.slice(0, MAX_LISTED_KEYS)));
			}
			current = (current as Record<string, unknown>)[key];
		} else {
			return failStep(segments, index, describeScalar(current));
		}
	}
	return { value: current };
}

/**
 * The first `count` segments (all by default) written as a path that parseJsonPath reads back:
 * `$`, then `.key` for identifier-like keys, `["key"]` (JSON-escaped) for any other key, `[3]` for indexes.
 */
export function formatPathPrefix(segments: readonly PathSegment[], count: number = segments.length): string {
	const end = Math.max(0, Math.min(count, segments.length));
	let out = "$";
	for (let index = 0; index < end; index++) {
		const segment = segments[index]!;
		if (typeof segment === "number") out += `[${segment}]`;
		else if (DOT_KEY_PATTERN.test(segment)) out += `.${segment}`;
		else out += `[${JSON.stringify(segment)}]`;
	}
	return out;
}

// ---------------------------------------------------------------------------------------------

type QuotedKeyResult = { key: string; end: number } | { error: string; index: number; hint: string };

const SIMPLE_ESCAPES: Readonly<Record<string, string>> = {
	'"': '"',
	"'": "'",
	"\\": "\\",
	"/": "/",
	n: "\n",
	r: "\r",
	t: "\t",
	b: "\b",
	f: "\f",
};

/** Read a quoted key starting at the opening quote `text[start]`; `end` is just past the closing quote. */
function readQuotedKey(text: string, start: number): QuotedKeyResult {
	const quote = text[start]!;
	let key = "";
	let index = start + 1;
	while (index < text.length) {
		const char = text[index]!;
		if (char === quote) return { key, end: index + 1 };
		if (char !== "\\") {
			key += char;
			index += 1;
			continue;
		}
		const escape = text[index + 1];
		if (escape === undefined) break;
		const simple = SIMPLE_ESCAPES[escape];
		if (simple !== undefined) {
			key += simple;
			index += 2;
			continue;
		}
		if (escape === "u") {
			const hex = text.slice(index + 2, index + 6);
			if (!/^[0-9a-fA-F]{4}$/.test(hex)) {
				return { error: "expected four hex digits after '\\u'", index: index + 2, hint: "e.g. \\u00e9" };
			}
			key += String.fromCharCode(Number.parseInt(hex, 16));
			index += 6;
			continue;
		}
		return {
			error: "unknown escape after '\\'",
			index: index + 1,
			hint: "allowed escapes: \\\" \\' \\\\ \\/ \\n \\r \\t \\b \\f \\uXXXX",
		};
	}
	return {
		error: `expected a closing ${quote}`,
		index: text.length,
		hint: `the quoted key starts at position ${start + 1}`,
	};
}

/** The array index a segment names: a number, or a canonical non-negative integer string ("0", "12"). */
export function toArrayIndex(segment: PathSegment): number | undefined {
	if (typeof segment === "number") return Number.isSafeInteger(segment) && segment >= 0 ? segment : undefined;
	if (!ARRAY_INDEX_PATTERN.test(segment)) return undefined;
	const value = Number(segment);
	return Number.isSafeInteger(value) ? value : undefined;
}

function failStep(segments: readonly PathSegment[], index: number, whatIsThere: string): SelectJsonPathResult {
	return { error: describeMissingStep(segments, index, whatIsThere) };
}

/** The error for a path whose step `index` does not exist, given what the value before it is. */
export function describeMissingStep(segments: readonly PathSegment[], index: number, whatIsThere: string): string {
	const missing = shortenMiddle(formatPathPrefix(segments, index + 1), MAX_PREFIX_ECHO_CHARS);
	const parent = shortenMiddle(formatPathPrefix(segments, index), MAX_PREFIX_ECHO_CHARS);
	return `jsonPath: ${missing} does not exist: ${parent} is ${whatIsThere}`;
}

function describeArray(length: number): string {
	if (length === 0) return "an empty array";
	return `an array of ${length} item${length === 1 ? "" : "s"}`;
}

/** An array of `length` items asked for a key that is not an index. */
export function describeArrayWithoutKey(length: number, segment: PathSegment): string {
	const hint = length === 0 ? "" : `; use an index from [0] to [${length - 1}]`;
	return `${describeArray(length)}, which has no key ${echoKey(String(segment))}${hint}`;
}

/** An array of `length` items asked for an index past its end. */
export function describeArrayOutOfRange(length: number): string {
	return `${describeArray(length)}${length === 0 ? "" : ` (indexes 0–${length - 1})`}`;
}

/** An object of `count` keys, listing `firstKeys` (its first MAX_LISTED_KEYS in Object.keys order). */
export function describeObjectKeys(count: number, firstKeys: readonly string[]): string {
	if (count === 0) return "an empty object";
	const listed = firstKeys.slice(0, MAX_LISTED_KEYS).map(echoKey).join(", ");
	if (count <= MAX_LISTED_KEYS) {
		return `an object with ${count} key${count === 1 ? "" : "s"}: ${listed}`;
	}
	return `an object with ${count} keys, the first ${MAX_LISTED_KEYS}: ${listed}, …`;
}

/** A string, number, boolean or null met where the path goes on. */
export function describeScalar(value: unknown): string {
	if (value === null) return "null";
	if (value === undefined) return "undefined";
	if (typeof value === "string") return `a string (${shortenText(JSON.stringify(value), MAX_SCALAR_ECHO_CHARS)})`;
	if (typeof value === "number" || typeof value === "boolean") return `a ${typeof value} (${String(value)})`;
	return `a ${typeof value}`;
}

function echoKey(key: string): string {
	return shortenText(JSON.stringify(key), MAX_KEY_ECHO_CHARS);
}

/** The path as shown in a parse error: whole when short, else a window around `index`. */
function echoPath(text: string, index: number): string {
	if (text.length <= MAX_PATH_ECHO_CHARS) return text;
	const half = Math.floor(MAX_PATH_ECHO_CHARS / 2);
	const start = Math.max(0, Math.min(index - half, text.length - MAX_PATH_ECHO_CHARS));
	const end = start + MAX_PATH_ECHO_CHARS;
	return `${start > 0 ? "…" : ""}${text.slice(start, end)}${end < text.length ? "…" : ""}`;
}

function shortenMiddle(text: string, maxChars: number): string {
	if (text.length <= maxChars) return text;
	const keep = maxChars - 1;
	const head = Math.ceil(keep / 2);
	return `${text.slice(0, head)}…${text.slice(text.length - (keep - head))}`;
}

function skipSpaces(text: string, index: number): number {
	let position = index;
	while (position < text.length && (text[position] === " " || text[position] === "\t")) position += 1;
	return position;
}

function isDigit(char: string): boolean {
	return char >= "0" && char <= "9";
}
