// Crash safety of the store: a child process writing entries (many of them several MB) in a loop is
// killed with SIGKILL at random points, ≥ 20 times in CI and ≥ 200 with STRESS=1. After each kill
// the directory is inspected file by file: a final name is never partial, the only unpaired file
// allowed is the one .txt of a writer killed between its two renames (complete, removed once it is
// older than the orphan age, checked with an injected clock), every entry with metadata verifies
// byte for byte, and the next session_start removes the dead writer's temp files.

import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, readFileSync, statSync, unlinkSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { createDefaultConfig } from "../../src/config/config.js";
import { computeEntryId, DEFAULT_ORPHAN_AGE_MS, OverflowStore } from "../../src/store/index.js";
import {
	assertEntryVerifies,
	assertTextVerifies,
	CRASH_PROFILE,
	entrySizeFor,
	generateEntryContent,
	HELPERS_DIR,
	listStore,
	pickCount,
	summarize,
} from "../helpers/robust-common.js";
import { withinChildTimeout } from "../helpers/child.js";
import { driveExtension } from "../helpers/robust-pi.js";
import { createTempDir } from "../helpers/tmp.js";
import { createRandom } from "../helpers/random.js";

const CHILD_SCRIPT = join(HELPERS_DIR, "robust-crash-child.ts");
const KILLS = pickCount(20, 200);
/** A kill lands this long after the child said it is ready, uniformly at random. */
const MAX_KILL_DELAY_MS = 400;
/** Complete entries kept across kills (older ones are deleted by the test to bound disk use). */
const KEPT_ENTRIES = 8;

interface KilledChild {
	pid: number;
	committed: string[];
	signal: NodeJS.Signals | null;
	stderr: string;
}

interface ReadyChild {
	/** Lets the child start writing, waits `delayMs`, kills it with SIGKILL and collects what it reported. */
	killAfter(delayMs: number): Promise<KilledChild>;
}

/** Starts a writer and resolves once it has loaded (it writes nothing before killAfter). */
/** Every writer started: killed when the test ends, so a failed assertion never leaves one waiting (and the run hanging). */
const writers = new Set<ChildProcess>();

/** True when `bytes` are the whole metadata of entry `id` (a temp file the writer wrote in one write). */
function isMetaOf(bytes: Buffer, id: string): boolean {
	try {
		return (JSON.parse(bytes.toString("utf8")) as { id?: unknown }).id === id;
	} catch {
		return false;
	}
}

async function startWriter(root: string, sessionId: string): Promise<ReadyChild> {
	const child: ChildProcess = spawn(process.execPath, ["--import", "tsx", CHILD_SCRIPT, root, sessionId], {
		stdio: ["pipe", "pipe", "pipe"],
	});
	writers.add(child);
	child.on("exit", () => writers.delete(child));
	let stdout = "";
	let stderr = "";
	child.stderr?.setEncoding("utf8").on("data", (text: string) => (stderr += text));
	const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on("exit", (_code, signal) => resolve(signal)));
	const ready = new Promise<void>((resolve, reject) => {
		child.stdout?.setEncoding("utf8").on("data", (text: string) => {
			stdout += text;
			if (stdout.includes("ready\n")) resolve();
		});
		child.on("exit", () => reject(new Error(`child exited before it was killed: ${stderr}`)));
	});
	await withinChildTimeout(ready, `writer ${sessionId} getting ready`).catch((error: Error) => {
		child.kill("SIGKILL");
		throw new Error(`${error.message}: ${stderr}`);
	});
	return {
		async killAfter(delayMs) {
			child.stdin?.write("go\n");
			await new Promise((resolve) => setTimeout(resolve, delayMs));
			child.kill("SIGKILL");
			const signal = await exited;
			const committed = [...stdout.matchAll(/^committed ([0-9a-f]{12})$/gm)].map((match) => match[1]);
			return { pid: child.pid as number, committed, signal, stderr };
		},
	};
}

