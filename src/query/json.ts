// overflow_query's jsonPath answer: the path parsed, the stored text (from store.openText) walked
// by the streaming evaluator without building the document, and the selected value printed as
// pretty JSON within thresholdChars, with deeper paths suggested when it is cut.

import type { OverflowConfig } from "../config/config.js";
import { formatPathPrefix, parseJsonPath, type PathSegment } from "../json/path.js";
import { evaluateJsonPath, type JsonPathResult, type JsonValueSummary } from "../json/index.js";
import type { EntryMeta } from "../store/index.js";
import { formatIdTag } from "../lines/protocol.js";
import { plural } from "../lines/text.js";
import {
	echo,
	NOTES_RESERVE_CHARS,
	openEntryText,
	type QueryAnswer,
	type QueryDependencies,
	QueryError,
} from "./answer.js";

export async function answerJsonPath(
	meta: EntryMeta,
	path: string,
	deps: QueryDependencies,
	signal?: AbortSignal,
): Promise<QueryAnswer> {
	const { config } = deps;
	if (typeof path !== "string")
		throw new QueryError(
			"overflow_query: jsonPath must be a string such as items[0].name, or $ for the whole document",
		);
	const parsed = parseJsonPath(path);
	if ("error" in parsed) throw new QueryError(`overflow_query: ${parsed.error}`);
	const canonical = formatPathPrefix(parsed.segments);
	const headerOf = (summary: JsonValueSummary): string =>
		`${formatIdTag(meta.id)} jsonPath ${echo(canonical)}: ${describeValue(summary)}`;
	const text = await openEntryText(meta, deps);
	let result: JsonPathResult;
	try {
		result = await evaluateJsonPath(text, parsed.segments, {
			roomFor: (summary) => config.thresholdChars - headerOf(summary).length - NOTES_RESERVE_CHARS,
			timeoutMs: config.searchTimeoutMs,
			signal,
			...deps.jsonPathTuning,
		});
	} finally {
		await text.close();
	}
	switch (result.type) {
		case "missing":
			throw new QueryError(`overflow_query: ${result.message}`);
		case "notJson": {
			const capped = meta.truncated
				? "; the stored copy had its middle left out (maxEntryBytes), so it cannot parse"
				: "";
			throw new QueryError(
				`overflow_query: the stored output of id=${meta.id} is not JSON (${result.reason})${capped}; use search or lines instead`,
			);
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

function formatJsonAnswer(
	header: string,
	segments: readonly PathSegment[],
	value: { summary: JsonValueSummary; text: string; totalChars: number },
	config: OverflowConfig,
): QueryAnswer {
	const canonical = formatPathPrefix(segments);
	const valueType = describeValue(value.summary);
	if (value.text.length >= value.totalChars) {
		return {
			text: `${header}\n${value.text}`,
			summary: { selector: "jsonPath", truncated: false, path: canonical, valueType },
		};
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
		const listed = summary.keys
			.slice(0, 5)
			.map((key) => echo(formatPathPrefix([...segments, key])))
			.join(", ");
		return `e.g. ${listed}${summary.size > 5 ? `, … (${summary.size} keys)` : ""}`;
	}
	return "or use search to find the part you need";
}
