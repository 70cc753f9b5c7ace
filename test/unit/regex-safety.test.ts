import assert from "node:assert/strict";
import { test } from "node:test";
import { parseConfig } from "../../src/config/config.js";
import { LINE_TAG } from "../../src/lines/stamp.js";
import { findBacktrackingRisk } from "../../src/regex/safety.js";
import { SIGNAL_SCAN_BUDGET_MS, scanText } from "../../src/scan/scan.js";
import { createDefaultConfig } from "../../src/config/config.js";
import { DEFAULT_SIGNAL_PATTERN, SIGNAL_PATTERN_PARTS } from "../../src/signals/pattern.js";
import { buildView } from "../../src/view/view.js";

test("the default signal pattern and ordinary patterns have no backtracking risk", () => {
	for (const pattern of [
		DEFAULT_SIGNAL_PATTERN,
		"error|fail",
		"^\\s*(?:error|fatal)\\b",
		"(?:ab){1,20}",
		"a*b*",
		"\\(a+\\)+",
		"[(a+)+]x",
		"(?: ?\\[[\\w-]{1,20}\\])?:",
		LINE_TAG.source,
	]) {
		assert.equal(findBacktrackingRisk(pattern), undefined, pattern);
	}
});

test("repeated groups that repeat or branch, and stacked unbounded quantifiers, are refused", () => {
	for (const pattern of [
		"(a+)+$",
		"(a|aa)*b",
		"(\\w+\\s?)*$",
		"(?:x+)+",
		"((a+)b)+",
		"(a|b){2,}",
		"(?<name>a+)+",
		"(?:a?){30}a{30}",
		"\\s*\\s*\\s*$",
		"(.*a){12}",
	]) {
		assert.ok(findBacktrackingRisk(pattern), pattern);
	}
});

test("the shapes that froze Pi are refused, each with its reason", () => {
	const refused: Array<[string, RegExp]> = [
		// Quantifiers that can split the same characters, with only empty or optional atoms between them.
		["a+(?:)a+(?:)a+b", /`a\+` and `a\+` can split the same characters/],
		["a+\\Ba+\\Ba+b", /`a\+` and `a\+` can split the same characters/],
		["a+b?a+b?a+c", /`a\+` and `a\+` can split the same characters/],
		// A large bounded count is as bad as an unbounded one.
		["a{1,30000}a{1,30000}b", /`a\{1,30000\}` and `a\{1,30000\}` can split the same characters .*millions of ways/],
		["(a+)\\1*b", /a repeated backreference \(`\\1\*`\)/],
		["(a+)\\1b", /`a\+` and `\\1` can split the same characters/],
		["(?<n>a+)\\k<n>b", /`a\+` and `\\k<n>` can split/],
		["\\s*\\s*$", /`\\s\*` and `\\s\*`/],
		[".*a.*b", /`\.\*` and `\.\*`/],
		["error.*timeout.*retry", /`\.\*` and `\.\*`/],
		["\\w+(?=.*x)y", /`\\w\+` runs the lookaround `\(\?=\.\*x\)`/],
		["^.*a.*b.*c", /`\.\*` and `\.\*`/],
		["^\\s*\\s*x", /`\\s\*` and `\\s\*`/],
		["a{1,150}a{1,150}b", /22,500 ways at one position, at most 4,096/],
		["x(?:)+\\S+\\S+y", /`\\S\+` and `\\S\+`/],
	];
	for (const [pattern, reason] of refused) {
		const risk = findBacktrackingRisk(pattern);
		assert.ok(risk, `${pattern} is refused`);
		assert.match(risk, reason, pattern);
		assert.match(risk, /time grows as a power of the line length|backtrack without bound/, pattern);
		const { config, problems } = parseConfig(JSON.stringify({ signalPattern: pattern }));
		assert.equal(config.signalPattern, DEFAULT_SIGNAL_PATTERN, pattern);
		assert.equal(problems.length, 1);
		assert.ok(problems[0].message.length <= 400, problems[0].message);
	}
});

test("realistic patterns are accepted", () => {
	const accepted = [
		"\\b(?:error|fatal|panic)\\b",
		"^\\s*ERROR\\b.*timeout",
		"\\w+Exception",
		"\\w+Exception.*",
		"error.*timeout",
		"^.*error.*timeout",
		"\\S+\\s+\\S+ failed",
		"\\S+@\\S+",
		"\\d+\\.\\d+\\.\\d+",
		"(\\w+)\\s*=\\s*(\\w+) failed",
		"\\[(?:ERROR|FATAL)\\]\\s+\\S+",
		"\\b[1-9]\\d* (?:failed|errors?)\\b",
		"a{1,60}a{1,60}b",
		...SIGNAL_PATTERN_PARTS.map((part) => part.source),
	];
	for (const pattern of accepted) assert.equal(findBacktrackingRisk(pattern), undefined, pattern);
});

