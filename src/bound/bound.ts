// One tool result through stage 2: exempt? → which original (original.ts) → decideBound (leave /
// mark / bound) → one pass that stores and scans it → recovery marker or bounded view. Invariants:
// it never throws (a failure yields a bounded result that says what went wrong); the model never
// gets more than the result's budget; a result that fits and was not cut costs no disk I/O and no
// hashing; non-text parts and details are kept (tool-result.ts); line numbers and totals are the
// output's own, also when the stored copy leaves out the middle.

import type { OverflowConfig } from "../config/config.js";
import {
	fallbackOriginal,
	findSpillCandidate,
	type ResolvedOriginal,
	resolveOriginal,
	type SpillCandidate,
} from "../intake/original.js";
import { findPiBashStatus } from "../intake/pi-bash.js";
import { LineScanner } from "../scan/scan.js";
import { bufferSource, type PumpResult, pumpCapped, type SpillChecks } from "../io/source.js";
import { joinTextParts, type Stash, takeStashed } from "../intake/stash.js";
import type { EntryWriter, OverflowStore } from "../store/index.js";
import { formatNotice, formatRecoveryMarker } from "../lines/protocol.js";
import { describeError, keepStart } from "../lines/text.js";
import { describeEntry, describeWhatTheCutLost } from "./scan-report.js";
import {
	appendToLastText,
	mergeDetails,
	replaceText,
	type ToolResultInput,
	type ToolResultPatch,
} from "../intake/tool-result.js";
import type { ViewExtras } from "../view/hunks.js";
import { compose, endScan, readComposeExtras, type ScannedSource, scanSource, viewContextOf } from "../view/compose.js";
import { findKeyLines } from "../view/view.js";

export type { ContentPart, ToolResultInput, ToolResultPatch } from "../intake/tool-result.js";

/** What the model can read back about a stored result (merged into details.overflow). */
export interface OverflowDetails {
	/** Absent when the original could not be stored. */
	id?: string;
	/** The output's own totals (also when the stored copy left out its middle). */
	totalLines: number;
	totalBytes: number;
	/** The stored copy left out the middle (maxEntryBytes). */
	truncated: boolean;
	/** Why the original could not be stored. */
	storeError?: string;
	/** The most decisive lines (view.ts findKeyLines), each clipped: what a masked view keeps. */
	top?: Array<{ line: number; text: string }>;
}

export interface BoundDependencies {
	config: OverflowConfig;
	store: OverflowStore;
	sessionId: string;
	/** The stage-1 ring; undefined when capture.ts is not loaded. */
	stash: Stash | undefined;
	now?: () => number;
	/** Epoch ms when the tool started (Pi's tool_call event): a spill file must have been written since. */
	toolStartedAt?: number;
	/** The user running Pi, who must own a spill file; default process.getuid(). */
	uid?: number;
	/**
	 * This result's share of the context window, in characters (budget.ts): a result longer than this
	 * is bounded and its view is at most this long. Default, and never more than, config.thresholdChars.
	 */
	budgetChars?: number;
	/** The clock the signal search's time budget is measured with (ScanOptions.now); default performance.now. */
	scanClock?: () => number;
	/** Told the spill file the stored copy was read from (also one only the stashed original named). */
	onSpillUsed?: (path: string) => void;
}

/** Characters of each decisive line carried in details.overflow.top. */
const TOP_LINE_CHARS = 200;
/** Room the lines a cut lost leave for a spill path in the text to become the private copy's path. */
const SPILL_PATH_SLACK_CHARS = 512;

/** What the bound stage does with a result: leave it as it is, append the recovery marker, or replace it by a view. */
export type BoundDecision = "leave" | "mark" | "bound";

/** What is known about a result when a decision is made (more is known at each step). */
export interface BoundFacts {
	/** Characters of the text the model would receive as it is. */
	currentChars: number;
	/** The result's budget (thresholdChars, or less: budgetChars). */
	budgetChars: number;
	/** A longer original exists or may exist (a spill file named, a longer stashed text, the original resolved). */
	longer: boolean;
	/** The recovery marker's length, once it is known: it must fit with the text. */
	markerChars?: number;
}

/**
 * The one rule: a text longer than its budget is bounded; a text that fits is left as it is unless
 * a longer original exists, and then it is marked, when the marker fits with it (else bounded).
 */
