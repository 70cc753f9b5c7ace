// The report an output ends with, read back from above its tail: a failing run usually ends with a
// report longer than the tail (a test runner's failures, a compiler's error list, the failing step
// of a CI job), and the view keeps it from its start when it fits, rather than its last lines only.
// Only the lines right above the tail are read (REPORT_LOOKBACK_LINES, at most REPORT_READ_BYTES
// from the end of the output), and only when the output ends in failure; where the report starts
// is a line that opens a step (signals/blocks.ts opensStep). A CI job's last failed step is read
// from its start (readStepHead, the view's head of that step) and, when steps ran after it, back
// from its verdict (readStepEnd, the end of its tail and its report); readEnd reads all of it at
// once and joins the failed step's end to the tail (tailOfFailedStep). view.ts decides what fits.

import { readRange, type ByteSource } from "../io/source.js";
import { renderLine, type ScannedLine } from "../lines/render.js";
import type { ScanResult } from "../scan/scan.js";
import { unframed } from "../lines/frame.js";
import { isStepInProgress, stepOpeners } from "../signals/blocks.js";
import { SEVERITY_ERROR } from "../signals/policy.js";
import { closesStepHeader, type FailedStep, lastFailedStep } from "../signals/steps.js";
import { fitRows, isOneRun, runShapes, TAIL_UNFOLDED_LINES } from "./rows.js";

/** Lines above the tail looked at for where the report starts. */
export const REPORT_LOOKBACK_LINES = 400;
/** Bytes read from the end of the output for them, at most (giant lines leave fewer lines). */
export const REPORT_READ_BYTES = 256 * 1024;

/** The lines right above an output's tail, up to it, and which of them open a step. */
export interface ReportLines {
	/** In line order; the last one is the line right above the tail. */
	lines: ScannedLine[];
	/** Indexes into `lines` of the lines that open a step, ascending. */
	openers: number[];
	/**
	 * Set when a CI job's last failed step (signals/steps.ts) opens above `lines`: they are that
	 * step's end, and its start is shown as the view's head of that step (readStepHead).
	 */
	inFailedStep?: true;
	/** Set when `lines` make up for the rows a tail's folded runs save (pastRuns): joined to it as room allows. */
	pastRuns?: true;
}

/** Bytes read of a failed step's first lines, at most. */
export const STEP_HEAD_BYTES = 64 * 1024;
/** Lines of a step's header (its command, shell and environment, up to the line that closes it) looked at, at most. */
export const STEP_HEADER_LINES = 30;

/**
 * The lines right above an output's tail, up to REPORT_LOOKBACK_LINES of them (none of the head),
 * read from its last REPORT_READ_BYTES; undefined when there are none or the scan did not see
 * these bytes (a stored copy with its middle left out).
 */
async function readAboveTail(
	source: ByteSource,
	scan: ScanResult,
	keepChars: number,
): Promise<ScannedLine[] | undefined> {
	const { headEnd, tailStart, totalLines } = scan;
	if (source.size !== scan.totalBytes || tailStart <= headEnd + 1 || tailStart > totalLines) return undefined;
	const from = Math.max(0, source.size - REPORT_READ_BYTES);
	const pieces = (await readRange(source, from, source.size)).toString("utf8").split("\n");
	// A final newline ends the last line; a read that starts inside the output may start inside a line.
	if (pieces.length > 0 && pieces[pieces.length - 1] === "") pieces.pop();
	if (from > 0) pieces.shift();
	const firstRead = totalLines - pieces.length + 1;
	const lines: ScannedLine[] = [];
	for (
		let lineNumber = Math.max(headEnd + 1, tailStart - REPORT_LOOKBACK_LINES, firstRead);
		lineNumber < tailStart;
		lineNumber++
	)
		lines.push(renderLine(lineNumber, pieces[lineNumber - firstRead], keepChars));
	return lines.length > 0 ? lines : undefined;
}

/**
 * The first error signal line of the output at line `from` or after it (Infinity when none): from
 * its start, the failure's first error, whose step in progress is the step the failure happened in.
 */
export function firstErrorLine(scan: ScanResult, from = 1): number {
	let first = Number.POSITIVE_INFINITY;
	for (const items of [scan.signals, scan.shownSignals])
		for (const item of items)
			if (item.severity === SEVERITY_ERROR && item.lineNumber >= from) first = Math.min(first, item.lineNumber);
	return first;
}

