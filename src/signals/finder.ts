// Finding the lines of a block that match the signal pattern, with a strategy chosen once per scan:
// for the default pattern, and for a configured one with keywords it cannot match without
// (src/regex/keywords.ts), the SIMD keyword prefilter and automaton over the bytes, each candidate then
// tested with the full pattern; for another configured pattern that matches alike in UTF-8 and
// Latin-1 (isByteSafePattern), one pass over the Latin-1 view; otherwise a pass over the decoded
// text with ANSI escapes removed. A configured pattern never runs on more than SIGNAL_WINDOW_CHARS
// characters at once (pieces of whole lines, windows of a longer line), and the time budget is
// checked between those runs and charged for every line tested on its own, so the search stops
// within the budget plus one run; the default pattern (trusted, linear) always sees whole lines and
// is never stopped: its cost is linear in the output, so the scan runs it to the end.

import { isAscii } from "node:buffer";
import * as keywordFilterModule from "../prefilter/keyword-filter.js";
import { type KeywordLineFinder } from "../prefilter/keyword-filter.js";
import * as cacheModule from "../regex/cache.js";
import * as keywordsModule from "../regex/keywords.js";
import * as safetyModule from "../regex/safety.js";
import * as renderModule from "../lines/render.js";
import * as frameModule from "../lines/frame.js";
import { type LineFrame } from "../lines/frame.js";
import * as stampModule from "../lines/stamp.js";
import * as patternModule from "./pattern.js";
import * as stepsModule from "./steps.js";
import { type StepMarker } from "./steps.js";

// Imported bindings copied into module constants once: under Pi's extension loader (jiti) every
// read of an imported binding goes through an interop Proxy, and these are read on every line.
const { countNewlines, createKeywordLineFinder, WASM_WINDOW_BYTES } = keywordFilterModule;
const { findSignalRegexes } = cacheModule;
const { findPatternKeywords } = keywordsModule;
const { isByteSafePattern, PATTERN_WINDOW_CHARS } = safetyModule;
const { ANSI_PATTERN, stripAnsi, stripLineEnd } = renderModule;
const { frameLengthAt } = frameModule;
const { lineTagAt, stampLength, wrappedLineOf } = stampModule;
const { STEP_KEYWORDS, stepMarkOf } = stepsModule;
const { DEFAULT_LINE_START_PATTERN, DEFAULT_SIGNAL_PATTERN, defaultSignalPrefilterKeywords } = patternModule;

/**
 * Longest the search for signal lines may take in one scan with a configured signalPattern. One that
 * is slow (not catastrophic: config refuses those) stops being applied after it; head, tail and
 * totals are still complete, and the view says where the search stopped. The default pattern has no
 * budget: it is trusted and linear, and is searched to the end of the output.
 */
export const SIGNAL_SCAN_BUDGET_MS = 2000;
/** Most characters a configured signalPattern runs on at once; a longer line is tested in overlapping windows. */
export const SIGNAL_WINDOW_CHARS = PATTERN_WINDOW_CHARS;
/** Characters a window (after a line's first) sees before its first start position: for `^`, `\b` and lookbehinds. */
const SIGNAL_WINDOW_CONTEXT_CHARS = 128;
/** How far each window moves on; a match of up to this many characters lies whole in one window. */
export const SIGNAL_WINDOW_STEP_CHARS = (SIGNAL_WINDOW_CHARS - SIGNAL_WINDOW_CONTEXT_CHARS) / 2;

/** Bytes the keyword prefilter is given at once: its own window (keyword-filter.ts), so it is called no more often. */
const KEYWORD_WINDOW_BYTES = WASM_WINDOW_BYTES;

const NEWLINE = 0x0a;

let defaultFinder: KeywordLineFinder | undefined;
/** Built once per process (automaton, SIMD tables and module: about 10–20 ms), on first use. */
export function prepareDefaultSignalFinder(): KeywordLineFinder {
	// The step markers' keywords too: a CI log's steps are found in the same pass (steps.ts).
	defaultFinder ??= createKeywordLineFinder([...defaultSignalPrefilterKeywords(), ...STEP_KEYWORDS], { shared: true });
	return defaultFinder;
}

