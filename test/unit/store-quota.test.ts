// Tests of the quota at commit time (src/store/quota.ts, StoreOptions.maxStoreBytes): which entries a
// commit evicts, that a commit within the quota costs no directory scan, the low-water mark, other
// processes' entries, commits racing each other, and failures reported instead of thrown. Every
// test has its own mkdtemp directory; entry ages come from createdAt, never from the wall clock.

import assert from "node:assert/strict";
import { lstat } from "node:fs/promises";
import { join } from "node:path";
import { test } from "node:test";

import {
	type CommitResult,
	computeEntryId,
	countTextLines,
	DEFAULT_QUOTA_LOW_WATER_RATIO,
	NODE_STORE_FS,
	OverflowStore,
	type StoreFs,
} from "../../src/store/index.js";
import { injectFaults } from "../helpers/faulty-fs.js";
import { measureLiveStore, summarizeStore } from "../helpers/robust-common.js";
import { createTempDir } from "../helpers/tmp.js";

const NOW = Date.parse("2025-06-01T12:00:00.000Z");
const MINUTE_MS = 60 * 1000;
const HOUR_MS = 60 * MINUTE_MS;
const DAY_MS = 24 * HOUR_MS;

interface Committed {
	id: string;
	result: CommitResult;
}

/** Commits one entry of `textBytes` bytes for a session, created at `createdMs`. */
async function commitEntry(
	store: OverflowStore,
	sessionId: string,
	toolCallId: string,
	textBytes: number,
	createdMs: number,
): Promise<Committed> {
	const id = computeEntryId(sessionId, toolCallId);
	const text = Buffer.from(`${"q".repeat(99)}\n`.repeat(Math.ceil(textBytes / 100)).slice(0, textBytes), "latin1");
	const writer = await store.beginEntry(id);
	await writer.write(text);
	const result = await writer.commit({
		id,
		sessionId,
		toolCallId,
		toolName: "bash",
		createdAt: new Date(createdMs).toISOString(),
		totalLines: countTextLines(text),
		totalBytes: text.length,
		storedLines: countTextLines(text),
		storedBytes: text.length,
		truncated: false,
		source: "current",
	});
	return { id, result };
}

/** NODE_STORE_FS counting the calls that only a scan or an eviction makes. */
function countScans(): { fs: StoreFs; calls: { readdir: number; readMetas: number; unlinks: string[] } } {
	const calls = { readdir: 0, readMetas: 0, unlinks: [] as string[] };
	const fs: StoreFs = {
		...NODE_STORE_FS,
		readdir: (path) => (calls.readdir++, NODE_STORE_FS.readdir(path)),
		readSmallTextFiles: (paths, maxBytes) => (
			(calls.readMetas += paths.length),
			NODE_STORE_FS.readSmallTextFiles(paths, maxBytes)
		),
		unlink: (path) => (calls.unlinks.push(path), NODE_STORE_FS.unlink(path)),
	};
	return { fs, calls };
}

const HOUSEKEEPING = { retentionMs: 7 * DAY_MS };