test("never throws, whatever the text, and refuses groups nested too deep to check", async () => {
	const fc = (await import("fast-check")).default;
	const regexish = fc.stringMatching(/^[ab\\()[\]{}|*+?^$.,0-9<>=!:kbBdDwWsSuxc-]{0,40}$/);
	fc.assert(
		fc.property(fc.oneof(fc.string({ maxLength: 40 }), regexish), (text) => {
			const risk = findBacktrackingRisk(text);
			assert.ok(risk === undefined || typeof risk === "string");
		}),
		{ numRuns: 20_000 },
	);
	assert.match(findBacktrackingRisk(`${"(".repeat(1999)}a${")".repeat(1999)}`) ?? "", /nested more than 100 deep/);
	assert.equal(findBacktrackingRisk(`${"(?:".repeat(50)}a${")".repeat(50)}`), undefined);
});

test("a configured catastrophic signalPattern falls back to the default with a problem that says why", () => {
	const { config, problems } = parseConfig(JSON.stringify({ signalPattern: "(a+)+$" }));
	assert.equal(config.signalPattern, DEFAULT_SIGNAL_PATTERN);
	assert.equal(problems.length, 1);
	assert.match(problems[0].message, /signalPattern.*backtrack/);
});

test("each refused pattern really is slow, and the default is fast, on a line built to hurt it", () => {
	const evil = `${"a".repeat(26)}!`;
	const started = performance.now();
	new RegExp("(a+)+$", "i").test(evil);
	const slow = performance.now() - started;
	const fastStarted = performance.now();
	new RegExp(DEFAULT_SIGNAL_PATTERN, "im").test(evil.repeat(1000));
	assert.ok(performance.now() - fastStarted < slow, "the refused pattern is the slower one");
});

test("a slow signalPattern stops being applied after the scan budget, and the view says where and when", () => {
	// Not refused by config, just slow on long runs of word characters; a fake clock, 5 ms a reading.
	let clock = 0;
	const options = { ...createDefaultConfig(), signalRegex: /\w+Exception/i, now: () => (clock += 5) };
	const scan = scanText(`${"abc ".repeat(2000)}\n${"a".repeat(40_000)}\n`.repeat(200), options);
	assert.ok(scan.signalSearchStopped, "stopped");
	assert.ok(scan.signalSearchStopped.afterMs > SIGNAL_SCAN_BUDGET_MS);
	const view = buildView(scan, { ...options, id: "0123456789ab", toolName: "bash" });
	const note = `signal search stopped at line ${scan.signalSearchStopped.atLine} of 400 after ${scan.signalSearchStopped.afterMs} ms (signalPattern too slow)`;
	assert.ok(view.split("\n")[0].includes(note), view.split("\n")[0]);
});

test("the view says the signal search stopped even when no line is omitted", () => {
	let clock = 0;
	const options = { ...createDefaultConfig(), signalRegex: /\w+Exception/i, now: () => (clock += 100) };
	const scan = scanText(`${"a".repeat(40_000)}\n`.repeat(24), options);
	const view = buildView(scan, { ...options, id: "0123456789ab", toolName: "bash" });
	assert.doesNotMatch(view, /omitted/, "every line is shown");
	const note = /; signal search stopped at line 1 of 24 after (\d+) ms \(signalPattern too slow\)$/.exec(
		view.split("\n")[0],
	);
	assert.ok(note, view.split("\n")[0]);
	assert.ok(
		Number(note[1]) > SIGNAL_SCAN_BUDGET_MS && Number(note[1]) <= SIGNAL_SCAN_BUDGET_MS + 100,
		"within one window's charge of the budget",
	);
});

test("byte-safe patterns find the same lines in UTF-8 viewed as Latin-1 as in the decoded text", async () => {
	const { isByteSafePattern } = await import("../../src/regex/safety.js");
	const fc = (await import("fast-check")).default;
	for (const pattern of [
		"error|fail",
		"sk_flags",
		"^\\s*x",
		"a.b",
		"[^x]y",
		"\\Wz",
		"é",
		"\\u00e9",
		"\\xe9",
		"\\x41",
	]) {
		const expected = ["error|fail", "sk_flags", "\\x41"].includes(pattern);
		assert.equal(isByteSafePattern(pattern), expected, pattern);
	}
	const safePatterns = [
		"error",
		"^e\\w+r",
		"(?:fail|err)[:=] *[1-9]",
		"\\bok\\b",
		"[a-z]{3}!",
		"x$",
		"a\\d+b",
		"(ab)\\1",
	];
	const pieces = [
		"error",
		"ERR",
		"fail: 3",
		"ok",
		"x",
		"é",
		"日本",
		"🚀",
		"\u2028",
		"\u00a0",
		" ",
		"!",
		"ab",
		"a1b",
		"\r",
		"\t",
	];
	fc.assert(
		fc.property(
			fc.constantFrom(...safePatterns),
			fc.array(fc.constantFrom(...pieces), { maxLength: 8 }),
			(pattern, parts) => {
				assert.ok(isByteSafePattern(pattern));
				const line = parts.join("");
				const regex = new RegExp(pattern, "i");
				assert.equal(
					regex.test(Buffer.from(line, "utf8").toString("latin1")),
					regex.test(line),
					`${pattern} on ${JSON.stringify(line)}`,
				);
			},
		),
		{ numRuns: 5000 },
	);
});
