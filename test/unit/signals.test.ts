// Tests for src/signals/pattern.ts: the default signal pattern recognises the decisive lines of real
// toolchain outputs (test/fixtures/real/), leaves their ordinary noise alone, handles the precision
// cases a careless regex gets wrong, and stays linear on megabyte lines.

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { MAX_SIGNAL_PATTERN_CHARS } from "../../src/config/config.js";
import {
	alternativesOf,
	countAlternatives,
	countPatternEntries,
	DEFAULT_SIGNAL_PATTERN,
	SIGNAL_PATTERN_PARTS,
} from "../../src/signals/pattern.js";
import { recordLevelOf } from "../../src/lines/stamp.js";
import { classifySeverity, SEVERITY_ERROR, SEVERITY_WARNING } from "../../src/signals/policy.js";
import { loadRealFixtures, stripAnsi, TAIL_ONLY_DECISIVE, withoutLineEnd } from "../fixtures/real/fixtures.js";
import { assertJustified, loadTuningFixtures } from "../fixtures/tuning.js";
import { buildPathologicalLines } from "../fixtures/signal-lines.js";

const SIGNAL = new RegExp(DEFAULT_SIGNAL_PATTERN, "i");
const FIXTURES = loadRealFixtures();
/** The lines the view keeps at the end whatever they say (DEFAULT_CONFIG.tailLines). */
const TAIL_LINES = 80;

/** What the scan tests the pattern on: the line without its line ending and ANSI escapes. */
function isSignal(line: string): boolean {
	return SIGNAL.test(stripAnsi(withoutLineEnd(line)));
}

/**
 * Per fixture, lines that are ordinary noise of that tool: passing tests (named `error_handling_…`,
 * `handles errors`, `fails_gracefully_…`), progress and INFO lines that say `errors=0`, package
 * names like `error-ex`, eslint configs with `"error"` values, compile commands. None may match.
 */
const NOISE: Record<string, RegExp> = {
	"abort-killed-signals": /^(?:indexer|worker|compact): /,
	"cargo-build-error": /^\s*Compiling |^\s*--> |^\s*= note: /,
	"cargo-test-failure": /^test .* \.\.\. ok$/,
	"cmake-link-undefined": /^\[ *\d+%\] |^\/usr\/bin\/cc /,
	"gcc-make-error": /^gcc |^make\[1\]: (?:Entering|Leaving) /,
	"go-test-fail-panic": /^\s*--- PASS: |^=== RUN /,
	"java-exception": / INFO com\.acme\./,
	"jest-failure": /✓/,
	"maven-surefire-failure": /^\[INFO\] (?:Tests run: .*Failures: 0, Errors: 0|Running )/,
	"node-test-tap-failure": /^\s*ok \d+ - |^\s*# Subtest: /,
	"npm-install-errors": /^npm http /,
	"npm-ls-json-error": /: "error",?$|^\s*"error",?$|"(?:name|version|resolved)": /,
	"progress-ansi-error": /✔/,
	"pytest-failure": / PASSED/,
	"python-etl-traceback": / INFO /,
	"python-unittest-failure": / \.\.\. ok$/,
	"rust-thread-panic": /^\[worker-\d\] shard /,
	"segfault-core-dumped": /^shard \d+ line /,
	"shell-script-errors": /^staged |^\+ |^uploading /,
	"tsc-build-errors": /\.ts$|^\s+\* packages\/|- Building project /,
	"valgrind-memcheck": /^request \d+: .*errors=0$/,
};

