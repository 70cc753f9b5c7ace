// Line numbers across a stored copy whose middle was left out (maxEntryBytes). The model only ever
// sees the output's own line numbers; the stored copy numbers its lines from 1 with one marker line
// standing for the middle. Pure. Invariant: stored lines before the marker keep their numbers, the
// stored line after it is the output's `firstTailLine`, and the marker line itself is no output line.

import type { EntryGap } from "./index.js";

/** The output's number of a stored line; undefined for the marker line. */
export function toOutputLine(gap: EntryGap | undefined, storedLine: number): number | undefined {
	if (gap === undefined || storedLine < gap.markerLine) return storedLine;
	if (storedLine === gap.markerLine) return undefined;
	return storedLine - gap.markerLine - 1 + gap.firstTailLine;
}

/** The stored line that holds (the start of) an output line; undefined when it was left out wholly. */
export function toStoredLine(gap: EntryGap | undefined, outputLine: number): number | undefined {
	if (gap === undefined || outputLine <= gap.markerLine - 1) return outputLine;
	if (outputLine >= gap.firstTailLine) return outputLine - gap.firstTailLine + gap.markerLine + 1;
	return undefined;
}

/** The output lines left out wholly, or undefined when none was (only the middle of one long line). */
export function findLeftOutLines(
	gap: Pick<EntryGap, "markerLine" | "firstTailLine"> | undefined,
): { from: number; to: number } | undefined {
	if (gap === undefined) return undefined;
	const from = gap.markerLine;
	const to = gap.firstTailLine - 1;
	return to >= from ? { from, to } : undefined;
}

/** One phrase for answers: which lines the stored copy lacks and why. */
export function describeLeftOut(gap: EntryGap): string {
	const range = findLeftOutLines(gap);
	const lines =
		range === undefined
			? `part of line ${gap.markerLine - 1}`
			: range.from === range.to
				? `line ${range.from}`
				: `lines ${range.from}–${range.to}`;
	return `${lines} (${gap.leftOutBytes} bytes) were left out of the stored copy (larger than maxEntryBytes) and cannot be read back`;
}

/** What a view says about a stored copy that left out the middle. */
export function describeCapNote(gap: Pick<EntryGap, "markerLine" | "firstTailLine">, maxEntryBytes: number): string {
	const range = findLeftOutLines(gap);
	const lines = range === undefined ? `the middle of line ${gap.markerLine - 1}` : `lines ${range.from}–${range.to}`;
	return `the stored copy leaves out ${lines} (more than maxEntryBytes=${maxEntryBytes}); their signal lines are shown`;
}
