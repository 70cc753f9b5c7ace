// The frame an output is written in: what (nearly) every one of its lines starts with after its
// timestamp (stamp.ts), whatever tool wrote it — a remote builder's `remote: `, a logger's
// `I, [2026-12-06T09:30:00.123456 #4123]  INFO -- : `, a wrapper's `[09:30:00] :\t [Step 2/3] `,
// yarn's `➤ YN0000: │ `, `cat -n`'s numbers, an epoch time. It is learned from the output's first
// lines, not listed per tool: a prefix of whole tokens that most of them share, digits aside. What a
// line says starts after it: its failure word "at the start of a line", its indentation, the shape
// that tells it from its neighbours. A line without it is read as it is. Pure; linear in a line's
// first FRAME_WINDOW_CHARS characters.

import { stripAnsi } from "./render.js";
import { isStreamTag, lineTagAt, recordLevelOf, stampLength } from "./stamp.js";

/** The frame as its tokens' skeletons: each token with its digit runs as DIGITS. */
export interface LineFrame {
	readonly tokens: readonly string[];
}

/**
 * The output's first lines a frame is learned from: at most this many, in its first
 * FRAME_SAMPLE_BYTES bytes (signals/shape-counter.ts sets its shape window from the same lines: a
 * line's shape hash reads that much further, past its timestamp and this frame).
 */
export const FRAME_SAMPLE_LINES = 64;
export const FRAME_SAMPLE_BYTES = 16 * 1024;

/** A run of digits in a token's skeleton. */
const DIGITS = "\u0000";
/** Characters of a line (after its timestamp) a frame is looked for in. */
const FRAME_WINDOW_CHARS = 96;
/** Tokens of a frame, at most. */
const MAX_FRAME_TOKENS = 8;
/** Fewest lines of the sample that must carry the frame, and the share of its non-blank lines (3/4). */
const MIN_FRAMED_LINES = 16;
const MIN_FRAMED_SHARE = 0.75;

/** Lines of a sample of `sampled` non-blank ones that must carry a frame (or a record level) for it to be learned. */
function framedLinesNeeded(sampled: number): number {
	return Math.max(MIN_FRAMED_LINES, Math.ceil(sampled * MIN_FRAMED_SHARE));
}
/**
 * A frame's last token ends a label: a colon, a closing bracket or parenthesis, a bar, an angle, a
 * box's edge (`remote:`, `[Step 2/3]`, `INFO -- :`, `YN0000: │`). A prefix of words that ends in a
 * word is the line's own beginning (cargo's `Compiling`, TAP's `ok 3 -`, gradle's `> Task`).
 */
const LABEL_END = /[:\])|>\u2502]$/;
/**
 * A test's or a step's verdict (`[PASS]`, `ok`, `FAILED`), or a level that says a line reports a
 * failure (`ERROR`, `[fatal]`): what a line says of itself, never the frame its output is written in.
 */
const VERDICT =
	/^[[(]?(?:ok|pass|passed|fail|failed|failure|skip|skipped|success|succeeded|xfail|xpass|todo|error|errors|err|fatal|crit|critical|severe|panic|emerg|alert)[\])]?:?$/i;
/** A token with a word in it: two letters in a row (an ISO time's `T` is none). */
const WORD = /[A-Za-z]{2}/;
/**
 * A level that says nothing failed, alone (`[INFO]`, `WARN:`): the line's own first word, no frame
 * (maven's `[INFO] `). A verdict or an error's level is no frame anywhere in one (VERDICT).
 */
const LEVEL_ALONE = /^[[(]?(?:info|warn|warning|debug|trace|notice|note)[\])]?:?$/i;

/** A location's line and column (eslint's `12:5` before each finding): the finding's own place, no frame. */
const LINE_AND_COLUMN = new RegExp(`^${DIGITS}:${DIGITS}:?$`);
/**
 * A token that names a file (`src/a_3.py:12:5:`, `units/a.service:7:`, `tests/t.py::test_x`,
 * `lib/u.nim(3,`): a diagnostic's location is what it is about, however many lines share its
 * skeleton.
 */
