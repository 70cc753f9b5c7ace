import assert from "node:assert/strict";
import { after, describe, test, type TestContext } from "node:test";
import type { AgentToolResult, ExtensionAPI, Theme, ToolDefinition } from "@mariozechner/pi-coding-agent";
import type { Component } from "@mariozechner/pi-tui";
import { Value } from "@sinclair/typebox/value";
import { createDefaultConfig, type OverflowConfig } from "../../src/config/config.js";
import { QueryError } from "../../src/query/index.js";
import { disposeSearchWorkers } from "../../src/query/engine/search.js";
import { type EntryMeta, OverflowStore } from "../../src/store/index.js";
import {
	createQueryGuidelines,
	describeAnswer,
	describeQueryTool,
	QUERY_TOOL_NAME,
	QueryParameters,
	registerQueryTool,
} from "../../src/surface/tool.js";
import { writeStoreEntry } from "../helpers/store-entry.js";
import { createTempDir } from "../helpers/tmp.js";

after(() => disposeSearchWorkers());

// A tool definition as the tests drive it: the parameters' static type does not matter here.
type CapturedTool = ToolDefinition<typeof QueryParameters, unknown>;

/** Registers the tool on a stand-in for Pi's ExtensionAPI and returns what was registered. */
function captureTool(config: OverflowConfig, store: OverflowStore): CapturedTool {
	let captured: CapturedTool | undefined;
	const pi = {
		registerTool(tool: CapturedTool) {
			captured = tool;
		},
	} as unknown as ExtensionAPI;
	registerQueryTool(pi, { config, store });
	assert.ok(captured, "registerTool was called");
	return captured;
}

/** Renders as a plain-text terminal would: colours are identity functions here. */
const plainTheme = { fg: (_color: string, text: string) => text, bold: (text: string) => text } as unknown as Theme;

function renderContext(isError = false, lastComponent?: Component) {
	return {
		args: {},
		toolCallId: "call-1",
		invalidate: () => {},
		lastComponent,
		state: {},
		cwd: "/",
		executionStarted: true,
		argsComplete: true,
		isPartial: false,
		expanded: false,
		showImages: false,
		isError,
	};
}

async function createStoreWithEntry(t: TestContext): Promise<{ store: OverflowStore; meta: EntryMeta }> {
	const store = new OverflowStore({ root: await createTempDir(t) });
	const text = `${Array.from({ length: 1000 }, (_, index) => (index % 100 === 0 ? `error ${index + 1}` : `ok ${index + 1}`)).join("\n")}\n`;
	const meta = await writeStoreEntry(store, "00000000c0de", text);
	return { store, meta };
}

describe("schema", () => {
	test("accepts an id with one selector and rejects ids that could form a path", () => {
		assert.ok(Value.Check(QueryParameters, { id: "0123456789ab" }));
		assert.ok(Value.Check(QueryParameters, { id: "0123456789ab", search: "error|fail" }));
		assert.ok(Value.Check(QueryParameters, { id: "0123456789ab", lines: { start: 1, end: 20 } }));
		assert.ok(Value.Check(QueryParameters, { id: "0123456789ab", lines: { start: 5 } }));
		assert.ok(Value.Check(QueryParameters, { id: "0123456789ab", jsonPath: 'items[0]["key.with.dots"]' }));
		for (const id of ["../../etc/passwd", "0123456789AB", "0123456789a", "0123456789abc", "", "0123456789ab/"]) {
			assert.ok(!Value.Check(QueryParameters, { id, search: "x" }), id);
		}
		assert.ok(!Value.Check(QueryParameters, { id: "0123456789ab", lines: { start: 0 } }));
		assert.ok(!Value.Check(QueryParameters, { id: "0123456789ab", lines: { start: 1.5 } }));
		assert.ok(!Value.Check(QueryParameters, { id: "0123456789ab", search: "" }));
		assert.ok(!Value.Check(QueryParameters, { id: "0123456789ab", path: "/etc/passwd" }));
	});
});

describe("model-facing text", () => {
	test("the description teaches all three selectors with an example each and states the time bound", () => {
		const description = describeQueryTool({ ...createDefaultConfig(), searchTimeoutMs: 2000 });
		assert.match(description, /\[pi-overflow id=<id>\]/);
		assert.match(description, /"search":"error\|failed"/);
		assert.match(description, /"lines":\{"start":1200,"end":1300\}/);
		assert.match(description, /"jsonPath":"items\[7\]\.name"/);
		assert.match(description, /A search stops after 2 s \(searchTimeoutMs\)/);
	});

	test("every guideline names the tool", () => {
		const guidelines = createQueryGuidelines(createDefaultConfig());
		assert.ok(guidelines.length >= 2);
		for (const guideline of guidelines) {
			assert.ok(guideline.includes(QUERY_TOOL_NAME), guideline);
			assert.ok(!/this tool/i.test(guideline), guideline);
		}
		assert.ok(guidelines.some((guideline) => guideline.includes("2 s")));
	});
});