/** Prefilters of configured patterns kept (a /reload may bring another signalPattern; old ones are dropped first). */
const MAX_CACHED_PATTERN_FINDERS = 4;
const patternFinders = new Map<string, KeywordLineFinder | undefined>();

/**
 * The keyword prefilter of a configured pattern, built once per pattern source (automaton, SIMD tables
 * and module instance), or undefined when the pattern has no keywords it cannot match without. "\x1b"
 * is added, as for the default pattern: a line is tested with its ANSI escapes removed, which can join
 * a keyword that the escapes split.
 */
export function preparePatternSignalFinder(source: string): KeywordLineFinder | undefined {
	if (patternFinders.has(source)) return patternFinders.get(source);
	const keywords = findPatternKeywords(source);
	const finder = keywords === undefined ? undefined : createKeywordLineFinder([...keywords, "\x1b"]);
	if (patternFinders.size >= MAX_CACHED_PATTERN_FINDERS)
		patternFinders.delete(patternFinders.keys().next().value as string);
	patternFinders.set(source, finder);
	return finder;
}

/** A signal line found in a block: its number, where it starts in the block's buffer, its raw text (line ending included when there is one). */
export type SignalHit = (lineNumber: number, lineStart: number, raw: string) => void;
/** A step marker found in a block (steps.ts): its line's number, where it starts in the block's buffer, raw text and marker. */
export type StepHit = (lineNumber: number, lineStart: number, raw: string, marker: StepMarker) => void;

/** Newlines in text from `from` on (a string's indexOf costs less per call than a Buffer's). */
function countNewlinesIn(text: string, from: number): number {
	let count = 0;
	for (let at = text.indexOf("\n", from); at >= 0; at = text.indexOf("\n", at + 1)) count++;
	return count;
}

/** U+2028 or U+2029 (as UTF-8 bytes in a Latin-1 view): line terminators for `^`/`$` only when decoded. */
function hasUnicodeLineSeparator(raw: string, from: number): boolean {
	return raw.includes("\xe2\x80\xa8", from) || raw.includes("\xe2\x80\xa9", from);
}

export class SignalFinder {
	private readonly blockRegex: RegExp;
	private readonly lineRegex: RegExp;
	private readonly lineStartRegex: RegExp | undefined;
	/**
	 * The last candidate line tested (its line ending included) and the pattern's verdict on it: a
	 * flood of one line is tested once, not once per line (a line that fails the default pattern
	 * costs about a microsecond). A map of recent texts cost more than it saved on varied floods.
	 */
	private lastCandidate = "";
	private lastVerdict = false;
	private readonly windowRegex: RegExp;
	/** The pattern matches alike in UTF-8 and its Latin-1 view (see isByteSafePattern). */
	private readonly byteSafe: boolean;
	/** The keyword prefilter: the default pattern's, or a configured pattern's own (preparePatternSignalFinder), else undefined. */
	private readonly keywords: KeywordLineFinder | undefined;
	/** A configured pattern: run on at most SIGNAL_WINDOW_CHARS characters at once. */
	readonly windowed: boolean;
	/** The pattern with the "g" and "m" flags, for a search over a stretch of one line (scan/giant.ts). */
	get windowPattern(): RegExp {
		return this.windowRegex;
	}
	/** The keyword prefilter in use (the pattern cannot match without one of its keywords), if any. */
	get keywordFinder(): KeywordLineFinder | undefined {
		return this.keywords;
	}
	private readonly now: () => number;
	private spentMs = 0;
	/** When time was last charged (or the clock started). */
	private clock = 0;
	/**
	 * Told of the step markers among the candidate lines of a block (the default pattern's prefilter
	 * holds their keywords; a configured pattern's does not, and finds none).
	 */
	onStep: StepHit | undefined;
	/** Set once a configured pattern's budget is spent: the first line not (fully) searched, and the time spent. */
	stopped: { atLine: number; afterMs: number } | undefined;

	/** The frame the output's lines are written in (lines/frame.ts): a line's own text starts after it. */
	private readonly frame: LineFrame | undefined;

