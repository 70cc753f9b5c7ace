// The lines around the signal lines a view will show, read back from the output by byte offset once
// the scan has chosen them: a signal line's block (the continuation lines a toolchain prints after
// it) and its leading context (the lines it continues from, its parent, its section header, a line
// naming its subject), as signals/policy.ts defines them; and the text of the rare and repeated
// lines the shape counter found (rare lines of a template's family set aside); and for a JSON
// output, its outline and the lines of the objects that say they are problems (json-outline.ts,
// one bounded streaming pass). Reads at most a few KiB around each chosen line.

import { type JsonProblem, readJsonFindings } from "./json-outline.js";
import { renderLine, renderShownText, type ScannedLine } from "../lines/render.js";
import { type LineFrame, ownWordsOf, unframed } from "../lines/frame.js";
import { isStreamTag, lineTagOf, unstamped, untagged } from "../lines/stamp.js";
import type { ScanResult } from "../scan/scan.js";
import type { SignalItem } from "../signals/collector.js";
import {
	BLOCK_MESSAGE_LINES,
	BLOCK_SCAN_LINES,
	continuesBlock,
	continuesPastBlank,
	findLeadingContext,
	findSubjectLines,
	HUNK_AFTER_LINES,
	HUNK_BEFORE_LINES,
	HUNK_BLOCK_SCAN_LINES,
	HUNK_HEADER_LOOKBACK_LINES,
	indentOf,
	isBlockMessage,
	opensBlock,
	SUBJECT_LOOKBACK_LINES,
	thinRuns,
} from "../signals/blocks.js";
import type { ShapeLine } from "../signals/shape-counter.js";
import {
	classifyShape,
	isInOnePlace,
	markTemplateFamilies,
	MAX_SHAPE_LINES,
	RARE_BLOCK_LINES,
	RARE_CANDIDATE_LINES,
	RARE_PROBE_BYTES,
	type ShapeKind,
	TEMPLATE_FAMILY_LINES,
} from "../signals/shape.js";
import { type ByteSource, readRange } from "../io/source.js";
import { type EndLines, firstErrorLine, readEnd } from "./report.js";
import type { Row } from "./rows.js";

/**
 * Lines left out between two shown parts that the view shows when room is left, at most: a few lines
 * say about as much as those around them, and a reader loses the thread at a cut (view.ts). The lines
 * read around a signal line or a rare line keep their neighbours this far past what is shown of them.
 */
export const MAX_GAP_LINES = 10;
/** Lines kept in hand around a signal line, above it and below it (the reach of its context and block, and a gap). */
const NEAR_ABOVE_LINES = HUNK_BEFORE_LINES + SUBJECT_LOOKBACK_LINES + MAX_GAP_LINES;
const NEAR_BELOW_LINES = HUNK_BLOCK_SCAN_LINES + MAX_GAP_LINES;

/** Bytes read before a signal line (its leading context and section header) and after it (its block). */
const READ_BEFORE_BYTES = 32 * 1024;
const READ_AFTER_BYTES = 16 * 1024;
const NEWLINE = 0x0a;

/** A signal line with the lines around it that belong to it. */
export interface Hunk {
	item: SignalItem;
	/** A section header further up (a test's name, a build step), when there is one. */
	header?: ScannedLine;
	/** Else the step in progress further up (`Running upgrade 0030 -> 0031`), when there is one. */
	step?: ScannedLine;
	/** Leading context, in line order. */
	before: ScannedLine[];
	/** Lines further up that name the signal's subject (a test's table row, its `=== RUN` line), in line order. */
	subject?: ScannedLine[];
	/** Its block, in line order. */
	after: ScannedLine[];
	/** Further into a structured block it opens, the lines that say what went wrong (beyond `after`). */
	messages: ScannedLine[];
	/** The lines right above and below it as read (not itself): they may close a small gap. */
	near?: RawLines[];
}

/**
 * Lines as read, from line `from` on, not rendered: the view renders those it shows (few, if any),
 * not every line kept in hand.
 */
