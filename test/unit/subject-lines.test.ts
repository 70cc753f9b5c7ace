// Tests for the subject-line rule of the signal policy (src/signals/blocks.ts: findSubjectTokens,
// findSubjectLines): a line just above a signal line that names the signal's subject (a
// benchmark's table row, a test's RUN line) is shown as its context, at its true line number, when
// room allows; common words, numbers, a location, a tag, a subject only far away, or common ground
// pull nothing. Unit cases and the view of a text; the run through the real Pi runtime is in
// test/e2e/view.test.ts.

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { createDefaultConfig } from "../../src/config/config.js";
import { findSubjectLines, findSubjectTokens, SUBJECT_LOOKBACK_LINES } from "../../src/signals/blocks.js";
import { buildViewFromText } from "../../src/view/compose.js";
import { benchmarkOutput, tableRow } from "../helpers/subject-output.js";
import { parseViewLines } from "../fixtures/real/fixtures.js";

describe("findSubjectTokens: the distinctive names of a signal line", () => {
	test("takes a test's or a benchmark's name, a qualified name, a camelCase name", () => {
		assert.deepEqual(
			findSubjectTokens(
				"\ttest_parse_invoice_lines (0001_unversi) - Field 'mean' has failed PercentageRegressionCheck: 16498.725551245 > 400.000000000",
			),
			["test_parse_invoice_lines", "PercentageRegressionCheck"],
		);
		assert.deepEqual(
			findSubjectTokens("FAILED tests/test_cart.py::test_bulk_coupon_discount[10] - AssertionError: assert 90 == 80"),
			["tests/test_cart.py::test_bulk_coupon_discount"],
		);
		assert.deepEqual(findSubjectTokens("--- FAIL: TestTransferBothWays (0.00s)"), ["TestTransferBothWays"]);
		assert.deepEqual(findSubjectTokens("panic: runtime error in example.com/bank/ledger.Transfer"), [
			"example.com/bank/ledger.Transfer",
		]);
	});

	test("takes no common word, number, location, tag in brackets, capitals-only id or the pattern's own words", () => {
		for (const signal of [
			"Error: the build failed because something went wrong",
			"error: exit status 137 after 3.5 seconds (pid 4242, 0x7ffe91b31748)",
			"src/ledger_total.c:42:7: error: expected ';' before 'return'",
			"make[2]: *** [CMakeFiles/importer.dir/build.make:105: importer] Error 1",
			"warning: comparison of integer expressions of different signedness [-Wsign-compare]",
			'  warning: Import "os" is not accessed (reportUnusedImport)',
			"[pid  8890] <... openat resumed>) = -1 ENOENT AT_FDCWD O_RDONLY",
			"java.lang.IllegalStateException: java.io.UncheckedIOException",
			"error: 'size_t' was not declared; did you mean 'std::string' in __init__.py",
			"fatal: unable to access https://example.com/repo_name.git/: 403",
		]) {
			assert.deepEqual(findSubjectTokens(signal), [], signal);
		}
		assert.deepEqual(
			findSubjectTokens("packages/pkg-17/src/mod12.ts(6,10): error TS2304: Cannot find name 'renderLabel'."),
			["renderLabel"],
			"the location goes, the name stays",
		);
	});
});

describe("findSubjectLines: which line above names the subject", () => {
	const signal = "FAILED test_bench_case_017 - Field 'mean' has failed PercentageRegressionCheck: 16498.7 > 400.0";
	/** 20 table rows numbered from 0, then `filler` lines. */
	const above = (filler: readonly string[]) => [...Array.from({ length: 20 }, (_, n) => tableRow(n)), ...filler];

	test("takes the nearest line carrying the subject, 10 lines up past noise lines", () => {
		const lines = above(["-".repeat(40), "Legend:", "  Outliers: 1 Standard Deviation from Mean"]);
		assert.deepEqual(findSubjectLines(signal, lines), [17]);
	});

	test("takes nothing for a signal of common words and numbers, even with lines that share them", () => {
		const lines = ["the build failed at step 3", "step 3: compile", "build took 12.5 s"];
		assert.deepEqual(findSubjectLines("Error: the build failed at step 3 after 12.5 s", lines), []);
	});

	test("takes nothing when the subject is only in far-away lines", () => {
		const far = [
			tableRow(17),
			...Array.from({ length: SUBJECT_LOOKBACK_LINES }, (_, n) => `worker ${n % 4}: batch ${n} posted`),
		];
		assert.deepEqual(findSubjectLines(signal, far), [], "one line beyond the window");
		assert.deepEqual(
			findSubjectLines(signal, far.slice(0, SUBJECT_LOOKBACK_LINES)),
			[0],
			"just within the window: taken",
		);
	});

	test("takes nothing from common ground: a name every line nearby carries", () => {
		const lines = Array.from(
			{ length: 6 },
			(_, n) => `src/ledger_total.c: note: in expansion of macro 'ledger_sum' (${n})`,
		);
		assert.deepEqual(findSubjectLines("ledger_sum: overflow in src/ledger_total.c", lines), []);
	});

	test("takes nothing when the nearest line naming the subject is shown already, a blank line or the signal again", () => {
		const lines = above(["-".repeat(40)]);
		assert.deepEqual(
			findSubjectLines(signal, lines, (index) => index === 17),
			[],
			"shown already: the subject is on screen",
		);
		assert.deepEqual(
			findSubjectLines(signal, [tableRow(17), signal, "   "]),
			[0],
			"the repeat and the blank are passed over",
		);
	});
});