test("a commit over the quota evicts other sessions' entries first, even younger ones, then this session's oldest; never the entry just written", async (t) => {
	const root = join(await createTempDir(t), "store");
	const seeder = new OverflowStore({ root, now: () => NOW });
	const otherOld = await commitEntry(seeder, "other", "o1", 20_000, NOW - 3 * HOUR_MS);
	const mineOld = await commitEntry(seeder, "mine", "m1", 20_000, NOW - 2 * HOUR_MS);
	const mineLess = await commitEntry(seeder, "mine", "m2", 20_000, NOW - 90 * MINUTE_MS);
	const otherYoung = await commitEntry(seeder, "other", "o2", 20_000, NOW - 1 * HOUR_MS);
	const quota = 100_000;
	const store = new OverflowStore({ root, now: () => NOW, maxStoreBytes: quota });
	const seeded = await store.housekeep({ ...HOUSEKEEPING, maxStoreBytes: quota, currentSessionId: "mine" });
	assert.equal(seeded.removedForQuota, 0, "the seeded store fits");

	// 4 × ~20.3 kB + 40 kB: over the quota; down to 90 kB takes both of the other session's entries.
	const big = await commitEntry(store, "mine", "m3", 40_000, NOW);
	assert.deepEqual(big.result, { removedForQuota: 2, errors: [] });
	let listing = summarizeStore(root);
	assert.deepEqual(
		[...listing.ids].sort(),
		[mineOld.id, mineLess.id, big.id].sort(),
		"the other session's entries went, the younger one too",
	);
	assert.ok(
		listing.bytes <= quota * DEFAULT_QUOTA_LOW_WATER_RATIO,
		`down to the low-water mark: ${listing.bytes} bytes`,
	);

	// Only this session's entries are left: the oldest goes.
	const next = await commitEntry(store, "mine", "m4", 20_000, NOW + MINUTE_MS);
	assert.deepEqual(next.result, { removedForQuota: 1, errors: [] });
	listing = summarizeStore(root);
	assert.deepEqual([...listing.ids].sort(), [mineLess.id, big.id, next.id].sort());

	// An entry that alone fills the quota: everything else goes, it stays.
	const huge = await commitEntry(store, "mine", "m5", quota - 500, NOW + 2 * MINUTE_MS);
	assert.deepEqual(huge.result, { removedForQuota: 3, errors: [] });
	listing = summarizeStore(root);
	assert.deepEqual([...listing.ids], [huge.id]);
	assert.ok(listing.bytes <= quota);
	assert.deepEqual(listing.stray, []);
	for (const gone of [otherOld, otherYoung, mineOld]) assert.equal(await store.readMeta(gone.id), undefined);
});

test("an entry larger than the quota on its own is kept, and everything else goes", async (t) => {
	const root = join(await createTempDir(t), "store");
	const store = new OverflowStore({ root, now: () => NOW, maxStoreBytes: 50_000 });
	const first = await commitEntry(store, "s", "a", 10_000, NOW);
	const tooBig = await commitEntry(store, "s", "b", 60_000, NOW + 1);
	assert.deepEqual(tooBig.result, { removedForQuota: 1, errors: [] });
	assert.deepEqual([...summarizeStore(root).ids], [tooBig.id]);
	assert.equal(await store.readMeta(first.id), undefined);
});

test("commits within the quota after housekeeping list no directory, read no metadata and remove nothing", async (t) => {
	const root = join(await createTempDir(t), "store");
	const seeder = new OverflowStore({ root, now: () => NOW });
	for (let i = 0; i < 20; i++) await commitEntry(seeder, "other", `seed-${i}`, 5_000, NOW - DAY_MS + i);
	const { fs, calls } = countScans();
	// 30 commits of ~10 kB: less than the tenth of the quota after which a process looks again.
	const store = new OverflowStore({ root, now: () => NOW, fs, maxStoreBytes: 10_000_000 });
	await store.housekeep({ ...HOUSEKEEPING, maxStoreBytes: 10_000_000, currentSessionId: "mine" });
	const afterHousekeeping = { readdir: calls.readdir, readMetas: calls.readMetas };
	const unlinksBefore = calls.unlinks.length;
	for (let i = 0; i < 30; i++)
		assert.deepEqual((await commitEntry(store, "mine", `c-${i}`, 10_000, NOW + i)).result, {
			removedForQuota: 0,
			errors: [],
		});
	assert.deepEqual(
		{ readdir: calls.readdir, readMetas: calls.readMetas },
		afterHousekeeping,
		"no scan on the result path",
	);
	// The only unlinks are each commit's own temp names, once the text and the metadata are linked into place.
	assert.equal(calls.unlinks.length - unlinksBefore, 60);
	assert.ok(calls.unlinks.slice(unlinksBefore).every((path) => path.endsWith(".tmp")));
	assert.equal(summarizeStore(root).ids.size, 50);
});