export interface RawLines {
	from: number;
	raw: readonly string[];
}

/** A line found by its shape, with its text. */
export interface ShapeFind extends ScannedLine {
	kind: "rare" | "repeated";
	/** Lines of its shape, and the last one's number (repeated lines). */
	count: number;
	lastLine: number;
	/**
	 * The shape counter looked at every line (ShapeStats.complete): `count` and `lastLine` are true of
	 * the whole output; otherwise `count` is a lower bound, and `lastLine` the last line looked at.
	 */
	exact: boolean;
	/** A rare line's block: the lines right below it that continue it, as a signal line's do (at most RARE_BLOCK_LINES). */
	after: ScannedLine[];
	/** How many of `after`'s first lines it takes to show the rare lines among them (0: none). */
	rareBelow: number;
	/** The lines right below it as read: they may close a small gap. */
	near?: RawLines;
}

/**
 * Signal lines of the tail whose subject is looked for above the tail, at most (the best ranked):
 * the tail shows them, but a line naming their subject may sit just above it.
 */
export const MAX_TAIL_SUBJECT_SIGNALS = 3;

/** Lines of a problem object read, at most (the view shows as many as fit). */
export const MAX_PROBLEM_LINES = 24;

/** Lines of a problem object's problem member read, when it lies below the object's first lines. */
const MAX_MEMBER_LINES = 8;

/** A JSON object that says it is a problem, with its first lines and the lines of its problem member. */
export interface ProblemLines {
	problem: JsonProblem;
	lines: ScannedLine[];
	memberLines: ScannedLine[];
}

/** What the structure of a JSON output says. */
export interface JsonExtras {
	outline?: string;
	problemCount: number;
	problems: ProblemLines[];
	/** The document nests deeper than this many levels, which were not read (JsonFindings.deeperThan). */
	deeperThan?: number;
}

/** What the view shows besides the scan's own lines (EndLines: what report.ts read at the output's end). */
export interface ViewExtras extends EndLines {
	hunks: Hunk[];
	shapeLines: ShapeFind[];
	/** Lines between the head and the tail that name the subject of a signal line in the tail, in line order. */
	tailSubjects?: ScannedLine[];
	json?: JsonExtras;
}

/**
 * Reads the blocks of `items` (the signal lines the view may show, best first) and the text of the
 * rare and repeated lines from `source`, whose byte offsets the scan recorded.
 */