test(`a writer killed with SIGKILL at ${KILLS} random points never leaves a partial or unpaired entry, and session_start clears its temp files`, async (t) => {
	t.after(() => {
		for (const writer of writers) writer.kill("SIGKILL");
	});
	const dir = await createTempDir(t);
	const root = join(dir, "agent", "my-pi", "pi-overflow");
	const seed = Number(process.env.ROBUST_SEED ?? Date.now() % 2 ** 31);
	const random = createRandom(seed);
	const config = createDefaultConfig();
	const verifier = new OverflowStore({ root });
	const kept: string[] = [];
	const outcomes = {
		midWrite: 0,
		betweenRenames: 0,
		betweenEntries: 0,
		committed: 0,
		verified: 0,
		tempsRemoved: 0,
		orphansRemoved: 0,
	};
	const housekeepMs: number[] = [];
	const started = performance.now();

	const sessionOf = (kill: number) => `crash-${seed}-${kill}`;
	let next = startWriter(root, sessionOf(0));
	for (let kill = 0; kill < KILLS; kill++) {
		const sessionId = sessionOf(kill);
		const ready = await next;
		const child = await ready.killAfter(Math.floor(random() * MAX_KILL_DELAY_MS));
		// The next writer loads while this run is checked; it writes nothing until it is told to.
		if (kill + 1 < KILLS) next = startWriter(root, sessionOf(kill + 1));
		const context = `kill ${kill} (seed ${seed}, pid ${child.pid})`;
		assert.equal(child.signal, "SIGKILL", `${context}: the child died of SIGKILL, not of an error: ${child.stderr}`);
		outcomes.committed += child.committed.length;
		// The entry the child was working on when it died.
		const inFlight = computeEntryId(sessionId, `call-${child.committed.length}`);
		const nextAfter = computeEntryId(sessionId, `call-${child.committed.length + 1}`);

		const before = listStore(root);
		assert.deepEqual(before.other, [], `${context}: no stray names`);
		assert.deepEqual(before.metaOnly, [], `${context}: never a .json without its .txt`);
		// A commit can finish before its `committed` line is written: the in-flight entry may be
		// complete, and then the next one may have begun.
		assert.ok(
			before.textOnly.length <= 1,
			`${context}: at most one unpaired .txt, found ${before.textOnly.join(", ")}`,
		);
		for (const id of before.textOnly) {
			assert.ok(
				id === inFlight || id === nextAfter,
				`${context}: the unpaired .txt ${id} is the entry being committed`,
			);
			assertTextVerifies(root, id, CRASH_PROFILE);
		}
		for (const temp of before.temps) {
			assert.equal(temp.pid, child.pid, `${context}: only the dead writer's temp files (earlier ones were cleared)`);
			const tempId = temp.name.slice(1, 13);
			assert.ok(
				tempId === inFlight || tempId === nextAfter,
				`${context}: temp ${temp.name} belongs to the entry in flight`,
			);
			if (before.textOnly.includes(tempId)) continue; // the .json being written
			// Killed between linking a finished file into place and unlinking its temp name: the
			// temp name is a second link to the placed .txt or .json (housekeeping removes it).
			const tempIno = statSync(join(root, temp.name)).ino;
			if (
				[`${tempId}.txt`, `${tempId}.json`].some(
					(name) => existsSync(join(root, name)) && statSync(join(root, name)).ino === tempIno,
				)
			)
				continue;
			const partial = readFileSync(join(root, temp.name));
			// The metadata's temp file, written while the text's last fsync runs (before the text is placed).
			if (isMetaOf(partial, tempId)) continue;
			const expected = generateEntryContent(tempId, entrySizeFor(tempId, CRASH_PROFILE));
			assert.ok(
				expected.subarray(0, partial.length).equals(partial),
				`${context}: a temp text file is a prefix of the entry`,
			);
		}
		for (const id of [...child.committed, ...kept])
			assert.ok(before.complete.includes(id), `${context}: committed entry ${id} is still there`);
		for (const id of before.complete) {
			await assertEntryVerifies(verifier, id, CRASH_PROFILE);
			outcomes.verified++;
		}
		if (before.textOnly.length > 0) outcomes.betweenRenames++;
		else if (before.temps.length > 0) outcomes.midWrite++;
		else outcomes.betweenEntries++;

		// The next Pi start: session_start housekeeping, on the real clock, removes the dead pid's temps.
		let clock = Date.now();
		const extension = driveExtension(
			{ config: { config, problems: [] }, storeRoot: root, now: () => clock },
			`next-${kill}`,
		);
		const housekeepStart = performance.now();
		const first = await extension.startSession();
		housekeepMs.push(performance.now() - housekeepStart);
		assert.deepEqual(first.errors, [], `${context}: housekeeping errors`);
		assert.equal(first.removedTemp, before.temps.length, `${context}: every temp file of the dead writer removed`);
		assert.equal(
			first.removedOrphans + first.removedExpired + first.removedForQuota,
			0,
			`${context}: nothing young removed`,
		);
		outcomes.tempsRemoved += first.removedTemp;
		const after = listStore(root);
		assert.deepEqual(after.temps, [], `${context}: no temp file left`);
		assert.deepEqual(
			after.textOnly,
			before.textOnly,
			`${context}: a young unpaired .txt may be a live writer's and stays`,
		);
		assert.deepEqual(after.complete, before.complete, `${context}: every complete entry stays`);

		if (before.textOnly.length > 0) {
			clock = Date.now() + DEFAULT_ORPHAN_AGE_MS + 1000;
			const later = await extension.startSession();
			assert.deepEqual(later.errors, []);
			assert.equal(later.removedOrphans, before.textOnly.length, `${context}: the old unpaired .txt is removed`);
			outcomes.orphansRemoved += later.removedOrphans;
			assert.deepEqual(listStore(root).textOnly, [], `${context}: no unpaired .txt after the orphan age`);
			assert.deepEqual(listStore(root).complete, before.complete, `${context}: complete entries untouched`);
		}

		// Bound disk use: keep the newest few complete entries (re-verified after every later kill).
		kept.splice(
			0,
			kept.length,
			...[...kept, ...before.complete.filter((id) => !kept.includes(id))].slice(-KEPT_ENTRIES),
		);
		for (const id of before.complete) {
			if (kept.includes(id)) continue;
			unlinkSync(join(root, `${id}.json`));
			unlinkSync(join(root, `${id}.txt`));
		}
	}

	const seconds = ((performance.now() - started) / 1000).toFixed(1);
	const timing = summarize(housekeepMs);
	const report =
		`crash: ${KILLS} SIGKILLs in ${seconds} s (seed ${seed}): ${outcomes.midWrite} mid-write, ${outcomes.betweenRenames} between the two renames, ` +
		`${outcomes.betweenEntries} between entries; ${outcomes.committed} commits reported, ${outcomes.verified} entry checks verified, ` +
		`${outcomes.tempsRemoved} temp files and ${outcomes.orphansRemoved} orphans removed by housekeeping (median ${timing.median.toFixed(1)} ms, max ${timing.max.toFixed(1)} ms); 0 failures`;
	t.diagnostic(report);
	assert.ok(outcomes.midWrite > 0, "at least one kill landed inside a write");
});
