// The regex search over a stored file, run in a worker thread so that a runaway pattern such as
// `(a+)+$` can never block Pi: one regex step cannot be interrupted in JavaScript, but a worker can
// be terminated. Invariants: a search's timeoutMs counts from when its worker begins it; waiting for
// a worker (at most MAX_SEARCH_WORKERS run at once, the rest queue in order) is bounded separately
// by maxWaitMs and never reported as the pattern's slowness; so searchFile answers within maxWaitMs
// + timeoutMs + DEFAULT_HARD_STOP_GRACE_MS (plus the few ms termination takes) with every line the
// worker had reported, and a search that searched every line is complete; the main thread never
// runs the model's regex over the file; workers are kept warm between queries (at most
// MAX_IDLE_SEARCH_WORKERS idle), replaced after a termination, and never keep the process alive.

import { MessageChannel, receiveMessageOnPort, Worker, type MessagePort } from "node:worker_threads";
import { isByteSafePattern } from "./regex-safety.js";
import {
	PROGRESS_COLLECTION_STOP,
	PROGRESS_COMPLETE,
	PROGRESS_REQUEST_ID,
	PROGRESS_RESUME_LINE,
	PROGRESS_SLOTS,
	PROGRESS_STEP_LAST_LINE,
	PROGRESS_TOTAL_HITS,
	SEARCH_WORKER_SOURCE,
	type SearchLine,
	type SearchWorkerMessage,
	type SearchWorkerRequest,
} from "./search-worker.js";

/** Bytes read per step; each step is one regex pass over the whole lines it holds. */
export const DEFAULT_SEARCH_CHUNK_BYTES = 1024 * 1024;
/** A line longer than this is searched in segments instead of being held whole. */
export const DEFAULT_GIANT_LINE_BYTES = 8 * 1024 * 1024;
/** How long after the deadline a worker may take to answer by itself before it is terminated. */
export const DEFAULT_HARD_STOP_GRACE_MS = 100;
/** Warm workers kept between searches. */
export const MAX_IDLE_SEARCH_WORKERS = 1;
/** Searches running at once; more wait for a worker, in the order they were asked for. */
export const MAX_SEARCH_WORKERS = 4;
/** Shortest wait for a worker a search accepts before it gives up without running (covers a worker's start on a loaded machine). */
export const DEFAULT_MIN_WAIT_MS = 5_000;
/** Longest wait for a worker, in multiples of the search's timeoutMs, when that is more than DEFAULT_MIN_WAIT_MS. */
export const DEFAULT_WAIT_TIMEOUTS = 3;
/** Old-generation heap of one worker: its chunks are small, so this only catches a runaway. */
export const SEARCH_WORKER_HEAP_MB = 256;

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
		const reason = message.startsWith("Invalid regular expression:") ? message.slice(message.lastIndexOf(": ") + 2) : message;
		return { error: reason };
	}
}

/** A failure of the search machinery itself (not of the pattern): the worker could not start or crashed. */
export class SearchEngineError extends Error {
	constructor(message: string) {
		super(message);
		this.name = "SearchEngineError";
	}
}

interface PendingSearch {
	id: number;
	onMessage(message: SearchWorkerMessage): void;
	onFailure(error: Error): void;
}

interface WorkerWaiter {
	grant(handle: SearchWorker): void;
	fail(error: Error): void;
}

interface SearchWorker {
	worker: Worker;
	port: MessagePort;
	progress: Float64Array;
	pending: PendingSearch | undefined;
	dead: boolean;
}

const idleWorkers: SearchWorker[] = [];
const busyWorkers = new Set<SearchWorker>();
const waiting: WorkerWaiter[] = [];
let nextRequestId = 1;
let workersStarted = 0;

/** Counters for tests and benchmarks. */
export function readSearchWorkerStats(): { started: number; idle: number; busy: number } {
	return { started: workersStarted, idle: idleWorkers.length, busy: busyWorkers.size };
}

function startWorker(): SearchWorker {
	const { port1, port2 } = new MessageChannel();
	const progress = new SharedArrayBuffer(PROGRESS_SLOTS * Float64Array.BYTES_PER_ELEMENT);
	// execArgv []: the worker is plain JavaScript and must not load the parent's loaders (tsx).
	const worker = new Worker(SEARCH_WORKER_SOURCE, {
		eval: true,
		execArgv: [],
		workerData: { port: port2, progress },
		transferList: [port2],
		resourceLimits: { maxOldGenerationSizeMb: SEARCH_WORKER_HEAP_MB },
	});
	workersStarted += 1;
	const handle: SearchWorker = { worker, port: port1, progress: new Float64Array(progress), pending: undefined, dead: false };
	// A crash, or an exit we did not ask for (or disposeSearchWorkers during a search): the running
	// search, if any, fails at once instead of waiting for its deadline.
	const fail = (error: Error): void => {
		if (!handle.dead) {
			handle.dead = true;
			port1.close();
		}
		const index = idleWorkers.indexOf(handle);
		if (index !== -1) idleWorkers.splice(index, 1);
		handle.pending?.onFailure(error);
	};
	worker.on("error", (error) => fail(error instanceof Error ? error : new Error(String(error))));
	worker.on("exit", (code) => fail(new Error(`the search worker exited (code ${code})`)));
	port1.on("message", (message: SearchWorkerMessage) => handle.pending?.onMessage(message));
	// Neither an idle worker nor its port keeps Pi (or a test run) alive.
	worker.unref();
	port1.unref();
	return handle;
}