export async function readViewExtras(
	source: ByteSource,
	scan: ScanResult,
	items: readonly SignalItem[],
	keepChars: number,
	countShape: (raw: string) => number = () => 0,
): Promise<ViewExtras> {
	const shapeKind = (raw: string) => classifyShape(countShape(raw), scan.shapes.shapedLines);
	const hunks: Hunk[] = [];
	// All at once: each read is positional, and one round of I/O costs what one read costs.
	hunks.push(...(await Promise.all(items.map((item) => readHunk(source, item, keepChars, shapeKind, scan.frame)))));
	// Lines the signal pattern matched were ranked as signals already: not offered again as shapes.
	const taken = new Set<number>([...scan.signals, ...scan.shownSignals].map((item) => item.lineNumber));
	// A line with a signal line's text is that signal line's repeat, counted with it (`[×3]`): not a rare line too.
	const takenTexts = new Set<string>([...scan.signals, ...scan.shownSignals].map((item) => item.text));
	const { headEnd, tailStart } = scan;
	// What the view shows at the end (a report, a failed CI step's tail) and that step's head are not
	// the middle's lines (report.ts).
	const end = await readEnd(source, scan, keepChars);
	const { stepHead } = end;
	const tailFrom = Math.min(tailStart, end.tail?.[0]?.lineNumber ?? tailStart);
	const inStepHead = (lineNumber: number) =>
		stepHead !== undefined &&
		lineNumber >= stepHead[0].lineNumber &&
		lineNumber <= stepHead[stepHead.length - 1].lineNumber;
	const inMiddle = (line: ShapeLine) =>
		line.lineNumber > headEnd &&
		line.lineNumber < tailFrom &&
		!taken.has(line.lineNumber) &&
		!inStepHead(line.lineNumber);
	const tailSubjects = await readTailSubjects(source, scan, keepChars, headEnd, tailStart, shapeKind);
	const shapeLines: ShapeFind[] = [];
	// The rare lines offered (setAsideFamilies: at most RARE_CANDIDATE_LINES) are taken in order until
	// MAX_SHAPE_LINES are shown; one that the block of a rare line taken before shows takes no place
	// of its own: a run of odd lines (a step's own preamble after another step's routine, bandit's
	// `Severity:` under its `>> Issue:`) is one event, not as many as its lines.
	const picked = [
		...scan.shapes.repeated
			.filter(inMiddle)
			.slice(0, MAX_SHAPE_LINES)
			.map((line) => ({ line, kind: "repeated" as const })),
		...(await setAsideFamilies(source, scan.shapes.rare.filter(inMiddle), scan.frame)).map((line) => ({
			line,
			kind: "rare" as const,
		})),
	];
	const texts = await Promise.all(
		picked.map(({ line, kind }) =>
			readLinesAt(source, line.offset, 1 + (kind === "rare" ? RARE_BLOCK_LINES : 0) + MAX_GAP_LINES),
		),
	);
	let rareTaken = 0;
	const inRareBlock = new Set<number>();
	const rareAt = new Set(picked.filter(({ kind }) => kind === "rare").map(({ line }) => line.lineNumber));
	picked.forEach(({ line, kind }, index) => {
		const [first, ...read] = texts[index];
		if (first === undefined) return;
		if (kind === "rare" && (rareTaken === MAX_SHAPE_LINES || inRareBlock.has(line.lineNumber))) return;
		const rendered = renderLine(line.lineNumber, first, keepChars);
		if (takenTexts.has(rendered.text)) return;
		// Its block is read from its first lines below; the others are kept in hand for a gap (view.ts).
		const below = kind === "rare" ? read.slice(0, RARE_BLOCK_LINES) : [];
		const near = { from: line.lineNumber + 1, raw: read };
		const job = neighboursOf(first, line.lineNumber, [], below, scan.frame);
		const after = takeBlock(rendered, job.below, job.below.length, keepChars, shapeKind, job.own, job.belowAt);
		if (kind === "rare") {
			rareTaken++;
			for (const row of after) inRareBlock.add(row.lineNumber);
		}
		// The rare lines its block shows are paid with it (view.ts), as they were lines of their own.
		let rareBelow = after.length;
		while (rareBelow > 0 && !rareAt.has(after[rareBelow - 1].lineNumber)) rareBelow--;
		const exact = scan.shapes.complete;
		shapeLines.push({ ...rendered, kind, count: line.count, lastLine: line.lastLine, exact, after, rareBelow, near });
	});
	// The structure is read only when the scan saw exactly these bytes (not a stored copy with a gap).
	const findings = source.size === scan.totalBytes ? await readJsonFindings(source) : undefined;
	const subjects = { ...(tailSubjects.length > 0 ? { tailSubjects } : {}), ...end };
	if (findings === undefined) return { hunks, shapeLines, ...subjects };
	const problems: ProblemLines[] = [];
	for (const problem of findings.problems) {
		const lines = await readProblemLines(source, problem, keepChars);
		const lastRead = lines.length > 0 ? lines[lines.length - 1].lineNumber : 0;
		const member = problem.member;
		const memberLines =
			member.startLine > lastRead
				? await readProblemLines(
						source,
						{
							...problem,
							start: member.lineStart,
							startLine: member.startLine,
							endLine: Math.min(member.endLine, member.startLine + MAX_MEMBER_LINES - 1),
							lineStart: member.lineStart,
						},
						keepChars,
					)
				: [];
		problems.push({ problem, lines, memberLines });
	}
	return {
		hunks,
		shapeLines,
		...subjects,
		json: {
			...(findings.outline !== undefined ? { outline: findings.outline } : {}),
			problemCount: findings.problemCount,
			problems,
			...(findings.deeperThan !== undefined ? { deeperThan: findings.deeperThan } : {}),
		},
	};
}

