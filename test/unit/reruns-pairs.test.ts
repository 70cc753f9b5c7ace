// The comparison on real pairs of runs (test/fixtures/reruns/: the same real tool run before and
// after a one-line fix, and before and after a change that only shifts timings and ordering): a
// fix shows as exactly its lines gone — every gone line is one of the fixed failure's lines, nothing
// is new — and an unrelated change shows as nothing changed.

import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { createDefaultConfig } from "../../src/config/config.js";
import { compareRuns, formatRerunLines } from "../../src/reruns/compare.js";
import { summarizeScan } from "../../src/reruns/summary.js";
import { bufferSource } from "../../src/io/source.js";
import { scanSource } from "../../src/view/compose.js";

const PAIRS = fileURLToPath(new URL("../fixtures/reruns/", import.meta.url));
const CONFIG = createDefaultConfig();

interface Pair {
	kind: "fix" | "unrelated";
	goneLines: number[];
}

async function runOf(path: string) {
	const scanned = await scanSource(bufferSource(readFileSync(path)), CONFIG);
	return { ...summarizeScan(scanned.scan), totalLines: scanned.scan.totalLines };
}

const names = readdirSync(PAIRS, { withFileTypes: true })
	.filter((entry) => entry.isDirectory() && entry.name !== "gen")
	.map((entry) => entry.name)
	.sort();

test("there are at least six real pairs, fixes and unrelated changes both", () => {
	const kinds = names.map((name) => (JSON.parse(readFileSync(join(PAIRS, name, "pair.json"), "utf8")) as Pair).kind);
	assert.ok(names.length >= 6);
	assert.ok(kinds.filter((kind) => kind === "fix").length >= 4);
	assert.ok(kinds.filter((kind) => kind === "unrelated").length >= 2);
});

for (const name of names) {
	test(`${name}: the comparison says what the change did, and nothing else`, async () => {
		const pair = JSON.parse(readFileSync(join(PAIRS, name, "pair.json"), "utf8")) as Pair;
		const before = await runOf(join(PAIRS, name, "before.txt"));
		const after = await runOf(join(PAIRS, name, "after.txt"));
		const comparison = compareRuns(before.signals, after.signals);
		const summary = formatRerunLines(comparison, { id: "aaaaaaaaaaaa", ...before }, after).join("\n");
		assert.deepEqual(
			comparison.added.map((line) => `${line.line}: ${line.text}`),
			[],
			`nothing is new:\n${summary}`,
		);
		if (pair.kind === "unrelated") {
			assert.deepEqual(
				comparison.gone.map((line) => `${line.line}: ${line.text}`),
				[],
				`nothing is gone:\n${summary}`,
			);
			assert.match(summary, /nothing changed/);
			return;
		}
		assert.ok(comparison.gone.length > 0, `the fix shows as lines gone:\n${summary}`);
		const stray = comparison.gone.filter((line) => !pair.goneLines.includes(line.line));
		assert.deepEqual(
			stray.map((line) => `${line.line}: ${line.text}`),
			[],
			`every gone line is the fixed failure's:\n${summary}`,
		);
		assert.ok(comparison.unchanged.length > 0, "the other failures are still there");
	});
}
