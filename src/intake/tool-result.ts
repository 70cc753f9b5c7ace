// The shape of a tool result as Pi's tool_result event carries it, and the pure edits the bound stage
// makes to it. Invariant: every non-text part keeps its place and every details field is kept;
// details.overflow is merged in only where details is an object (or absent).

/** The fields of Pi's tool_result event that the bound stage reads. */
export interface ToolResultInput {
	toolName: string;
	toolCallId: string;
	content: ReadonlyArray<ContentPart>;
	details?: unknown;
	isError?: boolean;
	/** Set by hosts that run tools inside tools; such nested results are left alone. */
	parentToolCallId?: unknown;
}

/** A part of a tool result's content, as Pi's TextContent and ImageContent. */
export type ContentPart = { type: "text"; text: string } | { type: "image"; data: string; mimeType: string };

export interface ToolResultPatch {
	content: ContentPart[];
	details: unknown;
}

export function isRecord(value: unknown): value is Record<string, unknown> {
	return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** `details` with `overflow` set: a new object; details that are not an object are returned as they are. */
export function mergeDetails(details: unknown, overflow: object): unknown {
	if (details === undefined || details === null) return { overflow };
	if (isRecord(details)) return { ...details, overflow };
	return details; // not an object: nothing can be merged without changing its shape
}

/** The text parts replaced by one, at the first text part's place; everything else kept in order. */
export function replaceText(content: ReadonlyArray<ContentPart>, text: string): ContentPart[] {
	const out: ContentPart[] = [];
	let placed = false;
	for (const part of content) {
		if (part.type !== "text") {
			out.push(part);
		} else if (!placed) {
			out.push({ type: "text", text });
			placed = true;
		}
	}
	if (!placed) out.unshift({ type: "text", text });
	return out;
}

/** `line` appended to the last text part (after a newline), or as a first text part when there is none. */
export function appendToLastText(content: ReadonlyArray<ContentPart>, line: string): ContentPart[] {
	let last = -1;
	content.forEach((part, index) => {
		if (part.type === "text") last = index;
	});
	if (last < 0) return [{ type: "text", text: line }, ...content];
	return content.map((part, index) =>
		index === last && part.type === "text" ? { type: "text", text: `${part.text}\n${line}` } : part,
	);
}