test("a steady stream of writes scans once per tenth of the quota written, and keeps the store within it (hysteresis)", async (t) => {
	const root = join(await createTempDir(t), "store");
	const { fs, calls } = countScans();
	const quota = 200_000;
	const band = quota - Math.floor(quota * DEFAULT_QUOTA_LOW_WATER_RATIO);
	const store = new OverflowStore({ root, now: () => NOW, fs, maxStoreBytes: quota });
	await store.housekeep({ ...HOUSEKEEPING, maxStoreBytes: quota, currentSessionId: "mine" });
	const scansAt: number[] = [];
	let evicted = 0;
	let entryBytes = 0;
	const count = 100;
	for (let i = 0; i < count; i++) {
		const before = calls.readdir;
		const { id, result } = await commitEntry(store, "mine", `stream-${i}`, 2_500, NOW + i);
		assert.deepEqual(result.errors, []);
		evicted += result.removedForQuota;
		if (calls.readdir > before) scansAt.push(i);
		const listing = summarizeStore(root);
		assert.ok(listing.bytes <= quota, `after commit ${i}: ${listing.bytes} bytes, over the ${quota}-byte quota`);
		if (i === 0)
			entryBytes = (await lstat(join(root, `${id}.txt`))).size + (await lstat(join(root, `${id}.json`))).size;
	}
	// A scan once this process has written more than the band; once the store is full, each one
	// evicts down to the low-water mark, so the next is again a band of writes away.
	const gap = Math.floor(band / entryBytes) + 1;
	const expected = `a scan every ${gap} commits of ${entryBytes} bytes; scans after commits ${scansAt.join(", ")}`;
	assert.ok(scansAt.length >= Math.floor(count / gap) - 1 && scansAt.length <= Math.ceil(count / gap), expected);
	for (let k = 1; k < scansAt.length; k++) assert.ok(scansAt[k] - scansAt[k - 1] >= gap - 1, expected);
	t.diagnostic(expected);
	assert.ok(evicted > 0, "the stream filled the store");
	const listing = summarizeStore(root);
	assert.equal(listing.ids.size + evicted, count, "every entry is kept or was counted once as evicted");
	for (let i = count - 50; i < count; i++)
		assert.ok(listing.ids.has(computeEntryId("mine", `stream-${i}`)), `recent entry ${i} is kept`);
});

test("a first commit without housekeeping scans once and counts the entries already there", async (t) => {
	const root = join(await createTempDir(t), "store");
	const seeder = new OverflowStore({ root, now: () => NOW });
	const old = await commitEntry(seeder, "other", "old", 60_000, NOW - HOUR_MS);
	const { fs, calls } = countScans();
	const store = new OverflowStore({ root, now: () => NOW, fs, maxStoreBytes: 100_000 });
	const first = await commitEntry(store, "mine", "first", 50_000, NOW);
	assert.deepEqual(first.result, { removedForQuota: 1, errors: [] });
	assert.equal(calls.readdir, 1);
	assert.equal(await store.readMeta(old.id), undefined);
	const second = await commitEntry(store, "mine", "second", 5_000, NOW + 1);
	assert.deepEqual(second.result, { removedForQuota: 0, errors: [] });
	assert.equal(calls.readdir, 1, "the picture from the first scan is kept");
});

test("a commit while housekeeping is still scanning waits for its picture instead of scanning again", async (t) => {
	const root = join(await createTempDir(t), "store");
	const seeder = new OverflowStore({ root, now: () => NOW });
	for (let i = 0; i < 10; i++) await commitEntry(seeder, "other", `seed-${i}`, 5_000, NOW - HOUR_MS + i);
	let release: () => void = () => {};
	const gate = new Promise<void>((resolve) => (release = resolve));
	let placed: () => void = () => {};
	const jsonPlaced = new Promise<void>((resolve) => (placed = resolve));
	let readdirCalls = 0;
	let jsonLinked = false;
	const slowList: StoreFs = {
		...NODE_STORE_FS,
		async readdir(path) {
			readdirCalls++;
			const dirents = await NODE_STORE_FS.readdir(path);
			await gate;
			return dirents;
		},
		async link(from, to) {
			await NODE_STORE_FS.link(from, to);
			if (to.endsWith(".json")) jsonLinked = true;
		},
		async unlink(path) {
			await NODE_STORE_FS.unlink(path);
			// The metadata's temp name goes last: by the next turn of the event loop the commit has
			// counted its entry and waits for housekeeping.
			if (jsonLinked && path.endsWith(".tmp")) setImmediate(placed);
		},
	};
	const store = new OverflowStore({ root, now: () => NOW, fs: slowList, maxStoreBytes: 60_000 });
	const housekeeping = store.housekeep({ ...HOUSEKEEPING, maxStoreBytes: 60_000, currentSessionId: "mine" });
	const committing = commitEntry(store, "mine", "during", 20_000, NOW);
	await jsonPlaced;
	release();
	const [result, committed] = await Promise.all([housekeeping, committing]);
	assert.deepEqual(result.errors, []);
	assert.deepEqual(committed.result.errors, []);
	assert.equal(readdirCalls, 1, "one listing between them");
	assert.ok(committed.result.removedForQuota > 0, "the commit evicted from housekeeping's picture");
	const listing = summarizeStore(root);
	assert.ok(listing.ids.has(committed.id), "housekeeping left the entry being committed alone");
	assert.ok(listing.bytes <= 60_000, `${listing.bytes} bytes`);
});