function createAbortError(): Error {
	const error = new Error("overflow_query: the search was aborted");
	error.name = "AbortError";
	return error;
}

/** A worker for a new search now (an idle one, or a fresh one while fewer than MAX_SEARCH_WORKERS are busy), unless others wait first. */
function takeWorker(): SearchWorker | undefined {
	if (waiting.length > 0) return undefined;
	for (let idle = idleWorkers.pop(); idle !== undefined; idle = idleWorkers.pop()) {
		if (idle.dead) continue;
		busyWorkers.add(idle);
		return idle;
	}
	if (busyWorkers.size >= MAX_SEARCH_WORKERS) return undefined;
	const handle = startWorker();
	busyWorkers.add(handle);
	return handle;
}

/**
 * A worker for this search, waiting in line when all are busy; undefined when none came free before
 * `waitEnd` (Date.now() value). Rejects with an AbortError when `signal` aborts while it waits.
 */
function acquireWorker(waitEnd: number, signal: AbortSignal | undefined): Promise<SearchWorker | undefined> {
	if (signal?.aborted) return Promise.reject(createAbortError());
	let ready: SearchWorker | undefined;
	try {
		ready = takeWorker();
	} catch (error) {
		return Promise.reject(error);
	}
	if (ready !== undefined) return Promise.resolve(ready);
	return new Promise<SearchWorker | undefined>((resolve, reject) => {
		const leave = (): void => {
			clearTimeout(timer);
			signal?.removeEventListener("abort", onAbort);
			const index = waiting.indexOf(waiter);
			if (index !== -1) waiting.splice(index, 1);
		};
		const waiter: WorkerWaiter = {
			grant: (handle) => {
				leave();
				resolve(handle);
			},
			fail: (error) => {
				leave();
				reject(error);
			},
		};
		const onAbort = (): void => {
			leave();
			reject(createAbortError());
		};
		const timer = setTimeout(() => {
			leave();
			resolve(undefined);
		}, Math.max(0, waitEnd - Date.now()));
		signal?.addEventListener("abort", onAbort, { once: true });
		waiting.push(waiter);
	});
}

/** Hands the worker (or a fresh one, when it was terminated) to the first search waiting, else keeps it idle or retires it. */
function releaseWorker(handle: SearchWorker): void {
	busyWorkers.delete(handle);
	handle.pending = undefined;
	for (let next = waiting.shift(); next !== undefined; next = waiting.shift()) {
		let successor: SearchWorker;
		try {
			successor = handle.dead ? startWorker() : handle;
		} catch (error) {
			next.fail(error instanceof Error ? error : new Error(String(error)));
			continue;
		}
		busyWorkers.add(successor);
		next.grant(successor);
		return;
	}
	if (!handle.dead) {
		if (idleWorkers.length < MAX_IDLE_SEARCH_WORKERS) idleWorkers.push(handle);
		else retireWorker(handle);
	}
}

function retireWorker(handle: SearchWorker): Promise<void> {
	handle.dead = true;
	handle.port.close();
	return handle.worker.terminate().then(
		() => undefined,
		() => undefined,
	);
}

/**
 * Terminates every search worker; a search still running or waiting for a worker fails with a
 * SearchEngineError. Call on session_shutdown (and at the end of tests); a later search starts a
 * fresh worker.
 */
export async function disposeSearchWorkers(): Promise<void> {
	for (const waiter of waiting.splice(0)) waiter.fail(new Error("the search workers were shut down"));
	const all = [...idleWorkers, ...busyWorkers];
	idleWorkers.length = 0;
	await Promise.all(all.map((handle) => retireWorker(handle)));
}

