// Child processes a test waits for (pi -p, a node probe, a writer to kill). Invariant: no child is
// held to a wall-clock budget a loaded machine can reach; the one budget is CHILD_TIMEOUT_S, far above
// any run seen, there only so a hung child ends the run, and a child killed by it fails its test with
// "<what> timed out after N s", never with a bare exit status or signal.

import assert from "node:assert/strict";
import { type SpawnSyncOptions, spawnSync } from "node:child_process";

/** The one budget for a child: ten minutes, a hang and nothing else. */
export const CHILD_TIMEOUT_S = 600;

export interface ChildRun {
	status: number | null;
	signal: NodeJS.Signals | null;
	stdout: string;
	stderr: string;
	/** Set when the child was killed for running past CHILD_TIMEOUT_S. */
	timedOut: boolean;
}

/** Runs a child to its end (at most CHILD_TIMEOUT_S), output as UTF-8. */
export function runChild(
	command: string,
	args: readonly string[],
	options: Omit<SpawnSyncOptions, "encoding" | "timeout"> = {},
): ChildRun {
	const run = spawnSync(command, args, {
		maxBuffer: 256 * 1024 * 1024,
		...options,
		encoding: "utf8",
		timeout: CHILD_TIMEOUT_S * 1000,
		killSignal: "SIGKILL",
	});
	const timedOut = (run.error as NodeJS.ErrnoException | undefined)?.code === "ETIMEDOUT";
	if (run.error && !timedOut) throw run.error;
	return { status: run.status, signal: run.signal, stdout: run.stdout ?? "", stderr: run.stderr ?? "", timedOut };
}

/** Why a finished child failed, in words: "timed out after N s", the exit status or the signal; undefined on exit 0. */
export function childFailure(run: ChildRun, what: string): string | undefined {
	if (run.timedOut) return `${what} timed out after ${CHILD_TIMEOUT_S} s\n${run.stderr.slice(-4000)}`;
	if (run.status === 0) return undefined;
	const how = run.status === null ? `was killed by ${run.signal}` : `exited with status ${run.status}`;
	return `${what} ${how}\n${run.stderr.slice(-4000)}`;
}

/** Fails the test unless the child exited 0, saying why in words. */
export function assertChildOk(run: ChildRun, what: string): void {
	const failure = childFailure(run, what);
	if (failure !== undefined) assert.fail(failure);
}

/**
 * Waits for `promise` (a child saying it is ready, or exiting), at most CHILD_TIMEOUT_S; rejects with
 * "<what> timed out after N s" past it.
 */
export async function withinChildTimeout<T>(promise: Promise<T>, what: string): Promise<T> {
	let timer: NodeJS.Timeout | undefined;
	const timeout = new Promise<never>((_, reject) => {
		timer = setTimeout(() => reject(new Error(`${what} timed out after ${CHILD_TIMEOUT_S} s`)), CHILD_TIMEOUT_S * 1000);
		timer.unref();
	});
	try {
		return await Promise.race([promise, timeout]);
	} finally {
		clearTimeout(timer);
	}
}
