// The bounded view: what the model sees in place of an oversized tool result. Pure: a scan result,
// the lines read around its signal lines (hunks.ts) and options in, a string out; the same input
// gives the same bytes. Invariants: the whole view, header and footer included, is at most
// `thresholdChars` characters; its first lines carry the id, the totals and the most decisive
// lines (Pi's compaction keeps only a result's first 2 000 characters); every shown line starts
// with its 1-based line number in the output (":" after the number for a line shown for itself,
// "-" for context around a signal line); the last line is always shown and the tail is never given
// up for the head or the signals; when room is short, context goes before signal lines, warnings
// before errors; whatever is dropped to fit is counted.

import { keepCharsFor, renderLine, type ScannedLine, renderTerminalLine } from "../lines/render.js";
import type { ScanResult } from "../scan/scan.js";
import type { SignalItem } from "../signals/collector.js";
import { contextRows, type Hunk, type JsonExtras, MAX_GAP_LINES, type ShapeFind, type ViewExtras } from "./hunks.js";
import type { ReportLines } from "./report.js";
import type { JsonProblem } from "./json-outline.js";
import type { Section } from "../signals/steps.js";
import { formatIdTag, formatNote, formatNotice, formatQueryFooter, NOTHING_STORED_NOTE } from "../lines/protocol.js";
import { SEVERITY_ERROR } from "../signals/policy.js";
import { inARow, oneWordApart } from "../signals/shape.js";
import { type LineFrame, ownWordsOf } from "../lines/frame.js";
import type { ScanOptions } from "../scan/scan.js";
import { keepStart, plural, sizeOf, toOneLine } from "../lines/text.js";
import { formatScannedLine, type LineSeparator, lineNumberWidth } from "../lines/numbered.js";
import {
	foldRuns,
	type HeadRow,
	joinFolds,
	lastLineOf,
	linesOf,
	type Row,
	takeFromEnd,
	takeFromStart,
	TAIL_UNFOLDED_LINES,
} from "./rows.js";

export { renderTerminalLine };

/** What a view says about its result besides the scan (compose.ts viewContextOf derives it from an entry's metadata). */
export interface ViewContext {
	/** The store entry id; absent when the original could not be stored. */
	id?: string;
	/** Named in the header ("bash output: …"). */
	toolName: string;
	/** Why the original could not be stored (shown instead of an id). */
	storeError?: string;
	/** Set when the stored copy had its middle left out (maxEntryBytes). */
	truncatedNote?: string;
	/** Why a better source of the output was not used (e.g. a spill file that failed its checks): a line under the header. */
	sourceNote?: string;
	/** A line above the footer, e.g. Pi's verdict on a failed command: `[bash: Command exited with code 2]`. */
	statusLine?: string;
	/** A re-run's comparison with the last run of its command (reruns/compare.ts, bounded there): right under the header. */
	rerunLines?: readonly string[];
}

export interface ViewOptions extends ScanOptions, ViewContext {
	/** Longest view, notices included: the result's budget. */
	thresholdChars: number;
}

/** Share of the budget each part may claim before the others; unused room flows on (tail, signals, head, shapes). */
const TAIL_SHARE = 0.4;
const SIGNAL_SHARE = 0.35;
const HEAD_SHARE = 0.15;
/** Lines of a CI job's own head shown behind its failed step's head, at most (the runner and the workflow it ran). */
const JOB_HEAD_LINES = 5;
/** Most of the budget the other distinct lines of collapsed shapes may take, after everything else. */
const INSTANCE_SHARE = 0.2;
/** Most decisive lines repeated right under the header, and their length there. */
const KEY_LINES = 3;
const KEY_LINE_CHARS = 160;
const KEY_SHARE = 0.25;
/** Context lines a hunk may show (its header, before, after), given in steps while room lasts; a problem object's lines go furthest. */
const CONTEXT_STEPS = [2, 4, 8, 12, 24];
/** Problem objects of a JSON output shown with their lines, and the outline line's length. */
const JSON_PROBLEMS_SHOWN = 5;
const OUTLINE_CHARS = 260;
const OUTLINE_PATH_CHARS = 100;
/** Kinds of JSON problems the outline line names, at most (the rarest). */
const OUTLINE_KINDS = 3;
/** An outline line (JSON, steps) shorter than this is left out: a view too small for it shows the id, totals and tail. */
const MIN_OUTLINE_CHARS = 80;
/** The steps line's length, at most (each step's title and failure clipped to STEP_TITLE_CHARS). */
const STEPS_LINE_CHARS = 900;
const STEP_TITLE_CHARS = 70;
/** Failed steps named whatever the room, at most (the first ones). */
const MAX_FAILED_STEPS_NAMED = 6;
/** Lines after a failed CI step's verdict (the runner's post-job cleanup) folded into one, when at least this many. */
const MIN_CLEANUP_FOLD_LINES = 3;
/** The line between two runs of middle lines that do not touch, and what it costs. */
const SEPARATOR = "  --";
const SEPARATOR_CHARS = SEPARATOR.length + 1;

/** A row with what showing it costs: `apart`, it pays for a `--` above it too (allotRoom). */
type CostRow = Row & { apart?: true };

/** How many runs of consecutive line numbers `lineNumbers` make (each a separator's worth apart). */
function runsOf(lineNumbers: readonly number[]): number {
	const sorted = [...new Set(lineNumbers)].sort((a, b) => a - b);
	let runs = sorted.length > 0 ? 1 : 0;
	for (let k = 1; k < sorted.length; k++) if (sorted[k] > sorted[k - 1] + 1) runs++;
	return runs;
}
/** Longest tool name, store error and notes repeated in the header, in characters. */
const MAX_TOOL_NAME_CHARS = 40;
const MAX_STORE_ERROR_CHARS = 120;
const MAX_NOTE_CHARS = 160;

/**
 * A line numbered for the view (lines/numbered.ts), clipped to `maxChars`, with its note of repeats,
 * rarity or JSON path. The separator is ":" for a line shown for itself, "-" for context.
 */
export function formatLine(line: ScannedLine, width: number, maxChars: number, separator: LineSeparator = ":"): string {
	return formatScannedLine(line, width, maxChars, separator, noteOf(line));
}

/** A problem object of a JSON output, shown as a signal line: its first line, with its path. */
interface ProblemItem extends SignalItem {
	json: string;
}

/**
 * The bracketed note after a line: a JSON problem's path, exact repeats, signal lines of its shape, a
 * repeated or rare shape. Every count is true of the whole output: one that is only a lower bound (a
 * sampled shape count, a search that stopped) says "at least", and a rare line's count is left out.
 */
