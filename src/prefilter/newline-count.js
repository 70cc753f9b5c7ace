// @ts-check
// Newlines counted in bytes, for the main thread (keyword-filter.ts, with its compiled module) and
// for the search worker (plain JavaScript, like everything it imports; it compiles its own): the
// SIMD pass of src/prefilter/wasm/keyword-filter.wasm without keywords (its `count`), over windows copied into
// an instance's memory, or a Buffer.indexOf per line where WebAssembly SIMD cannot run. Invariant:
// every counter here gives the number of 0x0a bytes in bytes[from, to).

import { readFileSync } from "node:fs";

/** Bytes copied into the module's memory per call. */
const WINDOW_BYTES = 128 * 1024;
/** The module pads the last block of a window with zeros (up to 16 bytes past its end). */
const PADDING_BYTES = 64;
const PAGE_BYTES = 64 * 1024;

/**
 * A counter on a fresh instance of `module` (the compiled keyword-filter.wasm), or null where it
 * cannot be set up.
 * @param {WebAssembly.Module} module
 * @returns {((bytes: Uint8Array, from: number, to: number) => number) | null}
 */
export function createNewlineCounter(module) {
	try {
		const exports = /** @type {{ memory: WebAssembly.Memory; count(start: number, end: number): number }} */ (
			/** @type {unknown} */ (new WebAssembly.Instance(module, {}).exports)
		);
		const pages =
			Math.ceil((WINDOW_BYTES + PADDING_BYTES) / PAGE_BYTES) - exports.memory.buffer.byteLength / PAGE_BYTES;
		if (pages > 0) exports.memory.grow(pages);
		const memory = new Uint8Array(exports.memory.buffer);
		return (bytes, from, to) => {
			let lines = 0;
			for (let at = from; at < to; at += WINDOW_BYTES) {
				const end = Math.min(to, at + WINDOW_BYTES);
				memory.set(bytes.subarray(at, end), 0);
				lines += exports.count(0, end - at);
			}
			return lines;
		};
	} catch {
		return null;
	}
}

/**
 * The newlines in bytes[from, to), a Buffer.indexOf per line: where WebAssembly cannot run.
 * @param {Uint8Array} bytes
 * @param {number} from
 * @param {number} to
 */
export function countNewlinesByIndexOf(bytes, from, to) {
	const view = Buffer.from(bytes.buffer, bytes.byteOffset + from, Math.max(0, to - from));
	let count = 0;
	for (let at = view.indexOf(0x0a); at >= 0; at = view.indexOf(0x0a, at + 1)) count++;
	return count;
}

/**
 * The worker's counter: undefined until first needed, null where the module cannot run.
 * @type {((bytes: Uint8Array, from: number, to: number) => number) | null | undefined}
 */
let counter;

/** The worker's counter, on its own compiled module. */
function loadCounter() {
	try {
		const wasm = readFileSync(new URL("./wasm/keyword-filter.wasm", import.meta.url));
		return WebAssembly.validate(wasm) ? createNewlineCounter(new WebAssembly.Module(wasm)) : null;
	} catch {
		return null;
	}
}

/**
 * The newlines in bytes[from, to), for the search worker (the main thread counts through
 * keyword-filter.ts's countNewlines, on the module it compiled once).
 * @param {Uint8Array} bytes
 * @param {number} from
 * @param {number} to
 */
export function countNewlinesInWorker(bytes, from, to) {
	if (counter === undefined) counter = loadCounter();
	return counter !== null ? counter(bytes, from, to) : countNewlinesByIndexOf(bytes, from, to);
}
