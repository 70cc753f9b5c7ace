// overflow_query's search answer (src/query/search.ts): hits and context in windows, counted,
// fitted, and a search that stops or waits says so.

import assert from "node:assert/strict";
import { after, describe, test } from "node:test";
import type { QueryAnswer } from "../../src/query/index.js";
import { disposeSearchWorkers } from "../../src/query/engine/search.js";
import { SEQ_TEXT, storeEntry, createDeps, query, queryError, numberedLines } from "../helpers/query-fixtures.js";

after(() => disposeSearchWorkers());

describe("search", () => {
	test("merges two nearby hits into one window without repeating a line", async (t) => {
		const deps = await createDeps(t);
		const meta = await storeEntry(deps.store, SEQ_TEXT);
		const answer = await query(deps, { id: meta.id, search: "^15000[03]$" });
		const lines = numberedLines(answer.text);
		assert.deepEqual(
			lines.map(([number, separator]) => `${number}${separator}`),
			["149998-", "149999-", "150000:", "150001-", "150002-", "150003:", "150004-", "150005-"],
		);
		assert.ok(!answer.text.split("\n").includes("--"), "one window, no gap marker");
		assert.match(answer.text, /2 hit lines in 300000 lines; all shown/);
		assert.equal(answer.summary.hits, 2);
	});

	test("marks the gap between two windows", async (t) => {
		const deps = await createDeps(t);
		const meta = await storeEntry(deps.store, SEQ_TEXT);
		const answer = await query(deps, { id: meta.id, search: "^(1000|2000)$" });
		const body = answer.text.split("\n").slice(1);
		assert.deepEqual(body, [
			"   998- 998",
			"   999- 999",
			"  1000: 1000",
			"  1001- 1001",
			"  1002- 1002",
			"--",
			"  1998- 1998",
			"  1999- 1999",
			"  2000: 2000",
			"  2001- 2001",
			"  2002- 2002",
		]);
	});

	test("stops at maxResults and still reports the total number of hits", async (t) => {
		const deps = await createDeps(t, { maxResults: 5 });
		const meta = await storeEntry(deps.store, SEQ_TEXT);
		const expected = SEQ_TEXT.split("\n").filter((line) => /^1\d*7$/.test(line)).length;
		const answer = await query(deps, { id: meta.id, search: "^1\\d*7$" });
		assert.equal(numberedLines(answer.text).filter(([, separator]) => separator === ":").length, 5);
		assert.match(answer.text, new RegExp(`${expected} hit lines in 300000 lines; showing 5`));
		assert.match(
			answer.text,
			/5 of \d+ hit lines shown \(maxResults is 5\); the last shown is line 137 — narrow the pattern, or read on with lines: \{start: 138\}/,
		);
		assert.equal(answer.summary.hits, expected);
		assert.equal(answer.summary.shownHits, 5);
		assert.equal(answer.summary.truncated, true);
	});

	test("shows a long hit line around the match, with the chars cut on each side", async (t) => {
		const deps = await createDeps(t, { maxLineChars: 200 });
		const long = `${"a".repeat(7000)}NEEDLE${"b".repeat(3000)}`;
		const meta = await storeEntry(deps.store, `first\n${long}\nlast\n`);
		const answer = await query(deps, { id: meta.id, search: "needle" });
		const hit = numberedLines(answer.text).find(([, separator]) => separator === ":")!;
		assert.equal(hit[0], 2);
		const match = /^\[\+(\d+) chars\] … (a+NEEDLEb+) … \[\+(\d+) chars\]$/.exec(hit[2]);
		assert.ok(match, hit[2]);
		assert.equal(match[2]!.length, 200);
		assert.equal(Number(match[1]) + 200 + Number(match[3]), long.length);
		const before = match[2]!.indexOf("NEEDLE");
		assert.ok(Math.abs(before - (200 - 6 - before)) <= 2, "the match is centred");
	});

	test("rejects an invalid regex with the reason and what to do", async (t) => {
		const deps = await createDeps(t);
		const meta = await storeEntry(deps.store, SEQ_TEXT);
		const message = await queryError(deps, { id: meta.id, search: "foo(bar" });
		assert.match(message, /^overflow_query: invalid regex \/foo\(bar\/: Unterminated group; escape special characters/);
		assert.match(message, /or use a simpler pattern$/);
	});

	test("says so when no line matches", async (t) => {
		const deps = await createDeps(t);
		const meta = await storeEntry(deps.store, SEQ_TEXT);
		const answer = await query(deps, { id: meta.id, search: "zzz" });
		assert.match(answer.text, /no line matches in 300000 lines/);
		assert.equal(answer.summary.hits, 0);
		assert.equal(answer.summary.truncated, false);
	});

	test("gives up on a catastrophic regex within the time bound, keeping the hits so far", async (t) => {
		const timeoutMs = 300;
		const deps = await createDeps(t, { searchTimeoutMs: timeoutMs });
		const okLines = Array.from({ length: 99 }, (_, index) => `ok line ${index + 1}`);
		const bad = Array.from({ length: 5000 }, () => `${"a".repeat(40)}!`);
		const meta = await storeEntry(deps.store, `${[...okLines, ...bad].join("\n")}\n`);
		// Timers set when the query begins fire while it runs: the regex never holds the main thread.
		// (How long the answer takes is measured by `npm run bench`.)
		const fired: string[] = [];
		setImmediate(() => fired.push("immediate"));
		setTimeout(() => fired.push("timeout"), 1);
		const answer: QueryAnswer = await query(deps, { id: meta.id, search: "ok line 9$|(a+)+$" });
		assert.deepEqual(fired.sort(), ["immediate", "timeout"], "the main thread ran its timers during the search");
		const stop =
			/search stopped after \d+ ms \(searchTimeoutMs=300\) at line 10 of 5099: one regex step over lines 10–(\d+) was still running and was stopped; lines 1–9 were searched/.exec(
				answer.text,
			);
		assert.ok(stop, answer.text);
		assert.ok(Number(stop[1]) >= 100 && Number(stop[1]) < 1000, "the step's lines include the first runaway line, 100");
		assert.match(answer.text, /use a simpler pattern/);
		assert.match(answer.text, /at least 1 hit line/);
		assert.deepEqual(
			numberedLines(answer.text)
				.filter(([, separator]) => separator === ":")
				.map(([number]) => number),
			[9],
		);
		assert.equal(answer.summary.timedOut, true);
		// The next search runs on a fresh worker.
		const next = await query(deps, { id: meta.id, search: "^ok line 99$" });
		assert.match(next.text, /1 hit line in 5099 lines; all shown/);
	});
});
