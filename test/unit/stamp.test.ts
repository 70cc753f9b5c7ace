// A log line's own text starts after its timestamp (src/lines/stamp.ts): the signal pattern's
// "at the start of a line" and the block rules' indentation are read there; and after the tag a
// multiplexer puts before each line of one of its jobs, when the lines around share it.

import assert from "node:assert/strict";
import { test } from "node:test";
import { DEFAULT_CONFIG } from "../../src/config/config.js";
import {
	isStreamTag,
	lineTagOf,
	stampLength,
	unstamped,
	untagged,
	wrappedLineOf,
	wrappedLineStart,
} from "../../src/lines/stamp.js";
import { scanText } from "../../src/scan/scan.js";
import { alternativesOf, DEFAULT_LINE_START_PATTERN, DEFAULT_SIGNAL_PATTERN } from "../../src/signals/pattern.js";
import { loadRealFixtures } from "../fixtures/real/fixtures.js";
import { bufferSource } from "../../src/io/source.js";
import { readComposeExtras, scanSource } from "../../src/view/compose.js";
import { continuesBlock, indentOf, isBlockMessage, isSectionHeader } from "../../src/signals/blocks.js";

test("recognises the timestamps of hosted CI and of loggers, and nothing else", () => {
	const stamped: [string, string][] = [
		["2026-12-02T10:18:20.9133560Z ", "E   assert 1 == 2"],
		["2024-05-01 12:00:00,123 ", "ERROR x"],
		["2024-05-01T12:00:00+02:00 ", "  left: 1"],
		["[10:18:20] ", "FAILED tests/a.py::b"],
		// Bazel's `--show_timestamps`: the time in parentheses.
		["(10:18:20) ", "ERROR: /src/app/BUILD:3:10: Compiling app/main.cc failed: (Exit 1)"],
		// rsyslog's and `journalctl -o short-iso`'s: the host and the program after an RFC 3339 time.
		["2026-12-06T10:00:35.123456+00:00 ci-runner-07 npm[4123]: ", "FAIL src/a.test.js"],
		["2026-12-06T10:00:35+0000 ci-runner-07 kernel: ", "Out of memory: Killed process 4123 (node)"],
		["10:18:20.5 ", "x"],
		// BuildKit's plain progress: a build step's number and the seconds since it started.
		["#8 12.345 ", "FAILED tests/test_cart.py::test_total"],
		["#12 0.051 ", "    at Ledger.transfer(Ledger.java:16)"],
		// Syslog's and journald's: the host and the program (its process id when it has one) after the time.
		["Dec  6 10:27:25 ci-runner-07 npm[4123]: ", "FAIL src/a.test.js"],
		["Dec 06 09:30:01 ci-runner-07 kernel: ", "Out of memory: Killed process 4123 (node)"],
		["Jun 14 15:16:01.123456 build-host systemd[1]: ", "widgets.service: Failed with result 'exit-code'."],
		// moreutils' ts: the time alone; a line's own words after it are no host and program.
		["Dec 06 09:30:01 ", "error TS2304: Cannot find name 'x'."],
		["May 12 10:00:00 ", "FAILED tests/a.py::b"],
	];
	for (const [stamp, text] of stamped) {
		assert.equal(stampLength(stamp + text), stamp.length, stamp);
		assert.equal(unstamped(stamp + text), text);
	}
	// GitLab's runner, stamping lines (FF_TIMESTAMPS): its stream column follows the time.
	assert.equal(
		unstamped("2026-12-06T09:30:02.756845Z 00O     |   (7) first ‘free’ here"),
		"    |   (7) first ‘free’ here",
	);
	assert.equal(unstamped("2026-12-06T09:30:02.756845Z 01E+ followed by more"), "followed by more");
	// The container runtime's (CRI) log format: the stream's name, then P (partial) or F (full).
	assert.equal(
		unstamped("2026-12-06T10:00:35.123456789Z stderr F --- FAIL: TestTotal (0.00s)"),
		"--- FAIL: TestTotal (0.00s)",
	);
	assert.equal(
		unstamped("2026-12-06T10:00:35.123456789Z stdout P     at Object.<anonymous>"),
		"    at Object.<anonymous>",
	);
	assert.equal(unstamped("2026-12-06T10:00:35.123456789Z stdout is where it went"), "stdout is where it went");
	// A stream's name in brackets, with a timestamp or alone: one process's lines, whichever stream.
	assert.equal(unstamped("[stderr]     |      |   (8) second ‘free’ here"), "    |      |   (8) second ‘free’ here");
	assert.equal(unstamped("2026-12-06T10:00:35.1234567Z [stdout] FAIL src/a.test.js"), "FAIL src/a.test.js");
	assert.equal(unstamped("[stdin] read 3 lines"), "[stdin] read 3 lines");
	assert.equal(unstamped("[stderr]x"), "[stderr]x");
	// The left edge of the box pnpm draws around a script's output; a blank line of it is the edge alone.
	assert.equal(unstamped("│   ● cart › applies the coupon"), "  ● cart › applies the coupon");
	assert.equal(unstamped("│"), "");
	assert.equal(unstamped("│x"), "│x");
	assert.equal(unstamped("└─ Failed in 2.3s at /repo/packages/api"), "└─ Failed in 2.3s at /repo/packages/api");
	// A program's own log line in a CI job: its timestamp after CI's.
	assert.equal(
		unstamped("2026-12-06T09:30:04.4796252Z 2026-12-01 03:10:03,591 INFO gave up: ledger-sync entered FATAL state"),
		"INFO gave up: ledger-sync entered FATAL state",
	);
	assert.equal(unstamped("[2026-12-06T09:30:02.788Z] [10:18:20] FAILED a"), "FAILED a");
	// A raw log's first line, after the file's byte-order mark.
	assert.equal(unstamped("\ufeff2026-12-02T10:18:20.9133560Z ##[group]Run npm ci"), "##[group]Run npm ci");
	// `gh run view --log`: the job and the step in columns before the timestamp.
	const columns = "build\tRun npm test\t2026-12-02T10:18:20.9133560Z ";
	assert.equal(stampLength(`${columns}FAIL src/a.test.js`), columns.length);
	assert.equal(unstamped(`${columns}  left: 1`), "  left: 1");
	for (const text of [
		"name\tsize\tdate",
		"a\tb\tc\td\t10:18:20 too many columns",
		"2 |     let x = 3;",
		"[ RUN      ] Suite.Case",
		"12:30 is lunch",
		"2026-12-02 release notes",
		"00O not a stamp",
		"#0  0x000055f673d9436e in main (argc=2) at logindex.c:29",
		"#8 [4/5] RUN make check",
		"#8 DONE 0.1s",
		"# 3.14159 is pi",
		"Dec 6 is when we ship",
		"Mon Dec 06 10:00:00 2026 build started",
		"Error: 10:00:00 host foo: bar",
		"",
		"x",
	])
		assert.equal(stampLength(text), 0, text);
});

