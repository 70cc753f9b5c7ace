// `npm run test:costs`: the seconds each file of the unit tier takes alone, written to costs.json for
// run.ts to deal files to shards by. Each file runs in a shard of its own, started as run.ts starts
// one (shardArgs), one after the other, so that the figures are of one core; its wall time is its
// cost, start-up included. Refresh the table when a file is added or its tests grow: a file it lacks
// is costed by its bytes.

import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { basename } from "node:path";
import { COSTS_FILE, shardArgs, tierFiles } from "./run.js";

const TIER = "unit";

const files = tierFiles(TIER);
const costs: Record<string, number> = {};
for (const file of files) {
	const name = basename(file);
	const started = performance.now();
	const run = spawnSync(process.execPath, shardArgs([file]), { stdio: "ignore" });
	const seconds = (performance.now() - started) / 1000;
	costs[name] = Math.round(seconds * 10) / 10;
	process.stdout.write(
		`${seconds.toFixed(1).padStart(6)} s  ${name}${run.status === 0 ? "" : `  (exit ${run.status})`}\n`,
	);
}
let table: Record<string, Record<string, number>> = {};
try {
	table = JSON.parse(readFileSync(COSTS_FILE, "utf8")) as typeof table;
} catch {
	// No table yet, or a broken one: this tier's figures start it anew.
}
table[TIER] = costs;
writeFileSync(COSTS_FILE, `${JSON.stringify(table, null, "\t")}\n`);
const total = Object.values(costs).reduce((sum, seconds) => sum + seconds, 0);
process.stdout.write(`${files.length} files, ${total.toFixed(1)} s one after the other: ${COSTS_FILE}\n`);
