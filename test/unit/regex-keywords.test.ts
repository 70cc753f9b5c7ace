// The keywords of a configured signal pattern (src/regex/keywords.ts): what it finds on the patterns
// users write, that it declines where no literal is certain, and the invariant, checked on random
// patterns and lines: every line the pattern matches contains one of its keywords.

import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import { findPatternKeywords, MAX_PREFILTER_KEYWORDS } from "../../src/regex/keywords.js";

test("finds the words of an alternation of words, in lower case", () => {
	assert.deepEqual(findPatternKeywords("error|FAIL|fatal|panic|exception|warn|denied"), [
		"denied",
		"error",
		"exception",
		"fail",
		"fatal",
		"panic",
		"warn",
	]);
	assert.deepEqual(findPatternKeywords("\\bFAILED\\b|panicked at"), ["failed", "panicked at"]);
	assert.deepEqual(findPatternKeywords("sk_flags"), ["sk_flags"]);
});

test("takes the strongest literal of a sequence and multiplies out small choices", () => {
	assert.deepEqual(findPatternKeywords("(?:ERROR|WARN)\\s*\\[\\d+\\]"), ["error", "warn"]);
	assert.deepEqual(findPatternKeywords("\\w+Exception"), ["exception"]);
	assert.deepEqual(findPatternKeywords("colou?r error"), ["color error", "colour error"]);
	assert.deepEqual(findPatternKeywords("(err|warn)ing"), ["erring", "warning"]);
	assert.deepEqual(findPatternKeywords("[Ee]rror: .*"), ["error: "]);
});

test("declines where no literal of three characters is certain in every match", () => {
	for (const pattern of [
		"(a+)+$",
		"E[0-9]{4}",
		"x|yz",
		"a.b",
		"\\d+ errors?|.*",
		"(?:fail)?ur",
		"(e)\\1r",
		"é+rr",
		"^$",
		"",
		"(?!error)\\w+",
	]) {
		assert.equal(findPatternKeywords(pattern), undefined, pattern);
	}
});

test("declines a pattern with more alternatives than a prefilter takes", () => {
	const words = Array.from({ length: MAX_PREFILTER_KEYWORDS + 1 }, (_, i) => `word${String(i).padStart(3, "0")}`);
	assert.equal(findPatternKeywords(words.join("|")), undefined);
	assert.equal(findPatternKeywords(words.slice(1).join("|"))?.length, MAX_PREFILTER_KEYWORDS);
});

test("keywords never hold a line terminator or a non-ASCII character", () => {
	assert.deepEqual(findPatternKeywords("abc\\ndef"), ["abc"]);
	for (const keyword of findPatternKeywords("abc\\ndef|ghi\\rjkl") ?? [])
		assert.match(keyword, /^[\x00-\x09\x0b\x0c\x0e-\x7f]+$/);
});

/** A small regex grammar over a small alphabet, so that random lines match random patterns often. */
const patternArbitrary = fc.letrec((tie) => ({
	atom: fc.oneof(
		{ weight: 6, arbitrary: fc.constantFrom("a", "b", "c", "A", "1", " ", "-", "ab", "err", "or") },
		{
			weight: 2,
			arbitrary: fc.constantFrom("[ab]", "[aB1]", "[a-c]", "\\d", "\\w", "\\s", ".", "[^a]", "\\b", "^", "$", "\\-"),
		},
		{ weight: 2, arbitrary: tie("group") },
	),
	group: fc.oneof(
		fc.tuple(tie("seq"), tie("seq")).map(([left, right]) => `(?:${left}|${right})`),
		tie("seq").map((body) => `(${body})`),
		tie("seq").map((body) => `(?=${body})`),
		tie("seq").map((body) => `(?!${body})`),
	),
	quantified: fc
		.tuple(tie("atom"), fc.constantFrom("", "", "", "?", "*", "+", "{2}", "{1,3}"))
		.map(([atom, quantifier]) => (/^(\\b|\^|\$)$/.test(String(atom)) ? String(atom) : `${atom}${quantifier}`)),
	seq: fc.array(tie("quantified"), { minLength: 1, maxLength: 5 }).map((items) => items.join("")),
	pattern: fc.array(tie("seq"), { minLength: 1, maxLength: 4 }).map((options) => options.join("|")),
})).pattern as fc.Arbitrary<string>;

const lineArbitrary = fc
	.array(fc.constantFrom("a", "b", "c", "A", "B", "1", " ", "-", "err", "or", "ERR", "ab", "\t", "é", "\r"), {
		maxLength: 14,
	})
	.map((parts) => parts.join(""));

test("every line a pattern matches contains one of its keywords (random patterns and lines)", () => {
	let checked = 0;
	fc.assert(
		fc.property(patternArbitrary, fc.array(lineArbitrary, { minLength: 1, maxLength: 30 }), (pattern, lines) => {
			const keywords = findPatternKeywords(pattern);
			if (keywords === undefined) return;
			checked++;
			for (const flags of ["i", "im", ""]) {
				const regex = new RegExp(pattern, flags);
				for (const line of lines) {
					if (!regex.test(line)) continue;
					const lower = line.toLowerCase();
					assert.ok(
						keywords.some((keyword) => lower.includes(keyword)),
						`${JSON.stringify(line)} matches /${pattern}/${flags} but holds none of ${JSON.stringify(keywords)}`,
					);
				}
			}
		}),
		{ numRuns: 3000, seed: 13 },
	);
	assert.ok(checked > 100, `only ${checked} random patterns had keywords`);
});
