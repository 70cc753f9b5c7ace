// The regex search over a stored file, run in a worker thread so that a runaway pattern such as
// `(a+)+$` can never block Pi: one regex step cannot be interrupted in JavaScript, but a worker can
// be terminated. Invariants: a search's timeoutMs counts from when its worker begins it; waiting for
// a worker (at most MAX_SEARCH_WORKERS run at once, the rest queue in order) is bounded separately
// by maxWaitMs and never reported as the pattern's slowness; so searchFile answers within maxWaitMs
// + timeoutMs + DEFAULT_HARD_STOP_GRACE_MS (plus the few ms termination takes) with every line the
// worker had reported, and a search that searched every line is complete; the main thread never
// runs the model's regex over the file. The workers (kept warm, replaced after a termination, never
// keeping the process alive) are pool.ts's; what runs in them, worker.js's.

import { receiveMessageOnPort } from "node:worker_threads";
import { isByteSafePattern } from "../../regex/safety.js";
import { acquireWorker, createAbortError, releaseWorker, retireWorker, runAt, type SearchWorker } from "./pool.js";
import {
	readProgress,
	type SearchDoneMessage,
	type SearchLine,
	type SearchWorkerMessage,
	type SearchWorkerRequest,
} from "./protocol.js";

export {
	disposeSearchWorkers,
	MAX_IDLE_SEARCH_WORKERS,
	MAX_SEARCH_WORKERS,
	prewarmSearchWorker,
	readSearchWorkerStats,
	SEARCH_WORKER_HEAP_MB,
} from "./pool.js";

/** Bytes read per step; each step is one regex pass over the whole lines it holds. */
export const DEFAULT_SEARCH_CHUNK_BYTES = 1024 * 1024;
/** A line longer than this is searched in segments instead of being held whole. */
export const DEFAULT_GIANT_LINE_BYTES = 8 * 1024 * 1024;
/** How long after the deadline a worker may take to answer by itself before it is terminated. */
export const DEFAULT_HARD_STOP_GRACE_MS = 100;
/** Shortest wait for a worker a search accepts before it gives up without running (covers a worker's start on a loaded machine). */
export const DEFAULT_MIN_WAIT_MS = 5_000;
/** Longest wait for a worker, in multiples of the search's timeoutMs, when that is more than DEFAULT_MIN_WAIT_MS. */
export const DEFAULT_WAIT_TIMEOUTS = 3;

export interface SearchOptions {
	/** The model's regex (JavaScript syntax); compiled case-insensitive. */
	pattern: string;
	contextLines: number;
	/** Hit lines collected at most; hits after them are still counted. */
	maxResults: number;
	/** Longest part of a line sent back (hit lines: a window around the match). */
	maxLineChars: number;
	/** Longest the search may run, in ms, counted from when its worker begins it. */
	timeoutMs: number;
	/**
	 * Longest the search may wait for a worker (and for the worker to begin it), in ms; past it the
	 * search answers without having run (stopped.cause "wait"). Default
	 * max(DEFAULT_MIN_WAIT_MS, DEFAULT_WAIT_TIMEOUTS × timeoutMs).
	 */
	maxWaitMs?: number;
	/** Stop collecting lines once their text passes this many characters (hits are still counted). */
	budgetChars: number;
	/** Default DEFAULT_SEARCH_CHUNK_BYTES (tests make it small). */
	chunkBytes?: number;
	/** Default DEFAULT_GIANT_LINE_BYTES. */
	giantLineBytes?: number;
	/** The file is CR-separated records (EntryMeta.separator "cr"): each CR is read as an LF. */
	crRecords?: boolean;
	/** Default DEFAULT_HARD_STOP_GRACE_MS. */
	hardStopGraceMs?: number;
	/** Aborting terminates the worker (or leaves the queue); searchFile then rejects. */
	signal?: AbortSignal;
	/** Tests only: the worker's deadline follows a virtual clock on which each searched line takes this many ms. */
	virtualMsPerLine?: number;
	/** Tests only: the worker pauses this long after searching the last line, before it answers. */
	holdBeforeDoneMs?: number;
}

export interface SearchStop {
	/**
	 * "time": timeoutMs ran out while the search ran. "wait": every worker stayed busy with other
	 * searches for maxWaitMs, so the search never started (atLine 1; it says nothing about the pattern).
	 */
	cause: "time" | "wait";
	/** The first line not fully searched. */
	atLine: number;
	/** How long the search ran (0 when it never started). */
	elapsedMs: number;
	/** True when a single regex step was still running and the worker was terminated. */
	terminated: boolean;
	/** When terminated: the last line that step was searching (it ran on lines atLine–stepLastLine). */
	stepLastLine: number;
}