function noteOf(line: ScannedLine): string {
	const item = line as Partial<SignalItem & ShapeFind & ProblemItem>;
	if (item.json !== undefined) return `  [${item.json}]`;
	if (item.repeatOf !== undefined) return `  [the same as line ${item.repeatOf}]`;
	const atLeast = item.atLeast === true || item.exact === false ? "at least " : "";
	if (item.similar)
		return `  [${atLeast}×${item.similar.count + (item.count ?? 1)} signal lines of this shape, the last ${atLeast ? "found " : ""}at line ${item.similar.lastLine}]`;
	if (item.kind === "repeated")
		return item.exact === false
			? `  [at least ×${item.count} lines of this shape]`
			: `  [×${item.count} lines of this shape, the last at line ${item.lastLine}]`;
	if (item.kind === "rare") {
		if (item.exact === false) return "  [a rare line]";
		if (item.count === undefined || item.count <= 1) return "  [a rare line: its shape appears once]";
		return item.lastLine !== undefined && inARow(line.lineNumber, item.lastLine, item.count)
			? `  [a rare line: its shape appears ${item.count} times, in a row to line ${item.lastLine}]`
			: `  [a rare line: its shape appears ${item.count} times]`;
	}
	if (item.count !== undefined && item.count > 1) return `  [${atLeast}×${item.count}]`;
	return "";
}

/** Which lines each part of the view may show, before the budget. */
interface ViewParts {
	head: ScannedLine[];
	/**
	 * A CI job's last failed step's first lines (report.ts readStepHead): the head that matters in a
	 * job's log, given the head's share; the job's own first lines (its runner's set-up) come last.
	 */
	stepHead: ScannedLine[];
	tail: ScannedLine[];
	/** The lines above the tail a report the output ends with may start in (report.ts). */
	report?: ReportLines;
	/** The line of a CI job's last failed verdict, when it lies in the tail: what follows it is the job's own. */
	verdictLine?: number;
	/** The scan's signal lines outside the head and tail (a report holds an error among them; they never fold). */
	signals: readonly SignalItem[];
	/** Is a line between the head and the tail? */
	inMiddle: (lineNumber: number) => boolean;
	/** Problem objects of a JSON output first (the structure says they matter), then the signal lines. */
	items: SignalItem[];
	hunkOf: Map<number, Hunk>;
	shapeLines: ShapeFind[];
	/** Lines in the middle naming the subject of a signal line in the tail. */
	tailSubjects: ScannedLine[];
	/** A middle line read besides (around signal and rare lines, above the tail), by number: it may close a small gap. */
	inHand: (lineNumber: number) => ScannedLine | undefined;
	/** Error lines of the head and the tail (shown there), ranked: shown apart when the budget cuts them out of their part. */
	edgeErrors: SignalItem[];
	/** The frame the output's lines are written in (lines/frame.ts), if one was learned. */
	frame?: LineFrame;
}

function selectParts(
	scan: ScanResult,
	options: ViewOptions,
	extras: ViewExtras,
	sections: readonly Section[],
): ViewParts {
	const { headEnd, tailStart } = scan;
	const head = scan.head.filter((line) => line.lineNumber <= headEnd);
	// A CI job's tail is its failed step's (report.ts readEnd): the lines it shows are not the middle's.
	const { report, verdictLine } = extras;
	const tail = extras.tail ?? scan.tail;
	const tailFrom = Math.min(tailStart, tail.length > 0 ? tail[0].lineNumber : tailStart);
	const inMiddle = (lineNumber: number) => lineNumber > headEnd && lineNumber < tailFrom;
	const problemHunks = problemHunksOf(extras.json).filter((hunk) => inMiddle(hunk.item.lineNumber));
	const problemLines = new Set(problemHunks.map((hunk) => hunk.item.lineNumber));
	const signals = scan.signals.filter((item) => inMiddle(item.lineNumber) && !problemLines.has(item.lineNumber));
	// Each failed step's first error (usually the cause) and its last come first: the errors of a
	// step that passed, or was allowed to fail, do not crowd them out.
	const firsts = new Set<SignalItem>();
	for (const step of sections.filter((section) => section.failed !== undefined)) {
		const errors = signals.filter(
			(item) =>
				!item.instance &&
				item.severity === SEVERITY_ERROR &&
				item.lineNumber >= step.start &&
				item.lineNumber <= step.end,
		);
		if (errors.length === 0) continue;
		const byLine = [...errors].sort((a, b) => a.lineNumber - b.lineNumber);
		firsts.add(byLine[0]);
		firsts.add(byLine[byLine.length - 1]);
	}
	const items = [
		...problemHunks.map((hunk) => hunk.item),
		...firsts,
		...signals.filter((item) => !firsts.has(item)),
	].slice(0, options.maxSignalLines);
	return {
		head,
		tail,
		...(verdictLine !== undefined ? { verdictLine } : {}),
		stepHead: (extras.stepHead ?? []).filter((line) => inMiddle(line.lineNumber)),
		...(report !== undefined ? { report } : {}),
		signals: scan.signals,
		inMiddle,
		items,
		hunkOf: new Map<number, Hunk>([...extras.hunks, ...problemHunks].map((hunk) => [hunk.item.lineNumber, hunk])),
		shapeLines: extras.shapeLines.filter((line) => inMiddle(line.lineNumber)),
		tailSubjects: (extras.tailSubjects ?? []).filter((line) => inMiddle(line.lineNumber)),
		inHand: linesInHand(extras, inMiddle, keepCharsFor(options.maxLineChars)),
		edgeErrors: scan.shownSignals.filter((item) => item.severity === SEVERITY_ERROR),
		...(scan.frame !== undefined ? { frame: scan.frame } : {}),
	};
}

/**
 * The middle lines read besides the view's own (extras: above the tail, around signal lines, below
 * rare lines), by number; a line read as it is rendered only when asked for (a gap shows few).
 */
function linesInHand(
	extras: ViewExtras,
	inMiddle: (lineNumber: number) => boolean,
	keepChars: number,
): (lineNumber: number) => ScannedLine | undefined {
	const rendered = new Map((extras.above ?? []).map((line) => [line.lineNumber, line]));
	const raw = new Map<number, string>();
	for (const lines of [
		...extras.hunks.flatMap((hunk) => hunk.near ?? []),
		...extras.shapeLines.map((line) => line.near),
	])
		lines?.raw.forEach((text, k) => raw.set(lines.from + k, text));
	return (lineNumber) => {
		if (!inMiddle(lineNumber)) return undefined;
		const text = raw.get(lineNumber);
		return rendered.get(lineNumber) ?? (text === undefined ? undefined : renderLine(lineNumber, text, keepChars));
	};
}