test("another process's entries are seen once this process has written a tenth of the quota, and evicted first", async (t) => {
	const root = join(await createTempDir(t), "store");
	const quota = 200_000;
	// Two instances stand in for two Pi processes sharing the directory.
	const mine = new OverflowStore({ root, now: () => NOW, maxStoreBytes: quota });
	const theirs = new OverflowStore({ root, now: () => NOW, maxStoreBytes: quota });
	await mine.housekeep({ ...HOUSEKEEPING, maxStoreBytes: quota, currentSessionId: "mine" });
	await theirs.housekeep({ ...HOUSEKEEPING, maxStoreBytes: quota, currentSessionId: "theirs" });
	const theirIds: string[] = [];
	for (let i = 0; i < 8; i++) theirIds.push((await commitEntry(theirs, "theirs", `t-${i}`, 20_000, NOW + i)).id);
	assert.ok(summarizeStore(root).bytes <= quota * DEFAULT_QUOTA_LOW_WATER_RATIO, "their entries alone fit");

	// Under a tenth of the quota written: this process does not look (it knows of none of theirs).
	const first = await commitEntry(mine, "mine", "m-0", 12_000, NOW + 100);
	assert.deepEqual(first.result, { removedForQuota: 0, errors: [] });
	assert.ok(summarizeStore(root).bytes <= quota);
	// Past a tenth: it scans, finds the store above the low-water mark, and their oldest goes first.
	const second = await commitEntry(mine, "mine", "m-1", 12_000, NOW + 101);
	assert.deepEqual(second.result, { removedForQuota: 1, errors: [] });
	const listing = summarizeStore(root);
	assert.ok(listing.bytes <= quota * DEFAULT_QUOTA_LOW_WATER_RATIO, `after the scan: ${listing.bytes} bytes`);
	assert.deepEqual([...listing.ids].sort(), [first.id, second.id, ...theirIds.slice(1)].sort());
});

test("two commits that cannot both fit: the later pass keeps its own entry and evicts the other, whose pass protected both", async (t) => {
	const root = join(await createTempDir(t), "store");
	const store = new OverflowStore({ root, now: () => NOW, maxStoreBytes: 100_000 });
	await store.housekeep({ ...HOUSEKEEPING, maxStoreBytes: 100_000 });
	const [a, b] = await Promise.all([
		commitEntry(store, "s", "a", 60_000, NOW),
		commitEntry(store, "s", "b", 60_000, NOW + 1),
	]);
	const listing = summarizeStore(root);
	assert.equal(listing.ids.size, 1, "one of them fits");
	assert.ok(listing.bytes <= 100_000);
	const [survivor, other] = listing.ids.has(a.id) ? [a, b] : [b, a];
	assert.deepEqual(survivor.result, { removedForQuota: 1, errors: [] }, "the survivor's own pass evicted the other");
	assert.deepEqual(other.result, { removedForQuota: 0, errors: [] }, "the first pass could evict neither");
	assert.deepEqual(listing.stray, []);
});

