// One tool result through stage 2, as one run (BoundRun): resolve its original (original.ts) → copy it
// (one pass that stores and scans it) → decide (leave / mark / bound, decideBound) → emit the recovery
// marker or the view (view/compose.ts). Invariants: it never throws (a failure yields a bounded result
// that says what went wrong); the model never gets more than the result's budget; a result that fits
// and was not cut costs no disk I/O and no hashing; non-text parts and details are kept; line numbers
// and totals are the output's own, also when the stored copy leaves out the middle.

import type { OverflowConfig } from "../config/config.js";
import {
	fallbackOriginal,
	findSpillCandidate,
	type ResolvedOriginal,
	resolveOriginal,
	type SpillCandidate,
} from "../intake/original.js";
import { findPiBashStatus } from "../intake/pi-bash.js";
import { joinTextParts, type Stash, takeStashed } from "../intake/stash.js";
import {
	appendToLastText,
	mergeDetails,
	replaceText,
	type ToolResultInput,
	type ToolResultPatch,
} from "../intake/tool-result.js";
import { bufferSource, type PumpResult, pumpCapped } from "../io/source.js";
import { formatFullOutputNote, formatNotice, formatRecoveryMarker } from "../lines/protocol.js";
import { describeError, keepStart } from "../lines/text.js";
import { LineScanner, type ScanOptions } from "../scan/scan.js";
import type { EntryWriter, OverflowStore } from "../store/index.js";
import {
	compose,
	endScan,
	readComposeExtras,
	type ScannedSource,
	scanSource,
	type ViewMeta,
	viewContextOf,
	withLineReading,
} from "../view/compose.js";
import type { ViewExtras } from "../view/hunks.js";
import type { ViewOptions } from "../view/view.js";
import { findKeyLines } from "../view/view.js";
import { type Comparison, compareRuns, countChanges, formatRerunLines, type RunSide } from "../reruns/compare.js";
import type { RunIdentity } from "../reruns/run-key.js";
import { recordRun, summarizeScan } from "../reruns/summary.js";
import type { RunRecord } from "../store/index.js";
import type { ScanResult } from "../scan/scan.js";
import { cutKeptWholeLine, describeEntry, describeWhatTheCutLost } from "./scan-report.js";

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
	/**
	 * The call as a run of its command (reruns/): its identity, stored with the entry, and the last run
	 * of the same command, which a view compares itself with. Absent: no run record (compareReruns off).
	 */
	run?: {
		/** The call's identity as a run; undefined when its arguments make none. Asked only when an entry is stored. */
		identify: () => RunIdentity | undefined;
		readEarlier: (identity: RunIdentity) => Promise<RunSide | undefined>;
	};
	/** Told when a view compared its result with the last run of the same command. */
	onRerun?: (comparison: Comparison) => void;
}

/** Characters of each decisive line carried in details.overflow.top. */
const TOP_LINE_CHARS = 200;
/** Room the lines a cut lost leave for a spill path in the text to become the private copy's path. */
const SPILL_PATH_SLACK_CHARS = 512;

/**
 * Tools whose row in Pi's TUI shows `details.fullOutputPath` ("Full output: …": Pi's bash renderer);
 * every other tool's row shows only its text, so its bounded text ends with the path.
 */
const ROWS_SHOWING_FULL_OUTPUT_PATH: ReadonlySet<string> = new Set(["bash"]);

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
	/**
	 * Once the original is scanned: the text kept at least one whole line of it (cutKeptWholeLine).
	 * False when an earlier layer's cut left nothing useful (nothing, or a fragment of one line).
	 */
	keptWholeLine?: boolean;
}

/**
 * The one rule: a text longer than its budget is bounded; a text that fits is left as it is unless
 * a longer original exists, and then it is marked, when the marker fits with it and the cut kept a
 * whole line of the original (else bounded: the view of the original serves better).
 */
export function decideBound(facts: BoundFacts): BoundDecision {
	if (facts.currentChars > facts.budgetChars) return "bound";
	if (!facts.longer) return "leave";
	if (facts.keptWholeLine === false) return "bound";
	if (facts.markerChars === undefined || facts.currentChars + 1 + facts.markerChars <= facts.budgetChars) return "mark";
	return "bound";
}