describe("the default signal pattern on real toolchain outputs", () => {
	test("there are at least 12 fixtures, each with decisive lines that are its own lines", () => {
		assert.ok(FIXTURES.length >= 12, `${FIXTURES.length} fixtures`);
		for (const fixture of FIXTURES) {
			assert.ok(fixture.decisive.length > 0, `${fixture.name} has decisive lines`);
			for (const line of fixture.decisive) {
				assert.equal(
					fixture.lines[line.lineNumber - 1],
					line.raw,
					`${fixture.name}:${line.lineNumber} is the line of the log`,
				);
			}
		}
	});

	test("matches every decisive line, except the few ordinary summary lines listed as tail-only", () => {
		const missed: string[] = [];
		for (const fixture of FIXTURES) {
			for (const line of fixture.decisive) {
				if (!line.tailOnly && !isSignal(line.raw)) missed.push(`${fixture.name}:${line.lineNumber}: ${line.shown}`);
			}
		}
		assert.deepEqual(missed, []);
	});

	test("lists as tail-only only lines that the view's tail shows anyway", () => {
		for (const entry of TAIL_ONLY_DECISIVE) {
			const fixture = FIXTURES.find((candidate) => candidate.name === entry.fixture);
			assert.ok(fixture, `fixture ${entry.fixture} exists`);
			const line = fixture.decisive.find((candidate) => candidate.tailOnly && candidate.shown === entry.text);
			assert.ok(line, `${entry.fixture} has the tail-only line ${entry.text}`);
			assert.ok(
				line.lineNumber > fixture.lines.length - TAIL_LINES,
				`${entry.fixture}:${line.lineNumber} is in the last ${TAIL_LINES} lines`,
			);
		}
	});

	test("matches none of the ordinary noise lines of each tool", () => {
		for (const fixture of FIXTURES) {
			const selector = NOISE[fixture.name];
			assert.ok(selector, `${fixture.name} has a noise selector`);
			const decisive = new Set(fixture.decisive.map((line) => line.lineNumber));
			let checked = 0;
			const matched: string[] = [];
			fixture.lines.forEach((raw, index) => {
				const line = stripAnsi(withoutLineEnd(raw));
				if (decisive.has(index + 1) || !selector.test(line)) return;
				checked++;
				if (SIGNAL.test(line)) matched.push(`${index + 1}: ${line.slice(0, 160)}`);
			});
			assert.ok(checked >= 10, `${fixture.name}: ${checked} noise lines selected`);
			assert.deepEqual(matched, [], `${fixture.name}: noise lines that match`);
		}
	});

	test("reports how many non-decisive lines of each fixture match (precision, a diagnostic)", (t) => {
		for (const fixture of FIXTURES) {
			const decisive = new Set(fixture.decisive.map((line) => line.lineNumber));
			let matches = 0;
			let warnings = 0;
			fixture.lines.forEach((raw, index) => {
				if (decisive.has(index + 1) || !isSignal(raw)) return;
				matches++;
				if (/^(?:\S+: )?warning(?:\[[\w-]+\])?:/i.test(stripAnsi(raw).trimStart())) warnings++;
			});
			t.diagnostic(
				`${fixture.name}: ${matches} of ${fixture.lines.length - decisive.size} non-decisive lines match (${warnings} of them compiler warnings)`,
			);
		}
	});
});