export interface SearchResult {
	/** Shown lines in line order: hit lines with their context; a jump in numbers is a gap. */
	lines: SearchLine[];
	/** Hit lines counted (in the whole file unless `stopped`). */
	totalHits: number;
	/** Hit lines among `lines`. */
	collectedHits: number;
	/** Why hits stopped being collected before the end, if they did. */
	collectionStop: "maxResults" | "budget" | null;
	/** Set when the time ran out before the whole file was searched. */
	stopped: SearchStop | null;
	/** Lines searched (the file's line count when not stopped). */
	linesSearched: number;
	/** How long the search ran, from when its worker began it. */
	elapsedMs: number;
	/** How long it waited for a worker before that (or before it gave up, when stopped.cause is "wait"). */
	waitedMs: number;
}

export type { SearchLine };

export type CompiledPattern = { regex: RegExp } | { error: string };

/** Compiles the model's pattern as the worker will; the error is V8's reason without the echo. */
export function compileSearchPattern(pattern: string): CompiledPattern {
	try {
		return { regex: new RegExp(pattern, "gim") };
	} catch (error) {
		const message = error instanceof Error ? error.message : String(error);
		const reason = message.startsWith("Invalid regular expression:")
			? message.slice(message.lastIndexOf(": ") + 2)
			: message;
		return { error: reason };
	}
}

let nextRequestId = 1;

/** A failure of the search machinery itself (not of the pattern): the worker could not start or crashed. */
export class SearchEngineError extends Error {
	constructor(message: string) {
		super(message);
		this.name = "SearchEngineError";
	}
}

/** The answer of a search that waited `waitedMs` for a worker and never ran. */
function createNotStartedResult(waitedMs: number): SearchResult {
	return {
		lines: [],
		totalHits: 0,
		collectedHits: 0,
		collectionStop: null,
		stopped: { cause: "wait", atLine: 1, elapsedMs: 0, terminated: false, stepLastLine: 1 },
		linesSearched: 0,
		elapsedMs: 0,
		waitedMs,
	};
}

/**
 * Searches a regular file line by line, as grep -n -i -E -C would, in a worker. `file` is its path,
 * or a descriptor of this process (store.openText's) that the worker reads with pread and never
 * closes: the caller closes it once searchFile has settled. (A worker terminated at that moment may
 * still issue one pread on the closed number; it only reads, and its answer is already discarded.)
 * Resolves with the hits so far when the time runs out, and without hits (stopped.cause "wait") when
 * no worker began it within maxWaitMs; rejects with a SearchEngineError when the worker cannot run,
 * and with an AbortError-named Error when `signal` aborts.
 */
export async function searchFile(file: string | number, options: SearchOptions): Promise<SearchResult> {
	const askedAt = Date.now();
	const waitEnd =
		askedAt + (options.maxWaitMs ?? Math.max(DEFAULT_MIN_WAIT_MS, DEFAULT_WAIT_TIMEOUTS * options.timeoutMs));
	let acquired: SearchWorker | undefined;
	try {
		acquired = await acquireWorker(waitEnd, options.signal);
	} catch (error) {
		if (error instanceof Error && error.name === "AbortError") throw error;
		throw new SearchEngineError(
			`could not start the search worker: ${error instanceof Error ? error.message : String(error)}`,
		);
	}
	if (acquired === undefined) return createNotStartedResult(Date.now() - askedAt);
	const handle = acquired;
	const request: SearchWorkerRequest = {
		type: "search",
		id: nextRequestId++,
		...(typeof file === "number" ? { fd: file } : { path: file }),
		pattern: options.pattern,
		contextLines: options.contextLines,
		maxResults: options.maxResults,
		maxLineChars: options.maxLineChars,
		budgetChars: options.budgetChars,
		timeoutMs: options.timeoutMs,
		chunkBytes: options.chunkBytes ?? DEFAULT_SEARCH_CHUNK_BYTES,
		giantLineBytes: Math.max(
			options.giantLineBytes ?? DEFAULT_GIANT_LINE_BYTES,
			options.chunkBytes ?? DEFAULT_SEARCH_CHUNK_BYTES,
		),
		latin1: isByteSafePattern(options.pattern),
		...(options.crRecords ? { crRecords: true } : {}),
		virtualMsPerLine: options.virtualMsPerLine,
		holdBeforeDoneMs: options.holdBeforeDoneMs,
	};
	return new Promise<SearchResult>((resolve, reject) =>
		new WorkerSearch({ handle, request, options, askedAt, waitEnd, resolve, reject }).start(),
	);
}

interface WorkerSearchSetup {
	handle: SearchWorker;
	request: SearchWorkerRequest;
	options: SearchOptions;
	/** Date.now() when searchFile was called. */
	askedAt: number;
	/** Date.now() past which a search its worker has not begun answers that it did not run. */
	waitEnd: number;
	resolve(result: SearchResult): void;
	reject(error: Error): void;
}

/**
 * One search on its worker, from posting the request to settling once: on the worker's "done", at
 * the hard stop (timeoutMs + grace after the worker began it), at the wait limit, on an abort, or
 * when the worker fails. Keeps every line the worker posted.
 */
