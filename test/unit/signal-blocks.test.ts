// Tests for src/signals/blocks.ts, the signal policy's block rules (what lines belong to a signal line), one case per
// form they were made for, and for the view they give: valgrind's report margin, gdb's frames, a
// deep recursion, gfortran's location line above a blank, gcc -fanalyzer's drawn event path.

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { createDefaultConfig } from "../../src/config/config.js";
import {
	continuesBlock,
	continuesPastBlank,
	findLeadingContext,
	HUNK_AFTER_LINES,
	indentOf,
	marginOf,
	stepOpeners,
	thinRuns,
} from "../../src/signals/blocks.js";
import { BLOCK_FORMS, blockFormRegex, blockFormRegexOf, countBlockForms } from "../../src/signals/forms.js";
import { unstamped } from "../../src/lines/stamp.js";
import { buildViewFromText } from "../../src/view/compose.js";
import { assertJustified, loadTuningFixtures } from "../fixtures/tuning.js";

const lines = (...texts: string[]) => texts.map((text) => ({ text }));

/** The line numbers a view shows between its head (first 60 lines) and its tail (last 80). */
async function middleOf(text: string): Promise<number[]> {
	const total = text.split("\n").length;
	const view = await buildViewFromText(text, { ...createDefaultConfig(), id: "0123456789ab", toolName: "bash" });
	return [...view.text.matchAll(/^ {2,}(\d+)[:-] /gm)]
		.map((match) => Number(match[1]))
		.filter((n) => n > 60 && n <= total - 80);
}

/** `count` lines of routine progress, numbered from `from`. */
function progress(count: number, from = 0): string[] {
	return Array.from(
		{ length: count },
		(_, i) => `worker ${(from + i) % 4}: batch ${from + i} posted, ${1000 + i} cents`,
	);
}

describe("indentation and continuation", () => {
	test("measures indentation after valgrind's ==pid== margin; a bare margin is a blank line", () => {
		assert.equal(indentOf("==16570== Possible data race during read of size 8"), 0);
		assert.equal(indentOf("==16570==    at 0x109217: flush_journal (ledger.c:15)"), 3);
		assert.equal(indentOf("==16570== "), -1);
		assert.equal(indentOf("==16570=="), -1);
		assert.equal(indentOf("== not a margin"), 0);
		assert.equal(indentOf("    plain"), 4);
	});

	test("measures indentation inside a logger's logfmt record, after a CI service's timestamp too", () => {
		const record = 'time="2026-12-06T09:30:01Z" level=info msg="    at Object.<anonymous> (src/a.test.js:9:5)"';
		assert.equal(marginOf(record), record.indexOf('msg="') + 5);
		assert.equal(indentOf(record), 4);
		assert.equal(indentOf(`2026-12-06T09:30:01.1234567Z ${record}`), 4);
		assert.equal(indentOf('level=error msg="FAIL src/a.test.js"'), 0);
		assert.ok(continuesBlock(0, `2026-12-06T09:30:01.1234567Z ${record}`));
		// A line with `msg="` that is no record (no key= before it) has no such margin.
		assert.equal(indentOf('echo msg="  hi"'), 0);
	});

	test("a frame under valgrind's margin continues the block; the report's next paragraph does not", () => {
		assert.ok(continuesBlock(0, "==1==    at 0x109217: flush_journal (ledger.c:15)"));
		assert.ok(continuesBlock(0, "==1== Locks held: none"), "helgrind's Locks held: is a known continuation");
		assert.ok(!continuesBlock(0, "==1== "));
		assert.ok(!continuesBlock(0, "==1== Thread #3 was created"));
	});

	test("measures indentation after Ant's task column; an error's block ends at the next diagnostic (tune4)", () => {
		assert.equal(
			indentOf(
				"    [javac] /src/billing/Invoice17.java:9: error: incompatible types: possible lossy conversion from double to long",
			),
			0,
		);
		assert.equal(indentOf("    [javac]         long rounded = gross;"), 8);
		assert.equal(indentOf("   [subant] File 'modules/billing/build.xml' failed"), 0);
		assert.equal(indentOf("    [javac] "), -1, "a bare task column is a blank line");
		assert.equal(indentOf("  [gw0] [ 67%] PASSED tests/x.py::test_a"), 2, "not a 12-column task column");
		assert.ok(continuesBlock(0, "    [javac]                        ^"));
		assert.ok(continuesBlock(0, "    [javac]         long rounded = gross;"));
		assert.ok(
			!continuesBlock(0, "    [javac] /src/billing/Invoice17.java:10: warning: [unchecked] unchecked call to add(E)"),
		);
	});

	test("a diagnostic that opens with its own location does not take the indented notes of the one above as its leading context (tune4)", () => {
		const above = [
			"    [javac] /src/a/Invoice16.java:6: warning: [rawtypes] found raw type: ArrayList",
			"    [javac]   where E is a type-variable:",
			"    [javac]     E extends Object declared in class ArrayList",
		];
		assert.deepEqual(
			findLeadingContext("    [javac] /src/a/Invoice17.java:9: error: incompatible types", above).context,
			[],
		);
		const tsc = [
			"src/a.ts(3,5): error TS2322: Type 'string' is not assignable to type 'number'.",
			"  Type 'x' is not assignable.",
		];
		assert.deepEqual(findLeadingContext("src/b.ts(9,1): error TS2304: Cannot find name 'y'.", tsc).context, []);
		const python = ["Traceback (most recent call last):", '  File "app.py", line 3, in <module>', "    main()"];
		assert.deepEqual(
			findLeadingContext("KeyError: 'vat_rate'", python).context,
			[1, 2],
			"an exception line still takes its frames",
		);
	});

	test("gdb's numbered frames continue a block; a numbered list item does not", () => {
		assert.ok(continuesBlock(0, "#1  0x00005555555552ec in sum_chain (n=0x0, depth=1) at src/stock.c:29"));
		assert.ok(continuesBlock(0, "#12 worker (arg=0x4) at src/stock.c:48"));
		assert.ok(!continuesBlock(0, "#1 step: compile"));
	});

	test("takes a location line standing alone above the blank line over a snippet", () => {
		const above = [
			"gfortran -c src/tariff_114.f90",
			"src/tariff_113.f90:17:28:",
			"",
			"   17 |     excise_113 = base * rate",
			"      |                            1",
		];
		assert.deepEqual(
			findLeadingContext("Error: Symbol 'rate' at (1) has no IMPLICIT type", above).context,
			[1, 2, 3, 4],
		);
		const prose = ["Building the docs", "", "   17 |     excise_113 = base * rate"];
		assert.deepEqual(
			findLeadingContext("Error: Symbol 'rate'", prose).context,
			[2],
			"no location line above the blank: nothing more",
		);
	});
});