/** Handles one tool result. Returns undefined when the result is left as it is. */
export async function boundToolResult(
	event: ToolResultInput,
	deps: BoundDependencies,
): Promise<ToolResultPatch | undefined> {
	const run = openRun(event, deps);
	if (run === undefined) return undefined;
	try {
		return await run.execute();
	} catch (error) {
		// Last line of defence: never let the result through unbounded.
		return await run.fallback(describeError(error));
	}
}

/** The result's budget: thresholdChars, or its share of the context window (budgetChars) when less. */
export function resultBudget(deps: Pick<BoundDependencies, "config" | "budgetChars">): number {
	const threshold = deps.config.thresholdChars;
	const budget = deps.budgetChars;
	return budget !== undefined && budget < threshold ? Math.max(1, Math.floor(budget)) : threshold;
}

/**
 * The run of one result, or undefined when it is left as it is: an exempt tool or a nested call, or
 * the cheap exit (the text fits and nothing suggests a longer original: no disk I/O, no hashing).
 */
function openRun(event: ToolResultInput, deps: BoundDependencies): BoundRun | undefined {
	const stashed = deps.stash ? takeStashed(deps.stash, event.toolCallId, event) : undefined;
	if (deps.config.exemptTools.includes(event.toolName) || event.parentToolCallId) return undefined;
	const current = joinTextParts(event.content);
	// The text as the tool produced it (a later layer may have cut or rewritten the current text):
	// what a spill file must agree with.
	const spill = findSpillCandidate(event, stashed?.text ?? current);
	const stashedText = stashed !== undefined && stashed.text.length > current.length ? stashed.text : undefined;
	const budgetChars = resultBudget(deps);
	const longer = spill !== undefined || stashedText !== undefined;
	// Decided before the run is made: most results end here, and they allocate nothing more.
	if (decideBound({ currentChars: current.length, budgetChars, longer }) === "leave") return undefined;
	return new BoundRun(event, deps, { current, stashedText, spill, budgetChars });
}

/** What a run starts from. */
interface RunInput {
	/** The text the model would receive as it is. */
	current: string;
	/** The stashed original, when it is longer than the current text. */
	stashedText: string | undefined;
	/** The spill file the result names, not yet checked. */
	spill: SpillCandidate | undefined;
	/** The result's budget (resultBudget). */
	budgetChars: number;
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

/** What the copy step gives: the scanned original, and its stored copy on the way to its commit. */
interface Copied {
	kind: "copied";
	scanned: ScannedSource;
	pumped: PumpResult;
	/** Why the stored copy failed before its commit, when it did. */
	storeError?: string;
	/** Settles once the stored copy is committed (fsync, link): undefined, or why it is not stored. */
	committed: Promise<string | undefined>;
	/** The view's reads, started before the commit when the view is sure. */
	extras?: Promise<ViewExtras>;
	/** The run record stored with the entry, and the comparison its view shows. */
	run?: { record: RunRecord; comparison?: Comparison };
}

/** The copy step's other outcome: the original lacks the lines it must have (nothing was kept). */
interface LineMismatch {
	kind: "mismatch";
	/** Newlines the original has. */
	newlines: number;
}

/** One result's run: resolve → copy → decide → emit, each a step below; the facts it decides on are fixed at its start. */
class BoundRun {
	private readonly config: OverflowConfig;
	private readonly current: string;
	private readonly stashedText: string | undefined;
	private readonly spill: SpillCandidate | undefined;
	private readonly budgetChars: number;
	/** Pi's verdict on a failed command (not part of the output): stored with it, shown under its view. */
	private readonly status: string | undefined;
	/** The text is over its budget: it gets a view whatever its original turns out to be. */
	private readonly viewSure: boolean;

	constructor(
		private readonly event: ToolResultInput,
		private readonly deps: BoundDependencies,
		input: RunInput,
	) {
		this.config = deps.config;
		this.current = input.current;
		this.stashedText = input.stashedText;
		this.spill = input.spill;
		this.budgetChars = input.budgetChars;
		this.status = event.isError ? findPiBashStatus(input.current) : undefined;
		this.viewSure = this.decide(true) === "bound";
	}

