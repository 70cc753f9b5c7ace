// @ts-check
// The search worker's collection of shown lines: each hit with up to contextLines lines before and
// after it, in line order, never a line twice, until maxResults hits or budgetChars characters are
// collected (hits are still counted after that). Invariant: a batch is posted as soon as its lines
// are final, the progress slots of the hit count and the collection stop are current, and a
// text's lines are handed over in order (beginText, hits, endText), giant lines between texts.

import {
	COLLECTION_STOP_BUDGET,
	COLLECTION_STOP_MAX_RESULTS,
	fitSearchLine,
	PROGRESS_COLLECTION_STOP,
	PROGRESS_TOTAL_HITS,
} from "./protocol.js";

/** @import { SearchLine } from "./protocol.js" */

// Characters counted per shown line for its number and separator.
const LINE_OVERHEAD_CHARS = 12;

/**
 * @typedef {object} CollectOptions
 * @property {number} contextLines
 * @property {number} maxResults
 * @property {number} maxLineChars
 * @property {number} budgetChars
 * @property {boolean} latin1 Texts are Latin-1 views of UTF-8 bytes: shown lines are decoded, and a hit's match found again in the decoded line.
 */

/**
 * The end of a line's content: before its \r, if it has one.
 * @param {string} text
 * @param {number} begin
 * @param {number} end
 */
export function findContentEnd(text, begin, end) {
	return end > begin && text.charCodeAt(end - 1) === 13 ? end - 1 : end;
}

export class HitCollector {
	/**
	 * @param {CollectOptions} options
	 * @param {RegExp} lineRegex the pattern without flag g, to find a match again in a decoded line
	 * @param {Float64Array} progress the shared progress slots
	 * @param {(lines: SearchLine[]) => void} postLines
	 */
	constructor(options, lineRegex, progress, postLines) {
		this.contextLines = options.contextLines;
		this.maxResults = options.maxResults;
		this.maxLineChars = options.maxLineChars;
		this.budgetChars = options.budgetChars;
		this.latin1 = options.latin1;
		this.lineRegex = lineRegex;
		this.progress = progress;
		this.postLines = postLines;
		this.totalHits = 0;
		this.collectedHits = 0;
		this.collecting = true;
		/** @type {"maxResults" | "budget" | null} */
		this.collectionStop = null;
		this.usedChars = 0;
		/** The last line shown. */
		this.lastEmitted = 0;
		/** Context is owed after the last collected hit up to this line. */
		this.owedUntil = 0;
		/** Where the next owed line starts in the current text. */
		this.afterPos = 0;
		/** The last contextLines lines before the current text, as shown. @type {SearchLine[]} */
		this.prevTail = [];
		/** @type {SearchLine[]} */
		this.batch = [];
	}

	/**
	 * A context line of a text: decoded when the text is a Latin-1 view.
	 * @param {number} n
	 * @param {string} viewText
	 */
	createContextLine(n, viewText) {
		return this.createDecodedContextLine(n, this.latin1 ? Buffer.from(viewText, "latin1").toString("utf8") : viewText);
	}

	/**
	 * A context line whose text is already decoded (giant lines go through a UTF-8 decoder).
	 * @param {number} n
	 * @param {string} raw
	 * @returns {SearchLine}
	 */
	createDecodedContextLine(n, raw) {
		return fitSearchLine(
			{ lineNumber: n, text: raw, hit: false, cutBefore: 0, cutAfter: 0, matchStart: -1, matchLength: 0 },
			this.maxLineChars,
		);
	}

	/**
	 * A hit line, shown whole when it fits, else as a window of maxLineChars centred on the match.
	 * @param {number} n
	 * @param {string} raw the line, or the part of it that was searched
	 * @param {number} matchStart
	 * @param {number} matchLength
	 * @param {number} charsBefore characters of the line before `raw`
	 * @returns {SearchLine}
	 */
	createHitLine(n, raw, matchStart, matchLength, charsBefore) {
		return fitSearchLine(
			{ lineNumber: n, text: raw, hit: true, cutBefore: charsBefore, cutAfter: 0, matchStart, matchLength },
			this.maxLineChars,
		);
	}

	/** @param {SearchLine} line */
	emit(line) {
		this.batch.push(line);
		this.usedChars += line.text.length + LINE_OVERHEAD_CHARS;
		this.lastEmitted = line.lineNumber;
	}

	postBatch() {
		if (this.batch.length === 0) return;
		this.postLines(this.batch);
		this.batch = [];
	}

	/**
	 * A new text of whole lines begins.
	 */
	beginText() {
		this.afterPos = 0;
	}

	/**
	 * The text is searched: the context owed from it, then its last lines kept for the next one.
	 * @param {string} text
	 * @param {number} lastLine the number of its last line
	 */
	endText(text, lastLine) {
		this.flushAfter(text, Infinity);
		this.postBatch();
		this.rememberTail(text, lastLine);
	}

	/**
	 * Owed lines after the last collected hit, up to line upTo, from the current text.
	 * @param {string} text
	 * @param {number} upTo
	 */
	flushAfter(text, upTo) {
		const last = Math.min(this.owedUntil, upTo);
		while (this.lastEmitted < last && this.afterPos < text.length) {
			const afterPos = this.afterPos;
			let end = text.indexOf("\n", afterPos);
			if (end === -1) end = text.length;
			this.emit(
				this.createContextLine(this.lastEmitted + 1, text.slice(afterPos, findContentEnd(text, afterPos, end))),
			);
			this.afterPos = end + 1;
		}
	}

