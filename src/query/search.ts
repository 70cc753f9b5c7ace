// overflow_query's search answer: the pattern checked, the stored text's descriptor (from
// store.openText) searched by the worker engine (search.ts), and its hit and context lines in the
// output's numbering, merged into windows and fitted into thresholdChars with what was left out.

import type { OverflowConfig } from "../config/config.js";
import { describeLeftOut, toOutputLine } from "../store/gap.js";
import {
	compileSearchPattern,
	MAX_SEARCH_WORKERS,
	SearchEngineError,
	searchFile,
	type SearchLine,
	type SearchResult,
} from "./engine/search.js";
import type { EntryGap, EntryMeta } from "../store/index.js";
import { formatIdTag } from "../lines/protocol.js";
import { plural, sizeOf } from "../lines/text.js";
import { renderTerminalLine } from "../lines/render.js";
import { formatNumberedLine, lineNumberWidth } from "../lines/numbered.js";
import { fitSearchLine } from "./engine/protocol.js";
import {
	echo,
	MIN_SHRUNK_LINE_CHARS,
	NOTES_RESERVE_CHARS,
	openEntryText,
	type QueryAnswer,
	type QueryDependencies,
	QueryError,
} from "./answer.js";

/** Marks the gap between two search windows, as grep does. */
const GAP_MARKER = "--";

export async function answerSearch(
	meta: EntryMeta,
	pattern: string,
	deps: QueryDependencies,
	signal?: AbortSignal,
): Promise<QueryAnswer> {
	const { config } = deps;
	if (typeof pattern !== "string" || pattern.length === 0) {
		throw new QueryError('overflow_query: search must be a non-empty regex, e.g. search: "error|fail"');
	}
	const compiled = compileSearchPattern(pattern);
	if ("error" in compiled) {
		throw new QueryError(
			`overflow_query: invalid regex /${echo(pattern)}/: ${compiled.error}; escape special characters (\\( \\[ \\. \\* \\+ \\?) or use a simpler pattern`,
		);
	}
	const text = await openEntryText(meta, deps);
	let result: SearchResult;
	try {
		// The worker reads the descriptor openText opened; it is closed once searchFile has settled.
		result = await searchFile(text.fd, {
			pattern,
			contextLines: config.contextLines,
			maxResults: config.maxResults,
			maxLineChars: config.maxLineChars,
			timeoutMs: config.searchTimeoutMs,
			budgetChars: config.thresholdChars,
			crRecords: meta.separator === "cr",
			signal,
			...deps.searchTuning,
		});
	} catch (error) {
		if (error instanceof SearchEngineError) {
			throw new QueryError(
				`overflow_query: the search could not run (${echo(error.message)}); read the output with lines: {start: 1} instead`,
			);
		}
		throw error;
	} finally {
		await text.close();
	}
	return formatSearchAnswer(meta, pattern, result, config);
}

/**
 * The engine's result in the output's line numbers: lines of a stored copy that left out the
 * middle are renumbered, and its marker line (ours, not the output's) is dropped.
 */
function toOutputResult(result: SearchResult, gap: EntryGap | undefined): SearchResult {
	if (gap === undefined) return result;
	let markerHit = false;
	const lines: SearchLine[] = [];
	for (const line of result.lines) {
		const lineNumber = toOutputLine(gap, line.lineNumber);
		if (lineNumber === undefined) markerHit ||= line.hit;
		else lines.push({ ...line, lineNumber });
	}
	const mapStop = (stored: number) => toOutputLine(gap, stored) ?? gap.firstTailLine;
	return {
		...result,
		lines,
		totalHits: result.totalHits - (markerHit ? 1 : 0),
		collectedHits: result.collectedHits - (markerHit ? 1 : 0),
		stopped: result.stopped && {
			...result.stopped,
			atLine: mapStop(result.stopped.atLine),
			stepLastLine: mapStop(result.stopped.stepLastLine),
		},
	};
}

/** A search answer from the engine's lines: windows merged, gaps marked, fitted into thresholdChars. */
export function formatSearchAnswer(
	meta: EntryMeta,
	pattern: string,
	storedResult: SearchResult,
	config: OverflowConfig,
): QueryAnswer {
	const result = toOutputResult(storedResult, meta.gap);
	const shown = fitWindows(groupWindows(result.lines), lineNumberWidth(meta.totalLines), config);
	const header = describeSearchHeader(meta, pattern, result, shown.hits, config);
	const notes = describeSearchNotes(meta, result, shown, config);
	const notShown = result.totalHits - shown.hits;
	const stopped = result.stopped;
	return {
		text: [header, ...shown.body, ...notes].join("\n"),
		summary: {
			selector: "search",
			truncated: notShown > 0 || stopped !== null,
			hits: result.totalHits,
			shownHits: shown.hits,
			timedOut: stopped !== null,
		},
	};
}

