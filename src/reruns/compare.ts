// Two runs of the same command compared by their signal lines' signatures (signature.ts): which
// lines are new, which are gone (fixed), which are still there. Lines are matched as multisets,
// first by signature, then what is left by the loose signature (the same failure at another line,
// or with another count), so order, timing and line shifts never make a line new. A common shape
// the scan kept only a sample of (RunLine.shapeCount) is compared by its count. Then what a view
// shows of it under its header (bounded, the new lines first) and the full comparison overflow_query
// answers with. Pure.

import { formatNumberedLine, lineNumberWidth } from "../lines/numbered.js";
import { formatNote } from "../lines/protocol.js";
import { plural, toOneLine } from "../lines/text.js";
import { shapeOf } from "../signals/shape.js";
import type { RunCounts, RunLine } from "../store/index.js";
import { looseSignatureOf, signatureOf } from "./signature.js";

/** One side of a comparison: a run's signal lines, its verdict and Pi's status, and its stored id. */
export interface RunSide {
	/** Absent when the run was not stored (its output fit and was shown whole). */
	id?: string;
	signals: readonly RunLine[];
	verdict?: RunLine;
	/** Pi's verdict on a failed command ("Command exited with code 1"); absent when it did not fail. */
	status?: string;
	/** Lines of the output, for the width of line numbers. */
	totalLines: number;
}

/** A common shape compared by its count, not line by line. */
export interface ShapeChange {
	/** One line of the shape (the later run's when it has one). */
	text: string;
	before: number;
	after: number;
}

export interface Comparison {
	added: RunLine[];
	gone: RunLine[];
	unchanged: Array<{ before: RunLine; after: RunLine }>;
	shapes: ShapeChange[];
}

/** Characters of the lines a view shows of a comparison, at most. */
export const RERUN_VIEW_CHARS = 1_200;
/** New and gone lines a view names, at most (the rest are counted). */
const VIEW_LINES_EACH = 5;
/** Characters of each line a view shows. */
const VIEW_LINE_CHARS = 160;

/** Compares the signal lines of an earlier run with a later one's. Each line is signed once. */
export function compareRuns(before: readonly RunLine[], after: readonly RunLine[]): Comparison {
	const signatures = new Map<RunLine, string>();
	for (const line of [...before, ...after]) signatures.set(line, signatureOf(line.text));
	const exact = (line: RunLine) => signatures.get(line) as string;
	const loose = (line: RunLine) => looseSignatureOf(exact(line));
	const unchanged: Comparison["unchanged"] = [];
	let leftBefore = [...before];
	let leftAfter = [...after];
	for (const key of [exact, loose]) {
		const waiting = new Map<string, RunLine[]>();
		for (const line of leftBefore) {
			const k = key(line);
			const list = waiting.get(k);
			if (list === undefined) waiting.set(k, [line]);
			else list.push(line);
		}
		const unmatched: RunLine[] = [];
		for (const line of leftAfter) {
			const match = waiting.get(key(line))?.shift();
			if (match === undefined) unmatched.push(line);
			else unchanged.push({ before: match, after: line });
		}
		leftBefore = [...waiting.values()].flat().sort(byLine);
		leftAfter = unmatched;
	}
	const shapes = compareSampledShapes(before, after, exact);
	// Left-over lines of a shape sampled on both sides are compared by the shape's count.
	const sampledOnBoth = (line: RunLine) => {
		const change = shapes.size > 0 ? shapes.get(shapeOf(exact(line))) : undefined;
		return change !== undefined && change.before > 0 && change.after > 0;
	};
	return {
		added: leftAfter.filter((line) => !sampledOnBoth(line)).sort(byLine),
		gone: leftBefore.filter((line) => !sampledOnBoth(line)),
		unchanged: unchanged.sort((a, b) => a.after.line - b.after.line),
		shapes: [...shapes.values()].filter((change) => change.before > 0 && change.after > 0),
	};
}

