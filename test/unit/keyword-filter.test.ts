// The WebAssembly SIMD prefilter (src/prefilter/keyword-filter.ts, src/prefilter/wasm/keyword-filter.wat) must find
// exactly what the JavaScript automaton finds: the same (line start, line index) pairs and the same
// line count, for the default keywords and for custom ones, whatever the chunking, the alignment of
// keywords to its 16-byte blocks and its 128 KiB windows. The committed .wasm is the .wat compiled.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import fc from "fast-check";
import {
	buildKeywordAutomaton,
	findKeywordLines,
	type KeywordAutomaton,
} from "../../src/prefilter/keyword-automaton.js";
import { buildFingerprintTables } from "../../src/prefilter/keyword-buckets.js";
import { createHash } from "node:crypto";
import {
	acquireReadBuffers,
	countNewlines,
	createKeywordLineFinder,
	type KeywordLineFinder,
	keywordFilterStats,
	releaseReadBuffers,
	SHARED_READ_BUFFER_BYTES,
	WASM_WINDOW_BYTES,
} from "../../src/prefilter/keyword-filter.js";
import { prepareDefaultSignalFinder } from "../../src/signals/finder.js";
import { defaultSignalPrefilterKeywords } from "../../src/signals/pattern.js";
import { loadRealFixtures, REAL_FIXTURES_DIR } from "../fixtures/real/fixtures.js";
import { compileKeywordFilter, KEYWORD_FILTER_RELAXED_WASM, KEYWORD_FILTER_WASM } from "../helpers/wasm.js";

const automaton = buildKeywordAutomaton(defaultSignalPrefilterKeywords());
const finder = createKeywordLineFinder(defaultSignalPrefilterKeywords());

interface Found {
	lines: number;
	pairs: number[];
}

function byAutomaton(keywords: KeywordAutomaton, bytes: Buffer, from: number, to: number): Found {
	const pairs: number[] = [];
	return { lines: findKeywordLines(keywords, bytes, from, to, pairs), pairs };
}

function byFinder(keywords: KeywordLineFinder, bytes: Buffer, from: number, to: number): Found {
	const pairs: number[] = [];
	return { lines: keywords.findLines(bytes, from, to, pairs), pairs };
}

/** Ranges of whole lines of about `size` bytes each, as a scanner fed chunks of that size sees them. */
function wholeLineRanges(bytes: Buffer, size: number): Array<[number, number]> {
	const ranges: Array<[number, number]> = [];
	const end = bytes.lastIndexOf(0x0a) + 1;
	for (let from = 0; from < end;) {
		let to = bytes.lastIndexOf(0x0a, Math.min(end, from + size) - 1) + 1;
		if (to <= from) to = bytes.indexOf(0x0a, from) + 1;
		ranges.push([from, to]);
		from = to;
	}
	return ranges;
}

function assertSameOnRanges(
	keywords: readonly string[],
	wasm: KeywordLineFinder,
	js: KeywordAutomaton,
	bytes: Buffer,
	ranges: Array<[number, number]>,
	label: string,
): void {
	for (const [from, to] of ranges) {
		assert.deepEqual(
			byFinder(wasm, bytes, from, to),
			byAutomaton(js, bytes, from, to),
			`${label} [${from}, ${to}) ${JSON.stringify(keywords.slice(0, 8))}`,
		);
	}
}

/** A keyword as it may appear in text: ASCII letters in a random case. */
function inRandomCase(keyword: string, seed: number): string {
	let out = "";
	for (let i = 0; i < keyword.length; i++) {
		const code = keyword.charCodeAt(i);
		const letter = (code | 0x20) >= 0x61 && (code | 0x20) <= 0x7a;
		out += letter && (seed >> (i % 16)) & 1 ? String.fromCharCode(code ^ 0x20) : keyword[i];
	}
	return out;
}

/** Latin-1 keyword text as the bytes it stands for. */
function latin1(text: string): Buffer {
	return Buffer.from(text, "latin1");
}

test("the committed keyword-filter.wasm is what wabt builds from keyword-filter.wat", async () => {
	const built = await compileKeywordFilter();
	assert.ok(
		Buffer.from(built).equals(readFileSync(KEYWORD_FILTER_WASM)),
		"run `npm run build:wasm` after changing the .wat",
	);
});

