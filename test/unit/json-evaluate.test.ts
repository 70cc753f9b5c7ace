// Tests for src/json/evaluate.ts (and the lexer, navigator, measurer and printer under it): the
// streaming jsonPath gives what JSON.parse + selectJsonPath + JSON.stringify(value, null, 2) (cut
// to the room) give on the same text — values, missing paths and syntax errors — on random
// documents read in random chunk sizes; and it stays bounded on large, deep and hostile documents
// (time by an injected clock, never by wall time).

import assert from "node:assert/strict";
import { open, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, test, type TestContext } from "node:test";
import fc from "fast-check";
import {
	type JsonPathOptions,
	type JsonPathResult,
	type JsonValueSummary,
	evaluateJsonPath,
	MAX_JSON_PATH_RUNS,
	readJsonPathRuns,
} from "../../src/json/evaluate.js";
import { type PathSegment, selectJsonPath } from "../../src/json/path.js";
import type { ByteSource } from "../../src/io/source.js";
import { keepStart } from "../../src/lines/text.js";
import { createRandom } from "../helpers/random.js";
import { createTempDir } from "../helpers/tmp.js";

const STRESS = process.env.STRESS === "1";
const RUNS = STRESS ? 5000 : 400;
const V8_MESSAGES_OF_NODE_20 = process.versions.v8.startsWith("11.");

// ---------------------------------------------------------------------------------------------
// The reference: what the whole-text implementation answered

type Expected = JsonPathResult;

/** V8's reason with the line and column, as the whole-text implementation worded it. */
function describeParseError(error: unknown, text: string): string {
	const message = error instanceof Error ? error.message : String(error);
	const position = /at position (\d+)/.exec(message);
	let where = "";
	if (position) {
		const offset = Number(position[1]);
		let line = 1;
		let lineStart = 0;
		for (let at = text.indexOf("\n"); at !== -1 && at < offset; at = text.indexOf("\n", at + 1)) {
			line++;
			lineStart = at + 1;
		}
		where = ` (line ${line}, column ${offset - lineStart + 1})`;
	}
	const reason = message.replace(/ \(line \d+ column \d+\)$/, "").replace(/[\u0000-\u001f\u007f\u2028\u2029]/g, " ");
	return `${reason.length > 120 ? `${keepStart(reason, 119)}…` : reason}${where}`;
}

function summarize(value: unknown): JsonValueSummary {
	if (Array.isArray(value)) return { kind: "array", size: value.length, keys: [] };
	if (value === null) return { kind: "null", size: 0, keys: [] };
	if (typeof value === "object") {
		const keys = Object.keys(value);
		return { kind: "object", size: keys.length, keys: keys.slice(0, 5) };
	}
	return { kind: typeof value as "string" | "number" | "boolean", size: 0, keys: [] };
}

function expectedResult(bytes: Buffer, segments: PathSegment[], room: (summary: JsonValueSummary) => number): Expected {
	let text = bytes.toString("utf8");
	if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
	let root: unknown;
	try {
		root = JSON.parse(text);
	} catch (error) {
		return { type: "notJson", reason: describeParseError(error, text) };
	}
	const selected = selectJsonPath(root, segments);
	if ("error" in selected) return { type: "missing", message: selected.error };
	const summary = summarize(selected.value);
	const pretty = JSON.stringify(selected.value, null, 2);
	return { type: "value", summary, text: keepStart(pretty, Math.max(0, room(summary))), totalChars: pretty.length };
}

/** The file as the byte source store.openText gives (a descriptor read with pread; size from fstat). */
async function openFileSource(file: string): Promise<ByteSource> {
	const handle = await open(file, "r");
	const { size } = await handle.stat();
	return {
		size,
		read: async (target, position) =>
			(await handle.read(target, 0, Math.max(0, Math.min(target.length, size - position)), position)).bytesRead,
		close: () => handle.close(),
	};
}

/** evaluateJsonPath over the file, its source closed once it has answered. */
async function evaluateFile(file: string, segments: PathSegment[], options: JsonPathOptions): Promise<JsonPathResult> {
	const source = await openFileSource(file);
	try {
		return await evaluateJsonPath(source, segments, options);
	} finally {
		await source.close();
	}
}

