// Newlines counted in bytes (newline-count.js: the worker's counter, keyword-filter.ts's, and the
// fallback), and the search's regex pass counting its windows' lines there: the same hits, line
// numbers and step ends as counting in the text.

import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import { HitCollector } from "../../src/query/engine/collect.js";
import { countNewlines } from "../../src/prefilter/keyword-filter.js";
import { countNewlinesByIndexOf, countNewlinesInWorker } from "../../src/prefilter/newline-count.js";
import { PROGRESS_SLOTS, PROGRESS_STEP_LAST_LINE, type SearchLine } from "../../src/query/engine/protocol.js";
import { compileSearchRegexes, SearchDeadline, TextScanner } from "../../src/query/engine/scan.js";

function countNaively(bytes: Uint8Array, from: number, to: number): number {
	let count = 0;
	for (let at = from; at < to; at++) if (bytes[at] === 10) count++;
	return count;
}

test("counts the newlines of any range of bytes, across the module's 128 KiB windows", () => {
	fc.assert(
		fc.property(
			fc.uint8Array({ maxLength: 300_000 }),
			fc.nat(),
			fc.nat(),
			fc.integer({ min: 1, max: 50 }),
			(raw, a, b, every) => {
				// Newlines at a chosen density, so that some ranges hold many and some none.
				const bytes = Buffer.from(raw.map((byte, i) => (i % every === 0 ? 10 : byte === 10 ? 11 : byte)));
				const from = bytes.length === 0 ? 0 : a % bytes.length;
				const to = from + (bytes.length - from === 0 ? 0 : b % (bytes.length - from + 1));
				const expected = countNaively(bytes, from, to);
				assert.equal(countNewlinesInWorker(bytes, from, to), expected);
				assert.equal(countNewlines(bytes, from, to), expected);
				assert.equal(countNewlinesByIndexOf(bytes, from, to), expected);
			},
		),
		{ numRuns: 60, seed: 5 },
	);
	const big = Buffer.alloc(400_000, 10);
	for (const count of [countNewlinesInWorker, countNewlines, countNewlinesByIndexOf])
		assert.equal(count(big, 1, 399_999), 399_998);
});

/** Scans `text` (and, when given, its bytes) for `pattern`: the hit lines, the line count, and each step's last line as the progress slots showed it. */
function scanWith(pattern: string, text: string, bytes?: Buffer) {
	const progress = new Float64Array(PROGRESS_SLOTS);
	const shown: SearchLine[] = [];
	const compiled = compileSearchRegexes(pattern);
	const options = { contextLines: 0, maxResults: 1_000_000, maxLineChars: 1000, budgetChars: Infinity, latin1: true };
	const collector = new HitCollector(options, compiled.lineRegex, progress, (lines) => shown.push(...lines));
	const scanner = new TextScanner({
		pattern: compiled,
		collector,
		deadline: new SearchDeadline(Date.now(), 60_000),
		progress,
	});
	const stepEnds: number[] = [];
	const scanWindow = scanner.scanWindow.bind(scanner);
	scanner.scanWindow = (...args) => {
		stepEnds.push(progress[PROGRESS_STEP_LAST_LINE]);
		return scanWindow(...args);
	};
	const count = scanner.scanText(text, 1, bytes);
	collector.postBatch();
	return { count, hits: shown.filter((line) => line.hit).map((line) => line.lineNumber), stepEnds };
}

test("the regex pass counting its windows' lines in the bytes finds what it finds counting in the text", () => {
	const lines = Array.from({ length: 20_000 }, (_, i) =>
		i % 997 === 3 ? `step ${i} failed: boom` : i % 13 === 0 ? "" : `step ${i} ${"ok ".repeat(i % 40)}`,
	);
	for (const ending of ["\n", ""]) {
		const text = `${lines.join("\n")}${ending}`;
		const bytes = Buffer.from(text, "latin1");
		for (const pattern of [
			"failed",
			"boom$",
			"^step 1\\d{3} ",
			"ok ok ok ok ok ok ok ok ok ok ok ok ok ok ok ok ok ok ok ok ok ok ok ok ok ok ok ok ok ok ok ok ok ok ok ok ok ok ok",
		]) {
			const inBytes = scanWith(pattern, text, bytes);
			const inText = scanWith(pattern, text);
			assert.deepEqual(inBytes, inText, pattern);
			assert.equal(inBytes.count, lines.length);
			assert.ok(inBytes.stepEnds.length > 10, "many windows");
		}
	}
});