/**
 * `rare` without the shapes printed in one place (shape.ts isInOnePlace) whose lines are not one
 * line printed again and again: a
 * failed hook's error printed once for each test of its file is one event, a parametrized test's
 * `PASSED` lines in a row are a list. Each stretch is read whole, its lines compared after their
 * timestamps: fewer than REPEAT_MIN_LINES lines, in count × RARE_PROBE_BYTES at most (a stretch of
 * longer lines is not read further, and not taken).
 */
async function oneLineBursts(source: ByteSource, rare: readonly ShapeLine[]): Promise<ShapeLine[]> {
	const repeated = await Promise.all(
		rare.map(async (line) => {
			if (!isInOnePlace(line.lineNumber, line.lastLine, line.count)) return true;
			const lines = await readLinesAt(source, line.offset, line.count, line.count * RARE_PROBE_BYTES);
			// After their timestamps: a CI service stamps each line with its own time.
			const first = unstamped(lines[0] ?? "");
			return lines.length === line.count && lines.every((text) => unstamped(text) === first);
		}),
	);
	return rare.filter((_, index) => repeated[index]);
}

/**
 * The first RARE_CANDIDATE_LINES of `rare` without the lines of a template's family among them
 * (markTemplateFamilies): what is left are the odd lines.
 */
async function setAsideFamilies(
	source: ByteSource,
	rare: readonly ShapeLine[],
	frame: LineFrame | undefined,
): Promise<ShapeLine[]> {
	// Stretches that are lists drop out first: they are looked for among twice the candidates.
	const candidates = (await oneLineBursts(source, rare.slice(0, 2 * RARE_CANDIDATE_LINES))).slice(
		0,
		RARE_CANDIDATE_LINES,
	);
	if (candidates.length < TEMPLATE_FAMILY_LINES) return candidates;
	const texts = await Promise.all(
		candidates.map(async (line) => (await readLinesAt(source, line.offset, 1, RARE_PROBE_BYTES))[0] ?? ""),
	);
	// A line's own words: a timestamp or a wrapper's prefix before each line is no word of a template's.
	const family = markTemplateFamilies(texts.map((text) => ownWordsOf(frame, text)));
	return candidates.filter((_, index) => !family[index]);
}

/**
 * The lines between the head (up to line `headEnd`) and the tail (from line `tailStart`) that
 * belong to one of the tail's best signal lines, in line order, each once: lines that name its
 * subject (findSubjectLines), and, for a signal line among the tail's first HUNK_BEFORE_LINES, its
 * leading context (findLeadingContext: a traceback's last frames above its exception line, the
 * parent of an indented finding), as every other signal line has it. Only a signal line within
 * SUBJECT_LOOKBACK_LINES of the tail's start can have them; its lines above are decoded as a
 * hunk's are (the READ_BEFORE_BYTES before it, its last lines), from one read that spans those of
 * all of them.
 */
