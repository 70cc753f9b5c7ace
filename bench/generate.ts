// Deterministic, realistic build/test logs for the benchmarks: compile and test lines, ~0.5 %
// signal lines (errors, failures, warnings), multi-byte UTF-8, some 5–20 KB lines and a few lines
// of several MB. The same size and seed always give the same bytes.

import { createWriteStream } from "node:fs";
import { once } from "node:events";
import { createRandom } from "../test/helpers/random.js";

const SIGNALS = [
	"src/net/socket.c:88:12: error: 'struct sock' has no member named 'sk_flags'",
	"FAIL src/parser.test.ts > parses nested arrays (12 ms)",
	"warning: unused variable `buffer` [-Wunused-variable]",
	"thread 'main' panicked at 'index out of bounds: the len is 3 but the index is 7', src/main.rs:14:5",
	"npm error code ERESOLVE",
	"Traceback (most recent call last):",
	"AssertionError: expected 42 to equal 41",
	"make: *** [Makefile:1912: drivers] Error 2",
];
const NOISE = [
	(i: number) => `  CC [M]  drivers/gpu/drm/module_${i}.o`,
	(i: number) => `ok ${i} - handles request #${i} in ${i % 97} ms`,
	(i: number) =>
		`[${String(i).padStart(8, "0")}] INFO worker-${i % 8}: processed batch ${i} (${(i * 37) % 1000} items)`,
	(i: number) => `  ✓ übersetzt Zeichenkette ${i} — 日本語のテスト ${i % 13} 🚀`,
	(i: number) => `PASS test/unit/module-${i % 400}.test.ts (${(i % 50) / 10}s)`,
];

/** Writes about `bytes` bytes of log to `path`. */
export async function writeLog(path: string, bytes: number, seed = 1): Promise<{ bytes: number; lines: number }> {
	const random = createRandom(seed);
	const out = createWriteStream(path);
	let written = 0;
	let lines = 0;
	let batch: string[] = [];
	let batchBytes = 0;
	const flush = async () => {
		if (batch.length === 0) return;
		if (!out.write(`${batch.join("\n")}\n`)) await once(out, "drain");
		batch = [];
		batchBytes = 0;
	};
	let giantLines = 0;
	while (written < bytes) {
		const r = random();
		let line: string;
		if (r < 0.005) line = SIGNALS[Math.floor(random() * SIGNALS.length)];
		else if (r < 0.0055) line = `data: ${"x".repeat(5000 + Math.floor(random() * 15000))}`;
		else if (r < 0.0055001 && giantLines < 3) {
			giantLines++;
			line = `minified: ${"abcdefghij".repeat(200_000 + Math.floor(random() * 200_000))}`;
		} else line = NOISE[Math.floor(random() * NOISE.length)](lines + 1);
		batch.push(line);
		const size = Buffer.byteLength(line) + 1;
		batchBytes += size;
		written += size;
		lines++;
		if (batchBytes > 1 << 20) await flush();
	}
	await flush();
	out.end();
	await once(out, "finish");
	return { bytes: written, lines };
}