test("the committed keyword-filter-relaxed.wasm is what wabt builds from the same .wat with relaxed swizzles", async () => {
	const built = await compileKeywordFilter(true);
	assert.ok(
		Buffer.from(built).equals(readFileSync(KEYWORD_FILTER_RELAXED_WASM)),
		"run `npm run build:wasm` after changing the .wat",
	);
	assert.ok(!Buffer.from(built).equals(readFileSync(KEYWORD_FILTER_WASM)), "the twin differs from the plain build");
});

test("the default keywords run through the WebAssembly SIMD prefilter on this platform", () => {
	assert.equal(finder.engine, "wasm-simd", finder.fallbackReason);
});

test("the default module is the relaxed-SIMD build exactly where this runtime validates it (every test here then runs on it)", () => {
	const relaxed = WebAssembly.validate(readFileSync(KEYWORD_FILTER_RELAXED_WASM));
	assert.equal(keywordFilterStats.variant, relaxed ? "relaxed-simd" : "simd");
	if (process.env.PI_OVERFLOW_EXPECT_RELAXED === "1") assert.equal(keywordFilterStats.variant, "relaxed-simd");
});

test("the prefilter finds exactly the automaton's lines in every real fixture, at several chunk sizes", () => {
	let lines = 0;
	for (const fixture of loadRealFixtures()) {
		const bytes = readFileSync(join(REAL_FIXTURES_DIR, `${fixture.name}.log`));
		for (const size of [1, 100, 4096, 65_536, WASM_WINDOW_BYTES + 1, 1024 * 1024, bytes.length]) {
			assertSameOnRanges(
				defaultSignalPrefilterKeywords(),
				finder,
				automaton,
				bytes,
				wholeLineRanges(bytes, size),
				`${fixture.name} chunks of ${size}`,
			);
		}
		// The same bytes at every alignment to the 16-byte blocks, through a view that starts mid-buffer.
		for (let shift = 1; shift < 17; shift += 5) {
			const shifted = Buffer.concat([Buffer.alloc(shift, 0x0a), bytes]).subarray(shift - 1);
			assertSameOnRanges(
				defaultSignalPrefilterKeywords(),
				finder,
				automaton,
				shifted,
				[[0, shifted.lastIndexOf(0x0a) + 1]],
				`${fixture.name} shifted by ${shift}`,
			);
		}
		lines += byFinder(finder, bytes, 0, bytes.lastIndexOf(0x0a) + 1).lines;
	}
	assert.ok(lines > 10_000, `${lines} lines compared`);
});

test("a line longer than a window goes to the automaton alone, and its neighbours still through the prefilter", () => {
	const long = `${"x".repeat(WASM_WINDOW_BYTES + 100)} Segmentation FAULT\n`;
	const plain = `${"y".repeat(WASM_WINDOW_BYTES * 2)}\n`;
	const bytes = Buffer.from(
		`ok\nerror: one\n${long}${plain}warning: two\n${"z".repeat(WASM_WINDOW_BYTES - 5)}\nlast error\n`,
	);
	const found = byFinder(finder, bytes, 0, bytes.length);
	assert.deepEqual(found, byAutomaton(automaton, bytes, 0, bytes.length));
	assert.deepEqual(
		found.pairs.filter((_, k) => k % 2 === 1),
		[1, 2, 4, 6],
	);
	assert.equal(found.lines, 7);
});

test("keywords right at block edges, window edges and range ends are found, in any case", () => {
	const keywords = defaultSignalPrefilterKeywords();
	for (const [index, keyword] of keywords.entries()) {
		const word = latin1(inRandomCase(keyword, index * 7919));
		for (let at = 0; at < 34; at++) {
			// The keyword starts at `at` in a line that fills exactly to the end of the range.
			const line = Buffer.concat([Buffer.alloc(at, 0x2e), word, Buffer.from("\n")]);
			const bytes = Buffer.concat([Buffer.from("....\n"), line]);
			assert.deepEqual(
				byFinder(finder, bytes, 5, bytes.length),
				{ lines: 1, pairs: [5, 0] },
				`${JSON.stringify(keyword)} at ${at}`,
			);
		}
	}
	// Across the edge of a 128 KiB window: the window ends on a line end, so the keyword is whole in one.
	const filler = `${"a".repeat(79)}\n`.repeat(Math.ceil(WASM_WINDOW_BYTES / 80));
	for (let cut = -20; cut <= 20; cut++) {
		const text = `${filler.slice(0, WASM_WINDOW_BYTES + cut)}\nxx FATAL yy\n${filler}`;
		const bytes = Buffer.from(text);
		assert.deepEqual(
			byFinder(finder, bytes, 0, bytes.length),
			byAutomaton(automaton, bytes, 0, bytes.length),
			`cut ${cut}`,
		);
	}
});