export function decideBound(facts: BoundFacts): BoundDecision {
	if (facts.currentChars > facts.budgetChars) return "bound";
	if (!facts.longer) return "leave";
	if (facts.markerChars === undefined || facts.currentChars + 1 + facts.markerChars <= facts.budgetChars) return "mark";
	return "bound";
}

/**
 * Handles one tool result. Returns undefined when the result is left as it is.
 */
export async function boundToolResult(
	event: ToolResultInput,
	given: BoundDependencies,
): Promise<ToolResultPatch | undefined> {
	const deps = applyBudget(given);
	const { config } = deps;
	const stashed = deps.stash ? takeStashed(deps.stash, event.toolCallId, event) : undefined;
	if (config.exemptTools.includes(event.toolName) || event.parentToolCallId) return undefined;

	const current = joinTextParts(event.content);
	// The text as the tool produced it (a later layer may have cut or rewritten the current text):
	// what a spill file must agree with.
	const produced = stashed?.text ?? current;
	const spill = findSpillCandidate(event, produced);
	const stashLonger = stashed !== undefined && stashed.text.length > current.length;
	// The cheap exit: small, and nothing suggests a longer original.
	if (
		decideBound({
			currentChars: current.length,
			budgetChars: config.thresholdChars,
			longer: spill !== undefined || stashLonger,
		}) === "leave"
	)
		return undefined;

	try {
		return await boundLarge(event, deps, current, stashLonger ? stashed.text : undefined, spill);
	} catch (error) {
		// Last line of defence: never let the result through unbounded.
		return await fallbackPatch(event, deps, current, describeError(error));
	}
}

/** The dependencies with thresholdChars lowered to the result's budget, so every decision below holds it. */
function applyBudget(deps: BoundDependencies): BoundDependencies {
	const budget = deps.budgetChars;
	if (budget === undefined || !(budget < deps.config.thresholdChars)) return deps;
	return { ...deps, config: { ...deps.config, thresholdChars: Math.max(1, Math.floor(budget)) } };
}

/** What a spill file must be to be used for this result. */
function spillChecks(deps: BoundDependencies): SpillChecks {
	return { uid: deps.uid ?? process.getuid?.(), notBeforeMs: deps.toolStartedAt };
}

interface Copied {
	/** The scanned original, with the scanner's shape counts (rare lines join a signal's block). */
	scanned: ScannedSource;
	pumped: PumpResult;
	/** Set when the store could not keep the original. */
	storeError?: string;
	/** The view's reads, started before the stored copy was committed when a view is sure to be built. */
	extras?: Promise<ViewExtras>;
}

/** A stored copy begun (its writer), or why there is none; never rejects. */
interface StoreStart {
	writer?: EntryWriter;
	error?: string;
}

/** The entry's id, or why there is none, and its stored copy begun. */
interface EntryStart {
	id?: string;
	start: Promise<StoreStart>;
}

/** Allocates the result's entry id and begins its stored copy; never rejects. */
async function startEntry(event: ToolResultInput, deps: BoundDependencies): Promise<EntryStart> {
	try {
		const id = await deps.store.allocateEntryId(deps.sessionId, event.toolCallId);
		return { id, start: beginStore(deps, id) };
	} catch (error) {
		return { start: Promise.resolve({ error: describeError(error) }) };
	}
}

/** Begins the stored copy of entry `id` (its temp file); never rejects. */
function beginStore(deps: BoundDependencies, id: string): Promise<StoreStart> {
	return deps.store.beginEntry(id).then(
		(writer) => ({ writer }),
		(error: unknown) => ({ error: describeError(error) }),
	);
}

/** Removes a stored copy begun for nothing (the result was left as it is, or failed first). */
async function discardEntry(entry: Promise<EntryStart> | undefined): Promise<void> {
	if (entry === undefined) return;
	const { writer } = await (await entry).start;
	await writer?.abort();
}