describe("a section header above a signal", () => {
	test("Go's `# import/path` package line heads the package's vet or build diagnostics; a comment or a heading does not", () => {
		const above = ["handlers/h060/handler.go:57:2: unreachable code", "# example.com/api/handlers/h061"];
		assert.deepEqual(
			findLeadingContext(
				"handlers/h061/handler.go:63:9: fmt.Sprintf format %d has arg acct of wrong type string",
				above,
			),
			{ context: [], header: 1 },
		);
		for (const line of ["# Release notes", "# TODO: retry later", "#include <stdio.h>"]) {
			assert.equal(findLeadingContext("./main.go:10:2: undefined: total", ["x", line]).header, undefined, line);
		}
	});
});

describe("where a step opens (stepOpeners)", () => {
	test("a title a rule-only line underlines after a blank line opens a step; a list's last item over its closing rule does not", () => {
		const dump = [
			"\tat java.lang.Thread.run(java.base@17.0.15/Thread.java:840)",
			"",
			"Found one Java-level deadlock:",
			"=============================",
			'"reconcile-out":',
			"",
			"2026-12-06T09:30:01.2132524Z Java stack information for the threads listed above:",
			"2026-12-06T09:30:01.2132525Z ===================================================",
			"",
			"Summary",
			"-------",
		];
		assert.deepEqual(stepOpeners(lines(...dump)), [2, 6, 9]);
		// twisted's trial: the failing tests' list, then a rule and the count. Nor is a rule a title, or a line at the start.
		const trial = [
			"twisted.internet.error.ConnectionRefusedError: Connection was refused by other side",
			"",
			"inventory.test.test_reservations_29.CachedReservationTests.test_cached_reserve_0",
			"inventory.test.test_reservations_29.CachedReservationTests.test_cached_reserve_1",
			"-------------------------------------------------------------------------------",
			"Ran 1005 tests in 0.354s",
		];
		assert.deepEqual(stepOpeners(lines(...trial)), []);
		assert.deepEqual(stepOpeners(lines("", "=====", "=====")), []);
		assert.deepEqual(stepOpeners(lines("Results", "=======")), []);
		// A rule with more than rule characters on it underlines nothing (a table's border, a rule with a title).
		assert.ok(!stepOpeners(lines("", "name    size", "----    ----")).includes(1));
		assert.deepEqual(stepOpeners(lines("", "+------+------+")), []);
		// The principle's own openers are kept.
		assert.deepEqual(stepOpeners(lines("ok", "=================== FAILURES ===================")), [1]);
	});
});

