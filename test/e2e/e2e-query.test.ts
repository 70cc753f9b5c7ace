// overflow_query end to end: the scripted model reads the id from a result it has just received
// (as a model would) and queries the stored original through the real Pi runtime.

import assert from "node:assert/strict";
import { test } from "node:test";
import {
	type Context,
	fauxAssistantMessage,
	type FauxResponseStep,
	fauxToolCall,
	type ToolResultMessage,
} from "@mariozechner/pi-ai";
import { CAPTURE_PATH, INDEX_PATH, resultText, runPi, TEST_TOOLS_PATH, writeConfiguredIndex } from "../helpers/pi.js";
import { createTempDir } from "../helpers/tmp.js";

const THRESHOLD = 24_000;

/** The id of the first [pi-overflow id=…] line the model has seen. */
function seenId(context: Context): string {
	for (const message of context.messages) {
		if (message.role !== "toolResult") continue;
		const text = message.content.map((part) => (part.type === "text" ? part.text : "")).join("\n");
		const id = /\[pi-overflow id=([0-9a-f]{12})/.exec(text)?.[1];
		if (id) return id;
	}
	throw new Error("the model saw no [pi-overflow id=…] line");
}

/** One tool call that produces a big output, then each query built from the id the model saw. */
function script(
	produce: ReturnType<typeof fauxToolCall>,
	...queries: Array<(id: string) => Record<string, unknown>>
): FauxResponseStep[] {
	return [
		fauxAssistantMessage([produce], { stopReason: "toolUse" }),
		...queries.map(
			(query) => (context: Context) =>
				fauxAssistantMessage([fauxToolCall("overflow_query", query(seenId(context)))], { stopReason: "toolUse" }),
		),
		fauxAssistantMessage("done"),
	];
}

function answers(results: ToolResultMessage[]): ToolResultMessage[] {
	const queries = results.filter((result) => result.toolName === "overflow_query");
	for (const answer of queries) assert.ok(resultText(answer).length <= THRESHOLD, "every answer is bounded");
	return queries;
}

test("a line range in the middle of seq 1 300000 comes back with the stored line numbers", async (t) => {
	const agentDir = await createTempDir(t);
	const run = await runPi({
		agentDir,
		extensionPaths: [CAPTURE_PATH, INDEX_PATH],
		responses: script(fauxToolCall("bash", { command: "seq 1 300000" }), (id) => ({
			id,
			lines: { start: 150000, end: 150004 },
		})),
	});
	const [answer] = answers(run.toolResults);
	assert.equal(answer.isError, false);
	const text = resultText(answer);
	for (let n = 150000; n <= 150004; n++) assert.match(text, new RegExp(`^\\s*${n}: ${n}$`, "m"));
	assert.doesNotMatch(text, /^\s*149999: /m);
	assert.doesNotMatch(text, /^\s*150005: /m);
});

test("a search with two nearby hits returns one merged window with no line twice", async (t) => {
	const agentDir = await createTempDir(t);
	const errors = { "5000": "ERROR alpha failed", "5003": "ERROR beta failed" };
	const run = await runPi({
		agentDir,
		extensionPaths: [CAPTURE_PATH, TEST_TOOLS_PATH, INDEX_PATH],
		responses: script(fauxToolCall("big_log", { lines: 20000, errors }), (id) => ({ id, search: "alpha|beta" })),
	});
	const [answer] = answers(run.toolResults);
	const text = resultText(answer);
	assert.equal(answer.isError, false, text);
	const numbers = [...text.matchAll(/^\s*(\d+)[:-] /gm)].map((match) => Number(match[1]));
	assert.deepEqual(numbers, [4998, 4999, 5000, 5001, 5002, 5003, 5004, 5005], text);
	assert.match(text, /^\s*5000: ERROR alpha failed$/m);
	assert.match(text, /^\s*5003: ERROR beta failed$/m);
	assert.match(text, /\b2 hit/);
});

test("jsonPath reaches into an 8 000-item JSON array, with quoted keys", async (t) => {
	const agentDir = await createTempDir(t);
	const run = await runPi({
		agentDir,
		extensionPaths: [CAPTURE_PATH, TEST_TOOLS_PATH, INDEX_PATH],
		responses: script(
			fauxToolCall("json_doc", { count: 8000 }),
			(id) => ({ id, jsonPath: "items[7999].name" }),
			(id) => ({ id, jsonPath: '$.items[42]["key.with.dots"]' }),
			(id) => ({ id, jsonPath: "items[8000]" }),
		),
	});
	const [name, dotted, missing] = answers(run.toolResults);
	assert.equal(name.isError, false);
	assert.match(resultText(name), /"item-7999"/);
	assert.match(resultText(dotted), /\btrue\b/);
	assert.equal(missing.isError, true);
	assert.match(resultText(missing), /8000 items/);
});

test("bad and unknown ids, a bad regex and a range past the end are short error results the model can act on", async (t) => {
	const agentDir = await createTempDir(t);
	const run = await runPi({
		agentDir,
		extensionPaths: [CAPTURE_PATH, INDEX_PATH],
		responses: script(
			fauxToolCall("bash", { command: "seq 1 300000" }),
			() => ({ id: "../../etc/passwd" }),
			() => ({ id: "0123456789ab" }),
			(id) => ({ id, search: "(unclosed" }),
			(id) => ({ id, lines: { start: 400000, end: 400010 } }),
			(id) => ({ id, search: "x", lines: { start: 1, end: 2 } }),
		),
	});
	const [badId, unknown, badRegex, pastEnd, twoSelectors] = answers(run.toolResults);
	for (const answer of [badId, unknown, badRegex, pastEnd, twoSelectors]) {
		assert.equal(answer.isError, true);
		const text = resultText(answer);
		assert.ok(text.length < 600, `short: ${text}`);
		assert.doesNotMatch(text, /\n\s+at /, "no stack trace");
	}
	assert.match(resultText(badId), /id/);
	assert.doesNotMatch(resultText(badId), /root:/, "nothing read from the path");
	assert.match(resultText(unknown), /unknown or expired/);
	assert.match(resultText(badRegex), /invalid regex/);
	assert.match(resultText(pastEnd), /300000 lines/);
	assert.match(resultText(twoSelectors), /at most one/);
});

// How long the answer takes is measured by `npm run bench` (catastrophic regex row).
test("a catastrophic regex answers within its time bound and says it stopped", async (t) => {
	const agentDir = await createTempDir(t);
	const configured = writeConfiguredIndex(agentDir, JSON.stringify({ searchTimeoutMs: 500 }));
	const run = await runPi({
		agentDir,
		extensionPaths: [CAPTURE_PATH, TEST_TOOLS_PATH, configured],
		responses: [
			fauxAssistantMessage([fauxToolCall("evil_lines", { lines: 5000 })], { stopReason: "toolUse" }),
			(context) =>
				fauxAssistantMessage([fauxToolCall("overflow_query", { id: seenId(context), search: "(a+)+$" })], {
					stopReason: "toolUse",
				}),
			fauxAssistantMessage("done"),
		],
	});
	const [answer] = answers(run.toolResults);
	// The regex never ends by itself on these lines: an answer at all means the search was stopped.
	assert.match(resultText(answer), /was still running and was stopped/);
	assert.match(resultText(answer), /simpler/);
});
