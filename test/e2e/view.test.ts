// What the model is shown, end to end through the real Pi runtime: the view's classes of decisive
// lines, a configured signalPattern, and the subject line above a signal.

import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { type Context, fauxAssistantMessage, fauxToolCall } from "@mariozechner/pi-ai";
import { parseConfig } from "../../src/config/config.js";
import { findPatternKeywords } from "../../src/regex/keywords.js";
import { SIGNAL_SCAN_BUDGET_MS } from "../../src/scan/scan.js";
import { CI_FRAMES, frameOutput } from "../fixtures/ci/frames.js";
import { isShownInView, parseViewLines } from "../fixtures/real/fixtures.js";
import { loadUnseenFixtures } from "../fixtures/unseen/fixtures.js";
import {
	CAPTURE_PATH,
	CUTTER_PATH,
	INDEX_PATH,
	REPO_ROOT,
	resultText,
	runPi,
	TEST_TOOLS_PATH,
	writeConfiguredIndex,
} from "../helpers/pi.js";
import { benchmarkOutput, tableRow } from "../helpers/subject-output.js";
import { openPiSession } from "../helpers/pi-session.js";
import { createTempDir } from "../helpers/tmp.js";

// The view's classes of decisive lines (issue 9), each end to end through the real Pi runtime: the
// real bash tool runs a generator that prints a synthetic output of one class, and the test reads
// what the model was shown. A signal line with its block and its leading context; a repeated line in
// the middle; the rare line in uniform output; one error among thousands of warnings; a JSON document
// and JSON lines with problem objects (and overflow_query going straight to one); the id, totals and
// decisive lines within the first 2 000 characters; what an earlier layer's cut left out.

const THRESHOLD = 24_000;
/** Pi's compaction keeps this much of each tool result. */
const COMPACTION_CHARS = 2_000;

/** Runs `script` (an ES module printing an output) with the real bash tool; returns the view. */
async function viewOf(agentDir: string, script: string, exitCode = 0): Promise<string> {
	writeFileSync(join(agentDir, "gen.mjs"), script);
	const run = await runPi({
		agentDir,
		cwd: agentDir,
		extensionPaths: [CAPTURE_PATH, INDEX_PATH],
		responses: [
			fauxAssistantMessage([fauxToolCall("bash", { command: `node gen.mjs; exit ${exitCode}` })], {
				stopReason: "toolUse",
			}),
			fauxAssistantMessage("done"),
		],
	});
	assert.deepEqual(run.extensionErrors, []);
	const view = resultText(run.toolResults[0]);
	assert.ok(view.length <= THRESHOLD, `view has ${view.length} chars`);
	return view;
}

/** The shown lines of a view: number → [separator, text] (":" shown for itself, "-" context). */
function shownLines(view: string): Map<number, { separator: string; text: string }> {
	const shown = new Map<number, { separator: string; text: string }>();
	for (const line of view.split("\n")) {
		const match = /^\s*(\d+)([:-]) (.*)$/.exec(line);
		if (match) shown.set(Number(match[1]), { separator: match[2], text: match[3] });
	}
	return shown;
}

/** A generator printing `count` routine lines of `make(n)` around `middle` lines placed at `at`. */
function generator(count: number, routine: string, middle: Record<number, string>): string {
	return `const middle = ${JSON.stringify(middle)};
const out = [];
for (let n = 1; n <= ${count}; n++) out.push(middle[n] ?? (${routine})(n));
process.stdout.write(out.join("\\n") + "\\n");
`;
}