/** Does the output end in failure: an error signal line among the lines above its tail or in it? */
function endsInFailure(scan: ScanResult): boolean {
	return firstErrorLine(scan, Math.max(scan.headEnd + 1, scan.tailStart - REPORT_LOOKBACK_LINES)) < Infinity;
}

/**
 * The lines above the tail (`above`) as the report the output ends with, when it ends in failure
 * (`failing`: endsInFailure) and at least one of them opens a step or they lie in a CI job's last
 * failed step; else undefined.
 */
function reportOf(
	scan: ScanResult,
	step: FailedStep | undefined,
	above: readonly ScannedLine[] | undefined,
	failing: boolean,
): ReportLines | undefined {
	if (above === undefined || !failing) return undefined;
	const openers = openersOf(scan, above);
	const opener = step?.opener;
	const inFailedStep =
		opener !== undefined && opener.lineNumber > scan.headEnd && opener.lineNumber < above[0].lineNumber;
	if (openers.length === 0 && !inFailedStep) return undefined;
	return { lines: [...above], openers, ...(inFailedStep ? { inFailedStep: true as const } : {}) };
}

/** The lines of `lines` that open a step (blocks.ts stepOpeners), each read without the output's frame (lines/frame.ts). */
function openersOf(scan: ScanResult, lines: readonly ScannedLine[]): number[] {
	const { frame } = scan;
	return stepOpeners(frame === undefined ? lines : lines.map((line) => ({ text: unframed(frame, line.text) })));
}

/**
 * The lines above the tail from the step the failure happened in, as the report the output ends
 * with, when no line there opens a step: the last line saying what the program was doing
 * (`Running upgrade 0030 -> 0031`) before the first error signal line among them. Undefined when the
 * output does not end in failure or there is no such line.
 */
function failingStepOnwards(
	scan: ScanResult,
	above: readonly ScannedLine[] | undefined,
	failing: boolean,
): ReportLines | undefined {
	if (above === undefined || !failing) return undefined;
	const firstError = firstErrorLine(scan, above[0].lineNumber);
	for (let k = above.length - 1; k >= 0; k--)
		if (above[k].lineNumber < firstError && isStepInProgress(unframed(scan.frame, above[k].text)))
			return { lines: [...above], openers: [k] };
	return undefined;
}

/**
 * The shapes (rows.ts runShapes) of the tail's lines that fold (all but its last TAIL_UNFOLDED_LINES,
 * which view.ts folds into a run's first group, a count and its last group) when they are one run:
 * then the tail shows little but that run, and the lines above it may make up for the rows it saves
 * (pastRuns). Undefined otherwise.
 */
function tailRunShapes(tail: readonly ScannedLine[]): Array<string | undefined> | undefined {
	const shapes = runShapes(tail.slice(0, Math.max(0, tail.length - TAIL_UNFOLDED_LINES)));
	return isOneRun(shapes) ? shapes : undefined;
}

/**
 * The lines above a tail that is one run (of `tailShapes`) that make up for the rows its fold saves:
 * a tail of 300 `adding: coverage/…` lines shows three rows for them, and as room allows, the lines
 * the output printed before them (runs folded), up to as many rows in all as the tail has lines.
 * Undefined when none.
 */
function pastRuns(
	scan: ScanResult,
	above: readonly ScannedLine[],
	tailShapes: ReadonlyArray<string | undefined>,
): ReportLines | undefined {
	const lines = marked(scan, above);
	const shapes = [...runShapes(lines), ...tailShapes];
	// Lines of the tail's own run only (going on above the lines read): nothing new to show.
	if (isOneRun(shapes)) return undefined;
	const reach = Math.min(above.length, fitRows(shapes, tailShapes.length).lines - tailShapes.length);
	if (reach <= 0) return undefined;
	return { lines: lines.slice(above.length - reach), openers: [], pastRuns: true };
}

/** Lines joined to the tail: signal lines never fold (foldRuns), so the scan's are marked as in the tail. */
function marked(scan: ScanResult, lines: readonly ScannedLine[]): ScannedLine[] {
	const signalLines = new Set(scan.signals.map((item) => item.lineNumber));
	return lines.map((line) => (signalLines.has(line.lineNumber) ? { ...line, signal: true as const } : line));
}

/**
 * The first lines of a CI job's last failed step `step`, whole lines read from its
 * opening mark, up to the tail: its header (the runner's group holding the command it ran, up to
 * the line that closes that group, signals/steps.ts closesStepHeader) and `headLines` lines of what
 * it printed after it. The view shows them as that step's head, as it shows an output's first lines.
 */