class WorkerSearch {
	private readonly lines: SearchLine[] = [];
	private settled = false;
	private cancelTimer: (() => void) | undefined;
	/** Date.now() when the worker began this search (its "started" message); the search's clock starts there. */
	private startedAt: number | undefined;
	private readonly setup: WorkerSearchSetup;

	constructor(setup: WorkerSearchSetup) {
		this.setup = setup;
	}

	start(): void {
		const { handle, request, options, waitEnd } = this.setup;
		handle.pending = {
			id: request.id,
			onMessage: (message) => this.onMessage(message),
			onFailure: (error) =>
				this.finish(
					() => this.setup.reject(new SearchEngineError(`the search worker stopped: ${error.message}`)),
					false,
				),
		};
		if (options.signal?.aborted) {
			this.onAbort();
			return;
		}
		options.signal?.addEventListener("abort", this.onAbort, { once: true });
		this.armTimer(this.onWaitLimit, waitEnd);
		handle.port.postMessage(request);
	}

	private finish(settle: () => void, keepWorker: boolean): void {
		if (this.settled) return;
		this.settled = true;
		const { handle, options } = this.setup;
		this.cancelTimer?.();
		options.signal?.removeEventListener("abort", this.onAbort);
		if (!keepWorker && !handle.dead) void retireWorker(handle);
		releaseWorker(handle);
		settle();
	}

	private toResult(done: SearchDoneMessage | undefined, progress: Float64Array, terminated: boolean): SearchResult {
		const { request, options, askedAt } = this.setup;
		const lines = this.lines;
		const runStart = this.startedAt ?? Date.now();
		const elapsedMs = Date.now() - runStart;
		// The progress slots belong to this request only once the worker has started it.
		const slots = readProgress(progress, request.id);
		// Every line searched and posted, the done message not yet sent: complete all the same.
		const complete = done ? done.stoppedAtLine === 0 : slots?.complete === true;
		const totalHits = done ? done.totalHits : (slots?.totalHits ?? 0);
		const atLine = done ? done.stoppedAtLine : (slots?.resumeLine ?? 1);
		const stepLastLine = !done && slots ? Math.max(atLine, slots.stepLastLine) : atLine;
		const collectedHits = lines.filter((line) => line.hit).length;
		const collectionStop = done
			? done.collectionStop
			: (slots?.collectionStop ?? (collectedHits >= options.maxResults ? "maxResults" : null));
		return {
			lines,
			totalHits,
			collectedHits,
			collectionStop,
			stopped: complete ? null : { cause: "time", atLine, elapsedMs, terminated, stepLastLine },
			linesSearched: done ? done.linesSearched : Math.max(0, atLine - 1),
			elapsedMs,
			waitedMs: runStart - askedAt,
		};
	}

	private onMessage(message: SearchWorkerMessage): void {
		const { handle, request, options, resolve, reject } = this.setup;
		if (this.settled || message.id !== request.id) return;
		if (message.type === "started") {
			this.startedAt = message.startedAt;
			this.armTimer(
				this.onHardStop,
				this.startedAt + options.timeoutMs + (options.hardStopGraceMs ?? DEFAULT_HARD_STOP_GRACE_MS),
			);
			return;
		}
		if (message.type === "lines") {
			this.lines.push(...message.lines);
			return;
		}
		if (message.error !== undefined) {
			const error = message.error;
			this.finish(() => reject(new SearchEngineError(`the search failed: ${error}`)), true);
			return;
		}
		this.finish(() => resolve(this.toResult(message, handle.progress, false)), true);
	}

	private armTimer(onTimer: () => void, at: number): void {
		this.cancelTimer?.();
		this.cancelTimer = runAt(at, onTimer);
	}

	/** Takes every message the worker has posted so far; true while the search is still unsettled. */
	private drainMessages(): boolean {
		const port = this.setup.handle.port;
		for (
			let next = receiveMessageOnPort(port);
			next !== undefined && !this.settled;
			next = receiveMessageOnPort(port)
		) {
			this.onMessage(next.message as SearchWorkerMessage);
		}
		return !this.settled;
	}

	/**
	 * The worker overran its deadline by the grace (a regex step that does not end): answer with what
	 * it reported, then terminate it. The progress is read before the messages are taken, so every
	 * line it counts has arrived.
	 */
	private readonly onHardStop = (): void => {
		const progress = this.setup.handle.progress.slice();
		if (!this.drainMessages()) return;
		const result = this.toResult(undefined, progress, true);
		this.finish(() => this.setup.resolve(result), false);
	};

	/**
	 * maxWaitMs passed before the worker began the search (a fresh worker still starting): the search
	 * did not run; that is not the pattern's doing.
	 */
	private readonly onWaitLimit = (): void => {
		if (!this.drainMessages() || this.startedAt !== undefined) return;
		this.finish(() => this.setup.resolve(createNotStartedResult(Date.now() - this.setup.askedAt)), false);
	};

	private readonly onAbort = (): void => {
		if (this.settled) return;
		this.finish(() => this.setup.reject(createAbortError()), false);
	};
}
