// Tests of src/store.ts: ids, permissions, atomic writes under injected failures, housekeeping.
// Every test uses its own mkdtemp directory and an injected clock; stored files are read back
// byte for byte, and after every failure the directory is listed to prove nothing was left behind.

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { createHash } from "node:crypto";
import { chmod, lstat, mkdir, readdir, readFile, rename, rm, stat, symlink, utimes, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { test } from "node:test";

import {
	NODE_STORE_FS,
	OverflowStore,
	computeEntryId,
	countTextLines,
	isEntryId,
	resolveStoreRoot,
	type EntryMeta,
	type StoreFileHandle,
	type StoreFs,
} from "../src/store.js";
import { createTempDir } from "./helpers/tmp.js";

const NOW = Date.parse("2025-06-01T12:00:00.000Z");
const MINUTE_MS = 60 * 1000;
const HOUR_MS = 60 * MINUTE_MS;
const DAY_MS = 24 * HOUR_MS;
const ENTRY_NAME = /^[0-9a-f]{12}\.(txt|json)$/;

// ---- helpers ----

function createErrnoError(code: string): NodeJS.ErrnoException {
	return Object.assign(new Error(`${code}: injected failure`), { code });
}

interface Faults {
	open?: (path: string) => string | undefined;
	write?: (path: string, callIndex: number) => string | undefined;
	sync?: (path: string) => string | undefined;
	rename?: (from: string, to: string) => string | undefined;
	link?: (from: string, to: string) => string | undefined;
	readdir?: (path: string) => string | undefined;
	mkdir?: (path: string) => string | undefined;
	unlink?: (path: string) => string | undefined;
	maxBytesPerWrite?: number;
}

/** NODE_STORE_FS with failures (by errno code) injected where a fault function returns one. */
function injectFaults(faults: Faults): StoreFs {
	const base = NODE_STORE_FS;
	let writeCalls = 0;
	return {
		...base,
		async open(path, flags, mode) {
			const code = faults.open?.(path);
			if (code !== undefined) throw createErrnoError(code);
			const handle = await base.open(path, flags, mode);
			const wrapped: StoreFileHandle = {
				async write(buffer, offset, length, position) {
					const writeCode = faults.write?.(path, writeCalls++);
					if (writeCode !== undefined) throw createErrnoError(writeCode);
					const capped = Math.min(length, faults.maxBytesPerWrite ?? length);
					return handle.write(buffer, offset, capped, position);
				},
				async sync() {
					const syncCode = faults.sync?.(path);
					if (syncCode !== undefined) throw createErrnoError(syncCode);
					return handle.sync();
				},
				chmod: (fileMode) => handle.chmod(fileMode),
				close: () => handle.close(),
			};
			return wrapped;
		},
		async rename(from, to) {
			const code = faults.rename?.(from, to);
			if (code !== undefined) throw createErrnoError(code);
			return base.rename(from, to);
		},
		async link(from, to) {
			const code = faults.link?.(from, to);
			if (code !== undefined) throw createErrnoError(code);
			return base.link(from, to);
		},
		async readdir(path) {
			const code = faults.readdir?.(path);
			if (code !== undefined) throw createErrnoError(code);
			return base.readdir(path);
		},
		async mkdir(path, options) {
			const code = faults.mkdir?.(path);
			if (code !== undefined) throw createErrnoError(code);
			return base.mkdir(path, options);
		},
		async unlink(path) {
			const code = faults.unlink?.(path);
			if (code !== undefined) throw createErrnoError(code);
			return base.unlink(path);
		},
	};
}

function isTempName(path: string): boolean {
	return /(^|\/)\.[0-9a-f]{12}\.\d+\.[0-9a-f]+\.tmp$/.test(path);
}

function buildMeta(id: string, bytes: Uint8Array, overrides: Partial<EntryMeta> = {}): EntryMeta {
	return {
		id,
		sessionId: "session-a",
		toolCallId: "call-1",
		toolName: "bash",
		createdAt: new Date(NOW).toISOString(),
		totalLines: countTextLines(bytes),
		totalBytes: bytes.length,
		storedLines: countTextLines(bytes),
		storedBytes: bytes.length,
		truncated: false,
		source: "current",
		...overrides,
	};
}

interface StoredEntry {
	id: string;
	bytes: Buffer;
}

/** Writes one entry through the store, in chunks of `chunkSize`. */
async function storeEntry(
	store: OverflowStore,
	options: { sessionId?: string; toolCallId: string; text?: string | Buffer; createdMs?: number; chunkSize?: number },
): Promise<StoredEntry> {
	const sessionId = options.sessionId ?? "session-a";
	const id = computeEntryId(sessionId, options.toolCallId);
	const bytes = Buffer.isBuffer(options.text) ? options.text : Buffer.from(options.text ?? `output of ${options.toolCallId}\n`, "utf8");
	const writer = await store.beginEntry(id);
	const chunkSize = options.chunkSize ?? 65536;
	for (let offset = 0; offset < bytes.length; offset += chunkSize) {
		await writer.write(bytes.subarray(offset, offset + chunkSize));
	}
	await writer.commit(
		buildMeta(id, bytes, {
			sessionId,
			toolCallId: options.toolCallId,
			createdAt: new Date(options.createdMs ?? NOW).toISOString(),
		}),
	);
	return { id, bytes };
}

async function listNames(dir: string): Promise<string[]> {
	return (await readdir(dir)).sort();
}

async function assertEmptyStore(root: string): Promise<void> {
	assert.deepEqual(await listNames(root), [], "no entry, partial or temp file may be left behind");
}

async function assertEntryReadsBack(store: OverflowStore, entry: StoredEntry): Promise<void> {
	const stored = await readFile(store.textPath(entry.id));
	assert.ok(stored.equals(entry.bytes), "the stored text is byte-identical to what was written");
	const meta = await store.readMeta(entry.id);
	assert.ok(meta !== undefined, "the entry has readable metadata");
	assert.equal(meta.totalBytes, entry.bytes.length);
}

function modeOf(stats: { mode: number }): number {
	return stats.mode & 0o777;
}

async function withUmask<T>(mask: number, run: () => Promise<T>): Promise<T> {
	const previous = process.umask(mask);
	try {
		return await run();
	} finally {
		process.umask(previous);
	}
}

function findDeadPid(): number {
	const child = spawnSync(process.execPath, ["-e", ""]);
	assert.ok(typeof child.pid === "number" && child.pid > 0);
	return child.pid;
}

async function setMtime(path: string, ms: number): Promise<void> {
	await utimes(path, new Date(ms), new Date(ms));
}

const GENEROUS = { retentionMs: 7 * DAY_MS, maxStoreBytes: 512 * 1024 * 1024 };

// ---- ids and paths ----

test("computes the entry id as the first 12 hex characters of sha1(sessionId NUL toolCallId)", () => {
	const expected = createHash("sha1").update("session-a\0call_1").digest("hex").slice(0, 12);
	assert.equal(computeEntryId("session-a", "call_1"), expected);
	assert.match(expected, /^[0-9a-f]{12}$/);
	assert.notEqual(computeEntryId("ab", "c"), computeEntryId("a", "bc"), "the NUL separator keeps the two parts apart");
});

test("accepts as an id only 12 lowercase hex characters", () => {
	assert.equal(isEntryId("0123456789ab"), true);
	for (const bad of ["0123456789AB", "0123456789a", "0123456789abc", "../../etc/passwd", "0123456789a/", "", 123, null, undefined]) {
		assert.equal(isEntryId(bad), false, `rejects ${String(bad)}`);
	}
});

test("resolves the store root to <agentDir>/my-pi/pi-overflow", () => {
	assert.equal(resolveStoreRoot("/home/u/.pi/agent"), "/home/u/.pi/agent/my-pi/pi-overflow");
});

test("refuses to form a path from anything but an id", () => {
	const store = new OverflowStore({ root: "/nonexistent/store" });
	assert.equal(store.textPath("0123456789ab"), "/nonexistent/store/0123456789ab.txt");
	for (const bad of ["../../etc/passwd", "0123456789AB", "0123456789ab/../x"]) {
		assert.throws(() => store.textPath(bad), (error: NodeJS.ErrnoException) => error.code === "EINVAL");
	}
});

test("counts lines like wc -l plus a last line without a final newline", () => {
	assert.equal(countTextLines(Buffer.from("")), 0);
	assert.equal(countTextLines(Buffer.from("a")), 1);
	assert.equal(countTextLines(Buffer.from("a\n")), 1);
	assert.equal(countTextLines(Buffer.from("a\r\nb")), 2);
	assert.equal(countTextLines(Buffer.from("\n\n")), 2);
});

// ---- permissions ----

for (const mask of [0o000, 0o077, 0o277]) {
	test(`creates my-pi and the store directory 0700 and files 0600 under umask ${mask.toString(8).padStart(3, "0")}`, async (t) => {
		const agentDir = await createTempDir(t);
		const root = resolveStoreRoot(agentDir);
		const store = new OverflowStore({ root, now: () => NOW });
		const entry = await withUmask(mask, () => storeEntry(store, { toolCallId: "call-1", text: "hello\n" }));
		assert.equal(modeOf(await stat(join(agentDir, "my-pi"))), 0o700);
		assert.equal(modeOf(await stat(root)), 0o700);
		assert.equal(modeOf(await stat(store.textPath(entry.id))), 0o600);
		assert.equal(modeOf(await stat(join(root, `${entry.id}.json`))), 0o600);
		await assertEntryReadsBack(store, entry);
	});
}

test("tightens a pre-existing store directory that is wider than 0700", async (t) => {
	const dir = await createTempDir(t);
	const root = join(dir, "pi-overflow");
	await mkdir(root);
	await chmod(root, 0o777);
	const store = new OverflowStore({ root, now: () => NOW });
	await storeEntry(store, { toolCallId: "call-1" });
	assert.equal(modeOf(await stat(root)), 0o700);
});

test("leaves an existing my-pi directory's mode alone", async (t) => {
	const agentDir = await createTempDir(t);
	await mkdir(join(agentDir, "my-pi"));
	await chmod(join(agentDir, "my-pi"), 0o755);
	const store = new OverflowStore({ root: resolveStoreRoot(agentDir), now: () => NOW });
	await storeEntry(store, { toolCallId: "call-1" });
	assert.equal(modeOf(await stat(join(agentDir, "my-pi"))), 0o755);
	assert.equal(modeOf(await stat(store.root)), 0o700);
});

test("refuses a symlink in place of the store directory and writes nothing through it", async (t) => {
	const dir = await createTempDir(t);
	const target = join(dir, "elsewhere");
	await mkdir(target);
	const root = join(dir, "pi-overflow");
	await symlink(target, root);
	const store = new OverflowStore({ root, now: () => NOW });
	await assert.rejects(store.beginEntry(computeEntryId("s", "c")), (error: NodeJS.ErrnoException) => {
		assert.equal(error.code, "ELOOP");
		assert.match(error.message, /symbolic link/);
		return true;
	});
	assert.deepEqual(await listNames(target), [], "the link target stays empty");
	assert.equal(modeOf(await stat(target)), 0o777 & ~process.umask(), "the link target's mode is not changed");
	assert.ok((await lstat(root)).isSymbolicLink(), "the link itself is left in place");
});

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

test("refuses a store directory swapped for a symlink after it was first used", async (t) => {
	const dir = await createTempDir(t);
	const root = join(dir, "pi-overflow");
	const store = new OverflowStore({ root, now: () => NOW });
	await storeEntry(store, { toolCallId: "call-1" });
	const target = join(dir, "elsewhere");
	await mkdir(target);
	await rename(root, join(dir, "moved"));
	await symlink(target, root);
	await assert.rejects(store.beginEntry(computeEntryId("s", "c")), (error: NodeJS.ErrnoException) => error.code === "ELOOP");
	assert.deepEqual(await listNames(target), []);
});

test("refuses a regular file in place of the store directory", async (t) => {
	const dir = await createTempDir(t);
	const root = join(dir, "pi-overflow");
	await writeFile(root, "not a directory");
	const store = new OverflowStore({ root, now: () => NOW });
	await assert.rejects(store.beginEntry(computeEntryId("s", "c")), (error: NodeJS.ErrnoException) => error.code === "ENOTDIR");
	assert.equal(await readFile(root, "utf8"), "not a directory");
});

test("rejects with EACCES when the store directory is not writable and leaves no temp file", async (t) => {
	// Tests run as root, where a 0500 directory is still writable: the denial is injected instead.
	const dir = await createTempDir(t);
	const root = join(dir, "pi-overflow");
	const fs = injectFaults({ open: (path) => (isTempName(path) ? "EACCES" : undefined) });
	const store = new OverflowStore({ root, fs, now: () => NOW });
	await assert.rejects(store.beginEntry(computeEntryId("s", "c")), (error: NodeJS.ErrnoException) => error.code === "EACCES");
	await assertEmptyStore(root);
});

test("rejects with the mkdir error's code when the store directory cannot be created", async (t) => {
	const dir = await createTempDir(t);
	const root = join(dir, "my-pi", "pi-overflow");
	const store = new OverflowStore({ root, fs: injectFaults({ mkdir: () => "EACCES" }), now: () => NOW });
	await assert.rejects(store.beginEntry(computeEntryId("s", "c")), (error: NodeJS.ErrnoException) => error.code === "EACCES");
	assert.deepEqual(await listNames(dir), []);
});

test("re-creates the store directory when it disappears after it was validated", async (t) => {
	const dir = await createTempDir(t);
	const root = join(dir, "my-pi", "pi-overflow");
	const store = new OverflowStore({ root, now: () => NOW });
	await storeEntry(store, { toolCallId: "call-1" });
	await rm(join(dir, "my-pi"), { recursive: true });
	const entry = await storeEntry(store, { toolCallId: "call-2" });
	await assertEntryReadsBack(store, entry);
	assert.equal(modeOf(await stat(root)), 0o700);
	assert.equal(modeOf(await stat(join(dir, "my-pi"))), 0o700);
});

// ---- atomic writes ----

test("stores a multi-chunk write byte for byte, multi-byte UTF-8 and invalid bytes split across chunks", async (t) => {
	const dir = await createTempDir(t);
	const store = new OverflowStore({ root: join(dir, "store"), now: () => NOW });
	const text = Buffer.concat([
		Buffer.from("héllo wörld — ✓ 🌍 日本語\n".repeat(200), "utf8"),
		Buffer.from([0xff, 0xfe, 0xc3, 0x0a, 0x80]),
		Buffer.from("\r\nlast line without newline 🌍", "utf8"),
	]);
	// A chunk size of 7 splits almost every multi-byte character between two writes.
	const entry = await storeEntry(store, { toolCallId: "call-utf8", text, chunkSize: 7 });
	await assertEntryReadsBack(store, entry);
	const meta = await store.readMeta(entry.id);
	assert.deepEqual(meta, buildMeta(entry.id, text, { toolCallId: "call-utf8" }));
	assert.deepEqual(JSON.parse(await readFile(join(store.root, `${entry.id}.json`), "utf8")), meta);
	assert.deepEqual(await listNames(store.root), [`${entry.id}.json`, `${entry.id}.txt`]);
});

test("completes writes that the file system accepts only partially", async (t) => {
	const dir = await createTempDir(t);
	const fs = injectFaults({ maxBytesPerWrite: 5 });
	const store = new OverflowStore({ root: join(dir, "store"), fs, now: () => NOW });
	const entry = await storeEntry(store, { toolCallId: "call-partial", text: "0123456789\n".repeat(100) + "ünïcödé" });
	await assertEntryReadsBack(store, entry);
});

test("stores an empty output as an entry of 0 lines and 0 bytes", async (t) => {
	const dir = await createTempDir(t);
	const store = new OverflowStore({ root: join(dir, "store"), now: () => NOW });
	const entry = await storeEntry(store, { toolCallId: "call-empty", text: "" });
	await assertEntryReadsBack(store, entry);
	assert.equal((await store.readMeta(entry.id))?.totalLines, 0);
});

/** Each case builds its faults fresh, so counters start at zero in every test. */
const commitFailures: { name: string; code: string; createFaults: () => Faults }[] = [
	{
		name: "ENOSPC on the second write",
		code: "ENOSPC",
		createFaults: () => ({ write: (path, call) => (isTempName(path) && call === 1 ? "ENOSPC" : undefined) }),
	},
	{ name: "EIO on fsync of the text", code: "EIO", createFaults: () => ({ sync: (path) => (isTempName(path) ? "EIO" : undefined) }) },
	{
		name: "EACCES on placing the text",
		code: "EACCES",
		createFaults: () => ({ link: (_from, to) => (to.endsWith(".txt") ? "EACCES" : undefined) }),
	},
	{
		name: "EIO on placing the metadata",
		code: "EIO",
		createFaults: () => ({ link: (_from, to) => (to.endsWith(".json") ? "EIO" : undefined) }),
	},
	{
		name: "EIO on the rename of the metadata where hard links are not supported",
		code: "EIO",
		createFaults: () => ({ link: () => "EPERM", rename: (_from, to) => (to.endsWith(".json") ? "EIO" : undefined) }),
	},
	{
		name: "ENOSPC on the write of the metadata",
		code: "ENOSPC",
		createFaults: () => ({ write: (path, call) => (isTempName(path) && call >= 2 ? "ENOSPC" : undefined) }),
	},
	{
		name: "EDQUOT on opening the metadata temp file",
		code: "EDQUOT",
		createFaults: () => {
			let tempOpens = 0; // the first temp file is the text's, the second the metadata's
			return { open: (path) => (isTempName(path) && tempOpens++ === 1 ? "EDQUOT" : undefined) };
		},
	},
];

for (const failure of commitFailures) {
	test(`leaves no partial, temp or unpaired file after ${failure.name}, and a later entry works`, async (t) => {
		const dir = await createTempDir(t);
		const root = join(dir, "store");
		const failing = new OverflowStore({ root, fs: injectFaults(failure.createFaults()), now: () => NOW });
		const id = computeEntryId("session-a", "call-fail");
		const bytes = Buffer.from("first chunk\n".repeat(10) + "second chunk\n".repeat(10));
		const writer = await failing.beginEntry(id);
		let caught: NodeJS.ErrnoException | undefined;
		try {
			await writer.write(bytes.subarray(0, 120));
			await writer.write(bytes.subarray(120));
			await writer.commit(buildMeta(id, bytes));
		} catch (error) {
			caught = error as NodeJS.ErrnoException;
		}
		assert.equal(caught?.code, failure.code, "the error keeps its code");
		await writer.abort(); // safe after a failure, never throws
		await writer.abort();
		await assertEmptyStore(root);
		assert.equal(await failing.readMeta(id), undefined);

		const healthy = new OverflowStore({ root, now: () => NOW });
		const entry = await storeEntry(healthy, { toolCallId: "call-fail", text: bytes });
		await assertEntryReadsBack(healthy, entry);
		assert.deepEqual(await listNames(root), [`${id}.json`, `${id}.txt`]);
	});
}

test("rejects metadata that does not describe what was written and leaves nothing behind", async (t) => {
	const dir = await createTempDir(t);
	const store = new OverflowStore({ root: join(dir, "store"), now: () => NOW });
	const id = computeEntryId("session-a", "call-1");
	const bytes = Buffer.from("one\ntwo\n");
	for (const overrides of [{ storedBytes: 3 }, { storedLines: 3 }, { id: "0123456789ab" }, { source: "disk" as never }, { truncated: true }]) {
		const writer = await store.beginEntry(id);
		await writer.write(bytes);
		await assert.rejects(writer.commit(buildMeta(id, bytes, overrides)), (error: NodeJS.ErrnoException) => error.code === "EINVAL");
		await writer.abort();
		await assertEmptyStore(store.root);
	}
});

test("aborting removes the temp file, and aborting after commit keeps the entry", async (t) => {
	const dir = await createTempDir(t);
	const store = new OverflowStore({ root: join(dir, "store"), now: () => NOW });
	const id = computeEntryId("session-a", "call-1");
	const writer = await store.beginEntry(id);
	await writer.write(Buffer.from("partial"));
	assert.equal((await listNames(store.root)).filter(isTempName).length, 1);
	await writer.abort();
	await assertEmptyStore(store.root);
	await assert.rejects(writer.write(Buffer.from("more")), (error: NodeJS.ErrnoException) => error.code === "EBADF");

	const entry = await storeEntry(store, { toolCallId: "call-2" });
	const committed = await store.beginEntry(computeEntryId("session-a", "call-3"));
	await committed.write(Buffer.from("x\n"));
	await committed.commit(buildMeta(computeEntryId("session-a", "call-3"), Buffer.from("x\n"), { toolCallId: "call-3" }));
	await committed.abort();
	await assertEntryReadsBack(store, entry);
	assert.equal((await listNames(store.root)).length, 4);
});

test("never replaces an entry: a second commit under the same id fails with EEXIST and leaves the first intact", async (t) => {
	const dir = await createTempDir(t);
	for (const fs of [NODE_STORE_FS, injectFaults({ link: () => "EPERM" })]) {
		const store = new OverflowStore({ root: join(dir, `store-${fs === NODE_STORE_FS ? "link" : "rename"}`), fs, now: () => NOW });
		const first = await storeEntry(store, { toolCallId: "call-1", text: "old\n" });
		const writer = await store.beginEntry(first.id);
		const bytes = Buffer.from("new and longer\nsecond\n");
		await writer.write(bytes);
		await assert.rejects(writer.commit(buildMeta(first.id, bytes)), (error: NodeJS.ErrnoException) => error.code === "EEXIST");
		await assertEntryReadsBack(store, first);
		assert.equal((await listNames(store.root)).length, 2);
	}
});

test("allocates the first id of a tool call, then a new one for each later result with the same toolCallId", async (t) => {
	const dir = await createTempDir(t);
	const store = new OverflowStore({ root: join(dir, "store"), now: () => NOW });
	const toolCallId = `call-${process.pid}-${Date.now()}`;
	const first = await store.allocateEntryId("session-a", toolCallId);
	assert.equal(first, computeEntryId("session-a", toolCallId));
	const parallel = await Promise.all([1, 2, 3].map(() => store.allocateEntryId("session-a", toolCallId)));
	assert.equal(new Set([first, ...parallel]).size, 4, "no two results share an id");
	// An id the session already showed (a resumed session) is never issued again, nor one whose file exists.
	const reused = `reused-${process.pid}-${Date.now()}`;
	store.rememberEntryIds([computeEntryId("session-a", reused)]);
	assert.equal(await store.allocateEntryId("session-a", reused), computeEntryId("session-a", reused, 1));
	const onDisk = `on-disk-${process.pid}-${Date.now()}`;
	await storeEntry(store, { toolCallId: onDisk });
	assert.equal(await store.allocateEntryId("session-a", onDisk), computeEntryId("session-a", onDisk, 1));
});

// ---- readMeta ----

test("reads no metadata for an unknown id, a bad id, invalid JSON or a symlinked .json", async (t) => {
	const dir = await createTempDir(t);
	const store = new OverflowStore({ root: join(dir, "store"), now: () => NOW });
	const entry = await storeEntry(store, { toolCallId: "call-1" });
	assert.equal(await store.readMeta("0123456789ab"), undefined);
	assert.equal(await store.readMeta("../../etc/passwd"), undefined);
	assert.equal(await store.readMeta("../store/" + entry.id), undefined);
	assert.equal(await store.readMeta(undefined as unknown as string), undefined);

	await writeFile(join(store.root, "aaaaaaaaaaaa.json"), "{ not json");
	assert.equal(await store.readMeta("aaaaaaaaaaaa"), undefined);
	await writeFile(join(store.root, "bbbbbbbbbbbb.json"), JSON.stringify({ ...buildMeta("bbbbbbbbbbbb", Buffer.from("")), totalBytes: -1 }));
	assert.equal(await store.readMeta("bbbbbbbbbbbb"), undefined, "metadata with an invalid field is invalid");
	await writeFile(join(store.root, "cccccccccccc.json"), JSON.stringify(buildMeta(entry.id, Buffer.from(""))));
	assert.equal(await store.readMeta("cccccccccccc"), undefined, "metadata naming another id is invalid");
	await symlink(join(store.root, `${entry.id}.json`), join(store.root, "dddddddddddd.json"));
	assert.equal(await store.readMeta("dddddddddddd"), undefined, "a symlinked .json is not followed");
	assert.ok((await store.readMeta(entry.id)) !== undefined);
});

test("reads no metadata when the store directory does not exist, and does not create it", async (t) => {
	const dir = await createTempDir(t);
	const store = new OverflowStore({ root: join(dir, "store"), now: () => NOW });
	assert.equal(await store.readMeta("0123456789ab"), undefined);
	assert.deepEqual(await listNames(dir), []);
});

// ---- housekeeping ----

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
	const mineOldest = await storeEntry(store, { sessionId: "mine", toolCallId: "m1", text, createdMs: NOW - 5 * HOUR_MS });
	const otherOld = await storeEntry(store, { sessionId: "other", toolCallId: "o1", text, createdMs: NOW - 4 * HOUR_MS });
	const otherYoung = await storeEntry(store, { sessionId: "other", toolCallId: "o2", text, createdMs: NOW - 1 * HOUR_MS });
	const mineYoung = await storeEntry(store, { sessionId: "mine", toolCallId: "m2", text, createdMs: NOW - 2 * HOUR_MS });
	const entryBytes = async (id: string) => (await stat(store.textPath(id))).size + (await stat(join(store.root, `${id}.json`))).size;
	const total = (await Promise.all([mineOldest, otherOld, otherYoung, mineYoung].map((e) => entryBytes(e.id)))).reduce((a, b) => a + b, 0);

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
	const second = await store.housekeep({ retentionMs: 7 * DAY_MS, maxStoreBytes: (await entryBytes(mineYoung.id)) + 10, currentSessionId: "mine" });
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
	const oneEntry = (await stat(store.textPath(oldest.id))).size + (await stat(join(store.root, `${oldest.id}.json`))).size;
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
	assert.deepEqual(result, { removedExpired: 0, removedForQuota: 0, removedTemp: 0, removedOrphans: 0, remainingBytes: 0, errors: [] });
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
	const bad = await new OverflowStore({ root, now: () => NOW }).housekeep({ retentionMs: Number.NaN, maxStoreBytes: -1 });
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

/** NODE_STORE_FS, counting the calls of each method (and the files readSmallTextFiles is asked for). */
function countFsCalls(): { fs: StoreFs; calls: Record<string, number> } {
	const calls: Record<string, number> = {};
	const count = (name: string, by = 1) => {
		calls[name] = (calls[name] ?? 0) + by;
	};
	const base = NODE_STORE_FS;
	const fs: StoreFs = {
		...base,
		open: (path, flags, mode) => (count("open"), base.open(path, flags, mode)),
		lstat: (path) => (count("lstat"), base.lstat(path)),
		mkdir: (path, options) => (count("mkdir"), base.mkdir(path, options)),
		chmod: (path, mode) => (count("chmod"), base.chmod(path, mode)),
		rename: (from, to) => (count("rename"), base.rename(from, to)),
		unlink: (path) => (count("unlink"), base.unlink(path)),
		readdir: (path) => (count("readdir"), base.readdir(path)),
		readSmallTextFiles: (paths, maxBytes) => (count("readSmallTextFiles"), count("smallFilesRead", paths.length), base.readSmallTextFiles(paths, maxBytes)),
	};
	return { fs, calls };
}

// How long this takes is measured by `npm run bench` (housekeeping, 10 000 entries); here: the work it does.
test("housekeeps 10 000 entries with one directory listing, each metadata file read once and only the evicted files removed", async (t) => {
	const dir = await createTempDir(t);
	const root = join(dir, "store");
	await new OverflowStore({ root, now: () => NOW }).ensureRoot();
	const count = 10_000;
	const ids: string[] = [];
	for (let i = 0; i < count; i++) ids.push(computeEntryId(i % 2 === 0 ? "s-mine" : "s-them", `call-${String(i).padStart(5, "0")}`));
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
	const scan = await new OverflowStore({ root, fs: scanning.fs, now: () => NOW }).housekeep({ ...GENEROUS, currentSessionId: "s-mine" });
	assert.deepEqual(scan.errors, []);
	assert.equal(scan.removedExpired + scan.removedForQuota + scan.removedOrphans + scan.removedTemp, 0);
	t.diagnostic(`fs calls, scan of ${count} entries: ${JSON.stringify(scanning.calls)}`);
	assert.equal(scanning.calls.readdir, 1, `one listing of the store: ${JSON.stringify(scanning.calls)}`);
	assert.equal(scanning.calls.smallFilesRead, count, `each metadata file read once: ${JSON.stringify(scanning.calls)}`);
	assert.ok((scanning.calls.lstat ?? 0) <= 2, `no per-entry lstat for valid entries: ${JSON.stringify(scanning.calls)}`);
	assert.equal((scanning.calls.unlink ?? 0) + (scanning.calls.open ?? 0) + (scanning.calls.rename ?? 0), 0, `nothing written or removed: ${JSON.stringify(scanning.calls)}`);

	// Half the entries over quota (all entries have the same size): the other session's 5 000 go.
	const evicting = countFsCalls();
	const evict = await new OverflowStore({ root, fs: evicting.fs, now: () => NOW }).housekeep({ retentionMs: 7 * DAY_MS, maxStoreBytes: scan.remainingBytes / 2, currentSessionId: "s-mine" });
	t.diagnostic(`fs calls, evicting ${count / 2} of ${count} entries: ${JSON.stringify(evicting.calls)}`);
	assert.deepEqual(evict.errors, []);
	assert.equal(evict.removedForQuota, count / 2);
	assert.equal((await listNames(root)).filter((name) => ENTRY_NAME.test(name)).length, count);
	assert.equal(evicting.calls.readdir, 1, `one listing of the store: ${JSON.stringify(evicting.calls)}`);
	assert.equal(evicting.calls.smallFilesRead, count, `each metadata file read once: ${JSON.stringify(evicting.calls)}`);
	assert.equal(evicting.calls.unlink, count, `two files per evicted entry, nothing else removed: ${JSON.stringify(evicting.calls)}`);
});

test("concurrent housekeeping and writers neither throw nor lose or corrupt a kept entry", async (t) => {
	const dir = await createTempDir(t);
	const root = join(dir, "store");
	const clock = () => NOW;
	const seeder = new OverflowStore({ root, now: clock });
	const expired: StoredEntry[] = [];
	for (let i = 0; i < 50; i++) expired.push(await storeEntry(seeder, { toolCallId: `expired-${i}`, createdMs: NOW - 30 * DAY_MS }));
	await writeFile(join(root, `.0123456789ab.${findDeadPid()}.abcdef.tmp`), "stale");

	// Two store instances stand in for two Pi processes sharing the directory.
	const storeA = new OverflowStore({ root, now: clock });
	const storeB = new OverflowStore({ root, now: clock });
	const writers: Promise<StoredEntry>[] = [];
	for (let i = 0; i < 40; i++) {
		writers.push(storeEntry(i % 2 === 0 ? storeA : storeB, { toolCallId: `fresh-${i}`, text: `fresh ${i}\n`.repeat(100 + i), chunkSize: 64 }));
	}
	const housekeeps = [storeA, storeB, storeA, storeB].map((store) => store.housekeep({ ...GENEROUS, currentSessionId: "session-a" }));
	const [results, written] = await Promise.all([Promise.all(housekeeps), Promise.all(writers)]);

	for (const result of results) assert.deepEqual(result.errors, []);
	assert.equal(results.reduce((sum, result) => sum + result.removedExpired, 0), 50, "each expired entry is counted once");
	assert.equal(results.reduce((sum, result) => sum + result.removedTemp, 0), 1);
	for (const entry of written) await assertEntryReadsBack(storeA, entry);
	const names = await listNames(root);
	assert.equal(names.length, 80, "exactly the 40 fresh entries remain, no temp file");
	for (const entry of expired) assert.equal(await storeA.readMeta(entry.id), undefined);
});
