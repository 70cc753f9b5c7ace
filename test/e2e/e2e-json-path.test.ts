// jsonPath end to end (issue 8, item 8): through the real Pi runtime a tool returns a large JSON
// document, and the scripted model asks for values inside it — eight paths in one assistant turn,
// which Pi runs in parallel — then a 100 000-level nesting and a text that is not JSON. Every answer
// is checked against JSON.parse of the same text; none may exceed thresholdChars.

import assert from "node:assert/strict";
import { join } from "node:path";
import { test } from "node:test";
import { type Context, fauxAssistantMessage, fauxToolCall, type ToolResultMessage } from "@mariozechner/pi-ai";
import { formatPathPrefix, parseJsonPath, selectJsonPath } from "../../src/json/path.js";
import { MAX_JSON_PATH_RUNS, readJsonPathRuns } from "../../src/json/run-queue.js";
import { recordsDocument } from "../fixtures/ext/json-tools.js";
import { CAPTURE_PATH, REPO_ROOT, resultText, runPi, writeConfiguredIndex } from "../helpers/pi.js";
import { createTempDir } from "../helpers/tmp.js";

const JSON_TOOLS_PATH = join(REPO_ROOT, "test", "fixtures", "ext", "json-tools.ts");
const THRESHOLD = 24_000;
// A loaded machine must not turn a slow read into a failed test: time bounds are tested with an injected clock.
const CONFIG = JSON.stringify({ searchTimeoutMs: 60_000 });

/** The id of the latest [pi-overflow id=…] line the model has seen. */
function latestId(context: Context): string {
	const ids = [...JSON.stringify(context.messages).matchAll(/\[pi-overflow id=([0-9a-f]{12})/g)];
	const id = ids[ids.length - 1]?.[1];
	if (id === undefined) throw new Error("the model saw no [pi-overflow id=…] line");
	return id;
}

function queryAnswers(results: ToolResultMessage[]): ToolResultMessage[] {
	const answers = results.filter((result) => result.toolName === "overflow_query");
	for (const answer of answers)
		assert.ok(resultText(answer).length <= THRESHOLD, `an answer of ${resultText(answer).length} chars`);
	return answers;
}

/** Checks one answer against JSON.parse + selectJsonPath: the value as pretty JSON, or the same error. */
function assertAnswerLikeJsonParse(answer: ToolResultMessage, root: unknown, path: string): void {
	const text = resultText(answer);
	const parsed = parseJsonPath(path);
	assert.ok("segments" in parsed);
	const selected = selectJsonPath(root, parsed.segments);
	if ("error" in selected) {
		assert.equal(answer.isError, true, text);
		assert.equal(text, `overflow_query: ${selected.error}`);
		return;
	}
	assert.equal(answer.isError, false, text);
	assert.ok(
		text.startsWith(`[pi-overflow id=`) &&
			text.split("\n")[0]!.includes(`] jsonPath ${formatPathPrefix(parsed.segments)}: `),
		text.slice(0, 200),
	);
	assert.equal(text.slice(text.indexOf("\n") + 1), JSON.stringify(selected.value, null, 2), path);
}

test("eight jsonPath calls in one turn each answer from a 10 MB JSON result, at most two reading at once", async (t) => {
	const agentDir = await createTempDir(t);
	const count = 60_000;
	const document = recordsDocument(count);
	const paths = [
		"records[0].name",
		"$.records[30000]",
		"records[59999].owner",
		"summary",
		"count",
		'records[7].owner["key.with.dots"]',
		"records[60000]",
		"records[5].colour",
	];
	const run = await runPi({
		agentDir,
		extensionPaths: [CAPTURE_PATH, JSON_TOOLS_PATH, writeConfiguredIndex(agentDir, CONFIG)],
		responses: [
			fauxAssistantMessage([fauxToolCall("json_text", { records: count })], { stopReason: "toolUse" }),
			(context) =>
				fauxAssistantMessage(
					paths.map((jsonPath) => fauxToolCall("overflow_query", { id: latestId(context), jsonPath })),
					{ stopReason: "toolUse" },
				),
			fauxAssistantMessage("done"),
		],
	});
	const answers = queryAnswers(run.toolResults);
	assert.equal(answers.length, paths.length);
	const root: unknown = JSON.parse(document);
	paths.forEach((path, index) => assertAnswerLikeJsonParse(answers[index]!, root, path));
	assert.match(resultText(answers[6]!), /\$\.records is an array of 60000 items \(indexes 0–59999\)/);
	assert.match(
		resultText(answers[7]!),
		/\$\.records\[5\] is an object with 6 keys: "id", "name", "path", "tags", "owner", "score"/,
	);
	const runs = readJsonPathRuns();
	assert.ok(
		runs.peak >= 1 && runs.peak <= MAX_JSON_PATH_RUNS,
		`at most ${MAX_JSON_PATH_RUNS} at once, saw ${runs.peak}`,
	);
	assert.deepEqual({ running: runs.running, waiting: runs.waiting }, { running: 0, waiting: 0 });
});

test("a path into 100 000 nested arrays answers the value's start and its full size; a broken text says where it breaks", async (t) => {
	const agentDir = await createTempDir(t);
	const levels = 100_000;
	const run = await runPi({
		agentDir,
		extensionPaths: [CAPTURE_PATH, JSON_TOOLS_PATH, writeConfiguredIndex(agentDir, CONFIG)],
		responses: [
			fauxAssistantMessage([fauxToolCall("json_text", { levels })], { stopReason: "toolUse" }),
			(context) =>
				fauxAssistantMessage(
					[
						fauxToolCall("overflow_query", { id: latestId(context), jsonPath: "[0][0][0]" }),
						fauxToolCall("overflow_query", { id: latestId(context), jsonPath: "[0][1]" }),
					],
					{ stopReason: "toolUse" },
				),
			fauxAssistantMessage(
				[
					fauxToolCall("bash", {
						command: "printf '{\"items\": ['; seq -s, 1 20000 | tr -d '\\n'; printf '], oops}\\n'",
					}),
				],
				{ stopReason: "toolUse" },
			),
			(context) =>
				fauxAssistantMessage([fauxToolCall("overflow_query", { id: latestId(context), jsonPath: "items[0]" })], {
					stopReason: "toolUse",
				}),
			fauxAssistantMessage("done"),
		],
	});
	const [inner, missing, broken] = queryAnswers(run.toolResults);
	const innerText = resultText(inner!);
	assert.equal(inner!.isError, false, innerText.slice(0, 300));
	assert.match(
		innerText,
		/^\[pi-overflow id=[0-9a-f]{12}\] jsonPath \$\[0\]\[0\]\[0\]: an array of 1 item\n\[\n {2}\[\n {4}\[\n/,
	);
	// The pretty text of 99 997 nested arrays around "bottom": each level adds "[\n", its indent, "\n", its indent and "]".
	let size = '"bottom"'.length;
	for (let depth = levels - 4; depth >= 0; depth--) size += 4 + 2 * (depth + 1) + 2 * depth;
	assert.match(innerText, new RegExp(`it is ${size} chars as pretty JSON`));
	assert.equal(missing!.isError, true);
	assert.equal(
		resultText(missing!),
		"overflow_query: jsonPath: $[0][1] does not exist: $[0] is an array of 1 item (indexes 0–0)",
	);
	assert.equal(broken!.isError, true);
	assert.match(
		resultText(broken!),
		/is not JSON \(Expected double-quoted property name in JSON at position \d+ \(line 1, column \d+\)\); use search or lines instead$/,
	);
});