test("a failure word at the start of a timestamped line is a signal, as it is without the timestamp", () => {
	const lines = Array.from({ length: 400 }, (_, i) => `2026-12-02T10:18:20.${String(i).padStart(7, "0")}Z ok ${i}`);
	lines[199] = "2026-12-02T10:18:20.9133560Z E   assert 580 == 460";
	lines[249] = "2026-12-02T10:18:20.9133560Z FAIL src/cart.test.js";
	const scan = scanText(`${lines.join("\n")}\n`, { ...DEFAULT_CONFIG, headLines: 10, tailLines: 10 });
	assert.deepEqual(
		scan.signals.map((item) => item.lineNumber).sort((a, b) => a - b),
		[200, 250],
	);
});

test("a timestamped line's indentation and continuation forms are read after its timestamp", () => {
	const at = (text: string) => `2026-12-02T10:18:20.9133560Z ${text}`;
	assert.equal(indentOf(at("error[E0308]: mismatched types")), 0);
	assert.equal(indentOf(at("    expected `u32`, found `i64`")), 4);
	assert.equal(indentOf(at("")), -1, "a bare timestamp is a blank line");
	// Routine lines continue a block only in a known continuation form: `  --> file:line` is one.
	assert.ok(continuesBlock(0, at("  --> src/balance.rs:262:9"), "routine"));
	assert.ok(!continuesBlock(0, at("step 7 done"), "routine"));
	assert.ok(isSectionHeader(at("_____ test_refund _____")));
	assert.ok(isBlockMessage(at('  "message": "boom"')));
});