async function evaluate(
	t: TestContext,
	bytes: Buffer,
	segments: PathSegment[],
	options: Partial<JsonPathOptions> = {},
): Promise<JsonPathResult> {
	const dir = await createTempDir(t);
	const file = join(dir, "entry.txt");
	await writeFile(file, bytes);
	return evaluateFile(file, segments, { roomFor: () => 100_000, timeoutMs: 60_000, ...options });
}

/** Equal results; syntax errors word-for-word on Node 20's V8, else at the same position. */
function assertSameResult(actual: JsonPathResult, expected: Expected, context: string): void {
	if (expected.type === "notJson" && actual.type === "notJson" && !V8_MESSAGES_OF_NODE_20) {
		assert.equal(/position (\d+)/.exec(actual.reason)?.[1], /position (\d+)/.exec(expected.reason)?.[1], context);
		return;
	}
	assert.deepEqual(actual, expected, context);
}

// ---------------------------------------------------------------------------------------------
// Random documents, written byte by byte: any whitespace, repeated and out-of-order keys, every
// escape, multi-byte and invalid UTF-8, numbers JSON.parse rounds or overflows.

const KEYS = [
	"a",
	"b",
	"c",
	"0",
	"1",
	"2",
	"10",
	"01",
	"-1",
	"4294967294",
	"4294967295",
	"",
	"__proto__",
	"constructor",
	"key.with.dots",
	"é",
	"名前",
	"😀",
	"a b",
	"length",
];
const STRING_PIECES: Array<string | Buffer> = [
	"x",
	"hello",
	" ",
	"é",
	"日本語",
	"😀",
	"\u2028",
	"\u007f",
	'\\"',
	"\\\\",
	"\\/",
	"\\b",
	"\\f",
	"\\n",
	"\\r",
	"\\t",
	"\\u0041",
	"\\u00e9",
	"\\u0000",
	"\\u001f",
	"\\u2028",
	"\\ud83d\\ude00",
	"\\ud83d",
	"\\ude00",
	"\\uD83D x",
	"\\u0022",
	"\\u005C",
	Buffer.from([0xff]),
	Buffer.from([0xc3]),
	Buffer.from([0xe2, 0x82]),
	Buffer.from([0xed, 0xa0, 0x80]),
	Buffer.from([0xf0, 0x9f, 0x98]),
	Buffer.from([0x80, 0x80]),
];
const NUMBERS = [
	"0",
	"-0",
	"1",
	"-12",
	"1.5",
	"0.1",
	"1e400",
	"-1e-400",
	"1E2",
	"2.50e+3",
	"123456789012345678901",
	"9007199254740993",
	"1e-7",
	"0e0",
	"-0.0",
	"12345678901234567890123456789e-10",
];
const WHITESPACE = ["", "", "", " ", "\n", "\t", "\r\n", "  "];

interface Generated {
	bytes: Buffer;
	/** Paths that exist in the text's key order (JSON.parse may pick a later duplicate). */
	paths: PathSegment[][];
}

