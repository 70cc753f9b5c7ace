// Child process of test/e2e/robust-concurrency.test.ts: one of several "Pi processes" sharing a store.
// Usage: node --import tsx robust-concurrency-child.ts <root> <sessionId> <durationMs> <maxEntries> <maxStoreBytes> [commit]
// Prints `ready`, waits for a line on stdin (all workers start together), then loops until the
// duration or the entry count is reached: write one entry, read three (its own and others',
// readMeta + the .txt verified byte for byte), run housekeeping. With `commit` the store enforces
// the quota itself at every commit and housekeeping runs only at the start and the end (as in Pi);
// the store's size is sampled after each commit. Its last action is always a housekeeping pass. Prints one JSON line, the WorkerReport, and exits 0; anything thrown is
// recorded in the report rather than crashing the loop.

import { createHash } from "node:crypto";
import { readdirSync, readFileSync, writeSync } from "node:fs";
import { computeEntryId, OverflowStore } from "../../src/store/index.js";
import {
	buildEntryMeta,
	CONCURRENCY_PROFILE,
	ENTRY_NAME,
	entrySizeFor,
	generateEntryContent,
	measureLiveStore,
	writeEntry,
} from "./robust-common.js";

export interface WorkerReport {
	sessionId: string;
	/** Ids this worker committed, in order. */
	written: string[];
	reads: number;
	/** Reads whose metadata and text matched what the writer wrote. */
	verified: number;
	/** readMeta said unknown for an id that was listed a moment before. */
	vanishedBeforeMeta: number;
	/** The metadata was read but the .txt was gone when opened. */
	vanishedAfterMeta: number;
	/** Ids whose metadata or text did not match what was written. */
	corrupt: string[];
	housekeeps: number;
	/** Evictions counted by housekeeping and, in `commit` mode, by commits. */
	removedForQuota: number;
	/** Evictions counted by commits alone (`commit` mode). */
	removedByCommits: number;
	/** Largest store size (complete entries, .txt + .json) seen right after one of its commits. */
	peakBytesAfterCommit: number;
	removedExpired: number;
	removedOrphans: number;
	removedTemp: number;
	housekeepErrors: string[];
	/** Problems commits met while evicting for the quota (`commit` mode). */
	commitErrors: string[];
	exceptions: string[];
	elapsedMs: number;
}

const [root, sessionId, durationText, maxEntriesText, maxStoreBytesText, mode] = process.argv.slice(2);
const durationMs = Number(durationText);
const maxEntries = Number(maxEntriesText);
const maxStoreBytes = Number(maxStoreBytesText);
const quotaAtCommit = mode === "commit";
const RETENTION_MS = 7 * 24 * 60 * 60 * 1000;
const CHUNK_BYTES = 64 * 1024;

const report: WorkerReport = {
	sessionId,
	written: [],
	reads: 0,
	verified: 0,
	vanishedBeforeMeta: 0,
	vanishedAfterMeta: 0,
	corrupt: [],
	housekeeps: 0,
	removedForQuota: 0,
	removedByCommits: 0,
	peakBytesAfterCommit: 0,
	removedExpired: 0,
	removedOrphans: 0,
	removedTemp: 0,
	housekeepErrors: [],
	commitErrors: [],
	exceptions: [],
	elapsedMs: 0,
};
process.on("uncaughtException", (error) => report.exceptions.push(`uncaught: ${error.stack ?? error}`));
process.on("unhandledRejection", (error) =>
	report.exceptions.push(`unhandled rejection: ${(error as Error)?.stack ?? error}`),
);

const store = new OverflowStore(quotaAtCommit ? { root, maxStoreBytes } : { root });
let randomState = Number.parseInt(createHash("sha1").update(sessionId).digest("hex").slice(0, 8), 16) || 1;
function pick<T>(items: readonly T[]): T {
	randomState = (Math.imul(randomState, 1664525) + 1013904223) >>> 0;
	return items[randomState % items.length];
}

async function readAndVerify(id: string): Promise<void> {
	report.reads++;
	const meta = await store.readMeta(id);
	if (meta === undefined) {
		report.vanishedBeforeMeta++;
		return;
	}
	const expected = generateEntryContent(id, entrySizeFor(id, CONCURRENCY_PROFILE));
	let stored: Buffer;
	try {
		stored = readFileSync(store.textPath(id));
	} catch (error) {
		if ((error as { code?: string }).code !== "ENOENT") throw error;
		report.vanishedAfterMeta++;
		return;
	}
	if (meta.totalBytes !== expected.length || !stored.equals(expected)) report.corrupt.push(id);
	else report.verified++;
}

async function housekeep(): Promise<void> {
	const result = await store.housekeep({ retentionMs: RETENTION_MS, maxStoreBytes, currentSessionId: sessionId });
	report.housekeeps++;
	report.removedForQuota += result.removedForQuota;
	report.removedExpired += result.removedExpired;
	report.removedOrphans += result.removedOrphans;
	report.removedTemp += result.removedTemp;
	report.housekeepErrors.push(...result.errors);
}

writeSync(1, "ready\n");
// Without a parent (its stdin closed before "go"), there is nothing to do.
process.stdin.once("end", () => process.exit(0));
await new Promise<void>((resolve) => process.stdin.once("data", () => resolve()));
// An open stdin would keep this process alive after its report.
process.stdin.destroy();
const started = Date.now();
if (quotaAtCommit) await housekeep(); // as session_start does
for (let n = 0; n < maxEntries && Date.now() - started < durationMs; n++) {
	try {
		const toolCallId = `call-${n}`;
		const id = computeEntryId(sessionId, toolCallId);
		const content = generateEntryContent(id, entrySizeFor(id, CONCURRENCY_PROFILE));
		const committed = await writeEntry(
			store,
			buildEntryMeta(id, content, sessionId, toolCallId, Date.now()),
			content,
			CHUNK_BYTES,
		);
		report.written.push(id);
		report.removedForQuota += committed.removedForQuota;
		report.removedByCommits += committed.removedForQuota;
		report.commitErrors.push(...committed.errors);
		if (quotaAtCommit) report.peakBytesAfterCommit = Math.max(report.peakBytesAfterCommit, measureLiveStore(root));
		const listed = readdirSync(root)
			.map((name) => ENTRY_NAME.exec(name))
			.filter((match): match is RegExpExecArray => match !== null && match[2] === "json")
			.map((match) => match[1]);
		await readAndVerify(pick(report.written));
		if (listed.length > 0) {
			await readAndVerify(pick(listed));
			await readAndVerify(pick(listed));
		}
		if (!quotaAtCommit) await housekeep();
	} catch (error) {
		report.exceptions.push((error as Error)?.stack ?? String(error));
	}
}
try {
	await housekeep();
} catch (error) {
	report.exceptions.push((error as Error)?.stack ?? String(error));
}
report.elapsedMs = Date.now() - started;
writeSync(1, `${JSON.stringify(report)}\n`);