const NAMES_A_FILE = /\.[A-Za-z]\w{0,9}(?::|\(|$)/;

/** A token's skeleton: its digit runs as DIGITS. */
function skeletonOf(token: string): string {
	return token.replace(/\d+/g, DIGITS);
}

/** The skeletons of the first tokens of `text` from `from` (whitespace-separated, within FRAME_WINDOW_CHARS). */
function leadingTokens(text: string, from: number): string[] {
	const window = text.slice(from, from + FRAME_WINDOW_CHARS);
	const tokens: string[] = [];
	const token = /\S+/g;
	for (let match = token.exec(window); match !== null && tokens.length < MAX_FRAME_TOKENS; match = token.exec(window)) {
		// A token the window cuts is not known whole.
		if (match.index + match[0].length === window.length && window.length === FRAME_WINDOW_CHARS) break;
		tokens.push(skeletonOf(match[0]));
	}
	return tokens;
}

/**
 * The frame of an output whose first lines are `lines`: the longest run of leading tokens (after
 * each line's timestamp) that at least MIN_FRAMED_SHARE of its non-blank lines, and MIN_FRAMED_LINES
 * of them, share, digits aside, and that is a frame (isFrame), the longest one the lines begin in
 * several ways after (startsVaried) first; undefined when there is none. `further`: the lines are a
 * sample further on in the output, where one job's tag (`[worker-2] `) before all of them is no frame.
 */
export function learnLineFrame(lines: readonly string[], further = false): LineFrame | undefined {
	const sampled = lines.filter((line) => line.trim() !== "").map((line) => ({ line, from: stampLength(line) }));
	const needed = framedLinesNeeded(sampled.length);
	if (sampled.length < needed) return undefined;
	const tokensOf = sampled.map(({ line, from }) => leadingTokens(line, from));
	// The most shared run of each length, while it is shared enough (a longer run is shared less).
	const shared: string[][] = [];
	for (let size = 1; size <= MAX_FRAME_TOKENS; size++) {
		const counts = new Map<string, number>();
		let best: string | undefined;
		let bestCount = 0;
		for (const tokens of tokensOf) {
			if (tokens.length < size) continue;
			const key = tokens.slice(0, size).join(" ");
			const count = (counts.get(key) ?? 0) + 1;
			counts.set(key, count);
			if (count > bestCount) [best, bestCount] = [key, count];
		}
		if (best === undefined || bestCount < needed) break;
		shared.push(best.split(" "));
	}
	// The longest frame whose lines begin in several ways after it. One after which they all begin
	// alike ends in the lines' own words (`remote: INSERT INTO t (a, b)` before every `VALUES …`): a
	// shorter frame of varied lines (`remote:`) is theirs. With none, the longest frame: further on
	// in the output, not a job's tag (isJobTag).
	let longest: LineFrame | undefined;
	for (let size = shared.length; size > 0; size--) {
		const frame: LineFrame = { tokens: shared[size - 1] };
		const carried = sampled
			.map(({ line, from }) => ({ line, from, length: frameLengthAt(frame, line, from) }))
			.filter(({ length }) => length > 0);
		if (!isFrame(frame, carried, needed)) continue;
		if (startsVaried(carried)) return frame;
		if (!further || !isJobTag(carried[0])) longest ??= frame;
	}
	return longest;
}

/**
 * Is the frame a line carries the tag of one job among those a runner interleaves (stamp.ts
 * isStreamTag: `[worker-2] `, `api-1  | `)? A sample from the middle of an output can hold one
 * job's lines only, all of one kind (`[worker-2] shard 0101: 16 rows ok` 64 times): its tag is no
 * frame of the output's. A wrapper's is (`remote: `, `➤ YN0000: │ `, `INFO runner: `), whatever
 * the lines after it (go test's `=== RUN` and `--- PASS:` in turn).
 */
function isJobTag({ line, from, length }: Carried): boolean {
	const tag = lineTagAt(line, from);
	return tag.length === length && isStreamTag(tag);
}

/** A sampled line that carries a frame: where its timestamp ends (`from`), and the frame's length there. */
interface Carried {
	line: string;
	from: number;
	length: number;
}

/**
 * The byte ranges an output of `size` bytes learns its frame from (learnLineReading), in order: its
 * first FRAME_SAMPLE_BYTES; then, when it is longer, FRAME_SAMPLE_BYTES from two samples' length
 * before its end, where a CI job's failing step prints its last lines after the runner's preamble
 * and set-up steps (which no tool's frame precedes) and before the job's cleanup; in an output too
 * short for that, from the end of the first (a job's log of 30 KB is mostly its failing step's).
 */
export function frameSamples(size: number): Array<{ from: number; to: number }> {
	const first = { from: 0, to: Math.min(size, FRAME_SAMPLE_BYTES) };
	if (size <= FRAME_SAMPLE_BYTES) return [first];
	// An output too short for two samples apart: the bytes right after the first.
	const later = Math.max(FRAME_SAMPLE_BYTES, size - 2 * FRAME_SAMPLE_BYTES);
	return [first, { from: later, to: Math.min(size, later + FRAME_SAMPLE_BYTES) }];
}

/** What an output's samples teach about reading its lines (learnLineReading). */
export interface LineReading {
	/** The frame its lines are written in (learnLineFrame). */
	frame?: LineFrame;
	/** The level its records all carry (learnRecordLevel). */
	recordLevel?: string;
}

/**
 * The frame and the record level of an output of `size` bytes whose samples (frameSamples, decoded,
 * in order) are `texts`: each learned from the whole lines of the first (the last one too when the
 * output ends there), at most FRAME_SAMPLE_LINES; else from those of the later one, which starts
 * inside a line (there a job's tag is no frame: learnLineFrame's `further`). Each sample is cut into
 * lines once.
 */
export function learnLineReading(texts: readonly string[], size: number): LineReading {
	const [first, later] = texts;
	const firstLines = sampleLines(first, size <= FRAME_SAMPLE_BYTES, false);
	let laterLines: string[] | undefined;
	const laterOnes = () => (laterLines ??= later === undefined ? [] : sampleLines(later, false, true));
	const frame = learnLineFrame(firstLines) ?? learnLineFrame(laterOnes(), true);
	const recordLevel = learnRecordLevel(firstLines) ?? learnRecordLevel(laterOnes());
	return { ...(frame !== undefined ? { frame } : {}), ...(recordLevel !== undefined ? { recordLevel } : {}) };
}

/** The whole lines of a sample, at most FRAME_SAMPLE_LINES, without their escapes and CRs. */
function sampleLines(text: string, complete: boolean, startsInLine: boolean): string[] {
	const lines = text.split("\n", FRAME_SAMPLE_LINES + 2);
	if (startsInLine) lines.shift();
	if (lines.length > FRAME_SAMPLE_LINES) lines.length = FRAME_SAMPLE_LINES;
	else if (!complete || text.endsWith("\n")) lines.pop();
	return lines.map((line) => stripAnsi(line.endsWith("\r") ? line.slice(0, -1) : line));
}

/** Distinct ways the lines after a frame begin, fewest, for them to be of several kinds. */
const MIN_DISTINCT_STARTS = 4;

/**
 * Are the lines that carry a frame of several kinds: does it stand alone on one of them (the
 * output's blank line, in its frame), or do they begin in at least MIN_DISTINCT_STARTS ways after it
 * (first tokens, digits aside)?
 */
function startsVaried(carried: readonly Carried[]): boolean {
	const starts = new Set<string>();
	for (const { line, from, length } of carried) {
		const first = /\S+/.exec(line.slice(from + length))?.[0];
		if (first === undefined) return true;
		starts.add(skeletonOf(first));
		if (starts.size >= MIN_DISTINCT_STARTS) return true;
	}
	return false;
}

/**
 * Is a prefix most lines share the frame they are written in, not their own first words? Text must
 * follow it in most of the lines that carry it (`carried`) (what most lines are whole is one template's line:
 * `test_x ... [OK]`), and it may not be a level alone (LEVEL_ALONE), nor hold a verdict or an error's
 * level (VERDICT), a location's line and column or a file's name (NAMES_A_FILE): what a line says of
 * its subject. Then a prefix with a digit
 * and no letter is a frame (a time, a counter, a line's number); one with words (WORD) is when they
 * and its last token are the same on every line, digits too (`remote:`, `INFO -- :`, `[pid 4123]`;
 * not `[worker-3]` nor `request 17:`, whose number names the line's subject), and it ends in a label (LABEL_END) or a tab ends it on
 * `needed` lines (a column). Punctuation alone (a list's `-`, a table's `|`) is not.
 */
function isFrame(frame: LineFrame, carried: readonly Carried[], needed: number): boolean {
	const { tokens } = frame;
	if (tokens.length === 1 && LEVEL_ALONE.test(tokens[0])) return false;
	if (tokens.some((token) => LINE_AND_COLUMN.test(token) || NAMES_A_FILE.test(token) || VERDICT.test(token)))
		return false;
	const followed = carried.filter(({ line, from, length }) => line.slice(from + length).trim() !== "");
	if (followed.length * 2 < carried.length) return false;
	if (!tokens.some((token) => /[A-Za-z]/.test(token))) return tokens.some((token) => token.includes(DIGITS));
	// Its words are the same on every line, digits too: a job's or a program's name, not a subject's.
	const wordy = tokens.map((token, index) => WORD.test(token) || index === tokens.length - 1);
	const literal = (line: string, from: number, length: number) =>
		line
			.slice(from, from + length)
			.trim()
			.split(/\s+/)
			.filter((_, index) => wordy[index])
			.join(" ");
	if (new Set(carried.map(({ line, from, length }) => literal(line, from, length))).size > 1) return false;
	if (LABEL_END.test(tokens[tokens.length - 1])) return true;
	return carried.filter(({ line, from, length }) => line[from + length - 1] === "\t").length >= needed;
}

/**
 * Characters of `frame` in `text` at `from` (where its timestamp ends: stamp.ts stampLength), with the
 * one space or tab after it; 0 when the line does not carry it. Whitespace before and between its
 * tokens is any run (`cat -n` pads its numbers); the line's own indentation, after the one separator,
 * is its own.
 */
export function frameLengthAt(frame: LineFrame, text: string, from: number): number {
	let at = from;
	for (const token of frame.tokens) {
		while (at < text.length && (text[at] === " " || text[at] === "\t")) at++;
		for (let k = 0; k < token.length; k++) {
			if (token[k] === DIGITS) {
				const start = at;
				while (at < text.length && text.charCodeAt(at) >= 0x30 && text.charCodeAt(at) <= 0x39) at++;
				if (at === start) return 0;
			} else if (text[at] === token[k]) at++;
			else return 0;
		}
		// A token ends where whitespace or the line does: `remote:x` does not carry `remote:`.
		if (at < text.length && text[at] !== " " && text[at] !== "\t") return 0;
	}
	if (at < text.length) at++;
	return at - from;
}

/** `frame` as a line might carry it: its tokens, each digit run as one digit, a space after each. */
export function frameTextOf(frame: LineFrame): string {
	return frame.tokens.map((token) => `${token.replaceAll(DIGITS, "0")} `).join("");
}

/** `text` without `frame` after its timestamp (itself when it does not carry it); the timestamp stays. */
export function unframed(frame: LineFrame | undefined, text: string): string {
	if (frame === undefined) return text;
	const stamp = stampLength(text);
	const length = frameLengthAt(frame, text, stamp);
	return length === 0 ? text : text.slice(0, stamp) + text.slice(stamp + length);
}

/**
 * `text` from where the line's own words start: past its timestamp and `frame` (when it carries it).
 * What a rule that counts a line's words reads (a fold of lines one word apart, a template's family):
 * a prefix every line has is no word of any of them.
 */
export function ownWordsOf(frame: LineFrame | undefined, text: string): string {
	const stamp = stampLength(text);
	return text.slice(stamp + (frame === undefined ? 0 : frameLengthAt(frame, text, stamp)));
}

/**
 * The level that (nearly) every line of a sample carries as a record wrapping a line (stamp.ts
 * recordLevelOf): a supervisor's or a log shipper's, which logs each line of the program it runs at
 * one level (`time=… level=info msg="src/a.c:3:5: error: …"`). Like a frame it is every line's, so
 * it says nothing of one. Learned as a frame is: from at least MIN_FRAMED_LINES lines and
 * MIN_FRAMED_SHARE of the sample's non-blank ones.
 */
export function learnRecordLevel(lines: readonly string[]): string | undefined {
	const sampled = lines.filter((line) => line.trim() !== "");
	const needed = framedLinesNeeded(sampled.length);
	if (sampled.length < needed) return undefined;
	const counts = new Map<string, number>();
	for (const line of sampled) {
		const level = recordLevelOf(line);
		if (level === undefined) continue;
		const count = (counts.get(level) ?? 0) + 1;
		if (count >= needed) return level;
		counts.set(level, count);
	}
	return undefined;
}
