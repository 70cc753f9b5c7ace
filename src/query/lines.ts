// overflow_query's lines answer: the output lines [start, end] read from the stored text through
// its line index, numbered as the view numbers them (a stored copy's left-out middle said in words,
// never shown as lines), fitted into thresholdChars, with how to continue when cut.

import { describeLeftOut, toOutputLine, toStoredLine } from "../store/gap.js";
import { readLinesFrom } from "./line-index.js";
import { keepCharsFor, stripAnsi } from "../lines/render.js";
import type { EntryGap, EntryMeta, StoredText } from "../store/index.js";
import { formatIdTag } from "../lines/protocol.js";
import { plural } from "../lines/text.js";
import { formatScannedLine, lineNumberWidth } from "../lines/numbered.js";
import {
	echo,
	MIN_SHRUNK_LINE_CHARS,
	NOTES_RESERVE_CHARS,
	openEntryText,
	type QueryAnswer,
	type QueryDependencies,
	QueryError,
} from "./answer.js";

function checkLineNumber(value: unknown, name: string): number {
	if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 1) {
		throw new QueryError(
			`overflow_query: lines.${name} must be a whole number ≥ 1 (1-based line number), got ${echo(String(value))}`,
		);
	}
	return value;
}

export async function answerLines(
	meta: EntryMeta,
	range: { start: number; end?: number },
	deps: QueryDependencies,
): Promise<QueryAnswer> {
	const total = meta.totalLines;
	if (typeof range !== "object" || range === null) {
		throw new QueryError("overflow_query: lines must be an object {start, end}, e.g. lines: {start: 1, end: 200}");
	}
	const start = checkLineNumber(range.start, "start");
	const askedEnd = range.end === undefined ? undefined : checkLineNumber(range.end, "end");
	const within = total === 0 ? "it is empty" : `ask for lines within 1–${total}`;
	if (start > total) {
		throw new QueryError(
			`overflow_query: lines.start=${start} is past the end: the stored output of id=${meta.id} has ${plural(total, "line")}; ${within}.`,
		);
	}
	if (askedEnd !== undefined && askedEnd < start) {
		throw new QueryError(
			`overflow_query: lines.end=${askedEnd} is before lines.start=${start}; the stored output of id=${meta.id} has ${plural(total, "line")}; ${within}, with start ≤ end.`,
		);
	}
	const text = await openEntryText(meta, deps);
	try {
		return await formatLinesAnswer(meta, text, start, askedEnd, deps);
	} finally {
		await text.close();
	}
}

/** Reads from the open text the lines of [start, askedEnd] that fit into thresholdChars. */
async function formatLinesAnswer(
	meta: EntryMeta,
	source: StoredText,
	start: number,
	askedEnd: number | undefined,
	deps: QueryDependencies,
): Promise<QueryAnswer> {
	const { config } = deps;
	const total = meta.totalLines;
	const last = Math.min(askedEnd ?? total, total);
	const width = lineNumberWidth(total);
	const budget = config.thresholdChars - NOTES_RESERVE_CHARS;
	const gap = meta.gap;
	// Output lines are read from the stored line that holds them; a start in a left-out middle reads from its marker.
	const storedStart = toStoredLine(gap, start) ?? (gap as EntryGap).markerLine;
	const body: string[] = [];
	let used = 0;
	let shownFirst = 0;
	let shownLast = start - 1;
	let touchedGap = false;
	const keepChars = keepCharsFor(config.maxLineChars);
	const isSignal = (text: string) => config.signalRegex.test(stripAnsi(text));
	for await (const stored of readLinesFrom(source, storedStart, {
		keepChars,
		isSignal,
		stride: deps.lineIndexStride,
	})) {
		const lineNumber = toOutputLine(gap, stored.lineNumber);
		let formatted: string;
		if (lineNumber === undefined) {
			// The marker line of a left-out middle: said in words, never shown as an output line.
			formatted = `  [${describeLeftOut(gap as EntryGap)}]`;
			touchedGap = true;
		} else {
			if (lineNumber > last) break;
			formatted = formatScannedLine({ ...stored, lineNumber }, width, config.maxLineChars);
		}
		if (used + formatted.length + 1 > budget) {
			if (body.length > 0) break;
			// The first line alone is too long for the answer: clip it harder rather than show nothing.
			if (lineNumber !== undefined)
				formatted = formatScannedLine(
					{ ...stored, lineNumber },
					width,
					Math.max(MIN_SHRUNK_LINE_CHARS, budget - width - 40),
				);
		}
		body.push(formatted);
		used += formatted.length + 1;
		if (lineNumber !== undefined) {
			if (shownFirst === 0) shownFirst = lineNumber;
			shownLast = lineNumber;
		} else {
			shownLast = Math.max(shownLast, Math.min(last, (gap as EntryGap).firstTailLine - 1));
		}
	}
	const clamped = askedEnd !== undefined && askedEnd > total ? ` (end ${askedEnd} clamped to the last line)` : "";
	const header =
		body.length > 0
			? `${formatIdTag(meta.id)} lines ${shownFirst === 0 ? start : shownFirst}–${shownLast} of ${total}${clamped}`
			: `${formatIdTag(meta.id)} no lines could be read from line ${start} on (the stored file has fewer lines than its metadata says)`;
	const notes: string[] = [];
	const cut = body.length > 0 && shownLast < last;
	if (cut) {
		const next =
			askedEnd === undefined
				? `lines: {start: ${shownLast + 1}}`
				: `lines: {start: ${shownLast + 1}, end: ${askedEnd}}`;
		const asked = askedEnd === undefined ? `to the last line ${total}` : `to line ${last}`;
		notes.push(
			`[answer cut at ${config.thresholdChars} chars: lines ${shownLast + 1}–${last} (${asked}) not shown; continue with ${next}]`,
		);
	} else if (body.length > 0 && shownLast === total) {
		notes.push(`[line ${total} is the last line]`);
	}
	if (touchedGap)
		notes.push("[the signal lines of the left-out middle are in the view: overflow_query with only the id]");
	const text = [header, ...body, ...notes].join("\n");
	return {
		text,
		summary: {
			selector: "lines",
			truncated: cut,
			lines: body.length > 0 ? [shownFirst === 0 ? start : shownFirst, shownLast] : undefined,
			totalLines: total,
		},
	};
}
