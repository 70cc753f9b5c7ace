// What a line's shape is, and how common a shape must be to count as rare, routine or repeated: the
// one place for both. A line's shape is its start with the variable parts set aside, so that the lines
// one print statement writes share one. It comes in two forms, side by side below: the shape key
// (shapeOf, a string, for the few lines already chosen) and the shape hash (hashShape, 32 bits over
// raw bytes, for every line of an output, computed in WebAssembly too). Pure: text or bytes in.

import {
	isStreamTag,
	lineTagAt,
	MAX_WRAPPING_RECORD_CHARS,
	stampLength,
	wrappedLineOf,
	wrappedLineStart,
} from "../lines/stamp.js";
import { frameLengthAt, frameTextOf, type LineFrame } from "../lines/frame.js";

// ---------------------------------------------------------------------------------------------
// The two forms of a shape
//
//                      shapeOf(text): the shape key              hashShape(bytes): the shape hash
//   reads              a line's text, first SHAPE_CHARS (160)    its raw bytes: indentation, then the
//                      UTF-16 units; a record's wrapped line     first SHAPE_HASH_BYTES (48) skeleton bytes
//                      (decoded)                                 past its output's frame (shapeWindowOf);
//                                                                a record's from its wrapped line's start
//                                                                (shapeStart; escapes as they are)
//   indentation        dropped (whitespace runs become one " ")  kept (its spaces and tabs, up to 16)
//   numbers            numbers (with their `.`/`,`/`:` parts:    each run of digits becomes "0"
//                      `-1.5`, `12:30:01`) become "0"            (`12:30:01` is "0:0:0")
//   quoted strings     "…" '…' `…` (≤ 200 chars) become "Q"      the same, each kept as its quote
//   paths, hex ids     `a/b/c`, `0x…`, 7+ hex digits become "V"  a word of 7+ hex digits is one token, as
//                      ("0" when they start with a digit)        a digit run is; paths are read as they
//                                                                are, but a leading `token:` before a
//                                                                digit (`src/a.c:12: …`) is one token
//   made as            a string (a Map key; split into words     FNV-1a, no string made; the same bits
//                      for template families)                    from src/prefilter/wasm/keyword-filter.wat
//   used by            the signal collector (candidates of one   the shape counter (rare and repeated lines
//                      shape, COLLAPSE_SHAPE_LINES), a block's   over the whole output) and its countOf,
//                      runs (BLOCK_RUN_LINES), head and tail     which the block rules read as rare or
//                      folds (FOLD_RUN_LINES), template          routine (classifyShape)
//                      families (TEMPLATE_FAMILY_LINES)
//
// Why two: the hash reads every line of an output's first 2 MiB and a sample after that, so it must
// cost a few ns per byte with no allocation and give the same bits in WebAssembly (about 9 ns per
// byte in JavaScript, 4 in WebAssembly); the key reads only lines already chosen and can afford a
// regular expression that sets paths and ids aside anywhere in the line. They are not
// interchangeable: giving the key the hash's rules changes the views of every recall set (npm run
// view-digest), so each keeps the rules its views were tuned with.

/** Characters of a line's text that decide its shape key. */
export const SHAPE_CHARS = 160;
/**
 * The variable parts of a line, in one pass: quoted strings, paths, hex ids and numbers. Linear:
 * every alternative is bounded or a simple run.
 */
const VARIABLE_PARTS =
	/"[^"\n]{0,200}"|'[^'\n]{0,200}'|`[^`\n]{0,200}`|(?:[\w.@~+-]*\/)+[\w.@~+-]*|\b0x[0-9a-f]+\b|\b[0-9a-f]{7,}\b|[+-]?\d+(?:[.,:]\d+)*/gi;

