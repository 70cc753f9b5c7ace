// Fuzzed overflow_query calls (issue 5): random ids, regexes, ranges, paths, extra fields and wrong
// types, straight into the tool's execute (Pi validates the schema first; execute must not rely on
// it). Never an uncaught or non-Error failure, never a stack trace, every answer bounded, every
// error short.

import assert from "node:assert/strict";
import { join } from "node:path";
import { after, test } from "node:test";
import fc from "fast-check";
import { createDefaultConfig } from "../../src/config/config.js";
import { disposeSearchWorkers } from "../../src/query/engine/search.js";
import { OverflowStore } from "../../src/store/index.js";
import { registerQueryTool } from "../../src/surface/tool.js";
import { jsonDocument, numberedLog } from "../fixtures/ext/tools.js";
import { writeStoreEntry } from "../helpers/store-entry.js";
import { createTempDir } from "../helpers/tmp.js";

const STRESS = process.env.STRESS === "1";
const RUNS = STRESS ? 5000 : 500;
const THRESHOLD = 2000;
after(() => disposeSearchWorkers());

type Execute = (
	toolCallId: string,
	params: unknown,
	signal?: AbortSignal,
) => Promise<{ content: Array<{ type: string; text?: string }> }>;

async function setUp(t: Parameters<typeof createTempDir>[0]): Promise<{ execute: Execute; ids: string[] }> {
	const root = join(await createTempDir(t), "store");
	const store = new OverflowStore({ root });
	const config = { ...createDefaultConfig(), thresholdChars: THRESHOLD, searchTimeoutMs: 200 };
	const ids = ["aaaaaaaaaaa1", "aaaaaaaaaaa2", "aaaaaaaaaaa3"];
	const texts = [
		numberedLog(3000, { 1500: "ERROR: in the middle" }),
		jsonDocument(300),
		`${"a".repeat(30)}!\n`.repeat(2000),
	];
	for (const [index, id] of ids.entries()) await writeStoreEntry(store, id, texts[index]);
	let execute: Execute | undefined;
	registerQueryTool({ registerTool: (tool: { execute: Execute }) => (execute = tool.execute) } as never, {
		config,
		store,
	});
	assert.ok(execute);
	return { execute, ids };
}

const anyValue = fc.oneof(
	fc.string(),
	fc.integer(),
	fc.double(),
	fc.boolean(),
	fc.constant(null),
	fc.constant(undefined),
	fc.array(fc.integer(), { maxLength: 3 }),
	fc.object({ maxDepth: 1 }),
);

function queryArbitrary(ids: string[]) {
	const id = fc.oneof(
		{ weight: 4, arbitrary: fc.constantFrom(...ids) },
		fc.constantFrom("0123456789ab", "../../etc/passwd", "", "AAAAAAAAAAA1", `${ids[0]}\n`, `${ids[0]}/x`),
		fc.string({ unit: fc.constantFrom(..."0123456789abcdef"), maxLength: 14 }),
		anyValue,
	);
	const search = fc.oneof(
		fc.string({ maxLength: 30 }),
		fc.constantFrom(
			"(a+)+$",
			"error",
			"(",
			"[",
			"\\",
			"a{2,1}",
			"(?<x>a)\\k<x>",
			"^$",
			".*",
			"\\b",
			"(?=a)",
			"a|",
			"[^]",
			"\\u{1F600}",
		),
		anyValue,
	);
	const int = fc.oneof(
		fc.integer({ min: -5, max: 4000 }),
		fc.constantFrom(0, 1, 2999, 3000, 3001, Number.MAX_SAFE_INTEGER, -1),
		fc.double(),
		anyValue,
	);
	const lines = fc.oneof(fc.record({ start: int, end: int }, { requiredKeys: [] }), anyValue);
	const jsonPath = fc.oneof(
		fc.string({ maxLength: 30 }),
		fc.constantFrom(
			"$",
			"items[299].name",
			"items[300]",
			"items[0]['key.with.dots']",
			"a..b",
			"[",
			"$[-1]",
			"__proto__",
			"items[0].__proto__",
		),
		anyValue,
	);
	// Mostly one selector (as the schema asks), sometimes anything at all.
	return fc.oneof(
		fc.record({ id }),
		fc.record({ id, search }),
		fc.record({ id, lines }),
		fc.record({ id, jsonPath }),
		fc.record({ id, search, lines, jsonPath, extra: anyValue }, { requiredKeys: [] }),
		anyValue,
	);
}

test(`random overflow_query arguments (${RUNS} runs): answers bounded, errors short Errors without stack traces`, async (t) => {
	const { execute, ids } = await setUp(t);
	let answered = 0;
	let refused = 0;
	await fc.assert(
		fc.asyncProperty(queryArbitrary(ids), async (params) => {
			try {
				const result = await execute("fuzz", params);
				const text = result.content.map((part) => part.text ?? "").join("\n");
				assert.ok(text.length <= THRESHOLD, `answer of ${text.length} chars for ${JSON.stringify(params)}`);
				answered++;
			} catch (error) {
				assert.ok(error instanceof Error, `an Error, not ${typeof error}`);
				assert.ok(error.message.length > 0 && error.message.length <= 600, `short: ${error.message.slice(0, 700)}`);
				assert.doesNotMatch(error.message, /\n\s+at /, "no stack trace in the message");
				refused++;
			}
		}),
		{ numRuns: RUNS },
	);
	t.diagnostic(`${answered} answered, ${refused} refused`);
	assert.ok(answered > 0 && refused > 0);
});