async function readTailSubjects(
	source: ByteSource,
	scan: ScanResult,
	keepChars: number,
	headEnd: number,
	tailStart: number,
	shapeKind: (raw: string) => ShapeKind,
): Promise<ScannedLine[]> {
	const atTop = (item: SignalItem) => item.lineNumber - tailStart < HUNK_BEFORE_LINES;
	const signals = scan.shownSignals
		.filter(
			(item) =>
				item.lineNumber >= tailStart &&
				item.lineNumber - tailStart < SUBJECT_LOOKBACK_LINES &&
				item.offset >= 0 &&
				!item.keptEnd,
		)
		.slice(0, MAX_TAIL_SUBJECT_SIGNALS);
	if (signals.length === 0) return [];
	const firstError = firstErrorLine(scan);
	// They lie within a few lines of each other: one read holds what each one's own read would.
	const readFrom = Math.max(0, Math.min(...signals.map((item) => item.offset)) - READ_BEFORE_BYTES);
	const bytes = await readRange(source, readFrom, Math.max(...signals.map((item) => item.offset)));
	const byLine = new Map<number, ScannedLine>();
	for (const item of signals) {
		const from = Math.max(0, item.offset - READ_BEFORE_BYTES);
		const window = bytes.subarray(from - readFrom, item.offset - readFrom);
		const { above, aboveAt, own } = neighboursOf(
			item.text,
			item.lineNumber,
			decodeLastLines(window, Math.min(HUNK_HEADER_LOOKBACK_LINES, item.lineNumber - 1), from === 0),
			[],
			scan.frame,
		);
		const isShown = (index: number) => aboveAt(index) <= headEnd || aboveAt(index) >= tailStart;
		const aboveShown = above.map((raw) => own(renderShownText(raw, keepChars)));
		const subject = findSubjectLines(own(item.text), aboveShown, isShown);
		const leading = findLeadingContext(own(item.text), aboveShown, (index) => shapeKind(above[index]));
		const context = atTop(item) ? leading.context : [];
		// Its section header; for the output's first error, else the step it failed in.
		const heading = leading.header ?? (item.lineNumber === firstError ? leading.step : undefined);
		const header = heading !== undefined && !isShown(heading) ? [heading] : [];
		for (const index of [...subject, ...context, ...header])
			if (!isShown(index)) byLine.set(aboveAt(index), renderLine(aboveAt(index), above[index], keepChars));
	}
	return [...byLine.values()].sort((a, b) => a.lineNumber - b.lineNumber);
}

/**
 * The first lines of a problem object; an object inside a longer line (minified JSON, a record of
 * JSON lines) is one line that starts where the object does.
 */
async function readProblemLines(source: ByteSource, problem: JsonProblem, keepChars: number): Promise<ScannedLine[]> {
	if (problem.startLine === problem.endLine) {
		const bytes = await readRange(source, problem.start, Math.min(problem.end, problem.start + READ_AFTER_BYTES));
		const line = renderLine(problem.startLine, bytes.toString("utf8"), keepChars);
		const total = problem.end - problem.start;
		return [total > bytes.length ? { ...line, totalChars: Math.max(line.totalChars, total), partial: true } : line];
	}
	const bytes = await readRange(
		source,
		problem.lineStart,
		Math.min(problem.end, problem.lineStart + READ_BEFORE_BYTES),
	);
	const raw = bytes.toString("utf8").split("\n");
	// A read cut short ends inside a line: that piece is not a whole line.
	const whole = bytes.length >= problem.end - problem.lineStart || raw.length === 1 ? raw.length : raw.length - 1;
	const count = Math.min(problem.endLine - problem.startLine + 1, MAX_PROBLEM_LINES, whole);
	return raw.slice(0, count).map((text, index) => renderLine(problem.startLine + index, text, keepChars));
}

/**
 * Up to `count` whole lines from `offset` (raw text): the first even when the read cuts it, the
 * others only when they end within the read or at the end of the output.
 */
async function readLinesAt(
	source: ByteSource,
	offset: number,
	count: number,
	maxBytes: number = READ_AFTER_BYTES,
): Promise<string[]> {
	if (offset < 0) return [];
	const bytes = await readRange(source, offset, offset + maxBytes);
	const lines = decodeFirstLines(bytes, count, offset + bytes.length >= source.size);
	return lines.length > 0 ? lines : [bytes.toString("utf8")];
}

/**
 * The block of `line` (a signal line, or a rare line): the lines of `belowRaw` (the raw lines right
 * under it) that continue it by signals/blocks.ts's rules, at most `limit`, rendered and numbered.
 */
