// What Pi's row of a bounded result says agrees with what the model got. `details.fullOutputPath`
// names the whole output (Pi's bash row shows it as "Full output: …"): the private copy, or Pi's own
// spill file where it was kept as the only whole copy. Once pi-overflow replaced a result's text by a
// view, Pi's `details.truncation` (which told of Pi's own cut: "Truncated: 507 lines shown (50.0KB
// limit)") tells of the view instead: the output's lines it shows of its true total. Pure.

import { isRecord, type ToolResultPatch } from "../intake/tool-result.js";
import { joinTextParts } from "../intake/stash.js";
import { formatIdTag } from "../lines/protocol.js";

export interface FullOutputOptions {
	/** The stored copy's path (`<root>/<id>.txt`) for an id. */
	textPath: (id: string) => string;
	/** Pi's spill file, when it was kept (made private) as the only whole copy (the stored one left its middle out). */
	keptSpillPath?: string;
	/** The view's budget in characters: the limit Pi's rows name ("23.4KB limit"). */
	budgetChars: number;
}

/** Pi's TruncationResult (core/tools/truncate.ts), as its renderers read it. */
export interface PiTruncation {
	content: string;
	truncated: boolean;
	truncatedBy: "lines" | "bytes" | null;
	totalLines: number;
	totalBytes: number;
	outputLines: number;
	outputBytes: number;
	lastLinePartial: boolean;
	firstLineExceedsLimit: boolean;
	maxLines: number;
	maxBytes: number;
}

/** A line of a view that shows one of the output's lines: its number, then ":" or "-" (lines/numbered.ts). */
const SHOWN_LINE = /^ *(\d+)[:-] /;

/** The patch with details.fullOutputPath and details.truncation as the row must tell them; unchanged without a stored id. */
export function describeFullOutput(patch: ToolResultPatch, options: FullOutputOptions): ToolResultPatch {
	const details = patch.details;
	if (!isRecord(details) || !isRecord(details.overflow) || typeof details.overflow.id !== "string") return patch;
	const { id, totalLines, totalBytes } = details.overflow as { id: string; totalLines?: unknown; totalBytes?: unknown };
	const out: Record<string, unknown> = { ...details };
	// A path already there is the private copy (spill-release.ts) or Pi's file kept as the whole copy.
	if (typeof out.fullOutputPath !== "string") out.fullOutputPath = options.keptSpillPath ?? options.textPath(id);
	const text = joinTextParts(patch.content);
	if (
		isRecord(details.truncation) &&
		text.startsWith(formatIdTag(id)) &&
		typeof totalLines === "number" &&
		typeof totalBytes === "number"
	)
		out.truncation = describeViewTruncation(text, totalLines, totalBytes, options.budgetChars);
	return { content: patch.content, details: out };
}

/** Pi's truncation record for a view: the output's lines it shows, of the output's own totals. */
export function describeViewTruncation(
	view: string,
	totalLines: number,
	totalBytes: number,
	budgetChars: number,
): PiTruncation {
	const outputLines = countShownLines(view);
	return {
		content: view,
		truncated: true,
		truncatedBy: "lines",
		totalLines,
		totalBytes,
		outputLines,
		outputBytes: Buffer.byteLength(view, "utf8"),
		lastLinePartial: false,
		firstLineExceedsLimit: false,
		maxLines: outputLines,
		maxBytes: budgetChars,
	};
}

/** How many of the output's lines a view shows (each once, however often it is repeated). */
export function countShownLines(view: string): number {
	const numbers = new Set<string>();
	for (const line of view.split("\n")) {
		const match = SHOWN_LINE.exec(line);
		if (match !== null) numbers.add(match[1]!);
	}
	return numbers.size;
}