async function readStepHead(
	source: ByteSource,
	scan: ScanResult,
	step: FailedStep | undefined,
	headLines: number,
	keepChars: number,
): Promise<ScannedLine[] | undefined> {
	// Only a step that opens after the scan's head and before its tail.
	const start = step?.opener;
	if (start === undefined || start.offset < 0 || headLines <= 0) return undefined;
	if (start.lineNumber <= scan.headEnd || start.lineNumber >= scan.tailStart) return undefined;
	const bytes = await readRange(source, start.offset, start.offset + STEP_HEAD_BYTES);
	const pieces = bytes.toString("utf8").split("\n");
	// Whole lines only (the read may end inside one), and none of the tail.
	const whole = start.offset + bytes.length >= source.size ? pieces.length : pieces.length - 1;
	const available = Math.min(whole, scan.tailStart - start.lineNumber);
	let header = 0;
	for (let k = 0; k < Math.min(available, STEP_HEADER_LINES); k++) {
		if (closesStepHeader(pieces[k])) {
			header = k + 1;
			break;
		}
	}
	const count = Math.min(available, header + headLines);
	return pieces.slice(0, count).map((raw, index) => renderLine(start.lineNumber + index, raw, keepChars));
}

/** Bytes of a verdict's line read, at most. */
const VERDICT_LINE_BYTES = 4096;

/**
 * A CI job's last failed step when its verdict lies between the head and the tail (the job ran
 * steps after it, `if: always()`), else undefined.
 */
function failedStepEndingAbove(
	scan: ScanResult,
	source: ByteSource,
	step: FailedStep | undefined,
): FailedStep | undefined {
	if (step === undefined || source.size !== scan.totalBytes) return undefined;
	const { verdict } = step;
	if (verdict.offset < 0 || verdict.lineNumber <= scan.headEnd + 1 || verdict.lineNumber >= scan.tailStart)
		return undefined;
	return step;
}

/**
 * The end of a CI job's last failed step whose verdict lies above the tail (failedStepEndingAbove):
 * the step's last lines up to its verdict, at most REPORT_LOOKBACK_LINES + `tailLines` of them and
 * none above the step's opener or in the head, read back from the verdict's offset.
 */
async function readStepEnd(
	source: ByteSource,
	scan: ScanResult,
	step: FailedStep,
	tailLines: number,
	keepChars: number,
): Promise<ScannedLine[]> {
	const { verdict, opener } = step;
	const from = Math.max(0, verdict.offset - REPORT_READ_BYTES);
	const [before, at] = await Promise.all([
		readRange(source, from, verdict.offset),
		readRange(source, verdict.offset, Math.min(source.size, verdict.offset + VERDICT_LINE_BYTES)),
	]);
	const pieces = before.toString("utf8").split("\n");
	// The byte before the verdict's line is its newline; a read that starts inside the output may start inside a line.
	pieces.pop();
	if (from > 0) pieces.shift();
	const firstLine = Math.max(
		opener.lineNumber,
		scan.headEnd + 1,
		verdict.lineNumber - pieces.length,
		verdict.lineNumber - REPORT_LOOKBACK_LINES - tailLines + 1,
	);
	const lines: ScannedLine[] = [];
	for (let lineNumber = firstLine; lineNumber < verdict.lineNumber; lineNumber++)
		lines.push(renderLine(lineNumber, pieces[pieces.length - (verdict.lineNumber - lineNumber)], keepChars));
	const newline = at.indexOf(0x0a);
	lines.push(renderLine(verdict.lineNumber, at.toString("utf8", 0, newline < 0 ? at.length : newline), keepChars));
	return lines;
}

/**
 * The tail of a CI job whose last step failed after the head: as many lines as the tail has, up to
 * the step's verdict, and the job's lines after it (the runner's cleanup, steps run after a failure)
 * besides. A verdict in the tail takes the lines above it from those the report read, within the
 * failed step; a verdict above the tail, the step's end read back from it (readStepEnd),
 * whose lines above the tail's become the report. Without such a step, the tail and the report.
 */
