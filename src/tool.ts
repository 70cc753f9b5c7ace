// Registers overflow_query with Pi: the TypeBox schema, the model-facing description and
// guidelines, and a compact TUI rendering. Failures are thrown (Pi reports a thrown error to the
// model as an isError result whose text is the message).

import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";
import { Type } from "@sinclair/typebox";
import type { OverflowConfig } from "./config.js";
import { QueryError, runQuery, type QueryParams } from "./query.js";
import type { OverflowStore } from "./store.js";

export const QUERY_TOOL_NAME = "overflow_query";

export const QueryParameters = Type.Object(
	{
		id: Type.String({ pattern: "^[0-9a-f]{12}$", description: "The id from a [pi-overflow id=…] line." }),
		search: Type.Optional(
			Type.String({ minLength: 1, maxLength: 2000, description: "Case-insensitive JavaScript regex; returns matching lines with context." }),
		),
		lines: Type.Optional(
			Type.Object(
				{
					start: Type.Integer({ minimum: 1, description: "First line (1-based)." }),
					end: Type.Optional(Type.Integer({ minimum: 1, description: "Last line (inclusive); clamped to the last line." })),
				},
				{ additionalProperties: false },
			),
		),
		jsonPath: Type.Optional(Type.String({ minLength: 1, maxLength: 1000, description: "Path into the stored text parsed as JSON, e.g. items[0].name." })),
	},
	{ additionalProperties: false },
);

export function registerQueryTool(pi: ExtensionAPI, deps: { config: OverflowConfig; store: OverflowStore }): void {
	pi.registerTool({
		name: QUERY_TOOL_NAME,
		label: "Overflow query",
		description:
			"Search or read the full stored output of an earlier tool result that pi-overflow shortened (marked by a [pi-overflow id=…] line). " +
			"Give the id and at most one selector: search (regex), lines {start,end}, or jsonPath. With only id, shows the entry's overview.",
		promptSnippet: "Search or read the full output behind a [pi-overflow id=…] line",
		promptGuidelines: [
			"When a tool result contains a [pi-overflow id=…] line, the full output is stored: use overflow_query with that id instead of re-running the command.",
		],
		parameters: QueryParameters,
		async execute(_toolCallId, params) {
			try {
				const answer = await runQuery(params as QueryParams, deps);
				return { content: [{ type: "text", text: answer.text }], details: answer.summary };
			} catch (error) {
				if (error instanceof QueryError) throw error;
				throw new Error(`overflow_query failed: ${error instanceof Error ? error.message.slice(0, 300) : String(error).slice(0, 300)}`);
			}
		},
	});
}