/**
 * The lines after a failed step's verdict (lines `from` to `to`, the output's last one after them): each run of
 * them that is not a signal line as one line that counts it (they are the job's, not the failing
 * output's), signal lines as they are. `lines` are the known ones among them, in line order; a run
 * also counts the lines before the first of them that were not read (steps run after the failed one).
 */
function foldCleanup(
	from: number,
	to: number,
	lines: readonly ScannedLine[],
	format: (line: ScannedLine) => string,
): HeadRow[] {
	const rows: HeadRow[] = [];
	let runStart = from;
	const flush = (end: number) => {
		if (end < runStart) return;
		rows.push({
			lineNumber: runStart,
			text: `  ... ${plural(end - runStart + 1, "line")} after the failed step's verdict: the job's own last steps ...`,
			lines: end - runStart + 1,
			lastLine: end,
		});
	};
	for (const line of lines) {
		if (!line.signal) continue;
		flush(line.lineNumber - 1);
		rows.push({ lineNumber: line.lineNumber, text: format(line) });
		runStart = line.lineNumber + 1;
	}
	flush(to);
	return rows;
}

/**
 * What room is left after everything else shows of the report an output ends with (report.ts),
 * joined to the tail shown whole: from the earliest line that opens a step and has an error signal
 * line below it, when the report from there fits (when the only error lines are in the tail,
 * `tailFails`, from the last line that opens a step, if the report from there has no more rows than
 * the tail, `tailRowCount`); when none does, the last such line and the lines
 * after it (half the room) as the report's start, and the lines above the tail as the rest allows
 * (in a CI job's failed step, only those: the step's start is its head; so too the lines a tail that
 * is one run reaches past it to).
 */
interface ChosenReport {
	/** Rows shown before the tail's (runs of one shape folded, as the tail's are). */
	tailRows: HeadRow[];
	/** Rows shown as the report's start, above a cut. */
	startRows: HeadRow[];
	/** Characters they take. */
	size: number;
}

function chooseReport(
	report: ReportLines,
	signals: readonly SignalItem[],
	tailFails: boolean,
	tailRowCount: number,
	room: number,
	format: (line: ScannedLine) => string,
	paidFor: (lineNumber: number) => number,
): ChosenReport | undefined {
	// A report is about a failure: an error signal line lies below where it starts.
	let lastError = 0;
	for (const item of signals) if (item.severity === SEVERITY_ERROR) lastError = Math.max(lastError, item.lineNumber);
	// Signal lines never fold into a run.
	const signalLines = new Set(signals.map((item) => item.lineNumber));
	const rows = foldRuns(
		report.lines.map((line) => (signalLines.has(line.lineNumber) ? { ...line, signal: true as const } : line)),
		format,
	);
	const rowOf = new Map(rows.map((row, index) => [row.lineNumber, index]));
	const starts = report.openers.map((opener) => report.lines[opener].lineNumber).filter((line) => rowOf.has(line));
	const holdingErrors = starts.filter((line) => lastError >= line);
	// With its error lines in the tail only, the failure happened in the last step that opens above
	// it: that step is the report (`Found one Java-level deadlock:` above the runner's `Killed`), when
	// it is no longer than the tail (a step's whole log is not the failure's report).
	let openers = holdingErrors.map((line) => rowOf.get(line) as number);
	const lastStart = rowOf.get(starts[starts.length - 1]);
	if (openers.length === 0 && tailFails && lastStart !== undefined && rows.length - lastStart <= tailRowCount)
		openers = [lastStart];
	const texts = rows.map((row) => row.text);
	// What each row costs beyond what its lines were paid for already (they are shown once, here).
	const costs = rows.map((row) => {
		let paid = 0;
		for (let line = row.lineNumber; line <= (row.lastLine ?? row.lineNumber); line++) paid += paidFor(line);
		return Math.max(0, row.text.length + 1 - paid);
	});
	// Sizes from each row to the end of the report.
	const fromHere = new Array<number>(texts.length + 1).fill(0);
	for (let k = texts.length - 1; k >= 0; k--) fromHere[k] = fromHere[k + 1] + costs[k];
	const sizeOfRows = (from: number, to: number) => fromHere[from] - fromHere[to];
	for (const opener of openers) {
		if (fromHere[opener] <= room) return { tailRows: rows.slice(opener), startRows: [], size: fromHere[opener] };
	}
	// Too long to show whole: in a CI job's failed step, its end (its start is the step's head, shown
	// apart); else the last opener and the lines after it, then its end, as room allows.
	let start = rows.length;
	let startEnd = rows.length;
	if (report.inFailedStep === true || report.pastRuns === true) {
		start = 0;
		startEnd = 0;
	} else if (openers.length > 0) {
		start = openers[openers.length - 1];
		startEnd = start;
		while (startEnd < rows.length && sizeOfRows(start, startEnd + 1) <= Math.floor(room / 2)) startEnd++;
		if (startEnd === start) return undefined;
	} else {
		return undefined;
	}
	const startSize = sizeOfRows(start, startEnd);
	let from = rows.length;
	while (from > startEnd && sizeOfRows(from - 1, rows.length) + startSize <= room) from--;
	return {
		tailRows: rows.slice(from),
		startRows: rows.slice(start, startEnd),
		size: startSize + sizeOfRows(from, rows.length),
	};
}

/** The view's fixed lines and notices, whatever the budget leaves of the parts. */
interface ViewFrame {
	headerFor: (signalCount: number) => string;
	noteLine?: string;
	rerunLines: readonly string[];
	statusLine?: string;
	footer: string;
	keyLines: string[];
	gapNotice: (omitted: number, dropped: string) => string;
	droppedNote: (head: number, signals: number, tail: number) => string;
	tailNotice: (count: number) => string;
}

