// jsonPath over a stored file without building the document: one pass checks the whole text as
// JSON.parse would and follows the path, measuring only the selected value; a second, short pass
// prints that value as JSON.stringify(value, null, 2) would, up to the answer's room.
// Invariants: answers and errors equal JSON.parse + selectJsonPath + a bounded pretty print of the
// same text (a BOM skipped; repeated keys told apart while maxTrackedKeys suffice); memory is one
// read buffer, one byte per open container, the keys remembered and what the answer holds; nothing
// recurses; the deadline is checked between chunks; at most MAX_JSON_PATH_RUNS evaluations run at
// once in the process (others wait, their clocks not started).

import type { ByteSource } from "../io/source.js";
import type { PathSegment } from "./path.js";
import { ChunkReader, DeadlinePassed } from "./chunk-reader.js";
import type { JsonValueSummary } from "./measure.js";
import { PathNavigator } from "./navigator.js";
import { printValue } from "./printer.js";
import { acquireRun } from "./run-queue.js";
import { describeSyntaxError } from "./syntax-error.js";

export type { JsonValueSummary } from "./measure.js";
export { JSON_PATH_RUNS_KEY, MAX_JSON_PATH_RUNS, readJsonPathRuns } from "./run-queue.js";

/** Bytes read at a time (one buffer, reused). */
export const DEFAULT_JSON_CHUNK_BYTES = 1024 * 1024;
/** Keys remembered at once to tell duplicates apart (beyond it, keys count as distinct). */
export const DEFAULT_MAX_TRACKED_KEYS = 500_000;

export type JsonPathResult =
	| { type: "value"; summary: JsonValueSummary; text: string; totalChars: number }
	/** The path does not exist; `message` starts with "jsonPath: " and says what exists there. */
	| { type: "missing"; message: string }
	/** The text is not JSON; `reason` is JSON.parse's, with the line and column when it names a position. */
	| { type: "notJson"; reason: string }
	/** The time ran out after `offset` of `size` bytes. */
	| { type: "stopped"; elapsedMs: number; offset: number; size: number };

export interface JsonPathOptions {
	/** How many characters of the value to print, once its summary is known. */
	roomFor(summary: JsonValueSummary): number;
	/** Wall-clock limit from the moment the evaluation starts running (not while it waits). */
	timeoutMs: number;
	signal?: AbortSignal;
	/** Default DEFAULT_JSON_CHUNK_BYTES. */
	chunkBytes?: number;
	/** Default DEFAULT_MAX_TRACKED_KEYS. */
	maxTrackedKeys?: number;
	/** Default performance.now. */
	now?: () => number;
}

/**
 * Follows `segments` into the JSON text of `source` (a stored text from store.openText: never opened
 * here by path). The caller closes the source.
 */
export async function evaluateJsonPath(
	source: ByteSource,
	segments: readonly PathSegment[],
	options: JsonPathOptions,
): Promise<JsonPathResult> {
	const release = await acquireRun(options.signal);
	try {
		return await evaluateSource(source, segments, options);
	} finally {
		release();
	}
}

async function evaluateSource(
	source: ByteSource,
	segments: readonly PathSegment[],
	options: JsonPathOptions,
): Promise<JsonPathResult> {
	const now = options.now ?? (() => performance.now());
	const reader = new ChunkReader(
		source,
		options.chunkBytes ?? DEFAULT_JSON_CHUNK_BYTES,
		now(),
		options.timeoutMs,
		now,
		options.signal,
	);
	const { size } = source;
	const start = await skipByteOrderMark(reader, size);
	try {
		const navigator = new PathNavigator(segments, options.maxTrackedKeys ?? DEFAULT_MAX_TRACKED_KEYS);
		await reader.feed(navigator.lexer, start, size);
		const error = navigator.lexer.error;
		if (error) return { type: "notJson", reason: await describeSyntaxError(reader, error, start, size) };
		const outcome = navigator.outcome;
		// A complete value always leaves an outcome: the root is on every path.
		if (outcome === null) throw new Error("jsonPath: the document ended without an answer");
		if (outcome.type === "missing") return outcome;
		const room = Math.max(0, options.roomFor(outcome.summary));
		const text = await printValue(reader, outcome, room);
		return { type: "value", summary: outcome.summary, text, totalChars: outcome.totalChars };
	} catch (error) {
		if (error instanceof DeadlinePassed)
			return { type: "stopped", elapsedMs: now() - reader.started, offset: error.offset, size };
		throw error;
	}
}

async function skipByteOrderMark(reader: ChunkReader, size: number): Promise<number> {
	if (size < 3) return 0;
	const head = Buffer.alloc(3);
	const bytesRead = await reader.source.read(head, 0);
	return bytesRead === 3 && head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf ? 3 : 0;
}