function takeBlock(
	line: ScannedLine,
	belowRaw: readonly string[],
	limit: number,
	keepChars: number,
	shapeKind: (raw: string) => ShapeKind,
	own: (text: string) => string = (text) => text,
	belowAt: (index: number) => number = (index) => line.lineNumber + 1 + index,
): ScannedLine[] {
	const indent = Math.max(0, indentOf(own(line.text)));
	const block: ScannedLine[] = [];
	for (let k = 0; k < Math.min(limit, belowRaw.length); k++) {
		const below = renderLine(belowAt(k), belowRaw[k], keepChars);
		const pastBlank =
			k === 0 &&
			indentOf(own(below.text)) < 0 &&
			k + 1 < belowRaw.length &&
			continuesPastBlank(indent, own(belowRaw[k + 1]), shapeKind(belowRaw[k + 1]));
		if (!pastBlank && !continuesBlock(indent, own(below.text), shapeKind(belowRaw[k]))) break;
		block.push(below);
	}
	return block;
}

/**
 * A line's own text as its neighbours are read around it: without the tag a multiplexer put before it
 * (`tag`, stamp.ts lineTagOf: `api-1  | `, `@acme/api:test: `) when the line right above or right below
 * it has that tag too; each line read with the same tag loses it. Lines with other tags, or none, are
 * read as they are. `tagOf` reads a neighbour's tag (past the output's frame: neighboursOf).
 */
function ownText(
	tag: string,
	above: string | undefined,
	below: string | undefined,
	tagOf: (text: string) => string,
): (text: string) => string {
	const shares = (neighbour: string | undefined) => neighbour !== undefined && tagOf(neighbour) === tag;
	if (tag === "" || !(shares(above) || shares(below))) return (text) => text;
	return (text) => untagged(text, tag);
}

/** Lines right above and below a tagged line looked at for the tag of another job interleaved with its own. */
const STREAM_PROBE_LINES = 8;

/** A line's neighbours as its hunk reads them: the raw lines above and below it, their line numbers, and how each is read. */
interface Neighbours {
	above: string[];
	aboveAt: (index: number) => number;
	below: string[];
	belowAt: (index: number) => number;
	own: (text: string) => string;
}

/**
 * The lines around a line (`text`, number `lineNumber`) that its hunk reads: where a multiplexer
 * interleaves the lines of several jobs, each line with its job's tag (turborepo's and pnpm's
 * parallel tasks, docker compose's services: stamp.ts isStreamTag), the lines of its own job, each
 * read without the tag, at their own numbers; otherwise the lines right around it (ownText). A line
 * without a job's tag is of the job whose lines have none: where another job's tagged lines lie
 * among them (a bundler's `[web] ` lines among a build's own), its block and context are read from
 * the untagged lines. Every line is read without the frame its output is written in (`frame`:
 * lines/frame.ts) first. Interleaved means a line of another job lies among the nearest
 * STREAM_PROBE_LINES above or below, and a line of its own job too.
 */
function neighboursOf(
	text: string,
	lineNumber: number,
	above: string[],
	below: string[],
	frame: LineFrame | undefined,
): Neighbours {
	const aboveAt = (index: number) => lineNumber - above.length + index;
	const belowAt = (index: number) => lineNumber + 1 + index;
	const inFrame = (own: (text: string) => string) =>
		frame === undefined ? own : (line: string) => own(unframed(frame, line));
	const tagOf = inFrame(lineTagOf);
	const tag = tagOf(text);
	// A line without a job's tag is of the job whose lines have none (a level or a count is no job's tag).
	const jobOf = isStreamTag(tag)
		? tagOf
		: (line: string) => {
				const other = tagOf(line);
				return isStreamTag(other) ? other : "";
			};
	const job = jobOf(text);
	const near = [...above.slice(-STREAM_PROBE_LINES), ...below.slice(0, STREAM_PROBE_LINES)].map(jobOf);
	if (!near.includes(job) || !near.some((other) => other !== job && other !== ""))
		return { above, aboveAt, below, belowAt, own: inFrame(ownText(tag, above.at(-1), below[0], tagOf)) };
	// The lines of its job, each with its number.
	const ofJob = (lines: readonly string[], numberOf: (index: number) => number) => {
		const kept: string[] = [];
		const numbers: number[] = [];
		lines.forEach((raw, index) => {
			if (jobOf(raw) !== job) return;
			kept.push(raw);
			numbers.push(numberOf(index));
		});
		return { kept, numbers };
	};
	const lines = { above: ofJob(above, aboveAt), below: ofJob(below, belowAt) };
	return {
		above: lines.above.kept,
		aboveAt: (index) => lines.above.numbers[index],
		below: lines.below.kept,
		belowAt: (index) => lines.below.numbers[index],
		own: inFrame((line) => untagged(line, job)),
	};
}