test("recognises a multiplexer's tag before a line, after its timestamp, and leaves a line's own words alone", () => {
	const tagged: [string, string][] = [
		["api-1  | ", "FAIL\texample.com/toolkit/ringbuf\t0.008s"],
		["web.1  | ", "Traceback (most recent call last):"],
		["@acme/api:test: ", "  ● cart › applies the coupon"],
		["web:build: ", "src/app.ts(4,7): error TS2322"],
		["packages/api test: ", "FAIL src/cart.test.ts"],
		["@acme/api: ", "npm error code ELIFECYCLE"],
		["[api] ", "    at Object.<anonymous> (src/a.test.js:4:9)"],
		["[pid 1001] ", "write(2, ...) = -1 EBADF"],
		["app[web.1]: ", "FAIL\texample.com/toolkit/ringbuf\t0.008s"],
		["sshd[812]: ", "error: kex_exchange_identification: Connection closed by remote host"],
		["tests/test_cart.py\t", "E       assert 3 == 4"],
		["web-03.example.com\t", "fatal: unable to access 'https://example.com/app.git/'"],
		// yarn's `workspaces foreach --verbose`: the workspace in brackets, then a colon.
		["[@acme/api]: ", "FAIL src/cart.test.ts"],
		// Earthly's target and a bar.
		["+test | ", "--- FAIL: TestTotal (0.00s)"],
	];
	for (const [tag, text] of tagged) {
		assert.equal(lineTagOf(tag + text), tag, tag);
		assert.equal(untagged(tag + text, tag), text);
		assert.equal(lineTagOf(`2026-12-02T10:18:20.9133560Z ${tag}${text}`), tag, `${tag} after a timestamp`);
		assert.equal(untagged(`2026-12-02T10:18:20.9133560Z ${tag}${text}`, tag), `2026-12-02T10:18:20.9133560Z ${text}`);
	}
	for (const text of [
		"error: expected `;`",
		"note: required from here",
		"warning: unused variable",
		"src/main.c:12: error: bad",
		"src/a.c:12:5: warning: x",
		"   42 |         total = name;",
		"  |",
		"https://example.com/a: moved",
		"std::vector<int>: no match",
		"Tests: 1 failed, 2 passed",
		"Test Suites: 1 failed, 2 passed",
		"Run actions/checkout@v4",
		"error[E0308]: mismatched types",
		"warning[unused]: x",
		"goroutine 7 [running]:",
		"FAIL\texample.com/toolkit/ringbuf\t0.008s",
		"ok  \texample.com/toolkit/queue\t0.004s",
		"4.0K\tsrc/app.ts",
		"name\tsize\tdate",
		"",
	])
		assert.equal(lineTagOf(text), "", text);
	// A line with another tag, or none, is read as it is.
	assert.equal(untagged("db-1   | ready", "api-1  | "), "db-1   | ready");
	assert.equal(untagged("plain line", "api-1  | "), "plain line");
});

test("a tagged line's failure words and blocks are read after its tag, as without it", async () => {
	const job = (tag: string) => {
		const lines = Array.from({ length: 3000 }, (_, i) => `${tag}ok ${i} checked`);
		lines[1500] = `${tag}FAIL\texample.com/toolkit/ringbuf\t0.008s`;
		// Thirty errors, each with the details indented under it (routine lines: their shapes repeat).
		for (let n = 30; n >= 1; n--)
			lines.splice(
				n * 90,
				0,
				`${tag}error: widget ${n} failed to compile`,
				`${tag}    cause: header w${n}.h is missing`,
				`${tag}    in: src/w${n}.c:12`,
			);
		return lines;
	};
	for (const tag of ["", "api-1  | ", "@acme/api:test: ", "packages/api test: "]) {
		const lines = job(tag);
		const options = { ...DEFAULT_CONFIG, id: "0123456789ab", toolName: "bash" };
		const scanned = await scanSource(bufferSource(Buffer.from(lines.join("\n"))), options);
		const fail = lines.findIndex((line) => line.includes("FAIL\t")) + 1;
		assert.ok(
			scanned.scan.signals.some((item) => item.lineNumber === fail),
			`${JSON.stringify(tag)}: FAIL at the start of the job's line is a signal`,
		);
		const { hunks } = await readComposeExtras(scanned, options);
		const first = hunks.find((hunk) => hunk.item.lineNumber === 91);
		assert.deepEqual(
			first?.after.map((row) => row.lineNumber),
			[92, 93],
			`${JSON.stringify(tag)}: the details indented under the error are its block`,
		);
	}
});