test("two stores writing and evicting at once count each eviction once, leave no half entry, and stay near the quota", async (t) => {
	const root = join(await createTempDir(t), "store");
	const quota = 150_000;
	const maxEntryBytes = 11_000 + 400;
	const stores = [
		new OverflowStore({ root, now: () => NOW, maxStoreBytes: quota }),
		new OverflowStore({ root, now: () => NOW, maxStoreBytes: quota }),
	];
	const seeder = new OverflowStore({ root, now: () => NOW });
	for (let i = 0; i < 12; i++) await commitEntry(seeder, "old", `seed-${i}`, 10_000, NOW - HOUR_MS + i);
	await Promise.all(
		stores.map((store, n) => store.housekeep({ ...HOUSEKEEPING, maxStoreBytes: quota, currentSessionId: `s${n}` })),
	);
	// Each store commits one entry after another, as a Pi process does; the two run at the same time.
	let peakBytes = 0;
	const streams = stores.map(async (store, n) => {
		const committed: Committed[] = [];
		for (let i = 0; i < 25; i++) {
			committed.push(await commitEntry(store, `s${n}`, `c-${i}`, 7_000 + ((i + n) % 5) * 1_000, NOW + i));
			peakBytes = Math.max(peakBytes, measureLiveStore(root));
		}
		return committed;
	});
	const results = (await Promise.all(streams)).flat();
	for (const { result } of results) assert.deepEqual(result.errors, []);
	const evicted = results.reduce((sum, { result }) => sum + result.removedForQuota, 0);
	const listing = summarizeStore(root);
	assert.deepEqual(listing.stray, [], "no half entry or temp file");
	assert.equal(listing.ids.size + evicted, 12 + 50, "kept + evicted = written, each eviction counted once");
	for (const id of listing.ids) assert.ok((await stores[0].readMeta(id)) !== undefined, `${id} reads back`);
	// What one store does not know of the other is what that one wrote since its last scan: less
	// than the band below the quota plus the entry that crossed it.
	const band = quota * (1 - DEFAULT_QUOTA_LOW_WATER_RATIO);
	assert.ok(listing.bytes <= quota + 2 * (band + maxEntryBytes), `at the end: ${listing.bytes} bytes`);
	t.diagnostic(
		`two stores, quota ${quota}: peak seen ${peakBytes} bytes, end ${listing.bytes} bytes, ${evicted} evicted`,
	);
});

test("an eviction that cannot remove a file is reported in the commit's result; the entry is committed and nothing throws", async (t) => {
	const root = join(await createTempDir(t), "store");
	const seeder = new OverflowStore({ root, now: () => NOW });
	const stuck = await commitEntry(seeder, "other", "stuck", 30_000, NOW - HOUR_MS);
	const failing = injectFaults({ unlink: (path) => (path.endsWith(`${stuck.id}.json`) ? "EACCES" : undefined) });
	const store = new OverflowStore({ root, now: () => NOW, fs: failing, maxStoreBytes: 50_000 });
	const fresh = await commitEntry(store, "mine", "fresh", 30_000, NOW);
	assert.equal(fresh.result.removedForQuota, 0);
	assert.equal(fresh.result.errors.length, 1);
	assert.match(fresh.result.errors[0], /cannot remove .*\.json: EACCES/);
	assert.ok((await store.readMeta(fresh.id)) !== undefined, "the new entry is committed");
});

test("a store directory that cannot be listed: nothing is evicted and the commit says why", async (t) => {
	const root = join(await createTempDir(t), "store");
	const seeder = new OverflowStore({ root, now: () => NOW });
	const old = await commitEntry(seeder, "other", "old", 30_000, NOW - HOUR_MS);
	const unlisted = injectFaults({ readdir: () => "EIO" });
	const store = new OverflowStore({ root, now: () => NOW, fs: unlisted, maxStoreBytes: 50_000 });
	const fresh = await commitEntry(store, "mine", "fresh", 30_000, NOW);
	assert.equal(fresh.result.removedForQuota, 0);
	assert.match(fresh.result.errors.join("\n"), /cannot list .*EIO/);
	assert.deepEqual([...summarizeStore(root).ids].sort(), [old.id, fresh.id].sort());
});

test("without maxStoreBytes a commit never evicts; a bad maxStoreBytes is refused by name", async (t) => {
	const root = join(await createTempDir(t), "store");
	const store = new OverflowStore({ root, now: () => NOW });
	for (let i = 0; i < 5; i++)
		assert.deepEqual((await commitEntry(store, "s", `c${i}`, 30_000, NOW + i)).result, {
			removedForQuota: 0,
			errors: [],
		});
	assert.equal(summarizeStore(root).ids.size, 5);
	for (const bad of [-1, Number.NaN, Number.POSITIVE_INFINITY, "512" as unknown as number]) {
		assert.throws(
			() => new OverflowStore({ root, now: () => NOW, maxStoreBytes: bad }),
			(error: NodeJS.ErrnoException) => error.code === "EINVAL" && /maxStoreBytes/.test(error.message),
		);
	}
});
