// Registers overflow_query with Pi: the TypeBox schema, the model-facing description and
// guidelines, and a compact TUI rendering (one line: selector, hits or lines, cut or not; the full
// answer only when the row is expanded). Failures are thrown (Pi reports a thrown error to the
// model as an isError result whose text is the message), always as short messages, never stacks.

import type { AgentToolResult, ExtensionAPI, Theme, ToolRenderResultOptions } from "@mariozechner/pi-coding-agent";
import { Text } from "@mariozechner/pi-tui";
import { Type } from "@sinclair/typebox";
import type { OverflowConfig } from "../config/config.js";
import { type QueryDependencies, QueryError, type QueryParams, type QuerySummary, runQuery } from "../query/index.js";
import { ID_TAG_EXAMPLE, ID_TAG_PLACEHOLDER, QUERY_TOOL_NAME } from "../lines/protocol.js";
import { toOneLine } from "../lines/text.js";
import { formatCounts } from "../reruns/compare.js";

export { QUERY_TOOL_NAME };

/** Longest error text passed on from an unexpected failure. */
const MAX_UNEXPECTED_ERROR_CHARS = 300;

export const QueryParameters = Type.Object(
	{
		id: Type.String({ pattern: "^[0-9a-f]{12}$", description: `The 12-hex-digit id from a ${ID_TAG_EXAMPLE} line.` }),
		search: Type.Optional(
			Type.String({
				minLength: 1,
				maxLength: 2000,
				description:
					"Case-insensitive JavaScript regex, matched line by line; returns hit lines with numbers and context, and the total hit count.",
			}),
		),
		lines: Type.Optional(
			Type.Object(
				{
					start: Type.Integer({ minimum: 1, description: "First line (1-based), as numbered in the view." }),
					end: Type.Optional(
						Type.Integer({
							minimum: 1,
							description: "Last line (inclusive); clamped to the last line. Omit for as many as fit.",
						}),
					),
				},
				{ additionalProperties: false },
			),
		),
		jsonPath: Type.Optional(
			Type.String({
				minLength: 1,
				maxLength: 1000,
				description: 'Path into the stored text parsed as JSON, e.g. items[0].name or $.data["key.with.dots"].',
			}),
		),
		since: Type.Optional(
			Type.String({
				pattern: "^[0-9a-f]{12}$",
				description:
					"The id of an earlier run of the same command: every signal line new in this run, gone since that one, and still there, with line numbers on both sides.",
			}),
		),
	},
	{ additionalProperties: false },
);

/** The model-facing description; states the search time bound from the config. */
export function describeQueryTool(config: OverflowConfig): string {
	const seconds = config.searchTimeoutMs / 1000;
	return [
		`Search or read the full stored output of an earlier tool result that pi-overflow shortened. Such a result shows a ${ID_TAG_PLACEHOLDER} line; its line numbers are the ones used here.`,
		"Give the id and at most one selector:",
		`- search: case-insensitive JavaScript regex over each line, e.g. {"id":"3f2a9c1b7d4e","search":"error|failed"} → hit lines "N: text" with ${config.contextLines} context lines "N- text" around each (at most ${config.maxResults} hits shown) and the total hit count. A search stops after ${seconds} s (searchTimeoutMs) and returns the hits found so far.`,
		'- lines: a 1-based inclusive range, e.g. {"id":"3f2a9c1b7d4e","lines":{"start":1200,"end":1300}}; a long range returns what fits and says where to continue.',
		'- jsonPath: when the output is JSON, a dot/bracket path, e.g. {"id":"3f2a9c1b7d4e","jsonPath":"items[7].name"} → that value as pretty JSON.',
		'- since: the id of an earlier run of the same command, e.g. {"id":"3f2a9c1b7d4e","since":"9d0e1f2a3b4c"} → every signal line that is new, gone (fixed) or still there, with line numbers on both sides. A re-run\'s view names its last run\'s id.',
		`With only the id: the entry's metadata and its first-screen view. Every answer is at most ${config.thresholdChars} characters.`,
	].join("\n");
}

/** System-prompt guideline bullets; each names the tool, since they are read out of context. */
export function createQueryGuidelines(config: OverflowConfig): string[] {
	return [
		`When a tool result contains a ${ID_TAG_PLACEHOLDER} line, its full output is stored: call ${QUERY_TOOL_NAME} with that id (search, lines or jsonPath) instead of re-running the command or guessing the omitted part.`,
		`Use ${QUERY_TOOL_NAME} search (a regex such as "error|warn") to find lines, then ${QUERY_TOOL_NAME} lines {start, end} to read around a line number; ${QUERY_TOOL_NAME} jsonPath reads one value of JSON output.`,
		`An ${QUERY_TOOL_NAME} search stops after ${config.searchTimeoutMs / 1000} s; if it reports that it stopped, retry with a simpler pattern (no nested quantifiers such as (a+)+).`,
	];
}