	constructor(signalRegex: RegExp, now: () => number = () => performance.now(), frame?: LineFrame) {
		this.frame = frame;
		// Shared and kept compiled (src/regex/cache.ts): the prewarm compiles them before the first result.
		const flags = signalRegex.flags.replace(/[gmy]/g, "");
		const shared = findSignalRegexes(signalRegex.source, flags);
		this.blockRegex = shared.block;
		this.lineRegex = shared.line;
		// The default pattern's line-start alternatives, for a line's text after its timestamp or tag (shared too).
		this.lineStartRegex =
			signalRegex.source === DEFAULT_SIGNAL_PATTERN
				? findSignalRegexes(DEFAULT_LINE_START_PATTERN, flags).line
				: undefined;
		this.windowRegex = shared.window;
		this.byteSafe = isByteSafePattern(signalRegex.source);
		this.windowed = signalRegex.source !== DEFAULT_SIGNAL_PATTERN;
		this.keywords = !this.windowed
			? signalRegex.flags.includes("i")
				? prepareDefaultSignalFinder()
				: undefined
			: preparePatternSignalFinder(signalRegex.source);
		this.now = now;
	}

	/**
	 * The signal lines of bytes[start + from, end) (whole lines, each ending in "\n"; `fromLine` is
	 * the number of the line at start + from), passed to `hit` in line order. Returns the lines in
	 * the range. `decode` gives the UTF-8 text of bytes[start + a, start + b).
	 */
	findInBlock(bytes: Buffer, start: number, from: number, end: number, fromLine: number, hit: SignalHit): number {
		this.clock = this.now();
		let lines: number;
		if (this.keywords) {
			lines = this.findByKeywords(bytes, start + from, end, fromLine, hit);
		} else {
			const raw = bytes.toString("latin1", start, end);
			lines = countNewlinesIn(raw, from);
			if (
				!raw.includes("\x1b", from) &&
				(this.byteSafe ? !hasUnicodeLineSeparator(raw, from) : isAscii(bytes.subarray(start + from, end)))
			) {
				// Pure ASCII, or a pattern that matches alike in both views, and no escapes: the Latin-1
				// view finds exactly the lines the decoded text would, at byte offsets.
				this.findInLatin1(bytes, start, raw, from, fromLine, hit);
			} else {
				this.findInDecoded(bytes, start, from, end, fromLine, hit);
			}
		}
		this.charge(fromLine + lines);
		return lines;
	}

	/** Is a line tested on its own (in the head, or arriving in pieces, or one end of a giant line) a signal? Timed and charged. */
	testLine(line: string, lineNumber: number, done = true): boolean {
		if (this.stopped) return false;
		this.clock = this.now();
		const text = stripAnsi(line);
		const found =
			this.windowed && text.length > SIGNAL_WINDOW_CHARS
				? this.testInWindows(text, lineNumber)
				: this.testDefault(text);
		this.charge(done ? lineNumber + 1 : lineNumber);
		return found;
	}

	/**
	 * The keyword prefilter over the bytes finds candidate lines and counts lines, a window of whole
	 * lines (about KEYWORD_WINDOW_BYTES) at a time, so that the list of a window's candidates stays
	 * small even when every line is one (a long list lives through garbage collections, and the heap
	 * grows by it). A configured pattern is charged after each window (its lines are at most
	 * SIGNAL_WINDOW_CHARS long here); once the budget is spent, the rest is only counted.
	 */
	private findByKeywords(bytes: Buffer, from: number, end: number, fromLine: number, hit: SignalHit): number {
		const keywords = this.keywords as KeywordLineFinder;
		const found: number[] = [];
		let lines = 0;
		for (let at = from; at < end;) {
			const last = bytes.lastIndexOf(NEWLINE, Math.min(end, at + KEYWORD_WINDOW_BYTES) - 1);
			const to = last >= at ? last + 1 : bytes.indexOf(NEWLINE, at) + 1;
			// The prefilter pass is the line count, paid for whether or not signals are searched (then by
			// countNewlines): only testing its candidates is charged to the budget.
			const passStarted = this.now();
			found.length = 0;
			const windowLine = fromLine + lines;
			lines += keywords.findLines(bytes, at, to, found);
			this.clock += this.now() - passStarted;
			for (let k = 0; k < found.length; k += 2) {
				const lineStart = found[k];
				const raw = bytes.toString("utf8", lineStart, bytes.indexOf(NEWLINE, lineStart));
				if (this.isSignalLine(raw)) hit(windowLine + found[k + 1], lineStart, raw);
				if (this.onStep !== undefined) {
					const marker = stepMarkOf(raw);
					if (marker !== undefined) this.onStep(windowLine + found[k + 1], lineStart, raw, marker);
				}
			}
			at = to;
			if (this.windowed && at < end && !this.charge(fromLine + lines)) return lines + countNewlines(bytes, at, end);
		}
		return lines;
	}

