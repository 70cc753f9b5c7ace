// `npm test`: the unit tier in one process per core rather than one per file. `node --test` starts a
// process for each test file; with ~70 files, loading tsx and the modules anew in each took a third
// of the tier's CPU (74 of 228 s on a 2-core machine: the tier ran in 116 s). Here each shard
// (shard.ts) imports its files in turn and runs their tests in one process. Files are dealt to the
// shards costliest first, each to the shard with the least cost so far. A file's cost is its seconds
// in costs.json (each file run alone, `npm run test:costs`): bytes say little of it (frames.test.ts,
// 7 KB, ran 25 s; view.test.ts, 76 KB, 15 s), and dealt by bytes one shard ended 18 s after the
// other. A file the table lacks costs its bytes at the table's median seconds per byte. Each shard's
// report is printed whole when it ends (the spec reporter), then the totals of all (from a TAP copy
// of each). Arguments after the tier go to every shard (`npm test -- --test-name-pattern=masking`).
// One file alone, in a process of its own, as before: `node --import tsx --test test/unit/x.test.ts`.

import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { basename, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const TEST_DIR = fileURLToPath(new URL("../", import.meta.url));
const SHARD_ENTRY = fileURLToPath(new URL("./shard.ts", import.meta.url));
export const COSTS_FILE = fileURLToPath(new URL("./costs.json", import.meta.url));
/**
 * How a shard's node starts, before its reporters and files (costs.ts times each file alike). A
 * young generation of 64 MiB, not 16: the tests' large outputs were copied through it again and again
 * (garbage collection was 18 of the tier's 220 s of CPU); the tier ran 84.4 / 87.9 s, then 81.0 / 82.2 s.
 */
const SHARD_NODE_ARGS = ["--max-semi-space-size=64", "--import", "tsx"];

/** The test files of a tier (its folder under test/), by path, in name order. */
export function tierFiles(tier: string): string[] {
	const dir = join(TEST_DIR, tier);
	return readdirSync(dir)
		.filter((name) => name.endsWith(".test.ts"))
		.sort()
		.map((name) => join(dir, name));
}

/** The node arguments that run `files` in one shard, `before` the shard's entry (reporters, options). */
export function shardArgs(files: readonly string[], before: readonly string[] = []): string[] {
	return [...SHARD_NODE_ARGS, ...before, SHARD_ENTRY, ...files];
}
/** The counts a TAP report ends with, in the order they are printed. */
const COUNTS = ["tests", "pass", "fail", "cancelled", "skipped", "todo"] as const;

interface ShardResult {
	files: number;
	code: number | null;
	output: string;
	counts: Record<(typeof COUNTS)[number], number>;
}

/** A test file: its path, its size, and its seconds alone when the cost table has them. */
export interface TierFile {
	path: string;
	bytes: number;
	seconds?: number;
}

/**
 * The files of a tier dealt to `shards` shards, costliest first, each to the shard of least cost so
 * far. A file's cost is its seconds; one without them costs its bytes at the median seconds per byte
 * of those with both (its bytes alone when none has).
 */
export function dealFiles(files: readonly TierFile[], shards: number): string[][] {
	const rates = files
		.filter((file) => file.seconds !== undefined && file.bytes > 0)
		.map((file) => file.seconds! / file.bytes)
		.sort((a, b) => a - b);
	const rate = rates.length > 0 ? rates[Math.floor(rates.length / 2)]! : 1;
	const costed = files.map((file) => ({ path: file.path, cost: file.seconds ?? file.bytes * rate }));
	const dealt = Array.from({ length: shards }, () => ({ files: [] as string[], cost: 0 }));
	for (const file of costed.sort((a, b) => b.cost - a.cost || a.path.localeCompare(b.path))) {
		const lightest = dealt.reduce((least, shard) => (shard.cost < least.cost ? shard : least));
		lightest.files.push(file.path);
		lightest.cost += file.cost;
	}
	return dealt.map((shard) => shard.files.sort()).filter((shardFiles) => shardFiles.length > 0);
}

/** The seconds each file of a tier took alone (costs.json: tier, then file name), {} for a tier it lacks. */
export function readCosts(tier: string, text: string): Record<string, number> {
	const table = JSON.parse(text) as Record<string, Record<string, unknown>>;
	const costs: Record<string, number> = {};
	for (const [name, seconds] of Object.entries(table[tier] ?? {}))
		if (typeof seconds === "number" && Number.isFinite(seconds) && seconds >= 0) costs[name] = seconds;
	return costs;
}

/** The counts at the end of a TAP report (0 for a count it lacks: a shard that died early). */
export function readCounts(tap: string): ShardResult["counts"] {
	const counts = Object.fromEntries(COUNTS.map((name) => [name, 0])) as ShardResult["counts"];
	for (const name of COUNTS) {
		const match = new RegExp(`^# ${name} (\\d+)$`, "m").exec(tap);
		if (match) counts[name] = Number(match[1]);
	}
	return counts;
}

function runShard(files: readonly string[], tapFile: string, passThrough: readonly string[]): Promise<ShardResult> {
	const args = shardArgs(files, [
		"--test-reporter=spec",
		"--test-reporter-destination=stdout",
		"--test-reporter=tap",
		`--test-reporter-destination=${tapFile}`,
		...passThrough,
	]);
	return new Promise((resolve, reject) => {
		const child = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "pipe"] });
		const chunks: Buffer[] = [];
		child.stdout.on("data", (chunk: Buffer) => chunks.push(chunk));
		child.stderr.on("data", (chunk: Buffer) => chunks.push(chunk));
		child.on("error", reject);
		child.on("close", (code) => {
			let tap = "";
			try {
				tap = readFileSync(tapFile, "utf8");
			} catch {
				// The shard died before its reporter wrote: its counts stay 0 and its exit code says why.
			}
			resolve({ files: files.length, code, output: Buffer.concat(chunks).toString("utf8"), counts: readCounts(tap) });
		});
	});
}

