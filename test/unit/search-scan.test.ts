// The search worker's regex pass (query/engine/scan.js) in the main thread: how a pattern is compiled
// and classified, the deadline and its virtual clock, and TextScanner over texts of many windows —
// every hit confirmed on its own line, the line count, and where it stops when the time is up.

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { HitCollector } from "../../src/query/engine/collect.js";
import {
	PROGRESS_RESUME_LINE,
	PROGRESS_SLOTS,
	PROGRESS_STEP_LAST_LINE,
	type SearchLine,
} from "../../src/query/engine/protocol.js";
import {
	compileSearchRegexes,
	DEADLINE_CHECK_STEPS,
	SearchDeadline,
	TextScanner,
	WINDOW_CHARS,
} from "../../src/query/engine/scan.js";

/** A scanner for `pattern` with a collector that shows every hit and no context. */
function createScanner(pattern: string, deadline = new SearchDeadline(Date.now(), 60_000)) {
	const progress = new Float64Array(PROGRESS_SLOTS);
	const shown: SearchLine[] = [];
	const compiled = compileSearchRegexes(pattern);
	const options = { contextLines: 0, maxResults: 1_000_000, maxLineChars: 1000, budgetChars: Infinity, latin1: false };
	const collector = new HitCollector(options, compiled.lineRegex, progress, (lines) => shown.push(...lines));
	const scanner = new TextScanner({ pattern: compiled, collector, deadline, progress });
	return { scanner, collector, progress, shown, hitLines: () => shown.map((line) => line.lineNumber) };
}

describe("compileSearchRegexes", () => {
	test("confirms anchored patterns on their line and runs lookarounds line by line; escapes and [^ do not count", () => {
		const classify = (pattern: string) => {
			const { needsConfirm, lineByLine, chunkRegex, lineRegex } = compileSearchRegexes(pattern);
			assert.equal(chunkRegex.flags, "gim");
			assert.equal(lineRegex.flags, "i");
			return [needsConfirm, lineByLine];
		};
		assert.deepEqual(classify("error"), [false, false]);
		assert.deepEqual(classify("^a|b$"), [true, false]);
		assert.deepEqual(classify("\\^a\\$"), [false, false]);
		assert.deepEqual(classify("[^a]x"), [false, false]);
		assert.deepEqual(classify("(?<=a)b"), [false, true]);
		assert.deepEqual(classify("a(?!b)"), [false, true]);
		assert.deepEqual(classify("\\(?=a\\)"), [false, false]);
		assert.throws(() => compileSearchRegexes("("), SyntaxError);
	});
});

describe("SearchDeadline", () => {
	test("passes timeoutMs after the search began, or on the virtual clock once as many lines were searched", () => {
		assert.equal(new SearchDeadline(Date.now(), 60_000).passed(1), false);
		assert.equal(new SearchDeadline(Date.now() - 10, 5).passed(1), true);
		const virtual = new SearchDeadline(Date.now() - 1_000_000, 100, 2);
		assert.deepEqual([virtual.passed(50), virtual.passed(51)], [false, true], "the lines before line 51 took 100 ms");
	});
});

describe("TextScanner", () => {
	const lineCount = 20_000;
	// Several windows of WINDOW_CHARS; every 97th line holds the word, some lines end in \r.
	const lines = Array.from({ length: lineCount }, (_, index) =>
		index % 97 === 5 ? `x needle ${index + 1}` : `line ${index + 1}${index % 7 === 0 ? "\r" : ""}`,
	);
	const text = `${lines.join("\n")}\n`;
	const needleLines = lines.flatMap((line, index) => (line.includes("needle") ? [index + 1] : []));

	test("finds every hit line of a text of many windows and returns its line count", () => {
		assert.ok(text.length > 5 * WINDOW_CHARS);
		for (const pattern of ["needle", "needle \\d+$", "(?<=x )needle"]) {
			const { scanner, hitLines, collector } = createScanner(pattern);
			assert.equal(scanner.scanText(text, 1), lineCount, pattern);
			assert.deepEqual(hitLines(), needleLines, pattern);
			assert.equal(collector.totalHits, needleLines.length, pattern);
			assert.equal(scanner.stoppedAtLine, 0);
		}
	});

	test("numbers the lines from textBase and confirms a match on its own line (\\r inside a line, a match across lines)", () => {
		const { scanner, shown } = createScanner("b$|c\\nd");
		assert.equal(scanner.scanText("ab\rx\nxb\r\nc\nd\n", 10), 4);
		assert.deepEqual(
			shown.map((line) => [line.lineNumber, line.text, line.matchStart, line.matchLength]),
			[[11, "xb", 1, 1]],
		);
	});

	test("stops at a window's first line once the deadline passed, saying where", () => {
		// Virtual clock, 1 ms a line, deadline after 3000 lines: checked before each window.
		const { scanner, collector, progress } = createScanner("needle", new SearchDeadline(0, 3000, 1));
		assert.equal(scanner.scanText(text, 1), -1);
		const stopped = scanner.stoppedAtLine;
		assert.ok(stopped > 3000 && stopped < lineCount, String(stopped));
		// The first lines of the windows: each window ends at the first newline WINDOW_CHARS past its start.
		const windowLines: number[] = [];
		for (let start = 0, line = 1; start < text.length;) {
			windowLines.push(line);
			const end = text.indexOf("\n", start + WINDOW_CHARS) + 1 || text.length;
			line += text.slice(start, end).split("\n").length - 1;
			start = end;
		}
		assert.equal(
			stopped,
			windowLines.find((line) => line > 3000),
			"the first window that begins past the deadline",
		);
		assert.equal(collector.totalHits, needleLines.filter((line) => line < stopped).length);
		assert.ok(progress[PROGRESS_STEP_LAST_LINE]! < stopped, "the last step ended before the line it stopped at");
	});

	test("line by line, checks the deadline every DEADLINE_CHECK_STEPS lines and keeps the progress on the line it searches", () => {
		const { scanner, progress } = createScanner("(?<=x )needle", new SearchDeadline(0, 1000, 1));
		assert.equal(scanner.scanText(text, 1), -1);
		assert.equal(scanner.stoppedAtLine, Math.ceil(1001 / DEADLINE_CHECK_STEPS) * DEADLINE_CHECK_STEPS);
		assert.equal(progress[PROGRESS_RESUME_LINE], scanner.stoppedAtLine - 1);
	});
});