test("in jobs interleaved by a multiplexer, a line's block and context are its own job's lines", async () => {
	// Two parallel tasks (turborepo, pnpm -r --parallel): the failing one's lines with another's among them.
	const api = Array.from({ length: 3000 }, (_, i) => `ok ${i} checked`);
	api.splice(
		1500,
		0,
		"Traceback (most recent call last):",
		'  File "app/cart.py", line 12, in total',
		"    return sum(item.price for item in items)",
		"TypeError: unsupported operand type(s) for +: 'int' and 'NoneType'",
		"error: widget 7 failed to compile",
		"    cause: header w7.h is missing",
		"    in: src/w7.c:12",
	);
	const build = (i: number) => `transforming (${i}) src/components/Widget${i}.tsx`;
	const lines: string[] = [];
	const at: number[] = [];
	api.forEach((line, i) => {
		if (i % 2 === 0) lines.push(`@acme/web:build: ${build(i)}`);
		lines.push(`@acme/api:test: ${line}`);
		at.push(lines.length);
	});
	const options = { ...DEFAULT_CONFIG, id: "0123456789ab", toolName: "bash" };
	const scanned = await scanSource(bufferSource(Buffer.from(lines.join("\n"))), options);
	const { hunks } = await readComposeExtras(scanned, options);
	const error = hunks.find((hunk) => hunk.item.lineNumber === at[1504]);
	assert.deepEqual(
		error?.after.map((row) => row.lineNumber),
		[at[1505], at[1506]],
		"the details indented under the error, the other job's line between them left out",
	);
	const exception = hunks.find((hunk) => hunk.item.lineNumber === at[1503]);
	assert.deepEqual(
		exception?.before.map((row) => row.lineNumber),
		[at[1500], at[1501], at[1502]],
		"the traceback above the exception, its frames in the job's own lines",
	);
	// A level is not a job: `[INFO]` and `[ERROR]` lines are read as they come.
	assert.equal(isStreamTag("[ERROR] "), false);
	assert.equal(isStreamTag("[INFO] "), false);
	assert.equal(isStreamTag("[WARN]: "), false);
	assert.equal(isStreamTag(""), false);
	// Nor is a progress count or a time that changes from line to line.
	for (const tag of [
		"[12/345] ",
		"[100%] ",
		"[Sun Dec 06 10:00:00 2026] ",
		"[W 2026-12-01 10:00:00] ",
		"[==========] ",
	])
		assert.equal(isStreamTag(tag), false, tag);
	for (const tag of ["[api] ", "api-1  | ", "@acme/api:test: ", "[pid  8890] "]) assert.ok(isStreamTag(tag), tag);
});

test("after a prefix, the line-start alternatives decide as the whole pattern would", () => {
	const whole = new RegExp(DEFAULT_SIGNAL_PATTERN, "im");
	const lineStart = new RegExp(DEFAULT_LINE_START_PATTERN, "im");
	assert.ok(alternativesOf(DEFAULT_LINE_START_PATTERN).length < alternativesOf(DEFAULT_SIGNAL_PATTERN).length / 2);
	let tested = 0;
	// Lines an alternative anchored inside a group matches at their start (`(?:^|: )fehler: `), besides real ones.
	const anchoredInside = ["fehler: Datei config.yml fehlt", "erreur : fichier absent", "Fehler: x"];
	for (const lines of [anchoredInside, ...loadRealFixtures().map((fixture) => fixture.lines.slice(0, 2000))])
		for (const line of lines)
			for (const prefix of ["2026-12-02T10:18:20.9133560Z ", "api-1  | ", "#8 12.345 "]) {
				// Only a line the whole pattern leaves alone is tested again after its prefix (finder.ts).
				if (whole.test(prefix + line)) continue;
				tested++;
				assert.equal(lineStart.test(line), whole.test(line), JSON.stringify(prefix + line));
			}
	assert.ok(tested > 10_000, `${tested} lines`);
});

test("reads the line a JSON-lines record wraps in its text member, decoded", () => {
	const wrapped: [string, string][] = [
		['{"log":"FAIL src/a.test.js\\n","stream":"stderr","time":"2026-12-06T10:00:00.1Z"}', "FAIL src/a.test.js"],
		[
			'{"Action":"output","Output":"FAIL\\texample.com/shop/invoice\\t0.007s\\n"}',
			"FAIL\texample.com/shop/invoice\t0.007s",
		],
		['{"level":50,"time":1,"msg":"could not connect: \\"db\\" refused"}', 'could not connect: "db" refused'],
		['{"log":"    at Object.<anonymous> (src/a.js:3:9)\\r\\n"}', "    at Object.<anonymous> (src/a.js:3:9)"],
		['{"log":""}', ""],
	];
	for (const [record, line] of wrapped) {
		assert.equal(wrappedLineOf(record), line, record);
		assert.ok(wrappedLineStart(record) > 0, record);
	}
	assert.equal(wrappedLineStart('{"log":"  at f\\n"}'), '{"log":"'.length);
	// After a prefix (a column, a timestamp, a tag) too.
	assert.equal(
		wrappedLineOf('tests/test_cart.py\t{"Output":"--- FAIL: TestTotal (0.00s)\\n"}'),
		"--- FAIL: TestTotal (0.00s)",
	);
	for (const other of [
		"FAIL src/a.test.js",
		'{"log":"FAIL", "and the record goes on',
		`${"x".repeat(300)} {"log":"FAIL"}`,
		'{"status":"FAIL"}',
		'{"log":"bad escape \\x"}',
		`{"log":"${"x".repeat(20_000)}"}`,
	]) {
		assert.equal(wrappedLineOf(other), undefined, other.slice(0, 60));
		if (!other.includes("\\x")) assert.equal(wrappedLineStart(other), 0, other.slice(0, 60));
	}
});

