// overflow_query's answers: search (regex, in a worker), lines {start, end}, jsonPath, or the entry's
// overview. Invariants: every answer — metadata and notes included — is at most thresholdChars
// characters, deterministic for the same file and config (a search that runs out of time excepted),
// numbers lines exactly as the bounded view does, and says whether it was cut and how to get the
// rest; every failure is a QueryError (answer.ts). Every stored text is read through store.openText.

import type { OverflowConfig } from "../config/config.js";
import { buildEntryView } from "../view/compose.js";
import { describeLeftOut } from "../store/gap.js";
import { type EntryMeta, isEntryId, type OverflowStore } from "../store/index.js";
import { formatIdTag, ID_TAG_EXAMPLE } from "../lines/protocol.js";
import { keepStart, plural } from "../lines/text.js";
import {
	expiredError,
	openEntryText,
	type QueryAnswer,
	type QueryDependencies,
	QueryError,
	type QueryParams,
} from "./answer.js";
import { answerJsonPath } from "./json.js";
import { answerLines } from "./lines.js";
import { answerSearch } from "./search.js";
import { answerSince } from "./since.js";

export { QueryError } from "./answer.js";
export type { QueryAnswer, QueryDependencies, QueryParams, QuerySummary } from "./answer.js";

const SELECTORS = ["search", "lines", "jsonPath", "since"] as const;

/** Loads an entry's metadata, or fails with an error naming the id and what to do. */
export async function loadEntry(store: OverflowStore, config: OverflowConfig, id: unknown): Promise<EntryMeta> {
	if (!isEntryId(id)) {
		throw new QueryError(
			`overflow_query: id must be 12 lowercase hex characters as shown in a ${ID_TAG_EXAMPLE} line, got ${JSON.stringify(String(id)).slice(0, 40)}`,
		);
	}
	const refused = await store.refusal();
	if (refused !== undefined) throw new QueryError(`overflow_query: ${refused}; not read.`);
	const meta = await store.readMeta(id);
	if (!meta) throw expiredError(id, config);
	return meta;
}

export function describeEntry(meta: EntryMeta): string {
	const source =
		meta.source === "spill-file"
			? "the tool's spill file"
			: meta.source === "stash"
				? "the uncut original (an earlier extension cut the result)"
				: "the result text";
	const capped = meta.gap ? `; ${describeLeftOut(meta.gap)}` : "";
	const note = meta.sourceNote ? `; note: ${meta.sourceNote}` : "";
	return `${formatIdTag(meta.id)} ${meta.toolName} output stored ${meta.createdAt}: ${plural(meta.totalLines, "line")}, ${meta.totalBytes} bytes, from ${source}${capped}${note}`;
}

/** Answers one overflow_query call; throws QueryError for anything the model should fix. */
export async function runQuery(
	params: QueryParams,
	deps: QueryDependencies,
	signal?: AbortSignal,
): Promise<QueryAnswer> {
	const given = SELECTORS.filter((name) => params[name] !== undefined);
	if (given.length > 1) {
		throw new QueryError(
			`overflow_query: give at most one of search, lines, jsonPath, since (got ${given.join(" and ")}); ask one question per call.`,
		);
	}
	const meta = await loadEntry(deps.store, deps.config, params.id);
	let answer: QueryAnswer;
	if (params.search !== undefined) answer = await answerSearch(meta, params.search, deps, signal);
	else if (params.lines !== undefined) answer = await answerLines(meta, params.lines, deps);
	else if (params.jsonPath !== undefined) answer = await answerJsonPath(meta, params.jsonPath, deps, signal);
	else if (params.since !== undefined)
		answer = answerSince(meta, await loadEntry(deps.store, deps.config, params.since), deps);
	else answer = await answerInfo(meta, deps);
	// Every builder fits its answer; this is the guarantee's last line of defence.
	if (answer.text.length > deps.config.thresholdChars) {
		answer = {
			text: keepStart(answer.text, deps.config.thresholdChars),
			summary: { ...answer.summary, truncated: true },
		};
	}
	return answer;
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
