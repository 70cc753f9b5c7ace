// Which original a tool result has: the spill file it names when the file passes every check
// (source.ts) and agrees with what the tool showed, else the longer text the stash kept, else the
// current text. Invariant: a spill path is untrusted; a path read from the text is taken only from
// Pi's own notice on a failed bash command, and a file that is not this output is never used (the
// reason is kept as a note for the metadata and the view).

import { findPiBashStatus, isPiBashSpillPath, parsePiBashNotice } from "./pi-bash.js";
import {
	type ByteSource,
	bufferSource,
	minSourceBytes,
	openSpillFile,
	type SpillChecks,
	sourceEndsWith,
} from "../io/source.js";
import type { EntrySource } from "../store/index.js";
import { isRecord, type ToolResultInput } from "./tool-result.js";

/** A spill file a result names, and what it must agree with to be used. */
export interface SpillCandidate {
	path: string;
	/** The output the tool showed: the file, decoded, must end with exactly this. */
	kept: string;
	/** Pi's line count of the whole output ("of N" in its notice): the file must have N - 1 newlines. */
	totalLines?: number;
}

export interface ResolvedOriginal {
	source: ByteSource;
	kind: EntrySource;
	/** Why a better source was not used (kept in the metadata and shown in the view). */
	note?: string;
	/** See SpillCandidate.totalLines. */
	expectLines?: number;
}

function detailsSpillPath(event: ToolResultInput): string | undefined {
	if (
		isRecord(event.details) &&
		typeof event.details.fullOutputPath === "string" &&
		event.details.fullOutputPath.length > 0
	) {
		return event.details.fullOutputPath;
	}
	return undefined;
}

/**
 * The spill file a result names, with what the tool showed of it: Pi's bash notice (its kept output
 * and line count) when the text as the tool produced it ends with one naming this file, else the
 * whole produced text (a line naming the path dropped). A path read from text is taken only from
 * Pi's notice on a failed bash command, where Pi threw `details` away.
 */
export function findSpillCandidate(event: ToolResultInput, produced: string): SpillCandidate | undefined {
	const detailsPath = detailsSpillPath(event);
	const notice = event.toolName === "bash" ? parsePiBashNotice(produced) : undefined;
	if (detailsPath !== undefined) {
		if (notice !== undefined && notice.path === detailsPath)
			return { path: detailsPath, kept: notice.kept, totalLines: notice.totalLines };
		// Pi's verdict on a failed command is not part of the output.
		const status = event.toolName === "bash" && event.isError ? findPiBashStatus(produced) : undefined;
		const output =
			status === undefined ? produced : produced.slice(0, produced.length - status.length).replace(/\n\n$/, "");
		return { path: detailsPath, kept: withoutPathLine(output, detailsPath) };
	}
	if (notice?.status !== undefined && event.isError && isPiBashSpillPath(notice.path)) {
		return { path: notice.path, kept: notice.kept, totalLines: notice.totalLines };
	}
	return undefined;
}

/** The text without a last line that names `path` (a tool's own "full output: <path>" note). */
function withoutPathLine(text: string, path: string): string {
	const trimmed = text.replace(/\n+$/, "");
	const lineStart = trimmed.lastIndexOf("\n") + 1;
	if (!trimmed.slice(lineStart).includes(path)) return text;
	return trimmed.slice(0, lineStart).replace(/\n+$/, "");
}

/** The spill file when it passes every check, else the longer stashed original, else the current text. */
export async function resolveOriginal(
	current: string,
	stashedText: string | undefined,
	spill: SpillCandidate | undefined,
	checks: SpillChecks,
): Promise<ResolvedOriginal> {
	let note: string | undefined;
	if (spill !== undefined) {
		const opened = await openSpillFile(spill.path, checks);
		if (!opened.ok) {
			note = `${opened.reason}; not used`;
		} else if (opened.source.size <= minSourceBytes(spill.kept)) {
			// No longer than what the tool showed: not a cut original (each U+FFFD may be one invalid byte).
			await opened.source.close();
			note = "spill file is not longer than the result; not used";
		} else if (!(await sourceEndsWith(opened.source, spill.kept))) {
			await opened.source.close();
			note = "spill file does not end with the output the tool showed; not used";
		} else {
			return { source: opened.source, kind: "spill-file", expectLines: spill.totalLines };
		}
	}
	return fallbackOriginal(current, stashedText, note);
}

/** The longer stashed text, else the current text, in memory; `note` says why no spill file is used. */
export function fallbackOriginal(
	current: string,
	stashedText: string | undefined,
	note: string | undefined,
): ResolvedOriginal {
	if (stashedText !== undefined) return { source: bufferSource(Buffer.from(stashedText, "utf8")), kind: "stash", note };
	return { source: bufferSource(Buffer.from(current, "utf8")), kind: "current", note };
}