function generateDocument(seed: number, maxNodes: number): Generated {
	const random = createRandom(seed);
	const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
	const out: Buffer[] = [];
	const put = (piece: string | Buffer): void => {
		out.push(typeof piece === "string" ? Buffer.from(piece, "utf8") : piece);
	};
	const paths: PathSegment[][] = [];
	let nodes = 0;
	const writeString = (): void => {
		put('"');
		const pieces = Math.floor(random() * 4);
		for (let index = 0; index < pieces; index++) put(pick(STRING_PIECES));
		put('"');
	};
	// An explicit stack keeps deep documents from recursing in the generator too.
	const writeValue = (path: PathSegment[], depth: number): void => {
		nodes++;
		paths.push(path);
		const roll = random();
		const canNest = nodes < maxNodes && depth < 12;
		if (canNest && roll < 0.25) {
			put("[");
			const count = Math.floor(random() * (random() < 0.8 ? 5 : 10));
			for (let index = 0; index < count; index++) {
				if (index > 0) put(",");
				put(pick(WHITESPACE));
				writeValue([...path, index], depth + 1);
				put(pick(WHITESPACE));
			}
			if (count === 0) put(pick(WHITESPACE));
			put("]");
		} else if (canNest && roll < 0.5) {
			put("{");
			const count = Math.floor(random() * 5);
			for (let index = 0; index < count; index++) {
				if (index > 0) put(",");
				put(pick(WHITESPACE));
				const key = pick(KEYS);
				// Sometimes the same key with an escape in it: it must still match.
				put(random() < 0.15 && key === "a" ? '"\\u0061"' : JSON.stringify(key));
				put(`${pick(WHITESPACE)}:${pick(WHITESPACE)}`);
				writeValue([...path, key], depth + 1);
				put(pick(WHITESPACE));
			}
			if (count === 0) put(pick(WHITESPACE));
			put("}");
		} else if (roll < 0.7) {
			writeString();
		} else if (roll < 0.85) {
			put(pick(NUMBERS));
		} else {
			put(pick(["true", "false", "null"]));
		}
	};
	if (random() < 0.1) put(Buffer.from([0xef, 0xbb, 0xbf]));
	put(pick(WHITESPACE));
	writeValue([], 0);
	put(pick(WHITESPACE));
	return { bytes: Buffer.concat(out), paths };
}

/** A path to ask for: one that exists, one that goes one step too far or sideways, or nonsense. */
function choosePath(random: () => number, paths: PathSegment[][]): PathSegment[] {
	const base = paths[Math.floor(random() * paths.length)] ?? [];
	const roll = random();
	if (roll < 0.5) return base;
	if (roll < 0.65) return [...base, Math.floor(random() * 9)];
	if (roll < 0.8) return [...base, KEYS[Math.floor(random() * KEYS.length)]!];
	if (roll < 0.9 && base.length > 0) return [...base.slice(0, -1), typeof base[base.length - 1] === "number" ? "x" : 3];
	return [...base, "0", "1"];
}

/** Breaks a document: cut, extra byte, lost byte, changed byte, or trailing text. */
function mutate(random: () => number, bytes: Buffer): Buffer {
	const at = Math.floor(random() * (bytes.length + 1));
	const junk = Buffer.from([
		[
			0x7b, 0x7d, 0x5b, 0x5d, 0x2c, 0x3a, 0x22, 0x5c, 0x30, 0x2d, 0x2e, 0x65, 0x74, 0x78, 0x20, 0x0a, 0x01, 0xc3, 0xa9,
			0xff,
		][Math.floor(random() * 20)]!,
	]);
	switch (Math.floor(random() * 5)) {
		case 0:
			return bytes.subarray(0, at);
		case 1:
			return Buffer.concat([bytes.subarray(0, at), junk, bytes.subarray(at)]);
		case 2:
			return Buffer.concat([bytes.subarray(0, at), bytes.subarray(at + 1)]);
		case 3:
			return Buffer.concat([bytes.subarray(0, at), junk, bytes.subarray(at + 1)]);
		default:
			return Buffer.concat([bytes, Buffer.from(pick(random, [" x", "\n[pi notice]", "}", "1", '"', " \u00e9"]))]);
	}
}

function pick<T>(random: () => number, items: readonly T[]): T {
	return items[Math.floor(random() * items.length)]!;
}

/** fc.assert, but the failure names the counterexample's own assertion message (the test reporter hides its cause). */
async function checkProperty(
	property: fc.IAsyncProperty<[number]>,
	parameters: fc.Parameters<[number]>,
): Promise<void> {
	const details = await fc.check(property, parameters);
	if (details.failed) {
		const error =
			details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance);
		assert.fail(`counterexample ${JSON.stringify(details.counterexample)} after ${details.numRuns} runs: ${error}`);
	}
}