test("line counts stay exact where every block has a newline in the same lane, for thousands of blocks", () => {
	for (const width of [16, 8, 4, 2, 1]) {
		const lines = Array.from({ length: 9000 }, (_, i) =>
			i % 2999 === 1 ? "FAIL".padEnd(width - 1, "!").slice(0, width - 1) : ".".repeat(width - 1),
		);
		const bytes = Buffer.from(`${lines.join("\n")}\n`);
		const found = byFinder(finder, bytes, 0, bytes.length);
		assert.deepEqual(found, byAutomaton(automaton, bytes, 0, bytes.length), `lines of ${width} bytes`);
		assert.equal(found.lines, 9000);
	}
});

// Text made of keywords (in any case, possibly cut short), noise, UTF-8, CRLF and empty lines, and
// lines of exactly 15, 16 and 17 bytes, placed at every offset of a block.
const pieces = (keywords: readonly string[]) =>
	fc.oneof(
		fc.tuple(fc.constantFrom(...keywords), fc.nat()).map(([keyword, seed]) => inRandomCase(keyword, seed)),
		fc
			.tuple(fc.constantFrom(...keywords), fc.nat())
			.map(([keyword, cut]) => keyword.slice(0, 1 + (cut % Math.max(1, keyword.length - 1)))),
		fc.constantFrom(
			"\n",
			"\r\n",
			"\n\n",
			" ",
			"  ",
			"e",
			"E",
			"#",
			":",
			"*",
			"\x1b[31m",
			"\xc3",
			"\x97",
			"\xe2\x9c",
			"\xe2",
			"0",
		),
		fc.constantFrom("x".repeat(14), "y".repeat(15), "z".repeat(16)).map((line) => `\n${line}\n`),
		fc.string({ maxLength: 5 }).map((text) => Buffer.from(text, "utf8").toString("latin1")),
		fc.string({ unit: "binary", maxLength: 4 }).map((text) => Buffer.from(text, "utf8").toString("latin1")),
	);

function textFrom(parts: string[], pad: number): Buffer {
	const text = `${".".repeat(pad)}${parts.join("")}\n`;
	return latin1(text);
}

test("the prefilter finds exactly the automaton's lines in fuzzed texts of the default keywords", () => {
	fc.assert(
		fc.property(
			fc.array(pieces(defaultSignalPrefilterKeywords()), { maxLength: 60 }),
			fc.nat({ max: 31 }),
			(parts, pad) => {
				const bytes = textFrom(parts, pad);
				// From a line start inside the buffer, as the scanner calls it after its head lines.
				const from = bytes.indexOf(0x0a) + 1 < bytes.length ? bytes.indexOf(0x0a) + 1 : 0;
				assert.deepEqual(byFinder(finder, bytes, 0, bytes.length), byAutomaton(automaton, bytes, 0, bytes.length));
				assert.deepEqual(
					byFinder(finder, bytes, from, bytes.length),
					byAutomaton(automaton, bytes, from, bytes.length),
				);
			},
		),
		{ numRuns: 3000 },
	);
});

test("lines dense with keywords, of every length around the 16-byte blocks, give the automaton's lines", () => {
	// A reported line's start is found backwards and its end forwards 16 bytes at a time, and the scan
	// goes on from its "\n": keywords early and late in long lines, several per line, lines back to back.
	const filler = fc.constantFrom<string>(".", " ", "x", "ab", "\t", "9", "é", "\r");
	const line = fc.tuple(
		fc.array(filler, { maxLength: 40 }),
		fc.array(fc.tuple(fc.constantFrom(...defaultSignalPrefilterKeywords()), fc.nat(), fc.nat({ max: 40 })), {
			maxLength: 3,
		}),
	);
	fc.assert(
		fc.property(fc.array(line, { maxLength: 30 }), fc.nat({ max: 40 }), (lines, skip) => {
			const text = lines
				.map(([parts, words]) => {
					const out = [...parts];
					for (const [word, seed, at] of words) out.splice(at % (out.length + 1), 0, inRandomCase(word, seed));
					return out.join("");
				})
				.join("\n");
			const bytes = latin1(`${text}\n`);
			// From a line start inside the buffer too: the lines before `from` must not be reached.
			let from = 0;
			for (let k = 0; k < skip % (lines.length + 1) && from < bytes.length; k++) from = bytes.indexOf(0x0a, from) + 1;
			assert.deepEqual(byFinder(finder, bytes, from, bytes.length), byAutomaton(automaton, bytes, from, bytes.length));
		}),
		{ numRuns: 2000 },
	);
});