	/**
	 * The line regex on a line; for the default pattern also on its text after a timestamp, after the
	 * frame the output is written in (lines/frame.ts) and after a multiplexer's tag (stamp.ts), where a
	 * failure word "at the start of a line" stands in a timestamped, framed or interleaved log.
	 */
	private testDefault(text: string): boolean {
		if (this.lineRegex.test(text)) return true;
		// What only the text after a prefix can match: the default pattern's line-start alternatives (pattern.ts).
		const lineStart = this.lineStartRegex;
		if (lineStart === undefined) return false;
		const stamped = stampLength(text);
		if (stamped > 0 && lineStart.test(text.slice(stamped))) return true;
		// And after the frame the output is written in, where its lines' own text starts.
		const framed = this.frame === undefined ? 0 : frameLengthAt(this.frame, text, stamped);
		const stamp = stamped + framed;
		if (framed > 0 && lineStart.test(text.slice(stamp))) return true;
		// And after a multiplexer's tag (`api-1  | `, `@acme/api:test: `), where its job's line starts.
		const tag = lineTagAt(text, stamp);
		if (tag !== "" && lineStart.test(text.slice(stamp + tag.length))) return true;
		// And the line a JSON-lines record wraps (docker's `{"log":"FAIL src/a.test.js\n",…}`), decoded.
		const wrapped = wrappedLineOf(text);
		return wrapped !== undefined && this.lineRegex.test(wrapped);
	}

	/** The pattern's verdict on a candidate line (`raw`, its line ending included); a repeat of the last one is not tested again. */
	private isSignalLine(raw: string): boolean {
		if (raw === this.lastCandidate) return this.lastVerdict;
		this.lastVerdict = this.testDefault(stripAnsi(stripLineEnd(raw)));
		this.lastCandidate = raw;
		return this.lastVerdict;
	}

	/**
	 * A pass of the pattern over the Latin-1 view of a block (`raw`, whose offsets are byte offsets
	 * from `start`): each hit names a candidate line, which is decoded and tested on its own; the
	 * pass resumes on the next line.
	 */
	private findInLatin1(
		bytes: Buffer,
		start: number,
		raw: string,
		from: number,
		fromLine: number,
		hit: SignalHit,
	): void {
		const regex = this.blockRegex;
		let countedTo = from;
		let countedLine = fromLine;
		const lineAt = (offset: number) => countedLine + countNewlinesIn(raw.slice(0, offset), countedTo);
		regex.lastIndex = from;
		for (let match = this.execInPieces(raw, lineAt); match !== null; match = this.execInPieces(raw, lineAt)) {
			for (let at = raw.indexOf("\n", countedTo); at >= 0 && at < match.index; at = raw.indexOf("\n", at + 1)) {
				countedLine++;
				countedTo = at + 1;
			}
			const lineEnd = raw.indexOf("\n", match.index);
			const line = bytes.toString("utf8", start + countedTo, start + lineEnd);
			if (this.lineRegex.test(stripLineEnd(line))) hit(countedLine, start + countedTo, line);
			if (lineEnd >= raw.length - 1) break;
			regex.lastIndex = lineEnd + 1;
			countedTo = lineEnd + 1;
			countedLine++;
		}
	}