describe("streaming jsonPath against JSON.parse", () => {
	test(`random documents and paths (${RUNS} runs): same value text and length, same missing-path error`, async (t) => {
		await checkProperty(
			fc.asyncProperty(fc.integer({ min: 0, max: 2 ** 31 - 1 }), async (seed) => {
				const random = createRandom(seed ^ 0x5bd1e995);
				const { bytes, paths } = generateDocument(seed, 1 + Math.floor(random() * 60));
				const segments = choosePath(random, paths);
				const roomValue = pick(random, [0, 1, 7, 40, 200, 5000, 1_000_000]);
				const room = (): number => roomValue;
				const chunkBytes = pick(random, [1, 2, 3, 7, 64, 1 << 20]);
				const actual = await evaluate(t, bytes, segments, { roomFor: room, chunkBytes });
				assertSameResult(
					actual,
					expectedResult(bytes, segments, room),
					`seed ${seed}, path ${JSON.stringify(segments)}, chunks ${chunkBytes}, room ${roomValue}, text ${JSON.stringify(bytes.toString("latin1"))}`,
				);
			}),
			{ numRuns: RUNS },
		);
	});

	test(`broken documents (${RUNS} runs): refused exactly when JSON.parse refuses, with its reason and position`, async (t) => {
		await checkProperty(
			fc.asyncProperty(fc.integer({ min: 0, max: 2 ** 31 - 1 }), async (seed) => {
				const random = createRandom(seed ^ 0x1b873593);
				const { bytes, paths } = generateDocument(seed, 1 + Math.floor(random() * 30));
				const broken = mutate(random, bytes);
				const segments = choosePath(random, paths);
				const chunkBytes = pick(random, [1, 3, 16, 1 << 20]);
				const actual = await evaluate(t, broken, segments, { chunkBytes });
				assertSameResult(
					actual,
					expectedResult(broken, segments, () => 100_000),
					`seed ${seed}, chunks ${chunkBytes}, text ${JSON.stringify(broken.toString("latin1"))}`,
				);
			}),
			{ numRuns: RUNS },
		);
	});
});

// ---------------------------------------------------------------------------------------------
// Chosen documents

/** Evaluates and checks against the reference on the same bytes. */
async function assertLikeJsonParse(
	t: TestContext,
	text: string | Buffer,
	segments: PathSegment[],
	options: Partial<JsonPathOptions> = {},
): Promise<JsonPathResult> {
	const bytes = typeof text === "string" ? Buffer.from(text, "utf8") : text;
	const room = options.roomFor ?? (() => 100_000);
	const actual = await evaluate(t, bytes, segments, { ...options, roomFor: room });
	assertSameResult(actual, expectedResult(bytes, segments, room), `path ${JSON.stringify(segments)}`);
	return actual;
}

function inventory(count: number): string {
	const items = Array.from({ length: count }, (_, index) => ({
		id: index,
		name: `item-${index}`,
		tags: ["a", "b"],
		"key.with.dots": index % 2 === 0,
	}));
	return JSON.stringify({ kind: "inventory", items, last: { done: true } }, null, 1);
}