describe("the section a failure happened in (tune4)", () => {
	test("the step in progress above a failure is its step: Alembic's `Running upgrade`, Django's `Applying`, Flyway's `Migrating schema`", () => {
		const alembic = [
			"INFO  [sqlalchemy.engine.Engine] COMMIT",
			"INFO  [alembic.runtime.migration] Running upgrade 0030 -> 0031, unique customer email",
			"INFO  [sqlalchemy.engine.Engine] CREATE UNIQUE INDEX ix_customers_email ON customers (email)",
			"INFO  [sqlalchemy.engine.Engine] [no key 0.00009s] ()",
			"INFO  [sqlalchemy.engine.Engine] ROLLBACK",
		];
		assert.equal(findLeadingContext("Traceback (most recent call last):", alembic).step, 1);
		const django = ["  Applying shop.0030_orders... OK", "  Applying shop.0031_unique_email...", "x"];
		assert.equal(
			findLeadingContext("django.db.utils.IntegrityError: UNIQUE constraint failed: shop_customer.email", django).step,
			1,
			"the nearest step is the one in progress",
		);
		assert.equal(
			findLeadingContext("ERROR: Migration V31__unique_email.sql failed", [
				'Migrating schema "public" to version "31 - unique email"',
				"x",
			]).step,
			0,
		);
		for (const line of [
			"During handling of the above exception, another exception occurred:",
			"Nothing to do",
			"running 12 tests",
			"Something went wrong",
		]) {
			assert.equal(findLeadingContext("Traceback (most recent call last):", [line, "x"]).step, undefined, line);
		}
	});

	test("a section header further up wins over a nearer step in progress: the test's name, not the log line inside it", () => {
		const above = ["=== RUN   TestMigrate", "    Running upgrade 0030 -> 0031", "x"];
		const leading = findLeadingContext("    migrate_test.go:12: unique constraint failed", above);
		assert.equal(leading.header, 0);
		assert.equal(leading.step, undefined);
	});

	test("a finding whose location names no file is headed by the nearest line above naming a file (HTML Tidy under a script's `check:` line)", () => {
		const above = [
			"check: site/guide/page_142.html",
			'line 9 column 1 - Warning: <img> lacks "alt" attribute',
			"check: site/guide/page_143.html",
		];
		assert.equal(findLeadingContext("line 11 column 1 - Error: <tabel> is not recognized!", above).header, 2);
		const sibling = [
			"check: site/guide/page_143.html",
			'line 9 column 1 - Warning: <img> lacks "alt" in figure.png',
			"line 10 column 1 - Warning: x",
		];
		assert.equal(
			findLeadingContext("line 11 column 1 - Error: <tabel> is not recognized!", sibling).header,
			0,
			"a sibling finding naming a file is not the header",
		);
		assert.equal(
			findLeadingContext("src/a.c:3:1: error: expected ';'", above).header,
			undefined,
			"a finding that names its own file needs no file line",
		);
	});
});

describe("a resumed system call (strace -f)", () => {
	test("leads with the line of the same process that started the call", () => {
		const above = [
			'[pid  8890] openat(AT_FDCWD, "assets/templates/asset_221.tmpl", O_RDONLY <unfinished ...>',
			'[pid  8889] openat(AT_FDCWD, "assets/css/asset_157.css", O_RDONLY <unfinished ...>',
			"[pid  8889] <... openat resumed>)       = 3",
			'[pid  8888] read(3, "x", 4096) = 1',
		];
		assert.deepEqual(
			findLeadingContext("[pid  8890] <... openat resumed>)       = -1 ENOENT (No such file or directory)", above)
				.context,
			[0],
		);
		assert.deepEqual(
			findLeadingContext("[pid  8891] <... openat resumed>)       = -1 ENOENT (No such file or directory)", above)
				.context,
			[],
			"another process: nothing",
		);
	});
});

