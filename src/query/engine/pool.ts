// The search workers: at most MAX_SEARCH_WORKERS busy at once, the searches beyond them waiting in
// the order they asked; at most MAX_IDLE_SEARCH_WORKERS kept warm between searches; a terminated
// worker replaced by a fresh one. Invariant: a worker (and its port) never keeps the process alive,
// and a worker that crashes or exits fails the search it runs at once.

import { MessageChannel, Worker, type MessagePort } from "node:worker_threads";
import { PROGRESS_SLOTS, type SearchWorkerMessage } from "./protocol.js";

/** Warm workers kept between searches. */
export const MAX_IDLE_SEARCH_WORKERS = 1;
/** Searches running at once; more wait for a worker, in the order they were asked for. */
export const MAX_SEARCH_WORKERS = 4;
/** Old-generation heap of one worker: its chunks are small, so this only catches a runaway. */
export const SEARCH_WORKER_HEAP_MB = 256;

/** The search a busy worker runs: its messages and its failure go there. */
export interface PendingSearch {
	id: number;
	onMessage(message: SearchWorkerMessage): void;
	onFailure(error: Error): void;
}

interface WorkerWaiter {
	grant(handle: SearchWorker): void;
	fail(error: Error): void;
}

/** One worker thread with its port and its view of the shared progress slots. */
export interface SearchWorker {
	worker: Worker;
	port: MessagePort;
	progress: Float64Array;
	pending: PendingSearch | undefined;
	dead: boolean;
}

const idleWorkers: SearchWorker[] = [];
const busyWorkers = new Set<SearchWorker>();
const waiting: WorkerWaiter[] = [];
let workersStarted = 0;

/** Counters for tests and benchmarks. */
export function readSearchWorkerStats(): { started: number; idle: number; busy: number } {
	return { started: workersStarted, idle: idleWorkers.length, busy: busyWorkers.size };
}

function startWorker(): SearchWorker {
	const { port1, port2 } = new MessageChannel();
	const progress = new SharedArrayBuffer(PROGRESS_SLOTS * Float64Array.BYTES_PER_ELEMENT);
	// execArgv []: the worker and its modules are plain JavaScript and must not load the parent's
	// loaders (tsx). Under jiti (Pi's loader) import.meta.url is this file's URL too.
	const worker = new Worker(new URL("./worker.js", import.meta.url), {
		execArgv: [],
		workerData: { port: port2, progress },
		transferList: [port2],
		resourceLimits: { maxOldGenerationSizeMb: SEARCH_WORKER_HEAP_MB },
	});
	workersStarted += 1;
	const handle: SearchWorker = {
		worker,
		port: port1,
		progress: new Float64Array(progress),
		pending: undefined,
		dead: false,
	};
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

export function createAbortError(): Error {
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
 * Calls `run` once Date.now() has reached `at`, not before: a timer can fire a millisecond early by
 * Date.now(), and a search promised to wait maxWaitMs must not answer after 99. Returns the cancel.
 */
export function runAt(at: number, run: () => void): () => void {
	let timer: NodeJS.Timeout;
	const check = (): void => {
		const left = at - Date.now();
		if (left > 0) timer = setTimeout(check, left);
		else run();
	};
	timer = setTimeout(check, Math.max(0, at - Date.now()));
	return () => clearTimeout(timer);
}

/**
 * A worker for this search, waiting in line when all are busy; undefined when none came free before
 * `waitEnd` (Date.now() value). Rejects with an AbortError when `signal` aborts while it waits.
 */
export function acquireWorker(waitEnd: number, signal: AbortSignal | undefined): Promise<SearchWorker | undefined> {
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
			cancelTimer();
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
		const cancelTimer = runAt(waitEnd, () => {
			leave();
			resolve(undefined);
		});
		signal?.addEventListener("abort", onAbort, { once: true });
		waiting.push(waiter);
	});
}

/** Hands the worker (or a fresh one, when it was terminated) to the first search waiting, else keeps it idle or retires it. */
export function releaseWorker(handle: SearchWorker): void {
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

export function retireWorker(handle: SearchWorker): Promise<void> {
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