interface FittedWindows {
	body: string[];
	/** Hit lines shown, and the last of them. */
	hits: number;
	lastHit: number;
	/** Windows (or lines of one) were left out because the answer was full. */
	cutByBudget: boolean;
}

/** The windows that fit in thresholdChars, "--" between them; a first window too large is shrunk so its hits are seen. */
function fitWindows(windows: readonly SearchLine[][], width: number, config: OverflowConfig): FittedWindows {
	const budget = config.thresholdChars - NOTES_RESERVE_CHARS;
	const fitted: FittedWindows = { body: [], hits: 0, lastHit: 0, cutByBudget: false };
	let used = 0;
	for (const window of windows) {
		const gap = fitted.body.length > 0 ? GAP_MARKER.length + 1 : 0;
		let shown: ShownLines = {
			lines: window,
			formatted: window.map((line) => formatSearchLine(line, width, config.maxLineChars)),
		};
		let size = sizeOf(shown.formatted) + gap;
		if (used + size > budget) {
			if (fitted.hits > 0) {
				fitted.cutByBudget = true;
				break;
			}
			// Nothing shown yet: shrink this window's lines (then drop its context) so its hits are seen.
			shown = shrinkWindow(window, width, budget - used - gap);
			size = sizeOf(shown.formatted) + gap;
			fitted.cutByBudget = true;
		}
		if (gap > 0) fitted.body.push(GAP_MARKER);
		fitted.body.push(...shown.formatted);
		used += size;
		for (const line of shown.lines) {
			if (!line.hit) continue;
			fitted.hits++;
			fitted.lastHit = line.lineNumber;
		}
		if (fitted.cutByBudget) break;
	}
	return fitted;
}

function describeSearchHeader(
	meta: EntryMeta,
	pattern: string,
	result: SearchResult,
	shownHits: number,
	config: OverflowConfig,
): string {
	const stopped = result.stopped;
	const total = meta.totalLines;
	const echoed = `/${echo(pattern)}/i`;
	if (result.totalHits === 0) {
		return stopped?.cause === "wait"
			? `${formatIdTag(meta.id)} search ${echoed}: not run; no search worker came free (see below)`
			: stopped
				? `${formatIdTag(meta.id)} search ${echoed}: no hit so far; the search stopped at line ${stopped.atLine} of ${total} (see below)`
				: `${formatIdTag(meta.id)} search ${echoed}: no line matches in ${plural(total, "line")} (case-insensitive JavaScript regex; check the escaping of special characters, or try a shorter pattern)`;
	}
	const counted = stopped
		? `at least ${plural(result.totalHits, "hit line")} (the search stopped at line ${stopped.atLine} of ${total})`
		: `${plural(result.totalHits, "hit line")} in ${plural(total, "line")}`;
	const shown = shownHits === result.totalHits ? "all shown" : `showing ${shownHits}`;
	return `${formatIdTag(meta.id)} search ${echoed}: ${counted}; ${shown}, with ${plural(config.contextLines, "context line")} around each (hits "N:", context "N-", gaps "${GAP_MARKER}")`;
}

