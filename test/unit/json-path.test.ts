// Tests for src/json/path.ts: the path grammar, positioned parse errors, selection with errors that
// say what exists, prototype safety, and formatPathPrefix round-tripping through parseJsonPath.

import assert from "node:assert/strict";
import { describe, test } from "node:test";

import {
	MAX_JSON_PATH_CHARS,
	formatPathPrefix,
	parseJsonPath,
	selectJsonPath,
	type PathSegment,
} from "../../src/json/path.js";

function assertParses(path: string, expected: PathSegment[]): void {
	const result = parseJsonPath(path);
	assert.ok("segments" in result, `${JSON.stringify(path)} should parse, got ${JSON.stringify(result)}`);
	assert.deepEqual(result.segments, expected, path);
}

function parseError(path: string): string {
	const result = parseJsonPath(path);
	assert.ok("error" in result, `${JSON.stringify(path)} should fail, got ${JSON.stringify(result)}`);
	assert.ok(result.error.startsWith("jsonPath: "), result.error);
	return result.error;
}

function select(root: unknown, path: string): unknown {
	const parsed = parseJsonPath(path);
	assert.ok("segments" in parsed, JSON.stringify(parsed));
	const result = selectJsonPath(root, parsed.segments);
	assert.ok("value" in result, `${path} should select, got ${JSON.stringify(result)}`);
	return result.value;
}

function selectError(root: unknown, path: string): string {
	const parsed = parseJsonPath(path);
	assert.ok("segments" in parsed, JSON.stringify(parsed));
	const result = selectJsonPath(root, parsed.segments);
	assert.ok("error" in result, `${path} should fail, got ${JSON.stringify(result)}`);
	assert.ok(result.error.startsWith("jsonPath: "), result.error);
	return result.error;
}

const DOC = {
	a: { b: [10, 20, { c: "deep" }], s: "hello world", n: 42, t: true, z: null },
	items: [{ "key.with.dots": 1, "br[ack]ets": 2, 'q"uote': 3, "it's": 4, "back\\slash": 5 }],
	empty: {},
	none: [],
	ключ: { 名前: "unicode", "😀": "emoji" },
};

describe("parseJsonPath grammar", () => {
	test("reads dotted keys and bracket indexes", () => {
		assertParses("a.b[3].c", ["a", "b", 3, "c"]);
	});

	test("reads a quoted key holding dots", () => {
		assertParses('items[0]["key.with.dots"]', ["items", 0, "key.with.dots"]);
	});

	test("treats a leading $ as the document root", () => {
		assertParses("$.a", ["a"]);
		assertParses("$[0]", [0]);
		assertParses("$", []);
		assertParses("$.a.b[3]", ["a", "b", 3]);
	});

	test("lets the path start with a bracket", () => {
		assertParses("[0].x", [0, "x"]);
		assertParses('["a"].b', ["a", "b"]);
	});

	test("accepts a jq-style leading dot and .[index]", () => {
		assertParses(".a.b", ["a", "b"]);
		assertParses(".[0]", [0]);
		assertParses("a.[2]", ["a", 2]);
	});

	test("reads a key starting with $ as a key when no dot or bracket follows the $", () => {
		assertParses("$ref.x", ["$ref", "x"]);
		assertParses("$.$ref", ["$ref"]);
		assertParses("$$", ["$$"]);
	});

	test("reads digits, dashes, underscores and $ inside dotted keys, and keeps digit keys as strings", () => {
		assertParses("a.b-c.d_e.f$g.0.12", ["a", "b-c", "d_e", "f$g", "0", "12"]);
	});

	test("reads unicode keys after a dot and in quotes", () => {
		assertParses("ключ.名前", ["ключ", "名前"]);
		assertParses('ключ["😀"]', ["ключ", "😀"]);
	});

	test("reads single- and double-quoted keys holding brackets, dots and the other quote", () => {
		assertParses(`["br[ack]ets"]`, ["br[ack]ets"]);
		assertParses(`['say "hi"']`, ['say "hi"']);
		assertParses(`["it's"]`, ["it's"]);
		assertParses(`['a.b']['c[0]']`, ["a.b", "c[0]"]);
	});

	test("decodes backslash escapes in quoted keys", () => {
		assertParses(String.raw`["q\"uote"]`, ['q"uote']);
		assertParses(String.raw`['it\'s']`, ["it's"]);
		assertParses(String.raw`["back\\slash"]`, ["back\\slash"]);
		assertParses(String.raw`["line\nbreak\ttab\/slash"]`, ["line\nbreak\ttab/slash"]);
		assertParses(String.raw`["caf\u00e9"]`, ["café"]);
	});

	test("accepts an empty quoted key", () => {
		assertParses('[""]', [""]);
	});

	test("ignores spaces around the path and inside brackets", () => {
		assertParses("  a[ 2 ][ 'x' ]  ", ["a", 2, "x"]);
	});

	test("reads large indexes exactly", () => {
		assertParses("a[9007199254740991]", ["a", 9007199254740991]);
	});
});