function frameView(
	scan: ScanResult,
	options: ViewOptions,
	extras: ViewExtras,
	signalCount: number,
	width: number,
	sections: readonly Section[],
): ViewFrame {
	const { thresholdChars } = options;
	const source = options.id
		? formatIdTag(options.id)
		: formatNotice(
				`full output could not be stored (${toOneLine(options.storeError ?? "unknown error", MAX_STORE_ERROR_CHARS)}); this view is all that is kept —`,
			);
	const footer = options.id ? formatQueryFooter(options.id) : NOTHING_STORED_NOTE;
	const stopped = scan.signalSearchStopped
		? `; signal search stopped at line ${scan.signalSearchStopped.atLine} of ${scan.totalLines} after ${scan.signalSearchStopped.afterMs} ms (signalPattern too slow)`
		: "";
	const headerFor = (count: number): string => {
		const truncated = options.truncatedNote ? ` (${toOneLine(options.truncatedNote, MAX_NOTE_CHARS)})` : "";
		return `${source} ${toOneLine(options.toolName, MAX_TOOL_NAME_CHARS)} output: ${plural(scan.totalLines, "line")}, ${scan.totalBytes} bytes${truncated} — showing head, ${plural(count, "signal line")}, tail${stopped}`;
	};
	const noteLine = options.sourceNote ? formatNote(toOneLine(options.sourceNote, MAX_NOTE_CHARS)) : undefined;
	const statusLine = options.statusLine ? toOneLine(options.statusLine, MAX_NOTE_CHARS) : undefined;
	const rerunLines = options.rerunLines ?? [];
	// The most decisive lines, anywhere (head and tail included), right under the header, within
	// KEY_SHARE of the room the essentials leave.
	const essentials =
		headerFor(signalCount).length +
		footer.length +
		(noteLine?.length ?? 0) +
		(statusLine?.length ?? 0) +
		sizeOf(rerunLines) +
		200;
	const keyRoom = Math.floor(Math.max(0, thresholdChars - essentials) * KEY_SHARE);
	const keyCandidates = findKeyLines(scan, options).map(
		(item) => `  key ${formatLine({ ...item, count: 1, similar: undefined } as SignalItem, width, KEY_LINE_CHARS)}`,
	);
	const keyLines = keyCandidates.slice(0, takeFromStart(keyCandidates, keyRoom));
	// The JSON outline and the steps line, each within what the key lines may take, or not at all.
	for (const line of [outlineLine(extras.json), stepsLine(scan, sections)]) {
		if (line === undefined || keyRoom < MIN_OUTLINE_CHARS) continue;
		keyLines.push(keepStart(line, keyRoom));
	}
	const found =
		scan.signalMatches > 0
			? scan.signalSearchStopped
				? `; the signal pattern matched ${plural(scan.signalMatches, "line")} in the lines searched`
				: `; the signal pattern matched ${plural(scan.signalMatches, "line")} in all (head and tail too)`
			: "";
	return {
		headerFor,
		noteLine,
		rerunLines,
		statusLine,
		footer,
		keyLines,
		gapNotice: (omitted, dropped) => `  ... ${plural(omitted, "line")} omitted${found}${dropped} ...`,
		droppedNote: (head, signals, tail) => {
			const notes: string[] = [];
			if (head > 0) notes.push(`${head} head`);
			if (signals > 0) notes.push(`${signals} signal`);
			if (tail > 0) notes.push(`${tail} tail`);
			return notes.length > 0
				? `; ${notes.join(", ")} line${head + signals + tail === 1 ? "" : "s"} dropped to fit ${thresholdChars} chars`
				: "";
		},
		tailNotice: (count) => `  ... tail (last ${plural(count, "line")}) ...`,
	};
}

/** What of each part fits: the rows shown and how many. */
interface Allotment {
	/** The report the output ends with, as far as room was left for it. */
	report: ChosenReport | undefined;
	/** Head rows offered (behind a failed step's head, the job's own first JOB_HEAD_LINES): those not shown were dropped to fit. */
	headOffered: number;
	/** The rows of a failed step's head shown. */
	stepHeadRows: HeadRow[];
	headRows: HeadRow[];
	headCount: number;
	tailRows: HeadRow[];
	tailText: string[];
	tailCount: number;
	signalText: string[];
	shownItems: SignalItem[];
	/** Rows around a shown signal line (its hunk) or a shown rare line (its block), by that line's number. */
	context: Map<number, Row[]>;
	shapeText: string[];
	shapeCount: number;
	/** Error lines of the head or the tail the budget cut out of their part, shown among the middle's lines. */
	edgeRows: Row[];
	/** Lines left out between two shown parts, few enough to show with the room left (gapsOf). */
	gapRows: Row[];
}

/**
 * Shares `room` out: first each part within its share, then what is left: error lines and their
 * context, tail, the other signal lines, their context (best hunk first, a few lines at a time),
 * shape lines, head, the report; last, the few lines left out between two shown parts (gapsOf),
 * where no signal line is among them. An error's own lines (its message, its location, the lines that name its
 * subject) say more than the tail's oldest lines do: under a tight budget the tail keeps its share
 * and gives up the rest before they do. A line of a shape of its own says more than the head's
 * lines past its share: a larger budget must not show the head whole and lose the odd line.
 */
