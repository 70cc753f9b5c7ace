// Speed work that must not change what is found (issue 13): the prewarm compiles the signal search
// before the first large result, the prefilter's pass is the line count and is not charged to the
// signal search's budget (a huge spill file is searched to its end), and the SIMD newline count
// agrees with a plain count. No wall-clock time is asserted: clocks are injected, compiles counted.

import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { boundToolResult } from "../../src/bound/bound.js";
import { createDefaultConfig } from "../../src/config/config.js";
import { countNewlines } from "../../src/prefilter/keyword-filter.js";
import { SIGNAL_SCAN_BUDGET_MS } from "../../src/scan/scan.js";
import { bufferSource, pumpCapped } from "../../src/io/source.js";
import { prepareDefaultSignalFinder } from "../../src/signals/finder.js";
import { OverflowStore } from "../../src/store/index.js";
import { assertChildOk, runChild } from "../helpers/child.js";
import { createRandom } from "../helpers/random.js";
import { createTempDir } from "../helpers/tmp.js";

const PROBE = fileURLToPath(new URL("../fixtures/speed/prewarm-probe.ts", import.meta.url));

function runProbe(
	storeRoot: string,
	mode: "prewarm" | "cold",
): {
	before: { compiles: number; regexBuilds: number };
	after: { compiles: number; regexBuilds: number };
	signalShown: boolean;
} {
	const child = runChild(process.execPath, ["--import", "tsx", PROBE, storeRoot, mode]);
	assertChildOk(child, `the ${mode} probe`);
	return JSON.parse(child.stdout.trim().split("\n").at(-1) ?? "{}");
}

test("after session_start, the first large result compiles neither the WebAssembly module nor the signal regexes", async (t) => {
	const dir = await createTempDir(t);
	const warm = runProbe(join(dir, "warm"), "prewarm");
	assert.ok(warm.before.compiles >= 1 && warm.before.regexBuilds >= 1, "the prewarm compiled both");
	assert.deepEqual(warm.after, warm.before, "the result path compiled nothing");
	assert.ok(warm.signalShown);
	// Without session_start, the same result compiles both on its path: the counters see it.
	const cold = runProbe(join(dir, "cold"), "cold");
	assert.deepEqual(cold.before, { compiles: 0, regexBuilds: 0 });
	assert.ok(cold.after.compiles >= 1 && cold.after.regexBuilds >= 1);
	assert.ok(cold.signalShown);
});

/** A log of `lines` lines with `signals` distinct error lines spread evenly; ASCII, so its tail decodes as it is. */
function writeSpill(path: string, lines: number, signals: number): string {
	const every = Math.floor(lines / signals);
	const text = Array.from({ length: lines }, (_, i) =>
		i % every === every - 1 && i / every < signals
			? `src/mod_${i}.c:${i}: error: failure number ${i}`
			: `[${String(i).padStart(8, "0")}] INFO worker-${i % 8}: processed batch ${i}`,
	).join("\n");
	writeFileSync(path, text);
	return text.slice(-20_000);
}