/**
 * The shape key of a line: its first SHAPE_CHARS characters with quoted strings ("Q"), paths and
 * hex ids ("V") and numbers ("0") replaced and whitespace runs made one space, so that lines
 * written by one print statement share one (`request 17 took 5 ms`, `request 18 took 12 ms`).
 * A JSON-lines record that wraps a line (`{"log":"FAIL src/a.test.js\n",…}`, stamp.ts
 * wrappedLineOf) has that line's key: as quoted strings, every record of an output would be one.
 * Lines that differ only in their digits share one, unless a digit stands before an `x` (a `0x`
 * prefix) or is a record's `\u` escape (it decodes to another character): the signal collector's
 * memo relies on it, and takes such lines for one shape.
 */
export function shapeOf(text: string): string {
	return (wrappedLineOf(text) ?? text)
		.slice(0, SHAPE_CHARS)
		.replace(VARIABLE_PARTS, (part) =>
			part[0] === '"' || part[0] === "'" || part[0] === "`" ? "Q" : /^[+-]?\d/.test(part) ? "0" : "V",
		)
		.replace(/\s+/g, " ")
		.trim();
}

/**
 * Bytes of a line's skeleton (after its indentation) that make its shape hash, past the frame every
 * line of its output starts with (shapeWindowOf).
 */
export const SHAPE_HASH_BYTES = 48;
/** Skeleton bytes of a frame (a log's timestamp, a job's tag) the hash reads past, at most. */
export const MAX_FRAME_BYTES = 64;
/** What hashShape returns for a blank line (it has no shape). */
export const SHAPE_HASH_BLANK = -1;
const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

/** Fewest hex digits of a hex id (a commit, a content hash, a container's id), as the shape key reads them. */
const HEX_ID_DIGITS = 7;

function isHexDigit(byte: number): boolean {
	const lower = byte | 0x20;
	return (byte >= 0x30 && byte <= 0x39) || (lower >= 0x61 && lower <= 0x66);
}

function isWordByte(byte: number): boolean {
	const lower = byte | 0x20;
	return (byte >= 0x30 && byte <= 0x39) || (lower >= 0x61 && lower <= 0x7a) || byte === 0x5f;
}

/**
 * Where the hex id that starts at `at` ends, in the line that starts at `from` and ends at `end`: a
 * whole word of HEX_ID_DIGITS or more hex digits (`9b2f8e61`, `f22ae6c9…`, a layer's
 * `a3ed95caeb02`). `at` when there is none.
 */
function hexIdEnd(bytes: Uint8Array, from: number, at: number, end: number): number {
	if (!isHexDigit(bytes[at]) || (at > from && isWordByte(bytes[at - 1]))) return at;
	let run = at + 1;
	while (run < end && isHexDigit(bytes[run])) run++;
	return run - at >= HEX_ID_DIGITS && !(run < end && isWordByte(bytes[run])) ? run : at;
}

/** Skeleton bytes the last hashShape call read (frameSkeletonBytes measures a frame with it). */
let skeletonRead = 0;

/**
 * The shape hash of the line in bytes[from, end) (no newline in it; a final "\r" is dropped):
 * indentation, then up to `window` bytes (SHAPE_HASH_BYTES and its output's frame: shapeWindowOf)
 * with each digit run and each hex id (a word of HEX_ID_DIGITS or more hex digits: a bundle's
 * `Widget12-9b2f8e61.js`, a layer's `a3ed95caeb02: Pull complete`) as one "0", each quoted string as
 * its quote, and a leading `path:` (a token before a colon and a digit) as one token.
 * SHAPE_HASH_BLANK for a blank line. The WebAssembly module's `shapes` gives the same bits.
 */