function allotRoom(
	parts: ViewParts,
	room: number,
	width: number,
	format: (line: ScannedLine, separator?: LineSeparator) => string,
): Allotment {
	const { head, tail, items, hunkOf, shapeLines } = parts;
	// After a failed step's verdict, the job's own last steps (the runner's cleanup) fold into a
	// line that counts them, but for their signal lines and the output's last line.
	const verdictIndex =
		parts.verdictLine === undefined ? -1 : tail.findIndex((line) => line.lineNumber === parts.verdictLine);
	const cleanup = verdictIndex >= 0 ? tail.slice(verdictIndex + 1, -1) : [];
	const lastLine = tail.length > 0 ? tail[tail.length - 1].lineNumber : 0;
	const folded = verdictIndex >= 0 && lastLine - 1 - tail[verdictIndex].lineNumber >= MIN_CLEANUP_FOLD_LINES;
	const proper = folded ? tail.slice(0, verdictIndex + 1) : tail;
	const foldable = Math.max(0, proper.length - TAIL_UNFOLDED_LINES);
	const tailRows: HeadRow[] = [
		...foldRuns(proper.slice(0, foldable), format),
		...proper.slice(foldable).map((line) => ({ lineNumber: line.lineNumber, text: format(line) })),
		...(folded
			? [
					...foldCleanup(tail[verdictIndex].lineNumber + 1, lastLine - 1, cleanup, format),
					{ lineNumber: tail[tail.length - 1].lineNumber, text: format(tail[tail.length - 1]) },
				]
			: []),
	];
	const tailText = tailRows.map((row) => row.text);
	// The last line is always shown: when it alone is too long, it is clipped harder.
	const last = tailText.length - 1;
	if (last >= 0 && tailText[last].length + 1 > Math.max(40, room)) {
		tailText[last] = formatLine(tail[tail.length - 1], width, Math.max(1, Math.max(40, room) - width - 40));
	}
	const budget = room;
	let tailCount = takeFromEnd(
		tailText,
		Math.max(Math.floor(budget * TAIL_SHARE), last >= 0 ? tailText[last].length + 1 : 0),
	);
	room -= sizeOf(tailText.slice(tailText.length - tailCount));
	// What each line between the head and the tail costs, paid once: a line shown twice (a signal
	// line in another's context, a rare line in a block) is printed once, its longest text counted. A
	// row shown for itself (a signal line, a rare line, a line naming a tail signal's subject) is
	// `apart`: it may start a run of its own, and pays for the `--` above it.
	const paid = new Map<number, number>();
	const sizeOfRow = (row: CostRow) => row.text.length + 1 + (row.apart === true ? SEPARATOR_CHARS : 0);
	const costOf = (rows: readonly CostRow[]) => {
		let cost = 0;
		for (const row of rows) cost += Math.max(0, sizeOfRow(row) - (paid.get(row.lineNumber) ?? 0));
		return cost;
	};
	const pay = (rows: readonly CostRow[]) => {
		let cost = 0;
		for (const row of rows) {
			const before = paid.get(row.lineNumber) ?? 0;
			if (sizeOfRow(row) <= before) continue;
			cost += sizeOfRow(row) - before;
			paid.set(row.lineNumber, sizeOfRow(row));
		}
		room -= cost;
	};
	/** How many of `rows` from the start fit in `limit` more characters, each paid once. */
	const fitFromStart = (rows: readonly CostRow[], from: number, limit: number) => {
		let count = from;
		let used = 0;
		const seen = new Map<number, number>();
		for (let k = from; k < rows.length; k++) {
			const row = rows[k];
			const before = Math.max(paid.get(row.lineNumber) ?? 0, seen.get(row.lineNumber) ?? 0);
			const cost = Math.max(0, sizeOfRow(row) - before);
			if (used + cost > limit) break;
			used += cost;
			seen.set(row.lineNumber, Math.max(before, sizeOfRow(row)));
			count++;
		}
		return count;
	};
	const signalRows = items.map((item) => ({ lineNumber: item.lineNumber, text: format(item), apart: true as const }));
	const signalText = signalRows.map((row) => row.text);
	// Other instances of a collapsed shape (ranked last) wait until everything else has had its room.
	const primary = items.findIndex((item) => item.instance);
	const primaryRows = primary < 0 ? signalRows : signalRows.slice(0, primary);
	let signalCount = fitFromStart(primaryRows, 0, Math.min(room, Math.floor(budget * SIGNAL_SHARE)));
	pay(signalRows.slice(0, signalCount));
	const context = new Map<number, Row[]>();
	// The separators a hunk's context rows add: the view reserves one for each signal line's own run,
	// and a row apart from it (a section header further up) opens another.
	const separatorsPaid = new Map<number, number>();
	// The failure's first error among the middle's: the step in progress above it is the step the failure happened in.
	let firstError = Number.POSITIVE_INFINITY;
	for (const item of items) if (item.severity === SEVERITY_ERROR) firstError = Math.min(firstError, item.lineNumber);
	/** Shows `rows` as a signal line's context when they fit: their lines and the separators they add, each paid once. */
	const offerContext = (item: SignalItem, rows: Row[]) => {
		const separators = (runsOf([item.lineNumber, ...rows.map((row) => row.lineNumber)]) - 1) * SEPARATOR_CHARS;
		const moreSeparators = Math.max(0, separators - (separatorsPaid.get(item.lineNumber) ?? 0));
		const extra = costOf(rows) + moreSeparators;
		if (extra <= 0 || extra > room) return;
		context.set(item.lineNumber, rows);
		pay(rows);
		room -= moreSeparators;
		if (moreSeparators > 0) separatorsPaid.set(item.lineNumber, separators);
	};
	/** Context for the shown signal lines `only` picks, CONTEXT_STEPS lines at a time, best hunk first, while room lasts. */
	const growContext = (only: (item: SignalItem) => boolean) => {
		for (const step of CONTEXT_STEPS) {
			for (const item of items.slice(0, signalCount)) {
				const hunk = hunkOf.get(item.lineNumber);
				if (hunk === undefined || !only(item)) continue;
				offerContext(
					item,
					contextRows(hunk, step, (line) => format(line, "-"), item.lineNumber === firstError),
				);
			}
		}
	};
	// The head's routine folds whole: lines one word apart are one run there (not in the tail, where
	// such lines may be a traceback's frames: `File "…", line N in <function>`).
	// A line's words are its own: a timestamp or a wrapper's prefix before each line adds none.
	const wordsOf = (text: string) => ownWordsOf(parts.frame, text);
	const headRows = foldRuns(head, format, oneWordApart, wordsOf);
	const headTexts = headRows.map((row) => row.text);
	// A failed step's head takes the head's share; the job's own head then waits until the end.
	const stepHeadRows = foldRuns(parts.stepHead, format, oneWordApart, wordsOf);
	const jobHeadLast = stepHeadRows.length > 0;
	let stepHeadCount = fitFromStart(stepHeadRows, 0, Math.min(room, Math.floor(budget * HEAD_SHARE)));
	pay(stepHeadRows.slice(0, stepHeadCount));
	let headCount = jobHeadLast ? 0 : takeFromStart(headTexts, Math.min(room, Math.floor(budget * HEAD_SHARE)));
	room -= sizeOf(headTexts.slice(0, headCount));
	// Error lines (ranked first) and their context before the tail grows.
	let errorsEnd = 0;
	while (errorsEnd < primaryRows.length && items[errorsEnd].severity === SEVERITY_ERROR) errorsEnd++;
	if (errorsEnd > signalCount) {
		const grownErrors = fitFromStart(primaryRows.slice(0, errorsEnd), signalCount, room);
		pay(signalRows.slice(signalCount, grownErrors));
		signalCount = grownErrors;
	}
	// An error line of the head or the tail is an error line wherever its part is cut: those the parts'
	// shares leave out are shown among the middle's lines (a part that grows over one later shows it there).
	const headShownTo = jobHeadLast ? Number.POSITIVE_INFINITY : lastLineOf(headRows.slice(0, headCount));
	const tailShownFrom = tailCount > 0 ? tailRows[tailRows.length - tailCount].lineNumber : Number.POSITIVE_INFINITY;
	const headLast = lastLineOf(headRows);
	const edgeRows: Row[] = [];
	for (const item of parts.edgeErrors) {
		const cut = item.lineNumber <= headLast ? item.lineNumber > headShownTo : item.lineNumber < tailShownFrom;
		if (!cut) continue;
		const row = { lineNumber: item.lineNumber, text: format(item) };
		// Shown apart, it may need a separator of its own.
		if (costOf([row]) + SEPARATOR_CHARS > room) continue;
		edgeRows.push(row);
		pay([row]);
		room -= SEPARATOR_CHARS;
	}
	growContext((item) => item.severity === SEVERITY_ERROR);
	const grownTail = takeFromEnd(tailText, sizeOf(tailText.slice(tailText.length - tailCount)) + room);
	room -= sizeOf(tailText.slice(tailText.length - grownTail)) - sizeOf(tailText.slice(tailText.length - tailCount));
	tailCount = grownTail;
	const grownSignals = fitFromStart(primaryRows, signalCount, room);
	pay(signalRows.slice(signalCount, grownSignals));
	signalCount = grownSignals;

	// A line naming the subject of a tail signal line is its context: first of all context, when it fits.
	for (const line of parts.tailSubjects) {
		// A line shown for itself (a signal line, a rare line) needs no row here.
		if (hunkOf.has(line.lineNumber) || shapeLines.some((shape) => shape.lineNumber === line.lineNumber)) continue;
		const row = { lineNumber: line.lineNumber, text: format(line, "-"), apart: true as const };
		if (costOf([row]) > room) continue;
		context.set(line.lineNumber, [row]);
		pay([row]);
	}
	growContext(() => true);
	const growHead = () => {
		// Behind a failed step's head, the job's own first lines (the runner, the workflow) are a few at most.
		const texts = jobHeadLast ? headTexts.slice(0, JOB_HEAD_LINES) : headTexts;
		const grownHead = takeFromStart(texts, sizeOf(texts.slice(0, headCount)) + room);
		room -= sizeOf(headTexts.slice(headCount, grownHead));
		headCount = grownHead;
	};
	const shapeRows = shapeLines.map((line) => ({
		lineNumber: line.lineNumber,
		text: format(line),
		apart: true as const,
	}));
	const shapeText = shapeRows.map((row) => row.text);
	const blockRows = (line: ShapeFind) =>
		line.after.map((below) => ({ lineNumber: below.lineNumber, text: format(below, "-") }));
	// Each shape line with its block's first lines, to the last rare line among them: hunks.ts offers
	// no rare line a block shows, and such a line is paid where it would have been as a line of its
	// own, not after every shape line (jvm's `watchdog: no output…` under `settlement batches done`).
	const groups = shapeLines.map((line, index) => [shapeRows[index], ...blockRows(line).slice(0, line.rareBelow)]);
	const fits = fitFromStart(groups.flat(), 0, room);
	let shapeCount = 0;
	for (let at = 0; shapeCount < groups.length && at < fits; at += groups[shapeCount++].length) {
		const [row, ...below] = groups[shapeCount].slice(0, fits - at);
		pay([row, ...below]);
		if (below.length > 0) context.set(row.lineNumber, below);
	}
	// The head past its share only now: its routine took the odd lines' room (a server's start-up
	// records shown whole at 12 000 characters, its `deploy: reloading with Caddyfile.new` lost).
	if (!jobHeadLast) growHead();
	// With room left, the distinct lines a collapsed shape stands for, within INSTANCE_SHARE.
	if (primary >= 0 && signalCount >= primary) {
		const instanceRoom = Math.min(room, Math.floor(budget * INSTANCE_SHARE));
		// Distinct failures: the instances of errors' shapes (ranked before warnings' ones).
		let instancesEnd = primary;
		while (instancesEnd < items.length && items[instancesEnd].severity === SEVERITY_ERROR) instancesEnd++;
		const grown = fitFromStart(signalRows.slice(0, instancesEnd), signalCount, instanceRoom);
		pay(signalRows.slice(signalCount, grown));
		signalCount = grown;
		// A line printed again, shown at its last copy (a retry's last attempt), with its own block.
		growContext((item) => item.repeatOf !== undefined);
	}
	// A rare line's block, in the order the lines were offered: as much of each as fits, from its top
	// (the line right below an odd line says most about it, and may be a rare line of its own:
	// hunks.ts offers no rare line its block shows).
	for (const line of shapeLines.slice(0, shapeCount)) {
		const block = blockRows(line);
		const rows = block.slice(0, fitFromStart(block, 0, room));
		if (rows.length === 0) continue;
		context.set(line.lineNumber, rows);
		pay(rows);
	}
	// The step in progress above a shown signal line (`Running upgrade 0030 -> 0031`), apart from it:
	// the last of its context, with the room everything else leaves.
	for (const item of items.slice(0, signalCount)) {
		const step = hunkOf.get(item.lineNumber)?.step;
		if (step !== undefined)
			offerContext(item, [
				...(context.get(item.lineNumber) ?? []),
				{ lineNumber: step.lineNumber, text: format(step, "-") },
			]);
	}
	// What room is left goes to the report the output ends with, when the tail is shown whole.
	const report =
		parts.report !== undefined && tailCount === tailText.length
			? chooseReport(
					parts.report,
					parts.signals,
					parts.edgeErrors.some((item) => item.lineNumber > headLast),
					tailText.length,
					room,
					(line) => format(line),
					(line) => paid.get(line) ?? 0,
				)
			: undefined;
	if (report !== undefined) room -= report.size;
	// A failed step's head grows after the step's end (the report): what a failed step printed last
	// explains its failure more often than what it printed first.
	const grownStepHead = fitFromStart(stepHeadRows, stepHeadCount, room);
	pay(stepHeadRows.slice(stepHeadCount, grownStepHead));
	stepHeadCount = grownStepHead;
	if (jobHeadLast) growHead();
	// What is shown, as ranges of lines, and the few lines left out between two of them: the middle's
	// rows paid for (one line each), and the rows of the parts that fold runs (a fold is its lines).
	const shownRanges: Array<[number, number]> = [...paid.keys()].map((line) => [line, line]);
	for (const row of [
		...headRows.slice(0, headCount),
		...stepHeadRows.slice(0, stepHeadCount),
		...(report?.startRows ?? []),
		...(report?.tailRows ?? []),
		...tailRows.slice(tailRows.length - tailCount),
	])
		shownRanges.push([row.lineNumber, row.lastLine ?? row.lineNumber]);
	// A gap that holds a signal line the view left out (another instance of a collapsed shape, a line
	// ranked below those shown) stays a gap: the view chose what of it to show.
	const signalLines = new Set(parts.signals.map((item) => item.lineNumber));
	const gapRows: Row[] = [];
	for (const gap of gapsOf(shownRanges, MAX_GAP_LINES)) {
		const lines: ScannedLine[] = [];
		for (let lineNumber = gap[0]; lineNumber <= gap[1]; lineNumber++) {
			const line = parts.inHand(lineNumber);
			if (line === undefined || signalLines.has(lineNumber)) break;
			lines.push(line);
		}
		if (lines.length !== gap[1] - gap[0] + 1) continue;
		const rows = lines.map((line) => ({ lineNumber: line.lineNumber, text: format(line, "-") }));
		if (costOf(rows) > room) continue;
		pay(rows);
		gapRows.push(...rows);
	}
	return {
		report,
		headRows,
		headCount,
		headOffered: jobHeadLast ? Math.min(JOB_HEAD_LINES, headRows.length) : headRows.length,
		stepHeadRows: stepHeadRows.slice(0, stepHeadCount),
		tailRows,
		tailText,
		tailCount,
		signalText,
		shownItems: items.slice(0, signalCount),
		context,
		shapeText,
		shapeCount,
		edgeRows,
		gapRows,
	};
}