describe("thinRuns", () => {
	test("keeps the first and last line of a run of one shape, whole short runs, and order", () => {
		const frames = lines(
			"#1  0x52ec in sum_chain (n=0x0, depth=1) at src/stock.c:29",
			...Array.from(
				{ length: 28 },
				(_, i) => `#${i + 2}  0x5307 in sum_chain (n=0x7fffe8001${i}b0, depth=${i + 2}) at src/stock.c:29`,
			),
			"#30 0x547f in worker (arg=0x4) at src/stock.c:48",
			"#31 0x51f5 in start_thread (arg=<optimized out>) at ./nptl/pthread_create.c:442",
		);
		assert.deepEqual(
			thinRuns(frames).map((line) => line.text.split(" ")[0]),
			["#1", "#29", "#30", "#31"],
		);
		assert.deepEqual(
			thinRuns(lines("a 1", "a 2", "b")).map((line) => line.text),
			["a 1", "a 2", "b"],
		);
	});

	test("drops lines of drawing alone only from a block longer than HUNK_AFTER_LINES", () => {
		const short = lines("   17 |   free(buf);", "      |   ^~~~~~~~~");
		assert.deepEqual(thinRuns(short), short);
		const long = lines(
			...Array.from({ length: HUNK_AFTER_LINES + 2 }, (_, i) =>
				i % 2 === 0 ? `    |      |   (${i}) event ${i}` : "    |      |   ^~~~",
			),
		);
		assert.ok(thinRuns(long).every((line) => /\d/.test(line.text)));
		// After a CI timestamp the drawing is still drawing: the stamp's digits are not the line's words.
		const stamped = lines(
			...Array.from(
				{ length: HUNK_AFTER_LINES + 2 },
				(_, i) =>
					`2026-12-06T09:30:03.${String(i).padStart(7, "0")}Z ${i % 2 === 0 ? `    |  (${i}) event` : "    |   ^~~~"}`,
			),
		);
		const kept = thinRuns(stamped);
		assert.ok(kept.length > 0 && kept.length <= (HUNK_AFTER_LINES + 2) / 2);
		assert.ok(kept.every((line) => line.text.includes(") event")));
	});
});

describe("the view of a signal line's block", () => {
	test("helgrind: the data race with its frames under the ==pid== margin", async () => {
		const report = [
			"==77== Possible data race during read of size 8 at 0x10C120 by thread #3",
			"==77== Locks held: none",
			"==77==    at 0x109217: flush_journal (ledger.c:15)",
			"==77==    by 0x109314: poster (ledger.c:27)",
			"==77== ",
			"==77== Thread #3 was created",
		];
		const text = [...progress(700), ...report, ...progress(700, 700)].join("\n");
		const shown = await middleOf(text);
		for (const n of [701, 702, 703, 704]) assert.ok(shown.includes(n), `line ${n} is shown; shown: ${shown.join(",")}`);
	});

	test("esbuild: the location and code frame under an error, past the blank line right below it", async () => {
		const error = [
			'✘ [ERROR] Could not resolve "../formatters/currencyFormat"',
			"",
			"    src/views/view_131.ts:1:31:",
			'      1 │ import { formatCurrency } from "../formatters/currencyFormat";',
			"",
		];
		const text = [...progress(700), ...error, ...progress(700, 700)].join("\n");
		const shown = await middleOf(text);
		for (const n of [701, 703, 704]) assert.ok(shown.includes(n), `line ${n} is shown; shown: ${shown.join(",")}`);
		const view = (await buildViewFromText(text, { ...createDefaultConfig(), id: "0123456789ab", toolName: "bash" }))
			.text;
		assert.match(view, /^ +702- *$/m, "the blank line under the error is part of its block");
		assert.ok(!shown.includes(705) && !shown.includes(706), "the block ends at the next blank line");
		assert.ok(
			!continuesPastBlank(0, "not indented"),
			"a line at the signal's indentation after the blank starts something else",
		);
	});

	test("svn: each of three conflicted files among hundreds of updated ones, as rare lines", async () => {
		const lines = Array.from(
			{ length: 900 },
			(_, i) =>
				`${i % 3 === 0 ? "G" : "U"}    site/section_${String(Math.floor(i / 60)).padStart(2, "0")}/page_${String(i).padStart(3, "0")}.html`,
		);
		for (const at of [121, 405, 658]) lines[at - 1] = lines[at - 1].replace(/^[GU]/, "C");
		const shown = await middleOf(lines.join("\n"));
		for (const n of [121, 405, 658]) assert.ok(shown.includes(n), `line ${n} is shown; shown: ${shown.join(",")}`);
	});

	test("gdb: a backtrace 30 frames deep shows the faulting frame, the recursion's ends and the user frame below it", async () => {
		const bt = [
			"#0  0x00005555555552b6 in node_units (n=0x0) at src/stock.c:24",
			"#1  0x00005555555552ec in sum_chain (n=0x0, depth=1) at src/stock.c:29",
			...Array.from(
				{ length: 29 },
				(_, i) =>
					`#${i + 2}  0x0000555555555307 in sum_chain (n=0x7fffe800${(4096 - i * 48).toString(16)}, depth=${i + 2}) at src/stock.c:29`,
			),
			"#31 0x000055555555547f in worker (arg=0x4) at src/stock.c:48",
			"",
		];
		const text = [...progress(700), ...bt, ...progress(700, 700)].join("\n");
		const shown = await middleOf(text);
		for (const n of [701, 702, 731, 732])
			assert.ok(
				shown.includes(n),
				`line ${n} (${text.split("\n")[n - 1].slice(0, 40)}) is shown; shown: ${shown.join(",")}`,
			);
	});
});