async function boundLarge(
	event: ToolResultInput,
	deps: BoundDependencies,
	current: string,
	stashedText: string | undefined,
	spill: SpillCandidate | undefined,
): Promise<ToolResultPatch | undefined> {
	const { config } = deps;
	// A text longer than its budget is replaced by a view whatever else is found: its entry (id, temp
	// file) is started while the original is resolved, and the view's reads and composing overlap the commit.
	const viewSure =
		decideBound({ currentChars: current.length, budgetChars: config.thresholdChars, longer: true }) === "bound";
	const early = viewSure ? startEntry(event, deps) : undefined;
	let original: ResolvedOriginal;
	try {
		original = await resolveOriginal(current, stashedText, spill, spillChecks(deps));
	} catch (error) {
		await discardEntry(early);
		throw error;
	}
	const leave = () =>
		decideBound({
			currentChars: current.length,
			budgetChars: config.thresholdChars,
			longer: original.kind !== "current",
		}) === "leave";
	let entryTaken = false;
	try {
		if (leave()) return undefined;
		const entry = await (early ?? startEntry(event, deps));
		entryTaken = true;
		const { id } = entry;
		const status = event.isError ? findPiBashStatus(current) : undefined;
		let copied = await copyOriginal(event, deps, original, id, entry.start, status, viewSure);
		if ("newlines" in copied) {
			// The spill file does not have the lines Pi counted: not this command's output.
			const note = `spill file has ${copied.newlines + 1} lines where Pi's notice says ${original.expectLines}; not used`;
			await original.source.close().catch(() => {});
			original = fallbackOriginal(current, stashedText, note);
			if (leave()) return undefined;
			const again = id === undefined ? entry.start : beginStore(deps, id);
			copied = await copyOriginal(event, deps, original, id, again, status, viewSure);
			if ("newlines" in copied) throw new Error("a text in memory cannot disagree with itself");
		}
		const done = copied;
		// The view as it reads when the commit succeeds, composed while the commit runs (fsync, link);
		// the result waits for the commit all the same, and is composed again when the commit fails.
		const composing =
			viewSure && id !== undefined && done.storeError === undefined
				? finish(event, config, current, done, original, id, status)
				: undefined;
		composing?.catch(() => {});
		const storeError = await done.committed;
		const storedId = storeError === undefined ? id : undefined;
		if (storedId !== undefined && original.kind === "spill-file" && spill !== undefined) deps.onSpillUsed?.(spill.path);
		if (composing !== undefined && storedId !== undefined) return await composing;
		return await finish(
			event,
			config,
			current,
			{ ...done, ...(storeError !== undefined ? { storeError } : {}) },
			original,
			storedId,
			status,
		);
	} finally {
		if (!entryTaken) await discardEntry(early);
		await original.source.close().catch(() => {});
	}
}

/**
 * One pass over the original feeds both the store and the scan; when the store fails, the pass
 * goes on for the scan alone, so the result is bounded without reading anything twice. The first
 * read does not wait for the stored copy's temp file (`start`). Returns the newline count instead
 * when the original does not have the lines it must have (nothing is kept). `committed` resolves
 * once the stored copy is committed (fsync, link), to why it is not stored; when `viewSure`, the
 * view's reads run meanwhile.
 */
async function copyOriginal(
	event: ToolResultInput,
	deps: BoundDependencies,
	original: ResolvedOriginal,
	id: string | undefined,
	start: Promise<StoreStart>,
	status: string | undefined,
	viewSure: boolean,
): Promise<(Copied & { committed: Promise<string | undefined> }) | { newlines: number }> {
	const { config } = deps;
	const scanner = new LineScanner(deps.scanClock ? { ...config, now: deps.scanClock } : config);
	let storeError: string | undefined;
	let writer: EntryWriter | undefined;
	const begun = start.then((started) => {
		writer = started.writer;
		storeError = started.error;
	});
	const giveUpStore = async (error: unknown) => {
		storeError = describeError(error);
		await writer?.abort();
		writer = undefined;
	};
	let pumped: PumpResult;
	try {
		pumped = await pumpCapped(original.source, config.maxEntryBytes, {
			scan: (chunk) => scanner.push(chunk),
			store: async (chunk, last) => {
				await begun;
				if (!writer) return;
				try {
					await writer.write(chunk);
					// The stored copy's last fsync runs while its last chunk is scanned.
					if (last) writer.seal();
				} catch (error) {
					await giveUpStore(error);
				}
			},
			newlinesSeen: () => scanner.newlines,
		});
		await begun;
	} catch (error) {
		await begun;
		await writer?.abort();
		throw error;
	}
	if (original.expectLines !== undefined && scanner.newlines + 1 !== original.expectLines) {
		await writer?.abort();
		return { newlines: scanner.newlines };
	}
	const scanned = endScan(scanner, original.source);
	const { scan } = scanned;
	const extras = viewSure ? readComposeExtras(scanned, config) : undefined;
	// Awaited by finish, which reports a failure; never left unhandled when something throws first.
	extras?.catch(() => {});
	const before = storeError;
	const committing = writer;
	const committed = (async () => {
		if (committing !== undefined && id !== undefined) {
			try {
				await committing.commit(describeEntry(id, event, deps, original, { scan, pumped, writer: committing, status }));
			} catch (error) {
				await giveUpStore(error);
			}
		}
		return storeError;
	})();
	return {
		scanned,
		pumped,
		committed,
		...(before !== undefined ? { storeError: before } : {}),
		...(extras ? { extras } : {}),
	};
}