test("reads the line a logfmt record wraps in its quoted message, decoded", () => {
	const wrapped: [string, string][] = [
		['time="2026-12-06T09:30:00Z" level=info msg="FAIL\\texample.com/cart\\t0.004s"', "FAIL\texample.com/cart\t0.004s"],
		[
			'time=2026-12-06T09:30:00Z level=INFO msg="--- FAIL: TestTotals (0.00s)" pkg=cart',
			"--- FAIL: TestTotals (0.00s)",
		],
		['ts=1765013400 level=info message="said \\"no\\" twice"', 'said "no" twice'],
		['level=info msg=""', ""],
		// After the line's timestamp: hosted CI stamps each line a supervisor writes as a record.
		[
			'2026-12-02T10:18:20.9133560Z time="2026-12-06T09:30:00Z" level=info msg="--- FAIL: TestTotals (0.00s)"',
			"--- FAIL: TestTotals (0.00s)",
		],
		['Dec 06 10:00:00 level=error msg="FAIL\\texample.com/cart"', "FAIL\texample.com/cart"],
	];
	for (const [record, line] of wrapped) {
		assert.equal(wrappedLineOf(record), line, record);
		assert.ok(wrappedLineStart(record) > 0, record);
	}
	for (const other of [
		'FAIL msg="x"',
		'level=info msg="unclosed',
		"level=info msg=unquoted",
		'the msg="quoted" is mid-line',
		'2026-12-02T10:18:20.9133560Z the msg="quoted" is mid-line',
		`level=info msg="${"x".repeat(20_000)}"`,
	])
		assert.equal(wrappedLineOf(other), undefined, other.slice(0, 60));
});

test("a wrapped line is a signal line as the line it wraps is, and its block is the wrapped lines", () => {
	const record = (line: string) => JSON.stringify({ log: `${line}\n`, stream: "stdout", time: "2026-12-06T10:00:00Z" });
	// Among 100 routine records (none in the head or the tail), which are signal lines.
	const signalsAmong = (line: string) => {
		const lines = Array.from({ length: 100 }, (_, k) => record(`ok ${k} - case ${k} passed`));
		lines[50] = record(line);
		const scan = scanText(`${lines.join("\n")}\n`, { ...DEFAULT_CONFIG, headLines: 10, tailLines: 10 });
		return scan.signals.map((item) => item.lineNumber);
	};
	assert.deepEqual(signalsAmong("FAIL src/a.test.js"), [51], "a failure word where the wrapped line starts");
	assert.deepEqual(signalsAmong("E       assert 580 == 460"), [51], "pytest's E line");
	assert.deepEqual(signalsAmong("ok 17 - the totals add up"), []);
	// go test -json's output records, whose failure lines only the wrapped line shows.
	for (const output of ["--- FAIL: TestTotal037 (0.00s)", "FAIL\texample.com/shop/invoice\t0.007s"]) {
		const lines = Array.from({ length: 100 }, (_, k) =>
			JSON.stringify({ Action: "output", Package: "example.com/shop/invoice", Output: `ok case ${k}\n` }),
		);
		lines[50] = JSON.stringify({ Action: "output", Package: "example.com/shop/invoice", Output: `${output}\n` });
		const scan = scanText(`${lines.join("\n")}\n`, { ...DEFAULT_CONFIG, headLines: 10, tailLines: 10 });
		assert.deepEqual(
			scan.signals.map((item) => item.lineNumber),
			[51],
			output,
		);
	}
	assert.equal(indentOf(record("    at Object.<anonymous> (src/a.js:3:9)")), 4, "indentation is the wrapped line's");
	assert.ok(
		continuesBlock(0, record("    at Object.<anonymous> (src/a.js:3:9)"), "routine"),
		"a frame continues the block",
	);
});