/**
 * The gaps of at most `maxLines` lines between the ranges of shown lines `ranges`, smallest first
 * (then from the top): a few lines left out say about as much as those around them and cost little.
 */
function gapsOf(ranges: ReadonlyArray<[number, number]>, maxLines: number): Array<[number, number]> {
	const sorted = [...ranges].sort((a, b) => a[0] - b[0]);
	const gaps: Array<[number, number]> = [];
	let end = Number.NEGATIVE_INFINITY;
	for (const [from, to] of sorted) {
		if (from - end - 1 >= 1 && from - end - 1 <= maxLines) gaps.push([end + 1, from - 1]);
		end = Math.max(end, to);
	}
	return gaps.sort((a, b) => a[1] - a[0] - (b[1] - b[0]) || a[0] - b[0]);
}

/** Builds the view from a finished scan and the lines read around its signal lines. */
export function buildView(
	scan: ScanResult,
	options: ViewOptions,
	extras: ViewExtras = { hunks: [], shapeLines: [] },
): string {
	const { thresholdChars, maxLineChars } = options;
	const width = lineNumberWidth(scan.totalLines);
	const format = (line: ScannedLine, separator: LineSeparator = ":") =>
		formatLine(line, width, maxLineChars, separator);
	const sections = scan.sections;
	const parts = selectParts(scan, options, extras, sections);
	const { head, tail, items, shapeLines, inMiddle } = parts;
	const frame = frameView(scan, options, extras, items.length, width, sections);
	const { noteLine, rerunLines, statusLine, footer, keyLines } = frame;
	const fixed =
		[frame.headerFor(items.length), noteLine, ...rerunLines, statusLine, footer, ...keyLines].reduce(
			(sum, line) => sum + (line === undefined ? 0 : line.length + 1),
			0,
		) +
		frame.gapNotice(Math.max(1, scan.totalLines), frame.droppedNote(head.length, items.length, scan.totalLines))
			.length +
		frame.tailNotice(scan.totalLines).length +
		// A "--" between two runs of middle lines that do not touch: a report's start is one run, a
		// failed step's head another (a row shown for itself pays for its own: allotRoom).
		2 * SEPARATOR_CHARS +
		2;
	const shown = allotRoom(parts, thresholdChars - fixed, width, format);
	const { shownItems } = shown;
	// A report shown before the tail is part of it (shown only with the tail shown whole).
	const tailRows = shown.report ? reportJoined(shown, shapeLines) : shown.tailRows;
	const tailCount = shown.report ? tailRows.length : shown.tailCount;
	const tailText = shown.report ? tailRows.map((row) => row.text) : shown.tailText;

	// The middle: signal lines with their context, and shape lines, in line order, each line once.
	// A line shown for itself wins over the same line as context.
	const middle = new Map<number, HeadRow>();
	const putIfAbsent = (row: Row) => {
		if (inMiddle(row.lineNumber) && !middle.has(row.lineNumber)) middle.set(row.lineNumber, row);
	};
	for (const row of [...shown.stepHeadRows, ...(shown.report?.startRows ?? [])]) middle.set(row.lineNumber, row);
	shownItems.forEach((item, index) => putIfAbsent({ lineNumber: item.lineNumber, text: shown.signalText[index] }));
	shapeLines
		.slice(0, shown.shapeCount)
		.forEach((line, index) => putIfAbsent({ lineNumber: line.lineNumber, text: shown.shapeText[index] }));
	for (const rows of shown.context.values()) for (const row of rows) putIfAbsent(row);
	for (const row of shown.gapRows) putIfAbsent(row);
	// A line the grown tail shows is not shown again above it.
	const firstShownTail = tailCount > 0 ? tailRows[tailRows.length - tailCount].lineNumber : scan.totalLines + 1;
	const shownHead = shown.headRows.slice(0, shown.headCount);
	const lastHead = lastLineOf(shownHead);
	// Error lines the head's or the tail's cut left out, where their part does not show them after all.
	const edgeRows = shown.edgeRows.filter((row) => row.lineNumber > lastHead && row.lineNumber < firstShownTail);
	for (const row of edgeRows) middle.set(row.lineNumber, row);
	const middleRows = [...middle.values()]
		.filter((row) => row.lineNumber < firstShownTail)
		.sort((a, b) => a.lineNumber - b.lineNumber);

	const edgeHead = edgeRows.filter((row) => row.lineNumber <= lastLineOf(shown.headRows)).length;
	const droppedHead = linesOf(shown.headRows.slice(0, shown.headOffered)) - linesOf(shownHead) - edgeHead;
	const shownTailLines = linesOf(tailRows.slice(tailRows.length - tailCount));
	const droppedTail = tail.length - shownTailLines - (edgeRows.length - edgeHead);
	const out: string[] = [frame.headerFor(shownItems.length)];
	if (noteLine) out.push(noteLine);
	out.push(...rerunLines, ...keyLines, ...shownHead.map((row) => row.text));
	const omitted = firstShownTail - lastHead - 1;
	if (omitted > 0)
		out.push(
			frame.gapNotice(
				omitted,
				frame.droppedNote(droppedHead, countStated(items) - countStated(shownItems), droppedTail),
			),
		);
	let previous = lastHead;
	for (const row of middleRows) {
		if (row.lineNumber > previous + 1 && previous > lastHead) out.push(SEPARATOR);
		out.push(row.text);
		previous = row.lastLine ?? row.lineNumber;
	}
	if (middleRows.length > 0) out.push(frame.tailNotice(shownTailLines));
	out.push(...tailText.slice(tailText.length - tailCount));
	if (statusLine) out.push(statusLine);
	out.push(footer);
	const view = out.join("\n");
	// The budget above makes this unreachable; it stays as the guarantee's last line of defence.
	return view.length <= thresholdChars
		? view
		: `${keepStart(view, thresholdChars - footer.length - 2)}\n${footer}`.slice(0, thresholdChars);
}

