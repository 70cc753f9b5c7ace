// @ts-check
// What the search worker and the main thread share: the request, the messages, the slots of the
// shared progress array, and how a shown line is cut to a width (by the worker to maxLineChars, by
// the query answer again to fit its room). Plain JavaScript checked by tsc (JSDoc types), because
// the worker runs it with no TypeScript loader. Invariant: a cut line's cutBefore + text.length +
// cutAfter is the length of the line it came from, and no cut splits a surrogate pair.

import { isHighSurrogate, isLowSurrogate, keepStart } from "../../lines/text-cut.js";

/** Slots of the shared progress array (a Float64Array over workerData.progress): the request it belongs to, written last on reset. */
export const PROGRESS_REQUEST_ID = 0;
/** The first line not yet fully searched (where the current regex step started). */
export const PROGRESS_RESUME_LINE = 1;
/** Hit lines counted so far. */
export const PROGRESS_TOTAL_HITS = 2;
/** The last line the current regex step covers (the end of its window). */
export const PROGRESS_STEP_LAST_LINE = 3;
/** 1 once every line was searched and every shown line posted (the done message may still be on its way). */
export const PROGRESS_COMPLETE = 4;
/** Why collecting stopped: 0 it did not, COLLECTION_STOP_MAX_RESULTS or COLLECTION_STOP_BUDGET. */
export const PROGRESS_COLLECTION_STOP = 5;
export const PROGRESS_SLOTS = 6;

/** PROGRESS_COLLECTION_STOP when maxResults hit lines were collected. */
export const COLLECTION_STOP_MAX_RESULTS = 1;
/** PROGRESS_COLLECTION_STOP when the collected lines passed budgetChars. */
export const COLLECTION_STOP_BUDGET = 2;

/**
 * Makes the slots ready for request `id`. The id last: the main thread reads the other slots as
 * this request's once it sees the id.
 * @param {Float64Array} progress
 * @param {number} id
 */
export function resetProgress(progress, id) {
	progress[PROGRESS_RESUME_LINE] = 1;
	progress[PROGRESS_TOTAL_HITS] = 0;
	progress[PROGRESS_STEP_LAST_LINE] = 1;
	progress[PROGRESS_COMPLETE] = 0;
	progress[PROGRESS_COLLECTION_STOP] = 0;
	progress[PROGRESS_REQUEST_ID] = id;
}

/**
 * What the progress slots say about a request the worker has begun.
 * @typedef {object} SearchProgress
 * @property {number} resumeLine the first line not fully searched
 * @property {number} totalHits hit lines counted so far
 * @property {number} stepLastLine the last line the running regex step covers
 * @property {boolean} complete every line was searched and every shown line posted
 * @property {"maxResults" | "budget" | null} collectionStop why collecting stopped, if it did
 */

/**
 * The slots read as request `id`'s, or null when the worker has not begun it (they are another request's).
 * @param {Float64Array} progress
 * @param {number} id
 * @returns {SearchProgress | null}
 */
export function readProgress(progress, id) {
	if (progress[PROGRESS_REQUEST_ID] !== id) return null;
	const stop = progress[PROGRESS_COLLECTION_STOP];
	return {
		resumeLine: progress[PROGRESS_RESUME_LINE],
		totalHits: progress[PROGRESS_TOTAL_HITS],
		stepLastLine: progress[PROGRESS_STEP_LAST_LINE],
		complete: progress[PROGRESS_COMPLETE] === 1,
		collectionStop:
			stop === COLLECTION_STOP_BUDGET ? "budget" : stop === COLLECTION_STOP_MAX_RESULTS ? "maxResults" : null,
	};
}