/** Lines below a signal line its hunk looks at, at most: its block (and the line under it), a block's messages. */
const HUNK_BELOW_LINES = Math.max(HUNK_BLOCK_SCAN_LINES + 1, BLOCK_SCAN_LINES);

/**
 * The last `count` of the lines that splitting the decoded bytes at "\n" gives, without the piece
 * after the last newline, nor the first piece unless `startsAtLine`. Only those lines are decoded:
 * a newline byte is never part of a character, so decoding them alone gives the same text.
 */
function decodeLastLines(bytes: Buffer, count: number, startsAtLine: boolean): string[] {
	const end = bytes.lastIndexOf(NEWLINE);
	if (end < 0) return [];
	let from = end;
	let taken = 0;
	for (let lineEnd = end; taken < count;) {
		const before = lineEnd === 0 ? -1 : bytes.lastIndexOf(NEWLINE, lineEnd - 1);
		if (before < 0 && !startsAtLine) break;
		from = before + 1;
		taken++;
		if (before < 0) break;
		lineEnd = before;
	}
	return taken === 0 ? [] : bytes.toString("utf8", from, end).split("\n");
}

/**
 * The first `count` of the lines that splitting the decoded bytes at "\n" gives, without the piece
 * after the last newline unless `toEnd` (it is not a whole line then); only those lines are decoded.
 */
function decodeFirstLines(bytes: Buffer, count: number, toEnd: boolean): string[] {
	let end = -1;
	for (let k = 0; k < count; k++) {
		end = bytes.indexOf(NEWLINE, end + 1);
		if (end < 0) break;
	}
	if (end >= 0) return bytes.toString("utf8", 0, end).split("\n");
	const lines = bytes.toString("utf8").split("\n");
	if (!toEnd) lines.pop();
	return lines;
}