describe("parseJsonPath errors", () => {
	test("names the position and what was expected for an unclosed bracket", () => {
		assert.equal(parseError("a[3"), "jsonPath: expected ']' at position 4 (end of path) in 'a[3'");
	});

	test("names the character found instead of the expected one", () => {
		assert.equal(parseError("a[3x]"), "jsonPath: expected ']' at position 4, found 'x' in 'a[3x]'");
	});

	test("rejects an empty or whitespace-only path", () => {
		assert.match(parseError(""), /path is empty/);
		assert.match(parseError("   \t "), /path is empty/);
	});

	test("rejects a path longer than the limit and accepts one at the limit", () => {
		assert.match(parseError("a".repeat(MAX_JSON_PATH_CHARS + 1)), /1001 characters; at most 1000/);
		assertParses("a".repeat(MAX_JSON_PATH_CHARS), ["a".repeat(MAX_JSON_PATH_CHARS)]);
	});

	test("rejects an empty key after a dot and points at it", () => {
		assert.match(parseError("a..b"), /expected a key after '\.' at position 3, found '\.'/);
		assert.match(parseError("a."), /expected a key after '\.' at position 3 \(end of path\)/);
		assert.match(parseError("$."), /position 3 \(end of path\)/);
		assert.match(parseError("."), /for the whole document write \$/);
	});

	test("rejects negative indexes, wildcards and filters inside brackets", () => {
		assert.match(parseError("a[-1]"), /non-negative array index at position 3.*negative indexes are not supported/);
		assert.match(parseError("a[*]"), /expected an array index like \[0\] or a quoted key.* at position 3, found '\*'/);
		assert.match(parseError("a[?(@.x)]"), /position 3, found '\?'/);
		assert.match(parseError("a[]"), /position 3, found '\]'/);
		assert.match(parseError("a[1.5]"), /expected '\]' at position 4, found '\.'/);
	});

	test("rejects a stray closing bracket", () => {
		assert.match(parseError("a]b"), /unexpected '\]' at position 2/);
		assert.match(parseError("a[0]]"), /unexpected '\]' at position 5/);
	});

	test("rejects text straight after a bracket", () => {
		assert.match(parseError("a[0]x"), /expected '\.' or '\[' after a bracket at position 5, found 'x'/);
		assert.match(parseError('["a"]b'), /position 6, found 'b'/);
	});

	test("rejects an unterminated quoted key and says where it started", () => {
		const error = parseError('a["abc');
		assert.match(error, /expected a closing " at position 7 \(end of path\)/);
		assert.match(error, /the quoted key starts at position 3/);
		assert.match(parseError(String.raw`["abc\"]`), /expected a closing "/);
		assert.match(parseError('["abc\\'), /expected a closing "/);
	});

	test("rejects a quoted key not followed by ']'", () => {
		assert.match(parseError('["a"x]'), /expected '\]' after the quoted key at position 5, found 'x'/);
	});

	test("rejects unknown and short escapes and lists the allowed ones", () => {
		const error = parseError(String.raw`["a\qb"]`);
		assert.match(error, /unknown escape after '\\' at position 5, found 'q'/);
		assert.match(error, /allowed escapes/);
		assert.match(parseError(String.raw`["\u12"]`), /expected four hex digits after '\\u' at position 5/);
	});

	test("rejects an index too large to be exact", () => {
		assert.match(parseError("a[99999999999999999999]"), /no larger than 9007199254740991 at position 3/);
	});

	test("shows a window of a long path around the error", () => {
		const error = parseError(`${"x".repeat(300)}[`);
		assert.match(error, /position 302 \(end of path\)/);
		assert.ok(error.length < 200, `error is ${error.length} chars`);
		assert.match(error, /'…x+\['/);
	});
});

describe("selectJsonPath", () => {
	test("selects nested values through objects and arrays", () => {
		assert.equal(select(DOC, "a.b[2].c"), "deep");
		assert.equal(select(DOC, "$.a.b[0]"), 10);
		assert.equal(select(DOC, 'items[0]["key.with.dots"]'), 1);
		assert.equal(select(DOC, `items[0]["br[ack]ets"]`), 2);
		assert.equal(select(DOC, String.raw`items[0]["q\"uote"]`), 3);
		assert.equal(select(DOC, `items[0]['it\\'s']`), 4);
		assert.equal(select(DOC, String.raw`items[0]["back\\slash"]`), 5);
	});

	test("returns the whole document for $", () => {
		assert.equal(select(DOC, "$"), DOC);
		assert.equal(select([1, 2], "$[1]"), 2);
	});

	test("returns null, false and other falsy values as values, not as missing", () => {
		assert.equal(select(DOC, "a.z"), null);
		assert.equal(select({ f: false, zero: 0, s: "" }, "f"), false);
		assert.equal(select({ zero: 0 }, "zero"), 0);
		assert.equal(select({ s: "" }, "s"), "");
	});

	test("selects unicode keys", () => {
		assert.equal(select(DOC, "ключ.名前"), "unicode");
		assert.equal(select(DOC, 'ключ["😀"]'), "emoji");
	});

	test("uses a digit string as an array index and a number as an object key", () => {
		assert.equal(select(DOC, "a.b.1"), 20);
		assert.equal(select({ "3": "three" }, "[3]"), "three");
		assert.deepEqual(selectJsonPath([5, 6], ["1"]), { value: 6 });
	});

	test("does not treat non-canonical digit strings as array indexes", () => {
		assert.match(selectError(DOC, 'a.b["01"]'), /has no key "01"/);
		assert.match(selectError(DOC, 'a.b["-1"]'), /has no key "-1"/);
	});

	test("names the failing prefix and lists the keys of the object when a key is missing", () => {
		assert.equal(
			selectError(DOC, "a.x"),
			'jsonPath: $.a.x does not exist: $.a is an object with 5 keys: "b", "s", "n", "t", "z"',
		);
	});

	test("lists at most 20 keys and says how many there are in all", () => {
		const wide = Object.fromEntries(Array.from({ length: 45 }, (_, index) => [`k${index}`, index]));
		const error = selectError({ wide }, "wide.missing");
		assert.match(error, /\$\.wide is an object with 45 keys, the first 20: "k0", "k1",/);
		assert.ok(error.includes('"k19"'));
		assert.ok(!error.includes('"k20"'));
	});

	test("shortens very long keys in the listing", () => {
		const error = selectError({ ["k".repeat(500)]: 1 }, "other");
		assert.ok(error.length < 120, `error is ${error.length} chars`);
		assert.match(error, /…/);
	});

	test("says an object is empty", () => {
		assert.equal(selectError(DOC, "empty.x"), "jsonPath: $.empty.x does not exist: $.empty is an empty object");
	});

	test("states the array length when an index is out of range", () => {
		assert.equal(
			selectError(DOC, "a.b[7]"),
			"jsonPath: $.a.b[7] does not exist: $.a.b is an array of 3 items (indexes 0–2)",
		);
		assert.equal(selectError([1], "[1]"), "jsonPath: $[1] does not exist: $ is an array of 1 item (indexes 0–0)");
		assert.equal(selectError(DOC, "none[0]"), "jsonPath: $.none[0] does not exist: $.none is an empty array");
	});

	test("says an array has no named keys and suggests an index", () => {
		assert.equal(
			selectError(DOC, "a.b.length"),
			'jsonPath: $.a.b.length does not exist: $.a.b is an array of 3 items, which has no key "length"; use an index from [0] to [2]',
		);
	});

	test("names the type of a scalar met in the middle of the path", () => {
		assert.equal(selectError(DOC, "a.s.x"), 'jsonPath: $.a.s.x does not exist: $.a.s is a string ("hello world")');
		assert.equal(selectError(DOC, "a.n[0]"), "jsonPath: $.a.n[0] does not exist: $.a.n is a number (42)");
		assert.equal(selectError(DOC, "a.t.x"), "jsonPath: $.a.t.x does not exist: $.a.t is a boolean (true)");
		assert.equal(selectError(DOC, "a.z.x"), "jsonPath: $.a.z.x does not exist: $.a.z is null");
		assert.match(selectError("x".repeat(500), "[0]"), /\$ is a string \("x+…\)$/);
	});

	test("never walks the prototype: __proto__, constructor and toString are ordinary missing keys", () => {
		for (const key of ["__proto__", "constructor", "toString", "hasOwnProperty"]) {
			assert.match(selectError({ a: 1 }, `["${key}"]`), /does not exist: \$ is an object with 1 key: "a"/, key);
			assert.match(selectError({ a: 1 }, key), /does not exist/, key);
		}
		assert.match(selectError([1, 2], "constructor"), /has no key "constructor"/);
		assert.match(selectError("text", "length"), /is a string/);
	});

	test("finds __proto__ and constructor when they are the document's own keys", () => {
		const parsed = JSON.parse('{"__proto__": {"polluted": true}, "constructor": 7}') as unknown;
		assert.deepEqual(select(parsed, '["__proto__"].polluted'), true);
		assert.equal(select(parsed, "constructor"), 7);
		assert.equal(({} as Record<string, unknown>).polluted, undefined);
	});

	test("leaves the document unchanged", () => {
		const before = JSON.stringify(DOC);
		select(DOC, "a.b[2]");
		selectError(DOC, "a.missing");
		assert.equal(JSON.stringify(DOC), before);
	});
});

describe("formatPathPrefix", () => {
	test("writes identifier keys with dots, indexes in brackets and other keys quoted", () => {
		assert.equal(formatPathPrefix(["a", "b", 3, "key.with.dots"], 4), '$.a.b[3]["key.with.dots"]');
	});

	test("writes only the first count segments and $ for none", () => {
		assert.equal(formatPathPrefix(["a", "b", 3], 2), "$.a.b");
		assert.equal(formatPathPrefix(["a"], 0), "$");
		assert.equal(formatPathPrefix([], 5), "$");
		assert.equal(formatPathPrefix(["a", 1]), "$.a[1]");
	});

	test("quotes digit keys so they stay object keys", () => {
		assert.equal(formatPathPrefix(["a", "0"], 2), '$.a["0"]');
	});

	test("reads back every formatted prefix to the same segments", () => {
		const cases: PathSegment[][] = [
			["a", "b", 3, "c"],
			["key.with.dots", "br[ack]ets", 'q"uote', "it's", "back\\slash"],
			["ключ", "名前", "😀", "café", "x y", "", "0", "12", "$ref", "a-b", "-a", "line\nbreak", "\u0001"],
			[0, 1, 9007199254740991],
		];
		for (const segments of cases) {
			const path = formatPathPrefix(segments, segments.length);
			assert.deepEqual(parseJsonPath(path), { segments }, path);
		}
	});
});
