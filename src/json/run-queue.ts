// The jsonPath evaluations of the whole process take turns: at most MAX_JSON_PATH_RUNS run at
// once, the others wait in line (their clocks not started) or leave it when cancelled. The queue
// lives on globalThis, so every module instance Pi loads shares it.

/** jsonPath evaluations running at once; more wait their turn. */
export const MAX_JSON_PATH_RUNS = 2;

/**
 * The queue is kept at globalThis[Symbol.for(JSON_PATH_RUNS_KEY)]: Pi loads each extension file in
 * its own module instance (and again on /reload), and the limit is for the whole process.
 */
export const JSON_PATH_RUNS_KEY = "my-pi.pi-overflow.json-path-runs.v1";

interface RunQueue {
	readonly version: 1;
	running: number;
	peak: number;
	readonly waiting: Array<() => void>;
}

function isRunQueue(value: unknown): value is RunQueue {
	if (typeof value !== "object" || value === null) return false;
	const candidate = value as Partial<RunQueue>;
	return (
		candidate.version === 1 &&
		typeof candidate.running === "number" &&
		typeof candidate.peak === "number" &&
		Array.isArray(candidate.waiting)
	);
}

function sharedRunQueue(): RunQueue {
	const global = globalThis as typeof globalThis & { [key: symbol]: unknown };
	const key = Symbol.for(JSON_PATH_RUNS_KEY);
	const existing = global[key];
	if (isRunQueue(existing)) return existing;
	const created: RunQueue = { version: 1, running: 0, peak: 0, waiting: [] };
	global[key] = created;
	return created;
}

/** For tests and benchmarks: evaluations running and waiting now, and the most that ever ran at once. */
export function readJsonPathRuns(): { running: number; waiting: number; peak: number } {
	const queue = sharedRunQueue();
	return { running: queue.running, waiting: queue.waiting.length, peak: queue.peak };
}

/** Takes a place (or waits for one); the returned function gives it back (once). */
export async function acquireRun(signal: AbortSignal | undefined): Promise<() => void> {
	signal?.throwIfAborted();
	const queue = sharedRunQueue();
	if (queue.running >= MAX_JSON_PATH_RUNS) {
		await new Promise<void>((resolve, reject) => {
			const onAbort = (): void => {
				const at = queue.waiting.indexOf(start);
				if (at !== -1) queue.waiting.splice(at, 1);
				reject(signal?.reason);
			};
			// The releasing run hands its place over: `running` stays counted for this one.
			const start = (): void => {
				signal?.removeEventListener("abort", onAbort);
				resolve();
			};
			queue.waiting.push(start);
			signal?.addEventListener("abort", onAbort, { once: true });
		});
	} else {
		queue.running++;
	}
	queue.peak = Math.max(queue.peak, queue.running);
	let released = false;
	return () => {
		if (released) return;
		released = true;
		const next = queue.waiting.shift();
		if (next) next();
		else queue.running--;
	};
}
