// Tests of src/store/housekeeping.ts. The plan (what was found + the clock → what to remove) and
// the executor are tested without a disk: a hand-made survey, a fake unlink. Then housekeeping as
// a whole on a real directory: symlinks and other names never touched, a store of 10 000 entries
// listed once, concurrent housekeepers and writers, failures reported instead of thrown.

import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { mkdir, readdir, readFile, stat, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { test } from "node:test";

import { type LiveEntry, StoreDirectory } from "../../src/store/directory.js";
import {
	checkHousekeepingOptions,
	executeHousekeeping,
	type HousekeepingPlan,
	type HousekeepingResult,
	type PlanContext,
	planHousekeeping,
	selectVictims,
	type StoreSurvey,
} from "../../src/store/housekeeping.js";
import { computeEntryId, NODE_STORE_FS, OverflowStore, type StoreFs } from "../../src/store/index.js";
import {
	assertEntryReadsBack,
	buildMeta,
	countFsCalls,
	DAY_MS,
	ENTRY_NAME,
	findDeadPid,
	GENEROUS,
	HOUR_MS,
	listNames,
	MINUTE_MS,
	NOW,
	setMtime,
	type StoredEntry,
	storeEntry,
} from "../helpers/store-fixtures.js";
import { createErrnoError, injectFaults } from "../helpers/faulty-fs.js";
import { createTempDir } from "../helpers/tmp.js";

// ---- the plan, without a disk ----

const ROOT = "/nonexistent/store";
const OWN_PID = 1000;
const LIVE_PID = 2000;
const DEAD_PID = 3000;
const CONTEXT: PlanContext = { now: NOW, ownPid: OWN_PID, isProcessAlive: (pid) => pid === LIVE_PID };
const RULES = { retentionMs: 7 * DAY_MS, maxStoreBytes: 1_000_000 };

function liveEntry(id: string, sessionId: string | undefined, ageMs: number, bytes = 100): LiveEntry {
	return { id, txtPath: `${ROOT}/${id}.txt`, jsonPath: `${ROOT}/${id}.json`, createdMs: NOW - ageMs, bytes, sessionId };
}

function survey(parts: Partial<StoreSurvey>): StoreSurvey {
	return { temps: [], halves: [], entries: [], unreadable: [], ...parts };
}

const idsOf = (entries: readonly { id: string }[]): string[] => entries.map((entry) => entry.id);

test("plan: expires entries older than the retention by createdAt, and keeps those not older", () => {
	const entries = [
		liveEntry("aaaaaaaaaaaa", "s", 7 * DAY_MS + 1),
		liveEntry("bbbbbbbbbbbb", "s", 7 * DAY_MS),
		liveEntry("cccccccccccc", "s", -HOUR_MS),
	];
	const plan = planHousekeeping(survey({ entries }), RULES, CONTEXT);
	assert.deepEqual(idsOf(plan.expired), ["aaaaaaaaaaaa"]);
	assert.deepEqual(idsOf(plan.kept), ["bbbbbbbbbbbb", "cccccccccccc"], "an entry from the future is kept");
	assert.equal(plan.totalBytes, 200, "expired entries are not counted for the quota");
	assert.deepEqual(plan.evict, []);
});

test("plan: a temp file is stale when its writer is dead or it is older than an hour, and this process's own unheld one at once", () => {
	const asked: number[] = [];
	const context: PlanContext = { ...CONTEXT, isProcessAlive: (pid) => (asked.push(pid), pid === LIVE_PID) };
	const temp = (name: string, pid: number, ageMs: number) => ({ path: `${ROOT}/${name}`, pid, mtimeMs: NOW - ageMs });
	const temps = [
		temp("dead-fresh", DEAD_PID, MINUTE_MS),
		temp("live-fresh", LIVE_PID, MINUTE_MS),
		temp("live-hour", LIVE_PID, HOUR_MS),
		temp("live-old", LIVE_PID, HOUR_MS + 1),
		temp("own-fresh", OWN_PID, 0),
	];
	const plan = planHousekeeping(survey({ temps }), RULES, context);
	assert.deepEqual(plan.temps, [`${ROOT}/dead-fresh`, `${ROOT}/live-old`, `${ROOT}/own-fresh`]);
	assert.deepEqual(
		asked.sort(),
		[LIVE_PID, DEAD_PID].sort(),
		"each other pid is asked about once; this process's never",
	);
});

test("plan: a half entry goes once it is older than ten minutes", () => {
	const halves = [
		{ path: `${ROOT}/aaaaaaaaaaaa.txt`, mtimeMs: NOW - 10 * MINUTE_MS - 1 },
		{ path: `${ROOT}/bbbbbbbbbbbb.json`, mtimeMs: NOW - 10 * MINUTE_MS },
		{ path: `${ROOT}/cccccccccccc.json`, mtimeMs: NOW - 11 * MINUTE_MS },
	];
	assert.deepEqual(planHousekeeping(survey({ halves }), RULES, CONTEXT).halves, [
		`${ROOT}/aaaaaaaaaaaa.txt`,
		`${ROOT}/cccccccccccc.json`,
	]);
});

test("plan: an old entry with unreadable metadata goes like an orphan; a young one is kept, sized by its files, as no session's", () => {
	const unreadable = (id: string, ageMs: number) => ({
		id,
		txtPath: `${ROOT}/${id}.txt`,
		jsonPath: `${ROOT}/${id}.json`,
		jsonMtimeMs: NOW - ageMs,
		bytes: 500,
	});
	const plan = planHousekeeping(
		survey({
			unreadable: [unreadable("aaaaaaaaaaaa", HOUR_MS), unreadable("bbbbbbbbbbbb", MINUTE_MS)],
			entries: [liveEntry("cccccccccccc", "mine", 2 * HOUR_MS, 500)],
		}),
		{ ...RULES, maxStoreBytes: 600, currentSessionId: "mine" },
		CONTEXT,
	);
	assert.deepEqual(idsOf(plan.unreadable), ["aaaaaaaaaaaa"]);
	assert.equal(plan.totalBytes, 1000);
	assert.deepEqual(idsOf(plan.evict), ["bbbbbbbbbbbb"], "not the current session's, so evicted before its older entry");
	assert.equal(plan.evict[0]!.createdMs, NOW - MINUTE_MS, "aged by its .json's mtime");
	assert.deepEqual(idsOf(plan.kept), ["cccccccccccc"]);
});

test("plan: evicts other sessions' entries first, even younger ones, then the current session's oldest first, until within the quota", () => {
	const entries = [
		liveEntry("aaaaaaaaaaaa", "mine", 5 * HOUR_MS),
		liveEntry("bbbbbbbbbbbb", "other", 4 * HOUR_MS),
		liveEntry("cccccccccccc", "other", 1 * HOUR_MS),
		liveEntry("dddddddddddd", "mine", 2 * HOUR_MS),
		liveEntry("eeeeeeeeeeee", "mine", 3 * HOUR_MS),
	];
	const plan = (maxStoreBytes: number) =>
		planHousekeeping(survey({ entries }), { ...RULES, maxStoreBytes, currentSessionId: "mine" }, CONTEXT);
	assert.deepEqual(idsOf(plan(500).evict), []);
	assert.deepEqual(idsOf(plan(499).evict), ["bbbbbbbbbbbb"]);
	assert.deepEqual(idsOf(plan(250).evict), ["bbbbbbbbbbbb", "cccccccccccc", "aaaaaaaaaaaa"]);
	assert.deepEqual(idsOf(plan(250).kept).sort(), ["dddddddddddd", "eeeeeeeeeeee"]);
	assert.deepEqual(idsOf(plan(0).evict), [
		"bbbbbbbbbbbb",
		"cccccccccccc",
		"aaaaaaaaaaaa",
		"eeeeeeeeeeee",
		"dddddddddddd",
	]);
});

test("victims: without a current session purely oldest first, ties broken by id so every process agrees", () => {
	const entries = [
		liveEntry("cccccccccccc", "s1", HOUR_MS),
		liveEntry("bbbbbbbbbbbb", "s2", 2 * HOUR_MS),
		liveEntry("aaaaaaaaaaaa", "s1", HOUR_MS),
	];
	assert.deepEqual(idsOf(selectVictims(entries, 300, 0, undefined)), ["bbbbbbbbbbbb", "aaaaaaaaaaaa", "cccccccccccc"]);
	assert.deepEqual(idsOf(selectVictims(entries, 300, 150, undefined)), ["bbbbbbbbbbbb", "aaaaaaaaaaaa"]);
	assert.deepEqual(
		idsOf(selectVictims([...entries].reverse(), 300, 150, undefined)),
		["bbbbbbbbbbbb", "aaaaaaaaaaaa"],
		"the order found does not matter",
	);
});

test("options that are not usable skip their rule and say so", () => {
	const checked = checkHousekeepingOptions({ retentionMs: Number.NaN, maxStoreBytes: -1 });
	assert.equal(checked.errors.length, 2);
	assert.match(checked.errors[0]!, /retentionMs .*expiry skipped/);
	assert.match(checked.errors[1]!, /maxStoreBytes .*quota skipped/);
	const plan = planHousekeeping(
		survey({ entries: [liveEntry("aaaaaaaaaaaa", "s", 30 * DAY_MS, 10_000)] }),
		checked.rules,
		CONTEXT,
	);
	assert.deepEqual([plan.expired, plan.evict], [[], []]);
	assert.equal(checkHousekeepingOptions(undefined as never).errors.length, 2);
	assert.deepEqual(checkHousekeepingOptions({ retentionMs: 1, maxStoreBytes: 0, currentSessionId: "s" }), {
		rules: { retentionMs: 1, maxStoreBytes: 0, currentSessionId: "s" },
		errors: [],
	});
});

test("executor: removes the .json before the .txt and counts only what this call removed, reporting what it could not", async () => {
	const unlinked: string[] = [];
	const fs: StoreFs = {
		...NODE_STORE_FS,
		unlink: async (path) => {
			if (path.includes("gone")) throw createErrnoError("ENOENT");
			if (path.includes("bbbbbbbbbbbb")) throw createErrnoError("EACCES");
			unlinked.push(path.slice(ROOT.length + 1));
		},
	};
	const dir = new StoreDirectory(ROOT, `${ROOT}/`, fs);
	const entry = (id: string, bytes: number) => liveEntry(id, "s", HOUR_MS, bytes);
	const plan: HousekeepingPlan = {
		temps: [`${ROOT}/.aaaaaaaaaaaa.1.ab.tmp`, `${ROOT}/gone.tmp`],
		halves: [`${ROOT}/cccccccccccc.txt`],
		expired: [entry("dddddddddddd", 1)],
		unreadable: [entry("eeeeeeeeeeee", 1)],
		evict: [entry("ffffffffffff", 100), entry("bbbbbbbbbbbb", 200)],
		kept: [entry("999999999999", 50)],
		totalBytes: 350,
	};
	const result: HousekeepingResult = {
		removedExpired: 0,
		removedForQuota: 0,
		removedTemp: 0,
		removedOrphans: 0,
		remainingBytes: 0,
		errors: [],
	};
	await executeHousekeeping(dir, plan, result);
	assert.deepEqual(result, {
		removedExpired: 1,
		removedForQuota: 1,
		removedTemp: 1,
		removedOrphans: 2,
		remainingBytes: 250,
		errors: [
			`cannot remove ${ROOT}/bbbbbbbbbbbb.json: EACCES: injected failure`,
			`cannot remove ${ROOT}/bbbbbbbbbbbb.txt: EACCES: injected failure`,
		],
	});
	assert.deepEqual(unlinked, [
		".aaaaaaaaaaaa.1.ab.tmp",
		"cccccccccccc.txt",
		"dddddddddddd.json",
		"dddddddddddd.txt",
		"eeeeeeeeeeee.json",
		"eeeeeeeeeeee.txt",
		"ffffffffffff.json",
		"ffffffffffff.txt",
	]);
});

// ---- housekeeping on a real directory ----

test("never housekeeps through a symlink in place of the store directory", async (t) => {
	const dir = await createTempDir(t);
	const target = join(dir, "elsewhere");
	await mkdir(target);
	const victim = join(target, "0123456789ab.txt");
	await writeFile(victim, "not yours\n");
	await setMtime(victim, NOW - 30 * DAY_MS);
	const root = join(dir, "pi-overflow");
	await symlink(target, root);
	const store = new OverflowStore({ root, now: () => NOW });
	const result = await store.housekeep(GENEROUS);
	assert.equal(result.errors.length, 1);
	assert.equal(result.removedOrphans, 0);
	assert.deepEqual(await listNames(target), ["0123456789ab.txt"]);
});

test("housekeeping removes entries older than the retention and keeps younger ones", async (t) => {
	const dir = await createTempDir(t);
	const store = new OverflowStore({ root: join(dir, "store"), now: () => NOW });
	const old = await storeEntry(store, { toolCallId: "old", createdMs: NOW - 8 * DAY_MS });
	const young = await storeEntry(store, { toolCallId: "young", createdMs: NOW - 6 * DAY_MS });
	const result = await store.housekeep({ ...GENEROUS, currentSessionId: "session-a" });
	assert.deepEqual(result.errors, []);
	assert.equal(result.removedExpired, 1);
	assert.equal(await store.readMeta(old.id), undefined);
	assert.deepEqual(await listNames(store.root), [`${young.id}.json`, `${young.id}.txt`]);
	await assertEntryReadsBack(store, young);
	const sizes = (await stat(store.textPath(young.id))).size + (await stat(join(store.root, `${young.id}.json`))).size;
	assert.equal(result.remainingBytes, sizes);
});

test("housekeeping evicts for quota oldest first, other sessions' entries before the current session's", async (t) => {
	const dir = await createTempDir(t);
	const store = new OverflowStore({ root: join(dir, "store"), now: () => NOW });
	const text = "x".repeat(999) + "\n"; // 1000 bytes of text per entry
	const mineOldest = await storeEntry(store, {
		sessionId: "mine",
		toolCallId: "m1",
		text,
		createdMs: NOW - 5 * HOUR_MS,
	});
	const otherOld = await storeEntry(store, {
		sessionId: "other",
		toolCallId: "o1",
		text,
		createdMs: NOW - 4 * HOUR_MS,
	});
	const otherYoung = await storeEntry(store, {
		sessionId: "other",
		toolCallId: "o2",
		text,
		createdMs: NOW - 1 * HOUR_MS,
	});
	const mineYoung = await storeEntry(store, {
		sessionId: "mine",
		toolCallId: "m2",
		text,
		createdMs: NOW - 2 * HOUR_MS,
	});
	const entryBytes = async (id: string) =>
		(await stat(store.textPath(id))).size + (await stat(join(store.root, `${id}.json`))).size;
	const total = (await Promise.all([mineOldest, otherOld, otherYoung, mineYoung].map((e) => entryBytes(e.id)))).reduce(
		(a, b) => a + b,
		0,
	);

	// Room for a little more than two entries: both of the other session's entries go first.
	const twoAndABit = total - (await entryBytes(otherOld.id)) - (await entryBytes(otherYoung.id)) + 10;
	const first = await store.housekeep({ retentionMs: 7 * DAY_MS, maxStoreBytes: twoAndABit, currentSessionId: "mine" });
	assert.deepEqual(first.errors, []);
	assert.equal(first.removedForQuota, 2);
	assert.equal(await store.readMeta(otherOld.id), undefined);
	assert.equal(await store.readMeta(otherYoung.id), undefined);
	await assertEntryReadsBack(store, mineOldest);
	await assertEntryReadsBack(store, mineYoung);

	// Then the current session's, oldest first.
	const second = await store.housekeep({
		retentionMs: 7 * DAY_MS,
		maxStoreBytes: (await entryBytes(mineYoung.id)) + 10,
		currentSessionId: "mine",
	});
	assert.equal(second.removedForQuota, 1);
	assert.equal(await store.readMeta(mineOldest.id), undefined);
	await assertEntryReadsBack(store, mineYoung);
	assert.equal(second.remainingBytes, await entryBytes(mineYoung.id));
});

test("housekeeping without a current session evicts purely oldest first", async (t) => {
	const dir = await createTempDir(t);
	const store = new OverflowStore({ root: join(dir, "store"), now: () => NOW });
	// Same-sized entries; the youngest was written first, so file times cannot stand in for createdAt.
	const youngest = await storeEntry(store, { sessionId: "s1", toolCallId: "c", createdMs: NOW - 1 * HOUR_MS });
	await storeEntry(store, { sessionId: "s2", toolCallId: "b", createdMs: NOW - 2 * HOUR_MS });
	const oldest = await storeEntry(store, { sessionId: "s1", toolCallId: "a", createdMs: NOW - 3 * HOUR_MS });
	const oneEntry =
		(await stat(store.textPath(oldest.id))).size + (await stat(join(store.root, `${oldest.id}.json`))).size;
	const result = await store.housekeep({ retentionMs: 7 * DAY_MS, maxStoreBytes: oneEntry });
	assert.equal(result.removedForQuota, 2);
	assert.equal(result.remainingBytes, oneEntry);
	assert.deepEqual(await listNames(store.root), [`${youngest.id}.json`, `${youngest.id}.txt`]);
	await assertEntryReadsBack(store, youngest);
	const empty = await store.housekeep({ retentionMs: 7 * DAY_MS, maxStoreBytes: 0 });
	assert.equal(empty.removedForQuota, 1);
	assert.deepEqual(await listNames(store.root), []);
});

test("housekeeping removes temp files of dead writers and old ones, and keeps a live writer's fresh one", async (t) => {
	const dir = await createTempDir(t);
	const store = new OverflowStore({ root: join(dir, "store"), now: () => NOW });
	await store.ensureRoot();
	const deadPid = findDeadPid();
	const livePid = process.ppid; // alive, and not this store's own writer
	const dead = join(store.root, `.0123456789ab.${deadPid}.a1b2c3.tmp`);
	const liveFresh = join(store.root, `.0123456789ab.${livePid}.d4e5f6.tmp`);
	const liveOld = join(store.root, `.0123456789ab.${livePid}.0a0b0c.tmp`);
	for (const path of [dead, liveFresh, liveOld]) await writeFile(path, "partial");
	await setMtime(dead, NOW - MINUTE_MS);
	await setMtime(liveFresh, NOW - MINUTE_MS);
	await setMtime(liveOld, NOW - 2 * HOUR_MS);
	const result = await store.housekeep(GENEROUS);
	assert.deepEqual(result.errors, []);
	assert.equal(result.removedTemp, 2);
	assert.deepEqual(await listNames(store.root), [`.0123456789ab.${livePid}.d4e5f6.tmp`]);
});

test("housekeeping removes half entries older than 10 minutes and keeps younger ones", async (t) => {
	const dir = await createTempDir(t);
	const store = new OverflowStore({ root: join(dir, "store"), now: () => NOW });
	await store.ensureRoot();
	const files = {
		oldTxt: "aaaaaaaaaaaa.txt",
		youngTxt: "bbbbbbbbbbbb.txt",
		oldJson: "cccccccccccc.json",
		youngJson: "dddddddddddd.json",
	};
	for (const name of Object.values(files)) await writeFile(join(store.root, name), "x\n");
	await setMtime(join(store.root, files.oldTxt), NOW - 11 * MINUTE_MS);
	await setMtime(join(store.root, files.youngTxt), NOW - 9 * MINUTE_MS);
	await setMtime(join(store.root, files.oldJson), NOW - 11 * MINUTE_MS);
	await setMtime(join(store.root, files.youngJson), NOW - 1 * MINUTE_MS);
	const result = await store.housekeep(GENEROUS);
	assert.equal(result.removedOrphans, 2);
	assert.deepEqual(await listNames(store.root), [files.youngTxt, files.youngJson].sort());
});

test("housekeeping removes an old entry whose metadata is unreadable, like an orphan", async (t) => {
	const dir = await createTempDir(t);
	const store = new OverflowStore({ root: join(dir, "store"), now: () => NOW });
	await store.ensureRoot();
	for (const name of ["aaaaaaaaaaaa.txt", "aaaaaaaaaaaa.json", "bbbbbbbbbbbb.txt", "bbbbbbbbbbbb.json"]) {
		await writeFile(join(store.root, name), "{ broken");
	}
	await setMtime(join(store.root, "aaaaaaaaaaaa.json"), NOW - HOUR_MS);
	await setMtime(join(store.root, "bbbbbbbbbbbb.json"), NOW - MINUTE_MS);
	const result = await store.housekeep(GENEROUS);
	assert.equal(result.removedOrphans, 1);
	assert.deepEqual(await listNames(store.root), ["bbbbbbbbbbbb.json", "bbbbbbbbbbbb.txt"]);
});

test("housekeeping never touches other names, directories or symlinks, even old ones", async (t) => {
	const dir = await createTempDir(t);
	const store = new OverflowStore({ root: join(dir, "store"), now: () => NOW });
	await store.ensureRoot();
	const outside = join(dir, "outside.txt");
	await writeFile(outside, "keep me\n");
	await setMtime(outside, NOW - 30 * DAY_MS);
	const keep = ["README", "0123456789AB.txt", "0123456789ab.txt.bak", "notes.json", ".hidden.tmp", "eeeeeeeeeeee.log"];
	for (const name of keep) {
		await writeFile(join(store.root, name), "other\n");
		await setMtime(join(store.root, name), NOW - 30 * DAY_MS);
	}
	await mkdir(join(store.root, "ffffffffffff.txt"));
	await writeFile(join(store.root, "ffffffffffff.txt", "inner.txt"), "nested\n");
	await symlink(outside, join(store.root, "aaaaaaaaaaaa.txt"));
	await symlink(outside, join(store.root, "bbbbbbbbbbbb.json"));
	await symlink(outside, join(store.root, `.cccccccccccc.${findDeadPid()}.abcdef.tmp`));
	const before = await listNames(store.root);
	const result = await store.housekeep({ retentionMs: 1000, maxStoreBytes: 0 });
	assert.deepEqual(result.errors, []);
	assert.deepEqual(await listNames(store.root), before);
	assert.equal(await readFile(outside, "utf8"), "keep me\n");
	assert.deepEqual(await readdir(join(store.root, "ffffffffffff.txt")), ["inner.txt"]);
});

test("housekeeping of a store that does not exist yet reports nothing and creates nothing", async (t) => {
	const dir = await createTempDir(t);
	const store = new OverflowStore({ root: join(dir, "store"), now: () => NOW });
	const result = await store.housekeep(GENEROUS);
	assert.deepEqual(result, {
		removedExpired: 0,
		removedForQuota: 0,
		removedTemp: 0,
		removedOrphans: 0,
		remainingBytes: 0,
		errors: [],
	});
	assert.deepEqual(await listNames(dir), []);
});

test("housekeeping never throws: a failing readdir and bad options come back as errors", async (t) => {
	const dir = await createTempDir(t);
	const root = join(dir, "store");
	const store = new OverflowStore({ root, fs: injectFaults({ readdir: () => "EIO" }), now: () => NOW });
	await store.ensureRoot();
	const result = await store.housekeep(GENEROUS);
	assert.equal(result.errors.length, 1);
	assert.match(result.errors[0], /EIO/);
	const bad = await new OverflowStore({ root, now: () => NOW }).housekeep({
		retentionMs: Number.NaN,
		maxStoreBytes: -1,
	});
	assert.equal(bad.errors.length, 2);
	const none = await new OverflowStore({ root, now: () => NOW }).housekeep(undefined as never);
	assert.ok(none.errors.length > 0);
});

test("housekeeping reports a file it cannot remove and carries on", async (t) => {
	const dir = await createTempDir(t);
	const root = join(dir, "store");
	const writer = new OverflowStore({ root, now: () => NOW });
	const stuck = await storeEntry(writer, { toolCallId: "stuck", createdMs: NOW - 30 * DAY_MS });
	const gone = await storeEntry(writer, { toolCallId: "gone", createdMs: NOW - 30 * DAY_MS });
	const fs = injectFaults({ unlink: (path) => (path.includes(stuck.id) ? "EACCES" : undefined) });
	const result = await new OverflowStore({ root, fs, now: () => NOW }).housekeep(GENEROUS);
	assert.equal(result.removedExpired, 1);
	assert.equal(result.errors.length, 2, "both files of the stuck entry are reported");
	assert.match(result.errors[0], /EACCES/);
	assert.equal(await writer.readMeta(gone.id), undefined);
	assert.deepEqual(await listNames(root), [`${stuck.id}.json`, `${stuck.id}.txt`]);
});

// How long this takes is measured by `npm run bench` (housekeeping, 10 000 entries); here: the work it does.
test("housekeeps 10 000 entries with one directory listing, each metadata file read once and only the evicted files removed", async (t) => {
	const dir = await createTempDir(t);
	const root = join(dir, "store");
	await new OverflowStore({ root, now: () => NOW }).ensureRoot();
	const count = 10_000;
	const ids: string[] = [];
	for (let i = 0; i < count; i++)
		ids.push(computeEntryId(i % 2 === 0 ? "s-mine" : "s-them", `call-${String(i).padStart(5, "0")}`));
	const text = Buffer.from("a small output line\n");
	for (let i = 0; i < count; i++) {
		const id = ids[i];
		const meta = buildMeta(id, text, {
			sessionId: i % 2 === 0 ? "s-mine" : "s-them",
			toolCallId: `call-${String(i).padStart(5, "0")}`,
			createdAt: new Date(NOW - (count - i) * 1000).toISOString(),
		});
		writeFileSync(join(root, `${id}.txt`), text, { mode: 0o600 });
		writeFileSync(join(root, `${id}.json`), JSON.stringify(meta), { mode: 0o600 });
	}

	const scanning = countFsCalls();
	const scan = await new OverflowStore({ root, fs: scanning.fs, now: () => NOW }).housekeep({
		...GENEROUS,
		currentSessionId: "s-mine",
	});
	assert.deepEqual(scan.errors, []);
	assert.equal(scan.removedExpired + scan.removedForQuota + scan.removedOrphans + scan.removedTemp, 0);
	t.diagnostic(`fs calls, scan of ${count} entries: ${JSON.stringify(scanning.calls)}`);
	assert.equal(scanning.calls.readdir, 1, `one listing of the store: ${JSON.stringify(scanning.calls)}`);
	assert.equal(scanning.calls.smallFilesRead, count, `each metadata file read once: ${JSON.stringify(scanning.calls)}`);
	assert.ok(
		(scanning.calls.lstat ?? 0) <= 2,
		`no per-entry lstat for valid entries: ${JSON.stringify(scanning.calls)}`,
	);
	assert.equal(
		(scanning.calls.unlink ?? 0) + (scanning.calls.open ?? 0) + (scanning.calls.rename ?? 0),
		0,
		`nothing written or removed: ${JSON.stringify(scanning.calls)}`,
	);

	// Half the entries over quota (all entries have the same size): the other session's 5 000 go.
	const evicting = countFsCalls();
	const evict = await new OverflowStore({ root, fs: evicting.fs, now: () => NOW }).housekeep({
		retentionMs: 7 * DAY_MS,
		maxStoreBytes: scan.remainingBytes / 2,
		currentSessionId: "s-mine",
	});
	t.diagnostic(`fs calls, evicting ${count / 2} of ${count} entries: ${JSON.stringify(evicting.calls)}`);
	assert.deepEqual(evict.errors, []);
	assert.equal(evict.removedForQuota, count / 2);
	assert.equal((await listNames(root)).filter((name) => ENTRY_NAME.test(name)).length, count);
	assert.equal(evicting.calls.readdir, 1, `one listing of the store: ${JSON.stringify(evicting.calls)}`);
	assert.equal(evicting.calls.smallFilesRead, count, `each metadata file read once: ${JSON.stringify(evicting.calls)}`);
	assert.equal(
		evicting.calls.unlink,
		count,
		`two files per evicted entry, nothing else removed: ${JSON.stringify(evicting.calls)}`,
	);
});

test("concurrent housekeeping and writers neither throw nor lose or corrupt a kept entry", async (t) => {
	const dir = await createTempDir(t);
	const root = join(dir, "store");
	const clock = () => NOW;
	const seeder = new OverflowStore({ root, now: clock });
	const expired: StoredEntry[] = [];
	for (let i = 0; i < 50; i++)
		expired.push(await storeEntry(seeder, { toolCallId: `expired-${i}`, createdMs: NOW - 30 * DAY_MS }));
	await writeFile(join(root, `.0123456789ab.${findDeadPid()}.abcdef.tmp`), "stale");

	// Two store instances stand in for two Pi processes sharing the directory.
	const storeA = new OverflowStore({ root, now: clock });
	const storeB = new OverflowStore({ root, now: clock });
	const writers: Promise<StoredEntry>[] = [];
	for (let i = 0; i < 40; i++) {
		writers.push(
			storeEntry(i % 2 === 0 ? storeA : storeB, {
				toolCallId: `fresh-${i}`,
				text: `fresh ${i}\n`.repeat(100 + i),
				chunkSize: 64,
			}),
		);
	}
	const housekeeps = [storeA, storeB, storeA, storeB].map((store) =>
		store.housekeep({ ...GENEROUS, currentSessionId: "session-a" }),
	);
	const [results, written] = await Promise.all([Promise.all(housekeeps), Promise.all(writers)]);

	for (const result of results) assert.deepEqual(result.errors, []);
	assert.equal(
		results.reduce((sum, result) => sum + result.removedExpired, 0),
		50,
		"each expired entry is counted once",
	);
	assert.equal(
		results.reduce((sum, result) => sum + result.removedTemp, 0),
		1,
	);
	for (const entry of written) await assertEntryReadsBack(storeA, entry);
	const names = await listNames(root);
	assert.equal(names.length, 80, "exactly the 40 fresh entries remain, no temp file");
	for (const entry of expired) assert.equal(await storeA.readMeta(entry.id), undefined);
});
