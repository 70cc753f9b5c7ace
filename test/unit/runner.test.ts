// Tests for test/runner/run.ts, the unit tier's runner: how files are dealt to shards (by their
// seconds in the cost table, else their bytes), how the table is read, and how a shard's counts are
// read back.

import assert from "node:assert/strict";
import { test } from "node:test";
import { basename } from "node:path";
import { dealFiles, readCosts, readCounts, shardArgs, tierFiles } from "../runner/run.js";

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

test("deals by seconds where the table has them, a file it lacks by bytes at the median seconds per byte", () => {
	// Bytes alone would pair the two small files against the large one; their seconds say otherwise.
	const files = [
		{ path: "small-slow", bytes: 7, seconds: 25 },
		{ path: "large", bytes: 76, seconds: 15 },
		{ path: "small", bytes: 4, seconds: 2 },
		{ path: "mid", bytes: 20, seconds: 8 },
	];
	assert.deepEqual(dealFiles(files, 2), [["small-slow"], ["large", "mid", "small"]]);
	// Rates 25/7, 15/76, 2/4, 8/20: the median (the upper middle) is 0.5 s per byte, so "new" costs 30 s.
	const withNew = [...files, { path: "new", bytes: 60 }];
	assert.deepEqual(dealFiles(withNew, 2), [
		["mid", "new", "small"],
		["large", "small-slow"],
	]);
	// No file with seconds: bytes, as before.
	assert.deepEqual(
		dealFiles(
			[
				{ path: "a", bytes: 3 },
				{ path: "b", bytes: 5 },
				{ path: "c", bytes: 4 },
			],
			2,
		),
		[["b"], ["a", "c"]],
	);
});

test("reads the cost table's figures of a tier, skipping any that is not a number of seconds", () => {
	const text = JSON.stringify({
		unit: { "a.test.ts": 2.5, "b.test.ts": "3", "c.test.ts": -1, "d.test.ts": 0 },
		e2e: { x: 1 },
	});
	assert.deepEqual(readCosts("unit", text), { "a.test.ts": 2.5, "d.test.ts": 0 });
	assert.deepEqual(readCosts("other", text), {});
	assert.throws(() => readCosts("unit", "{"));
});

test("reads a TAP report's counts, 0 for one it lacks", () => {
	const tap =
		"TAP version 13\nok 1 - x\n# tests 3\n# suites 1\n# pass 2\n# fail 1\n# cancelled 0\n# skipped 0\n# todo 0\n";
	assert.deepEqual(readCounts(tap), { tests: 3, pass: 2, fail: 1, cancelled: 0, skipped: 0, todo: 0 });
	assert.deepEqual(readCounts(""), { tests: 0, pass: 0, fail: 0, cancelled: 0, skipped: 0, todo: 0 });
});

test("a tier's files are its .test.ts files in name order; a shard starts alike for run.ts and costs.ts", () => {
	const names = tierFiles("unit").map((path) => basename(path));
	assert.ok(names.includes("runner.test.ts"));
	assert.ok(names.every((name) => name.endsWith(".test.ts")));
	assert.deepEqual(names, [...names].sort());
	const args = shardArgs(["a.test.ts", "b.test.ts"], ["--test-reporter=tap"]);
	assert.deepEqual(args.slice(0, 4), ["--max-semi-space-size=64", "--import", "tsx", "--test-reporter=tap"]);
	assert.match(args[4], /shard\.ts$/);
	assert.deepEqual(args.slice(5), ["a.test.ts", "b.test.ts"]);
	assert.deepEqual(
		shardArgs(["a.test.ts"])
			.slice(3)
			.map((arg) => basename(arg)),
		["shard.ts", "a.test.ts"],
	);
});
