// What every overflow_query answer builder shares: the answer and dependency types, QueryError (a
// failure whose short message tells the model what to do next), the one way to open an entry's
// stored text (store.openText: O_NOFOLLOW + fstat; a vanished text reads as expired) and the
// one-line echo of the model's own pattern or path. No builder reads a stored text by path.

import type { OverflowConfig } from "../config/config.js";
import type { JsonPathOptions } from "../json/index.js";
import type { SearchOptions } from "./engine/search.js";
import type { EntryMeta, OverflowStore, RunCounts, StoredText } from "../store/index.js";
import { flattenControls, shortenText } from "../lines/text.js";
import { recordsSource } from "../io/source.js";

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
	/** The id of an earlier run of the same command: the full comparison with it. */
	since?: string;
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
	selector: "info" | "search" | "lines" | "jsonPath" | "since";
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
	/** since: how many signal lines are new, gone and still there. */
	counts?: RunCounts;
}

export interface QueryAnswer {
	text: string;
	/** For the TUI line (tool.ts puts it in the result's details). */
	summary: QuerySummary;
}

/** Room kept for an answer's header and closing note when fitting lines into thresholdChars. */
export const NOTES_RESERVE_CHARS = 600;
/** Longest echo of the model's pattern or path inside an answer or error. */
const MAX_ECHO_CHARS = 80;
/** Shortest text kept of a line when lines must be shrunk to fit. */
export const MIN_SHRUNK_LINE_CHARS = 20;

export function expiredError(id: string, config: OverflowConfig): QueryError {
	return new QueryError(
		`overflow_query: no stored output with id=${id}; it is unknown or expired (entries are kept ${config.retentionDays} days). Re-run the command if you still need its output.`,
	);
}

function notRegularError(id: string): QueryError {
	return new QueryError(`overflow_query: the stored output of id=${id} is not a regular file; re-run the command.`);
}

/**
 * The entry's stored text, opened by the store (store.openText); the caller closes it. A text that
 * vanished (expired, evicted) reads as expired; something other than a regular file, or a store
 * that is not the user's, is refused.
 */
export async function openEntryText(meta: EntryMeta, deps: QueryDependencies): Promise<StoredText> {
	try {
		const text = await deps.store.openText(meta.id);
		// A CR-separated output's records are its lines: read as the scan numbered them.
		return meta.separator === "cr" ? recordsSource(text) : text;
	} catch (error) {
		const code = (error as { code?: unknown } | null)?.code;
		if (code === "ENOENT" || code === "ENOTDIR") throw expiredError(meta.id, deps.config);
		if (code === "EINVAL") throw notRegularError(meta.id);
		// The store was handed to someone else after its metadata was read.
		if (code === "EPERM") throw new QueryError(`overflow_query: ${(error as Error).message}; not read.`);
		throw error;
	}
}

/** The model's own text quoted back on one line, at most MAX_ECHO_CHARS characters. */
export function echo(text: string): string {
	return shortenText(flattenControls(text), MAX_ECHO_CHARS);
}
