// overflow_query end to end through the real Pi runtime: lines, search and jsonPath answers read from
// the stored original by a scripted model that takes the id from the result it has just received.

import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import {
	type Context,
	fauxAssistantMessage,
	type FauxResponseStep,
	fauxToolCall,
	type ToolResultMessage,
} from "@mariozechner/pi-ai";
import { formatPathPrefix, parseJsonPath, selectJsonPath } from "../../src/json/path.js";
import { MAX_JSON_PATH_RUNS, readJsonPathRuns } from "../../src/json/run-queue.js";
import { MAX_SEARCH_WORKERS, type SearchOptions } from "../../src/query/engine/search.js";
import { recordsDocument } from "../fixtures/ext/json-tools.js";
import {
	CAPTURE_PATH,
	INDEX_PATH,
	REPO_ROOT,
	resultText,
	openSharedPi,
	runPi,
	type SharedPi,
	TEST_TOOLS_PATH,
	writeConfiguredIndex,
} from "../helpers/pi.js";
import { createTempDir, DEFAULT_TEMP_PREFIX } from "../helpers/tmp.js";

// overflow_query end to end: the scripted model reads the id from a result it has just received
// (as a model would) and queries the stored original through the real Pi runtime.

const THRESHOLD = 24_000;

/** The id of the latest [pi-overflow id=…] line the model has seen (a shared session holds earlier ones). */
function seenId(context: Context): string {
	for (const message of [...context.messages].reverse()) {
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

// The four tests below take turns on one session: same extensions, default config, each reading only
// the answers of its own run.
describe("overflow_query in one shared session (default config)", () => {
	let agentDir = "";
	let shared: SharedPi | undefined;
	before(async () => {
		agentDir = mkdtempSync(join(tmpdir(), DEFAULT_TEMP_PREFIX));
		shared = await openSharedPi({ agentDir, extensionPaths: [CAPTURE_PATH, TEST_TOOLS_PATH, INDEX_PATH] });
	});
	after(() => {
		shared?.close();
		rmSync(agentDir, { recursive: true, force: true });
	});
	const sharedRun = (responses: FauxResponseStep[]) => {
		assert.ok(shared, "the shared session opened");
		return shared.run(responses);
	};

	test("a line range in the middle of seq 1 300000 comes back with the stored line numbers", async () => {
		const run = await sharedRun(
			script(fauxToolCall("bash", { command: "seq 1 300000" }), (id) => ({
				id,
				lines: { start: 150000, end: 150004 },
			})),
		);
		const [answer] = answers(run.toolResults);
		assert.equal(answer.isError, false);
		const text = resultText(answer);
		for (let n = 150000; n <= 150004; n++) assert.match(text, new RegExp(`^\\s*${n}: ${n}$`, "m"));
		assert.doesNotMatch(text, /^\s*149999: /m);
		assert.doesNotMatch(text, /^\s*150005: /m);
	});

	test("a search with two nearby hits returns one merged window with no line twice", async () => {
		const errors = { "5000": "ERROR alpha failed", "5003": "ERROR beta failed" };
		const run = await sharedRun(
			script(fauxToolCall("big_log", { lines: 20000, errors }), (id) => ({ id, search: "alpha|beta" })),
		);
		const [answer] = answers(run.toolResults);
		const text = resultText(answer);
		assert.equal(answer.isError, false, text);
		const numbers = [...text.matchAll(/^\s*(\d+)[:-] /gm)].map((match) => Number(match[1]));
		assert.deepEqual(numbers, [4998, 4999, 5000, 5001, 5002, 5003, 5004, 5005], text);
		assert.match(text, /^\s*5000: ERROR alpha failed$/m);
		assert.match(text, /^\s*5003: ERROR beta failed$/m);
		assert.match(text, /\b2 hit/);
	});

	test("jsonPath reaches into an 8 000-item JSON array, with quoted keys", async () => {
		const run = await sharedRun(
			script(
				fauxToolCall("json_doc", { count: 8000 }),
				(id) => ({ id, jsonPath: "items[7999].name" }),
				(id) => ({ id, jsonPath: '$.items[42]["key.with.dots"]' }),
				(id) => ({ id, jsonPath: "items[8000]" }),
			),
		);
		const [name, dotted, missing] = answers(run.toolResults);
		assert.equal(name.isError, false);
		assert.match(resultText(name), /"item-7999"/);
		assert.match(resultText(dotted), /\btrue\b/);
		assert.equal(missing.isError, true);
		assert.match(resultText(missing), /8000 items/);
	});

	test("bad and unknown ids, a bad regex and a range past the end are short error results the model can act on", async () => {
		const run = await sharedRun(
			script(
				fauxToolCall("bash", { command: "seq 1 300000" }),
				() => ({ id: "../../etc/passwd" }),
				() => ({ id: "0123456789ab" }),
				(id) => ({ id, search: "(unclosed" }),
				(id) => ({ id, lines: { start: 400000, end: 400010 } }),
				(id) => ({ id, search: "x", lines: { start: 1, end: 2 } }),
			),
		);
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

// jsonPath end to end (issue 8, item 8): through the real Pi runtime a tool returns a large JSON
// document, and the scripted model asks for values inside it — eight paths in one assistant turn,
// which Pi runs in parallel — then a 100 000-level nesting and a text that is not JSON. Every answer
// is checked against JSON.parse of the same text; none may exceed thresholdChars.

const JSON_TOOLS_PATH = join(REPO_ROOT, "test", "fixtures", "ext", "json-tools.ts");
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

// overflow_query search end to end (issue 8, items 9 and 11), through the real Pi runtime: searches
// that queue for a worker keep their whole time and never blame their pattern for the wait, and a
// search whose deadline passes after its last line reports the whole file, not a stop past its end.

const SEARCH_TOOLS_PATH = join(REPO_ROOT, "test", "fixtures", "ext", "search-tools.ts");
/** What an answer says when it blames the pattern for the time it took. */
const BLAMES_PATTERN = /too slow|nested quantifiers|simpler pattern|backtrack/i;

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
