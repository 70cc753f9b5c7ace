// One tool result through stage 2: exempt? → resolve the original → store it → bounded view or
// recovery marker → patch. Invariants: it never throws (a failure yields a bounded result that
// says what went wrong); the text the model receives is never longer than thresholdChars; a
// result that fits and was not cut costs no disk I/O and no hashing; every non-text part and
// every details field is preserved, and details.overflow is merged in.

import type { OverflowConfig } from "./config.js";
import { LineScanner } from "./scan.js";
import {
	type ByteSource,
	bufferSource,
	describeError,
	findFailedBashSpillPath,
	openSpillFile,
	outputBeforeNotice,
	type PumpResult,
	pumpCapped,
	sourceEndsWith,
} from "./source.js";
import { joinTextParts, type Stash, takeStashed } from "./stash.js";
import { computeEntryId, type EntryMeta, type EntrySource, type EntryWriter, type OverflowStore } from "./store.js";
import { buildView } from "./view.js";

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

/** What the model can read back about a stored result (merged into details.overflow). */
export interface OverflowDetails {
	/** Absent when the original could not be stored. */
	id?: string;
	totalLines: number;
	totalBytes: number;
	truncated: boolean;
	/** Why the original could not be stored. */
	storeError?: string;
}

export interface BoundDependencies {
	config: OverflowConfig;
	store: OverflowStore;
	sessionId: string;
	/** The stage-1 ring; undefined when capture.ts is not loaded. */
	stash: Stash | undefined;
	now?: () => number;
}

interface ResolvedOriginal {
	source: ByteSource;
	kind: EntrySource;
	/** Why a better source was not used (kept in the metadata). */
	note?: string;
}

/** The status line Pi's bash ends a failed result with. */
const PI_BASH_STATUS = /(?:^|\n)(Command exited with code -?\d+|Command timed out after [\d.]+ seconds|Command aborted)$/;

/** Appended when an earlier layer cut a result that still fits. */
export function formatRecoveryMarker(id: string, totalLines: number, totalBytes: number): string {
	return `[pi-overflow id=${id} lines=${totalLines} bytes=${totalBytes}] full output stored; overflow_query can search or read it`;
}

function isRecord(value: unknown): value is Record<string, unknown> {
	return typeof value === "object" && value !== null && !Array.isArray(value);
}

function spillPathOf(event: ToolResultInput): string | undefined {
	if (isRecord(event.details) && typeof event.details.fullOutputPath === "string" && event.details.fullOutputPath.length > 0) {
		return event.details.fullOutputPath;
	}
	return undefined;
}

/**
 * Handles one tool result. Returns undefined when the result is left as it is.
 */
export async function boundToolResult(event: ToolResultInput, deps: BoundDependencies): Promise<ToolResultPatch | undefined> {
	const { config } = deps;
	const stashed = deps.stash ? takeStashed(deps.stash, event.toolCallId) : undefined;
	if (config.exemptTools.includes(event.toolName) || event.parentToolCallId) return undefined;

	const current = joinTextParts(event.content);
	const detailsPath = spillPathOf(event);
	// Where Pi's bash failed, only its own text names the spill file; an earlier layer may have cut
	// that text, so the untouched original from stage 1 is searched first.
	const noticeText = stashed !== undefined && stashed.text.length > current.length ? stashed.text : current;
	const failedBashPath =
		detailsPath === undefined && event.isError && event.toolName === "bash" && noticeText.length > 0 ? findFailedBashSpillPath(noticeText) : undefined;
	const stashLonger = stashed !== undefined && stashed.text.length > current.length;
	// The cheap exit: small, and nothing suggests a longer original.
	if (current.length <= config.thresholdChars && detailsPath === undefined && failedBashPath === undefined && !stashLonger) {
		return undefined;
	}

	try {
		const spill = detailsPath !== undefined ? { path: detailsPath, mustEndWith: undefined } : failedBashPath !== undefined ? { path: failedBashPath, mustEndWith: outputBeforeNotice(noticeText) } : undefined;
		return await boundLarge(event, deps, current, stashed?.text, spill);
	} catch (error) {
		// Last line of defence: never let the result through unbounded.
		return fallbackPatch(event, deps, current, describeError(error));
	}
}