test("a compiler error keeps its block (--> location, notes) and a traceback its frames above the exception", async (t) => {
	const agentDir = await createTempDir(t);
	const middle: Record<number, string> = {
		5001: "error[E0308]: mismatched types",
		5002: "  --> src/parser.rs:212:17",
		5003: "   |",
		5004: "212 |     let total: u32 = parse(line);",
		5005: "   |                ---   ^^^^^^^^^^^ expected `u32`, found `Option<u32>`",
		5006: "   = note: expected type `u32`",
		5007: "              found enum `Option<u32>`",
		9001: "Traceback (most recent call last):",
		9002: '  File "/app/etl/run.py", line 41, in main',
		9003: "    load_rows(batch)",
		9004: '  File "/app/etl/load.py", line 88, in load_rows',
		9005: "    total += int(row[3])",
		9006: "ValueError: invalid literal for int() with base 10: 'N/A'",
	};
	const view = await viewOf(agentDir, generator(14000, "(n) => `   Compiling crate_${n} v0.1.${n % 7}`", middle), 101);
	const shown = shownLines(view);
	assert.equal(shown.get(5001)?.text, middle[5001]);
	assert.ok(shown.get(5002)?.text.startsWith(middle[5002]), "the --> location under the error");
	// In uniform output the block's lines are rare shapes too: they may carry that note.
	assert.ok(shown.get(5006)?.text.startsWith(middle[5006]), "the note of the diagnostic");
	assert.equal(shown.get(9006)?.text, middle[9006]);
	assert.ok(shown.get(9004)?.text.startsWith(middle[9004]), "the frame above the exception");
	// Compaction keeps the first 2 000 characters: the id, the totals and the decisive lines are there.
	const start = view.slice(0, COMPACTION_CHARS);
	assert.match(start, /^\[pi-overflow id=[0-9a-f]{12}\] bash output: 14000 lines, \d+ bytes/);
	assert.match(start, /key +5001: error\[E0308\]: mismatched types/);
	assert.match(start, /key +9006: ValueError: invalid literal/);
});

test("a line repeated hundreds of times in the middle is shown once with its count and its last line", async (t) => {
	const agentDir = await createTempDir(t);
	const middle: Record<number, string> = {};
	for (let n = 9000; n < 9400; n++)
		middle[n] = `waiting for lock on /var/lib/app.db (attempt ${n - 8999}, holder pid 4242)`;
	const view = await viewOf(agentDir, generator(20000, "(n) => `processed item ${n} in ${n % 13} ms`", middle));
	const shown = shownLines(view);
	assert.equal(shown.get(9000)?.text, `${middle[9000]}  [×400 lines of this shape, the last at line 9399]`);
});

test("the one line of a rare shape in uniform output is shown, though it has no failure word", async (t) => {
	const agentDir = await createTempDir(t);
	const rare = "replica db-2 promoted itself to primary at term 9 while db-1 was still serving writes";
	const view = await viewOf(
		agentDir,
		generator(30000, "(n) => `GET /api/items/${n} 200 ${n % 17}ms`", { 17345: rare }),
	);
	assert.equal(shownLines(view).get(17345)?.text, `${rare}  [a rare line: its shape appears once]`);
});

test("one error among 5 000 warnings keeps its place, first among the key lines", async (t) => {
	const agentDir = await createTempDir(t);
	const error = "src/config.c:418:9: error: use of undeclared identifier 'cfg'";
	const view = await viewOf(
		agentDir,
		generator(
			10000,
			"(n) => n % 2 ? `src/mod_${n}.c:${n % 90}:5: warning: unused variable 'x_${n}' [-Wunused-variable]` : `  CC mod_${n}.o`",
			{ 6123: error },
		),
		2,
	);
	assert.equal(shownLines(view).get(6123)?.text, error);
	assert.match(
		view.slice(0, COMPACTION_CHARS),
		/key +6123: src\/config\.c:418:9: error: use of undeclared identifier 'cfg'/,
	);
});