export function hashShape(bytes: Uint8Array, from: number, end: number, window = SHAPE_HASH_BYTES): number {
	if (end > from && bytes[end - 1] === 0x0d) end--;
	let at = from;
	let indent = 0;
	while (at < end && (bytes[at] === 0x20 || bytes[at] === 0x09)) {
		indent++;
		at++;
	}
	skeletonRead = 0;
	if (at >= end) return SHAPE_HASH_BLANK;
	let hash = Math.imul(FNV_OFFSET ^ Math.min(indent, 16), FNV_PRIME);
	let probe = at;
	while (probe < end && probe - at < 256 && bytes[probe] !== 0x3a && bytes[probe] !== 0x20) probe++;
	if (bytes[probe] === 0x3a && probe > at && probe + 1 < end && bytes[probe + 1] >= 0x30 && bytes[probe + 1] <= 0x39) {
		hash = Math.imul(hash ^ 0x50, FNV_PRIME);
		at = probe;
	}
	let emitted = 0;
	let inDigits = false;
	while (at < end && emitted < window) {
		const idEnd = hexIdEnd(bytes, from, at, end);
		if (idEnd > at) {
			// A hex id is one token, as a digit run is.
			hash = Math.imul(hash ^ 0x30, FNV_PRIME);
			emitted++;
			inDigits = false;
			at = idEnd;
			continue;
		}
		const byte = bytes[at++];
		if (byte >= 0x30 && byte <= 0x39) {
			if (!inDigits) {
				hash = Math.imul(hash ^ 0x30, FNV_PRIME);
				emitted++;
				inDigits = true;
			}
			continue;
		}
		inDigits = false;
		if (byte === 0x22 || byte === 0x27 || byte === 0x60) {
			// A quoted string is one token: skip to its closing quote.
			let close = at;
			while (close < end && close - at < 200 && bytes[close] !== byte) close++;
			if (close < end && bytes[close] === byte) at = close + 1;
		}
		hash = Math.imul(hash ^ byte, FNV_PRIME);
		emitted++;
	}
	skeletonRead = emitted;
	return hash >>> 0;
}

/**
 * Where the shape hash of the line in bytes[from, end) starts: where the line a record wraps starts
 * in it (stamp.ts wrappedLineStart, read on its bytes one character each), `from` when it wraps none.
 * A record is hashed as the line it wraps, as the shape key reads it (shapeOf): every record of a
 * container's log (`{"log":"…\n","stream":"stdout",…}`) or a logger's (`level=info msg="…"`) would
 * otherwise have one shape, its quoted members one token each and the line it wraps one of them.
 */
export function shapeStart(bytes: Uint8Array, from: number, end: number): number {
	if (end > from && bytes[end - 1] === 0x0d) end--;
	if (end - from > MAX_WRAPPING_RECORD_CHARS) return from;
	const text = (
		Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
	).toString("latin1", from, end);
	return from + wrappedLineStart(text);
}

/**
 * Skeleton bytes (as hashShape reads them) of the frame `text` starts with: the timestamp a logger
 * or a CI service prints before it, then a multiplexer's tag naming a job (src/lines/stamp.ts).
 */
export function frameSkeletonBytes(text: string): number {
	const stamp = stampLength(text);
	const tag = lineTagAt(text, stamp);
	return skeletonBytesOf(text.slice(0, stamp + (tag !== "" && isStreamTag(tag) ? tag.length : 0)));
}

/** Skeleton bytes of `text` as hashShape reads them. */
function skeletonBytesOf(text: string): number {
	if (text === "") return 0;
	const bytes = Buffer.from(text, "utf8");
	hashShape(bytes, 0, bytes.length, Number.MAX_SAFE_INTEGER);
	return skeletonRead;
}

/**
 * The skeleton bytes hashShape reads of each line of an output whose first lines are `lines`:
 * SHAPE_HASH_BYTES past the frame most of them start with (their median timestamp or job's tag),
 * and past the frame the output is written in (`lineFrame`, learned from its lines: Ruby's Logger's
 * `I, [… #4123]  INFO -- : `), at most MAX_FRAME_BYTES in all. Such a frame would otherwise take a
 * third or more of what tells one print statement's lines from another's. A line without the frame
 * is read as far. The output's frame counts for every line, whether its first lines carry it or not:
 * it may be learned further on (a CI job's first lines are the runner's, its failing step's carry
 * the frame). A record's frame is the line's it wraps (shapeStart).
 */