describe("the block forms, as data (src/signals/forms.ts)", () => {
	test("justify each form only one tool prints by a tuning fixture with a line it matches", () => {
		const tuning = loadTuningFixtures();
		// As blocks.ts tests them: a continuation after a line's timestamp and a tool's margin (valgrind's
		// `==1== `, Ant's `    [javac] `), the others after its timestamp.
		const afterMargin = (line: string) => line.slice(marginOf(line));
		let justified = 0;
		for (const form of BLOCK_FORMS) {
			const prepare = form.kind === "continuation" ? afterMargin : unstamped;
			justified += assertJustified(tuning, form.fixtures ?? [], blockFormRegexOf(form), prepare);
			assert.ok(form.why.length > 20, `${form.source} says why it exists`);
		}
		assert.ok(justified > 0);
		const { principle, tool, withoutFixture } = countBlockForms();
		assert.equal(principle + tool, BLOCK_FORMS.length);
		assert.ok(
			principle > 0 && withoutFixture < tool / 2,
			`${principle} principles, ${tool} per-tool, ${withoutFixture} without a fixture`,
		);
	});

	test("compile each kind into one regex that matches what its forms match", () => {
		const samples: Array<[Parameters<typeof blockFormRegex>[0], string, boolean]> = [
			["continuation", "    at com.acme.Billing.total(Billing.java:12)", true],
			["continuation", "  --> src/main.rs:4:18", true],
			["continuation", "   = note: expected type `i64`", true],
			["continuation", "#1  0x000055555555513d in worker (arg=0x4) at src/stock.c:48", true],
			["continuation", "   ::: src/lib.rs:10:5", true],
			["continuation", "  --> src/app.py:3:8", true],
			["continuation", "    #0 0x4f5a3c in main /src/x.c:12:5", true],
			["continuation", "    #1 0x7f3a9c in __libc_start_main (/lib/x86_64-linux-gnu/libc.so.6+0x21c86)", true],
			["continuation", "\t... 3 more", true],
			["continuation", "  [Previous line repeated 996 more times]", true],
			["continuation", "--> here", false],
			["continuation", "#1 step: compile", false],
			["continuation", "... and then some more", false],
			["continuation", "Compiling ledger v0.1.0", false],
			["section", "=== RUN   TestTransfer", true],
			["section", "  1) Billing computes totals", true],
			["section", "running 12 tests", false],
			["section", "[ RUN      ] Ledger.RejectsOverdraft", true],
			["section", "RUNNING HANDLER [restart app] ***************************************", true],
			["section", "TASK [render application config] ***********************************", true],
			["section", "PLAY RECAP *********************************************************", true],
			["section", "[INFO] ------------------------------------------------------------------------", false],
			["section", "[error]   6 | =======", false],
			["section", "Running 12 tests in parallel", false],
			["section", "The runner is RUNNING now", false],
			["progress", "  Applying shop.0031_unique_email...", true],
			["progress", "INFO  [alembic.runtime.migration] Running upgrade 0030 -> 0031, unique customer email", true],
			["progress", "   Compiling ledger v0.1.0 (/tmp/ledger)", true],
			["progress", "-- Looking for pthread.h", true],
			["progress", "== 20240101120000 AddIndex: migrating ======================================", true],
			["progress", "During handling of the above exception, another exception occurred:", false],
			["progress", "Nothing to commit, working tree clean", false],
			["progress", "Warning deprecated option", false],
			["progress", "running 12 tests", false],
			["progress", "Running", false],
			["build-step", "> Task :compileJava", true],
			["build-step", "#8 [3/7] RUN make", true],
			["build-step", "#12 [build 3/7] RUN npm ci", true],
			["build-step", "Step 3/7 : RUN make", true],
			["build-step", "[12/345] Building C object src/a.c.o", false],
			["build-step", "Task compileJava", false],
		];
		for (const [kind, line, expected] of samples)
			assert.equal(blockFormRegex(kind).test(line), expected, `${kind}: ${line}`);
	});
});