describe("the vocabulary of failure", () => {
	const failures = [
		// A failure phrase in mid-line, a numbered failure header, the warning level of a log line.
		"I/O error while reading block 7 -- skipping",
		// A verdict: a failure word that ends its line, whatever tool wrote it.
		"testRefund(com.shop.CartTest)  Time elapsed: 0.01 s  <<< FAILURE!",
		"[INFO] BUILD FAILURE",
		"make: Target 'all' not remade because of errors.",
		"2 errors occurred",
		"deploy step 3 failed.",
		"unexpected error occurred in worker 3",
		"  3) Error:",
		"  12) Failure:",
		"10:02:11 WARN pool exhausted, waiting",
		"WARN  cache miss ratio high",
		"WARN: low memory",
		"[WARNING] The requested profile was not found",
		'{"level":40,"msg":"slow query"}',
		"error[E0308]: mismatched types",
		"src/app.ts(3,5): error TS2304: Cannot find name 'foo'.",
		"main.c:(.text+0x1e): undefined reference to `config_load'",
		"collect2: error: ld returned 1 exit status",
		"make: *** [Makefile:12: all] Error 2",
		"gmake[2]: *** [CMakeFiles/app.dir/build.make:105: app] Error 1",
		"Traceback (most recent call last):",
		"AssertionError: 3 != 4",
		"tests/test_cart.py:17: AssertionError",
		"E       assert 8499 == 8500",
		"FAILED tests/test_cart.py::test_bulk - assert 1 == 2",
		"test_parse (tests.test_x.T.test_parse) ... FAIL",
		"test_parse (tests.test_x.T.test_parse) ... ERROR",
		"not ok 3 - parses dates",
		"✖ parses dates (2.1ms)",
		"  ✗ parses dates",
		"    ✕ formats amounts (5 ms)",
		"thread 'main' panicked at src/main.rs:4:5:",
		"called `Option::unwrap()` on a `None` value",
		"Segmentation fault (core dumped)",
		"bash: line 1:  4884 Killed                  python3 worker.py",
		"Killed",
		"npm ERR! code ERESOLVE",
		"npm error code E404",
		'Exception in thread "main" java.lang.NullPointerException',
		"Caused by: java.io.IOException: stream closed",
		"bash: htmlminify: command not found",
		"sh: 1: htmlminify: not found",
		"bash: ./migrate.sh: Permission denied",
		"cat: config/production.env: No such file or directory",
		"==123== Invalid read of size 4",
		"==123==    definitely lost: 40 bytes in 1 blocks",
		"==123== ERROR SUMMARY: 2 errors from 2 contexts (suppressed: 0 from 0)",
		"Process exited with code 1",
		"Command exited with code 2",
		"== step 2 exited with status 137",
		"error Command failed with exit code 1.",
		"FAIL src/format.test.ts",
		"Tests:       1 failed, 10 passed, 11 total",
		"  3 failing",
		"# fail 1",
		"[INFO] BUILD FAILURE",
		"[ERROR] Tests run: 4, Failures: 1, Errors: 0, Skipped: 0, Time elapsed: 0.02 s <<< FAILURE!",
		"fatal: not a git repository (or any of the parent directories): .git",
		"panic: runtime error: index out of range [3] with length 3",
		"panic: boom",
		"2026-12-06T09:30:04.0311633Z panic: test timed out after 20s",
		"--- FAIL: TestParse (0.00s)",
		"FAIL\texample.com/toolkit/durations\t0.021s",
		'    durations_test.go:42: Parse("1h30m") = 0; want 5400',
		"Error: Cannot find module 'left-pad'",
		"ModuleNotFoundError: No module named 'yaml'",
		"FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory",
		"==1==ERROR: AddressSanitizer: heap-buffer-overflow on address 0x602000000014",
		"terminate called after throwing an instance of 'std::bad_alloc'",
		"Program terminated with signal SIGSEGV, Segmentation fault.",
		"#0  0x000055f673d9436e in main (argc=2, argv=0x7ffe91b31748) at logindex.c:29",
		"#0  worker (arg=0x4) at src/stock.c:48",
		"2024-05-14 09:28:58 ERROR   etl.orders: record ord-002417 skipped",
		"2026-11-29 19:31:59 SEVERE com.acme.billing.InvoiceJob - invoice 2345 failed, continuing",
		"ERROR db: connection refused to 10.0.0.7:5432",
		'{"level":"error","msg":"upstream timed out"}',
		'  "error": {',
		'    Expected: "1.234,50 €"',
		"        Expected values to be strictly equal:",
		"CMake Error at CMakeLists.txt:3 (add_executable):",
		"warning: unused variable `count`",
		"Runtime error near line 2216: Cannot add a NOT NULL column with default value NULL",
		"Parse error near line 2218: table orders has no column named discount_cents",
		"CONFLICT (content): Merge conflict in handlers/refund_0213.go",
		"CONFLICT (modify/delete): jobs/sweep_0847.go deleted in HEAD and modified in release/2.4.",
		"Conflict discovered in file 'src/ledger.c'.",
		"[pid  8890] +++ exited with 3 +++",
		"==16570== Possible data race during read of size 8 at 0x10C120 by thread #3",
		"==16570== This conflicts with a previous write of size 8 by thread #5",
		"WARNING: DATA RACE",
		"Previous write at 0x00c0000b4010 by goroutine 8:",
		'{"Time":"2026-11-30T21:04:35.109849747Z","Action":"fail","Package":"example.com/shop/invoice","Test":"TestTotal037","Elapsed":0}',
		'  "conclusion": "failure",',
		"example.com/bank/ledger.(*Book).Transfer(0x0?, 0xc000058060, 0xc000058080, 0xa, 0x0?)",
		"example.com/bank/ledger.TestTransferBothWaysConcurrently(0xc000007520)",
		"github.com/acme/api/handlers.Statement({0x52efe5?, 0x4}, 0x3)",
		"handlers/h061/handler.go:63:9: fmt.Sprintf format %d has arg acct of wrong type string",
		"./main.go:10:2: undefined: total",
		"src/billing_104.c:15:21: Fehler: »const struct invoice« hat kein Element namens »totl«; meinten Sie »total«?",
		"src/main.c:1:10: schwerwiegender Fehler: config.h: Datei oder Verzeichnis nicht gefunden",
		"src/main.c:12:5: erreur: « total » non déclaré (première utilisation dans cette fonction)",
		"spec/journal_spec.lua:6: attempt to call field 'open_journal' (a nil value)",
		"lua: report.lua:12: attempt to index a nil value (local 'cfg')",
		"[2026-12-01 03:15:30 +0000] [385] [INFO] Handling signal: hup",
		"2026-12-01 03:10:14,131 WARN received SIGTERM indicating exit request",
		"2026/12/01 03:10:14 [notice] 1#1: signal 15 (SIGTERM) received from 11, exiting",
		// What a program could not do, and names it could not resolve: no failure word in them.
		"/usr/bin/ld: cannot find -lssl: No such file or directory",
		"error: could not compile `ledger` (lib) due to 1 previous error",
		"ninja: build stopped: cannot make progress due to previous errors.",
		"E: Unable to locate package libfrob-dev",
		"curl: (6) Could not resolve host: mirror.internal",
		`can't read "factor(pallet)": no such element in array`,
		"billing/ledger_077.py:59:18: F821 undefined name 'totl'",
		'orders/order_285.proto:10:3: "Money" is not defined.',
		"src/a.c:12:5: 'total' was not declared in this scope",
		"main.c:(.text+0x1a): undefined reference to `frob'",
		"ImportError: /usr/lib/libx.so: undefined symbol: frob_init",
		"mytool: unrecognized option '--frob'",
		// The operating system's error messages, passed on with no failure word.
		"listen tcp :8080: bind: address already in use",
		"write /var/lib/app/wal/000123.log: no space left on device",
		"read tcp 10.0.0.2:41234->10.0.0.7:5432: read: connection reset by peer",
		"dial tcp: lookup db.internal: Name or service not known",
		"connect: Network is unreachable",
		"e: file:///src/App.kt:3:5 Unresolved reference: totl",
		// The lines that carry what retired per-tool alternatives named (the next line, or a coded error).
		"fatal runtime error: stack overflow",
		'Exception in thread "main" java.lang.IllegalStateException: ledger is closed',
		'Exception in thread "main" java.lang.StackOverflowError',
		"Caused by: java.io.IOException: No space left on device",
		"Caused by: java.lang.NullPointerException",
		"The above exception was the direct cause of the following exception:",
		"During handling of the above exception, another exception occurred:",
		"==4242== ERROR SUMMARY: 3 errors from 3 contexts (suppressed: 0 from 0)",
		"main.obj : error LNK2019: unresolved external symbol _frob referenced in function _main",
		"src/a.c:1:10: fatal error: x.h: No such file or directory",
		"Execution failed for task ':app:compileJava'.",
		'[UnhandledPromiseRejection: This error originated either by throwing inside of an async function without a catch block, or by rejecting a promise which was not handled with .catch(). The promise rejected with the reason "boom".] {',
		'Unhandled DIVISION-BY-ZERO in thread #<SB-THREAD:THREAD "main thread" RUNNING {1001878103}>:',
		// Marks that say a line failed or warns, whatever tool prints them.
		"! Undefined control sequence.",
		" ! [rejected]        main -> main (fetch first)",
		"!!! ERROR: dev-libs/foo-1.2::gentoo failed (compile phase):",
		" ⨯ Failed to compile",
		" ⚠ Compiled with warnings",
		"  × test/receipt.test.js > renders the receipt 47ms",
	];
	for (const line of failures) {
		test(`matches ${JSON.stringify(line)}`, () => assert.ok(SIGNAL.test(line)));
	}

	const noise = [
		"test error_handling ... ok",
		"test parse::error_handling_parse_case_0003 ... ok",
		"ok 12 - handles errors",
		"ok 44 - reports failure codes \\#43",
		"PASS src/errors.test.ts",
		"    ✓ handles errors for floats #1 (1 ms)",
		"=== RUN   TestErrorHandling_0000",
		"--- PASS: TestFailsOnGarbage_0003 (0.00s)",
		"tests/test_discounts.py::test_error_handling_rejects_out_of_range[-1] PASSED [ 33%]",
		"0 errors",
		"Found 0 errors.",
		"warnings: 0",
		"--no-warn",
		"errorCount: 0",
		"errors=0 warnings=0",
		"Tests: 0 failed, 12 passed",
		"failed: 0",
		"exit code 0",
		"exited with status 0",
		"[INFO] Tests run: 4, Failures: 0, Errors: 0, Skipped: 0, Time elapsed: 0.001 s",
		"# fail 0",
		"==123==    definitely lost: 0 bytes in 0 blocks",
		"==123== ERROR SUMMARY: 0 errors from 0 contexts (suppressed: 0 from 0)",
		'  "error": null,',
		'  "errors": [],',
		'      "no-undef": "error",',
		"/work/main/node_modules/typescript/lib/lib.es2022.error.d.ts",
		"npm http fetch GET 200 <registry>/json-parse-even-better-errors 26ms (cache miss)",
		"  34:     0x55b84b9beeaa - std::panic::catch_unwind::h570a0866a830305d",
		"   at core::panic::panic_fmt (library/core/src/panicking.rs:72)",
		"panic: false",
		"2024-05-14 09:28:58 INFO    etl.orders: flushed batch of 250 rows to warehouse (error_rate=0.000)",
		"[worker-1] shard 0000: 16 rows ok, first id 0, subtotal 120, errors 0",
		"compact: generation 000, free pages 2048, failures 0",
		"No error found in 12 files",
		"parse error handling",
		"  Retry error codes are configured",
		"conflicts resolved: 3",
		"Auto-merging handlers/refund_0213.go",
		"[pid  8888] +++ exited with 0 +++",
		"previous writes flushed",
		'{"Time":"2026-11-30T21:04:35.109843274Z","Action":"pass","Package":"example.com/shop/cart","Test":"TestTotal000","Elapsed":0}',
		'{"Action":"output","Package":"example.com/shop/cart","Test":"TestErrorPaths","Output":"=== RUN   TestErrorPaths\\n"}',
		"sync.(*Mutex).Lock(...)",
		"testing.tRunner(0xc0000076c0, 0x533df8)",
		"runtime.gopark(0xc000064f40?, 0x0?, 0x0?, 0x0?, 0x0?)",
		"	/tmp/pof-gen-tune3/go-timeout/ledger/ledger.go:20 +0xac",
		"src/billing_000.c:8:26: Warnung: Vergleich von Ganzzahlausdrücken, von denen nur einer ein Vorzeichen hat",
		"Fehlerbehandlung: 12 Fälle geprüft",
		"0 Fehler, 3 Warnungen",
		"retrying: attempt to reconnect 3 of 5",
		"installed signal handlers for SIGINT and SIGTERM",
		"signal strength 80%",
		// Settings and flags that merely contain a failure word.
		"werror: true",
		"    werror          : True",
		"fail-fast: true",
		"fail_under = 80",
		"errors = off",
		"max_errors: 3",
		"  on_error: 0",
		"gcc -Werror -Wall -c src/a.c",
		"pytest --maxfail=1 --fail-fast",
		"no error while reading the index",
		"warn-unused: true",
		"Tests: 10 passed, 0 failed",
		"Completed with no error",
		"warnings = 0",
		"cannot",
		"# this step cannot",
		"Undefined behaviour sanitizer: enabled",
		// A `!` that does not lead a line as a mark.
		"Done! 12 files formatted",
		"![build status](https://example.com/badge.svg)",
		"!important overrides: 0",
		"x = 3 × 4",
		// A setting, a plural and a word that only starts like conflict.
		"conflict: false",
		"conflicts resolved: 3",
		"conflicting-peer-deps = warn",
		// BuildKit's first line: a build step numbered 0, not a frame.
		'#0 building with "default" instance using docker driver',
	];
	for (const line of noise) {
		test(`leaves ${JSON.stringify(line)} alone`, () => assert.ok(!SIGNAL.test(line)));
	}
});

