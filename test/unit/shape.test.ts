// The two forms of a line's shape (src/signals/shape.ts) differ exactly where its table says, and the
// rarity thresholds classify a count as that module documents.

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
	classifyShape,
	hashShape,
	RARE_CONTEXT_SHAPE_LINES,
	ROUTINE_CONTEXT_MIN_LINES,
	ROUTINE_CONTEXT_SHARE,
	SHAPE_CHARS,
	SHAPE_HASH_BLANK,
	SHAPE_HASH_BYTES,
	shapeOf,
} from "../../src/signals/shape.js";
import { DEFAULT_CONFIG } from "../../src/config/config.js";
import { bufferSource } from "../../src/io/source.js";
import { buildViewFromFile, scanSource } from "../../src/view/compose.js";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { createTempDir } from "../helpers/tmp.js";

function hashOf(text: string): number {
	const bytes = Buffer.from(text, "utf8");
	return hashShape(bytes, 0, bytes.length);
}

/** Whether the key and the hash each give `a` and `b` one shape: [key, hash]. */
function sameShape(a: string, b: string): [boolean, boolean] {
	return [shapeOf(a) === shapeOf(b), hashOf(a) === hashOf(b)];
}

describe("the shape key and the shape hash", () => {
	test("both give lines that differ only in their numbers and quoted strings one shape", () => {
		assert.deepEqual(sameShape("request 17 took 5 ms", "request 18 took 120 ms"), [true, true]);
		assert.deepEqual(sameShape('open "a.txt" failed', 'open "b/c.txt" failed'), [true, true]);
	});

	test("the key drops indentation, the hash keeps it", () => {
		assert.deepEqual(sameShape("    at run (a.js:1:2)", "at run (a.js:1:2)"), [true, false]);
	});

	test("the key sets paths and hex ids aside anywhere, the hash only a leading path before a line number", () => {
		assert.deepEqual(sameShape("open /srv/a/b failed", "open /var/c failed"), [true, false]);
		assert.deepEqual(sameShape("commit deadbeefcafe by ann", "commit feedfacebead by ann"), [true, false]);
		assert.deepEqual(sameShape("src/a.c:12: error: x", "lib/other.c:3: error: x"), [true, true]);
	});

	test("the key reads SHAPE_CHARS characters, the hash SHAPE_HASH_BYTES bytes after the indentation", () => {
		const start = "w".repeat(SHAPE_HASH_BYTES);
		assert.deepEqual(sameShape(`${start} one`, `${start} two`), [false, true]);
		const longer = "w".repeat(SHAPE_CHARS);
		assert.deepEqual(sameShape(`${longer} one`, `${longer} two`), [true, true]);
	});

	test("a blank line has no shape hash", () => {
		assert.equal(hashOf("  \t \r"), SHAPE_HASH_BLANK);
	});
});

describe("classifyShape", () => {
	test("a count up to RARE_CONTEXT_SHAPE_LINES is rare; an unknown shape (0) is usual", () => {
		assert.equal(classifyShape(0, 1000), "usual");
		assert.equal(classifyShape(1, 1000), "rare");
		assert.equal(classifyShape(RARE_CONTEXT_SHAPE_LINES, 1000), "rare");
		assert.equal(classifyShape(RARE_CONTEXT_SHAPE_LINES + 1, 1000), "usual");
	});

	test("routine takes both ROUTINE_CONTEXT_MIN_LINES lines and ROUTINE_CONTEXT_SHARE of the output", () => {
		const lines = 1000;
		const share = Math.ceil(ROUTINE_CONTEXT_SHARE * lines);
		assert.equal(classifyShape(share, lines), "routine");
		assert.equal(classifyShape(share - 1, lines), "usual");
		assert.equal(classifyShape(ROUTINE_CONTEXT_MIN_LINES - 1, ROUTINE_CONTEXT_MIN_LINES), "usual");
		assert.equal(classifyShape(ROUTINE_CONTEXT_MIN_LINES, ROUTINE_CONTEXT_MIN_LINES), "routine");
	});
});

describe("the shape counter", () => {
	test("shapes the end of a long output whole, past the sampled middle: its odd line is rare", async (t) => {
		// 3.6 MB of passing lines, then a job's batches with one odd line among them.
		const passing = Array.from(
			{ length: 80_000 },
			(_, i) => `ok ${i + 1} - suite ${i % 97} case ${i} passed in ${i % 13} ms`,
		);
		const batches = Array.from({ length: 3000 }, (_, i) => `processed batch ${i} in ${i % 90} ms`);
		batches[2500] = "reconciling house accounts before the next window";
		const lines = [...passing, ...batches];
		const options = { ...DEFAULT_CONFIG, id: "0123456789ab", toolName: "bash" };
		const { scan } = await scanSource(bufferSource(Buffer.from(lines.join("\n") + "\n")), options);
		const odd = passing.length + 2501;
		assert.equal(scan.shapes.complete, false, "the middle was sampled");
		assert.deepEqual(
			scan.shapes.rare.map((line) => line.lineNumber),
			[odd],
		);
		// Read from a file through reused buffers: the end waits as a copy, not as a view of a buffer read into again.
		const dir = await createTempDir(t);
		const path = join(dir, "long.log");
		await writeFile(path, lines.join("\n") + "\n");
		const view = (await buildViewFromFile(path, { ...options, thresholdChars: 24_000 })).text;
		assert.match(view, new RegExp(`\\n *${odd}: reconciling house accounts before the next window {2}\\[a rare line`));
	});
});