async function main(): Promise<number> {
	const [tier, ...passThrough] = process.argv.slice(2);
	if (tier === undefined || !/^[a-z0-9-]+$/.test(tier)) {
		process.stderr.write("usage: node --import tsx test/runner/run.ts <tier> [node test options]\n");
		return 2;
	}
	let costs: Record<string, number> = {};
	try {
		costs = readCosts(tier, readFileSync(COSTS_FILE, "utf8"));
	} catch (error) {
		process.stderr.write(`costs.json unread (${(error as Error).message}): files dealt by their bytes\n`);
	}
	const files = tierFiles(tier).map((path) => ({ path, bytes: statSync(path).size, seconds: costs[basename(path)] }));
	const shards = dealFiles(files, Math.max(1, availableParallelism()));
	const scratch = mkdtempSync(join(tmpdir(), "pi-overflow-tests-"));
	const started = performance.now();
	try {
		const results = await Promise.all(
			shards.map(async (shardFiles, index) => {
				const result = await runShard(shardFiles, join(scratch, `shard-${index + 1}.tap`), passThrough);
				const names = shardFiles.map((file) => relative(TEST_DIR, file)).join(" ");
				process.stdout.write(
					`\n── shard ${index + 1} of ${shards.length} (${result.files} files, exit ${result.code}): ${names}\n${result.output}`,
				);
				return result;
			}),
		);
		const totals = readCounts("");
		for (const result of results) for (const name of COUNTS) totals[name] += result.counts[name];
		const seconds = ((performance.now() - started) / 1000).toFixed(1);
		process.stdout.write(
			`\n${tier} tier: ${files.length} files in ${shards.length} processes, ${seconds} s — ${COUNTS.map((name) => `${name} ${totals[name]}`).join(", ")}\n`,
		);
		const failed = results.some((result) => result.code !== 0) || totals.fail > 0 || totals.cancelled > 0;
		return failed ? 1 : 0;
	} finally {
		rmSync(scratch, { recursive: true, force: true });
	}
}

if (process.argv[1] === fileURLToPath(import.meta.url)) process.exitCode = await main();