	/**
	 * One pass over the decoded block with ANSI escapes removed (which keeps every line in place);
	 * each hit is confirmed on its own line. Byte offsets of hit lines are found by walking the
	 * block's newlines (this path is for non-ASCII text with a pattern that is not byte-safe).
	 */
	private findInDecoded(
		bytes: Buffer,
		start: number,
		from: number,
		end: number,
		fromLine: number,
		hit: SignalHit,
	): void {
		const raw = bytes.toString("utf8", start + from, end);
		const text = raw.includes("\x1b") ? raw.replace(ANSI_PATTERN, "") : raw;
		const regex = this.blockRegex;
		let countedTo = 0;
		let countedLine = fromLine;
		let byteAt = start + from;
		let byteLine = fromLine;
		const lineAt = (offset: number) => countedLine + countNewlinesIn(text.slice(0, offset), countedTo);
		regex.lastIndex = 0;
		for (let match = this.execInPieces(text, lineAt); match !== null; match = this.execInPieces(text, lineAt)) {
			for (let at = text.indexOf("\n", countedTo); at >= 0 && at < match.index; at = text.indexOf("\n", at + 1)) {
				countedLine++;
				countedTo = at + 1;
			}
			let lineEnd = text.indexOf("\n", match.index);
			if (lineEnd < 0) lineEnd = text.length;
			for (; byteLine < countedLine; byteLine++) byteAt = bytes.indexOf(NEWLINE, byteAt) + 1;
			const rawLine = bytes.toString("utf8", byteAt, bytes.indexOf(NEWLINE, byteAt));
			if (this.lineRegex.test(stripAnsi(stripLineEnd(rawLine)))) hit(countedLine, byteAt, rawLine);
			if (lineEnd >= text.length - 1) break;
			regex.lastIndex = lineEnd + 1;
			countedTo = lineEnd + 1;
			countedLine++;
		}
	}

	/**
	 * The next match of a block pass (`blockRegex`, its lastIndex at a line start): for the default
	 * pattern one exec over the rest of `text`; for a configured one, execs over pieces of whole lines
	 * of at most SIGNAL_WINDOW_CHARS characters (no line is longer here: the scan sends longer lines
	 * to testLine), the time charged after each piece. A piece is `text` cut after its last line, so
	 * offsets, and what a lookbehind sees, stay as they are. `lineAt` gives the line at an offset.
	 */
	private execInPieces(text: string, lineAt: (offset: number) => number): RegExpExecArray | null {
		const regex = this.blockRegex;
		if (!this.windowed) return regex.exec(text);
		while (regex.lastIndex < text.length && !this.stopped) {
			const from = regex.lastIndex;
			const cut = text.lastIndexOf("\n", from + SIGNAL_WINDOW_CHARS - 1);
			const end = cut >= from ? cut + 1 : text.indexOf("\n", from) + 1 || text.length;
			const match = regex.exec(text.slice(0, end));
			if (match) return match;
			regex.lastIndex = end;
			if (!this.charge(() => lineAt(end))) break;
		}
		return null;
	}

	/**
	 * A configured pattern on a line longer than SIGNAL_WINDOW_CHARS: window by window, each of that
	 * many characters, moving on by SIGNAL_WINDOW_STEP_CHARS, so a match up to that long lies whole in
	 * one window. A window after the first starts searching SIGNAL_WINDOW_CONTEXT_CHARS in, so `^`,
	 * `\b` and lookbehinds see the line before it; at a window's end, `$`, `\b` and lookaheads see the
	 * end of the window. The budget is checked between windows.
	 */
	private testInWindows(text: string, lineNumber: number): boolean {
		const regex = this.windowRegex;
		for (let start = 0; ; start += SIGNAL_WINDOW_STEP_CHARS) {
			const from = start === 0 ? 0 : start - SIGNAL_WINDOW_CONTEXT_CHARS;
			const to = Math.min(text.length, from + SIGNAL_WINDOW_CHARS);
			regex.lastIndex = start - from;
			if (regex.exec(text.slice(from, to)) !== null) return true;
			if (to === text.length || !this.charge(lineNumber)) return false;
		}
	}

	/**
	 * Adds the time since the clock was started or last charged; past the budget, a configured
	 * pattern's signal lines are no longer looked for from `atLine` on (the first line not fully
	 * searched; a function when it costs something to know). False once stopped. The default
	 * pattern is never stopped.
	 */
	private charge(atLine: number | (() => number)): boolean {
		if (this.stopped) return false;
		if (!this.windowed) return true;
		const now = this.now();
		this.spentMs += now - this.clock;
		this.clock = now;
		if (this.spentMs > SIGNAL_SCAN_BUDGET_MS)
			this.stopped = { atLine: typeof atLine === "number" ? atLine : atLine(), afterMs: Math.ceil(this.spentMs) };
		return !this.stopped;
	}
}
