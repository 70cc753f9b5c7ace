// The rows of a view: lines taken to fit a room, a hunk's context rows, and runs of one shape in
// the head or tail folded into their first and last line and a count. Invariant: every row shows
// an output line with its own number, or stands for a run whose lines it counts (linesOf).

import type { Hunk } from "./hunks.js";
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

/**
 * A hunk's context rows, at most `limit`: its section header and the message lines of a block it
 * opens first (they name what failed), then a line further up naming its subject, then its block
 * in order, then the lines just above it.
 */
export function contextRows(hunk: Hunk, limit: number, format: (line: ScannedLine) => string): Row[] {
	const byPriority = [
		...(hunk.header ? [hunk.header] : []),
		...hunk.messages,
		...(hunk.subject ?? []),
		...hunk.after,
		...[...hunk.before].reverse(),
	];
	return byPriority
		.slice(0, limit)
		.sort((a, b) => a.lineNumber - b.lineNumber)
		.map((line) => ({ lineNumber: line.lineNumber, text: format(line) }));
}

export interface HeadRow extends Row {
	/** Lines this row stands for (a folded run), when more than one. */
	lines?: number;
	lastLine?: number;
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
	const shapes = lines.map((line) => (line.signal ? undefined : shapeOf(line.text)));
	for (let i = 0; i < lines.length;) {
		let j = i + 1;
		if (shapes[i] !== undefined) while (j < lines.length && shapes[j] === shapes[i]) j++;
		if (j - i >= FOLD_RUN_LINES) {
			rows.push({ lineNumber: lines[i].lineNumber, text: format(lines[i]) });
			rows.push({
				lineNumber: lines[i + 1].lineNumber,
				text: `  ... ${j - i - 2} more lines like these ...`,
				lines: j - i - 2,
				lastLine: lines[j - 2].lineNumber,
			});
			rows.push({ lineNumber: lines[j - 1].lineNumber, text: format(lines[j - 1]) });
		} else {
			for (let k = i; k < j; k++) rows.push({ lineNumber: lines[k].lineNumber, text: format(lines[k]) });
		}
		i = j;
	}
	return rows;
}