	/**
	 * Context before hit line n: from the current text (lines from textBase on), then from prevTail.
	 * @param {string} text
	 * @param {number} textBase
	 * @param {number} lineStart where line n starts in text
	 * @param {number} n
	 */
	emitBefore(text, textBase, lineStart, n) {
		const first = Math.max(this.lastEmitted + 1, n - this.contextLines);
		if (first > n - 1) return;
		const lines = [];
		let start = lineStart;
		let k = n - 1;
		for (; k >= first && k >= textBase; k--) {
			const end = start - 1;
			const begin = end <= 0 ? 0 : text.lastIndexOf("\n", end - 1) + 1;
			lines.push(this.createContextLine(k, text.slice(begin, findContentEnd(text, begin, end))));
			start = begin;
		}
		for (; k >= first; k--) {
			for (const line of this.prevTail) if (line.lineNumber === k) lines.push(line);
		}
		for (let index = lines.length - 1; index >= 0; index--) this.emit(lines[index]);
	}

	/** @param {"maxResults" | "budget"} reason */
	stopCollecting(reason) {
		this.collecting = false;
		this.collectionStop = reason;
		this.progress[PROGRESS_COLLECTION_STOP] =
			reason === "maxResults" ? COLLECTION_STOP_MAX_RESULTS : COLLECTION_STOP_BUDGET;
	}

	/**
	 * Counts a hit on line n; true when it is to be collected. One that is not shown ends the window
	 * of the last shown hit before it.
	 * @param {string} text the current text ("" for a giant line)
	 * @param {number} n
	 */
	countHit(text, n) {
		this.totalHits += 1;
		this.progress[PROGRESS_TOTAL_HITS] = this.totalHits;
		if (this.collecting) return true;
		if (this.owedUntil >= n) {
			this.flushAfter(text, n - 1);
			this.owedUntil = this.lastEmitted;
		}
		return false;
	}

	/**
	 * Shows a counted hit line, then stops collecting when maxResults or the budget is reached.
	 * @param {SearchLine} line
	 */
	keepHit(line) {
		this.emit(line);
		this.collectedHits += 1;
		this.owedUntil = line.lineNumber + this.contextLines;
		this.postBatch();
		if (this.collectedHits >= this.maxResults) this.stopCollecting("maxResults");
		else if (this.usedChars >= this.budgetChars) this.stopCollecting("budget");
	}

	/**
	 * A confirmed hit on line n of a text whose first line is textBase (text[lineStart, contentEnd) is
	 * its content, text[lineEnd] its newline).
	 * @param {string} text
	 * @param {number} textBase
	 * @param {number} lineStart
	 * @param {number} contentEnd
	 * @param {number} lineEnd
	 * @param {number} n
	 * @param {number} matchStart
	 * @param {number} matchLength
	 */
	addHit(text, textBase, lineStart, contentEnd, lineEnd, n, matchStart, matchLength) {
		if (!this.countHit(text, n)) return;
		this.flushAfter(text, n - 1);
		this.emitBefore(text, textBase, lineStart, n);
		if (this.latin1) {
			// Offsets in the Latin-1 view are bytes: find the match again in the decoded line.
			const line = Buffer.from(text.slice(lineStart, contentEnd), "latin1").toString("utf8");
			const own = this.lineRegex.exec(line);
			this.keepHit(this.createHitLine(n, line, own === null ? 0 : own.index, own === null ? 0 : own[0].length, 0));
		} else {
			this.keepHit(this.createHitLine(n, text.slice(lineStart, contentEnd), matchStart, matchLength, 0));
		}
		this.afterPos = lineEnd + 1;
	}

	/**
	 * A giant line n, searched to its end, between two texts.
	 * @param {SearchLine | null} hit the line as a hit, when it is one
	 * @param {SearchLine} context the line as context (its start)
	 */
	addGiantLine(hit, context) {
		const n = context.lineNumber;
		if (hit !== null) {
			if (this.countHit("", n)) {
				this.emitBefore("", n, 0, n);
				this.keepHit(hit);
			}
		} else if (this.owedUntil >= n && this.lastEmitted === n - 1) {
			this.emit(context);
			this.postBatch();
		}
		if (this.contextLines > 0) this.prevTail = this.prevTail.concat([context]).slice(-this.contextLines);
	}

	/**
	 * The last contextLines lines of a text, for the context of a hit at the start of the next one.
	 * @param {string} text
	 * @param {number} lastLine the number of its last line
	 */
	rememberTail(text, lastLine) {
		if (this.contextLines === 0) return;
		const lines = [];
		let end = text.length;
		if (end > 0 && text.charCodeAt(end - 1) === 10) end -= 1;
		for (let k = lastLine; lines.length < this.contextLines && end >= 0; k--) {
			const begin = end <= 0 ? 0 : text.lastIndexOf("\n", end - 1) + 1;
			lines.push(this.createContextLine(k, text.slice(begin, findContentEnd(text, begin, end))));
			if (begin === 0) break;
			end = begin - 1;
		}
		lines.reverse();
		this.prevTail = this.prevTail.concat(lines).slice(-this.contextLines);
	}
}