describe("chosen documents", () => {
	test("reaches items at the start, the middle and the end of a 40 000-item document read in 64 KiB chunks", async (t) => {
		const text = inventory(40_000);
		for (const segments of [
			["kind"],
			["items", 0],
			["items", 20_000, "name"],
			["items", 39_999],
			["last", "done"],
			["items", 40_000],
			["items", 5, "colour"],
			["items", "length"],
		] as PathSegment[][]) {
			const result = await assertLikeJsonParse(t, text, segments, { chunkBytes: 64 * 1024 });
			if (segments[1] === 20_000)
				assert.deepEqual(result, {
					type: "value",
					summary: { kind: "string", size: 0, keys: [] },
					text: '"item-20000"',
					totalChars: 12,
				});
			if (segments[1] === 40_000)
				assert.deepEqual(result, {
					type: "missing",
					message: "jsonPath: $.items[40000] does not exist: $.items is an array of 40000 items (indexes 0–39999)",
				});
		}
	});

	test("an array too short for the path stops counting when it ends: a later array at its level is not mistaken for it", async (t) => {
		const text = '{"a": [1, 2], "b": [1, 2, 3, 4, 5, 6, 7], "c": [[0], [1, 2, 3, 4, 5, 6]]}';
		assert.deepEqual(await assertLikeJsonParse(t, text, ["a", 5]), {
			type: "missing",
			message: "jsonPath: $.a[5] does not exist: $.a is an array of 2 items (indexes 0–1)",
		});
		await assertLikeJsonParse(t, text, ["c", 0, 3]);
		await assertLikeJsonParse(t, text, ["c", 1, 3]);
		await assertLikeJsonParse(t, text, ["c", "x"]);
	});

	test("matches keys by their decoded text: escapes, unicode, quotes and dots", async (t) => {
		const text =
			'{"ключ": {"名前": "unicode", "😀": "emoji"}, "a\\"b": 1, "\\u0061": 2, "key.with.dots": 3, "\\ud83d\\ude00": 4, "tab\\tkey": 5}';
		for (const segments of [
			["ключ", "名前"],
			["ключ", "😀"],
			['a"b'],
			["a"],
			["key.with.dots"],
			["😀"],
			["tab\tkey"],
			["ключ", "x"],
		] as PathSegment[][]) {
			await assertLikeJsonParse(t, text, segments);
		}
		const found = await assertLikeJsonParse(t, text, ["a"]);
		assert.deepEqual(found.type === "value" && found.text, "2");
	});

	test("treats __proto__ and constructor as ordinary keys and never touches Object.prototype", async (t) => {
		const text = '{"__proto__": {"polluted": true}, "constructor": {"prototype": 1}, "toString": 3}';
		const result = await assertLikeJsonParse(t, text, ["__proto__", "polluted"]);
		assert.equal(result.type === "value" && result.text, "true");
		await assertLikeJsonParse(t, text, ["constructor", "prototype"]);
		await assertLikeJsonParse(t, text, []);
		await assertLikeJsonParse(t, '{"a": 1}', ["__proto__"]);
		await assertLikeJsonParse(t, '{"a": 1}', ["hasOwnProperty"]);
		assert.equal(({} as Record<string, unknown>).polluted, undefined);
	});

	test("prints numbers, booleans and null as JSON.parse reads them, and names them when the path goes on", async (t) => {
		const text =
			'{"n": 1e400, "m": -0, "big": 123456789012345678901, "f": 1.50, "t": true, "no": false, "z": null, "s": "' +
			"x".repeat(100) +
			'"}';
		for (const key of ["n", "m", "big", "f", "t", "no", "z", "s"]) {
			await assertLikeJsonParse(t, text, [key]);
			await assertLikeJsonParse(t, text, [key, "deeper"]);
		}
		const infinite = await assertLikeJsonParse(t, text, ["n", 0]);
		assert.deepEqual(infinite, {
			type: "missing",
			message: "jsonPath: $.n[0] does not exist: $.n is a number (Infinity)",
		});
	});

	test("keeps the last of repeated keys and orders array-index keys first, as JSON.parse does", async (t) => {
		const text = '{"b": 1, "10": "ten", "a": {"x": 1}, "2": "two", "a": {"y": 2}, "b": [3]}';
		const whole = await assertLikeJsonParse(t, text, []);
		assert.equal(whole.type === "value" && whole.text, JSON.stringify(JSON.parse(text), null, 2));
		await assertLikeJsonParse(t, text, ["a", "x"]);
		await assertLikeJsonParse(t, text, ["a", "y"]);
		await assertLikeJsonParse(t, text, ["missing"]);
		// Cut inside a reordered object: the first characters are JSON.parse's order all the same.
		for (const room of [1, 10, 25, 40]) await assertLikeJsonParse(t, text, [], { roomFor: () => room });
	});

	test("walks 100 000 nested arrays and objects without recursion, printing only the room's worth", async (t) => {
		const depth = 100_000;
		const arrays = `${"[".repeat(depth)}${"]".repeat(depth)}`;
		const inner = await evaluate(t, Buffer.from(arrays), [0, 0, 0], { roomFor: () => 300 });
		assert.equal(inner.type, "value");
		if (inner.type !== "value") return;
		assert.deepEqual(inner.summary, { kind: "array", size: 1, keys: [] });
		// Levels 0…n-1 open with "[" on their own line; the innermost is "[]": count without recursion.
		const levels = depth - 3;
		let expected = 2;
		for (let level = levels - 2; level >= 0; level--) expected += 2 + 2 * (level + 1) + 2 + 2 * level;
		assert.equal(inner.totalChars, expected);
		const lines = Array.from({ length: 40 }, (_, level) => `${"  ".repeat(level)}[`).join("\n");
		assert.equal(inner.text, lines.slice(0, 300));
		assert.deepEqual(await evaluate(t, Buffer.from(arrays), [0, 0, 1]), {
			type: "missing",
			message: "jsonPath: $[0][0][1] does not exist: $[0][0] is an array of 1 item (indexes 0–0)",
		});

		const objects = `${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`;
		const deepPath = Array.from({ length: depth }, () => "a");
		assert.deepEqual(await evaluate(t, Buffer.from(objects), deepPath), {
			type: "value",
			summary: { kind: "number", size: 0, keys: [] },
			text: "1",
			totalChars: 1,
		});
		const top = await evaluate(t, Buffer.from(objects), ["a"], { roomFor: () => 50 });
		assert.equal(
			top.type === "value" && top.text,
			'{\n  "a": {\n    "a": {\n      "a": {\n        "a": {\n '.slice(0, 50),
		);
	});

	test("refuses a text that is not JSON at its start, middle or end, with JSON.parse's reason, line and column", async (t) => {
		const good = inventory(2000);
		const middle = Math.floor(good.length / 2);
		const cases = [
			"compiling...\nerror: x\n",
			'{"a": 1}\n[pi notice]',
			`${good.slice(0, middle)}@${good.slice(middle + 1)}`,
			good.slice(0, good.length - 3),
			`${good}\n[Showing lines 1-2000 of 9120. Use offset=2001 to continue.]`,
			"",
			"   ",
			"undefined",
			`\ufeff\ufeff{}`,
			'{"a": "tab\there"}',
			'{"a": "\\x"}',
			'{"a": 01}',
		];
		for (const text of cases) {
			const result = await assertLikeJsonParse(t, text, ["items", 0], { chunkBytes: 4096 });
			assert.equal(result.type, "notJson", JSON.stringify(text.slice(0, 40)));
		}
		const trailing = await evaluate(t, Buffer.from('{"a": 1}\n[pi notice]'), ["a"]);
		assert.deepEqual(trailing, {
			type: "notJson",
			reason: "Unexpected non-whitespace character after JSON at position 9 (line 2, column 1)",
		});
	});

	test("prints a value larger than the room up to the room, and counts all of it", async (t) => {
		const text = inventory(5000);
		const result = await assertLikeJsonParse(t, text, [], { roomFor: () => 1000 });
		assert.equal(result.type, "value");
		if (result.type !== "value") return;
		assert.equal(result.text.length, 1000);
		assert.equal(result.totalChars, JSON.stringify(JSON.parse(text), null, 2).length);
		assert.deepEqual(result.summary, { kind: "object", size: 3, keys: ["kind", "items", "last"] });
		// A string longer than the room is cut inside, without its closing quote.
		const long = await assertLikeJsonParse(t, JSON.stringify({ s: "ü\n😀".repeat(10_000) }), ["s"], {
			roomFor: () => 101,
		});
		assert.equal(long.type === "value" && long.text.length <= 101, true);
	});

	test("skips a byte order mark, and reads invalid UTF-8 as U+FFFD like Buffer#toString", async (t) => {
		await assertLikeJsonParse(t, Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"a": [1, 2]}')]), [
			"a",
			1,
		]);
		const broken = Buffer.concat([
			Buffer.from('{"k\xff": "'),
			Buffer.from([0xff, 0xc3, 0x28, 0xed, 0xa0, 0x80, 0xf0, 0x9f]),
			Buffer.from('", "x": 1}'),
		]);
		await assertLikeJsonParse(t, broken, []);
		await assertLikeJsonParse(
			t,
			Buffer.concat([Buffer.from("[1, "), Buffer.from([0xc3, 0xa9]), Buffer.from("]")]),
			[0],
		);
	});
});

