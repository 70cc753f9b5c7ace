// overflow_query's answers: search (regex, in a worker), lines {start, end}, jsonPath, or the entry's
// overview. Invariants: every answer — metadata and notes included — is at most thresholdChars
// characters, deterministic for the same file and config (a search that runs out of time excepted),
// numbers lines exactly as the bounded view does, and says whether it was cut and how to get the
// rest; every failure is a QueryError whose short message tells the model what to do next. Stored
// texts are read as streams through store.openText (jsonPath too, by path: src/json-stream.ts walks
// the text without building it).

import { lstat } from "node:fs/promises";
import type { OverflowConfig } from "./config.js";
import { buildEntryView } from "./entry-view.js";
import { describeLeftOut, toOutputLine, toStoredLine } from "./gap.js";
import { formatPathPrefix, parseJsonPath, type PathSegment } from "./json-path.js";
import { evaluateJsonPath, type JsonPathOptions, type JsonValueSummary } from "./json-stream.js";
import { readLinesFrom } from "./line-index.js";
import { compileSearchPattern, MAX_SEARCH_WORKERS, SearchEngineError, searchFile, type SearchLine, type SearchOptions, type SearchResult } from "./search.js";
import { keepCharsFor, stripAnsi } from "./render.js";
import { type EntryGap, isEntryId, type EntryMeta, type OverflowStore, type StoredText } from "./store/index.js";
import { formatLine, lineNumberWidth, renderTerminalLine } from "./view.js";
import { keepStart, plural, sizeOf } from "./text.js";
import { fitSearchLine } from "./search-protocol.js";

/** A failure the model can act on: thrown by the tool, so Pi marks the result isError. */
export class QueryError extends Error {
	constructor(message: string) {
		super(message);
		this.name = "QueryError";
	}
}

export interface QueryParams {
	id: string;
	search?: string;
	lines?: { start: number; end?: number };
	jsonPath?: string;
}

export interface QueryDependencies {
	config: OverflowConfig;
	store: OverflowStore;
	/** Engine settings for tests (small chunks, a short grace); production uses the defaults. */
	searchTuning?: Pick<SearchOptions, "chunkBytes" | "giantLineBytes" | "hardStopGraceMs" | "virtualMsPerLine">;
	/** Lines between indexed offsets (default DEFAULT_LINE_INDEX_STRIDE); tests make it small. */
	lineIndexStride?: number;
	/** jsonPath reading settings for tests (small chunks, an injected clock); production uses the defaults. */
	jsonPathTuning?: Pick<JsonPathOptions, "chunkBytes" | "maxTrackedKeys" | "now">;
}

export interface QuerySummary {
	selector: "info" | "search" | "lines" | "jsonPath";
	/** Something asked for was left out (lines cut, hits not shown, a value cut, a search stopped). */
	truncated: boolean;
	/** search: hit lines counted (in the whole file unless timedOut). */
	hits?: number;
	/** search: hit lines shown. */
	shownHits?: number;
	/** search: stopped at searchTimeoutMs before the end of the file. */
	timedOut?: boolean;
	/** lines: the first and last line shown. */
	lines?: [number, number];
	/** lines: the file's line count. */
	totalLines?: number;
	/** jsonPath: the canonical path and what the value is. */
	path?: string;
	valueType?: string;
}

export interface QueryAnswer {
	text: string;
	/** For the TUI line (tool.ts puts it in the result's details). */
	summary: QuerySummary;
}

const SELECTORS = ["search", "lines", "jsonPath"] as const;

/** Room kept for an answer's header and closing note when fitting lines into thresholdChars. */
const NOTES_RESERVE_CHARS = 600;
/** Longest echo of the model's pattern or path inside an answer or error. */
const MAX_ECHO_CHARS = 80;
/** Shortest text kept of a line when lines must be shrunk to fit. */
const MIN_SHRUNK_LINE_CHARS = 20;
/** Marks the gap between two search windows, as grep does. */
const GAP_MARKER = "--";

/** Loads an entry's metadata, or fails with an error naming the id and what to do. */
export async function loadEntry(store: OverflowStore, config: OverflowConfig, id: unknown): Promise<EntryMeta> {
	if (!isEntryId(id)) {
		throw new QueryError(`overflow_query: id must be 12 lowercase hex characters as shown in a [pi-overflow id=…] line, got ${JSON.stringify(String(id)).slice(0, 40)}`);
	}
	const meta = await store.readMeta(id);
	if (!meta) throw expiredError(id, config);
	return meta;
}