function describeSelector(args: Partial<QueryParams> | undefined): string {
	if (args === undefined) return "";
	if (typeof args.search === "string") return `search /${toOneLine(args.search, 60)}/i`;
	if (args.lines !== undefined && typeof args.lines === "object" && args.lines !== null) {
		const { start, end } = args.lines;
		return end === undefined ? `lines ${start}…` : `lines ${start}–${end}`;
	}
	if (typeof args.jsonPath === "string") return `jsonPath ${toOneLine(args.jsonPath, 60)}`;
	if (typeof args.since === "string") return `since ${toOneLine(args.since, 20)}`;
	return "overview";
}

/** One line for the TUI: what came back, and whether something was left out (`firstLine`: the answer's). */
export function describeAnswer(summary: QuerySummary | undefined, firstLine?: string): string {
	if (summary === undefined) return "done";
	const cut = summary.truncated ? " (cut)" : "";
	switch (summary.selector) {
		case "search": {
			const hits = summary.hits ?? 0;
			if (summary.timedOut) return `stopped at the time limit: ${hits}+ hit lines, ${summary.shownHits ?? 0} shown`;
			if (hits === 0) return "no hit";
			return `${hits} hit line${hits === 1 ? "" : "s"}, ${summary.shownHits ?? 0} shown`;
		}
		case "lines":
			return summary.lines
				? `lines ${summary.lines[0]}–${summary.lines[1]} of ${summary.totalLines ?? "?"}${cut}`
				: `no lines${cut}`;
		case "jsonPath":
			return `${summary.path ?? "$"}: ${summary.valueType ?? "value"}${cut}`;
		case "since": {
			return `${summary.counts === undefined ? "compared" : formatCounts(summary.counts)}${cut}`;
		}
		default: {
			// The entry's own header ("bash output stored …: 150000 lines, …") says more than "overview".
			const header = firstLine?.replace(/^\[pi-overflow id=[0-9a-f]{12}\] /, "").trim();
			return header ? `overview: ${header}${cut}` : `overview${cut}`;
		}
	}
}

function isQuerySummary(value: unknown): value is QuerySummary {
	return typeof value === "object" && value !== null && typeof (value as { selector?: unknown }).selector === "string";
}

function firstText(result: AgentToolResult<unknown>): string {
	for (const part of result.content) if (part.type === "text") return part.text;
	return "";
}

function renderAnswer(
	result: AgentToolResult<unknown>,
	options: ToolRenderResultOptions,
	theme: Theme,
	isError: boolean,
): string {
	if (options.isPartial) return theme.fg("muted", "querying…");
	const text = firstText(result);
	if (isError) {
		const message = text.split("\n", 1)[0] ?? "";
		return theme.fg("error", toOneLine(message, options.expanded ? 2000 : 160));
	}
	const summary = isQuerySummary(result.details) ? result.details : undefined;
	const described = describeAnswer(summary, text.split("\n", 1)[0]);
	const line = summary?.truncated ? theme.fg("warning", described) : theme.fg("success", described);
	return options.expanded ? `${line}\n${theme.fg("toolOutput", text)}` : line;
}

export function registerQueryTool(pi: ExtensionAPI, deps: QueryDependencies): void {
	pi.registerTool({
		name: QUERY_TOOL_NAME,
		label: "Overflow query",
		description: describeQueryTool(deps.config),
		promptSnippet: `Search or read the full output behind a ${ID_TAG_EXAMPLE} line (regex search, line ranges, JSON paths)`,
		promptGuidelines: createQueryGuidelines(deps.config),
		parameters: QueryParameters,
		async execute(_toolCallId, params, signal) {
			try {
				const answer = await runQuery(params, deps, signal);
				return { content: [{ type: "text", text: answer.text }], details: answer.summary };
			} catch (error) {
				if (error instanceof QueryError) throw error;
				if (error instanceof Error && error.name === "AbortError") throw error;
				// Anything else is our fault: pass on a short message, never a stack.
				const message = error instanceof Error ? error.message : String(error);
				throw new Error(`overflow_query failed: ${toOneLine(message, MAX_UNEXPECTED_ERROR_CHARS)}`);
			}
		},
		renderCall(args, theme, context) {
			const text = context.lastComponent instanceof Text ? context.lastComponent : new Text("", 0, 0);
			const id = typeof args?.id === "string" ? args.id : "";
			const parts = [
				theme.fg("toolTitle", theme.bold(QUERY_TOOL_NAME)),
				id === "" ? "" : theme.fg("accent", id),
				theme.fg("muted", describeSelector(args)),
			];
			text.setText(parts.filter((part) => part !== "").join(" "));
			return text;
		},
		renderResult(result, options, theme, context) {
			const text = context.lastComponent instanceof Text ? context.lastComponent : new Text("", 0, 0);
			text.setText(renderAnswer(result, options, theme, context.isError));
			return text;
		},
	});
}
