// overflow_query search end to end (issue 8, items 9 and 11), through the real Pi runtime: searches
// that queue for a worker keep their whole time and never blame their pattern for the wait, and a
// search whose deadline passes after its last line reports the whole file, not a stop past its end.

import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { type Context, fauxAssistantMessage, fauxToolCall, type ToolResultMessage } from "@mariozechner/pi-ai";
import { MAX_SEARCH_WORKERS, type SearchOptions } from "../../src/query/engine/search.js";
import { CAPTURE_PATH, REPO_ROOT, resultText, runPi, TEST_TOOLS_PATH, writeConfiguredIndex } from "../helpers/pi.js";
import { createTempDir } from "../helpers/tmp.js";

const SEARCH_TOOLS_PATH = join(REPO_ROOT, "test", "fixtures", "ext", "search-tools.ts");
/** What an answer says when it blames the pattern for the time it took. */
const BLAMES_PATTERN = /too slow|nested quantifiers|simpler pattern|backtrack/i;

/** The id of the first [pi-overflow id=…] line the model has seen. */
function seenId(context: Context): string {
	for (const message of context.messages) {
		if (message.role !== "toolResult") continue;
		const id = /\[pi-overflow id=([0-9a-f]{12})/.exec(resultText(message as ToolResultMessage))?.[1];
		if (id) return id;
	}
	throw new Error("the model saw no [pi-overflow id=…] line");
}

/** The overflow_query answers whose call searched for `pattern`, in call order. */
function answersFor(results: ToolResultMessage[], pattern: string, calls: Map<string, string>): ToolResultMessage[] {
	return results.filter((result) => result.toolName === "overflow_query" && calls.get(result.toolCallId) === pattern);
}

/**
 * A stage-2 entry like writeConfiguredIndex's whose overflow_query runs with engine tuning (a
 * virtual search clock): the tool is registered again under the same name, which replaces it.
 */
function writeTunedIndex(
	dir: string,
	configText: string,
	tuning: Pick<SearchOptions, "virtualMsPerLine" | "hardStopGraceMs">,
): string {
	const path = join(dir, "overflow-tuned.ts");
	const source = (file: string) => JSON.stringify(join(REPO_ROOT, "src", file));
	writeFileSync(
		path,
		[
			`import { getAgentDir } from "@mariozechner/pi-coding-agent";`,
			`import { parseConfig } from ${source("config/config.ts")};`,
			`import { createOverflowExtension } from ${source("extension.ts")};`,
			`import { OverflowStore, resolveStoreRoot } from ${source("store/index.ts")};`,
			`import { registerQueryTool } from ${source("surface/tool.ts")};`,
			`export default function (pi: any) {`,
			`  const config = parseConfig(${JSON.stringify(configText)});`,
			`  const storeRoot = resolveStoreRoot(getAgentDir());`,
			`  createOverflowExtension({ config, configPath: "test-config.json", storeRoot })(pi);`,
			`  registerQueryTool(pi, { config: config.config, store: new OverflowStore({ root: storeRoot }), searchTuning: ${JSON.stringify(tuning)} });`,
			`}`,
		].join("\n"),
	);
	return path;
}

test("three searches for a word on line 1, queued behind six runaway searches in the same turn, each find it and none blames its pattern", async (t) => {
	const agentDir = await createTempDir(t);
	const configured = writeConfiguredIndex(agentDir, JSON.stringify({ searchTimeoutMs: 500 }));
	const patterns = [...Array.from({ length: 6 }, () => "(a+)+$"), ...Array.from({ length: 3 }, () => "needle")];
	const calls = new Map<string, string>();
	const run = await runPi({
		agentDir,
		extensionPaths: [CAPTURE_PATH, SEARCH_TOOLS_PATH, configured],
		responses: [
			fauxAssistantMessage([fauxToolCall("word_then_evil_lines", { word: "needle", lines: 5000 })], {
				stopReason: "toolUse",
			}),
			(context) => {
				const id = seenId(context);
				const toolCalls = patterns.map((search) => fauxToolCall("overflow_query", { id, search }));
				for (const call of toolCalls) calls.set(call.id, call.arguments.search as string);
				return fauxAssistantMessage(toolCalls, { stopReason: "toolUse" });
			},
			fauxAssistantMessage("done"),
		],
	});
	assert.ok(patterns.length > MAX_SEARCH_WORKERS, "more searches than workers: some wait");
	const needles = answersFor(run.toolResults, "needle", calls);
	const runaways = answersFor(run.toolResults, "(a+)+$", calls);
	assert.equal(needles.length, 3);
	assert.equal(runaways.length, 6);
	for (const answer of needles) {
		const text = resultText(answer);
		assert.equal(answer.isError, false, text);
		assert.match(text, /^\s*1: needle$/m, `line 1 is found: ${text}`);
		assert.match(text, /1 hit line in 5001 lines/, text);
		assert.doesNotMatch(text, /stopped|no hit so far/, text);
		assert.doesNotMatch(text, BLAMES_PATTERN, text);
	}
	for (const answer of runaways) {
		const text = resultText(answer);
		assert.match(text, /search stopped after \d+ ms \(searchTimeoutMs=500\)/, text);
		assert.match(text, BLAMES_PATTERN, "a pattern that ran out of its own time is named as too slow");
	}
});

test("a search whose deadline passes right after its last line reports the whole file, not a stop past its end", async (t) => {
	const agentDir = await createTempDir(t);
	const lines = 3200;
	// On the virtual clock each searched line takes 100 / 3200 ms: the 100 ms searchTimeoutMs runs out
	// exactly when line 3200, the last, has been searched. Real time plays no part (60 s grace).
	const tuned = writeTunedIndex(agentDir, JSON.stringify({ searchTimeoutMs: 100 }), {
		virtualMsPerLine: 100 / lines,
		hardStopGraceMs: 60_000,
	});
	const run = await runPi({
		agentDir,
		extensionPaths: [CAPTURE_PATH, TEST_TOOLS_PATH, tuned],
		responses: [
			fauxAssistantMessage(
				[fauxToolCall("big_log", { lines, errors: { "1": "needle first", [String(lines)]: "needle last" } })],
				{ stopReason: "toolUse" },
			),
			(context) =>
				fauxAssistantMessage([fauxToolCall("overflow_query", { id: seenId(context), search: "needle" })], {
					stopReason: "toolUse",
				}),
			fauxAssistantMessage("done"),
		],
	});
	const [answer] = run.toolResults.filter((result) => result.toolName === "overflow_query");
	const text = resultText(answer);
	assert.equal(answer.isError, false, text);
	assert.match(text, /2 hit lines in 3200 lines/, text);
	assert.match(text, /^\s*3200: needle last$/m, text);
	assert.doesNotMatch(text, /stopped|at least/, text);
});