for (const [label, maxEntryBytes] of [
	["stored whole (a raised maxEntryBytes)", 64 * 1024 * 1024],
	["stored without its middle (maxEntryBytes 1 MiB)", 1024 * 1024],
] as const) {
	test(`a spill file whose prefilter pass takes longer than the signal budget still has every signal line found: ${label}`, async (t) => {
		const dir = await createTempDir(t);
		const spill = join(dir, "spill.log");
		const current = writeSpill(spill, 120_000, 60);
		// Each prefilter pass (one per chunk) moves the scan's clock on by more than the whole budget,
		// as the pass over a gigabyte takes on a slow machine; testing candidates moves it by nothing.
		let clock = 0;
		const finder = prepareDefaultSignalFinder();
		const findLines = finder.findLines;
		let passes = 0;
		finder.findLines = (bytes, from, to, found) => {
			passes++;
			clock += SIGNAL_SCAN_BUDGET_MS + 1;
			return findLines.call(finder, bytes, from, to, found);
		};
		t.after(() => {
			finder.findLines = findLines;
		});
		const config = { ...createDefaultConfig(), maxEntryBytes };
		const patch = await boundToolResult(
			{
				toolName: "bash",
				toolCallId: "call-1",
				content: [{ type: "text", text: current }],
				details: { fullOutputPath: spill },
			},
			{
				config,
				store: new OverflowStore({ root: join(dir, "store") }),
				sessionId: "s",
				stash: undefined,
				scanClock: () => clock,
				budgetChars: 10_000,
			},
		);
		const text = patch?.content[0]?.type === "text" ? patch.content[0].text : "";
		assert.ok(passes > 2, "the pass ran on several chunks");
		assert.doesNotMatch(text, /signal search stopped/);
		assert.match(text, /the signal pattern matched 60 lines/);
		const overflow = (patch?.details as { overflow: { totalLines: number; truncated: boolean } }).overflow;
		assert.equal(overflow.totalLines, 120_000);
		assert.equal(overflow.truncated, maxEntryBytes < 64 * 1024 * 1024);
	});
}

test("the SIMD newline count agrees with a plain count at every offset and length", () => {
	const random = createRandom(13);
	const bytes = Buffer.alloc(300_000);
	for (let i = 0; i < bytes.length; i++)
		bytes[i] = random() < 0.05 ? 0x0a : random() < 0.5 ? 0x61 : Math.floor(random() * 256);
	const plain = (from: number, to: number) => {
		let count = 0;
		for (let i = from; i < to; i++) if (bytes[i] === 0x0a) count++;
		return count;
	};
	for (let k = 0; k < 400; k++) {
		const from = Math.floor(random() * bytes.length);
		const to = Math.min(
			bytes.length,
			from + (k % 4 === 0 ? Math.floor(random() * 200_000) : Math.floor(random() * 64)),
		);
		assert.equal(countNewlines(bytes, from, to), plain(from, to), `[${from}, ${to})`);
	}
	assert.equal(countNewlines(bytes, 0, bytes.length), plain(0, bytes.length));
	assert.equal(countNewlines(Buffer.from("\n\n\n"), 1, 1), 0);
});

test("the pump reads ahead while a chunk is stored, and a slow store still gets every chunk whole and in order", async () => {
	const random = createRandom(7);
	const text = Buffer.from(
		Array.from({ length: 60_000 }, (_, i) => `line ${i} ${"x".repeat(Math.floor(random() * 80))}`).join("\n"),
	);
	for (const maxEntryBytes of [text.length, 1024 * 1024]) {
		const stored: Buffer[] = [];
		const scanned: Buffer[] = [];
		let newlines = 0;
		const pumped = await pumpCapped(bufferSource(text), maxEntryBytes, {
			scan: (chunk) => {
				scanned.push(Buffer.from(chunk));
				newlines += countNewlines(chunk, 0, chunk.length);
			},
			// Copies the chunk only after other reads had their turn: a buffer reused too early shows here.
			store: async (chunk) => {
				await new Promise((resolve) => setTimeout(resolve, 1));
				stored.push(Buffer.from(chunk));
			},
			newlinesSeen: () => newlines,
		});
		assert.ok(Buffer.concat(scanned).equals(text), "the scan saw every byte in order");
		const copy = Buffer.concat(stored);
		assert.equal(copy.length, pumped.storedBytes);
		if (pumped.gap === undefined) {
			assert.ok(copy.equals(text));
		} else {
			assert.ok(text.length > maxEntryBytes && copy.length <= maxEntryBytes);
			const marker = copy.indexOf("[pi-overflow: lines ");
			assert.ok(text.subarray(0, marker).equals(copy.subarray(0, marker)), "the head is the original's");
			const tail = copy.subarray(copy.indexOf(0x0a, marker) + 1);
			assert.ok(text.subarray(text.length - tail.length).equals(tail), "the tail is the original's");
		}
	}
});
