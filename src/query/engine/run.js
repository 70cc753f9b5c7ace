// @ts-check
// One search, as the worker runs it: the byte source framed into blocks of whole lines, each block
// searched by the regex pass (giant lines in segments), the shown lines collected and posted. No
// worker API here, so the whole search also runs in the main thread of a test. Invariant: a search
// stops only between regex steps, once its deadline passed, and a search that has searched every
// line is complete (PROGRESS_COMPLETE is set after its last lines were posted).

import { PROGRESS_COMPLETE, PROGRESS_RESUME_LINE, PROGRESS_STEP_LAST_LINE } from "./protocol.js";
import { HitCollector } from "./collect.js";
import { ChunkFramer } from "./frame.js";
import { scanGiantLine } from "./giant.js";
import { compileSearchRegexes, SearchDeadline, TextScanner } from "./scan.js";

/** @import { SearchDoneMessage, SearchLine, SearchWorkerRequest } from "./protocol.js" */
/** @import { ReadBytes } from "./frame.js" */

/**
 * The bytes to search: read at a position, closed once the search is over.
 * @typedef {object} ByteSource
 * @property {ReadBytes} read
 * @property {() => void} close
 */

/**
 * Runs one search over the source `openSource` opens (after the pattern compiled; closed before
 * it returns) and answers with its done message. Throws on a bad pattern or a failed open or read.
 * @param {SearchWorkerRequest} request
 * @param {number} startedAt Date.now() when the search began: its clock starts there
 * @param {() => ByteSource} openSource
 * @param {Float64Array} progress the shared progress slots, reset for this request
 * @param {(lines: SearchLine[]) => void} postLines
 * @returns {SearchDoneMessage}
 */
export function runSearch(request, startedAt, openSource, progress, postLines) {
	const pattern = compileSearchRegexes(request.pattern);
	const collector = new HitCollector(request, pattern.lineRegex, progress, postLines);
	const parts = {
		pattern,
		collector,
		deadline: new SearchDeadline(startedAt, request.timeoutMs, request.virtualMsPerLine),
		progress,
	};
	const scanner = new TextScanner(parts);
	const source = openSource();
	let base = 1;
	let stoppedAtLine = 0;
	try {
		const framer = new ChunkFramer(source.read, request.chunkBytes, request.giantLineBytes);
		for (;;) {
			progress[PROGRESS_RESUME_LINE] = base;
			progress[PROGRESS_STEP_LAST_LINE] = base;
			const kind = framer.next();
			if (kind === "end") break;
			// Checked once there is something left to search: a search that has searched every line is
			// complete, even when the deadline passed on its last line.
			if (parts.deadline.passed(base)) {
				stoppedAtLine = base;
				break;
			}
			if (kind === "partial") continue;
			if (kind === "giant") {
				if (!scanGiantLine(base, framer.held, framer, parts)) {
					stoppedAtLine = base;
					break;
				}
				base += 1;
				continue;
			}
			const text = framer.decodeLines(request.latin1);
			const lines = scanner.scanText(text, base, framer.decodedAsLatin1 ? framer.buffer : undefined);
			if (lines < 0) {
				stoppedAtLine = scanner.stoppedAtLine;
				break;
			}
			base += lines;
			if (!framer.dropLines()) break;
		}
	} finally {
		source.close();
	}
	collector.postBatch();
	if (stoppedAtLine === 0) {
		// After the last batch was posted: a main thread that sees this also receives every line.
		progress[PROGRESS_RESUME_LINE] = base;
		progress[PROGRESS_COMPLETE] = 1;
		const holdMs = request.holdBeforeDoneMs ?? 0;
		if (holdMs > 0) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, holdMs);
	}
	return {
		type: "done",
		id: request.id,
		totalHits: collector.totalHits,
		collectedHits: collector.collectedHits,
		collectionStop: collector.collectionStop,
		stoppedAtLine,
		linesSearched: stoppedAtLine > 0 ? stoppedAtLine - 1 : base - 1,
	};
}