	/**
	 * decideBound on this result: `longer` when a longer original exists (or may), `markerChars` and
	 * `keptWholeLine` once known.
	 */
	decide(longer: boolean, markerChars?: number, keptWholeLine?: boolean): BoundDecision {
		return decideBound({
			currentChars: this.current.length,
			budgetChars: this.budgetChars,
			longer,
			markerChars,
			keptWholeLine,
		});
	}

	async execute(): Promise<ToolResultPatch | undefined> {
		// A view is sure: its entry (id, temp file) starts while the original is resolved, and the
		// view's reads and composing overlap the commit.
		const early = this.viewSure ? this.startEntry() : undefined;
		let original: ResolvedOriginal;
		try {
			original = await this.resolve();
		} catch (error) {
			await discardEntry(early);
			throw error;
		}
		try {
			if (this.decide(original.kind !== "current") === "leave") {
				await discardEntry(early);
				return undefined;
			}
			const { id, start } = await (early ?? this.startEntry());
			let copy = await this.copy(original, id, start);
			if (copy.kind === "mismatch") {
				// The spill file does not have the lines Pi counted: not this command's output.
				const note = `spill file has ${copy.newlines + 1} lines where Pi's notice says ${original.expectLines}; not used`;
				await original.source.close().catch(() => {});
				original = fallbackOriginal(this.current, this.stashedText, note);
				if (this.decide(original.kind !== "current") === "leave") return undefined;
				copy = await this.copy(original, id, id === undefined ? start : this.beginStore(id));
				if (copy.kind === "mismatch") throw new Error("a text in memory cannot disagree with itself");
			}
			return await this.emit(original, id, copy);
		} finally {
			await original.source.close().catch(() => {});
		}
	}

	/** Step 1: which original (a checked spill file, the stashed original, or the current text). */
	private resolve(): Promise<ResolvedOriginal> {
		const checks = { uid: this.deps.uid ?? process.getuid?.(), notBeforeMs: this.deps.toolStartedAt };
		return resolveOriginal(this.current, this.stashedText, this.spill, checks);
	}

