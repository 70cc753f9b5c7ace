// The default pattern's fast path: a keyword automaton over the bytes of each block picks
// candidate lines, and only those are tested with the full pattern. It must never change what is
// found: every line the full pattern matches contains a keyword, and a scan through the fast path
// gives exactly the result of a scan through the exact (UTF-8, full-pattern) path.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import fc from "fast-check";
import { createDefaultConfig } from "../../src/config/config.js";
import { stripAnsi } from "../../src/lines/render.js";
import { LineScanner } from "../../src/scan/scan.js";
import { buildKeywordAutomaton, findKeywordLines } from "../../src/prefilter/keyword-automaton.js";
import { findPatternKeywords } from "../../src/regex/keywords.js";
import { DEFAULT_SIGNAL_PATTERN, defaultSignalPrefilterKeywords } from "../../src/signals/pattern.js";
import { loadRealFixtures, REAL_FIXTURES_DIR } from "../fixtures/real/fixtures.js";

const full = new RegExp(DEFAULT_SIGNAL_PATTERN, "im");
const automaton = buildKeywordAutomaton(defaultSignalPrefilterKeywords());

function keptByPrefilter(line: string): boolean {
	const bytes = Buffer.from(`${line}\n`, "utf8");
	const found: number[] = [];
	findKeywordLines(automaton, bytes, 0, bytes.length, found);
	return found.length > 0;
}

function scan(bytes: Buffer, signalRegex: RegExp) {
	const scanner = new LineScanner({ ...createDefaultConfig(), signalRegex });
	for (let at = 0; at < bytes.length; at += 65536) scanner.push(bytes.subarray(at, at + 65536));
	return scanner.end();
}

test("the prefilter keeps every line of the real fixtures that the default pattern matches", () => {
	let matched = 0;
	for (const fixture of loadRealFixtures()) {
		const lines = readFileSync(join(REAL_FIXTURES_DIR, `${fixture.name}.log`), "utf8").split("\n");
		for (const line of lines) {
			if (!full.test(stripAnsi(line.replace(/\r$/, "")))) continue;
			matched++;
			assert.ok(keptByPrefilter(line), `${fixture.name}: ${line.slice(0, 200)}`);
		}
	}
	assert.ok(matched > 1000, `${matched} matching lines checked`);
});

test("the prefilter keeps every generated line the default pattern matches", () => {
	// Lines built from the pattern's own vocabulary, noise and non-ASCII text, in any order and case.
	const words = [
		...defaultSignalPrefilterKeywords().filter((word) => /^[\x20-\x7e]+$/.test(word)),
		"ERROR",
		"Error:",
		"TypeError:",
		"error[E0308]:",
		"FAILED",
		"panicked",
		"1 failing",
		"✕",
		"✖",
		"×",
		"●",
		"[ERROR]",
		"level=error",
		'"error":',
		"09:28:58 ERROR",
		"E   assert",
		"#0 ",
		"make: ***",
		"ld returned 1 exit status",
	];
	const noise = [
		"ok",
		"PASS",
		"0 errors",
		"compiling",
		"日本語",
		"übersetzt",
		"🚀",
		"  ",
		"\t",
		":",
		"[",
		"]",
		"1",
		"0",
		"x_test.go:12:",
	];
	fc.assert(
		fc.property(
			fc.array(fc.oneof(fc.constantFrom(...words), fc.constantFrom(...noise), fc.string({ maxLength: 6 })), {
				maxLength: 8,
			}),
			fc.boolean(),
			(parts, upper) => {
				const line = (upper ? parts.join(" ").toUpperCase() : parts.join(" ")).replace(/\n/g, " ");
				if (full.test(stripAnsi(line))) assert.ok(keptByPrefilter(line), JSON.stringify(line));
			},
		),
		{ numRuns: 20_000 },
	);
});

test("a scan through the fast path finds exactly what the exact path finds", () => {
	// The same pattern in a different RegExp source is not recognised as the default: exact path.
	const exact = new RegExp(`(?:${DEFAULT_SIGNAL_PATTERN})`, "i");
	for (const fixture of loadRealFixtures()) {
		const bytes = readFileSync(join(REAL_FIXTURES_DIR, `${fixture.name}.log`));
		assert.deepEqual(scan(bytes, new RegExp(DEFAULT_SIGNAL_PATTERN, "i")), scan(bytes, exact), fixture.name);
	}
});

test("a custom pattern on pure-ASCII blocks gives the same result as on the same text with one non-ASCII character", () => {
	const pattern = /\bboom\b|^fatal/i;
	const lines = Array.from({ length: 5000 }, (_, i) =>
		i % 97 === 0 ? `fatal: step ${i}` : i % 89 === 0 ? `x boom ${i}` : `line ${i} ok`,
	);
	const ascii = scan(Buffer.from(`${lines.join("\n")}\n`), pattern);
	const mixed = scan(Buffer.from(`${lines.join("\n")}\nü\n`), pattern);
	assert.deepEqual(
		mixed.signals.map((line) => [line.lineNumber, line.text]),
		ascii.signals.map((line) => [line.lineNumber, line.text]),
	);
	assert.equal(mixed.signalMatches, ascii.signalMatches);
});

