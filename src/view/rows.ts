// The rows of a view: lines taken to fit a room, and runs in the head or tail (of one shape, or of
// two or three in turn) folded into their first and last group and a count (and how many lines fit
// in so many rows folded so).
// Invariant: every row shows an output line with its own number, or stands for a run whose lines it
// counts (linesOf).

import type { ScannedLine } from "../lines/render.js";
import { FOLD_RUN_LINES, shapeOf } from "../signals/shape.js";

/** A line of the view with the output line it shows (for ordering and overlap). */
export interface Row {
	lineNumber: number;
	text: string;
}

/** How many lines from the start fit in `room` (each counted with its newline). */
export function takeFromStart(lines: readonly string[], room: number): number {
	let used = 0;
	let taken = 0;
	for (const line of lines) {
		if (used + line.length + 1 > room) break;
		used += line.length + 1;
		taken++;
	}
	return taken;
}

/** How many lines from the end fit in `room`. */
export function takeFromEnd(lines: readonly string[], room: number): number {
	let used = 0;
	let taken = 0;
	for (let i = lines.length - 1; i >= 0; i--) {
		if (used + lines[i].length + 1 > room) break;
		used += lines[i].length + 1;
		taken++;
	}
	return taken;
}

export interface HeadRow extends Row {
	/** Lines this row stands for (a folded run), when more than one. */
	lines?: number;
	lastLine?: number;
	/** The shape keys of a folded run's group of lines (one shape, or a few in turn), one per line. */
	shape?: string;
	/** Lines in a folded run's group: 1 for a run of one shape, 2 or 3 for shapes in turn. */
	period?: number;
}

/** The last output line that rows stand for (0 when there are none). */
export function lastLineOf(rows: readonly HeadRow[]): number {
	const last = rows.at(-1);
	return last === undefined ? 0 : (last.lastLine ?? last.lineNumber);
}

/** The output lines that rows stand for. */
export function linesOf(rows: readonly HeadRow[]): number {
	return rows.reduce((sum, row) => sum + (row.lines ?? 1), 0);
}

/**
 * The tail's last lines never fold: what a run printed last is shown as it was. Ten, not twenty: the
 * same counts on every tuning set and transformation, views 3 % smaller (docs/recall.md).
 */
export const TAIL_UNFOLDED_LINES = 10;

/**
 * Most lines in a group that repeats as a run: two or three shapes in turn (pip's `Collecting …`,
 * `Downloading ….metadata`, `Downloading ….whl`; a pool's `[worker 1] done …` and `[primary] worker 1
 * finished …`) fold as one shape's lines do.
 */
const MAX_FOLD_PERIOD = 3;

/** Lines [start, end) of lines of these shapes: a run whose group of `period` lines repeats, or (period 0) one line not in a run. */
interface Segment {
	start: number;
	end: number;
	period: number;
}

/** The shape key of each line as foldRuns reads them (undefined for a signal line: it joins no run). */
export function runShapes(
	lines: readonly ScannedLine[],
	wordsOf: (text: string) => string = (text) => text,
): Array<string | undefined> {
	return lines.map((line) => (line.signal ? undefined : shapeOf(wordsOf(line.text))));
}

/** Whether two lines of these shape keys go on one run. */
export type SameRun = (a: string, b: string) => boolean;

/** Lines of one shape key. */
const sameShape: SameRun = (a, b) => a === b;

/**
 * The run that starts at `start`: lines whose shapes repeat every `period` lines, FOLD_RUN_LINES
 * groups or more, the period that covers most lines (the shortest on a tie); a group of more than
 * one line has more than one shape. The line alone (period 0) when there is none. Linear: a period's
 * run that stops short of FOLD_RUN_LINES groups has fewer than FOLD_RUN_LINES × MAX_FOLD_PERIOD lines.
 */
function runAt(shapes: ReadonlyArray<string | undefined>, start: number, same: SameRun = sameShape): Segment {
	let best: Segment = { start, end: start + 1, period: 0 };
	for (let period = 1; period <= MAX_FOLD_PERIOD && start + period <= shapes.length; period++) {
		const group = shapes.slice(start, start + period);
		if (group.includes(undefined) || (period > 1 && group.every((shape) => shape === group[0]))) continue;
		let end = start + period;
		while (
			end < shapes.length &&
			shapes[end] !== undefined &&
			same(shapes[end] as string, shapes[end - period] as string)
		)
			end++;
		if (end - start >= FOLD_RUN_LINES * period && end - start > best.end - best.start) best = { start, end, period };
	}
	return best;
}

/** Lines of these shapes (runShapes) as foldRuns cuts them: runs, from the first line on, and the lines between. */
function segmentsOf(shapes: ReadonlyArray<string | undefined>, same: SameRun = sameShape): Segment[] {
	const segments: Segment[] = [];
	for (let start = 0; start < shapes.length;) {
		const segment = runAt(shapes, start, same);
		segments.push(segment);
		start = segment.end;
	}
	return segments;
}