/** The patch for a copied original: the recovery marker under a text that fits, else the view. */
async function finish(
	event: ToolResultInput,
	config: OverflowConfig,
	current: string,
	copied: Copied,
	original: ResolvedOriginal,
	id: string | undefined,
	status: string | undefined,
): Promise<ToolResultPatch> {
	const { pumped, storeError } = copied;
	const { scan } = copied.scanned;
	const top = findKeyLines(scan, config).map((item) => ({
		line: item.lineNumber,
		text: keepStart(item.text, TOP_LINE_CHARS),
	}));
	const overflow: OverflowDetails = {
		...(id ? { id } : {}),
		totalLines: scan.totalLines,
		totalBytes: scan.totalBytes,
		truncated: pumped.gap !== undefined,
		...(storeError ? { storeError } : {}),
		...(top.length > 0 ? { top } : {}),
	};
	const marker = id
		? formatRecoveryMarker(id, scan.totalLines, scan.totalBytes)
		: formatNotice(
				`an earlier layer cut this output (${scan.totalLines} lines, ${scan.totalBytes} bytes in all) and the full output could not be stored: ${storeError ?? "unknown error"}`,
			).slice(0, 400);
	const facts = {
		currentChars: current.length,
		budgetChars: config.thresholdChars,
		longer: original.kind !== "current",
		markerChars: marker.length,
	};
	if (decideBound(facts) === "mark") {
		// Room is left for the text's spill path to be replaced by the (longer) private one (spill-release.ts).
		const lost = describeWhatTheCutLost(
			scan,
			current,
			config,
			config.thresholdChars - current.length - 1 - marker.length - SPILL_PATH_SLACK_CHARS,
		);
		return {
			content: appendToLastText(event.content, [marker, ...lost].join("\n")),
			details: mergeDetails(event.details, overflow),
		};
	}
	const context = viewContextOf(
		{ id, toolName: event.toolName, gap: pumped.gap, sourceNote: original.note, status },
		config,
	);
	const view = await compose(copied.scanned, { ...config, ...context, storeError }, copied.extras);
	return { content: replaceText(event.content, view), details: mergeDetails(event.details, overflow) };
}

/** A bounded result built without the store or the original, when everything else failed. */
async function fallbackPatch(
	event: ToolResultInput,
	deps: BoundDependencies,
	current: string,
	reason: string,
): Promise<ToolResultPatch | undefined> {
	try {
		if (current.length <= deps.config.thresholdChars) return undefined;
		const scanned = await scanSource(bufferSource(Buffer.from(current, "utf8")), deps.config);
		const { scan } = scanned;
		const text = await compose(scanned, { ...deps.config, storeError: reason, toolName: event.toolName });
		return {
			content: replaceText(event.content, text),
			details: mergeDetails(event.details, {
				totalLines: scan.totalLines,
				totalBytes: scan.totalBytes,
				truncated: false,
				storeError: reason,
			}),
		};
	} catch {
		const notice = formatNotice(
			`output of ${current.length} characters could not be processed (${reason.slice(0, 200)}); showing its end`,
		);
		const room = Math.max(0, deps.config.thresholdChars - notice.length - 1);
		return {
			content: replaceText(event.content, `${notice}\n${current.slice(current.length - room)}`),
			details: event.details,
		};
	}
}