/** The closing notes: hits not shown and why, a search that did not run or stopped, the left-out middle. */
function describeSearchNotes(
	meta: EntryMeta,
	result: SearchResult,
	shown: FittedWindows,
	config: OverflowConfig,
): string[] {
	const stopped = result.stopped;
	const total = meta.totalLines;
	const notes: string[] = [];
	const notShown = result.totalHits - shown.hits;
	if (notShown > 0 && shown.hits > 0) {
		const reason =
			shown.cutByBudget || result.collectionStop === "budget"
				? `the answer is limited to ${config.thresholdChars} chars`
				: `maxResults is ${config.maxResults}`;
		const readOn = shown.lastHit < total ? `, or read on with lines: {start: ${shown.lastHit + 1}}` : "";
		notes.push(
			`[${shown.hits} of ${result.totalHits}${stopped ? "+" : ""} hit lines shown (${reason}); the last shown is line ${shown.lastHit} — narrow the pattern${readOn}]`,
		);
	} else if (notShown > 0) {
		notes.push(`[${plural(result.totalHits, "hit line")} found but none could be shown; narrow the pattern]`);
	}
	if (stopped?.cause === "wait") {
		notes.push(
			`[search not started: all ${MAX_SEARCH_WORKERS} search workers stayed busy with other searches for ${Math.round(result.waitedMs)} ms, the longest a search waits; ` +
				"nothing was searched, which says nothing about the pattern: ask again once the other searches have answered, or run fewer at once]",
		);
	} else if (stopped) {
		const how = !stopped.terminated
			? "the time ran out between regex steps"
			: stopped.stepLastLine > stopped.atLine
				? `one regex step over lines ${stopped.atLine}–${stopped.stepLastLine} was still running and was stopped`
				: "a single regex step was still running and was stopped";
		notes.push(
			`[search stopped after ${Math.round(stopped.elapsedMs)} ms (searchTimeoutMs=${config.searchTimeoutMs}) at line ${stopped.atLine} of ${total}: ${how}; ${describeSearched(stopped.atLine)}. ` +
				"The pattern is too slow for this text (nested quantifiers such as (a+)+ or (.*)* backtrack catastrophically): use a simpler pattern, e.g. a plain word or an anchored literal]",
		);
	}
	if (meta.gap)
		notes.push(`[${describeLeftOut(meta.gap)}, so they were not searched; the view shows their signal lines]`);
	return notes;
}

/** What a stopped search covered: every line before `atLine`. */
function describeSearched(atLine: number): string {
	if (atLine <= 1) return "no line was searched completely";
	return atLine === 2 ? "line 1 was searched" : `lines 1–${atLine - 1} were searched`;
}

function groupWindows(lines: readonly SearchLine[]): SearchLine[][] {
	const windows: SearchLine[][] = [];
	let current: SearchLine[] = [];
	for (const line of lines) {
		const previous = current[current.length - 1];
		if (previous !== undefined && line.lineNumber <= previous.lineNumber) continue; // never print a line twice
		if (previous !== undefined && line.lineNumber !== previous.lineNumber + 1) {
			windows.push(current);
			current = [];
		}
		current.push(line);
	}
	if (current.length > 0) windows.push(current);
	return windows;
}

/** What a terminal would show, except that a `\r` inside a hit line is shown (␍) rather than redrawn, so the match stays visible. */
function renderSearchText(line: SearchLine): string {
	return renderTerminalLine(line.hit ? line.text.replace(/\r/g, "\u240d") : line.text);
}

/** `N: text` for hits, `N- text` for context; a hit longer than maxChars is shown around its match. */
function formatSearchLine(line: SearchLine, width: number, maxChars: number): string {
	const fitted = fitSearchLine(line, maxChars);
	const before = fitted.cutBefore > 0 ? `[+${fitted.cutBefore} chars] … ` : "";
	const after = fitted.cutAfter > 0 ? ` … [+${fitted.cutAfter} chars]` : "";
	return formatNumberedLine(
		line.lineNumber,
		line.hit ? ":" : "-",
		`${before}${renderSearchText(fitted)}${after}`,
		width,
	);
}

interface ShownLines {
	lines: readonly SearchLine[];
	formatted: string[];
}

/** A window that does not fit in `room`: every line shorter, then only its hits, then only its first hit. */
function shrinkWindow(window: readonly SearchLine[], width: number, room: number): ShownLines {
	const overhead = width + 40;
	const perLine = Math.floor(room / window.length) - overhead;
	if (perLine >= MIN_SHRUNK_LINE_CHARS)
		return { lines: window, formatted: window.map((line) => formatSearchLine(line, width, perLine)) };
	const hits = window.filter((line) => line.hit);
	const perHit = Math.floor(room / Math.max(1, hits.length)) - overhead;
	if (perHit >= MIN_SHRUNK_LINE_CHARS) {
		const formatted: string[] = [];
		hits.forEach((line, index) => {
			if (index > 0 && line.lineNumber !== hits[index - 1]!.lineNumber + 1) formatted.push(GAP_MARKER);
			formatted.push(formatSearchLine(line, width, perHit));
		});
		return { lines: hits, formatted };
	}
	const first = hits[0] ?? window[0]!;
	return {
		lines: [first],
		formatted: [formatSearchLine(first, width, Math.max(MIN_SHRUNK_LINE_CHARS, room - overhead))],
	};
}