/** Rows a run folds into: its first group, a count, its last group. */
function foldedRows(period: number): number {
	return 2 * period + 1;
}

/** Are lines of these shapes (runShapes) one run, all of them, as foldRuns folds it? */
export function isOneRun(shapes: ReadonlyArray<string | undefined>): boolean {
	const run = runAt(shapes, 0);
	return run.period > 0 && run.end === shapes.length;
}

/**
 * How many of the last of lines of these shapes (runShapes) show in at most `rows` rows, runs
 * folded as foldRuns folds them, and the rows they take: a tail whose runs fold can show the lines
 * above it (report.ts).
 */
export function fitRows(shapes: ReadonlyArray<string | undefined>, rows: number): { lines: number; rows: number } {
	let used = 0;
	let taken = 0;
	const segments = segmentsOf(shapes);
	for (let k = segments.length - 1; k >= 0 && used < rows; k--) {
		const { start, end, period } = segments[k];
		const length = end - start;
		const cost = period > 0 ? foldedRows(period) : length;
		// A run that does not fit is taken in part, its last lines unfolded, as many as rows are left.
		if (used + cost > rows) return { lines: taken + Math.min(length, rows - used), rows };
		used += cost;
		taken += length;
	}
	return { lines: taken, rows: used };
}

/**
 * Rows shown right above `below` joined to them: a run folded at the end of `above` and again at the
 * start of `below` (a report read above the tail, and the tail), its group going on in step, is one
 * fold.
 */
export function joinFolds(above: readonly HeadRow[], below: readonly HeadRow[]): HeadRow[] {
	// The fold below's first group, and the one above its last group, of one period.
	let period = 1;
	while (period < MAX_FOLD_PERIOD && below[period]?.period !== period) period++;
	const upper = above.at(-period - 1);
	const lower = below.at(period);
	if (
		upper === undefined ||
		lower === undefined ||
		upper.period !== period ||
		lower.period !== period ||
		upper.shape === undefined ||
		lower.shape !== inStep(upper.shape, lower.lineNumber - upper.lineNumber) ||
		lastLineOf(above) + 1 !== below[0].lineNumber
	)
		return [...above, ...below];
	const lastLine = lower.lastLine as number;
	const lines = lastLine - upper.lineNumber + 1;
	return [
		...above.slice(0, -period - 1),
		{ ...upper, text: foldText(lines), lines, lastLine },
		...below.slice(period + 1),
	];
}

/** A run's group (HeadRow.shape) as it stands `lines` lines further on: the same shapes, turned. */
function inStep(shape: string, lines: number): string {
	const group = shape.split("\n");
	const turn = lines % group.length;
	return [...group.slice(turn), ...group.slice(0, turn)].join("\n");
}

/** The row that stands for `count` lines of a folded run. */
function foldText(count: number): string {
	return `  ... ${count} more lines like these ...`;
}

/**
 * Head or tail lines with each run of FOLD_RUN_LINES or more lines of one shape (shapeOf: numbers,
 * quoted strings, paths and hex ids aside), or of as many groups of two or three shapes in turn,
 * folded into its first group, a count, and its last group: a head or tail of sixty `CC [M]
 * drivers/module_N.o`, of a server's JSON access records whose paths, ports and member order
 * differ, or of an install's `Collecting …` / `Downloading …` pairs, leaves room for what matters.
 * The last line stays a line of its own, and a signal line (marked by the scan) is never part of a
 * run: `failed=1` among ansible's `failed=0` recap lines stays. `same` tells which lines go on a run:
 * one shape key (the default), or, in a head, keys one word apart (shape.ts oneWordApart).
 */
export function foldRuns(
	lines: readonly ScannedLine[],
	format: (line: ScannedLine) => string,
	same: SameRun = sameShape,
	wordsOf?: (text: string) => string,
): HeadRow[] {
	const rows: HeadRow[] = [];
	// Each line's shape once (a signal line never joins a run).
	const shapes = runShapes(lines, wordsOf);
	const row = (k: number): HeadRow => ({ lineNumber: lines[k].lineNumber, text: format(lines[k]) });
	for (const { start, end, period } of segmentsOf(shapes, same)) {
		if (period === 0) {
			rows.push(row(start));
			continue;
		}
		for (let k = start; k < start + period; k++) rows.push(row(k));
		const folded = end - start - 2 * period;
		rows.push({
			lineNumber: lines[start + period].lineNumber,
			text: foldText(folded),
			lines: folded,
			lastLine: lines[end - period - 1].lineNumber,
			shape: shapes.slice(start + period, start + 2 * period).join("\n"),
			period,
		});
		for (let k = end - period; k < end; k++) rows.push(row(k));
	}
	return rows;
}
