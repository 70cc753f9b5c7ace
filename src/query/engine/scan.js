// @ts-check
// The search worker's regex pass over a text of whole lines: one regex step per window of about
// WINDOW_CHARS (whole lines), or per line for patterns with lookarounds, every hit confirmed on its
// own line where a chunk could differ from the line alone. Invariant: PROGRESS_RESUME_LINE is the
// first line not fully searched and PROGRESS_STEP_LAST_LINE the end of the running step, so a step
// that never ends is known to lie in one small window; the deadline is checked between steps.

import { PROGRESS_RESUME_LINE, PROGRESS_STEP_LAST_LINE } from "./protocol.js";
import { findContentEnd } from "./collect.js";
import { countNewlinesInWorker } from "../../prefilter/newline-count.js";

/** @import { HitCollector } from "./collect.js" */

/** Date.now() is read once per this many regex steps (it costs more than a short step). */
export const DEADLINE_CHECK_STEPS = 256;
/**
 * Characters of text searched per regex step (whole lines): bounds how far from the line where a
 * runaway step started the trouble can be.
 */
export const WINDOW_CHARS = 16384;

/**
 * The model's pattern compiled for the passes.
 * @typedef {object} SearchPattern
 * @property {RegExp} chunkRegex flags gim: over a window of lines
 * @property {RegExp} lineRegex flag i: over one line
 * @property {boolean} needsConfirm anchors: in a chunk they also match at a \r inside a line, so such hits are confirmed against the line alone
 * @property {boolean} lineByLine lookarounds can see past a line's end in a chunk (and miss what the line alone would match), so such patterns run line by line: exact, and slower
 */

/**
 * A pattern without escapes and with "[^" read as "[", to look for anchors and lookarounds.
 * @param {string} pattern
 */
