// overflow_query's answers. Every answer — metadata and notes included — is at most
// thresholdChars characters and says whether it was cut; every failure is a QueryError whose
// short message tells the model what to do next. Stored files are read as streams.

import type { OverflowConfig } from "./config.js";
import { isEntryId, type EntryMeta, type OverflowStore } from "./store.js";
import { buildViewFromFile } from "./view.js";

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
}

export interface QueryAnswer {
	text: string;
	/** For the TUI line: what was asked and how much came back. */
	summary: { selector: "info" | "search" | "lines" | "jsonPath"; truncated: boolean; hits?: number; lines?: [number, number] };
}

const SELECTORS = ["search", "lines", "jsonPath"] as const;

/** Loads an entry's metadata, or fails with an error naming the id and what to do. */
export async function loadEntry(store: OverflowStore, config: OverflowConfig, id: unknown): Promise<EntryMeta> {
	if (!isEntryId(id)) {
		throw new QueryError(`overflow_query: id must be 12 lowercase hex characters as shown in a [pi-overflow id=…] line, got ${JSON.stringify(String(id)).slice(0, 40)}`);
	}
	const meta = await store.readMeta(id);
	if (!meta) {
		throw new QueryError(
			`overflow_query: no stored output with id=${id}; it is unknown or expired (entries are kept ${config.retentionDays} days). Re-run the command if you still need its output.`,
		);
	}
	return meta;
}

export function describeEntry(meta: EntryMeta): string {
	const source = meta.source === "spill-file" ? "Pi's bash spill file" : meta.source === "stash" ? "the uncut original (an earlier extension cut the result)" : "the result text";
	const capped = meta.truncated ? `; capped: the original had ${meta.originalBytes} bytes, its middle is left out` : "";
	const note = meta.sourceNote ? `; note: ${meta.sourceNote}` : "";
	return `[pi-overflow id=${meta.id}] ${meta.toolName} output stored ${meta.createdAt}: ${meta.totalLines} lines, ${meta.totalBytes} bytes, from ${source}${capped}${note}`;
}

export async function runQuery(params: QueryParams, deps: QueryDependencies): Promise<QueryAnswer> {
	const given = SELECTORS.filter((name) => params[name] !== undefined);
	if (given.length > 1) {
		throw new QueryError(`overflow_query: give at most one of search, lines, jsonPath (got ${given.join(" and ")}); ask one question per call.`);
	}
	const meta = await loadEntry(deps.store, deps.config, params.id);
	const selector = given[0];
	if (selector === undefined) return answerInfo(meta, deps);
	throw new QueryError(`overflow_query: the ${selector} selector is not available yet; call overflow_query with only id for the overview.`);
}

async function answerInfo(meta: EntryMeta, deps: QueryDependencies): Promise<QueryAnswer> {
	const { config } = deps;
	const about = describeEntry(meta);
	const view = await buildViewFromFile(deps.store.textPath(meta.id), {
		...config,
		thresholdChars: Math.max(200, config.thresholdChars - about.length - 1),
		id: meta.id,
		toolName: meta.toolName,
	});
	return { text: `${about}\n${view.text}`.slice(0, config.thresholdChars), summary: { selector: "info", truncated: false } };
}
