// Tests for src/regex/parse.ts: regexpp's AST mapped to the nodes safety.ts and keywords.ts read,
// with the character each Annex B escape stands for in V8, and a reason instead of a throw.

import assert from "node:assert/strict";
import { test } from "node:test";
import { charSet, LINE_TERMINATORS, rangeSet } from "../../src/regex/charset.js";
import { findPatternKeywords } from "../../src/regex/keywords.js";
import { parsePattern, type RegexNode } from "../../src/regex/parse.js";

function parsedRoot(source: string): RegexNode {
	const parsed = parsePattern(source);
	assert.ok(!("error" in parsed), source);
	return parsed.root;
}

test("reads legacy octal escapes and `\\c` in a class as the characters V8 matches", () => {
	assert.ok(new RegExp("\\12").test("\n") && new RegExp("[\\c1]").test("\x11"));
	assert.deepEqual(parsedRoot("\\12"), { kind: "seq", items: [{ kind: "chars", set: charSet(10) }] });
	assert.deepEqual(parsedRoot("[\\c1]"), { kind: "seq", items: [{ kind: "chars", set: charSet(0x11) }] });
	assert.deepEqual(parsedRoot("[\\0-\\x1f]"), { kind: "seq", items: [{ kind: "chars", set: rangeSet(0, 31) }] });
	const newline = parsedRoot("\\12");
	assert.ok(
		newline.kind === "seq" && newline.items[0]!.kind === "chars" && (newline.items[0]!.set & LINE_TERMINATORS) > 0n,
	);
});

test("numbers capturing groups in the order they open and keeps their names", () => {
	const parsed = parsePattern("(a(?<inner>b))(?:c)(d)\\k<inner>\\3");
	assert.ok(!("error" in parsed));
	assert.deepEqual(new Set(parsed.groups.keys()), new Set([1, 2, "inner", 3]));
	assert.equal(parsed.groups.get(2), parsed.groups.get("inner"));
	const outer = parsed.groups.get(1);
	assert.ok(outer?.kind === "group" && outer.body.kind === "seq" && outer.body.items[1] === parsed.groups.get(2));
});

test("gives the reason for a source that is not a regex, and never throws", () => {
	assert.deepEqual(parsePattern("(a"), { error: "Invalid regular expression: /(a/: Unterminated group" });
	assert.equal(findPatternKeywords("(error"), undefined);
});

test("a class of control characters gives the keyword the pattern really needs", () => {
	assert.deepEqual(findPatternKeywords("err[\\c1]or"), ["err\x11or"]);
});
