// @ts-check
// A CR-separated output (one with no LF at all: scan/scan.ts decides) read as its records: each CR
// becomes an LF, in place, so the records are lines at the same byte offsets. Plain JavaScript checked
// by tsc, because the search worker runs it with no TypeScript loader. Pure.

/**
 * Turns every CR in target[start, end) into an LF, in place.
 * @param {Uint8Array} target
 * @param {number} start
 * @param {number} end
 */
export function crAsNewline(target, start, end) {
	for (let at = target.indexOf(0x0d, start); at !== -1 && at < end; at = target.indexOf(0x0d, at + 1))
		target[at] = 0x0a;
}
