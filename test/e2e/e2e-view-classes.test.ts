// The view's classes of decisive lines (issue 9), each end to end through the real Pi runtime: the
// real bash tool runs a generator that prints a synthetic output of one class, and the test reads
// what the model was shown. A signal line with its block and its leading context; a repeated line in
// the middle; the rare line in uniform output; one error among thousands of warnings; a JSON document
// and JSON lines with problem objects (and overflow_query going straight to one); the id, totals and
// decisive lines within the first 2 000 characters; what an earlier layer's cut left out.

import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { type Context, fauxAssistantMessage, fauxToolCall } from "@mariozechner/pi-ai";
import { CAPTURE_PATH, CUTTER_PATH, INDEX_PATH, resultText, runPi, TEST_TOOLS_PATH } from "../helpers/pi.js";
import { createTempDir } from "../helpers/tmp.js";

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
	assert.equal(below[1], "[what the cut left out, with the output's line numbers:]");
	assert.ok(
		below.some((line) => /^ *40000: ERROR hidden by the cutter$/.test(line)),
		below.join("\n"),
	);
	assert.match(below[below.length - 1], /^ *50000: /, "and the output's last line");
});