function expiredError(id: string, config: OverflowConfig): QueryError {
	return new QueryError(
		`overflow_query: no stored output with id=${id}; it is unknown or expired (entries are kept ${config.retentionDays} days). Re-run the command if you still need its output.`,
	);
}

export function describeEntry(meta: EntryMeta): string {
	const source = meta.source === "spill-file" ? "the tool's spill file" : meta.source === "stash" ? "the uncut original (an earlier extension cut the result)" : "the result text";
	const capped = meta.gap ? `; ${describeLeftOut(meta.gap)}` : "";
	const note = meta.sourceNote ? `; note: ${meta.sourceNote}` : "";
	return `[pi-overflow id=${meta.id}] ${meta.toolName} output stored ${meta.createdAt}: ${plural(meta.totalLines, "line")}, ${meta.totalBytes} bytes, from ${source}${capped}${note}`;
}

/** Answers one overflow_query call; throws QueryError for anything the model should fix. */
export async function runQuery(params: QueryParams, deps: QueryDependencies, signal?: AbortSignal): Promise<QueryAnswer> {
	const given = SELECTORS.filter((name) => params[name] !== undefined);
	if (given.length > 1) {
		throw new QueryError(`overflow_query: give at most one of search, lines, jsonPath (got ${given.join(" and ")}); ask one question per call.`);
	}
	const meta = await loadEntry(deps.store, deps.config, params.id);
	let answer: QueryAnswer;
	if (params.search !== undefined) answer = await answerSearch(meta, params.search, deps, signal);
	else if (params.lines !== undefined) answer = await answerLines(meta, params.lines, deps);
	else if (params.jsonPath !== undefined) answer = await answerJsonPath(meta, params.jsonPath, deps, signal);
	else answer = await answerInfo(meta, deps);
	// Every builder fits its answer; this is the guarantee's last line of defence.
	if (answer.text.length > deps.config.thresholdChars) {
		answer = { text: keepStart(answer.text, deps.config.thresholdChars), summary: { ...answer.summary, truncated: true } };
	}
	return answer;
}

function notRegularError(id: string): QueryError {
	return new QueryError(`overflow_query: the stored output of id=${id} is not a regular file; re-run the command.`);
}

/**
 * The entry's stored text, opened by the store (store.openText); the caller closes it. A text that
 * vanished (expired, evicted) reads as expired; something other than a regular file is refused.
 */
async function openEntryText(meta: EntryMeta, deps: QueryDependencies): Promise<StoredText> {
	try {
		return await deps.store.openText(meta.id);
	} catch (error) {
		const code = (error as { code?: unknown } | null)?.code;
		if (code === "ENOENT" || code === "ENOTDIR") throw expiredError(meta.id, deps.config);
		if (code === "EINVAL") throw notRegularError(meta.id);
		throw error;
	}
}

/** The stored text's path, checked to be there and a regular file (a vanished entry reads as expired). jsonPath only. */
async function locateText(meta: EntryMeta, deps: QueryDependencies): Promise<string> {
	const path = deps.store.textPath(meta.id);
	try {
		const stats = await lstat(path);
		if (!stats.isFile()) throw notRegularError(meta.id);
	} catch (error) {
		if (error instanceof QueryError) throw error;
		throw expiredError(meta.id, deps.config);
	}
	return path;
}

async function answerInfo(meta: EntryMeta, deps: QueryDependencies): Promise<QueryAnswer> {
	const { config } = deps;
	const about = describeEntry(meta);
	const text = await openEntryText(meta, deps);
	let view: string;
	try {
		view = await buildEntryView(meta, text, config, Math.max(200, config.thresholdChars - about.length - 1));
	} finally {
		await text.close();
	}
	return { text: `${about}\n${view}`.slice(0, config.thresholdChars), summary: { selector: "info", truncated: false } };
}

// ---------------------------------------------------------------------------------------------
// Shared formatting

function echo(text: string): string {
	const flat = text.replace(/[\u0000-\u001f\u007f\u2028\u2029]/g, " ");
	return flat.length <= MAX_ECHO_CHARS ? flat : `${keepStart(flat, MAX_ECHO_CHARS - 1)}…`;
}

// ---------------------------------------------------------------------------------------------
// lines

function checkLineNumber(value: unknown, name: string): number {
	if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 1) {
		throw new QueryError(`overflow_query: lines.${name} must be a whole number ≥ 1 (1-based line number), got ${echo(String(value))}`);
	}
	return value;
}