/** The shapes either run kept only a sample of, with their counts on both sides (none: no shape is signed). */
function compareSampledShapes(
	before: readonly RunLine[],
	after: readonly RunLine[],
	signature: (line: RunLine) => string,
): Map<string, ShapeChange> {
	const shapes = new Map<string, ShapeChange>();
	if (![...before, ...after].some((line) => line.shapeCount !== undefined)) return shapes;
	const shapeOfLine = new Map<RunLine, string>();
	for (const line of [...before, ...after]) shapeOfLine.set(line, shapeOf(signature(line)));
	for (const line of [...before, ...after])
		if (line.shapeCount !== undefined)
			shapes.set(shapeOfLine.get(line) as string, { text: line.text, before: 0, after: 0 });
	for (const line of before) {
		const change = shapes.get(shapeOfLine.get(line) as string);
		if (change !== undefined) change.before = Math.max(change.before, line.shapeCount ?? 0);
	}
	for (const line of after) {
		const change = shapes.get(shapeOfLine.get(line) as string);
		if (change === undefined) continue;
		change.after = Math.max(change.after, line.shapeCount ?? 0);
		change.text = line.text;
	}
	return shapes;
}

/** The comparison's counts, as a run record keeps them. */
export function countChanges(comparison: Comparison): RunCounts {
	return { new: comparison.added.length, gone: comparison.gone.length, still: comparison.unchanged.length };
}

/** The counts as every answer and view says them: "1 new, 2 gone, 3 still there". */
export function formatCounts(counts: RunCounts): string {
	return `${counts.new} new, ${counts.gone} gone, ${counts.still} still there`;
}

/** True when the comparison found nothing new and nothing gone (counts of common shapes aside). */
export function isUnchanged(comparison: Comparison): boolean {
	return comparison.added.length === 0 && comparison.gone.length === 0;
}

/** Pi's status as a short phrase: `exit code 1`, or `no error` for a run that did not fail. */
export function describeStatus(status: string | undefined): string {
	if (status === undefined) return "no error";
	const code = /exited with code (-?\d+)/.exec(status);
	return code ? `exit code ${code[1]}` : toOneLine(status, 60);
}

/** Which earlier run the comparison is with, in words. */
function describeEarlier(earlier: RunSide): string {
	return earlier.id !== undefined ? `id=${earlier.id}` : "its output fit and was shown whole";
}

/**
 * What a re-run's view shows under its header: one line when nothing changed; else the counts, the
 * new lines (numbered as in this output), the gone ones (numbered as in the earlier one), and the
 * verdict before and after; at most RERUN_VIEW_CHARS.
 */
export function formatRerunLines(comparison: Comparison, earlier: RunSide, later: RunSide): string[] {
	const statusChange =
		earlier.status === later.status
			? `${describeStatus(later.status)} again`
			: `${describeStatus(earlier.status)} → ${describeStatus(later.status)}`;
	const { added, gone, unchanged } = comparison;
	if (isUnchanged(comparison)) {
		const same =
			unchanged.length === 0 ? "no signal lines either time" : `the same ${plural(unchanged.length, "signal line")}`;
		return [
			formatNote(
				`re-run: nothing changed since the last run of this command (${describeEarlier(earlier)}): ${same}, ${statusChange}`,
			),
		];
	}
	const out = [
		formatNote(
			`re-run: since the last run of this command (${describeEarlier(earlier)}): ${formatCounts(countChanges(comparison))}; ${statusChange}`,
		),
	];
	let room = RERUN_VIEW_CHARS - out[0].length - 1;
	const push = (line: string): boolean => {
		if (line.length + 1 > room) return false;
		out.push(line);
		room -= line.length + 1;
		return true;
	};
	const laterWidth = lineNumberWidth(later.totalLines);
	const earlierWidth = lineNumberWidth(earlier.totalLines);
	let shownAdded = 0;
	for (const line of added.slice(0, VIEW_LINES_EACH)) {
		if (!push(`  new  ${formatNumberedLine(line.line, ":", toOneLine(line.text, VIEW_LINE_CHARS), laterWidth)}`)) break;
		shownAdded++;
	}
	let shownGone = 0;
	for (const line of gone.slice(0, VIEW_LINES_EACH)) {
		if (!push(`  gone ${formatNumberedLine(line.line, ":", toOneLine(line.text, VIEW_LINE_CHARS), earlierWidth)}`))
			break;
		shownGone++;
	}
	const more: string[] = [];
	if (added.length > shownAdded) more.push(`${added.length - shownAdded} more new`);
	if (gone.length > shownGone) more.push(`${gone.length - shownGone} more gone`);
	if (gone.length > 0 && earlier.id !== undefined) more.push(`gone lines are numbered as in id=${earlier.id}`);
	if (more.length > 0) push(`  (${more.join("; ")}; overflow_query with since="${earlier.id ?? "…"}" lists them all)`);
	const verdictBefore = earlier.verdict?.text;
	const verdictAfter = later.verdict?.text;
	if (verdictBefore !== undefined && verdictAfter !== undefined && verdictBefore !== verdictAfter)
		push(
			`  verdict: ${toOneLine(verdictBefore, VIEW_LINE_CHARS / 2)} → ${toOneLine(verdictAfter, VIEW_LINE_CHARS / 2)}`,
		);
	return out;
}

