import assert from "node:assert/strict";
import { test } from "node:test";
import { parseConfig } from "../src/config.js";
import { findBacktrackingRisk } from "../src/regex-safety.js";
import { LineScanner, SIGNAL_SCAN_BUDGET_MS } from "../src/scan.js";
import { createDefaultConfig } from "../src/config.js";
import { DEFAULT_SIGNAL_PATTERN } from "../src/signals.js";
import { buildView } from "../src/view.js";

test("the default signal pattern and ordinary patterns have no backtracking risk", () => {
	for (const pattern of [DEFAULT_SIGNAL_PATTERN, "error|fail", "^\\s*(?:error|fatal)\\b", "(?:ab){1,20}", "a*b*", "\\(a+\\)+", "[(a+)+]x", "(?: ?\\[[\\w-]{1,20}\\])?:"]) {
		assert.equal(findBacktrackingRisk(pattern), undefined, pattern);
	}
});

test("repeated groups that repeat or branch, and stacked unbounded quantifiers, are refused", () => {
	for (const pattern of ["(a+)+$", "(a|aa)*b", "(\\w+\\s?)*$", "(?:x+)+", "((a+)b)+", "(a|b){2,}", "(?<name>a+)+", "(?:a?){30}a{30}", "\\s*\\s*\\s*$", "(.*a){12}"]) {
		assert.ok(findBacktrackingRisk(pattern), pattern);
	}
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

test("a slow signalPattern stops being applied after the scan budget, and the view says so", () => {
	// Not catastrophic (config would refuse that), just slow on long lines: a lookahead rescans each line.
	const slow = /^(?=(?:[^\n]*x){3})/i;
	const scanner = new LineScanner({ ...createDefaultConfig(), signalRegex: slow });
	const line = `${"abc ".repeat(2000)}\n`;
	const block = Buffer.from(line.repeat(250));
	const started = performance.now();
	let pushed = 0;
	while (performance.now() - started < SIGNAL_SCAN_BUDGET_MS + 3000 && pushed < 4000) {
		scanner.push(block);
		pushed++;
	}
	const scan = scanner.end();
	const elapsed = performance.now() - started;
	assert.ok(scan.signalSearchStopped, `stopped (pushed ${pushed} blocks in ${Math.round(elapsed)} ms)`);
	assert.ok(scan.signalSearchStopped.afterMs >= SIGNAL_SCAN_BUDGET_MS);
	const view = buildView(scan, { ...createDefaultConfig(), signalRegex: slow, id: "0123456789ab", toolName: "bash" });
	assert.match(view, /signal search stopped after line \d+ \(\d+ ms: signalPattern too slow\)/);
});

test("byte-safe patterns find the same lines in UTF-8 viewed as Latin-1 as in the decoded text", async () => {
	const { isByteSafePattern } = await import("../src/regex-safety.js");
	const fc = (await import("fast-check")).default;
	for (const pattern of ["error|fail", "sk_flags", "^\\s*x", "a.b", "[^x]y", "\\Wz", "é", "\\u00e9", "\\xe9", "\\x41"]) {
		const expected = ["error|fail", "sk_flags", "\\x41"].includes(pattern);
		assert.equal(isByteSafePattern(pattern), expected, pattern);
	}
	const safePatterns = ["error", "^e\\w+r", "(?:fail|err)[:=] *[1-9]", "\\bok\\b", "[a-z]{3}!", "x$", "a\\d+b", "(ab)\\1"];
	const pieces = ["error", "ERR", "fail: 3", "ok", "x", "é", "日本", "🚀", "\u2028", "\u00a0", " ", "!", "ab", "a1b", "\r", "\t"];
	fc.assert(
		fc.property(fc.constantFrom(...safePatterns), fc.array(fc.constantFrom(...pieces), { maxLength: 8 }), (pattern, parts) => {
			assert.ok(isByteSafePattern(pattern));
			const line = parts.join("");
			const regex = new RegExp(pattern, "i");
			assert.equal(regex.test(Buffer.from(line, "utf8").toString("latin1")), regex.test(line), `${pattern} on ${JSON.stringify(line)}`);
		}),
		{ numRuns: 5000 },
	);
});
