// runQuery (src/query/index.ts): ids, one selector per call, the overview, and every answer within
// thresholdChars.

import assert from "node:assert/strict";
import { after, describe, test } from "node:test";
import type { QueryParams } from "../../src/query/index.js";
import { disposeSearchWorkers } from "../../src/query/engine/search.js";
import { SEQ_TEXT, storeEntry, createDeps, numberedLines, query, queryError } from "../helpers/query-fixtures.js";
import { buildMeta } from "../helpers/store-fixtures.js";

after(() => disposeSearchWorkers());

describe("ids, selectors and bounds", () => {
	test("rejects an unknown id, saying it is unknown or expired", async (t) => {
		const deps = await createDeps(t);
		const message = await queryError(deps, { id: "0123456789ab", lines: { start: 1 } });
		assert.match(message, /no stored output with id=0123456789ab; it is unknown or expired/);
	});

	test("rejects an id that could form a path", async (t) => {
		const deps = await createDeps(t);
		const message = await queryError(deps, { id: "../../etc/passwd", lines: { start: 1 } });
		assert.match(message, /^overflow_query: id must be 12 lowercase hex characters/);
	});

	test("rejects two selectors in one call", async (t) => {
		const deps = await createDeps(t);
		const meta = await storeEntry(deps.store, SEQ_TEXT);
		const message = await queryError(deps, { id: meta.id, search: "1", lines: { start: 1 } });
		assert.match(message, /give at most one of search, lines, jsonPath, since \(got search and lines\)/);
	});

	test("treats an entry whose text vanished as expired", async (t) => {
		const deps = await createDeps(t);
		const meta = await storeEntry(deps.store, SEQ_TEXT);
		const { unlink } = await import("node:fs/promises");
		await unlink(deps.store.textPath(meta.id));
		assert.match(await queryError(deps, { id: meta.id, search: "1" }), /unknown or expired/);
	});

	for (const thresholdChars of [1000, 24_000]) {
		test(`keeps every answer within thresholdChars = ${thresholdChars}`, async (t) => {
			const deps = await createDeps(t, { thresholdChars, maxLineChars: 2000, contextLines: 5, maxResults: 1000 });
			const wide = Array.from(
				{ length: 3000 },
				(_, index) => `${index % 3 === 0 ? "error " : "ok "}${"w".repeat(index % 4000)}`,
			).join("\n");
			const text = await storeEntry(deps.store, wide);
			const json = await storeEntry(
				deps.store,
				JSON.stringify({ list: Array.from({ length: 5000 }, (_, index) => ({ index, text: "v".repeat(index % 50) })) }),
			);
			const asked: QueryParams[] = [
				{ id: text.id },
				{ id: text.id, search: "error" },
				{ id: text.id, search: "error w{100}" },
				{ id: text.id, search: "^ok" },
				{ id: text.id, lines: { start: 1 } },
				{ id: text.id, lines: { start: 2999, end: 3000 } },
				{ id: json.id },
				{ id: json.id, jsonPath: "$" },
				{ id: json.id, jsonPath: "list[4999]" },
				{ id: json.id, search: "index" },
			];
			for (const params of asked) {
				const answer = await query(deps, params);
				assert.ok(answer.text.length <= thresholdChars);
				assert.ok(answer.text.startsWith(`[pi-overflow id=`), answer.text.slice(0, 80));
			}
		});
	}

	test("answers the same query with the same bytes", async (t) => {
		const deps = await createDeps(t);
		const meta = await storeEntry(deps.store, SEQ_TEXT);
		for (const params of [{ search: "^2\\d*99$" }, { lines: { start: 77_777, end: 78_000 } }]) {
			const first = await query(deps, { id: meta.id, ...params });
			const second = await query(deps, { id: meta.id, ...params });
			assert.equal(first.text, second.text);
		}
	});
});

describe("CR-separated records", () => {
	const records = Array.from({ length: 5000 }, (_, i) => (i === 3000 ? "error: quota" : `record ${i + 1} ok`));
	const text = Buffer.from(records.join("\r"));

	test("an entry with separator cr numbers its records in lines and search alike", async (t) => {
		const deps = await createDeps(t);
		const writer = await deps.store.beginEntry("00000000c0de");
		await writer.write(text);
		await writer.commit(buildMeta("00000000c0de", text, { totalLines: 5000, separator: "cr" }));
		const lines = await query(deps, { id: "00000000c0de", lines: { start: 3001, end: 3002 } });
		assert.deepEqual(
			numberedLines(lines.text).map(([n, , shown]) => [n, shown]),
			[
				[3001, "error: quota"],
				[3002, "record 3002 ok"],
			],
		);
		const search = await query(deps, { id: "00000000c0de", search: "error:" });
		assert.deepEqual(
			numberedLines(search.text)
				.filter(([, separator]) => separator === ":")
				.map(([n, , shown]) => [n, shown]),
			[[3001, "error: quota"]],
		);
	});

	test("an entry stored without a separator reads its CR-only text as one line, as before", async (t) => {
		const deps = await createDeps(t);
		const meta = await storeEntry(deps.store, text);
		assert.equal(meta.totalLines, 1);
		const search = await query(deps, { id: meta.id, search: "error:" });
		assert.deepEqual(
			numberedLines(search.text)
				.filter(([, separator]) => separator === ":")
				.map(([n]) => n),
			[1],
		);
		assert.match((await query(deps, { id: meta.id, lines: { start: 1 } })).text, /lines 1–1 of 1/);
	});
});