/**
 * The full comparison overflow_query answers with (`since`): every new and gone line, the unchanged
 * ones with their line numbers on both sides, common shapes' counts, verdicts and statuses, within
 * `maxChars` (what does not fit is counted, never cut mid-line).
 */
export function formatComparison(
	comparison: Comparison,
	earlier: RunSide & { id: string },
	later: RunSide & { id: string },
	maxChars: number,
): { text: string; truncated: boolean } {
	const { added, gone, unchanged, shapes } = comparison;
	const laterWidth = lineNumberWidth(later.totalLines);
	const earlierWidth = lineNumberWidth(earlier.totalLines);
	const head = [
		`[pi-overflow id=${later.id}] compared with the earlier run id=${earlier.id}: ${formatCounts(countChanges(comparison))} (signal lines, compared without timestamps, durations, addresses, PIDs and temp paths)`,
		`  status: ${describeStatus(earlier.status)} → ${describeStatus(later.status)}`,
	];
	if (earlier.verdict !== undefined || later.verdict !== undefined)
		head.push(
			`  verdict: ${earlier.verdict ? `${earlier.verdict.line}: ${toOneLine(earlier.verdict.text, 200)}` : "(none)"} → ${later.verdict ? `${later.verdict.line}: ${toOneLine(later.verdict.text, 200)}` : "(none)"}`,
		);
	const sections: Array<{ title: string; lines: string[] }> = [
		{
			title: `new (numbered as in id=${later.id}):`,
			lines: added.map((line) => `  ${formatNumberedLine(line.line, ":", toOneLine(line.text, 300), laterWidth)}`),
		},
		{
			title: `gone (numbered as in id=${earlier.id}):`,
			lines: gone.map((line) => `  ${formatNumberedLine(line.line, ":", toOneLine(line.text, 300), earlierWidth)}`),
		},
		{
			title: `still there (line in id=${earlier.id} → line in id=${later.id}):`,
			lines: unchanged.map(
				({ before, after }) =>
					`  ${before.line} → ${after.line}: ${toOneLine(after.text, 300)}${before.count !== after.count ? ` [×${before.count} → ×${after.count}]` : ""}`,
			),
		},
		{
			title: "common shapes, compared by count (too many lines to compare one by one):",
			lines: shapes.map((change) => `  ×${change.before} → ×${change.after}: ${toOneLine(change.text, 300)}`),
		},
	];
	const footer = `[use overflow_query with id=${later.id} or id=${earlier.id}: search (regex), lines {start,end} to read around a line]`;
	let room = maxChars - footer.length - 1 - head.reduce((sum, line) => sum + line.length + 1, 0);
	const out = [...head];
	let truncated = false;
	for (const section of sections) {
		if (section.lines.length === 0) continue;
		const title = `${section.title}`;
		if (title.length + 1 > room) {
			truncated = true;
			break;
		}
		out.push(title);
		room -= title.length + 1;
		let shown = 0;
		for (const line of section.lines) {
			// Room for a closing count of what is left.
			if (line.length + 1 > room - 60) break;
			out.push(line);
			room -= line.length + 1;
			shown++;
		}
		if (shown < section.lines.length) {
			const note = `  ... ${section.lines.length - shown} more not shown (narrow with search on either id)`;
			out.push(note);
			room -= note.length + 1;
			truncated = true;
		}
	}
	out.push(footer);
	return { text: out.join("\n").slice(0, maxChars), truncated };
}

function byLine(a: RunLine, b: RunLine): number {
	return a.line - b.line;
}