describe("execute", () => {
	test("returns the answer text and its summary in details", async (t) => {
		const { store, meta } = await createStoreWithEntry(t);
		const tool = captureTool(createDefaultConfig(), store);
		const result = await tool.execute(
			"call-1",
			{ id: meta.id, search: "^error" },
			undefined,
			undefined,
			undefined as never,
		);
		const text = result.content[0]?.type === "text" ? result.content[0].text : "";
		assert.match(text, /search \/\^error\/i: 10 hit lines in 1000 lines; all shown/);
		assert.deepEqual(result.details, {
			selector: "search",
			truncated: false,
			hits: 10,
			shownHits: 10,
			timedOut: false,
		});
	});

	test("throws a QueryError with a short message for a bad request", async (t) => {
		const { store, meta } = await createStoreWithEntry(t);
		const tool = captureTool(createDefaultConfig(), store);
		await assert.rejects(
			tool.execute("call-1", { id: meta.id, lines: { start: 5000 } }, undefined, undefined, undefined as never),
			(error: unknown) => {
				assert.ok(error instanceof QueryError);
				assert.match(error.message, /has 1000 lines; ask for lines within 1–1000/);
				return true;
			},
		);
		await assert.rejects(
			tool.execute("call-1", { id: "../../etc/passwd" }, undefined, undefined, undefined as never),
			/id must be 12 lowercase hex characters/,
		);
	});

	test("turns an unexpected failure into one short line, never a stack", async (t) => {
		const { store } = await createStoreWithEntry(t);
		const broken = Object.create(store) as OverflowStore;
		broken.readMeta = async () => {
			const error = new Error("disk on fire");
			error.stack = "Error: disk on fire\n    at somewhere (file.js:1:1)";
			throw error;
		};
		const tool = captureTool(createDefaultConfig(), broken);
		await assert.rejects(
			tool.execute("call-1", { id: "00000000c0de" }, undefined, undefined, undefined as never),
			(error: unknown) => {
				assert.ok(error instanceof Error);
				assert.equal(error.message, "overflow_query failed: disk on fire");
				return true;
			},
		);
	});
});

describe("rendering", () => {
	test("renders the call as one line: tool, id and selector", async (t) => {
		const { store } = await createStoreWithEntry(t);
		const tool = captureTool(createDefaultConfig(), store);
		const cases: Array<[Record<string, unknown>, string]> = [
			[{ id: "00000000c0de", search: "error|fail" }, "overflow_query 00000000c0de search /error|fail/i"],
			[{ id: "00000000c0de", lines: { start: 10, end: 20 } }, "overflow_query 00000000c0de lines 10–20"],
			[{ id: "00000000c0de", lines: { start: 10 } }, "overflow_query 00000000c0de lines 10…"],
			[{ id: "00000000c0de", jsonPath: "a.b" }, "overflow_query 00000000c0de jsonPath a.b"],
			[{ id: "00000000c0de" }, "overflow_query 00000000c0de overview"],
			[{}, "overflow_query overview"],
		];
		for (const [args, expected] of cases) {
			const component = tool.renderCall!(args as never, plainTheme, renderContext() as never);
			assert.deepEqual(
				component.render(200).map((line) => line.trimEnd()),
				[expected],
			);
		}
	});

	test("renders the result as a compact summary, the full answer only when expanded", async (t) => {
		const { store, meta } = await createStoreWithEntry(t);
		const tool = captureTool(createDefaultConfig(), store);
		const result = (await tool.execute(
			"call-1",
			{ id: meta.id, search: "^error" },
			undefined,
			undefined,
			undefined as never,
		)) as AgentToolResult<unknown>;
		const compact = tool.renderResult!(
			result,
			{ expanded: false, isPartial: false },
			plainTheme,
			renderContext() as never,
		);
		assert.deepEqual(
			compact.render(200).map((line) => line.trimEnd()),
			["10 hit lines, 10 shown"],
		);
		const expanded = tool.renderResult!(
			result,
			{ expanded: true, isPartial: false },
			plainTheme,
			renderContext() as never,
		);
		assert.ok(expanded.render(200).length > 10);
		const partial = tool.renderResult!(
			result,
			{ expanded: false, isPartial: true },
			plainTheme,
			renderContext() as never,
		);
		assert.deepEqual(
			partial.render(200).map((line) => line.trimEnd()),
			["querying…"],
		);
		const failed = {
			content: [
				{
					type: "text" as const,
					text: "overflow_query: no stored output with id=0123456789ab; it is unknown or expired",
				},
			],
			details: undefined,
		};
		const error = tool.renderResult!(
			failed,
			{ expanded: false, isPartial: false },
			plainTheme,
			renderContext(true) as never,
		);
		assert.equal(error.render(200).length, 1);
		assert.match(error.render(200)[0]!, /unknown or expired/);
	});

	test("summarises each kind of answer in a few words", () => {
		assert.equal(
			describeAnswer({ selector: "search", truncated: true, hits: 542, shownHits: 50, timedOut: false }),
			"542 hit lines, 50 shown",
		);
		assert.equal(
			describeAnswer({ selector: "search", truncated: false, hits: 0, shownHits: 0, timedOut: false }),
			"no hit",
		);
		assert.equal(
			describeAnswer({ selector: "search", truncated: true, hits: 3, shownHits: 3, timedOut: true }),
			"stopped at the time limit: 3+ hit lines, 3 shown",
		);
		assert.equal(
			describeAnswer({ selector: "lines", truncated: true, lines: [10, 99], totalLines: 300 }),
			"lines 10–99 of 300 (cut)",
		);
		assert.equal(
			describeAnswer({ selector: "jsonPath", truncated: false, path: "$.a", valueType: "a string" }),
			"$.a: a string",
		);
		assert.equal(describeAnswer({ selector: "info", truncated: false }), "overview");
		assert.equal(
			describeAnswer({ selector: "since", truncated: true, counts: { new: 1, gone: 2, still: 3 } }),
			"1 new, 2 gone, 3 still there (cut)",
		);
	});
});