/**
 * One request, posted on the worker's port.
 * @typedef {object} SearchWorkerRequest
 * @property {"search"} type
 * @property {number} id
 * @property {string} [path] The file's path (the worker opens and closes it), unless `fd` is given.
 * @property {number} [fd] A descriptor the main thread opened (store.openText) and keeps open for the search: read
 *   with pread, never closed here.
 * @property {string} pattern
 * @property {number} contextLines
 * @property {number} maxResults
 * @property {number} maxLineChars
 * @property {number} budgetChars Stop collecting lines once their text passes this many characters (keep counting).
 * @property {number} timeoutMs Longest the search may run, in ms, counted from when the worker begins it (time
 *   spent waiting for the worker is not counted); past it the worker stops by itself between regex steps.
 * @property {number} chunkBytes
 * @property {number} giantLineBytes
 * @property {boolean} latin1 The pattern matches alike in UTF-8 and its Latin-1 view (isByteSafePattern): chunks
 *   are then searched as Latin-1 (no decoding; one-byte strings) and only shown lines are decoded.
 * @property {boolean} [crRecords] The file is CR-separated records (no LF in it): each CR is read as an LF.
 * @property {number} [virtualMsPerLine] Tests only: the deadline follows a virtual clock on which each searched line takes this many ms.
 * @property {number} [holdBeforeDoneMs] Tests only: the worker pauses this long after searching the last line, before it answers.
 */

/**
 * A line to show, as the worker sends it: its raw stored text (or a window of it) and how much of it was left out.
 * @typedef {object} SearchLine
 * @property {number} lineNumber
 * @property {string} text
 * @property {boolean} hit
 * @property {number} cutBefore Characters of the line left out before `text`.
 * @property {number} cutAfter Characters of the line left out after `text`.
 * @property {number} matchStart Position of the match in `text` (hit lines), else -1.
 * @property {number} matchLength
 */

/**
 * Posted first, when the worker begins the request: the search's clock starts at `startedAt` (Date.now()).
 * @typedef {{ type: "started"; id: number; startedAt: number }} SearchStartedMessage
 */

/**
 * Shown lines, posted as soon as they are final, in line order.
 * @typedef {{ type: "lines"; id: number; lines: SearchLine[] }} SearchLinesMessage
 */

/**
 * The answer, posted last.
 * @typedef {object} SearchDoneMessage
 * @property {"done"} type
 * @property {number} id
 * @property {number} totalHits
 * @property {number} collectedHits
 * @property {"maxResults" | "budget" | null} collectionStop Why collecting stopped before the end, or null.
 * @property {number} stoppedAtLine The first line not searched when the deadline passed, or 0 when the whole file was searched.
 * @property {number} linesSearched Lines searched in all (the file's line count when the search completed).
 * @property {string} [error]
 */

/** @typedef {SearchStartedMessage | SearchLinesMessage | SearchDoneMessage} SearchWorkerMessage */

/**
 * The line cut to at most maxChars: a hit as a window centred on its match (the match first when it
 * is longer than the window), any other line from its start. A line that fits is returned as it is.
 * @param {SearchLine} line
 * @param {number} maxChars
 * @returns {SearchLine}
 */
export function fitSearchLine(line, maxChars) {
	const text = line.text;
	if (text.length <= maxChars) return line;
	if (!line.hit || line.matchStart < 0) {
		const kept = keepStart(text, maxChars);
		return {
			lineNumber: line.lineNumber,
			text: kept,
			hit: line.hit,
			cutBefore: line.cutBefore,
			cutAfter: line.cutAfter + text.length - kept.length,
			matchStart: line.matchStart,
			matchLength: line.matchLength,
		};
	}
	const { matchStart, matchLength } = line;
	let start = matchLength >= maxChars ? matchStart : matchStart - Math.floor((maxChars - matchLength) / 2);
	start = Math.max(0, Math.min(start, text.length - maxChars));
	let end = start + maxChars;
	if (start > 0 && isLowSurrogate(text.charCodeAt(start))) start += 1;
	if (end < text.length && isHighSurrogate(text.charCodeAt(end - 1))) end -= 1;
	return {
		lineNumber: line.lineNumber,
		text: text.slice(start, end),
		hit: true,
		cutBefore: line.cutBefore + start,
		cutAfter: line.cutAfter + text.length - end,
		matchStart: matchStart - start,
		matchLength: Math.max(0, Math.min(matchLength, end - matchStart)),
	};
}
