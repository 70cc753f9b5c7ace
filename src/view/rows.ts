// The rows of a view: lines taken to fit a room, and runs of one shape in the head or tail folded
// into their first and last line and a count (and how many lines fit in so many rows folded so).
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
	/** The shape key of a folded run's lines. */
	shape?: string;
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

/** The tail's last lines never fold: what a run printed last is shown as it was. */
export const TAIL_UNFOLDED_LINES = 20;

/** Rows a run of `lines` lines of one shape takes in foldRuns: its first and last line and a count. */
const FOLDED_RUN_ROWS = 3;

/** The shape key of each line as foldRuns reads them (undefined for a signal line: it joins no run). */
export function runShapes(lines: readonly ScannedLine[]): Array<string | undefined> {
	return lines.map((line) => (line.signal ? undefined : shapeOf(line.text)));
}

/** Lines of the run of one shape that lines of these shapes (runShapes) start with; none when the first is a signal line. */
export function leadingRun(shapes: ReadonlyArray<string | undefined>): number {
	if (shapes.length === 0 || shapes[0] === undefined) return 0;
	let length = 1;
	while (length < shapes.length && shapes[length] === shapes[0]) length++;
	return length;
}

/**
 * How many of the last of lines of these shapes (runShapes) show in at most `rows` rows, runs of one
 * shape folded as foldRuns folds them, and the rows they take: a tail whose runs fold can show the
 * lines above it (report.ts).
 */
export function fitRows(shapes: ReadonlyArray<string | undefined>, rows: number): { lines: number; rows: number } {
	let used = 0;
	let taken = 0;
	for (let end = shapes.length; end > 0 && used < rows;) {
		// The run that ends at `end` (a signal line is a run of one).
		let start = end - 1;
		if (shapes[start] !== undefined) while (start > 0 && shapes[start - 1] === shapes[end - 1]) start--;
		const length = end - start;
		const cost = length >= FOLD_RUN_LINES ? FOLDED_RUN_ROWS : length;
		// A run that does not fit is taken in part, its last lines unfolded, as many as rows are left.
		if (used + cost > rows) return { lines: taken + Math.min(length, rows - used), rows };
		used += cost;
		taken += length;
		end = start;
	}
	return { lines: taken, rows: used };
}

/**
 * Rows shown right above `below` joined to them: a run of one shape folded at the end of `above`
 * and again at the start of `below` (a report read above the tail, and the tail) is one fold.
 */
export function joinFolds(above: readonly HeadRow[], below: readonly HeadRow[]): HeadRow[] {
	const upper = above.at(-2);
	const lower = below.at(1);
	const joins =
		above.length >= 3 &&
		below.length >= 3 &&
		upper?.shape !== undefined &&
		upper.shape === lower?.shape &&
		lastLineOf(above) + 1 === below[0].lineNumber;
	if (!joins) return [...above, ...below];
	const lastLine = lastLineOf(below.slice(0, 2));
	const lines = lastLine - upper.lineNumber + 1;
	return [...above.slice(0, -2), { ...upper, text: foldText(lines), lines, lastLine }, ...below.slice(2)];
}

/** The row that stands for `count` lines of a folded run. */
function foldText(count: number): string {
	return `  ... ${count} more lines like these ...`;
}

/**
 * Head or tail lines with each run of FOLD_RUN_LINES or more lines of one shape (shapeOf: numbers,
 * quoted strings, paths and hex ids aside) folded into its first line, a count, and its last line:
 * a head or tail of sixty `CC [M] drivers/module_N.o`, or of a server's JSON access records whose
 * paths, ports and member order differ, leaves room for what matters. The last line stays a line
 * of its own, and a signal line (marked by the scan) is never part of a run: `failed=1` among
 * ansible's `failed=0` recap lines stays.
 */
export function foldRuns(lines: readonly ScannedLine[], format: (line: ScannedLine) => string): HeadRow[] {
	const rows: HeadRow[] = [];
	// Each line's shape once (a signal line never joins a run).
	const shapes = runShapes(lines);
	for (let i = 0; i < lines.length;) {
		let j = i + 1;
		if (shapes[i] !== undefined) while (j < lines.length && shapes[j] === shapes[i]) j++;
		if (j - i >= FOLD_RUN_LINES) {
			rows.push({ lineNumber: lines[i].lineNumber, text: format(lines[i]) });
			rows.push({
				lineNumber: lines[i + 1].lineNumber,
				text: foldText(j - i - 2),
				lines: j - i - 2,
				lastLine: lines[j - 2].lineNumber,
				shape: shapes[i],
			});
			rows.push({ lineNumber: lines[j - 1].lineNumber, text: format(lines[j - 1]) });
		} else {
			for (let k = i; k < j; k++) rows.push({ lineNumber: lines[k].lineNumber, text: format(lines[k]) });
		}
		i = j;
	}
	return rows;
}