export function shapeWindowOf(lines: readonly string[], lineFrame?: LineFrame): number {
	const own = lineFrame === undefined ? 0 : skeletonBytesOf(frameTextOf(lineFrame));
	const frames = lines
		.filter((line) => line.trim() !== "")
		.map((line) => {
			const text = line.slice(wrappedLineStart(line));
			// A line that carries the output's frame (counted once, as `own`) has no job's tag before it.
			const stamp = stampLength(text);
			return lineFrame !== undefined && frameLengthAt(lineFrame, text, stamp) > 0
				? skeletonBytesOf(text.slice(0, stamp))
				: frameSkeletonBytes(text);
		});
	frames.sort((a, b) => a - b);
	const median = frames.length === 0 ? 0 : frames[frames.length >> 1];
	return SHAPE_HASH_BYTES + Math.min(median + own, MAX_FRAME_BYTES);
}

/** Fewest words (after shapeOf) for a line to be compared with others word by word. */
const TEMPLATE_MIN_WORDS = 3;

/**
 * Do two shape keys (shapeOf) differ in one word at most, of TEMPLATE_MIN_WORDS or more: lines of
 * one template (an install's `Collecting requests==…` and `Collecting urllib3==…`, a build's
 * `Compiling serde v…`), as markTemplateFamilies groups them?
 */
export function oneWordApart(a: string, b: string): boolean {
	if (a === b) return true;
	const x = a.split(" ");
	const y = b.split(" ");
	if (x.length !== y.length || x.length < TEMPLATE_MIN_WORDS) return false;
	let differ = 0;
	for (let k = 0; k < x.length && differ < 2; k++) if (x[k] !== y[k]) differ++;
	return differ <= 1;
}

/**
 * Which of `texts` (lines the shape counter found rare) belong to a template's family: at least
 * TEMPLATE_FAMILY_LINES of them have one shape key but for one word, the way Drain groups log lines
 * (`Feature: checkout totals for region fr` … `region nl`, busted's `[----------] Running tests
 * from spec/budget_spec.lua` once per file). Such lines are one print statement run per file or
 * per region, not the odd line in a uniform output; three alike (svn's three `C` lines) are not a
 * family. Cheap: a key stops at SHAPE_CHARS characters, so a line gives a few dozen short keys.
 */
export function markTemplateFamilies(texts: readonly string[]): boolean[] {
	// Each line's keys: its shape key with one word left out, for each word (made once per line).
	const keys = texts.map((text) => {
		const line = shapeOf(text).split(" ");
		return line.length < TEMPLATE_MIN_WORDS
			? []
			: line.map((_, i) => `${line.length}|${i}|${line.slice(0, i).join(" ")}\u0000${line.slice(i + 1).join(" ")}`);
	});
	const counts = new Map<string, number>();
	for (const lineKeys of keys) for (const key of lineKeys) counts.set(key, (counts.get(key) ?? 0) + 1);
	return keys.map((lineKeys) => lineKeys.some((key) => (counts.get(key) ?? 0) >= TEMPLATE_FAMILY_LINES));
}

// ---------------------------------------------------------------------------------------------
// How common a shape is: every threshold, side by side. Each value is the one the views were tuned
// with; a change changes views (npm run view-digest).
//
// Counts of a shape hash over the whole output (the shape counter; sampled past its first 2 MiB):

/**
 * A shape hash seen at most this many times, in an output of few shapes, is rare: each of its lines
 * is shown as an odd line (svn's three `C` lines among 700 `U`).
 */
export const RARE_SHAPE_LINES = 3;
/**
 * A line whose shape hash the output has at most this many times is rare to the block rules: it
 * joins a signal's block or leading context whatever its indentation (a sanitizer's `READ of size
 * 4 …` under its `ERROR`). Tuned apart from RARE_SHAPE_LINES (3); views depend on both.
 */