/** A spill file to try; a path read from result text must end with the output that text kept. */
interface SpillCandidate {
	path: string;
	mustEndWith: string | undefined;
}

async function resolveOriginal(current: string, stashedText: string | undefined, spill: SpillCandidate | undefined): Promise<ResolvedOriginal> {
	let note: string | undefined;
	if (spill !== undefined) {
		const opened = await openSpillFile(spill.path);
		if (opened.ok) {
			// A spill file no longer than the text the model already has was not cut (Pi writes one
			// whenever raw output passes 50 KB, even when stripping escapes brought it back under).
			if (opened.source.size <= Buffer.byteLength(current, "utf8")) {
				await opened.source.close();
				note = "spill file is not longer than the result; not used";
			} else if (spill.mustEndWith === undefined || (await sourceEndsWith(opened.source, spill.mustEndWith))) {
				return { source: opened.source, kind: "spill-file" };
			} else {
				await opened.source.close();
				note = "spill file named in the output does not match it; not used";
			}
		} else {
			note = opened.reason;
		}
	}
	if (stashedText !== undefined && stashedText.length > current.length) {
		return { source: bufferSource(Buffer.from(stashedText, "utf8")), kind: "stash", note };
	}
	return { source: bufferSource(Buffer.from(current, "utf8")), kind: "current", note };
}

async function boundLarge(
	event: ToolResultInput,
	deps: BoundDependencies,
	current: string,
	stashedText: string | undefined,
	spill: SpillCandidate | undefined,
): Promise<ToolResultPatch | undefined> {
	const { config } = deps;
	const original = await resolveOriginal(current, stashedText, spill);
	try {
		if (original.kind === "current" && current.length <= config.thresholdChars) return undefined;
		const id = computeEntryId(deps.sessionId, event.toolCallId);
		// One pass over the original feeds both the store and the view; when the store fails, the
		// pass goes on for the view alone, so the result is bounded without reading anything twice.
		const scanner = new LineScanner(config);
		let storeError: string | undefined;
		let writer: EntryWriter | undefined;
		const giveUpStore = async (error: unknown) => {
			storeError = describeError(error);
			await writer?.abort();
			writer = undefined;
		};
		try {
			writer = await deps.store.beginEntry(id);
		} catch (error) {
			await giveUpStore(error);
		}
		let pumped: PumpResult;
		try {
			pumped = await pumpCapped(original.source, config.maxEntryBytes, async (chunk) => {
				scanner.push(chunk);
				if (!writer) return;
				try {
					await writer.write(chunk);
				} catch (error) {
					await giveUpStore(error);
				}
			});
		} catch (error) {
			await writer?.abort();
			throw error;
		}
		const scan = scanner.end();
		if (writer) {
			const meta: EntryMeta = {
				id,
				sessionId: deps.sessionId,
				toolCallId: event.toolCallId,
				toolName: event.toolName,
				createdAt: new Date(deps.now ? deps.now() : Date.now()).toISOString(),
				totalLines: scan.totalLines,
				totalBytes: scan.totalBytes,
				originalBytes: pumped.originalBytes,
				truncated: pumped.truncated,
				source: original.kind,
				...(original.note ? { sourceNote: original.note } : {}),
			};
			try {
				await writer.commit(meta);
			} catch (error) {
				await giveUpStore(error);
			}
		}
		return finish(event, config, current, scan, pumped, storeError === undefined ? id : undefined, storeError);
	} finally {
		await original.source.close().catch(() => {});
	}
}

