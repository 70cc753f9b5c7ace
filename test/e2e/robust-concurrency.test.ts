// Several processes sharing one store, as several Pi processes do: each writes 50–500 KB entries,
// reads entries back (its own and the others', metadata and text verified byte for byte) and runs
// housekeeping, in a loop. "No entry lost that is within retention and quota" is checked in two
// phases: with a quota no workload reaches, every entry ever committed must survive; with a quota
// of a few MB, an entry may only disappear through an eviction that some housekeeping pass counted
// (committed = surviving + counted evictions, nothing expired, orphaned or uncounted), and the
// store must end within quota because every worker's last action is housekeeping. A third phase
// leaves the quota to the commits, as Pi does (housekeeping only at start and end): the same
// accounting, and right after each commit the store is within the quota plus what the other
// processes may have written since their last scan (a tenth of the quota and an entry or two each).

import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import { test } from "node:test";
import {
	computeEntryId,
	DEFAULT_QUOTA_LOW_WATER_RATIO,
	NODE_STORE_FS,
	OverflowStore,
	type StoreFs,
} from "../../src/store/index.js";
import { withinChildTimeout } from "../helpers/child.js";
import type { WorkerReport } from "../helpers/robust-concurrency-child.js";
import {
	assertEntryVerifies,
	buildEntryMeta,
	CONCURRENCY_PROFILE,
	entrySizeFor,
	generateEntryContent,
	HELPERS_DIR,
	listStore,
	pickCount,
	sumEntryBytes,
	writeEntry,
} from "../helpers/robust-common.js";
import { createTempDir } from "../helpers/tmp.js";

const CHILD_SCRIPT = join(HELPERS_DIR, "robust-concurrency-child.ts");
const WORKERS = pickCount(4, 8);
const DURATION_MS = pickCount(2_500, 20_000);
/** Entries per worker under the unreachable quota, which keeps everything: bounds its disk use (~15 MB per 60). */
const GENEROUS_MAX_ENTRIES = pickCount(60, 300);
/** Under the small quota the disk use is bounded by the quota: the duration decides. */
const QUOTA_MAX_ENTRIES = 1_000_000;
const SMALL_QUOTA_BYTES = 3 * 1024 * 1024;
const UNREACHABLE_QUOTA_BYTES = 1024 * 1024 * 1024 * 1024;

interface Worker {
	child: ChildProcess;
	ready: Promise<void>;
	report: Promise<WorkerReport>;
}

/** Where the quota is enforced: by each worker's housekeeping after every entry, or by its commits. */
type QuotaMode = "housekeeping" | "commit";

function startWorker(
	root: string,
	sessionId: string,
	maxEntries: number,
	maxStoreBytes: number,
	mode: QuotaMode,
): Worker {
	const child = spawn(
		process.execPath,
		[
			"--import",
			"tsx",
			CHILD_SCRIPT,
			root,
			sessionId,
			String(DURATION_MS),
			String(maxEntries),
			String(maxStoreBytes),
			mode,
		],
		{ stdio: ["pipe", "pipe", "pipe"] },
	);
	let stdout = "";
	let stderr = "";
	child.stderr?.setEncoding("utf8").on("data", (text: string) => (stderr += text));
	child.stdout?.setEncoding("utf8").on("data", (text: string) => (stdout += text));
	const ready = withinChildTimeout(
		new Promise<void>((resolve, reject) => {
			child.stdout?.on("data", () => {
				if (stdout.startsWith("ready\n")) resolve();
			});
			child.on("exit", (code, signal) =>
				reject(new Error(`${sessionId} exited with ${code ?? signal} before it was ready`)),
			);
		}),
		`${sessionId} getting ready`,
	).catch((error: Error) => {
		throw new Error(`${error.message}: ${stderr}`);
	});
	const report = new Promise<WorkerReport>((resolve, reject) => {
		child.on("exit", (code, signal) => {
			const line = stdout.split("\n").find((text) => text.startsWith("{"));
			if (code !== 0 || line === undefined) reject(new Error(`${sessionId} exited with ${code ?? signal}: ${stderr}`));
			else resolve(JSON.parse(line) as WorkerReport);
		});
	});
	return { child, ready, report };
}