/**
 * The rows of a shown report (shown.report) joined to the tail's: a run folded at the end of one and
 * the start of the other is one fold, and a line of it the middle shows for itself (a signal line,
 * a rare line) keeps its notes there (its count, "a rare line").
 */
function reportJoined(shown: Allotment, shapeLines: readonly ShapeFind[]): HeadRow[] {
	const ownText = new Map<number, string>();
	shown.shownItems.forEach((item, index) => ownText.set(item.lineNumber, shown.signalText[index]));
	shapeLines.slice(0, shown.shapeCount).forEach((line, index) => {
		if (!ownText.has(line.lineNumber)) ownText.set(line.lineNumber, shown.shapeText[index]);
	});
	return joinFolds(shown.report?.tailRows ?? [], shown.tailRows).map((row) => ({
		...row,
		text: row.lines === undefined ? (ownText.get(row.lineNumber) ?? row.text) : row.text,
	}));
}

/**
 * Signal lines whose place in the view is their own: not the other instances of a collapsed shape,
 * which the line standing for them counts (a view that leaves them out dropped nothing to fit).
 */
function countStated(items: readonly SignalItem[]): number {
	let count = 0;
	for (const item of items) if (!item.instance) count++;
	return count;
}

/**
 * The most decisive lines of an output, anywhere (head and tail included): up to KEY_LINES signal
 * lines, errors before warnings, in the scan's rank order, then in line order. The view shows them
 * under its header; details.overflow.top carries them for the masking stub.
 */