async function answerLines(meta: EntryMeta, range: { start: number; end?: number }, deps: QueryDependencies): Promise<QueryAnswer> {
	const total = meta.totalLines;
	if (typeof range !== "object" || range === null) {
		throw new QueryError("overflow_query: lines must be an object {start, end}, e.g. lines: {start: 1, end: 200}");
	}
	const start = checkLineNumber(range.start, "start");
	const askedEnd = range.end === undefined ? undefined : checkLineNumber(range.end, "end");
	const within = total === 0 ? "it is empty" : `ask for lines within 1–${total}`;
	if (start > total) {
		throw new QueryError(`overflow_query: lines.start=${start} is past the end: the stored output of id=${meta.id} has ${plural(total, "line")}; ${within}.`);
	}
	if (askedEnd !== undefined && askedEnd < start) {
		throw new QueryError(`overflow_query: lines.end=${askedEnd} is before lines.start=${start}; the stored output of id=${meta.id} has ${plural(total, "line")}; ${within}, with start ≤ end.`);
	}
	const text = await openEntryText(meta, deps);
	try {
		return await formatLinesAnswer(meta, text, start, askedEnd, deps);
	} finally {
		await text.close();
	}
}

/** Reads from the open text the lines of [start, askedEnd] that fit into thresholdChars. */
async function formatLinesAnswer(meta: EntryMeta, source: StoredText, start: number, askedEnd: number | undefined, deps: QueryDependencies): Promise<QueryAnswer> {
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
	for await (const stored of readLinesFrom(source, storedStart, { keepChars, isSignal, stride: deps.lineIndexStride })) {
		const lineNumber = toOutputLine(gap, stored.lineNumber);
		let formatted: string;
		if (lineNumber === undefined) {
			// The marker line of a left-out middle: said in words, never shown as an output line.
			formatted = `  [${describeLeftOut(gap as EntryGap)}]`;
			touchedGap = true;
		} else {
			if (lineNumber > last) break;
			formatted = formatLine({ ...stored, lineNumber }, width, config.maxLineChars);
		}
		if (used + formatted.length + 1 > budget) {
			if (body.length > 0) break;
			// The first line alone is too long for the answer: clip it harder rather than show nothing.
			if (lineNumber !== undefined) formatted = formatLine({ ...stored, lineNumber }, width, Math.max(MIN_SHRUNK_LINE_CHARS, budget - width - 40));
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
	const header = body.length > 0
		? `[pi-overflow id=${meta.id}] lines ${shownFirst === 0 ? start : shownFirst}–${shownLast} of ${total}${clamped}`
		: `[pi-overflow id=${meta.id}] no lines could be read from line ${start} on (the stored file has fewer lines than its metadata says)`;
	const notes: string[] = [];
	const cut = body.length > 0 && shownLast < last;
	if (cut) {
		const next = askedEnd === undefined ? `lines: {start: ${shownLast + 1}}` : `lines: {start: ${shownLast + 1}, end: ${askedEnd}}`;
		const asked = askedEnd === undefined ? `to the last line ${total}` : `to line ${last}`;
		notes.push(`[answer cut at ${config.thresholdChars} chars: lines ${shownLast + 1}–${last} (${asked}) not shown; continue with ${next}]`);
	} else if (body.length > 0 && shownLast === total) {
		notes.push(`[line ${total} is the last line]`);
	}
	if (touchedGap) notes.push("[the signal lines of the left-out middle are in the view: overflow_query with only the id]");
	const text = [header, ...body, ...notes].join("\n");
	return {
		text,
		summary: { selector: "lines", truncated: cut, lines: body.length > 0 ? [shownFirst === 0 ? start : shownFirst, shownLast] : undefined, totalLines: total },
	};
}

// ---------------------------------------------------------------------------------------------
// search

async function answerSearch(meta: EntryMeta, pattern: string, deps: QueryDependencies, signal?: AbortSignal): Promise<QueryAnswer> {
	const { config } = deps;
	if (typeof pattern !== "string" || pattern.length === 0) {
		throw new QueryError("overflow_query: search must be a non-empty regex, e.g. search: \"error|fail\"");
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
			signal,
			...deps.searchTuning,
		});
	} catch (error) {
		if (error instanceof SearchEngineError) {
			throw new QueryError(`overflow_query: the search could not run (${echo(error.message)}); read the output with lines: {start: 1} instead`);
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
		stopped: result.stopped && { ...result.stopped, atLine: mapStop(result.stopped.atLine), stepLastLine: mapStop(result.stopped.stepLastLine) },
	};
}

/** A search answer from the engine's lines: windows merged, gaps marked, fitted into thresholdChars. */
export function formatSearchAnswer(meta: EntryMeta, pattern: string, storedResult: SearchResult, config: OverflowConfig): QueryAnswer {
	const result = toOutputResult(storedResult, meta.gap);
	const width = lineNumberWidth(meta.totalLines);
	const windows = groupWindows(result.lines);
	const budget = config.thresholdChars - NOTES_RESERVE_CHARS;
	const body: string[] = [];
	let used = 0;
	let shownHits = 0;
	let lastShownHit = 0;
	let cutByBudget = false;
	for (const window of windows) {
		const gap = body.length > 0 ? GAP_MARKER.length + 1 : 0;
		let shown: ShownLines = { lines: window, formatted: window.map((line) => formatSearchLine(line, width, config.maxLineChars)) };
		let size = sizeOf(shown.formatted) + gap;
		if (used + size > budget) {
			if (shownHits > 0) {
				cutByBudget = true;
				break;
			}
			// Nothing shown yet: shrink this window's lines (then drop its context) so its hits are seen.
			shown = shrinkWindow(window, width, budget - used - gap);
			size = sizeOf(shown.formatted) + gap;
			cutByBudget = true;
		}
		if (gap > 0) body.push(GAP_MARKER);
		body.push(...shown.formatted);
		used += size;
		for (const line of shown.lines) {
			if (!line.hit) continue;
			shownHits++;
			lastShownHit = line.lineNumber;
		}
		if (cutByBudget) break;
	}

	const stopped = result.stopped;
	const total = meta.totalLines;
	const echoed = `/${echo(pattern)}/i`;
	let header: string;
	if (result.totalHits === 0) {
		header = stopped?.cause === "wait"
			? `[pi-overflow id=${meta.id}] search ${echoed}: not run; no search worker came free (see below)`
			: stopped
			? `[pi-overflow id=${meta.id}] search ${echoed}: no hit so far; the search stopped at line ${stopped.atLine} of ${total} (see below)`
			: `[pi-overflow id=${meta.id}] search ${echoed}: no line matches in ${plural(total, "line")} (case-insensitive JavaScript regex; check the escaping of special characters, or try a shorter pattern)`;
	} else {
		const counted = stopped ? `at least ${plural(result.totalHits, "hit line")} (the search stopped at line ${stopped.atLine} of ${total})` : `${plural(result.totalHits, "hit line")} in ${plural(total, "line")}`;
		const shown = shownHits === result.totalHits ? "all shown" : `showing ${shownHits}`;
		header = `[pi-overflow id=${meta.id}] search ${echoed}: ${counted}; ${shown}, with ${plural(config.contextLines, "context line")} around each (hits "N:", context "N-", gaps "${GAP_MARKER}")`;
	}

	const notes: string[] = [];
	const notShown = result.totalHits - shownHits;
	if (notShown > 0 && shownHits > 0) {
		const reason = cutByBudget || result.collectionStop === "budget" ? `the answer is limited to ${config.thresholdChars} chars` : `maxResults is ${config.maxResults}`;
		const readOn = lastShownHit < total ? `, or read on with lines: {start: ${lastShownHit + 1}}` : "";
		notes.push(`[${shownHits} of ${result.totalHits}${stopped ? "+" : ""} hit lines shown (${reason}); the last shown is line ${lastShownHit} — narrow the pattern${readOn}]`);
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
	if (meta.gap) notes.push(`[${describeLeftOut(meta.gap)}, so they were not searched; the view shows their signal lines]`);
	const text = [header, ...body, ...notes].join("\n");
	return {
		text,
		summary: { selector: "search", truncated: notShown > 0 || stopped !== null, hits: result.totalHits, shownHits, timedOut: stopped !== null },
	};
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
	return `${String(line.lineNumber).padStart(width, " ")}${line.hit ? ":" : "-"} ${before}${renderSearchText(fitted)}${after}`;
}

interface ShownLines {
	lines: readonly SearchLine[];
	formatted: string[];
}

/** A window that does not fit in `room`: every line shorter, then only its hits, then only its first hit. */
function shrinkWindow(window: readonly SearchLine[], width: number, room: number): ShownLines {
	const overhead = width + 40;
	const perLine = Math.floor(room / window.length) - overhead;
	if (perLine >= MIN_SHRUNK_LINE_CHARS) return { lines: window, formatted: window.map((line) => formatSearchLine(line, width, perLine)) };
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
	return { lines: [first], formatted: [formatSearchLine(first, width, Math.max(MIN_SHRUNK_LINE_CHARS, room - overhead))] };
}

// ---------------------------------------------------------------------------------------------
// jsonPath

async function answerJsonPath(meta: EntryMeta, path: string, deps: QueryDependencies, signal?: AbortSignal): Promise<QueryAnswer> {
	const { config } = deps;
	if (typeof path !== "string") throw new QueryError("overflow_query: jsonPath must be a string such as items[0].name, or $ for the whole document");
	const parsed = parseJsonPath(path);
	if ("error" in parsed) throw new QueryError(`overflow_query: ${parsed.error}`);
	const canonical = formatPathPrefix(parsed.segments);
	const headerOf = (summary: JsonValueSummary): string => `[pi-overflow id=${meta.id}] jsonPath ${echo(canonical)}: ${describeValue(summary)}`;
	const result = await evaluateJsonPath(await locateText(meta, deps), parsed.segments, {
		roomFor: (summary) => config.thresholdChars - headerOf(summary).length - NOTES_RESERVE_CHARS,
		timeoutMs: config.searchTimeoutMs,
		signal,
		...deps.jsonPathTuning,
	});
	switch (result.type) {
		case "missing":
			throw new QueryError(`overflow_query: ${result.message}`);
		case "notJson": {
			const capped = meta.truncated ? "; the stored copy had its middle left out (maxEntryBytes), so it cannot parse" : "";
			throw new QueryError(`overflow_query: the stored output of id=${meta.id} is not JSON (${result.reason})${capped}; use search or lines instead`);
		}
		case "stopped":
			throw new QueryError(
				`overflow_query: jsonPath stopped after ${Math.round(result.elapsedMs)} ms (searchTimeoutMs=${config.searchTimeoutMs}) having read ${result.offset} of ${result.size} bytes of id=${meta.id}; ` +
					"the whole text must be read to answer, so a shorter path will not help: use search or lines instead",
			);
	}
	return formatJsonAnswer(headerOf(result.summary), parsed.segments, result, config);
}

function describeValue(summary: JsonValueSummary): string {
	if (summary.kind === "array") return `an array of ${plural(summary.size, "item")}`;
	if (summary.kind === "object") return `an object with ${plural(summary.size, "key")}`;
	if (summary.kind === "null") return "null";
	return `a ${summary.kind}`;
}

function formatJsonAnswer(header: string, segments: readonly PathSegment[], value: { summary: JsonValueSummary; text: string; totalChars: number }, config: OverflowConfig): QueryAnswer {
	const canonical = formatPathPrefix(segments);
	const valueType = describeValue(value.summary);
	if (value.text.length >= value.totalChars) {
		return { text: `${header}\n${value.text}`, summary: { selector: "jsonPath", truncated: false, path: canonical, valueType } };
	}
	// Cut at a line end when one is near, so the shown part reads as whole lines.
	let shown = value.text;
	const lineEnd = shown.lastIndexOf("\n");
	if (lineEnd > shown.length * 0.8) shown = shown.slice(0, lineEnd);
	const left = value.totalChars - shown.length;
	const note = `[… ${left} more chars of this value left out (it is ${value.totalChars} chars as pretty JSON, the answer is limited to ${config.thresholdChars}); ask for a deeper path, ${suggestDeeper(segments, value.summary)}]`;
	return {
		text: `${header}\n${shown}\n${note}`,
		summary: { selector: "jsonPath", truncated: true, path: canonical, valueType },
	};
}

function suggestDeeper(segments: readonly PathSegment[], summary: JsonValueSummary): string {
	if (summary.kind === "array" && summary.size > 0) {
		return `e.g. ${echo(formatPathPrefix([...segments, 0]))} … ${echo(formatPathPrefix([...segments, summary.size - 1]))}`;
	}
	if (summary.kind === "object" && summary.size > 0) {
		const listed = summary.keys.slice(0, 5).map((key) => echo(formatPathPrefix([...segments, key]))).join(", ");
		return `e.g. ${listed}${summary.size > 5 ? `, … (${summary.size} keys)` : ""}`;
	}
	return "or use search to find the part you need";
}
