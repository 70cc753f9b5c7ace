// The keyword automaton behind a WebAssembly SIMD prefilter (src/prefilter/wasm/keyword-filter.wat): 16-byte
// blocks, the first four bytes of each keyword as nibble fingerprints in 16 buckets, newlines counted
// with SIMD; every proposed position is confirmed by the same automaton. Invariant: findLines gives
// exactly what findKeywordLines gives (pairs and line count), whatever the keywords and the bytes;
// where WebAssembly SIMD is missing or the module cannot be loaded, it is findKeywordLines. Bytes in
// a shared read buffer (acquireReadBuffers: the pumps read into the module's memory) are scanned
// where they lie, others copied in a window at a time; the module never writes outside its output.

import { readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { buildKeywordAutomaton, findKeywordLines, type KeywordAutomaton } from "./keyword-automaton.js";
import { buildFingerprintTables } from "./keyword-buckets.js";
import { countNewlinesByIndexOf, createNewlineCounter } from "./newline-count.js";

/** Finds the lines holding a keyword; built once per keyword set. */
export interface KeywordLineFinder {
	/** "wasm-simd" when the SIMD prefilter runs, "js" when the automaton alone does. */
	readonly engine: "wasm-simd" | "js";
	/** Why the SIMD prefilter is not used (only when engine is "js"). */
	readonly fallbackReason?: string;
	/** The contract of findKeywordLines: bytes[from, to) ends with "\n"; returns its lines, pushes (line start, line index) pairs. */
	findLines(bytes: Buffer, from: number, to: number, found: number[]): number;
}

export interface KeywordLineFinderOptions {
	/** The compiled module's bytes; default: src/prefilter/wasm/keyword-filter.wasm, read once per process. */
	loadWasm?: () => BufferSource;
	/**
	 * Place the finder in the process's shared instance (see acquireReadBuffers), so that it scans
	 * read buffers where they lie; the first such finder only (the default pattern's), else its own.
	 */
	shared?: boolean;
}

/** Bytes handed to the module per call, in windows of whole lines (copied into its memory unless they lie there). */
export const WASM_WINDOW_BYTES = 128 * 1024;
/** Most automaton states the module takes (1 KiB of its memory each); more fall back to JavaScript. */
const MAX_WASM_STATES = 16 * 1024;
/** Bytes past the end of the input that the module may read. */
const INPUT_PADDING_BYTES = 64;
/** Bytes before the input that the module may read (a line's start is found 16 bytes at a time). */
const INPUT_LEAD_BYTES = 64;
/** Read buffers in the shared instance's memory: two each for two scans at once. */
const SHARED_READ_BUFFERS = 4;
/** The size of each (a pump's chunk: src/io/source.ts READ_CHUNK_BYTES). */
export const SHARED_READ_BUFFER_BYTES = 1024 * 1024;
/** Automaton states the shared instance has room for (the default keywords make about 700). */
const SHARED_TRIE_STATES = 1024;
const PAGE_BYTES = 64 * 1024;

const DEFAULT_WASM_URL = new URL("./wasm/keyword-filter.wasm", import.meta.url);
/** The same module with relaxed swizzles (built beside it: test/helpers/wasm.ts). */
const RELAXED_WASM_URL = new URL("./wasm/keyword-filter-relaxed.wasm", import.meta.url);

interface FilterExports {
	memory: WebAssembly.Memory;
	lines: WebAssembly.Global;
	scan(tables: number, trie: number, start: number, end: number, out: number): number;
	count(start: number, end: number): number;
	shapes(start: number, end: number, out: number, window: number): number;
}

/** The default module, compiled once per process (undefined until first needed), or why it could not be. */
let defaultModule: { module: WebAssembly.Module } | { error: string } | undefined;

/**
 * Modules compiled in this process (a test hook: the result path must not compile one after the
 * prewarm), and which build of the default module runs (see usableRelaxed; undefined until loaded).
 */
export const keywordFilterStats: { compiles: number; variant?: "relaxed-simd" | "simd" } = { compiles: 0 };

const NOT_VALID = "WebAssembly SIMD module does not validate here";

/** The default module, compiled from disk on first use (synchronously: see compileDefaultModule for the prewarm's way). */
function loadDefaultModule(): { module: WebAssembly.Module } | { error: string } {
	return (defaultModule ??= compileModule(
		() => usableRelaxed(readOptional(RELAXED_WASM_URL)) ?? readFileSync(DEFAULT_WASM_URL),
	));
}

/**
 * The relaxed-SIMD build of the default module when this runtime validates it (relaxed SIMD is on
 * by default from Node 22; Node 20 needs a V8 flag): its swizzles compile without the fix-up that
 * plain `i8x16.swizzle` needs for indices past 15, which makes the keyword pass about a fifth
 * faster. Every index the module swizzles with is a nibble, where both give the same lanes.
 * Undefined otherwise: the plain SIMD build is used.
 */
function usableRelaxed(relaxed: Buffer<ArrayBuffer> | undefined): Buffer<ArrayBuffer> | undefined {
	const usable = relaxed !== undefined && WebAssembly.validate(relaxed);
	keywordFilterStats.variant = usable ? "relaxed-simd" : "simd";
	return usable ? relaxed : undefined;
}

function readOptional(url: URL): Buffer<ArrayBuffer> | undefined {
	try {
		return readFileSync(url);
	} catch {
		return undefined;
	}
}

/** A fresh instance of `module` whose memory holds at least `bytes` (it never grows again). */
function instantiate(module: WebAssembly.Module, bytes: number): FilterExports {
	const filter = new WebAssembly.Instance(module, {}).exports as unknown as FilterExports;
	const pages = Math.ceil(bytes / PAGE_BYTES) - filter.memory.buffer.byteLength / PAGE_BYTES;
	if (pages > 0) filter.memory.grow(pages);
	return filter;
}

function describeLoadError(error: unknown): { error: string } {
	return { error: `WebAssembly module could not be loaded: ${error instanceof Error ? error.message : String(error)}` };
}

function compileModule(load: () => BufferSource): { module: WebAssembly.Module } | { error: string } {
	try {
		const bytes = load();
		if (!WebAssembly.validate(bytes)) return { error: NOT_VALID };
		keywordFilterStats.compiles++;
		return { module: new WebAssembly.Module(bytes) };
	} catch (error) {
		return describeLoadError(error);
	}
}

/**
 * Compiles the default module off the main thread (WebAssembly.compile) unless it is compiled
 * already: the prewarm, so that the first large result does not wait for it. Never rejects.
 */
export async function compileDefaultModule(): Promise<void> {
	if (defaultModule !== undefined) return;
	let compiled: { module: WebAssembly.Module } | { error: string };
	try {
		const bytes =
			usableRelaxed(await readFile(RELAXED_WASM_URL).catch(() => undefined)) ?? (await readFile(DEFAULT_WASM_URL));
		if (!WebAssembly.validate(bytes)) {
			compiled = { error: NOT_VALID };
		} else {
			keywordFilterStats.compiles++;
			compiled = { module: await WebAssembly.compile(bytes) };
		}
	} catch (error) {
		compiled = describeLoadError(error);
	}
	defaultModule ??= compiled;
}

/**
 * Builds a finder for the keywords (strings of characters 0–255, as buildKeywordAutomaton takes
 * them): the SIMD prefilter where it can run, the automaton alone elsewhere.
 */
export function createKeywordLineFinder(
	keywords: readonly string[],
	options: KeywordLineFinderOptions = {},
): KeywordLineFinder {
	const automaton = buildKeywordAutomaton(keywords);
	const compiled = options.loadWasm ? compileModule(options.loadWasm) : loadDefaultModule();
	const states = automaton.accepting.length;
	const reason =
		"error" in compiled
			? compiled.error
			: states > MAX_WASM_STATES
				? `${states} automaton states, more than ${MAX_WASM_STATES}`
				: undefined;
	const byAutomaton = (why: string | undefined): KeywordLineFinder => ({
		engine: "js",
		fallbackReason: why,
		findLines: (bytes, from, to, found) => findKeywordLines(automaton, bytes, from, to, found),
	});
	if (reason !== undefined || !("module" in compiled)) return byAutomaton(reason);
	try {
		if (options.shared && !options.loadWasm) {
			const host = getSharedInstance();
			if (host !== null && !host.finderPlaced && states <= SHARED_TRIE_STATES) {
				host.finderPlaced = true;
				return createWasmFinder(automaton, keywords, host.filter, host.layout);
			}
		}
		const layout = layOutFinder(states);
		return createWasmFinder(automaton, keywords, instantiate(compiled.module, layout.bytes), layout);
	} catch (error) {
		// Instantiating or growing its memory failed (address space, memory limits).
		return byAutomaton(
			`WebAssembly module could not be set up: ${error instanceof Error ? error.message : String(error)}`,
		);
	}
}

/** Where a finder's tables, output pairs, copied input window and automaton lie in its instance's memory. */
interface FinderLayout {
	tables: number;
	out: number;
	outBytes: number;
	/** The window copied in for bytes that lie elsewhere (the module may read INPUT_LEAD_BYTES before it). */
	input: number;
	trie: number;
	/** The memory the layout needs. */
	bytes: number;
}

function layOutFinder(states: number): FinderLayout {
	const tables = 0;
	const out = tables + 1024;
	const outBytes = (WASM_WINDOW_BYTES / 2 + 1) * 8;
	const input = alignUp(out + outBytes + INPUT_LEAD_BYTES, 64);
	const trie = alignUp(input + WASM_WINDOW_BYTES + INPUT_PADDING_BYTES, 1024);
	return { tables, out, outBytes, input, trie, bytes: trie + states * 1024 };
}

/**
 * A finder whose tables and automaton go where `layout` says in `filter`'s memory. Bytes that lie in
 * that memory (a shared read buffer) are scanned where they are; others are copied in, a window at
 * a time.
 */
function createWasmFinder(
	automaton: KeywordAutomaton,
	keywords: readonly string[],
	filter: FilterExports,
	layout: FinderLayout,
): KeywordLineFinder {
	const { tables, out, outBytes, input, trie } = layout;
	const states = automaton.accepting.length;
	// The memory never grows again, so these views stay valid.
	const memory = new Uint8Array(filter.memory.buffer);
	memory.set(buildFingerprintTables(keywords), tables);
	writeTrie(automaton, new Int32Array(filter.memory.buffer, trie, states * 256));
	const pairs = new Int32Array(filter.memory.buffer, out, outBytes / 4);
	const lineFound: number[] = [];

	return {
		engine: "wasm-simd",
		findLines(bytes, from, to, found) {
			let lines = 0;
			for (let at = from; at < to;) {
				// A window of whole lines; a line longer than the window goes to the automaton alone.
				const end = to - at <= WASM_WINDOW_BYTES ? to : bytes.lastIndexOf(0x0a, at + WASM_WINDOW_BYTES - 1) + 1;
				if (end <= at) {
					const lineEnd = bytes.indexOf(0x0a, at) + 1;
					lineFound.length = 0;
					findKeywordLines(automaton, bytes, at, lineEnd, lineFound);
					if (lineFound.length > 0) found.push(at, lines);
					lines++;
					at = lineEnd;
					continue;
				}
				const start = placeInput(memory, bytes, at, end, input);
				const written = filter.scan(tables, trie, start, start + (end - at), out);
				const shift = at - start;
				for (let k = 0; k < written * 2; k += 2) found.push(pairs[k] + shift, pairs[k + 1] + lines);
				lines += filter.lines.value as number;
				at = end;
			}
			return lines;
		},
	};
}

/**
 * The address of bytes[from, to) in `memory` for the module: where they lie when they lie in it (a
 * shared read buffer), else `input`, where they are copied.
 */
function placeInput(memory: Uint8Array, bytes: Uint8Array, from: number, to: number, input: number): number {
	if (bytes.buffer === memory.buffer) return bytes.byteOffset + from;
	memory.set(bytes.subarray(from, to), input);
	return input;
}

/**
 * The process's shared instance: the default pattern's finder (createKeywordLineFinder with
 * `shared`), the shape hasher, a newline count, and read buffers in its memory, so that a scan's
 * SIMD passes run on the bytes where they were read, without copying them in. Laid out once; its
 * memory never grows, so buffers handed out stay valid.
 */
interface SharedInstance {
	filter: FilterExports;
	layout: FinderLayout;
	finderPlaced: boolean;
	/** The shape hasher's records. */
	records: number;
	/** Read buffers not handed out. */
	free: Buffer[];
}

/** Undefined until first needed, null where the module cannot run. */
let sharedInstance: SharedInstance | undefined | null;

function getSharedInstance(): SharedInstance | null {
	if (sharedInstance !== undefined) return sharedInstance;
	sharedInstance = null;
	const compiled = loadDefaultModule();
	if (!("module" in compiled)) return null;
	try {
		const layout = layOutFinder(SHARED_TRIE_STATES);
		const records = alignUp(layout.bytes, 64);
		const recordBytes = (WASM_WINDOW_BYTES / 2 + 1) * 12;
		const slotBytes = alignUp(INPUT_LEAD_BYTES + SHARED_READ_BUFFER_BYTES + INPUT_PADDING_BYTES, 64);
		const slots = alignUp(records + recordBytes, 64);
		const filter = instantiate(compiled.module, slots + SHARED_READ_BUFFERS * slotBytes);
		const free = Array.from({ length: SHARED_READ_BUFFERS }, (_, k) =>
			Buffer.from(filter.memory.buffer, slots + k * slotBytes + INPUT_LEAD_BYTES, SHARED_READ_BUFFER_BYTES),
		);
		sharedInstance = { filter, layout, finderPlaced: false, records, free };
	} catch {
		// Address space or memory limits: every finder gets its own instance, every read buffer is a plain one.
	}
	return sharedInstance;
}

/**
 * `count` read buffers of `bytes` each for a scan: in the shared instance's memory while enough of
 * them are free and `bytes` fits (the SIMD passes then read them where they lie), else fresh ones.
 * Give them back with releaseReadBuffers once no read, write or scan uses them any more.
 */
export function acquireReadBuffers(count: number, bytes: number): Buffer[] {
	const free = bytes <= SHARED_READ_BUFFER_BYTES ? getSharedInstance()?.free : undefined;
	if (free === undefined || free.length < count) return Array.from({ length: count }, () => Buffer.allocUnsafe(bytes));
	return free.splice(free.length - count, count).map((buffer) => buffer.subarray(0, bytes));
}

/** Gives back buffers from acquireReadBuffers (fresh ones are left to the garbage collector). */
export function releaseReadBuffers(buffers: readonly Buffer[]): void {
	const shared = sharedInstance;
	if (shared == null) return;
	for (const buffer of buffers) {
		// Never twice in the free list (two scans would then read into one buffer).
		if (
			buffer.buffer !== shared.filter.memory.buffer ||
			shared.free.some((free) => free.byteOffset === buffer.byteOffset)
		)
			continue;
		shared.free.push(Buffer.from(buffer.buffer, buffer.byteOffset, SHARED_READ_BUFFER_BYTES));
	}
}

/** The module's newline count (newline-count.js) on an instance of its own; undefined until first needed, null where it cannot run. */
let newlineCounter: ((bytes: Uint8Array, from: number, to: number) => number) | undefined | null;

/**
 * The newlines in bytes[from, to): the prefilter's SIMD pass without the keywords (lines that are
 * not searched, the stored copy's line count), or a memchr per line where WebAssembly cannot run.
 */
export function countNewlines(bytes: Uint8Array, from: number, to: number): number {
	const shared = sharedInstance;
	if (shared != null && bytes.buffer === shared.filter.memory.buffer) {
		// A shared read buffer: counted where it lies.
		return from < to ? shared.filter.count(bytes.byteOffset + from, bytes.byteOffset + to) : 0;
	}
	if (newlineCounter === undefined) {
		const compiled = loadDefaultModule();
		newlineCounter = "module" in compiled ? createNewlineCounter(compiled.module) : null;
	}
	return newlineCounter !== null ? newlineCounter(bytes, from, to) : countNewlinesByIndexOf(bytes, from, to);
}

/** The module's shape hashes of whole lines (see getShapeHasher). */
export interface ShapeHasher {
	/** Most bytes hashed per call. */
	readonly windowBytes: number;
	/**
	 * Hashes the lines of bytes[from, to) (whole lines, each ending in "\n", at most windowBytes in
	 * all), each on `shapeWindow` skeleton bytes (hashShape's `window`): returns how many lines were not blank; for the k-th of them, records[3k] is its hash,
	 * records[3k + 1] its line index from 0 and records[3k + 2] its start, from `from`.
	 */
	hash(bytes: Uint8Array, from: number, to: number, shapeWindow: number): number;
	readonly records: Uint32Array;
	/** The lines (blank ones too) of the last call's range. */
	lastLines(): number;
}

/** The process's shape hasher: undefined until first needed, null where WebAssembly cannot run. */
let shapeHasher: ShapeHasher | undefined | null;

/**
 * The module's `shapes` function in the shared instance, which hashes each line as
 * src/signals/shape.ts hashShape does (bit for bit): a shared read buffer where it lies, other bytes
 * copied into the instance's input window; null where the module cannot run (the caller hashes in
 * JavaScript then).
 */
export function getShapeHasher(): ShapeHasher | null {
	if (shapeHasher !== undefined) return shapeHasher;
	const shared = getSharedInstance();
	if (shared === null) return (shapeHasher = null);
	const { filter, records: out, layout } = shared;
	const memory = new Uint8Array(filter.memory.buffer);
	const records = new Uint32Array(filter.memory.buffer, out, ((WASM_WINDOW_BYTES / 2 + 1) * 12) / 4);
	shapeHasher = {
		windowBytes: WASM_WINDOW_BYTES,
		records,
		hash(bytes, from, to, shapeWindow) {
			const start = placeInput(memory, bytes, from, to, layout.input);
			return filter.shapes(start, start + (to - from), out, shapeWindow);
		},
		lastLines: () => filter.lines.value as number,
	};
	return shapeHasher;
}

/**
 * The automaton's trie edges as the module takes them (see src/prefilter/wasm/keyword-filter.wat): a
 * transition is a trie edge when it leads one level deeper (failure transitions never do), and
 * depths are the distances from the start state. Edges on "\n" are left out, as findKeywordLines
 * never crosses a newline.
 */
function writeTrie(automaton: KeywordAutomaton, table: Int32Array): void {
	const { delta, accepting } = automaton;
	const depth = new Int32Array(accepting.length).fill(-1);
	depth[0] = 0;
	const queue = [0];
	for (let head = 0; head < queue.length; head++) {
		const state = queue[head];
		for (let byte = 0; byte < 256; byte++) {
			const next = delta[state * 256 + byte];
			if (depth[next] < 0) {
				depth[next] = depth[state] + 1;
				queue.push(next);
			}
		}
	}
	for (let state = 0; state < accepting.length; state++) {
		for (let byte = 0; byte < 256; byte++) {
			const next = delta[state * 256 + byte];
			const edge = byte !== 0x0a && depth[next] === depth[state] + 1;
			table[state * 256 + byte] = edge ? next * 1024 + accepting[next] : 0;
		}
	}
}

function alignUp(value: number, to: number): number {
	return Math.ceil(value / to) * to;
}