function finish(
	event: ToolResultInput,
	config: OverflowConfig,
	current: string,
	scan: ReturnType<LineScanner["end"]>,
	pumped: PumpResult,
	id: string | undefined,
	storeError: string | undefined,
): ToolResultPatch {
	const overflow: OverflowDetails = {
		...(id ? { id } : {}),
		totalLines: scan.totalLines,
		totalBytes: scan.totalBytes,
		truncated: pumped.truncated,
		...(storeError ? { storeError } : {}),
	};
	if (current.length <= config.thresholdChars) {
		const marker = id
			? formatRecoveryMarker(id, scan.totalLines, scan.totalBytes)
			: `[pi-overflow] an earlier layer cut this output (${scan.totalLines} lines, ${scan.totalBytes} bytes in all) and the full output could not be stored: ${storeError ?? "unknown error"}`.slice(0, 400);
		if (current.length + 1 + marker.length <= config.thresholdChars) {
			return { content: appendToLastText(event.content, marker), details: mergeDetails(event.details, overflow) };
		}
	}
	// Pi's verdict on a failed command ("Command exited with code 2") is not part of the stored
	// output, so the view carries it on its own line above the footer.
	const status = event.isError ? PI_BASH_STATUS.exec(current.slice(-200))?.[1] : undefined;
	const statusLine = status ? `[${event.toolName}: ${status}]` : undefined;
	const view = buildView(scan, {
		...config,
		thresholdChars: config.thresholdChars - (statusLine ? statusLine.length + 1 : 0),
		id,
		storeError,
		toolName: event.toolName,
		truncatedNote: pumped.truncated ? `stored copy capped at ${pumped.storedBytes} of ${pumped.originalBytes} bytes, middle left out` : undefined,
	});
	const footerAt = view.lastIndexOf("\n");
	const text = statusLine ? `${view.slice(0, footerAt)}\n${statusLine}${view.slice(footerAt)}` : view;
	return { content: replaceText(event.content, text), details: mergeDetails(event.details, overflow) };
}

/** A bounded result built without the store or the original, when everything else failed. */
function fallbackPatch(event: ToolResultInput, deps: BoundDependencies, current: string, reason: string): ToolResultPatch | undefined {
	try {
		if (current.length <= deps.config.thresholdChars) return undefined;
		const scanner = new LineScanner(deps.config);
		scanner.push(Buffer.from(current, "utf8"));
		const scan = scanner.end();
		const text = buildView(scan, { ...deps.config, storeError: reason, toolName: event.toolName });
		return {
			content: replaceText(event.content, text),
			details: mergeDetails(event.details, { totalLines: scan.totalLines, totalBytes: scan.totalBytes, truncated: false, storeError: reason }),
		};
	} catch {
		const notice = `[pi-overflow] output of ${current.length} characters could not be processed (${reason.slice(0, 200)}); showing its end`;
		const room = Math.max(0, deps.config.thresholdChars - notice.length - 1);
		return { content: replaceText(event.content, `${notice}\n${current.slice(current.length - room)}`), details: event.details };
	}
}

function mergeDetails(details: unknown, overflow: OverflowDetails): unknown {
	if (details === undefined || details === null) return { overflow };
	if (isRecord(details)) return { ...details, overflow };
	return details; // not an object: nothing can be merged without changing its shape
}

/** The text parts replaced by one, at the first text part's place; everything else kept in order. */
function replaceText(content: ReadonlyArray<ContentPart>, text: string): ContentPart[] {
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

function appendToLastText(content: ReadonlyArray<ContentPart>, line: string): ContentPart[] {
	let last = -1;
	content.forEach((part, index) => {
		if (part.type === "text") last = index;
	});
	if (last < 0) return [{ type: "text", text: line }, ...content];
	return content.map((part, index) =>
		index === last && part.type === "text" ? { type: "text", text: `${part.text}\n${line}` } : part,
	);
}
