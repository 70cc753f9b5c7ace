// Tests for test/runner/run.ts, the unit tier's runner: how files are dealt to shards and how a
// shard's counts are read back.

import assert from "node:assert/strict";
import { test } from "node:test";
import { dealFiles, readCounts } from "../runner/run.js";

test("deals files largest first to the lightest shard, every file once", () => {
	const files = [
		{ path: "a", bytes: 10 },
		{ path: "b", bytes: 70 },
		{ path: "c", bytes: 30 },
		{ path: "d", bytes: 40 },
		{ path: "e", bytes: 20 },
	];
	const shards = dealFiles(files, 2);
	assert.deepEqual(shards, [
		["b", "e"],
		["a", "c", "d"],
	]);
	assert.deepEqual(shards.flat().sort(), ["a", "b", "c", "d", "e"]);
	assert.deepEqual(dealFiles(files.slice(0, 1), 4), [["a"]], "no empty shard");
});

test("reads a TAP report's counts, 0 for one it lacks", () => {
	const tap =
		"TAP version 13\nok 1 - x\n# tests 3\n# suites 1\n# pass 2\n# fail 1\n# cancelled 0\n# skipped 0\n# todo 0\n";
	assert.deepEqual(readCounts(tap), { tests: 3, pass: 2, fail: 1, cancelled: 0, skipped: 0, todo: 0 });
	assert.deepEqual(readCounts(""), { tests: 0, pass: 0, fail: 0, cancelled: 0, skipped: 0, todo: 0 });
});