test("a reported line's start is never put before the range's start, whatever the module's memory holds there", async () => {
	// The module called directly: "\n" bytes lie in its memory up to 8 bytes before `start`, and the
	// first line's keyword is more than 8 bytes in, so a backward search that read past `start` would
	// stop at one of them.
	const module = new WebAssembly.Module(Buffer.from(await compileKeywordFilter()));
	const filter = new WebAssembly.Instance(module, {}).exports as unknown as {
		memory: WebAssembly.Memory;
		scan(tables: number, trie: number, start: number, end: number, out: number): number;
	};
	const memory = new Uint8Array(filter.memory.buffer);
	const tables = 0;
	const trie = 1024;
	const out = 8192;
	const start = 32768;
	memory.set(buildFingerprintTables(["err"]), tables);
	// The trie of "err": states 0 -e-> 1 -r-> 2 -r-> 3 (a keyword ends), rows of 256 entries of 4 bytes.
	const rows = new Int32Array(filter.memory.buffer, trie, 4 * 256);
	rows[0 * 256 + 0x65] = 1 * 1024;
	rows[1 * 256 + 0x72] = 2 * 1024;
	rows[2 * 256 + 0x72] = 3 * 1024 + 1;
	memory.fill(0x0a, start - 64, start - 8);
	memory.fill(0x79, start - 8, start);
	for (const prefix of ["", "a", "0123456789abcdef", "0123456789abcdefghijklmnopqrstu"]) {
		const text = Buffer.from(`${prefix}yy err\nplain\nerr\n`);
		memory.set(text, start);
		const written = filter.scan(tables, trie, start, start + text.length, out);
		const pairs = [...new Int32Array(filter.memory.buffer, out, written * 2)];
		assert.deepEqual(pairs, [start, 0, start + prefix.length + 13, 2], JSON.stringify(prefix));
	}
});

test("a shared read buffer is scanned where it lies: the automaton's lines and counts, and not one byte of it changed", () => {
	// The default pattern's finder lives in the shared instance; a pump reads into its buffers and
	// stores the same bytes while they are scanned, so the module must read them in place, never write.
	const shared = prepareDefaultSignalFinder();
	const [buffer] = acquireReadBuffers(1, SHARED_READ_BUFFER_BYTES);
	try {
		assert.notEqual(buffer.buffer, Buffer.allocUnsafe(1).buffer);
		let compared = 0;
		for (const fixture of loadRealFixtures()) {
			const bytes = readFileSync(join(REAL_FIXTURES_DIR, `${fixture.name}.log`)).subarray(0, SHARED_READ_BUFFER_BYTES);
			// Garbage after the bytes: newlines and keywords that must be neither counted nor reported.
			buffer.fill("\nerror\n", bytes.length);
			bytes.copy(buffer);
			const view = buffer.subarray(0, bytes.length);
			const digest = createHash("sha1").update(buffer).digest("hex");
			for (const size of [100, 4096, WASM_WINDOW_BYTES + 1, bytes.length]) {
				assertSameOnRanges(
					defaultSignalPrefilterKeywords(),
					shared,
					automaton,
					view,
					wholeLineRanges(view, size),
					`${fixture.name} in place, chunks of ${size}`,
				);
			}
			for (const [from, to] of [
				[0, bytes.length],
				[1, bytes.length - 1],
				[17, Math.max(17, bytes.length >> 1)],
			]) {
				assert.equal(
					countNewlines(view, from, to),
					countNewlines(Buffer.from(view), from, to),
					`${fixture.name} newlines [${from}, ${to})`,
				);
			}
			assert.equal(
				createHash("sha1").update(buffer).digest("hex"),
				digest,
				`${fixture.name}: the buffer was written to`,
			);
			compared++;
		}
		assert.ok(compared > 10);
	} finally {
		releaseReadBuffers([buffer]);
	}
});