/** One signal line's hunk; a line whose offset is unknown, or whose shown text is its end, stands alone. */
async function readHunk(
	source: ByteSource,
	item: SignalItem,
	keepChars: number,
	shapeKind: (raw: string) => ShapeKind,
	frame: LineFrame | undefined,
): Promise<Hunk> {
	if (item.offset < 0 || item.keptEnd) return { item, before: [], after: [], messages: [] };
	const [beforeBytes, afterBytes] = await Promise.all([
		readRange(source, item.offset - READ_BEFORE_BYTES, item.offset),
		readRange(source, item.offset, item.offset + READ_AFTER_BYTES),
	]);
	// Whole lines only: the window before may start inside a line, the one after may end inside one.
	const reachedEnd = item.offset + afterBytes.length >= source.size;
	const belowRaw = decodeFirstLines(afterBytes, 1 + HUNK_BELOW_LINES, reachedEnd);
	belowRaw.shift(); // the signal line itself

	const aboveRaw = decodeLastLines(beforeBytes, HUNK_HEADER_LOOKBACK_LINES, item.offset - READ_BEFORE_BYTES <= 0);
	const neighbours = neighboursOf(item.text, item.lineNumber, aboveRaw, belowRaw, frame);
	const { own, below, belowAt, aboveAt } = neighbours;
	const aboveLines = neighbours.above;
	const signalIndent = Math.max(0, indentOf(own(item.text)));
	const block = takeBlock(item, below, HUNK_BLOCK_SCAN_LINES, keepChars, shapeKind, own, belowAt);
	const after = thinRuns(block, own);
	// A block longer than the cap keeps its last line: where a report ends (the second free, the frame below the recursion).
	if (after.length > HUNK_AFTER_LINES) after.splice(HUNK_AFTER_LINES - 1, after.length - HUNK_AFTER_LINES);
	const messages: ScannedLine[] = [];
	if (opensBlock(own(item.text))) {
		for (
			let k = block.length;
			k < Math.min(BLOCK_SCAN_LINES, below.length) && messages.length < BLOCK_MESSAGE_LINES;
			k++
		) {
			const line = renderLine(belowAt(k), below[k], keepChars);
			const text = own(line.text);
			if (indentOf(text) >= 0 && indentOf(text) <= signalIndent) break; // the block's closing line
			if (isBlockMessage(text)) messages.push(line);
		}
	}
	// Looked at as shown, and rendered (copied out) only where taken.
	const aboveShown = aboveLines.map((raw) => own(renderShownText(raw, keepChars)));
	const leading = findLeadingContext(own(item.text), aboveShown, (index) => shapeKind(aboveLines[index]));
	const heading = leading.header ?? leading.step;
	const inContext = new Set(heading === undefined ? leading.context : [...leading.context, heading]);
	const subject = findSubjectLines(own(item.text), aboveShown, (index) => inContext.has(index));
	const renderAbove = (index: number) => renderLine(aboveAt(index), aboveLines[index], keepChars);
	return {
		item,
		before: leading.context.map(renderAbove),
		...(subject.length > 0 ? { subject: subject.map(renderAbove) } : {}),
		...(leading.header !== undefined ? { header: renderAbove(leading.header) } : {}),
		...(leading.step !== undefined ? { step: renderAbove(leading.step) } : {}),
		after,
		messages,
		near: [
			{ from: item.lineNumber - Math.min(aboveRaw.length, NEAR_ABOVE_LINES), raw: aboveRaw.slice(-NEAR_ABOVE_LINES) },
			{ from: item.lineNumber + 1, raw: belowRaw.slice(0, NEAR_BELOW_LINES) },
		],
	};
}

/**
 * The lines of a signal line's block (`below`, in order) and of its leading context (`above`,
 * nearest first) in turn, nearest first: a template error's `required from here` right above it
 * (where the user's code asked for what failed) says as much as its first note below, and more
 * than its tenth.
 */
function nearestFirst(below: readonly ScannedLine[], above: readonly ScannedLine[]): ScannedLine[] {
	const out: ScannedLine[] = [];
	for (let k = 0; k < Math.max(below.length, above.length); k++) {
		if (k < below.length) out.push(below[k]);
		if (k < above.length) out.push(above[k]);
	}
	return out;
}

/**
 * A hunk's context rows, at most `limit`: its section header and the message lines of a block it
 * opens first (they name what failed), then a line further up naming its subject, then its block
 * and the lines just above it, nearest first (nearestFirst), then, `withStep` (the failure's first
 * error: the step it failed in), the step in progress further up (`hunk.step`); else that waits
 * until everything else has had its room (view.ts).
 */
export function contextRows(hunk: Hunk, limit: number, format: (line: ScannedLine) => string, withStep = false): Row[] {
	const byPriority = [
		...(hunk.header ? [hunk.header] : []),
		...hunk.messages,
		...(hunk.subject ?? []),
		...nearestFirst(hunk.after, [...hunk.before].reverse()),
		...(withStep && hunk.step ? [hunk.step] : []),
	];
	return byPriority
		.slice(0, limit)
		.sort((a, b) => a.lineNumber - b.lineNumber)
		.map((line) => ({ lineNumber: line.lineNumber, text: format(line) }));
}