test("a JSON document: its outline and the problem object with its jsonPath, which overflow_query reads", async (t) => {
	const agentDir = await createTempDir(t);
	writeFileSync(
		join(agentDir, "gen.mjs"),
		`const results = [];
for (let i = 0; i < 3000; i++) results.push(i === 1777
	? { id: "order-1777", valid: false, errors: [{ instancePath: "/total", keyword: "minimum", message: "must be >= 0" }] }
	: { id: "order-" + i, valid: true, errors: [] });
process.stdout.write(JSON.stringify({ checked: 3000, results }, null, 2) + "\\n");
`,
	);
	let view = "";
	const run = await runPi({
		agentDir,
		cwd: agentDir,
		extensionPaths: [CAPTURE_PATH, INDEX_PATH],
		responses: [
			fauxAssistantMessage([fauxToolCall("bash", { command: "node gen.mjs" })], { stopReason: "toolUse" }),
			(context: Context) => {
				view = JSON.stringify(context.messages);
				const id = /\[pi-overflow id=([0-9a-f]{12})/.exec(view)?.[1] ?? "";
				const path = /\[(\$\.results\[\d+\]): \\"valid\\": false\]/.exec(view)?.[1] ?? "$.none";
				return fauxAssistantMessage([fauxToolCall("overflow_query", { id, jsonPath: path })], {
					stopReason: "toolUse",
				});
			},
			fauxAssistantMessage("done"),
		],
	});
	assert.deepEqual(run.extensionErrors, []);
	const [bash, query] = run.toolResults;
	const text = resultText(bash);
	assert.match(
		text.slice(0, COMPACTION_CHARS),
		/\n {2}json: \{"checked": 3000, "results": \[3000 items\]\}; 1 object says it is a problem: \$\.results\[1777\] \(line \d+\)\n/,
	);
	assert.match(text, /\n\s*\d+: {5}\{ {2}\[\$\.results\[1777\]: "valid": false\]\n/);
	assert.match(text, /\d+[:-] {11}"message": "must be >= 0"/, "the object's lines follow it");
	assert.equal(query.isError, false, resultText(query));
	const answer = resultText(query);
	assert.match(answer.split("\n")[0], /jsonPath \$\.results\[1777\]: /);
	assert.deepEqual(JSON.parse(answer.slice(answer.indexOf("\n") + 1)), {
		id: "order-1777",
		valid: false,
		errors: [{ instancePath: "/total", keyword: "minimum", message: "must be >= 0" }],
	});
});

test("minified JSON of 7 MB and arrays nested 400 000 deep are outlined", async (t) => {
	// Issue 22, item 1: the outline's line cursor searched to the end of its 1 MiB buffer for a newline on
	// every container, so a document without newlines stalled Pi for seconds (15 s for 6.5 MB minified).
	// That the loop keeps turning is counted, not timed, by the test of a document nested 3 million deep.
	const cases = [
		{
			params: { records: 40_000, minified: true },
			outline: '{"kind": "records", "count": 40000, "records": [40000 items], "summary": {1 key}}',
		},
		{ params: { levels: 400_000 }, outline: "[1 item]" },
	];
	for (const { params, outline } of cases) {
		const agentDir = await createTempDir(t);
		const pi = await openPiSession({
			agentDir,
			cwd: agentDir,
			extensionPaths: [CAPTURE_PATH, INDEX_PATH, join(REPO_ROOT, "test", "fixtures", "ext", "json-tools.ts")],
		});
		try {
			pi.respond(
				fauxAssistantMessage([fauxToolCall("json_text", params)], { stopReason: "toolUse" }),
				fauxAssistantMessage("done"),
			);
			await pi.session.prompt("go");
		} finally {
			pi.close();
		}
		assert.deepEqual(pi.extensionErrors, []);
		const result = pi.session.messages.find((message) => message.role === "toolResult");
		assert.ok(result?.role === "toolResult");
		const view = resultText(result);
		assert.ok(view.length <= THRESHOLD, `view has ${view.length} chars`);
		assert.ok(view.includes(`\n  json: ${outline}`), view);
	}
});

test("JSON lines: a record at error level (pino's numeric 50) is shown with its line number", async (t) => {
	const agentDir = await createTempDir(t);
	const record = '{"level":50,"time":1764500000000,"pid":7,"msg":"payment capture failed","orderId":"A-4411"}';
	const view = await viewOf(
		agentDir,
		generator(
			8000,
			'(n) => JSON.stringify({ level: 30, time: 1764500000000 + n, pid: 7, msg: "request served", reqId: n })',
			{ 4411: record },
		),
	);
	assert.match(
		view.slice(0, COMPACTION_CHARS),
		/\n {2}json: JSON lines: 8000 records; 1 object says it is a problem: the record at line 4411 \(line 4411\)\n/,
	);
	assert.equal(shownLines(view).get(4411)?.text.startsWith(record), true);
});

test("a result an earlier layer cut to 12 000 characters: under the marker, the error it cut away, numbered", async (t) => {
	const agentDir = await createTempDir(t);
	const run = await runPi({
		agentDir,
		extensionPaths: [CAPTURE_PATH, TEST_TOOLS_PATH, CUTTER_PATH, INDEX_PATH],
		responses: [
			fauxAssistantMessage(
				[fauxToolCall("big_log", { lines: 50000, errors: { "40000": "ERROR hidden by the cutter" } })],
				{ stopReason: "toolUse" },
			),
			fauxAssistantMessage("done"),
		],
	});
	const text = resultText(run.toolResults[0]);
	assert.ok(text.length <= THRESHOLD);
	const below = text.slice(text.search(/\n\[pi-overflow id=[0-9a-f]{12} lines=50000 /) + 1).split("\n");
	// big_log's row shows only its text: where the full output is, right under the marker.
	assert.match(below[1]!, /^\[pi-overflow: full output: \/.*\/my-pi\/pi-overflow\/[0-9a-f]{12}\.txt\]$/);
	assert.equal(below[2], "[what the cut left out, with the output's line numbers:]");
	assert.ok(
		below.some((line) => /^ *40000: ERROR hidden by the cutter$/.test(line)),
		below.join("\n"),
	);
	assert.match(below[below.length - 1], /^ *50000: /, "and the output's last line");
});

// A configured signalPattern through the real Pi runtime (issue 8, item 7): a pattern that is slow
// but allowed (`\w+Exception`, quadratic on runs of word characters) on 24 lines of 40 000 of them
// from real bash. The result arrives bounded, and the view says where and after how long the signal
// search stopped, or, on a machine fast enough to finish, that it found what was there to find.

const LINES = 24;
const LINE_CHARS = 40_000;
/** The one line that matches: FooException at its end. */
const SIGNAL_LINE = 12;

/** Line numbers shown in a view (`  12: text`). */
function shownLineNumbers(view: string): number[] {
	return [...view.matchAll(/^\s*(\d+): /gm)].map((match) => Number(match[1]));
}

test("a slow configured signalPattern on 24 lines of 40 000 word characters: bounded result, and the view says where the search stopped", async (t) => {
	const agentDir = await createTempDir(t);
	const config = { signalPattern: "\\w+Exception", headLines: 2, tailLines: 2 };
	assert.deepEqual(parseConfig(JSON.stringify(config)).problems, [], "the pattern is allowed: slow, not catastrophic");
	const index = writeConfiguredIndex(agentDir, JSON.stringify(config));
	const command = `for i in $(seq 1 ${LINES}); do head -c ${LINE_CHARS} /dev/zero | tr '\\0' a; [ $i = ${SIGNAL_LINE} ] && printf FooException; echo; done`;
	const run = await runPi({
		agentDir,
		extensionPaths: [CAPTURE_PATH, index],
		responses: [
			fauxAssistantMessage([fauxToolCall("bash", { command })], { stopReason: "toolUse" }),
			fauxAssistantMessage("done"),
		],
	});
	assert.deepEqual(run.extensionErrors, []);
	const [result] = run.toolResults;
	const view = resultText(result);
	assert.ok(view.length <= THRESHOLD, `bounded: ${view.length} chars`);
	const header = view.split("\n")[0];
	assert.match(
		header,
		new RegExp(
			`^\\[pi-overflow id=[0-9a-f]{12}\\] bash output: ${LINES} lines, ${LINES * (LINE_CHARS + 1) + "FooException".length} bytes`,
		),
		header,
	);

	const shown = shownLineNumbers(view);
	const stopped = /; signal search stopped at line (\d+) of 24 after (\d+) ms \(signalPattern too slow\)$/.exec(header);
	if (stopped) {
		const atLine = Number(stopped[1]);
		assert.ok(atLine >= 1 && atLine <= LINES, `stopped at a line of the output: ${atLine}`);
		assert.ok(Number(stopped[2]) > SIGNAL_SCAN_BUDGET_MS, "reports the time spent, past the budget");
		assert.equal(
			shown.includes(SIGNAL_LINE),
			atLine > SIGNAL_LINE,
			`line ${SIGNAL_LINE} is shown if and only if it was searched (stopped at ${atLine})`,
		);
		t.diagnostic(`signal search stopped at line ${atLine} after ${stopped[2]} ms`);
	} else {
		// Only a machine fast enough to search everything within the budget gets here.
		assert.doesNotMatch(view, /signal search stopped/, "no other notice of a stop");
		assert.ok(shown.includes(SIGNAL_LINE), `the completed search found line ${SIGNAL_LINE}`);
		t.diagnostic("the signal search completed within its budget");
	}
	assert.deepEqual(shown.slice(0, 2), [1, 2], "the head is complete");
	assert.deepEqual(shown.slice(-2), [23, 24], "the tail is complete");
});

test("a configured signalPattern of words finds its lines anywhere in 200 000 lines of real bash output, through the keyword prefilter", async (t) => {
	const agentDir = await createTempDir(t);
	const config = { signalPattern: "kaput|\\bboom\\b" };
	assert.deepEqual(
		findPatternKeywords(config.signalPattern),
		["boom", "kaput"],
		"the pattern has keywords: the prefilter runs",
	);
	// What this test proves is where the lines are found, not how fast: the search's clock is frozen.
	const index = writeConfiguredIndex(agentDir, JSON.stringify(config), { frozenScanClock: true });
	// Line 77 777 plainly, line 123 457 with ANSI escapes splitting the word, line 190 001 in upper case.
	const command = `awk 'BEGIN { for (i = 1; i <= 200000; i++) { if (i == 77777) print "worker 3: kaput at step " i; else if (i == 123457) printf "step %d \\033[31mKA\\033[0mPUT here\\n", i; else if (i == 190001) print "BOOM went step " i; else print "step " i " ok, boomerang " i % 7 } }'`;
	const run = await runPi({
		agentDir,
		extensionPaths: [CAPTURE_PATH, index],
		responses: [
			fauxAssistantMessage([fauxToolCall("bash", { command })], { stopReason: "toolUse" }),
			fauxAssistantMessage("done"),
		],
	});
	assert.deepEqual(run.extensionErrors, []);
	const view = resultText(run.toolResults[0]);
	assert.match(view.split("\n")[0], /^\[pi-overflow id=[0-9a-f]{12}\] bash output: 200000 lines/);
	assert.doesNotMatch(view, /signal search stopped/);
	assert.match(view, /^\s*77777: worker 3: kaput at step 77777$/m);
	assert.match(view, /^\s*123457: step 123457 KAPUT here$/m);
	assert.match(view, /^\s*190001: BOOM went step 190001$/m);
	assert.match(view, /the signal pattern matched 3 lines/);
});

// The subject-line rule through the real Pi runtime (the unit cases are test/unit/subject-lines.test.ts).

test("through the real Pi runtime, the model sees the failing benchmark's table row with its true line number", async (t) => {
	const agentDir = await createTempDir(t);
	const { lines, row, signal } = benchmarkOutput(4000, 17, 10, 4000);
	writeFileSync(join(agentDir, "output.txt"), lines.join("\n") + "\n");
	let seen = "";
	const run = await runPi({
		agentDir,
		cwd: agentDir,
		extensionPaths: [CAPTURE_PATH, INDEX_PATH],
		responses: [
			fauxAssistantMessage([fauxToolCall("bash", { command: "cat output.txt; exit 1" })], { stopReason: "toolUse" }),
			(context: Context) => {
				const result = context.messages.find((message) => message.role === "toolResult");
				seen =
					result?.role === "toolResult"
						? result.content.map((part) => (part.type === "text" ? part.text : "")).join("\n")
						: "";
				return fauxAssistantMessage("done");
			},
		],
	});
	assert.deepEqual(run.extensionErrors, []);
	assert.match(seen, new RegExp(`^\\[pi-overflow id=[0-9a-f]{12}\\] bash output: ${lines.length} lines`));
	const shown = parseViewLines(seen);
	assert.equal(shown.get(signal), `: ${lines[signal - 1]}`);
	assert.equal(shown.get(row), `- ${tableRow(17)}`);
	assert.ok(seen.length <= 24_000);
});

test("a JSON document nested 3 million deep is outlined while Pi's event loop keeps turning", async (t) => {
	// Issue 22, item 4: the outline pass ran each 1 MiB chunk without a turn for the event loop (and kept an
	// object per open container, whose garbage collection took seconds). The pass yields at least once per
	// 128 KiB whatever the clock says, each time by a macrotask (setImmediate), so 6 MB give it ≥ 45 turns. The
	// pass's turns are counted, not timed: the macrotasks it queues (about 40 others are queued meanwhile, by the
	// store and the scan). A 1 ms interval ticking meanwhile counted only turns 1 ms apart, which a loaded
	// machine does not promise: it once counted 39 of the ≥ 40 asked.
	const agentDir = await createTempDir(t);
	const pi = await openPiSession({
		agentDir,
		cwd: agentDir,
		extensionPaths: [CAPTURE_PATH, INDEX_PATH, join(REPO_ROOT, "test", "fixtures", "ext", "json-tools.ts")],
	});
	let turns = 0;
	let counting = false;
	const setImmediateBefore = globalThis.setImmediate;
	const countingSetImmediate = ((callback: (...args: unknown[]) => void, ...args: unknown[]) => {
		if (counting && new Error().stack?.includes("readJsonFindings")) turns++;
		return setImmediateBefore(callback, ...args);
	}) as typeof setImmediate;
	globalThis.setImmediate = Object.assign(countingSetImmediate, setImmediateBefore);
	const unsubscribe = pi.session.subscribe((event) => {
		if (event.type === "tool_execution_start") counting = true;
		if (event.type === "tool_execution_end") counting = false;
	});
	try {
		pi.respond(
			fauxAssistantMessage([fauxToolCall("json_text", { levels: 3_000_000 })], { stopReason: "toolUse" }),
			fauxAssistantMessage("done"),
		);
		await pi.session.prompt("go");
	} finally {
		globalThis.setImmediate = setImmediateBefore;
		unsubscribe();
		pi.close();
	}
	assert.deepEqual(pi.extensionErrors, []);
	const result = pi.session.messages.find((message) => message.role === "toolResult");
	assert.ok(result?.role === "toolResult");
	const view = resultText(result);
	assert.ok(view.includes("\n  json: [1 item]"), view);
	// Past JSON_OUTLINE_LEVELS only syntax is read (the lexer's tight loops), and the view says so.
	assert.match(view, /\n {2}json: \[1 item\]; nested deeper than 10000 levels: what lies deeper was not read/, view);
	assert.ok(turns >= 45, `the outline pass gave the event loop ${turns} turns`);
});

test("a CI job whose step failed: the model sees that step's head, its odd line, its end and its verdict", async (t) => {
	const agentDir = await createTempDir(t);
	// A real pylint run (the unseen corpus's tuning half) as the failing step of a GitHub Actions job, with steps after it.
	const fixture = loadUnseenFixtures("tuning").find((candidate) => candidate.name === "pylint-no-value-for-argument");
	assert.ok(fixture);
	const frame = CI_FRAMES.find((candidate) => candidate.name === "github-always");
	assert.ok(frame);
	const job = frameOutput(frame, fixture);
	writeFileSync(join(agentDir, "job.log"), job.text);
	const run = await runPi({
		agentDir,
		cwd: agentDir,
		extensionPaths: [CAPTURE_PATH, INDEX_PATH],
		responses: [
			fauxAssistantMessage([fauxToolCall("bash", { command: "cat job.log; exit 1" })], { stopReason: "toolUse" }),
			fauxAssistantMessage("done"),
		],
	});
	assert.deepEqual(run.extensionErrors, []);
	const seen = resultText(run.toolResults[0]);
	assert.ok(seen.length <= THRESHOLD, `view has ${seen.length} chars`);
	const shown = parseViewLines(seen);
	const lines = job.text.split("\n");
	const opener = lines.findIndex((line) => line.includes("##[group]Run make check")) + 1;
	const verdict = lines.findIndex((line) => line.includes("##[error]Process completed")) + 1;
	assert.ok(shown.has(opener) && shown.has(verdict), "the failed step's opener and verdict");
	for (const line of job.decisive)
		assert.ok(isShownInView(shown, line.lineNumber, line.shown, 500), `line ${line.lineNumber}`);
	assert.match(seen, /\n {2}\.\.\. \d+ lines after the failed step's verdict: the job's own last steps \.\.\.\n/);
	assert.ok(shown.has(lines.length - 1), "the job's last line");
});
