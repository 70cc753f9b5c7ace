// Child of test/unit/robust-time.test.ts: bounds one huge spill file and prints time and peak memory.
import { openSync, readFileSync, readSync, closeSync, statSync } from "node:fs";
import { join } from "node:path";
import { boundToolResult } from "../../src/bound/bound.js";
import { createDefaultConfig } from "../../src/config/config.js";
import { OverflowStore } from "../../src/store/index.js";

const [spill, root] = process.argv.slice(2);
const size = statSync(spill).size;
const tail = Buffer.alloc(51200);
const fd = openSync(spill, "r");
readSync(fd, tail, 0, tail.length, size - tail.length);
closeSync(fd);
/**
 * This process's peak resident memory, in bytes: Linux's VmHWM (its own address space's high-water
 * mark, new at exec), else getrusage's maxRSS, which Linux carries over from the parent at fork: a
 * test runner holding 100 MB would read as this child's peak.
 */
function peakRss(): number {
	try {
		const hwm = /^VmHWM:\s+(\d+) kB$/m.exec(readFileSync("/proc/self/status", "utf8"));
		if (hwm) return Number(hwm[1]) * 1024;
	} catch {
		// Not Linux.
	}
	return process.resourceUsage().maxRSS * 1024;
}

const before = process.memoryUsage.rss();
const started = performance.now();
const patch = await boundToolResult(
	{
		toolName: "bash",
		toolCallId: "huge",
		content: [{ type: "text", text: tail.toString("utf8") }],
		details: { fullOutputPath: spill },
	},
	{ config: createDefaultConfig(), store: new OverflowStore({ root }), sessionId: "s", stash: undefined },
);
const ms = performance.now() - started;
const view = patch?.content.map((part) => (part.type === "text" ? part.text : "")).join("\n") ?? "";
const overflow = (patch?.details as { overflow: { id: string; totalBytes: number; truncated: boolean } }).overflow;
const { storedBytes } = JSON.parse(readFileSync(join(root, `${overflow.id}.json`), "utf8")) as { storedBytes: number };
const rssGrowthMiB = Math.round(((peakRss() - before) / 1024 / 1024) * 10) / 10;
process.stdout.write(
	`${JSON.stringify({ ms, rssGrowthMiB, viewChars: view.length, storedBytes, truncated: overflow.truncated, shown: view.split("\n") })}\n`,
);