export function findKeyLines(scan: ScanResult, options: Pick<ViewOptions, "maxSignalLines">): SignalItem[] {
	// Other instances of a collapsed shape are not key lines: the line that stands for them is.
	const middle = scan.signals.slice(0, options.maxSignalLines).filter((item) => !item.instance);
	const rank = (item: SignalItem) => {
		const index = middle.indexOf(item);
		return index >= 0 ? index : middle.length + scan.shownSignals.indexOf(item);
	};
	return [...middle, ...scan.shownSignals]
		.sort((a, b) => b.severity - a.severity || rank(a) - rank(b))
		.slice(0, KEY_LINES)
		.sort((a, b) => a.lineNumber - b.lineNumber);
}

/**
 * The line under the header that outlines a CI job's steps when it has several: each step's line
 * range and title, and where a failed one says it failed (`  steps: 3 — 1-5 Run gcc --version;
 * 6-439 Run make -k all: failed at line 439, Process completed with exit code 2.`). Failed steps,
 * the first and the last are named first; the others as room allows, then counted.
 */
function stepsLine(scan: ScanResult, sections: readonly Section[]): string | undefined {
	if (sections.length < 2) return undefined;
	const describe = (section: Section) =>
		`${section.start}-${section.end} ${keepStart(section.title, STEP_TITLE_CHARS)}` +
		(section.failed
			? `: failed at line ${section.failed.lineNumber}, ${keepStart(section.failed.title, STEP_TITLE_CHARS)}`
			: "");
	const named = new Set<Section>([sections[0], sections[sections.length - 1]]);
	for (const section of sections.filter((step) => step.failed).slice(0, MAX_FAILED_STEPS_NAMED)) named.add(section);
	let room = STEPS_LINE_CHARS - [...named].reduce((sum, section) => sum + describe(section).length + 2, 0);
	for (const section of sections) {
		if (named.has(section)) continue;
		const size = describe(section).length + 2;
		if (size > room) continue;
		named.add(section);
		room -= size;
	}
	const parts: string[] = [];
	let elided = 0;
	for (const section of sections) {
		if (!named.has(section)) {
			elided++;
			continue;
		}
		if (elided > 0) parts.push(`… ${plural(elided, "step")} …`);
		elided = 0;
		parts.push(describe(section));
	}
	if (elided > 0) parts.push(`… ${plural(elided, "step")} …`);
	const count = scan.steps.dropped > 0 ? `the last ${sections.length} of more` : `${sections.length}`;
	const failed = sections.filter((section) => section.failed).length;
	return keepStart(
		`  steps: ${count}${failed > 0 ? `, ${failed} failed` : ""} — ${parts.join("; ")}`,
		STEPS_LINE_CHARS,
	);
}

/** Problem objects as hunks: the object's first line stands as a signal line, the rest as its block. */
function problemHunksOf(json: JsonExtras | undefined): Hunk[] {
	if (json === undefined) return [];
	return json.problems
		.filter((entry) => entry.lines.length > 0)
		.slice(0, JSON_PROBLEMS_SHOWN)
		.map(({ problem, lines, memberLines }) => {
			const where = problem.record
				? problem.path === "$"
					? "JSON-lines record"
					: `JSON-lines record, ${problem.path}`
				: problem.path;
			const item: ProblemItem = {
				...lines[0],
				offset: -1,
				count: 1,
				severity: SEVERITY_ERROR,
				shapeCount: 1,
				json: `${where}: ${problem.reason}${kindNote(problem)}`,
			};
			// The member that makes it a problem comes first when room is short (as a block's message lines do).
			return { item, before: [], after: lines.slice(1), messages: memberLines };
		});
}

/** What kind of problem it is and how many of its kind the document holds (true of the whole document). */
function kindNote(problem: JsonProblem): string {
	if (problem.identity === undefined || problem.identityCount === undefined) return "";
	const count = problem.identityCount === 1 ? "the only one of its kind" : `${problem.identityCount} of its kind`;
	return `; ${problem.identity}, ${count}`;
}

/**
 * The line under the header that says what the structure of a JSON output is and where it says
 * something went wrong: `  json: {"summary": {2 keys}, "results": [1500 items]}; 1 object says it is a problem: $.results[31]`.
 */
function outlineLine(json: JsonExtras | undefined): string | undefined {
	if (json === undefined) return undefined;
	const parts: string[] = [];
	if (json.outline !== undefined) parts.push(keepStart(json.outline, OUTLINE_CHARS));
	if (json.problemCount > 0) {
		const first = json.problems[0].problem;
		const where = (problem: JsonProblem) =>
			keepStart(problem.record ? `the record at line ${problem.startLine}` : problem.path, OUTLINE_PATH_CHARS);
		const atLeast = json.deeperThan !== undefined ? "at least " : "";
		// Problems that name their kind: the rarest kinds first, each with how many the document holds.
		const kinds: string[] = [];
		const named = new Set<string>();
		for (const { problem } of json.problems) {
			if (problem.identity === undefined || problem.identityCount === undefined || named.has(problem.identity))
				continue;
			named.add(problem.identity);
			kinds.push(
				`${problem.identity} ×${atLeast}${problem.identityCount}: ${where(problem)} (line ${problem.startLine})`,
			);
			if (kinds.length === OUTLINE_KINDS) break;
		}
		if (json.problemCount > 1 && kinds.length > 0)
			parts.push(
				`${atLeast}${json.problemCount} objects say they are problems; by kind, the rarest first: ${kinds.join(", ")}`,
			);
		else {
			const says = json.problemCount === 1 ? "object says it is a problem" : "objects say they are problems, the first";
			parts.push(`${atLeast}${json.problemCount} ${says}: ${where(first)} (line ${first.startLine})`);
		}
	}
	if (json.deeperThan !== undefined)
		parts.push(`nested deeper than ${json.deeperThan} levels: what lies deeper was not read for problems`);
	return `  json: ${parts.join("; ")}`;
}
