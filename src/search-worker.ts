// The search engine's worker thread, as plain JavaScript source run with
// `new Worker(SEARCH_WORKER_SOURCE, { eval: true })`. It is a string, not a module, because Pi loads
// extensions through jiti and tsx is not guaranteed at run time: nothing here may need a TypeScript
// loader, so the source is CommonJS with `require` and no TypeScript-only syntax (it is String.raw:
// backslashes stay as written; it must not contain a backtick or a dollar-brace).
// Invariant: the worker streams the file in chunks of whole lines (memory bounded by chunkBytes,
// giantLineBytes and the collected lines), reports every batch of shown lines as soon as it is
// final, and keeps `progress` (a SharedArrayBuffer) current, so the main thread can terminate it in
// the middle of a runaway regex step and still answer with what was found. A search's clock starts
// when the worker begins it, and a search that has searched every line is complete.

/** Slots of the shared progress array (Float64Array over workerData.progress). */
export const PROGRESS_REQUEST_ID = 0;
/** The first line not yet fully searched (where the current regex step started). */
export const PROGRESS_RESUME_LINE = 1;
/** Hit lines counted so far. */
export const PROGRESS_TOTAL_HITS = 2;
/** The last line the current regex step covers (the end of its window). */
export const PROGRESS_STEP_LAST_LINE = 3;
/** 1 once every line was searched and every shown line posted (the done message may still be on its way). */
export const PROGRESS_COMPLETE = 4;
/** Why collecting stopped: 0 it did not, 1 maxResults, 2 the character budget. */
export const PROGRESS_COLLECTION_STOP = 5;
export const PROGRESS_SLOTS = 6;

/** One request, posted on the worker's port. */
export interface SearchWorkerRequest {
	type: "search";
	id: number;
	/** The file's path (the worker opens and closes it), unless `fd` is given. */
	path?: string;
	/** A descriptor the main thread opened and keeps open for the search: read with pread, never closed here. */
	fd?: number;
	pattern: string;
	contextLines: number;
	maxResults: number;
	maxLineChars: number;
	/** Stop collecting lines once their text passes this many characters (keep counting). */
	budgetChars: number;
	/**
	 * Longest the search may run, in ms, counted from when the worker begins it (time spent waiting
	 * for the worker is not counted); past it the worker stops by itself between regex steps.
	 */
	timeoutMs: number;
	chunkBytes: number;
	giantLineBytes: number;
	/**
	 * The pattern matches alike in UTF-8 and its Latin-1 view (isByteSafePattern): chunks are then
	 * searched as Latin-1 (no decoding; one-byte strings) and only shown lines are decoded.
	 */
	latin1: boolean;
	/** Tests only: the deadline follows a virtual clock on which each searched line takes this many ms. */
	virtualMsPerLine?: number;
	/** Tests only: the worker pauses this long after searching the last line, before it answers. */
	holdBeforeDoneMs?: number;
}

/** A line to show, as the worker sends it: its raw stored text (or a window of it) and how much of it was left out. */
export interface SearchLine {
	lineNumber: number;
	text: string;
	hit: boolean;
	/** Characters of the line left out before / after `text`. */
	cutBefore: number;
	cutAfter: number;
	/** Position of the match in `text` (hit lines), else -1. */
	matchStart: number;
	matchLength: number;
}

export type SearchWorkerMessage =
	/** Posted first, when the worker begins the request: the search's clock starts at `startedAt` (Date.now()). */
	| { type: "started"; id: number; startedAt: number }
	| { type: "lines"; id: number; lines: SearchLine[] }
	| {
			type: "done";
			id: number;
			totalHits: number;
			collectedHits: number;
			/** Why collecting stopped before the end ("maxResults" or "budget"), or null. */
			collectionStop: "maxResults" | "budget" | null;
			/** The first line not searched when the deadline passed, or 0 when the whole file was searched. */
			stoppedAtLine: number;
			/** Lines searched in all (the file's line count when the search completed). */
			linesSearched: number;
			error?: string;
	  };

