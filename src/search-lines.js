// @ts-check
// Newlines counted in bytes for the search worker (plain JavaScript, like everything it imports):
// the SIMD pass of src/wasm/keyword-filter.wasm without keywords (its `count`), over windows copied
// into the module's own memory, or a Buffer.indexOf per line where WebAssembly SIMD cannot run.
// Invariant: countNewlines(bytes, from, to) is the number of 0x0a bytes in bytes[from, to).

import { readFileSync } from "node:fs";

/** Bytes copied into the module's memory per call. */
const WINDOW_BYTES = 128 * 1024;
/** The module pads the last block of a window with zeros (up to 16 bytes past its end). */
const PADDING_BYTES = 64;
const PAGE_BYTES = 64 * 1024;

/**
 * The module's count over a window of its memory, or null where it cannot run.
 * @returns {((bytes: Uint8Array, from: number, to: number) => number) | null}
 */
function loadCounter() {
	try {
		const wasm = readFileSync(new URL("./wasm/keyword-filter.wasm", import.meta.url));
		if (!WebAssembly.validate(wasm)) return null;
		const exports = /** @type {{ memory: WebAssembly.Memory; count(start: number, end: number): number }} */ (
			/** @type {unknown} */ (new WebAssembly.Instance(new WebAssembly.Module(wasm), {}).exports)
		);
		const pages = Math.ceil((WINDOW_BYTES + PADDING_BYTES) / PAGE_BYTES) - exports.memory.buffer.byteLength / PAGE_BYTES;
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

/** @type {((bytes: Uint8Array, from: number, to: number) => number) | null | undefined} */
let counter;

/**
 * The newlines in bytes[from, to).
 * @param {Buffer} bytes
 * @param {number} from
 * @param {number} to
 */
export function countNewlines(bytes, from, to) {
	if (counter === undefined) counter = loadCounter();
	if (counter !== null) return counter(bytes, from, to);
	let count = 0;
	for (let at = bytes.indexOf(10, from); at >= 0 && at < to; at = bytes.indexOf(10, at + 1)) count++;
	return count;
}
