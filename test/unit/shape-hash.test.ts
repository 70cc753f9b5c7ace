// The WebAssembly shape hash (src/prefilter/wasm/keyword-filter.wat `shapes`, used by src/signals/shape-counter.ts)
// must give every line the hash hashShape gives it, bit for bit: the same shapes, counts, first lines
// and offsets, so the rare and repeated lines do not depend on where the hashing ran.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import fc from "fast-check";
import {
	acquireReadBuffers,
	getShapeHasher,
	releaseReadBuffers,
	SHARED_READ_BUFFER_BYTES,
	type ShapeHasher,
} from "../../src/prefilter/keyword-filter.js";
import { hashShape, MAX_FRAME_BYTES, SHAPE_HASH_BYTES } from "../../src/signals/shape.js";
import { loadRealFixtures, REAL_FIXTURES_DIR } from "../fixtures/real/fixtures.js";

const hasher = getShapeHasher() as ShapeHasher;

/** (hash, line index, line start) of each line that is not blank, by hashShape. */
function byJs(bytes: Buffer, from: number, to: number, window = SHAPE_HASH_BYTES): number[] {
	const out: number[] = [];
	let line = 0;
	for (let at = from; at < to; line++) {
		const end = bytes.indexOf(0x0a, at);
		const hash = hashShape(bytes, at, end, window);
		if (hash !== -1) out.push(hash, line, at - from);
		at = end + 1;
	}
	return out;
}

function byWasm(bytes: Buffer, from: number, to: number, window = SHAPE_HASH_BYTES): number[] {
	const written = hasher.hash(bytes, from, to, window);
	return [...hasher.records.subarray(0, written * 3)];
}

function assertSame(bytes: Buffer, from: number, to: number, label: string, window = SHAPE_HASH_BYTES): void {
	assert.deepEqual(byWasm(bytes, from, to, window), byJs(bytes, from, to, window), label);
	let lines = 0;
	for (let at = bytes.indexOf(0x0a, from); at >= 0 && at < to; at = bytes.indexOf(0x0a, at + 1)) lines++;
	assert.equal(hasher.lastLines(), lines, `${label}: line count`);
}

test("the WebAssembly shape hash runs on this platform", () => {
	assert.ok(hasher !== null);
});

test("every line of every real fixture gets hashShape's hash from the WebAssembly module", () => {
	for (const fixture of loadRealFixtures()) {
		const bytes = readFileSync(join(REAL_FIXTURES_DIR, `${fixture.name}.log`));
		const end = bytes.lastIndexOf(0x0a) + 1;
		for (let from = 0; from < end;) {
			let to = bytes.lastIndexOf(0x0a, Math.min(end, from + hasher.windowBytes) - 1) + 1;
			if (to <= from) to = bytes.indexOf(0x0a, from) + 1;
			if (to - from > hasher.windowBytes) {
				from = to;
				continue;
			}
			assertSame(bytes, from, to, `${fixture.name} [${from}, ${to})`);
			from = to;
		}
	}
});

test("fuzzed lines of digits, quotes, paths, indentation and carriage returns hash alike", () => {
	const piece = fc.oneof(
		fc.constantFrom(
			" ",
			"\t",
			"\r",
			"\n",
			"\r\n",
			":",
			": ",
			"src/a.ts:",
			"12",
			"0",
			'"',
			"'",
			"`",
			'"quoted"',
			"x:1:",
			"a",
			"Z",
			"\xff",
			"\x00",
			".",
			"-",
			"é",
			"🚀",
			// Hex ids, whole words or not (the module finds where one may start 16 bytes at a time).
			"9b2f8e61",
			"f22ae6c9",
			"A3ED95CAEB02",
			"1234567",
			"abcdef",
			"deadbeef",
			"0x1f2e3d4c",
			"cafe123g",
		),
		// Bytes next to the digits and quotes (the module finds digits and quotes 16 bytes at a time).
		fc.constantFrom(
			"/",
			"9",
			":9",
			"/0",
			"!",
			"#",
			"&",
			"(",
			"_",
			"a".repeat(15),
			"b".repeat(16),
			"c".repeat(17),
			"d".repeat(47),
			"e".repeat(48),
			"f".repeat(15),
			"0a".repeat(8),
		),
		fc.string({ maxLength: 12 }),
		fc.nat({ max: 300 }).map((n) => "a".repeat(n)),
		fc.nat({ max: 300 }).map((n) => `"${"b".repeat(n)}"`),
		fc.nat({ max: 300 }).map((n) => `${"c".repeat(n)}:7`),
	);
	fc.assert(
		// Each on the window of an output without a frame and of one with the widest frame read past.
		fc.property(
			fc.array(piece, { maxLength: 80 }),
			fc.constantFrom(SHAPE_HASH_BYTES, SHAPE_HASH_BYTES + 9, SHAPE_HASH_BYTES + MAX_FRAME_BYTES),
			(parts, window) => {
				const text = `${parts.join("")}\n`;
				const bytes = Buffer.from(text, "utf8");
				if (bytes.length > hasher.windowBytes) return;
				assertSame(bytes, 0, bytes.length, JSON.stringify(text), window);
			},
		),
		{ numRuns: 3000 },
	);
});

test("lines in a shared read buffer are hashed where they lie: the same records, and the buffer unchanged", () => {
	const [buffer] = acquireReadBuffers(1, SHARED_READ_BUFFER_BYTES);
	try {
		for (const fixture of loadRealFixtures().slice(0, 12)) {
			const bytes = readFileSync(join(REAL_FIXTURES_DIR, `${fixture.name}.log`)).subarray(0, hasher.windowBytes);
			const end = bytes.lastIndexOf(0x0a) + 1;
			if (end <= 1) continue;
			buffer.fill('x\n"q" 12\n', end);
			bytes.copy(buffer, 0, 0, end);
			const before = Buffer.from(buffer);
			for (const from of [0, bytes.indexOf(0x0a) + 1]) {
				assert.deepEqual(
					byWasm(buffer, from, end),
					byWasm(Buffer.from(buffer.subarray(0, end)), from, end),
					`${fixture.name} from ${from}`,
				);
				assertSame(buffer, from, end, `${fixture.name} in place from ${from}`);
			}
			assert.ok(buffer.equals(before), `${fixture.name}: the buffer was written to`);
		}
	} finally {
		releaseReadBuffers([buffer]);
	}
});