	/**
	 * Step 2: one pass over the original feeds both the store and the scan; when the store fails, the
	 * pass goes on for the scan alone, so the result is bounded without reading anything twice. The
	 * first read does not wait for the stored copy's temp file (`start`). A mismatch when the original
	 * lacks the lines it must have (nothing is kept). When a view is sure, its reads run during the commit.
	 */
	private async copy(
		original: ResolvedOriginal,
		id: string | undefined,
		start: Promise<StoreStart>,
	): Promise<Copied | LineMismatch> {
		const { config } = this;
		const scanner = new LineScanner(await withLineReading(original.source, this.scanOptions()));
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
				recordsSeen: () => scanner.recordsSeen,
			});
			await begun;
		} catch (error) {
			await begun;
			await writer?.abort();
			throw error;
		}
		if (original.expectLines !== undefined && scanner.newlines + 1 !== original.expectLines) {
			await writer?.abort();
			return { kind: "mismatch", newlines: scanner.newlines };
		}
		// A stored copy with a left-out middle is read as records only when its gap was placed among them.
		const scanned = await endScan(scanner, original.source, pumped.gap === undefined || pumped.recordGap !== undefined);
		if (scanned.scan.separator === "cr" && pumped.recordGap !== undefined)
			pumped = { ...pumped, gap: pumped.recordGap };
		const extras = this.viewSure ? readComposeExtras(scanned, config) : undefined;
		// Awaited by emit, which reports a failure; never left unhandled when something throws first.
		extras?.catch(() => {});
		// The last run of the command is read while the view's reads run.
		const run = await this.describeRun(scanned.scan);
		const before = storeError;
		const committing = writer;
		const committed = (async () => {
			if (committing !== undefined && id !== undefined) {
				const { scan } = scanned;
				try {
					await committing.commit(
						describeEntry(id, this.event, this.deps, original, {
							scan,
							pumped,
							writer: committing,
							status: this.status,
							run: run?.record,
						}),
					);
				} catch (error) {
					await giveUpStore(error);
				}
			}
			return storeError;
		})();
		return {
			kind: "copied",
			scanned,
			pumped,
			committed,
			...(before !== undefined ? { storeError: before } : {}),
			...(extras ? { extras } : {}),
			...(run ? { run } : {}),
		};
	}

	/**
	 * The run record of this call (reruns/summary.ts) and, when the same command ran before, its
	 * comparison with that run. Never rejects: an earlier run that cannot be read is not compared.
	 */
	private async describeRun(scan: ScanResult): Promise<Copied["run"]> {
		const run = this.deps.run;
		const identity = run?.identify();
		if (run === undefined || identity === undefined) return undefined;
		const summary = summarizeScan(scan);
		const earlier = await run.readEarlier(identity).catch(() => undefined);
		if (earlier === undefined) return { record: recordRun(identity, summary) };
		const comparison = compareRuns(earlier.signals, summary.signals);
		const later: RunSide = { ...summary, totalLines: scan.totalLines, ...(this.status ? { status: this.status } : {}) };
		const lines = formatRerunLines(comparison, earlier, later);
		return {
			record: recordRun(identity, summary, {
				...(earlier.id ? { id: earlier.id } : {}),
				lines,
				counts: countChanges(comparison),
			}),
			comparison,
		};
	}

	/**
	 * Steps 3 and 4: waits for the commit and emits the patch for its outcome. When a view is sure and
	 * the copy is still on its way to the store, the view as it reads once stored is composed while
	 * the commit runs (fsync, link); it is composed again (no id, the error said) when the commit fails.
	 */
	private async emit(original: ResolvedOriginal, id: string | undefined, copy: Copied): Promise<ToolResultPatch> {
		const composing =
			this.viewSure && id !== undefined && copy.storeError === undefined
				? this.patchFor(original, copy, id, undefined)
				: undefined;
		composing?.catch(() => {});
		const storeError = await copy.committed;
		const storedId = storeError === undefined ? id : undefined;
		if (storedId !== undefined && original.kind === "spill-file" && this.spill !== undefined)
			this.deps.onSpillUsed?.(this.spill.path);
		if (composing !== undefined && storedId !== undefined) return await composing;
		return await this.patchFor(original, copy, storedId, storeError);
	}

	/** The patch for a copied original: the recovery marker under a text that fits (decide: mark), else the view. */
	private async patchFor(
		original: ResolvedOriginal,
		copy: Copied,
		id: string | undefined,
		storeError: string | undefined,
	): Promise<ToolResultPatch> {
		const { config, event, current } = this;
		const { scan } = copy.scanned;
		const top = findKeyLines(scan, config).map((item) => ({
			line: item.lineNumber,
			text: keepStart(item.text, TOP_LINE_CHARS),
		}));
		const overflow: OverflowDetails = {
			...(id ? { id } : {}),
			totalLines: scan.totalLines,
			totalBytes: scan.totalBytes,
			truncated: copy.pumped.gap !== undefined,
			...(storeError ? { storeError } : {}),
			...(top.length > 0 ? { top } : {}),
		};
		const details = mergeDetails(event.details, overflow);
		// Where the full output is, for a row that shows only the text: the view or the marker ends with it.
		const pathNote =
			id !== undefined && !ROWS_SHOWING_FULL_OUTPUT_PATH.has(event.toolName)
				? formatFullOutputNote(this.deps.store.textPath(id))
				: undefined;
		const marker = id
			? formatRecoveryMarker(id, scan.totalLines, scan.totalBytes)
			: formatNotice(
					`an earlier layer cut this output (${scan.totalLines} lines, ${scan.totalBytes} bytes in all) and the full output could not be stored: ${storeError ?? "unknown error"}`,
				).slice(0, 400);
		const longer = original.kind !== "current";
		// Judged only when the text fits: a longer one is bounded anyway.
		const keptWholeLine = longer && current.length <= this.budgetChars ? cutKeptWholeLine(scan, current) : undefined;
		// The marker and the path note must fit with the text.
		const markerChars = marker.length + (pathNote === undefined ? 0 : pathNote.length + 1);
		if (this.decide(longer, markerChars, keptWholeLine) === "mark") {
			// Room is left for the text's spill path to be replaced by the (longer) private one (spill-release.ts).
			const room = this.budgetChars - current.length - 1 - markerChars - SPILL_PATH_SLACK_CHARS;
			const lost = describeWhatTheCutLost(scan, current, config, room);
			// The path right under the marker: the text's last line stays the output's last line.
			const added = [marker, ...(pathNote === undefined ? [] : [pathNote]), ...lost];
			return { content: appendToLastText(event.content, added.join("\n")), details };
		}
		const meta: ViewMeta = {
			id,
			toolName: event.toolName,
			gap: copy.pumped.gap,
			sourceNote: original.note,
			status: this.status,
			// What a re-run's view says of the last run is shown only with an id (an entry that can be compared again).
			...(id !== undefined && copy.run ? { run: copy.run.record } : {}),
		};
		const reserved = pathNote === undefined ? 0 : pathNote.length + 1;
		const composed = await compose(copy.scanned, this.viewOptions(meta, storeError, reserved), copy.extras);
		const view = pathNote === undefined ? composed : `${composed}\n${pathNote}`;
		if (id !== undefined && copy.run?.comparison) this.deps.onRerun?.(copy.run.comparison);
		return { content: replaceText(event.content, view), details };
	}

	/** A bounded result built without the store or the original, when everything else failed. */
	async fallback(reason: string): Promise<ToolResultPatch | undefined> {
		const { event, current } = this;
		try {
			if (current.length <= this.budgetChars) return undefined;
			const scanned = await scanSource(bufferSource(Buffer.from(current, "utf8")), this.scanOptions());
			const text = await compose(scanned, this.viewOptions({ toolName: event.toolName }, reason));
			return {
				content: replaceText(event.content, text),
				details: mergeDetails(event.details, {
					totalLines: scanned.scan.totalLines,
					totalBytes: scanned.scan.totalBytes,
					truncated: false,
					storeError: reason,
				}),
			};
		} catch {
			const notice = formatNotice(
				`output of ${current.length} characters could not be processed (${reason.slice(0, 200)}); showing its end`,
			);
			const room = Math.max(0, this.budgetChars - notice.length - 1);
			return {
				content: replaceText(event.content, `${notice}\n${current.slice(current.length - room)}`),
				details: event.details,
			};
		}
	}

	private scanOptions(): ScanOptions {
		return this.deps.scanClock ? { ...this.config, now: this.deps.scanClock } : this.config;
	}

	/** The view's options: the result's budget less `reserved` characters, and what the entry's metadata says (viewContextOf). */
	private viewOptions(meta: ViewMeta, storeError: string | undefined, reserved = 0): ViewOptions {
		return {
			...this.config,
			thresholdChars: Math.max(1, this.budgetChars - reserved),
			...viewContextOf(meta, this.config),
			...(storeError !== undefined ? { storeError } : {}),
		};
	}

	/** Allocates the result's entry id and begins its stored copy; never rejects. */
	private async startEntry(): Promise<EntryStart> {
		try {
			const id = await this.deps.store.allocateEntryId(this.deps.sessionId, this.event.toolCallId);
			return { id, start: this.beginStore(id) };
		} catch (error) {
			return { start: Promise.resolve({ error: describeError(error) }) };
		}
	}

	/** Begins the stored copy of entry `id` (its temp file); never rejects. */
	private beginStore(id: string): Promise<StoreStart> {
		return this.deps.store.beginEntry(id).then(
			(writer) => ({ writer }),
			(error: unknown) => ({ error: describeError(error) }),
		);
	}
}

/** Removes a stored copy begun for nothing (the result was left as it is, or failed first). */
async function discardEntry(entry: Promise<EntryStart> | undefined): Promise<void> {
	if (entry === undefined) return;
	const { writer } = await (await entry).start;
	await writer?.abort();
}