function stripEscapes(pattern) {
	return pattern.replace(/\\./g, "").replace(/\[\^/g, "[");
}

/**
 * Compiles the pattern as the passes use it (throws on a bad pattern). The anchor and lookaround
 * tests over-approximate; that only costs time.
 * @param {string} pattern
 * @returns {SearchPattern}
 */
export function compileSearchRegexes(pattern) {
	const bare = stripEscapes(pattern);
	return {
		chunkRegex: new RegExp(pattern, "gim"),
		lineRegex: new RegExp(pattern, "i"),
		needsConfirm: /[\^$]/.test(bare),
		lineByLine: /\(\?<?[=!]/.test(bare),
	};
}

/** When a search must stop: timeoutMs after it began, or on the virtual clock of tests. */
export class SearchDeadline {
	/**
	 * @param {number} startedAt Date.now() when the search began
	 * @param {number} timeoutMs
	 * @param {number} [virtualMsPerLine] tests only: each searched line takes this many ms, and real time plays no part
	 */
	constructor(startedAt, timeoutMs, virtualMsPerLine) {
		this.virtualMsPerLine = virtualMsPerLine !== undefined && virtualMsPerLine > 0 ? virtualMsPerLine : 0;
		this.deadline = (this.virtualMsPerLine > 0 ? 0 : startedAt) + timeoutMs;
	}

	/**
	 * @param {number} firstOpenLine the first line not yet fully searched (on the virtual clock, the lines before it are the time spent)
	 */
	passed(firstOpenLine) {
		const now = this.virtualMsPerLine > 0 ? (firstOpenLine - 1) * this.virtualMsPerLine : Date.now();
		return now >= this.deadline;
	}
}

/**
 * @typedef {object} ScanParts
 * @property {SearchPattern} pattern
 * @property {HitCollector} collector
 * @property {SearchDeadline} deadline
 * @property {Float64Array} progress the shared progress slots
 */

export class TextScanner {
	/** @param {ScanParts} parts */
	constructor(parts) {
		this.pattern = parts.pattern;
		this.collector = parts.collector;
		this.deadline = parts.deadline;
		this.progress = parts.progress;
		/** Regex steps so far (the deadline is checked every DEADLINE_CHECK_STEPS). */
		this.steps = 0;
		/** The first line not fully searched once the deadline passed, else 0. */
		this.stoppedAtLine = 0;
	}

	/**
	 * Searches a text of whole lines whose first line is textBase. Returns its line count, or -1 when
	 * the deadline passed (stoppedAtLine is then set).
	 * @param {string} text
	 * @param {number} textBase
	 * @param {Buffer} [bytes] the text's bytes when it is their Latin-1 view (offsets alike): its windows' lines are counted there
	 */
	scanText(text, textBase, bytes) {
		this.collector.beginText();
		const count = this.pattern.lineByLine
			? this.scanLineByLine(text, textBase)
			: this.scanWindows(text, textBase, bytes);
		if (count < 0) return -1;
		this.collector.endText(text, textBase + count - 1);
		return count;
	}

	/**
	 * Each line on its own (patterns with lookarounds). Returns the line count, or -1 at the deadline.
	 * @param {string} text
	 * @param {number} textBase
	 */
	scanLineByLine(text, textBase) {
		const { lineRegex } = this.pattern;
		const progress = this.progress;
		let pos = 0;
		let line = textBase;
		for (; pos < text.length; line++) {
			this.steps += 1;
			if (this.steps % DEADLINE_CHECK_STEPS === 0 && this.deadline.passed(line)) {
				this.stoppedAtLine = line;
				return -1;
			}
			progress[PROGRESS_RESUME_LINE] = line;
			progress[PROGRESS_STEP_LAST_LINE] = line;
			let lineEnd = text.indexOf("\n", pos);
			if (lineEnd === -1) lineEnd = text.length;
			const contentEnd = findContentEnd(text, pos, lineEnd);
			const own = lineRegex.exec(text.slice(pos, contentEnd));
			if (own !== null) this.collector.addHit(text, textBase, pos, contentEnd, lineEnd, line, own.index, own[0].length);
			pos = lineEnd + 1;
		}
		return line - textBase;
	}

	/**
	 * One regex pass per window of whole lines (about WINDOW_CHARS): a match index is mapped to its
	 * line by counting newlines, each hit is confirmed on its own line when needed, and the search
	 * resumes at the next line. Returns the line count, or -1 at the deadline.
	 * @param {string} text
	 * @param {number} textBase
	 * @param {Buffer} [bytes] as scanText's
	 */
	scanWindows(text, textBase, bytes) {
		let windowStart = 0;
		let windowLine = textBase;
		while (windowStart < text.length) {
			if (this.deadline.passed(windowLine)) {
				this.stoppedAtLine = windowLine;
				return -1;
			}
			let windowEnd = text.indexOf("\n", windowStart + WINDOW_CHARS);
			windowEnd = windowEnd === -1 ? text.length : windowEnd + 1;
			let windowLines = 0;
			if (bytes !== undefined) windowLines = countNewlinesInWorker(bytes, windowStart, windowEnd);
			else
				for (let at = text.indexOf("\n", windowStart); at !== -1 && at < windowEnd; at = text.indexOf("\n", at + 1))
					windowLines += 1;
			if (text.charCodeAt(windowEnd - 1) !== 10) windowLines += 1;
			this.progress[PROGRESS_STEP_LAST_LINE] = windowLine + windowLines - 1;
			if (!this.scanWindow(text, textBase, windowStart, windowEnd, windowLine)) return -1;
			windowStart = windowEnd;
			windowLine += windowLines;
		}
		return windowLine - textBase;
	}

	/**
	 * The regex steps over text[windowStart, windowEnd), whose first line is windowLine. A hot loop
	 * (one iteration per match): measured by `npm run bench` (search rows). False at the deadline.
	 * @param {string} text
	 * @param {number} textBase
	 * @param {number} windowStart
	 * @param {number} windowEnd
	 * @param {number} windowLine
	 */
	scanWindow(text, textBase, windowStart, windowEnd, windowLine) {
		const { chunkRegex, lineRegex, needsConfirm } = this.pattern;
		const progress = this.progress;
		const part = windowStart === 0 && windowEnd === text.length ? text : text.slice(windowStart, windowEnd);
		let pos = windowStart;
		let line = windowLine;
		chunkRegex.lastIndex = 0;
		for (;;) {
			this.steps += 1;
			if (this.steps % DEADLINE_CHECK_STEPS === 0 && this.deadline.passed(line)) {
				this.stoppedAtLine = line;
				return false;
			}
			progress[PROGRESS_RESUME_LINE] = line;
			const match = chunkRegex.exec(part);
			if (match === null) return true;
			const index = windowStart + match.index;
			if (index >= windowEnd) return true;
			let newline = text.indexOf("\n", pos);
			while (newline !== -1 && newline < index) {
				pos = newline + 1;
				line += 1;
				newline = text.indexOf("\n", pos);
			}
			const lineEnd = newline === -1 ? text.length : newline;
			const contentEnd = findContentEnd(text, pos, lineEnd);
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
			if (confirmed) this.collector.addHit(text, textBase, pos, contentEnd, lineEnd, line, matchStart, matchLength);
			if (lineEnd + 1 >= windowEnd) return true;
			pos = lineEnd + 1;
			line += 1;
			chunkRegex.lastIndex = pos - windowStart;
		}
	}
}