/** Starts all workers, lets them go at once, and collects their reports. */
async function runWorkers(
	root: string,
	label: string,
	maxEntries: number,
	maxStoreBytes: number,
	mode: QuotaMode = "housekeeping",
): Promise<WorkerReport[]> {
	const workers = Array.from({ length: WORKERS }, (_, index) =>
		startWorker(root, `${label}-worker-${index}`, maxEntries, maxStoreBytes, mode),
	);
	try {
		await Promise.all(workers.map((worker) => worker.ready));
	} catch (error) {
		for (const worker of workers) worker.child.kill("SIGKILL");
		throw error;
	}
	for (const worker of workers) worker.child.stdin?.end("go\n");
	return Promise.all(workers.map((worker) => worker.report));
}

function assertNoWorkerFailed(reports: WorkerReport[]): void {
	for (const report of reports) {
		assert.deepEqual(report.exceptions, [], `${report.sessionId}: no exception`);
		assert.deepEqual(report.housekeepErrors, [], `${report.sessionId}: housekeeping reported no error`);
		assert.deepEqual(report.commitErrors, [], `${report.sessionId}: no commit reported a quota problem`);
		assert.deepEqual(report.corrupt, [], `${report.sessionId}: every entry read back matched what was written`);
		assert.equal(
			report.removedExpired + report.removedOrphans + report.removedTemp,
			0,
			`${report.sessionId}: nothing within retention removed`,
		);
		assert.ok(report.written.length > 0 && report.verified > 0, `${report.sessionId}: did some work`);
	}
}

function sumOf(reports: WorkerReport[], pick: (report: WorkerReport) => number): number {
	return reports.reduce((sum, report) => sum + pick(report), 0);
}

interface QuotaOutcome {
	written: string[];
	survivors: string[];
	evicted: number;
	bytes: number;
	seconds: number;
}

/**
 * After a run under the small quota: no half entry or temp file, every survivor was committed, every
 * committed entry survives or was evicted and counted once, survivors verify, the store fits.
 */
async function assertQuotaAccounting(root: string, reports: WorkerReport[]): Promise<QuotaOutcome> {
	const written = reports.flatMap((report) => report.written);
	const listing = listStore(root);
	assert.deepEqual(
		[listing.textOnly, listing.metaOnly, listing.temps, listing.other],
		[[], [], [], []],
		"no half entry or temp file left",
	);
	const survivors = listing.complete;
	for (const id of survivors) assert.ok(written.includes(id), `survivor ${id} was committed by a worker`);
	const evicted = sumOf(reports, (r) => r.removedForQuota);
	assert.equal(
		survivors.length + evicted,
		written.length,
		"every committed entry either survives or was evicted for quota, and counted once",
	);
	const verifier = new OverflowStore({ root });
	for (const id of survivors) await assertEntryVerifies(verifier, id, CONCURRENCY_PROFILE);
	const bytes = sumEntryBytes(root, survivors);
	assert.ok(bytes <= SMALL_QUOTA_BYTES, `the store ends within quota: ${bytes} of ${SMALL_QUOTA_BYTES} bytes`);
	return { written, survivors, evicted, bytes, seconds: Math.max(...reports.map((report) => report.elapsedMs)) / 1000 };
}

test(`${WORKERS} processes writing, reading and housekeeping one store under an unreachable quota lose and corrupt nothing`, async (t) => {
	const root = join(await createTempDir(t), "store");
	const reports = await runWorkers(root, "generous", GENEROUS_MAX_ENTRIES, UNREACHABLE_QUOTA_BYTES);
	assertNoWorkerFailed(reports);
	for (const report of reports) {
		assert.equal(
			report.vanishedBeforeMeta + report.vanishedAfterMeta,
			0,
			`${report.sessionId}: no listed entry disappeared`,
		);
		assert.equal(report.removedForQuota, 0, `${report.sessionId}: nothing evicted`);
	}
	const written = reports.flatMap((report) => report.written).sort();
	const seconds = Math.max(...reports.map((report) => report.elapsedMs)) / 1000;
	const listing = listStore(root);
	assert.deepEqual(listing.complete, written, "exactly the committed entries are in the store");
	assert.deepEqual(
		[listing.textOnly, listing.metaOnly, listing.temps, listing.other],
		[[], [], [], []],
		"no half entry or temp file left",
	);
	const verifier = new OverflowStore({ root });
	for (const id of written) await assertEntryVerifies(verifier, id, CONCURRENCY_PROFILE);
	t.diagnostic(
		`concurrency, unreachable quota: ${WORKERS} processes for ${seconds.toFixed(1)} s, ${written.length} entries (${(sumEntryBytes(root, written) / 1e6).toFixed(1)} MB) committed, ` +
			`${sumOf(reports, (r) => r.reads)} reads (${sumOf(reports, (r) => r.verified)} verified), ${sumOf(reports, (r) => r.housekeeps)} housekeeping passes; ` +
			`0 exceptions, 0 corrupt, 0 lost`,
	);
});

