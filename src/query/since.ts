// overflow_query's `since` answer: the full comparison of a stored run with an earlier run of the
// same command (reruns/compare.ts), from both entries' run records — every new and gone signal line,
// with line numbers on both sides — bounded like every answer. Errors say what to give instead.

import type { OverflowConfig } from "../config/config.js";
import { compareRuns, countChanges, formatComparison, type RunSide } from "../reruns/compare.js";
import type { EntryMeta, OverflowStore } from "../store/index.js";
import type { QueryAnswer } from "./answer.js";
import { QueryError } from "./answer.js";

/** A stored entry as one side of a comparison, or an error naming what is missing. */
function sideOf(meta: EntryMeta): RunSide & { id: string } {
	if (meta.run === undefined)
		throw new QueryError(
			`overflow_query: id=${meta.id} has no record of its signal lines (stored before re-runs were compared, or compareReruns is off); compare by reading both with search instead.`,
		);
	return {
		id: meta.id,
		signals: meta.run.signals,
		...(meta.run.verdict ? { verdict: meta.run.verdict } : {}),
		...(meta.status ? { status: meta.status } : {}),
		totalLines: meta.totalLines,
	};
}

/** The comparison of `meta` (the later run) with the earlier run `earlier`, of the same command. */
export function answerSince(
	meta: EntryMeta,
	earlier: EntryMeta,
	deps: { config: OverflowConfig; store: OverflowStore },
): QueryAnswer {
	if (earlier.id === meta.id)
		throw new QueryError(
			`overflow_query: since must name another run than id=${meta.id}, e.g. the id of its last run.`,
		);
	const later = sideOf(meta);
	const before = sideOf(earlier);
	if (meta.run?.key !== earlier.run?.key || meta.toolName !== earlier.toolName)
		throw new QueryError(
			`overflow_query: id=${earlier.id} ran something else (${earlier.run?.label ?? earlier.toolName}) than id=${meta.id} (${meta.run?.label ?? meta.toolName}); since compares runs of the same command.`,
		);
	const comparison = compareRuns(before.signals, later.signals);
	const { text, truncated } = formatComparison(comparison, before, later, deps.config.thresholdChars);
	return { text, summary: { selector: "since", truncated, counts: countChanges(comparison) } };
}
