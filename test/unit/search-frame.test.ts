// ChunkFramer, the search worker's reading: blocks of whole lines, short partial lines carried to
// the next read, giant lines handed over, memory bounded, and the two decoding paths.

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { ChunkFramer } from "../../src/query/engine/frame.js";
import { createRandom } from "../helpers/random.js";
import { createMemorySource } from "../helpers/search-oracle.js";

/**
 * Frames `bytes` to the end, giant lines read to their newline as scanGiantLine does; the blocks'
 * bytes, the kinds next() gave ("source ended" when dropLines said so) and the largest buffer.
 */
function frameAll(bytes: Buffer, chunkBytes: number, giantLineBytes: number) {
	const framer = new ChunkFramer(createMemorySource(bytes).read, chunkBytes, giantLineBytes);
	const blocks: Buffer[] = [];
	const kinds: string[] = [];
	let largestBuffer = 0;
	for (;;) {
		const kind = framer.next();
		kinds.push(kind);
		largestBuffer = Math.max(largestBuffer, framer.buffer.length);
		if (kind === "end") break;
		if (kind === "partial") continue;
		if (kind === "giant") {
			// Read to the newline, as scanGiantLine does; what follows it is carried.
			const parts: Buffer[] = [];
			for (let length = framer.held; ; length = framer.readSegment()) {
				const newline = framer.buffer.subarray(0, length).indexOf(10);
				parts.push(Buffer.from(framer.buffer.subarray(0, newline === -1 ? length : newline + 1)));
				if (newline !== -1 || length === 0) {
					framer.keepFrom(newline === -1 ? length : newline + 1, length);
					break;
				}
			}
			blocks.push(Buffer.concat(parts));
			continue;
		}
		const block = Buffer.from(framer.buffer.subarray(0, framer.linesEnd));
		blocks.push(block);
		if (!framer.dropLines()) {
			kinds.push("source ended");
			break;
		}
	}
	return { blocks, kinds, largestBuffer };
}

describe("ChunkFramer", () => {
	test("frames any bytes into blocks of whole lines that add up to the source, for any chunk size", () => {
		const random = createRandom(99);
		for (let round = 0; round < 200; round++) {
			const lines = Array.from({ length: Math.floor(random() * 40) }, () =>
				"x".repeat(random() < 0.1 ? Math.floor(random() * 3000) : Math.floor(random() * 40)),
			);
			const bytes = Buffer.from(lines.join("\n") + (random() < 0.5 ? "\n" : ""));
			const chunkBytes = 1 + Math.floor(random() * 300);
			const giantLineBytes = chunkBytes + Math.floor(random() * 1000);
			const { blocks, kinds, largestBuffer } = frameAll(bytes, chunkBytes, giantLineBytes);
			const label = `round ${round}, chunk ${chunkBytes}, giant ${giantLineBytes}`;
			assert.deepEqual(Buffer.concat(blocks), bytes, label);
			blocks.forEach((block, index) => {
				// Every block is whole lines: it ends at a newline, or is the last one of the source.
				if (index < blocks.length - 1) assert.equal(block.at(-1), 10, label);
			});
			assert.ok(kinds.at(-1) === "end" || kinds.at(-1) === "source ended", label);
			assert.ok(
				largestBuffer <= Math.max(2 * chunkBytes, 2 * (giantLineBytes + chunkBytes)),
				`${label}: buffer ${largestBuffer}`,
			);
		}
	});

	test("carries a short partial line to the next read and hands over a line of giantLineBytes", () => {
		const short = frameAll(Buffer.from("abcdefgh\nij"), 4, 100);
		assert.deepEqual(short.kinds, ["partial", "partial", "lines", "lines", "source ended"]);
		assert.deepEqual(short.blocks.map(String), ["abcdefgh\n", "ij"]);
		const giant = frameAll(Buffer.from(`${"g".repeat(20)}\nok\n`), 4, 8);
		assert.deepEqual(giant.kinds, ["partial", "giant", "lines", "source ended"]);
		assert.deepEqual(giant.blocks.map(String), [`${"g".repeat(20)}\n`, "ok\n"]);
	});

	test("decodes a block as its Latin-1 view when asked or when it is ASCII, else as UTF-8", () => {
		const decode = (text: string, latin1: boolean): string => {
			const framer = new ChunkFramer(createMemorySource(Buffer.from(text)).read, 64, 1024);
			assert.equal(framer.next(), "lines");
			return framer.decodeLines(latin1);
		};
		assert.equal(decode("plain ascii\n", false), "plain ascii\n");
		assert.equal(decode("é 🚀\n", false), "é 🚀\n");
		assert.equal(decode("é\n", true), Buffer.from("é\n").toString("latin1"));
	});
});
