// What a run of a command is remembered by, for a later run to be compared with: its signal lines
// (every one the scan kept, in line order, the most decisive first when they must be cut) and its
// verdict line (the last summary or signal line near its end, else its last line). A line of a
// common shape the scan kept only a sample of says so (shapeCount): it is compared by its shape's
// count, not one by one. Pure; bounded (MAX_RUN_SIGNALS lines of at most RUN_LINE_CHARS).

import type { ScannedLine } from "../lines/render.js";
import { keepStart } from "../lines/text.js";
import type { ScanResult } from "../scan/scan.js";
import type { SignalItem } from "../signals/collector.js";
import { SPREAD_LINES_PER_SHAPE } from "../signals/collector.js";
import type { RunLine, RunRecord } from "../store/index.js";
import type { RunIdentity } from "./run-key.js";

/** Signal lines a run keeps at most (the scan's most decisive first). */
export const MAX_RUN_SIGNALS = 512;
/** Characters of each line kept. */
export const RUN_LINE_CHARS = 300;
/** Non-blank lines at the end of the output where a verdict line is looked for. */
const VERDICT_WINDOW = 15;
/** A line that states an outcome: counts of tests or problems, or a word of success or failure. */
const VERDICT =
	/\b\d+ (?:passed|failed|failures?|errors?|warnings?|tests?|passing|failing|succeeded)\b|\b(?:fail|failed|failures?|errors?|pass|passed)\b[ \t]*[:=]?[ \t]*\d+|\b(?:success(?:ful)?|succeeded|failed|failure|aborted|BUILD)\b/i;

/** A run of a command as it is stored (RunRecord, without what it is compared with). */
export type RunSummary = Pick<RunRecord, "signals" | "verdict">;

/** The run summary of a finished scan. */
export function summarizeScan(scan: ScanResult): RunSummary {
	// The scan's rank order decides what is kept when there are too many; they are stored in line order.
	// A line printed again is one line, with its count (not its copy: collector.ts repeatOf).
	const items = [...scan.signals, ...scan.shownSignals].filter((item) => item.repeatOf === undefined);
	const kept = items.slice(0, MAX_RUN_SIGNALS).map(toRunLine);
	kept.sort((a, b) => a.line - b.line);
	const verdict = findVerdict(scan.tail);
	return { signals: kept, ...(verdict !== undefined ? { verdict } : {}) };
}

/** The stored record of a run: its identity, its summary, and what its view said of an earlier run. */
export function recordRun(identity: RunIdentity, summary: RunSummary, rerunOf?: RunRecord["rerunOf"]): RunRecord {
	return { key: identity.key, label: identity.label, ...summary, ...(rerunOf !== undefined ? { rerunOf } : {}) };
}

function toRunLine(item: SignalItem): RunLine {
	const line: RunLine = { line: item.lineNumber, text: keepStart(item.text, RUN_LINE_CHARS), count: item.count };
	// A common shape's lines are kept as a sample past SPREAD_LINES_PER_SHAPE, and counts marked atLeast are lower bounds.
	const sampled =
		(item.similar !== undefined || item.instance === true) &&
		(item.shapeCount > SPREAD_LINES_PER_SHAPE || item.atLeast === true);
	if (sampled) line.shapeCount = item.shapeCount;
	return line;
}

/**
 * The verdict: among the last VERDICT_WINDOW non-blank lines, the last that is a signal line or states
 * an outcome (`4 failed, 296 passed`, `test result: FAILED`, `BUILD SUCCESS`); else the last non-blank line.
 */
export function findVerdict(tail: readonly ScannedLine[]): RunLine | undefined {
	let seen = 0;
	let last: ScannedLine | undefined;
	for (let index = tail.length - 1; index >= 0 && seen < VERDICT_WINDOW; index--) {
		const line = tail[index];
		if (line.text.trim() === "") continue;
		seen++;
		last ??= line;
		if (line.signal === true || VERDICT.test(line.text)) return toVerdict(line);
	}
	return last === undefined ? undefined : toVerdict(last);
}

function toVerdict(line: ScannedLine): RunLine {
	return { line: line.lineNumber, text: keepStart(line.text.trim(), RUN_LINE_CHARS), count: 1 };
}