describe("the view shows a subject line as context", () => {
	const options = { ...createDefaultConfig(), id: "0123456789ab", toolName: "bash" };

	test("a table row 10 lines above a signal in the middle, at its true line number", async () => {
		const { lines, row, signal } = benchmarkOutput(3000, 17, 10, 3000);
		const view = await buildViewFromText(lines.join("\n") + "\n", options);
		const shown = parseViewLines(view.text);
		assert.equal(shown.get(signal), `: ${lines[signal - 1]}`);
		assert.equal(shown.get(row), `- ${tableRow(17)}`);
		// Above the row, nothing: it is the row that names the subject, not a window of lines. (The nine
		// lines between it and the signal are a gap the room left shows.)
		assert.ok(!shown.has(row - 1), "only the row that names it");
		assert.ok(view.text.length <= options.thresholdChars);
	});

	test("a table row just above the tail, for a signal in the tail", async () => {
		const { lines, row, signal } = benchmarkOutput(3000, 95, 10, 72);
		const view = await buildViewFromText(lines.join("\n") + "\n", options);
		const shown = parseViewLines(view.text);
		assert.ok(
			lines.length - signal < options.tailLines && lines.length - row >= options.tailLines,
			"the signal in the tail, the row above it",
		);
		assert.equal(shown.get(signal), `: ${lines[signal - 1]}`);
		assert.equal(shown.get(row), `- ${tableRow(95)}`);
	});

	test("a traceback's last frames above the tail, for the exception line that opens it", async () => {
		const failure = (k: number) => [
			"Traceback (most recent call last):",
			`  File "/srv/app/arbiter.py", line ${589 + k}, in spawn_worker`,
			"    worker.init_process()",
			`  File "/srv/shop/wsgi.py", line ${3 + k}, in <module>`,
			`    from shop.settings_${k} import *`,
			`ModuleNotFoundError: No module named 'shop.settings_${k}'`,
		];
		// A worker failed to boot five times before: the frames' shapes are not rare, shown only as context.
		const lines: string[] = [];
		for (let i = 0; i < 3000; i++) {
			if (i % 600 === 300) lines.push(...failure(i));
			lines.push(`worker ${i % 7} handled request ${i} in ${i % 50} ms`);
		}
		lines.push(...failure(0), ...Array.from({ length: options.tailLines - 1 }, (_, i) => `worker exiting ${i}`));
		const shown = parseViewLines((await buildViewFromText(lines.join("\n") + "\n", options)).text);
		const exception = lines.length - options.tailLines + 1;
		assert.match(lines[exception - 1], /^ModuleNotFoundError/, "the exception line is the tail's first");
		for (let line = exception - 4; line < exception; line++)
			assert.equal(shown.get(line), `- ${lines[line - 1]}`, `line ${line}, above the tail, is its context`);
		assert.ok(!shown.has(exception - 6), "four lines, as any signal line's leading context");
	});

	test("an indented finding's parent above the tail, for the finding that opens it", async () => {
		const routine = Array.from({ length: 3000 }, (_, i) =>
			i % 2 === 0 ? `Results of round ${i}:` : `\tbench_${i % 9}: ${i % 40} us`,
		);
		const lines = [
			...routine,
			"Results of round 3000:",
			"\tparse_invoice_lines (0001) - Field 'mean' has failed PercentageRegressionCheck: 16498 > 400",
			...Array.from({ length: options.tailLines - 1 }, (_, i) => `summary row ${i}`),
		];
		const shown = parseViewLines((await buildViewFromText(lines.join("\n") + "\n", options)).text);
		assert.equal(shown.get(routine.length + 1), "- Results of round 3000:");
		assert.ok(!shown.has(routine.length), "its parent only");
	});

	test("no row when the subject is only far above", async () => {
		const { lines, row, signal } = benchmarkOutput(3000, 17, SUBJECT_LOOKBACK_LINES + 20, 3000);
		const shown = parseViewLines((await buildViewFromText(lines.join("\n") + "\n", options)).text);
		assert.ok(shown.has(signal) && !shown.has(row));
	});

	test("without room the subject line goes before the signal line does", async () => {
		const { lines, row, signal } = benchmarkOutput(3000, 17, 10, 3000);
		// A long signal line: above the smallest budget there is room for it and not for its subject as well
		// (an error's context comes before the tail's oldest lines, so a short one keeps it down to 1 000 chars).
		lines[signal - 1] += ` (rounds: ${Array.from({ length: 40 }, (_, i) => 16000 + i * 13).join(", ")})`;
		const text = lines.join("\n") + "\n";
		let view = (await buildViewFromText(text, options)).text;
		assert.ok(parseViewLines(view).has(row), "with room, the row is shown");
		let threshold = view.length;
		for (; threshold > 1000; threshold -= 50) {
			view = (await buildViewFromText(text, { ...options, thresholdChars: threshold })).text;
			if (!parseViewLines(view).has(row)) break;
		}
		assert.ok(view.length <= threshold, `view has ${view.length} chars, threshold ${threshold}`);
		assert.equal(parseViewLines(view).get(signal), `: ${lines[signal - 1]}`, `the signal stays at ${threshold} chars`);
		assert.ok(!parseViewLines(view).has(row));
	});
});