test("a byte-safe custom pattern finds the same signals through the Latin-1 view as through the exact path", () => {
	// `[e]rror` is not the default pattern's source, and byte-safe; wrapping it in `(?:.|)` makes it
	// unsafe. `E\d{4}` leaves it without keywords, so neither takes the keyword prefilter.
	const fast = /\b[e]rror\b|^fatal|\bpanicked\b|\d+ failed|E\d{4}/i;
	const exact = new RegExp(`(?:${fast.source})(?:.|)`, "i");
	for (const fixture of loadRealFixtures()) {
		const bytes = readFileSync(join(REAL_FIXTURES_DIR, `${fixture.name}.log`));
		const a = scan(bytes, fast);
		const b = scan(bytes, exact);
		assert.deepEqual(
			a.signals.map((line) => line.lineNumber),
			b.signals.map((line) => line.lineNumber),
			fixture.name,
		);
		assert.equal(a.signalMatches, b.signalMatches, fixture.name);
	}
	const withSeparator = Buffer.from(`${"x\n".repeat(100)}ok\u2028fatal here\nfatal: real\n`);
	assert.deepEqual(
		scan(withSeparator, fast).signals.map((line) => line.lineNumber),
		scan(withSeparator, exact).signals.map((line) => line.lineNumber),
	);
});

/** The same pattern without keywords: `(?!)` never matches, and leaves no literal certain. */
function withoutKeywords(pattern: RegExp): RegExp {
	return new RegExp(`${pattern.source}|(?!)`, pattern.flags);
}

test("a configured pattern with keywords finds through its prefilter exactly what the pattern finds", () => {
	const patterns = [
		/\b[e]rror\b|^fatal|\bpanicked\b|\d+ failed/i,
		/warning: unused|note:/i,
		/(?:FAIL|ERROR)\s+\S+|Traceback/,
		/\w+Exception\b/i,
	];
	for (const pattern of patterns) {
		assert.ok(findPatternKeywords(pattern.source), `${pattern} has keywords`);
		assert.equal(findPatternKeywords(withoutKeywords(pattern).source), undefined);
		for (const fixture of loadRealFixtures()) {
			const bytes = readFileSync(join(REAL_FIXTURES_DIR, `${fixture.name}.log`));
			const a = scan(bytes, pattern);
			const b = scan(bytes, withoutKeywords(pattern));
			assert.deepEqual(
				a.signals.map((line) => [line.lineNumber, line.text]),
				b.signals.map((line) => [line.lineNumber, line.text]),
				`${pattern} on ${fixture.name}`,
			);
			assert.equal(a.signalMatches, b.signalMatches, `${pattern} on ${fixture.name}`);
			assert.equal(a.totalLines, b.totalLines);
		}
	}
});

test("a configured pattern's prefilter keeps lines whose keyword ANSI escapes split, and non-ASCII and CRLF lines", () => {
	const pattern = /\bboom\b|fatal error|panicked at/i;
	const parts = [
		"boom",
		"bo\x1b[1mom",
		"fatal error",
		"fatal \x1b[31merror\x1b[0m",
		"FATAL\x1b[0m ERROR",
		"panicked at",
		"pani\x1b[2mcked at",
		"ok",
		"übersetzt",
		"日本語",
		"\r",
		"boomer",
		"x",
		" ",
	];
	fc.assert(
		fc.property(
			fc.array(fc.array(fc.constantFrom(...parts), { maxLength: 5 }), { minLength: 1, maxLength: 60 }),
			(lines) => {
				// After the head's lines, which are each tested with the pattern itself.
				const filler = Array.from({ length: 100 }, (_, i) => `step ${i}`);
				const bytes = Buffer.from(`${[...filler, ...lines.map((line) => line.join(" "))].join("\n")}\n`);
				const a = scan(bytes, pattern);
				const b = scan(bytes, withoutKeywords(pattern));
				assert.deepEqual(
					a.signals.map((line) => [line.lineNumber, line.text]),
					b.signals.map((line) => [line.lineNumber, line.text]),
				);
				assert.equal(a.signalMatches, b.signalMatches);
			},
		),
		{ numRuns: 300, seed: 7 },
	);
});

test("the keyword automaton finds exactly the lines that contain a keyword, in either case", () => {
	const small = buildKeywordAutomaton(["err", "he", "she", "his", "hers", "\xe2\x9c\x95", "e  "]);
	const naive = (line: string) =>
		["err", "he", "she", "his", "hers", "\u2715", "e  "].some((word) => line.toLowerCase().includes(word));
	fc.assert(
		fc.property(
			fc.array(
				fc
					.array(fc.constantFrom("e", "E", "r", "R", "h", "H", "s", "S", "i", " ", "x", "✕", "✖", "é", "\r"), {
						maxLength: 12,
					})
					.map((chars) => chars.join("")),
				{ minLength: 1, maxLength: 20 },
			),
			(lines) => {
				const bytes = Buffer.from(`${lines.join("\n")}\n`);
				const found: number[] = [];
				const count = findKeywordLines(small, bytes, 0, bytes.length, found);
				assert.equal(count, lines.length);
				const indexes = found.filter((_, k) => k % 2 === 1);
				assert.deepEqual(
					indexes,
					lines.flatMap((line, index) => (naive(line) ? [index] : [])),
					JSON.stringify(lines),
				);
				for (let k = 0; k < found.length; k += 2)
					assert.equal(bytes.toString("utf8", found[k], bytes.indexOf(10, found[k])), lines[found[k + 1]]);
			},
		),
		{ numRuns: 5000 },
	);
});