test("shared read buffers are handed out while free, plain ones after, and come back when released", () => {
	const first = acquireReadBuffers(2, 1000);
	const second = acquireReadBuffers(2, 1000);
	const third = acquireReadBuffers(2, 1000);
	const large = acquireReadBuffers(1, SHARED_READ_BUFFER_BYTES + 1);
	try {
		const shared = first[0].buffer;
		for (const buffer of [...first, ...second]) assert.equal(buffer.buffer, shared);
		for (const buffer of [...third, ...large]) assert.notEqual(buffer.buffer, shared);
		assert.equal(new Set([...first, ...second].map((buffer) => buffer.byteOffset)).size, 4, "four distinct buffers");
		for (const buffer of [...first, ...second, ...third]) assert.equal(buffer.length, 1000);
		releaseReadBuffers(first);
		// Given back twice: still one entry each in the free list.
		releaseReadBuffers(first);
		const again = acquireReadBuffers(2, SHARED_READ_BUFFER_BYTES);
		assert.notEqual(acquireReadBuffers(1, 1000)[0].buffer, shared, "no buffer was handed out twice");
		assert.deepEqual(
			again.map((buffer) => buffer.buffer === shared),
			[true, true],
		);
		assert.deepEqual(
			again.map((buffer) => buffer.length),
			[SHARED_READ_BUFFER_BYTES, SHARED_READ_BUFFER_BYTES],
		);
		releaseReadBuffers(again);
	} finally {
		releaseReadBuffers([...second, ...third, ...large]);
	}
});

test("custom keyword sets, byte strings of any kind, give the automaton's lines too", () => {
	const keyword = fc.oneof(
		fc.string({ minLength: 1, maxLength: 7 }).map((text) => Buffer.from(text, "utf8").toString("latin1")),
		fc
			.string({ unit: "binary", minLength: 1, maxLength: 3 })
			.map((text) => Buffer.from(text, "utf8").toString("latin1")),
		fc.constantFrom("a", "Ab", "\n", "x\ny", "\r", " ", "\xff", "\x00", "e  ", "ERR"),
	);
	fc.assert(
		fc.property(
			fc.array(keyword, { minLength: 1, maxLength: 40 }),
			fc.nat({ max: 15 }),
			fc.array(fc.nat(), { maxLength: 40 }),
			(keywords, pad, picks) => {
				const custom = createKeywordLineFinder(keywords);
				assert.equal(custom.engine, "wasm-simd");
				const js = buildKeywordAutomaton(keywords);
				const parts = picks.map((pick) =>
					pick % 3 === 0
						? "\n"
						: pick % 3 === 1
							? inRandomCase(keywords[pick % keywords.length], pick)
							: String.fromCharCode(pick % 256),
				);
				const bytes = textFrom(parts, pad);
				assert.deepEqual(byFinder(custom, bytes, 0, bytes.length), byAutomaton(js, bytes, 0, bytes.length));
			},
		),
		{ numRuns: 1000 },
	);
});

test("without a loadable WebAssembly module the finder is the automaton, with the same results", () => {
	const broken = createKeywordLineFinder(defaultSignalPrefilterKeywords(), {
		loadWasm: () => new Uint8Array([0, 0x61, 0x73, 0x6d, 9, 9]),
	});
	assert.equal(broken.engine, "js");
	assert.match(broken.fallbackReason ?? "", /does not validate/);
	const missing = createKeywordLineFinder(defaultSignalPrefilterKeywords(), {
		loadWasm: () => {
			throw Object.assign(new Error("ENOENT: no such file"), { code: "ENOENT" });
		},
	});
	assert.equal(missing.engine, "js");
	assert.match(missing.fallbackReason ?? "", /could not be loaded: ENOENT/);
	// A valid module without the expected exports cannot be set up.
	const empty = createKeywordLineFinder(defaultSignalPrefilterKeywords(), {
		loadWasm: () => new Uint8Array([0, 0x61, 0x73, 0x6d, 1, 0, 0, 0]),
	});
	assert.equal(empty.engine, "js");
	assert.match(empty.fallbackReason ?? "", /could not be set up/);
	const bytes = readFileSync(join(REAL_FIXTURES_DIR, "jest-failure.log"));
	const end = bytes.lastIndexOf(0x0a) + 1;
	for (const fallback of [broken, missing, empty])
		assert.deepEqual(byFinder(fallback, bytes, 0, end), byFinder(finder, bytes, 0, end));
});

test("a keyword set too large for the module's memory falls back to the automaton", () => {
	const many = Array.from({ length: 3000 }, (_, i) => `kw${i.toString(36)}-${(i * 7919).toString(36)}`);
	const large = createKeywordLineFinder(many);
	assert.equal(large.engine, "js");
	assert.match(large.fallbackReason ?? "", /automaton states/);
	const bytes = Buffer.from(`a kw1-627 b\nnone\nKW2-FFE\n`);
	assert.deepEqual(
		byFinder(large, bytes, 0, bytes.length),
		byAutomaton(buildKeywordAutomaton(many), bytes, 0, bytes.length),
	);
});