function tailOfFailedStep(
	scan: ScanResult,
	step: FailedStep | undefined,
	report: ReportLines | undefined,
	stepEnd: readonly ScannedLine[] | undefined,
): { tail: ScannedLine[]; report: ReportLines | undefined; verdictLine?: number } {
	const { tail } = scan;
	if (step === undefined) return { tail, report };
	const verdict = step.verdict.lineNumber;
	if (verdict < scan.tailStart) {
		if (stepEnd === undefined) return { tail, report };
		const lines = marked(scan, stepEnd);
		const above = lines.slice(0, Math.max(0, lines.length - tail.length));
		const openers = openersOf(scan, above);
		return {
			verdictLine: verdict,
			tail: [...lines.slice(above.length), ...tail],
			report: above.length > 0 ? { lines: above, openers, inFailedStep: true } : undefined,
		};
	}
	if (report === undefined) return { tail, report, verdictLine: verdict };
	const afterVerdict = scan.totalLines - verdict;
	// Report lines of the failed step only, right above the tail.
	let taken = 0;
	while (
		taken < Math.min(afterVerdict, report.lines.length) &&
		report.lines[report.lines.length - 1 - taken].lineNumber >= step.opener.lineNumber &&
		report.lines[report.lines.length - 1 - taken].lineNumber === scan.tailStart - 1 - taken
	)
		taken++;
	if (taken === 0) return { tail, report, verdictLine: verdict };
	const kept = report.lines.length - taken;
	const openers = report.openers.filter((index) => index < kept);
	return {
		verdictLine: verdict,
		tail: [...marked(scan, report.lines.slice(kept)), ...tail],
		report:
			kept > 0 && (openers.length > 0 || report.inFailedStep)
				? { ...report, lines: report.lines.slice(0, kept), openers }
				: undefined,
	};
}

/** What the view shows at an output's end besides its tail, read back from it (all at once). */
export interface EndLines {
	/** The report above the tail (reportOf), or above a failed step's tail. */
	report?: ReportLines;
	/** The tail, when a failed CI step's makes it other than the scan's (tailOfFailedStep). */
	tail?: ScannedLine[];
	/** The line of that step's verdict, when the tail holds it: what follows it is the job's own. */
	verdictLine?: number;
	/** A CI job's last failed step's first lines, when it opens between the head and the tail (readStepHead). */
	stepHead?: ScannedLine[];
	/** The lines right above the tail as read for the report (readAboveTail), whether or not they are one. */
	above?: ScannedLine[];
}

/**
 * The lines of an output's end that the view may show: the report above its tail and, in a CI job
 * whose step failed, that step's head and its tail ending at its verdict (with the report above it).
 */
export async function readEnd(source: ByteSource, scan: ScanResult, keepChars: number): Promise<EndLines> {
	const step = lastFailedStep(scan.steps);
	const endingAbove = failedStepEndingAbove(scan, source, step);
	// Without a failed CI step, a tail that is one run may show the lines above it instead of the rows it saves.
	const tailShapes = step === undefined ? tailRunShapes(scan.tail) : undefined;
	const failing = endsInFailure(scan);
	const [stepHead, stepEnd, above] = await Promise.all([
		readStepHead(source, scan, step, scan.head.length, keepChars),
		endingAbove === undefined ? undefined : readStepEnd(source, scan, endingAbove, scan.tail.length, keepChars),
		// With the tail a failed step's, the lines above the output's tail are not its report.
		endingAbove === undefined && (tailShapes !== undefined || failing)
			? readAboveTail(source, scan, keepChars)
			: undefined,
	]);
	// A tail that is one run shows the lines above it as far up as rows are saved: a report that opens
	// below where they reach is among them already (a title above 300 `adding:` lines).
	const fromOpener = reportOf(scan, step, above, failing);
	const reaching = tailShapes !== undefined && above !== undefined ? pastRuns(scan, above, tailShapes) : undefined;
	const coveredBy = (report: ReportLines, reach: ReportLines) =>
		report.openers.every((opener) => report.lines[opener].lineNumber >= reach.lines[0].lineNumber);
	const report =
		(fromOpener !== undefined && reaching !== undefined && coveredBy(fromOpener, reaching)
			? reaching
			: (fromOpener ?? reaching)) ?? failingStepOnwards(scan, above, failing);
	const end = tailOfFailedStep(scan, step, report, stepEnd);
	return {
		...(end.report !== undefined ? { report: end.report } : {}),
		...(end.tail !== scan.tail ? { tail: end.tail } : {}),
		...(end.verdictLine !== undefined ? { verdictLine: end.verdictLine } : {}),
		...(stepHead !== undefined && stepHead.length > 0 ? { stepHead } : {}),
		...(above !== undefined ? { above } : {}),
	};
}