describe("how severe a signal line is", () => {
	const warnings = [
		"warning: unused variable `count`",
		"units/billing-worker-082.service:11: Unknown key 'RestartSecs' in section [Service], ignoring.",
		"Unrecognized option 'color' in .tool.yml, ignoring",
		"2026-12-01 03:10:14 WARN cannot reach replica 2, retrying",
		" ⚠ Compiled with warnings",
		' ⚠ The "images.domains" configuration is deprecated.',
		// A warning's category, as Python's warnings module and Node print it: failure words after it are its subject.
		"/usr/lib/python3.11/site-packages/pytest_benchmark/logger.py:44: PytestBenchmarkWarning: Benchmarks are automatically disabled because xdist plugin is active.Benchmarks cannot be performed reliably in a parallelized environment.",
		"tests/test_errors.py:12: UserWarning: failed to load the locale, using C",
		"(node:4123) ExperimentalWarning: The Fetch API is an experimental feature. This feature could change at any time",
	];
	for (const line of warnings)
		test(`a warning: ${JSON.stringify(line)}`, () => assert.equal(classifySeverity(line), SEVERITY_WARNING));
	const errors = [
		"billing/ledger_077.py:59:18: F821 undefined name 'totl'",
		"units/billing-worker-080.service:11: Failed to parse TimeoutSec= parameter, ignoring: 2m30x",
		"ninja: build stopped: cannot make progress due to previous errors.",
		"2026-12-01 03:10:14 ERROR cannot reach replica 2, skipping",
		"! Undefined control sequence.",
		" ⨯ Failed to compile",
		"  ✘ [fail]: zones_37 › skips warnings for 3125 g",
		// An error class is no warning category, nor is a word that ends in one.
		"ValueError: cannot convert the Warning: header",
		"NoWarningsError: unexpected warnings were raised",
	];
	for (const line of errors)
		test(`an error: ${JSON.stringify(line)}`, () => assert.equal(classifySeverity(line), SEVERITY_ERROR));

	test("a record at the level every record carries is read as the line it wraps; at another level, by its level", () => {
		const gcc = "src/spool_077.c:17:3: error: double-‘free’ of ‘buf’ [CWE-415]";
		const records = [
			`time="2026-12-06T09:30:02.577Z" level=info msg=${JSON.stringify(gcc)}`,
			`2026-12-06T09:30:02.5770000Z ts=2026-12-06T09:30:02Z lvl=info msg=${JSON.stringify(gcc)}`,
			JSON.stringify({ level: "info", msg: gcc }),
			JSON.stringify({ msg: gcc, time: "2026-12-06T09:30:02Z", level: "INFO" }),
		];
		for (const record of records) {
			assert.equal(recordLevelOf(record), "info", record);
			assert.equal(classifySeverity(record, "info"), SEVERITY_ERROR, record);
		}
		// Where the line's own reading finds the record's `level=info`, without the output's record
		// level or with another one, `info` decides: the program carried on.
		for (const record of [records[0], records[2]]) {
			assert.equal(classifySeverity(record), SEVERITY_WARNING, record);
			assert.equal(classifySeverity(record, "debug"), SEVERITY_WARNING, record);
		}
		// The wrapped line's own level or words decide, as on a bare line.
		const retrying = `time="2026-12-06T09:30:02.577Z" level=info msg="WARN cannot reach replica 2, retrying"`;
		assert.equal(classifySeverity(retrying, "info"), SEVERITY_WARNING);
		// A record at a level of its own among the `info` ones keeps it.
		const warned = `time="2026-12-06T09:30:02.577Z" level=warn msg="connection error, retrying"`;
		assert.equal(classifySeverity(warned, "info"), SEVERITY_WARNING);
		// A line that is no record keeps its own reading.
		assert.equal(classifySeverity("level=info: 3 errors found", "info"), SEVERITY_WARNING);
		assert.equal(classifySeverity(gcc, "info"), SEVERITY_ERROR);
	});
});