describe("bounds", () => {
	test("stops when the clock passes timeoutMs between chunks, saying how far it read", async (t) => {
		let clock = 0;
		const now = (): number => {
			clock += 1000;
			return clock;
		};
		const text = inventory(2000);
		const result = await evaluate(t, Buffer.from(text), ["last"], { chunkBytes: 4096, timeoutMs: 2500, now });
		assert.equal(result.type, "stopped");
		if (result.type !== "stopped") return;
		assert.ok(result.offset > 0 && result.offset < text.length, `stopped at ${result.offset} of ${result.size}`);
		assert.equal(result.size, Buffer.byteLength(text));
		assert.ok(result.elapsedMs > 2500);
	});

	test(`runs at most ${MAX_JSON_PATH_RUNS} evaluations at once; the others wait and all answer`, async (t) => {
		const text = inventory(3000);
		const bytes = Buffer.from(text);
		const dir = await createTempDir(t);
		const file = join(dir, "entry.txt");
		await writeFile(file, bytes);
		const paths: PathSegment[][] = Array.from({ length: 8 }, (_, index) => ["items", index * 300, "name"]);
		const sources = await Promise.all(paths.map(() => openFileSource(file)));
		t.after(() => Promise.all(sources.map((source) => source.close())));
		const pending = paths.map((segments, index) =>
			evaluateJsonPath(sources[index]!, segments, { roomFor: () => 1000, timeoutMs: 60_000, chunkBytes: 4096 }),
		);
		// Taking a place is synchronous: the first ones run, the rest wait in line.
		const during = readJsonPathRuns();
		assert.deepEqual(
			{ running: during.running, waiting: during.waiting },
			{ running: MAX_JSON_PATH_RUNS, waiting: paths.length - MAX_JSON_PATH_RUNS },
		);
		const results = await Promise.all(pending);
		assert.ok(readJsonPathRuns().peak <= MAX_JSON_PATH_RUNS, `peak ${readJsonPathRuns().peak}`);
		assert.deepEqual(readJsonPathRuns(), { running: 0, waiting: 0, peak: readJsonPathRuns().peak });
		results.forEach((result, index) =>
			assert.deepEqual(
				result,
				expectedResult(bytes, paths[index]!, () => 1000),
			),
		);
	});

	test("a cancelled evaluation leaves its place, waiting or running", async (t) => {
		const dir = await createTempDir(t);
		const file = join(dir, "entry.txt");
		await writeFile(file, inventory(3000));
		const controller = new AbortController();
		const sources = await Promise.all(Array.from({ length: 4 }, () => openFileSource(file)));
		t.after(() => Promise.all(sources.map((source) => source.close())));
		const runs = sources.map((source) =>
			evaluateJsonPath(source, ["last"], {
				roomFor: () => 100,
				timeoutMs: 60_000,
				chunkBytes: 1024,
				signal: controller.signal,
			}),
		);
		controller.abort();
		const settled = await Promise.allSettled(runs);
		assert.ok(
			settled.every((outcome) => outcome.status === "rejected"),
			JSON.stringify(settled.map((outcome) => outcome.status)),
		);
		assert.equal(readJsonPathRuns().running, 0);
		assert.equal(readJsonPathRuns().waiting, 0);
	});

	test("beyond maxTrackedKeys it still answers, counting further keys as distinct", async (t) => {
		const text = JSON.stringify(Object.fromEntries(Array.from({ length: 50 }, (_, index) => [`k${index}`, index])));
		const within = await assertLikeJsonParse(t, text, ["k49"], { maxTrackedKeys: 1000 });
		assert.equal(within.type === "value" && within.text, "49");
		const beyond = await evaluate(t, Buffer.from(text), ["missing"], { maxTrackedKeys: 10 });
		assert.equal(beyond.type, "missing");
		assert.match(beyond.type === "missing" ? beyond.message : "", /an object with 50 keys, the first 20: "k0"/);
	});
});