test(`${WORKERS} processes under a ${SMALL_QUOTA_BYTES / 1024 / 1024} MB quota end within it, and an entry only ever disappears through a counted eviction`, async (t) => {
	const root = join(await createTempDir(t), "store");
	const reports = await runWorkers(root, "quota", QUOTA_MAX_ENTRIES, SMALL_QUOTA_BYTES);
	assertNoWorkerFailed(reports);
	const { written, survivors, evicted, bytes, seconds } = await assertQuotaAccounting(root, reports);
	t.diagnostic(
		`concurrency, ${SMALL_QUOTA_BYTES / 1024 / 1024} MB quota: ${WORKERS} processes for ${seconds.toFixed(1)} s, ${written.length} entries committed, ${evicted} evicted for quota, ` +
			`${survivors.length} survive (${(bytes / 1e6).toFixed(2)} MB); ${sumOf(reports, (r) => r.reads)} reads, ${sumOf(reports, (r) => r.verified)} verified, ` +
			`${sumOf(reports, (r) => r.vanishedBeforeMeta + r.vanishedAfterMeta)} found evicted mid-read; 0 exceptions, 0 corrupt`,
	);
});

test(`${WORKERS} processes whose commits enforce a ${SMALL_QUOTA_BYTES / 1024 / 1024} MB quota count every eviction once and stay near the quota after each commit`, async (t) => {
	const root = join(await createTempDir(t), "store");
	const reports = await runWorkers(root, "commit", QUOTA_MAX_ENTRIES, SMALL_QUOTA_BYTES, "commit");
	assertNoWorkerFailed(reports);
	const { written, survivors, evicted, bytes, seconds } = await assertQuotaAccounting(root, reports);
	const byCommits = sumOf(reports, (r) => r.removedByCommits);
	assert.ok(byCommits > 0, "the commits evicted");
	// A process does not know what the others wrote since their last scan: less than the band
	// below the quota plus the entry that crossed it, each (and one more entry being committed).
	const band = SMALL_QUOTA_BYTES * (1 - DEFAULT_QUOTA_LOW_WATER_RATIO);
	const largestEntry = CONCURRENCY_PROFILE.largeMax + 1024;
	const bound = SMALL_QUOTA_BYTES + WORKERS * (band + 2 * largestEntry);
	const peak = Math.max(...reports.map((r) => r.peakBytesAfterCommit));
	assert.ok(peak <= bound, `right after a commit the store held ${peak} bytes; at most ${bound} expected`);
	t.diagnostic(
		`concurrency, quota at commit: ${WORKERS} processes for ${seconds.toFixed(1)} s, ${written.length} entries committed, ${evicted} evicted (${byCommits} by commits), ` +
			`${survivors.length} survive (${(bytes / 1e6).toFixed(2)} MB); largest store seen after a commit ${(peak / 1e6).toFixed(2)} MB (quota ${(SMALL_QUOTA_BYTES / 1e6).toFixed(2)} MB)`,
	);
});

test("housekeeping in the same process never removes a temp file whose open has not returned yet, nor one being written", async (t) => {
	const root = join(await createTempDir(t), "store");
	let release: () => void = () => {};
	const gate = new Promise<void>((resolve) => (release = resolve));
	let opened = 0;
	// The file exists on disk as soon as open(2) returns; this open resolves only when released.
	const slowOpen: StoreFs = {
		...NODE_STORE_FS,
		async open(path, flags, mode) {
			const handle = await NODE_STORE_FS.open(path, flags, mode);
			if (opened++ === 0) await gate;
			return handle;
		},
	};
	const writer = new OverflowStore({ root, fs: slowOpen });
	const id = computeEntryId("same-process", "call-1");
	const content = generateEntryContent(id, entrySizeFor(id, CONCURRENCY_PROFILE));
	const writing = writeEntry(writer, buildEntryMeta(id, content, "same-process", "call-1", Date.now()), content, 65536);
	while (listStore(root).temps.length === 0) await new Promise((resolve) => setTimeout(resolve, 1));
	const housekeeper = new OverflowStore({ root });
	const during = await housekeeper.housekeep({ retentionMs: 7 * 24 * 3600 * 1000, maxStoreBytes: 1e9 });
	assert.equal(during.removedTemp, 0, "the temp file being opened is kept");
	release();
	await writing;
	await assertEntryVerifies(housekeeper, id, CONCURRENCY_PROFILE);
});
