// The regex search over a stored file, run in a worker thread so that a runaway pattern such as
// `(a+)+$` can never block Pi: one regex step cannot be interrupted in JavaScript, but a worker can
// be terminated. Invariants: searchFile answers within timeoutMs + DEFAULT_HARD_STOP_GRACE_MS (plus
// the few ms termination takes) with every line the worker had reported; the main thread never runs
// the model's regex over the file; workers are kept warm between queries (at most
// MAX_IDLE_SEARCH_WORKERS idle), replaced after a termination, and never keep the process alive.

import { MessageChannel, receiveMessageOnPort, Worker, type MessagePort } from "node:worker_threads";
import { isByteSafePattern } from "./regex-safety.js";
import {
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
/** Searches running at once; more wait for a worker. */
export const MAX_SEARCH_WORKERS = 4;
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
	/** Wall-clock limit for the whole search, in ms. */
	timeoutMs: number;
	/** Stop collecting lines once their text passes this many characters (hits are still counted). */
	budgetChars: number;
	/** Default DEFAULT_SEARCH_CHUNK_BYTES (tests make it small). */
	chunkBytes?: number;
	/** Default DEFAULT_GIANT_LINE_BYTES. */
	giantLineBytes?: number;
	/** Default DEFAULT_HARD_STOP_GRACE_MS. */
	hardStopGraceMs?: number;
	/** Aborting terminates the worker; searchFile then rejects. */
	signal?: AbortSignal;
}

export interface SearchStop {
	/** The first line not fully searched. */
	atLine: number;
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
	elapsedMs: number;
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

interface SearchWorker {
	worker: Worker;
	port: MessagePort;
	progress: Float64Array;
	pending: PendingSearch | undefined;
	dead: boolean;
}

const idleWorkers: SearchWorker[] = [];
const busyWorkers = new Set<SearchWorker>();
const waiting: Array<() => void> = [];
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

async function acquireWorker(): Promise<SearchWorker> {
	for (;;) {
		const idle = idleWorkers.pop();
		if (idle !== undefined && !idle.dead) {
			busyWorkers.add(idle);
			return idle;
		}
		if (busyWorkers.size < MAX_SEARCH_WORKERS) {
			const handle = startWorker();
			busyWorkers.add(handle);
			return handle;
		}
		await new Promise<void>((resolve) => waiting.push(resolve));
	}
}

function releaseWorker(handle: SearchWorker): void {
	busyWorkers.delete(handle);
	handle.pending = undefined;
	if (!handle.dead) {
		if (idleWorkers.length < MAX_IDLE_SEARCH_WORKERS) idleWorkers.push(handle);
		else retireWorker(handle);
	}
	waiting.shift()?.();
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
 * Terminates every search worker; a search still running fails with a SearchEngineError. Call on
 * session_shutdown (and at the end of tests); a later search starts a fresh worker.
 */
export async function disposeSearchWorkers(): Promise<void> {
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

/**
 * Searches the file at `path` (a regular file) line by line, as grep -n -i -E -C would, in a worker.
 * Resolves with the hits so far when the time runs out; rejects with a SearchEngineError when the
 * worker cannot run, and with an AbortError-named Error when `signal` aborts.
 */
export async function searchFile(path: string, options: SearchOptions): Promise<SearchResult> {
	const started = performance.now();
	const deadline = Date.now() + options.timeoutMs;
	let handle: SearchWorker;
	try {
		handle = await acquireWorker();
	} catch (error) {
		throw new SearchEngineError(`could not start the search worker: ${error instanceof Error ? error.message : String(error)}`);
	}
	const id = nextRequestId++;
	const request: SearchWorkerRequest = {
		type: "search",
		id,
		path,
		pattern: options.pattern,
		contextLines: options.contextLines,
		maxResults: options.maxResults,
		maxLineChars: options.maxLineChars,
		budgetChars: options.budgetChars,
		deadline,
		chunkBytes: options.chunkBytes ?? DEFAULT_SEARCH_CHUNK_BYTES,
		giantLineBytes: Math.max(options.giantLineBytes ?? DEFAULT_GIANT_LINE_BYTES, options.chunkBytes ?? DEFAULT_SEARCH_CHUNK_BYTES),
		latin1: isByteSafePattern(options.pattern),
	};
	const graceMs = options.hardStopGraceMs ?? DEFAULT_HARD_STOP_GRACE_MS;

	return new Promise<SearchResult>((resolve, reject) => {
		const lines: SearchLine[] = [];
		let settled = false;
		let timer: NodeJS.Timeout | undefined;

		const finish = (settle: () => void, keepWorker: boolean): void => {
			if (settled) return;
			settled = true;
			if (timer !== undefined) clearTimeout(timer);
			options.signal?.removeEventListener("abort", onAbort);
			if (!keepWorker && !handle.dead) void retireWorker(handle);
			releaseWorker(handle);
			settle();
		};

		const toResult = (done: Extract<SearchWorkerMessage, { type: "done" }> | undefined, terminated: boolean): SearchResult => {
			const elapsedMs = performance.now() - started;
			// The progress slots belong to this request only once the worker has started it.
			const requestStarted = handle.progress[PROGRESS_REQUEST_ID] === id;
			const totalHits = done ? done.totalHits : requestStarted ? handle.progress[PROGRESS_TOTAL_HITS] : 0;
			const atLine = done ? done.stoppedAtLine : requestStarted ? handle.progress[PROGRESS_RESUME_LINE] : 1;
			const stepLastLine = !done && requestStarted ? Math.max(atLine, handle.progress[PROGRESS_STEP_LAST_LINE]) : atLine;
			const collectedHits = lines.filter((line) => line.hit).length;
			const collectionStop = done ? done.collectionStop : collectedHits >= options.maxResults ? "maxResults" : null;
			return {
				lines,
				totalHits,
				collectedHits,
				collectionStop,
				stopped: atLine > 0 ? { atLine, elapsedMs, terminated, stepLastLine } : null,
				linesSearched: done ? done.linesSearched : Math.max(0, atLine - 1),
				elapsedMs,
			};
		};

		const onMessage = (message: SearchWorkerMessage): void => {
			if (settled || message.id !== id) return;
			if (message.type === "lines") {
				lines.push(...message.lines);
				return;
			}
			if (message.error !== undefined) {
				finish(() => reject(new SearchEngineError(`the search failed: ${message.error}`)), true);
				return;
			}
			finish(() => resolve(toResult(message, false)), true);
		};

		// Takes every message the worker posted before it got stuck, then terminates it.
		const stopWorker = (): boolean => {
			for (let next = receiveMessageOnPort(handle.port); next !== undefined && !settled; next = receiveMessageOnPort(handle.port)) {
				onMessage(next.message as SearchWorkerMessage);
			}
			return !settled;
		};

		const onHardStop = (): void => {
			if (!stopWorker()) return;
			const result = toResult(undefined, true);
			finish(() => resolve(result), false);
		};

		const onAbort = (): void => {
			if (settled) return;
			const error = new Error("overflow_query: the search was aborted");
			error.name = "AbortError";
			finish(() => reject(error), false);
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
		timer = setTimeout(onHardStop, Math.max(0, deadline - Date.now()) + graceMs);
		handle.port.postMessage(request);
	});
}

