// The report an output ends with, read back from above its tail: a failing run usually ends with a
// report longer than the tail (a test runner's failures, a compiler's error list, the failing step
// of a CI job), and the view keeps it from its start when it fits, rather than its last lines only.
// Only the lines right above the tail are read (REPORT_LOOKBACK_LINES, at most REPORT_READ_BYTES
// from the end of the output), and only when the output ends in failure; where the report starts
// is a line that opens a step (signals/blocks.ts opensStep), or, in a CI job's log, the line that
// opened its last failed step, however far up. view.ts decides how much of it fits.

import { readRange, type ByteSource } from "../io/source.js";
import { renderLine, type ScannedLine } from "../lines/render.js";
import type { ScanResult } from "../scan/scan.js";
import { opensStep } from "../signals/blocks.js";
import { SEVERITY_ERROR } from "../signals/policy.js";

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
	 * The first lines of a CI job's last failed step (signals/steps.ts), when it opens above `lines`:
	 * where the report starts (the command the step ran) when it is too long to reach.
	 */
	stepStart?: ScannedLine[];
}

/** Lines of a failed step's start read, at most. */
export const STEP_START_LINES = 6;
const STEP_START_BYTES = 8 * 1024;

/**
 * The lines above the tail that a report may start in, when the output ends in failure (an error
 * signal line among them or in the tail) and at least one of them opens a step; else undefined.
 * Read only from the bytes the scan saw (not a stored copy with its middle left out).
 */
export async function readReport(
	source: ByteSource,
	scan: ScanResult,
	keepChars: number,
): Promise<ReportLines | undefined> {
	const { headEnd, tailStart, totalLines } = scan;
	if (source.size !== scan.totalBytes || tailStart <= headEnd + 1 || tailStart > totalLines) return undefined;
	const first = Math.max(headEnd + 1, tailStart - REPORT_LOOKBACK_LINES);
	const endsInFailure = [...scan.signals, ...scan.shownSignals].some(
		(item) => item.severity === SEVERITY_ERROR && item.lineNumber >= first,
	);
	if (!endsInFailure) return undefined;
	const from = Math.max(0, source.size - REPORT_READ_BYTES);
	const pieces = (await readRange(source, from, source.size)).toString("utf8").split("\n");
	// A final newline ends the last line; a read that starts inside the output may start inside a line.
	if (pieces.length > 0 && pieces[pieces.length - 1] === "") pieces.pop();
	if (from > 0) pieces.shift();
	const firstRead = totalLines - pieces.length + 1;
	const lines: ScannedLine[] = [];
	const openers: number[] = [];
	const firstLine = Math.max(first, firstRead);
	for (let lineNumber = firstLine; lineNumber < tailStart; lineNumber++) {
		const line = renderLine(lineNumber, pieces[lineNumber - firstRead], keepChars);
		if (opensStep(line.text)) openers.push(lines.length);
		lines.push(line);
	}
	const stepStart = await readFailedStepStart(source, scan, firstLine, keepChars);
	if (openers.length === 0 && stepStart === undefined) return undefined;
	return { lines, openers, ...(stepStart !== undefined ? { stepStart } : {}) };
}

/** The first lines of the last failed step of a CI job's log, when it opens after the head and before `before`. */
async function readFailedStepStart(
	source: ByteSource,
	scan: ScanResult,
	before: number,
	keepChars: number,
): Promise<ScannedLine[] | undefined> {
	const marks = scan.steps.marks;
	let failed = marks.length - 1;
	while (failed >= 0 && marks[failed].kind !== "failed") failed--;
	let opener = failed - 1;
	while (opener >= 0 && marks[opener].kind !== "open") opener--;
	if (opener < 0) return undefined;
	const { lineNumber, offset } = marks[opener];
	if (offset < 0 || lineNumber <= scan.headEnd || lineNumber >= before) return undefined;
	const bytes = await readRange(source, offset, offset + STEP_START_BYTES);
	const pieces = bytes.toString("utf8").split("\n");
	// Whole lines only (the read may end inside one), and none at or past `before`.
	const whole = offset + bytes.length >= source.size ? pieces.length : pieces.length - 1;
	const count = Math.min(whole, STEP_START_LINES, before - lineNumber);
	return pieces.slice(0, count).map((raw, index) => renderLine(lineNumber + index, raw, keepChars));
}
