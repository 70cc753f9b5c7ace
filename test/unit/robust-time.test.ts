// Bounds on the tool-result path (issue 5): a 500 MB spill file is bounded in a process of its own
// with bounded memory, the middle only counted for newlines and the stored copy capped at
// maxEntryBytes. How long it takes is measured by `npm run bench -- --large` (1 GB spill file row).

import assert from "node:assert/strict";
import { closeSync, openSync, writeSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { assertChildOk, runChild } from "../helpers/child.js";
import { createTempDir } from "../helpers/tmp.js";

const SPILL_BYTES = 500 * 1024 * 1024;
test("a 500 MB spill file is bounded within the stated memory, in a process of its own", async (t) => {
	const dir = await createTempDir(t);
	const spill = join(dir, "pi-bash-0123456789abcdef.log");
	// Realistic lines, one error near the start and one at the very end; written in 1 MiB blocks.
	const line = "2026-11-29T10:00:00Z INFO worker-3 processed batch 12345 in 37 ms\n";
	const block = Buffer.from(line.repeat(Math.floor((1024 * 1024) / line.length)));
	const fd = openSync(spill, "w");
	writeSync(fd, "error: the first failure\n");
	for (let written = 0; written < SPILL_BYTES; written += block.length) writeSync(fd, block);
	writeSync(fd, "FATAL: the last line\n");
	closeSync(fd);

	const child = join(fileURLToPath(new URL("../helpers/", import.meta.url)), "robust-time-child.ts");
	const run = runChild(process.execPath, ["--import", "tsx", child, spill, join(dir, "store")]);
	assertChildOk(run, "the 500 MB child");
	const result = JSON.parse(run.stdout.trim().split("\n").at(-1) ?? "{}") as {
		ms: number;
		rssGrowthMiB: number;
		viewChars: number;
		storedBytes: number;
		truncated: boolean;
		shown: string[];
	};
	t.diagnostic(`500 MB spill file: ${Math.round(result.ms)} ms, peak RSS growth ${result.rssGrowthMiB} MiB`);
	assert.ok(result.rssGrowthMiB <= 64, `${result.rssGrowthMiB} MiB`);
	assert.ok(result.viewChars <= 24_000);
	assert.ok(result.storedBytes <= 32 * 1024 * 1024);
	assert.equal(result.truncated, true);
	assert.ok(
		result.shown.some((text) => text.endsWith("1: error: the first failure")),
		"the head is kept",
	);
	assert.ok(
		result.shown.some((text) => /: FATAL: the last line$/.test(text)),
		"the last line is shown",
	);
});