describe("the pattern itself", () => {
	test("names, for each part, which of its alternatives are per-tool knowledge, by valid indexes", () => {
		for (const part of SIGNAL_PATTERN_PARTS) {
			const count = countAlternatives(part.source);
			for (const index of Object.keys(part.tool ?? {}).map(Number))
				assert.ok(Number.isInteger(index) && index >= 0 && index < count, part.source);
		}
		const { principle, tool, withoutFixture } = countPatternEntries();
		assert.equal(
			principle + tool,
			SIGNAL_PATTERN_PARTS.reduce((sum, part) => sum + countAlternatives(part.source), 0),
		);
		// Per-tool entries justified by a documented format alone: no more than the eight there are (a new
		// one needs a tuning fixture). A bound on their number, not their share: a principle that retires
		// entries with fixtures must not make room for entries without.
		assert.ok(withoutFixture <= 8, `${withoutFixture} of ${tool} per-tool entries have no fixture`);
		assert.deepEqual(alternativesOf(String.raw`a|(b|c)|[|]|\|d`), ["a", "(b|c)", "[|]", String.raw`\|d`]);
	});

	test("justifies each per-tool alternative by a tuning fixture with a line it matches", () => {
		const tuning = loadTuningFixtures();
		let justified = 0;
		for (const part of SIGNAL_PATTERN_PARTS) {
			const alternatives = alternativesOf(part.source);
			for (const [index, names] of Object.entries(part.tool ?? {}))
				justified += assertJustified(tuning, names, new RegExp(alternatives[Number(index)], "i"));
		}
		assert.ok(justified > 0);
	});

	test("is the alternation of its documented parts and fits the config's cap", () => {
		assert.equal(DEFAULT_SIGNAL_PATTERN, SIGNAL_PATTERN_PARTS.map((part) => part.source).join("|"));
		assert.ok(DEFAULT_SIGNAL_PATTERN.length <= MAX_SIGNAL_PATTERN_CHARS, `${DEFAULT_SIGNAL_PATTERN.length} chars`);
		for (const part of SIGNAL_PATTERN_PARTS) {
			assert.doesNotThrow(() => new RegExp(part.source, "i"), part.source);
			assert.ok(part.why.length > 20, `part ${part.source} says why it exists`);
		}
	});

	test("is its own RegExp source (an unescaped `/` would make the scan take it for a configured pattern and skip the prefilter)", () => {
		assert.equal(new RegExp(DEFAULT_SIGNAL_PATTERN, "i").source, DEFAULT_SIGNAL_PATTERN);
	});

	test("can never match across a line break (the scan runs it over blocks of lines)", () => {
		// No \s, \D, \W or dot (each can match "\n"); every negated class excludes "\n".
		assert.doesNotMatch(DEFAULT_SIGNAL_PATTERN, /\\[sDW]|(?<!\\)\./);
		for (const negated of DEFAULT_SIGNAL_PATTERN.match(/\[\^[^\]]*\]/g) ?? [])
			assert.ok(negated.includes("\\n"), negated);
	});

	// How long each takes (against grep -P with the same pattern) is measured by `npm run bench`.
	test("decides each 1 MB line built to make it backtrack: matches the two that hold a signal, leaves the rest", () => {
		for (const line of buildPathologicalLines()) assert.equal(SIGNAL.test(line.text), line.signal, line.name);
	});
});