export const RARE_CONTEXT_SHAPE_LINES = 2;
/** A shape hash seen at least this often is a common one. */
export const COMMON_SHAPE_LINES = 10;
/** An output is "of few shapes" when common shapes make this share of its lines: then a rare line stands out. */
export const COMMON_SHAPE_SHARE = 0.9;
/** Fewest lines hashed for rare lines to mean anything. */
export const MIN_SHAPED_LINES = 200;
/**
 * A line whose shape hash makes up at least this share of the output's lines (and at least
 * ROUTINE_CONTEXT_MIN_LINES of them) is routine: the build's `  CC [M] module_N.o` around an
 * error is not part of its block, however it is indented.
 */
export const ROUTINE_CONTEXT_SHARE = 0.25;
export const ROUTINE_CONTEXT_MIN_LINES = 50;
/**
 * Are a shape's `count` lines, the first at line `firstLine` and the last at `lastLine`, all in a
 * row (no other line between them)?
 */
export function inARow(firstLine: number, lastLine: number, count: number): boolean {
	return lastLine - firstLine + 1 === count;
}

/**
 * Is a shape of `count` lines from `firstLine` to `lastLine` printed in one place more often than a
 * rare shape: its lines in a row, more than RARE_SHAPE_LINES of them? Printed fewer than
 * REPEAT_MIN_LINES times, and one line printed again, it is one odd event (the shape counter ranks
 * it as a line seen once; hunks.ts reads whether its lines are one line).
 */
export function isInOnePlace(firstLine: number, lastLine: number, count: number): boolean {
	return count > RARE_SHAPE_LINES && inARow(firstLine, lastLine, count);
}

/**
 * A shape hash is a repetition worth a line of its own when it comes at least REPEAT_MIN_LINES
 * times in a burst (its lines make at least 1 / REPEAT_MAX_SPREAD of the lines between its first
 * and its last: a retry loop, a lock wait) and is not the output's bulk (at most REPEAT_MAX_SHARE
 * of its lines).
 */
export const REPEAT_MIN_LINES = 12;
export const REPEAT_MAX_SPREAD = 4;
export const REPEAT_MAX_SHARE = 0.5;

/** How common a line's shape hash is in the output, for the block rules. */
export type ShapeKind = "rare" | "routine" | "usual";

/** The ShapeKind of a line whose shape hash the output has `count` times among `shapedLines` (0: not known). */
export function classifyShape(count: number, shapedLines: number): ShapeKind {
	if (count <= 0) return "usual";
	if (count <= RARE_CONTEXT_SHAPE_LINES) return "rare";
	return count >= ROUTINE_CONTEXT_MIN_LINES && count >= ROUTINE_CONTEXT_SHARE * shapedLines ? "routine" : "usual";
}

// Counts of a shape key among lines already chosen:

/** Signal candidates of one shape key, from this many on, are shown once with a count of the others. */
export const COLLAPSE_SHAPE_LINES = 7;
/** Rare lines one word apart (markTemplateFamilies), from this many on, are one template's family, not odd lines. */
export const TEMPLATE_FAMILY_LINES = 5;
/** Consecutive lines of one shape key in a signal's block, from this many on, keep only the first and the last. */
export const BLOCK_RUN_LINES = 3;
/** Consecutive head or tail lines of one shape key, from this many on, fold into the first, a count and the last. */
export const FOLD_RUN_LINES = 6;

// What the view reads of the lines found by shape (rare and repeated), at most:

/** Rare and repeated lines read. */
export const MAX_SHAPE_LINES = 10;
/** Lines of a rare line's block: the odd line's own details (bandit's `Location:` under its `>> Issue:`). */
export const RARE_BLOCK_LINES = 4;
/**
 * Rare lines of the middle looked at to set aside those of a template's family (markTemplateFamilies)
 * before MAX_SHAPE_LINES are taken; each costs a read of RARE_PROBE_BYTES.
 */
export const RARE_CANDIDATE_LINES = 4 * MAX_SHAPE_LINES;
/** Bytes read of a rare line to take its shape key: SHAPE_CHARS characters are at most 480 bytes of UTF-8. */
export const RARE_PROBE_BYTES = 1024;
