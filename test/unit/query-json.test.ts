// overflow_query's jsonPath answer (src/query/json.ts): the value at a path as pretty JSON, cut
// with deeper paths suggested; errors say what exists.

import assert from "node:assert/strict";
import { after, describe, test } from "node:test";
import { disposeSearchWorkers } from "../../src/query/engine/search.js";
import { storeEntry, createDeps, query, queryError } from "../helpers/query-fixtures.js";

after(() => disposeSearchWorkers());

describe("jsonPath", () => {
	const document = {
		meta: { count: 8000, "key.with.dots": "dotted" },
		items: Array.from({ length: 8000 }, (_, index) => ({ id: index, name: `item-${index}`, tags: ["a", "b"] })),
	};

	test("selects a value deep in an 8000-item array", async (t) => {
		const deps = await createDeps(t);
		const meta = await storeEntry(deps.store, JSON.stringify(document));
		const answer = await query(deps, { id: meta.id, jsonPath: "items[7999].name" });
		assert.equal(answer.text, `[pi-overflow id=${meta.id}] jsonPath $.items[7999].name: a string\n"item-7999"`);
		const object = await query(deps, { id: meta.id, jsonPath: "$.items[12]" });
		assert.equal(object.text.split("\n").slice(1).join("\n"), JSON.stringify(document.items[12], null, 2));
	});

	test("reads quoted keys", async (t) => {
		const deps = await createDeps(t);
		const meta = await storeEntry(deps.store, JSON.stringify(document, null, 2));
		const answer = await query(deps, { id: meta.id, jsonPath: 'meta["key.with.dots"]' });
		assert.match(answer.text, /jsonPath \$\.meta\["key\.with\.dots"\]: a string\n"dotted"$/);
	});

	test("says which segment is missing and what exists there", async (t) => {
		const deps = await createDeps(t);
		const meta = await storeEntry(deps.store, JSON.stringify(document));
		const message = await queryError(deps, { id: meta.id, jsonPath: "items[3].nmae" });
		assert.match(
			message,
			/\$\.items\[3\]\.nmae does not exist: \$\.items\[3\] is an object with 3 keys: "id", "name", "tags"/,
		);
		const outOfRange = await queryError(deps, { id: meta.id, jsonPath: "items[8000]" });
		assert.match(outOfRange, /an array of 8000 items \(indexes 0–7999\)/);
	});

	test("reports a path that does not parse", async (t) => {
		const deps = await createDeps(t);
		const meta = await storeEntry(deps.store, JSON.stringify(document));
		const message = await queryError(deps, { id: meta.id, jsonPath: "items[abc]" });
		assert.match(message, /^overflow_query: jsonPath: expected an array index/);
	});

	test("rejects a stored text that is not JSON", async (t) => {
		const deps = await createDeps(t);
		const meta = await storeEntry(deps.store, "compiling...\nerror: x\n");
		const message = await queryError(deps, { id: meta.id, jsonPath: "a" });
		assert.match(
			message,
			new RegExp(
				`^overflow_query: the stored output of id=${meta.id} is not JSON \\(.+\\); use search or lines instead$`,
			),
		);
		const trailing = await storeEntry(deps.store, '{"a": 1}\n[pi notice]');
		assert.match(
			await queryError(deps, { id: trailing.id, jsonPath: "a" }),
			/not JSON \(Unexpected non-whitespace character after JSON at position 9 \(line 2, column 1\)\)/,
		);
	});

	test("stops reading at searchTimeoutMs and says the whole text must be read, so search or lines are the way on", async (t) => {
		let clock = 0;
		const deps = await createDeps(t, { searchTimeoutMs: 1000 });
		deps.jsonPathTuning = { chunkBytes: 64 * 1024, now: () => (clock += 400) };
		const meta = await storeEntry(deps.store, JSON.stringify(document));
		const message = await queryError(deps, { id: meta.id, jsonPath: "items[7999].name" });
		assert.match(
			message,
			new RegExp(
				`^overflow_query: jsonPath stopped after \\d+ ms \\(searchTimeoutMs=1000\\) having read \\d+ of ${meta.totalBytes} bytes of id=${meta.id}; .*use search or lines instead$`,
			),
		);
	});

	test("cuts a value too large for the answer and suggests a deeper path", async (t) => {
		const deps = await createDeps(t, { thresholdChars: 1000 });
		const meta = await storeEntry(deps.store, JSON.stringify(document));
		const answer = await query(deps, { id: meta.id, jsonPath: "items" });
		assert.match(
			answer.text,
			/\[… \d+ more chars of this value left out \(it is \d+ chars as pretty JSON, the answer is limited to 1000\); ask for a deeper path, e\.g\. \$\.items\[0\] … \$\.items\[7999\]\]$/,
		);
		assert.equal(answer.summary.truncated, true);
		const total = Number(/it is (\d+) chars/.exec(answer.text)![1]);
		assert.equal(total, JSON.stringify(document.items, null, 2).length);
	});

	test("prints values exactly as JSON.stringify with two-space indentation", async (t) => {
		const deps = await createDeps(t);
		const small = await createDeps(t, { thresholdChars: 1000 });
		const values: unknown[] = [
			null,
			true,
			0,
			-1.5e-7,
			'tab\tquote"',
			[],
			{},
			[[[]]],
			{ a: [1, { b: null }], "": "empty key", é: "ünï" },
			document.items.slice(0, 3),
			document.items.slice(0, 40),
		];
		for (const value of values) {
			const expected = JSON.stringify(value, null, 2);
			const meta = await storeEntry(deps.store, JSON.stringify(value));
			const whole = await query(deps, { id: meta.id, jsonPath: "$" });
			assert.equal(whole.text.slice(whole.text.indexOf("\n") + 1), expected);
			assert.equal(whole.summary.truncated, false);
			// Cut: the answer shows the start of the same text and counts all of it.
			const cutMeta = await storeEntry(small.store, JSON.stringify(value));
			const cut = await query(small, { id: cutMeta.id, jsonPath: "$" });
			const shown = cut.text.split("\n").slice(1);
			if (cut.summary.truncated) {
				const note = shown.pop()!;
				assert.ok(expected.startsWith(shown.join("\n")));
				assert.match(note, new RegExp(`it is ${expected.length} chars as pretty JSON`));
			} else {
				assert.equal(shown.join("\n"), expected);
			}
		}
	});
});