/** Starts a warm worker ahead of the first search (optional; a search starts one when needed). */
export function prewarmSearchWorker(): void {
	if (idleWorkers.length > 0 || busyWorkers.size > 0) return;
	try {
		idleWorkers.push(startWorker());
	} catch {
		// The first search reports the failure.
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
	const waitEnd = askedAt + (options.maxWaitMs ?? Math.max(DEFAULT_MIN_WAIT_MS, DEFAULT_WAIT_TIMEOUTS * options.timeoutMs));
	let acquired: SearchWorker | undefined;
	try {
		acquired = await acquireWorker(waitEnd, options.signal);
	} catch (error) {
		if (error instanceof Error && error.name === "AbortError") throw error;
		throw new SearchEngineError(`could not start the search worker: ${error instanceof Error ? error.message : String(error)}`);
	}
	if (acquired === undefined) return createNotStartedResult(Date.now() - askedAt);
	const handle = acquired;
	const id = nextRequestId++;
	const request: SearchWorkerRequest = {
		type: "search",
		id,
		...(typeof file === "number" ? { fd: file } : { path: file }),
		pattern: options.pattern,
		contextLines: options.contextLines,
		maxResults: options.maxResults,
		maxLineChars: options.maxLineChars,
		budgetChars: options.budgetChars,
		timeoutMs: options.timeoutMs,
		chunkBytes: options.chunkBytes ?? DEFAULT_SEARCH_CHUNK_BYTES,
		giantLineBytes: Math.max(options.giantLineBytes ?? DEFAULT_GIANT_LINE_BYTES, options.chunkBytes ?? DEFAULT_SEARCH_CHUNK_BYTES),
		latin1: isByteSafePattern(options.pattern),
		virtualMsPerLine: options.virtualMsPerLine,
		holdBeforeDoneMs: options.holdBeforeDoneMs,
	};
	const graceMs = options.hardStopGraceMs ?? DEFAULT_HARD_STOP_GRACE_MS;

	return new Promise<SearchResult>((resolve, reject) => {
		const lines: SearchLine[] = [];
		let settled = false;
		let timer: NodeJS.Timeout | undefined;
		/** Date.now() when the worker began this search (its "started" message); the search's clock starts there. */
		let startedAt: number | undefined;

		const finish = (settle: () => void, keepWorker: boolean): void => {
			if (settled) return;
			settled = true;
			if (timer !== undefined) clearTimeout(timer);
			options.signal?.removeEventListener("abort", onAbort);
			if (!keepWorker && !handle.dead) void retireWorker(handle);
			releaseWorker(handle);
			settle();
		};

		const toResult = (done: Extract<SearchWorkerMessage, { type: "done" }> | undefined, progress: Float64Array, terminated: boolean): SearchResult => {
			const runStart = startedAt ?? Date.now();
			const elapsedMs = Date.now() - runStart;
			// The progress slots belong to this request only once the worker has started it.
			const requestStarted = progress[PROGRESS_REQUEST_ID] === id;
			// Every line searched and posted, the done message not yet sent: complete all the same.
			const complete = done ? done.stoppedAtLine === 0 : requestStarted && progress[PROGRESS_COMPLETE] === 1;
			const totalHits = done ? done.totalHits : requestStarted ? progress[PROGRESS_TOTAL_HITS] : 0;
			const atLine = done ? done.stoppedAtLine : requestStarted ? progress[PROGRESS_RESUME_LINE] : 1;
			const stepLastLine = !done && requestStarted ? Math.max(atLine, progress[PROGRESS_STEP_LAST_LINE]) : atLine;
			const collectedHits = lines.filter((line) => line.hit).length;
			const stoppedBy = requestStarted ? progress[PROGRESS_COLLECTION_STOP] : 0;
			const collectionStop = done ? done.collectionStop : stoppedBy === 2 ? "budget" : stoppedBy === 1 || collectedHits >= options.maxResults ? "maxResults" : null;
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
		};

		const onMessage = (message: SearchWorkerMessage): void => {
			if (settled || message.id !== id) return;
			if (message.type === "started") {
				startedAt = message.startedAt;
				armTimer(onHardStop, startedAt + options.timeoutMs + graceMs);
				return;
			}
			if (message.type === "lines") {
				lines.push(...message.lines);
				return;
			}
			if (message.error !== undefined) {
				finish(() => reject(new SearchEngineError(`the search failed: ${message.error}`)), true);
				return;
			}
			finish(() => resolve(toResult(message, handle.progress, false)), true);
		};

		const armTimer = (onTimer: () => void, at: number): void => {
			if (timer !== undefined) clearTimeout(timer);
			timer = setTimeout(onTimer, Math.max(0, at - Date.now()));
		};

		// Takes every message the worker has posted so far; true while the search is still unsettled.
		const drainMessages = (): boolean => {
			for (let next = receiveMessageOnPort(handle.port); next !== undefined && !settled; next = receiveMessageOnPort(handle.port)) {
				onMessage(next.message as SearchWorkerMessage);
			}
			return !settled;
		};

		// The worker overran its deadline by graceMs (a regex step that does not end): answer with what
		// it reported, then terminate it. The progress is read before the messages are taken, so every
		// line it counts has arrived.
		const onHardStop = (): void => {
			const progress = handle.progress.slice();
			if (!drainMessages()) return;
			const result = toResult(undefined, progress, true);
			finish(() => resolve(result), false);
		};

		// maxWaitMs passed before the worker began the search (a fresh worker still starting): the
		// search did not run; that is not the pattern's doing.
		const onWaitLimit = (): void => {
			if (!drainMessages() || startedAt !== undefined) return;
			finish(() => resolve(createNotStartedResult(Date.now() - askedAt)), false);
		};

		const onAbort = (): void => {
			if (settled) return;
			finish(() => reject(createAbortError()), false);
		};

		handle.pending = {
			id,
			onMessage,
			onFailure: (error) => finish(() => reject(new SearchEngineError(`the search worker stopped: ${error.message}`)), false),
		};
		if (options.signal?.aborted) {
			onAbort();
			return;
		}
		options.signal?.addEventListener("abort", onAbort, { once: true });
		armTimer(onWaitLimit, waitEnd);
		handle.port.postMessage(request);
	});
}