export const SEARCH_WORKER_SOURCE = String.raw`"use strict";
const { workerData } = require("node:worker_threads");
const fs = require("node:fs");
const { isAscii } = require("node:buffer");
const { StringDecoder } = require("node:string_decoder");

const port = workerData.port;
// Slots: 0 request id, 1 first line not fully searched, 2 hit lines counted, 3 last line of the
// running regex step, 4 every line searched, 5 why collecting stopped (PROGRESS_* in search-worker.ts).
const progress = new Float64Array(workerData.progress);
// Date.now() is read once per this many regex steps (it costs more than a short step).
const DEADLINE_CHECK_STEPS = 256;
// Characters of a giant line carried into its next segment, so a match across the cut is found.
const GIANT_OVERLAP_CHARS = 4096;
// Characters of text searched per regex step (whole lines): bounds how far from the line where a
// runaway step started the trouble can be.
const WINDOW_CHARS = 16384;
// Characters counted per shown line for its number and separator.
const LINE_OVERHEAD_CHARS = 12;

port.on("message", (request) => {
	// The search's clock starts here, when it begins to run, not when it was asked for.
	const startedAt = Date.now();
	resetProgress(request.id);
	port.postMessage({ type: "started", id: request.id, startedAt: startedAt });
	let reply;
	try {
		reply = runSearch(request, startedAt);
	} catch (error) {
		reply = { type: "done", id: request.id, totalHits: 0, collectedHits: 0, collectionStop: null, stoppedAtLine: 0, linesSearched: 0,
			error: String((error && error.message) || error) };
	}
	port.postMessage(reply);
});

// The request id last: the main thread reads the other slots as this request's once it sees the id.
function resetProgress(id) {
	progress[1] = 1;
	progress[2] = 0;
	progress[3] = 1;
	progress[4] = 0;
	progress[5] = 0;
	progress[0] = id;
}

// A pattern without escapes and with "[^" read as "[", to look for anchors and lookarounds.
function barePattern(pattern) {
	return pattern.replace(/\\./g, "").replace(/\[\^/g, "[");
}

// Anchors: in a chunk they also match at a \r inside a line, so such hits are confirmed against
// the line alone. Over-approximates; that only costs time.
function hasAnchors(pattern) {
	return /[\^$]/.test(barePattern(pattern));
}

// Lookarounds can see past a line's end in a chunk (and miss what the line alone would match), so
// such patterns run line by line: exact, and slower.
function hasLookaround(pattern) {
	return /\(\?<?[=!]/.test(barePattern(pattern));
}

function isHighSurrogate(code) {
	return code >= 0xd800 && code <= 0xdbff;
}

function isLowSurrogate(code) {
	return code >= 0xdc00 && code <= 0xdfff;
}

function runSearch(request, startedAt) {
	const id = request.id;
	const contextLines = request.contextLines;
	const maxResults = request.maxResults;
	const maxLineChars = request.maxLineChars;
	const budgetChars = request.budgetChars;
	const virtualMsPerLine = request.virtualMsPerLine > 0 ? request.virtualMsPerLine : 0;
	const deadline = (virtualMsPerLine > 0 ? 0 : startedAt) + request.timeoutMs;
	const chunkBytes = request.chunkBytes;
	const giantLineBytes = request.giantLineBytes;
	const chunkRegex = new RegExp(request.pattern, "gim");
	const lineRegex = new RegExp(request.pattern, "i");
	const needsConfirm = hasAnchors(request.pattern);
	const lineByLine = hasLookaround(request.pattern);

	let totalHits = 0;
	let collectedHits = 0;
	let collecting = true;
	let collectionStop = null;
	let usedChars = 0;
	let lastEmitted = 0;
	let owedUntil = 0;
	let afterPos = 0;
	let prevTail = [];
	let batch = [];
	let steps = 0;
	let stoppedAtLine = 0;

	// firstOpenLine: the first line not yet fully searched (on the virtual clock of tests, the lines
	// before it are the time spent).
	function deadlinePassed(firstOpenLine) {
		const now = virtualMsPerLine > 0 ? (firstOpenLine - 1) * virtualMsPerLine : Date.now();
		return now >= deadline;
	}

	function clipHead(raw) {
		if (raw.length <= maxLineChars) return raw;
		let end = maxLineChars;
		if (isHighSurrogate(raw.charCodeAt(end - 1))) end -= 1;
		return raw.slice(0, end);
	}

	// Lines cut from a Latin-1 view are decoded as UTF-8 only when they are shown.
	function decodeShown(raw) {
		return request.latin1 ? Buffer.from(raw, "latin1").toString("utf8") : raw;
	}

	function contextRecord(n, viewText) {
		return decodedContextRecord(n, decodeShown(viewText));
	}

	// A context line whose text is already decoded (giant lines go through a UTF-8 decoder).
	function decodedContextRecord(n, raw) {
		const text = clipHead(raw);
		return { lineNumber: n, text: text, hit: false, cutBefore: 0, cutAfter: raw.length - text.length, matchStart: -1, matchLength: 0 };
	}

	// A hit line, shown whole when it fits, else as a window of maxLineChars centred on the match.
	function hitRecord(n, raw, matchStart, matchLength, charsBefore, charsAfter) {
		let start = 0;
		let end = raw.length;
		if (raw.length > maxLineChars) {
			if (matchLength >= maxLineChars) start = matchStart;
			else start = matchStart - Math.floor((maxLineChars - matchLength) / 2);
			start = Math.max(0, Math.min(start, raw.length - maxLineChars));
			end = start + maxLineChars;
			if (start > 0 && isLowSurrogate(raw.charCodeAt(start))) start += 1;
			if (end < raw.length && isHighSurrogate(raw.charCodeAt(end - 1))) end -= 1;
		}
		return { lineNumber: n, text: raw.slice(start, end), hit: true, cutBefore: charsBefore + start, cutAfter: charsAfter + raw.length - end,
			matchStart: matchStart - start, matchLength: Math.max(0, Math.min(matchLength, end - matchStart)) };
	}

	function emit(record) {
		batch.push(record);
		usedChars += record.text.length + LINE_OVERHEAD_CHARS;
		lastEmitted = record.lineNumber;
	}

	function postBatch() {
		if (batch.length === 0) return;
		port.postMessage({ type: "lines", id: id, lines: batch });
		batch = [];
	}

	function contentEndOf(text, begin, end) {
		return end > begin && text.charCodeAt(end - 1) === 13 ? end - 1 : end;
	}

	// Owed lines after the last collected hit, up to line upTo, from the current text.
	function flushAfter(text, upTo) {
		const last = Math.min(owedUntil, upTo);
		while (lastEmitted < last && afterPos < text.length) {
			let end = text.indexOf("\n", afterPos);
			if (end === -1) end = text.length;
			emit(contextRecord(lastEmitted + 1, text.slice(afterPos, contentEndOf(text, afterPos, end))));
			afterPos = end + 1;
		}
	}

	// Context before hit line n: from the current text (lines from textBase on), then from prevTail.
	function emitBefore(text, textBase, lineStart, n) {
		const first = Math.max(lastEmitted + 1, n - contextLines);
		if (first > n - 1) return;
		const records = [];
		let start = lineStart;
		let k = n - 1;
		for (; k >= first && k >= textBase; k--) {
			const end = start - 1;
			const begin = end <= 0 ? 0 : text.lastIndexOf("\n", end - 1) + 1;
			records.push(contextRecord(k, text.slice(begin, contentEndOf(text, begin, end))));
			start = begin;
		}
		for (; k >= first; k--) {
			for (const record of prevTail) if (record.lineNumber === k) records.push(record);
		}
		for (let index = records.length - 1; index >= 0; index--) emit(records[index]);
	}

	function stopCollecting(reason) {
		collecting = false;
		collectionStop = reason;
		progress[5] = reason === "maxResults" ? 1 : 2;
	}

	// A confirmed hit on line n (text[lineStart, contentEnd) is its content).
	function onHit(text, textBase, lineStart, contentEnd, lineEnd, n, matchStart, matchLength) {
		totalHits += 1;
		progress[2] = totalHits;
		if (!collecting) {
			// The window of the last shown hit ends before a hit that is not shown.
			if (owedUntil >= n) {
				flushAfter(text, n - 1);
				owedUntil = lastEmitted;
			}
			return;
		}
		flushAfter(text, n - 1);
		emitBefore(text, textBase, lineStart, n);
		if (request.latin1) {
			// Offsets in the Latin-1 view are bytes: find the match again in the decoded line.
			const line = decodeShown(text.slice(lineStart, contentEnd));
			const own = lineRegex.exec(line);
			emit(hitRecord(n, line, own === null ? 0 : own.index, own === null ? 0 : own[0].length, 0, 0));
		} else {
			emit(hitRecord(n, text.slice(lineStart, contentEnd), matchStart, matchLength, 0, 0));
		}
		collectedHits += 1;
		owedUntil = n + contextLines;
		afterPos = lineEnd + 1;
		postBatch();
		if (collectedHits >= maxResults) stopCollecting("maxResults");
		else if (usedChars >= budgetChars) stopCollecting("budget");
	}

	// Regex passes over a text of whole lines whose first line is textBase. Returns its line count,
	// or -1 when the deadline passed (stoppedAtLine is then set).
	function scanText(text, textBase) {
		afterPos = 0;
		const count = lineByLine ? scanLineByLine(text, textBase) : scanWindows(text, textBase);
		if (count < 0) return -1;
		flushAfter(text, Infinity);
		postBatch();
		rememberTail(text, textBase + count - 1);
		return count;
	}

	// Each line on its own (patterns with lookarounds).
	function scanLineByLine(text, textBase) {
		let pos = 0;
		let line = textBase;
		for (; pos < text.length; line++) {
			steps += 1;
			if (steps % DEADLINE_CHECK_STEPS === 0 && deadlinePassed(line)) {
				stoppedAtLine = line;
				return -1;
			}
			progress[1] = line;
			progress[3] = line;
			let lineEnd = text.indexOf("\n", pos);
			if (lineEnd === -1) lineEnd = text.length;
			const contentEnd = contentEndOf(text, pos, lineEnd);
			const own = lineRegex.exec(text.slice(pos, contentEnd));
			if (own !== null) onHit(text, textBase, pos, contentEnd, lineEnd, line, own.index, own[0].length);
			pos = lineEnd + 1;
		}
		return line - textBase;
	}

	// One regex pass per window of whole lines (about WINDOW_CHARS): a match index is mapped to its
	// line by counting newlines, each hit is confirmed on its own line when needed, and the search
	// resumes at the next line. A step that never ends is then known to lie in one small window.
	function scanWindows(text, textBase) {
		let windowStart = 0;
		let windowLine = textBase;
		while (windowStart < text.length) {
			if (deadlinePassed(windowLine)) {
				stoppedAtLine = windowLine;
				return -1;
			}
			let windowEnd = text.indexOf("\n", windowStart + WINDOW_CHARS);
			windowEnd = windowEnd === -1 ? text.length : windowEnd + 1;
			let windowLines = 0;
			for (let at = text.indexOf("\n", windowStart); at !== -1 && at < windowEnd; at = text.indexOf("\n", at + 1)) windowLines += 1;
			if (text.charCodeAt(windowEnd - 1) !== 10) windowLines += 1;
			progress[3] = windowLine + windowLines - 1;
			const part = windowStart === 0 && windowEnd === text.length ? text : text.slice(windowStart, windowEnd);
			let pos = windowStart;
			let line = windowLine;
			chunkRegex.lastIndex = 0;
			for (;;) {
				steps += 1;
				if (steps % DEADLINE_CHECK_STEPS === 0 && deadlinePassed(line)) {
					stoppedAtLine = line;
					return -1;
				}
				progress[1] = line;
				const match = chunkRegex.exec(part);
				if (match === null) break;
				const index = windowStart + match.index;
				if (index >= windowEnd) break;
				let newline = text.indexOf("\n", pos);
				while (newline !== -1 && newline < index) {
					pos = newline + 1;
					line += 1;
					newline = text.indexOf("\n", pos);
				}
				const lineEnd = newline === -1 ? text.length : newline;
				const contentEnd = contentEndOf(text, pos, lineEnd);
				let matchStart = index - pos;
				let matchLength = match[0].length;
				let confirmed = true;
				if (needsConfirm || index + matchLength > contentEnd) {
					const own = lineRegex.exec(text.slice(pos, contentEnd));
					if (own === null) confirmed = false;
					else {
						matchStart = own.index;
						matchLength = own[0].length;
					}
				}
				if (confirmed) onHit(text, textBase, pos, contentEnd, lineEnd, line, matchStart, matchLength);
				if (lineEnd + 1 >= windowEnd) break;
				pos = lineEnd + 1;
				line += 1;
				chunkRegex.lastIndex = pos - windowStart;
			}
			windowStart = windowEnd;
			windowLine += windowLines;
		}
		return windowLine - textBase;
	}

	// The last contextLines lines of a text, for the context of a hit at the start of the next one.
	function rememberTail(text, lastLine) {
		if (contextLines === 0) return;
		const records = [];
		let end = text.length;
		if (end > 0 && text.charCodeAt(end - 1) === 10) end -= 1;
		for (let k = lastLine; records.length < contextLines && end >= 0; k--) {
			const begin = end <= 0 ? 0 : text.lastIndexOf("\n", end - 1) + 1;
			records.push(contextRecord(k, text.slice(begin, contentEndOf(text, begin, end))));
			if (begin === 0) break;
			end = begin - 1;
		}
		records.reverse();
		prevTail = prevTail.concat(records).slice(-contextLines);
	}

	const fd = request.fd ?? fs.openSync(request.path, "r");
	let buffer = Buffer.allocUnsafe(chunkBytes * 2);
	let filePos = 0;

	function readInto(offset) {
		const count = fs.readSync(fd, buffer, offset, chunkBytes, filePos);
		filePos += count;
		return count;
	}

	// A line longer than giantLineBytes, searched in segments of chunkBytes (each carrying the last
	// GIANT_OVERLAP_CHARS of the one before). buffer[0, length) holds its first bytes, no newline.
	// Returns the bytes after its newline, moved to the front of buffer, or -1 at the deadline.
	function scanGiantLine(n, length) {
		const decoder = new StringDecoder("utf8");
		let overlap = "";
		let consumed = 0;
		let head = null;
		let hit = null;
		for (;;) {
			// An empty read only ends the line (every byte of it was searched): no reason to stop there.
			if (length > 0 && deadlinePassed(n)) {
				stoppedAtLine = n;
				return -1;
			}
			progress[1] = n;
			progress[3] = n;
			const newline = buffer.subarray(0, length).indexOf(10);
			const final = newline !== -1 || length === 0;
			let piece = decoder.write(buffer.subarray(0, newline === -1 ? length : newline));
			if (final) piece += decoder.end();
			if (newline !== -1 && piece.charCodeAt(piece.length - 1) === 13) piece = piece.slice(0, -1);
			if (head === null) head = piece;
			const text = overlap + piece;
			if (hit === null) {
				chunkRegex.lastIndex = overlap.length > 0 ? 1 : 0;
				const match = chunkRegex.exec(text);
				const atCut = match !== null && !final && match.index + match[0].length >= text.length;
				if (match !== null && !(needsConfirm && atCut)) {
					const before = consumed - overlap.length;
					hit = hitRecord(n, text, match.index, match[0].length, before, 0);
				}
			} else {
				hit.cutAfter += piece.length;
			}
			consumed += piece.length;
			if (hit === null) {
				let cut = Math.max(0, text.length - GIANT_OVERLAP_CHARS);
				if (cut > 0 && isLowSurrogate(text.charCodeAt(cut))) cut += 1;
				overlap = text.slice(cut);
			}
			if (final) {
				const context = decodedContextRecord(n, head);
				context.cutAfter = consumed - context.text.length;
				if (hit !== null) {
					totalHits += 1;
					progress[2] = totalHits;
					if (collecting) {
						emitBefore("", n, 0, n);
						emit(hit);
						collectedHits += 1;
						owedUntil = n + contextLines;
						postBatch();
						if (collectedHits >= maxResults) stopCollecting("maxResults");
						else if (usedChars >= budgetChars) stopCollecting("budget");
					} else if (owedUntil >= n) {
						owedUntil = lastEmitted;
					}
				} else if (owedUntil >= n && lastEmitted === n - 1) {
					emit(context);
					postBatch();
				}
				if (contextLines > 0) prevTail = prevTail.concat([context]).slice(-contextLines);
				if (newline === -1) return 0;
				buffer.copy(buffer, 0, newline + 1, length);
				return length - newline - 1;
			}
			length = readInto(0);
		}
	}

	let base = 1;
	try {
		let carry = 0;
		for (;;) {
			progress[1] = base;
			progress[3] = base;
			if (buffer.length < carry + chunkBytes) {
				const grown = Buffer.allocUnsafe(Math.max(buffer.length * 2, carry + chunkBytes));
				buffer.copy(grown, 0, 0, carry);
				buffer = grown;
			}
			const count = readInto(carry);
			const total = carry + count;
			if (total === 0) break;
			// Checked once there is something left to search: a search that has searched every line is
			// complete, even when the deadline passed on its last line.
			if (deadlinePassed(base)) {
				stoppedAtLine = base;
				break;
			}
			const end = count === 0 ? total : buffer.lastIndexOf(10, total - 1) + 1;
			if (end === 0) {
				if (total < giantLineBytes) {
					carry = total;
					continue;
				}
				const rest = scanGiantLine(base, total);
				if (rest < 0) break;
				base += 1;
				carry = rest;
				continue;
			}
			const bytes = buffer.subarray(0, end);
			const text = request.latin1 || isAscii(bytes) ? buffer.toString("latin1", 0, end) : buffer.toString("utf8", 0, end);
			const lines = scanText(text, base);
			if (lines < 0) break;
			base += lines;
			buffer.copy(buffer, 0, end, total);
			carry = total - end;
			if (count === 0 && carry === 0) break;
		}
	} finally {
		if (request.fd === undefined) fs.closeSync(fd);
	}
	postBatch();
	if (stoppedAtLine === 0) {
		// After the last batch was posted: a main thread that sees this also receives every line.
		progress[1] = base;
		progress[4] = 1;
		if (request.holdBeforeDoneMs > 0) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, request.holdBeforeDoneMs);
	}
	return { type: "done", id: id, totalHits: totalHits, collectedHits: collectedHits, collectionStop: collectionStop,
		stoppedAtLine: stoppedAtLine, linesSearched: stoppedAtLine > 0 ? stoppedAtLine - 1 : base - 1 };
}
`;
