// Tests of src/store/index.ts, the store's facade: the store directory (0700 whatever the umask,
// a symlinked, foreign or vanished directory), paths formed only from ids, id allocation, readMeta,
// and openText, the one way to read a stored text. Every test uses its own mkdtemp directory.

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { fstatSync } from "node:fs";
import { chmod, lstat, mkdir, readFile, rename, rm, stat, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { test } from "node:test";

import { computeEntryId, OverflowStore, resolveStoreRoot } from "../../src/store/index.js";
import {
	assertEmptyStore,
	assertEntryReadsBack,
	buildMeta,
	isTempName,
	listNames,
	modeOf,
	NOW,
	storeEntry,
	withUmask,
} from "../helpers/store-fixtures.js";
import { injectFaults } from "../helpers/faulty-fs.js";
import { createTempDir } from "../helpers/tmp.js";

// ---- paths ----

test("refuses to form a path from anything but an id", () => {
	const store = new OverflowStore({ root: "/nonexistent/store" });
	assert.equal(store.textPath("0123456789ab"), "/nonexistent/store/0123456789ab.txt");
	for (const bad of ["../../etc/passwd", "0123456789AB", "0123456789ab/../x"]) {
		assert.throws(
			() => store.textPath(bad),
			(error: NodeJS.ErrnoException) => error.code === "EINVAL",
		);
	}
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

test("refuses a store directory swapped for a symlink after it was first used", async (t) => {
	const dir = await createTempDir(t);
	const root = join(dir, "pi-overflow");
	const store = new OverflowStore({ root, now: () => NOW });
	await storeEntry(store, { toolCallId: "call-1" });
	const target = join(dir, "elsewhere");
	await mkdir(target);
	await rename(root, join(dir, "moved"));
	await symlink(target, root);
	await assert.rejects(
		store.beginEntry(computeEntryId("s", "c")),
		(error: NodeJS.ErrnoException) => error.code === "ELOOP",
	);
	assert.deepEqual(await listNames(target), []);
});

test("refuses a regular file in place of the store directory", async (t) => {
	const dir = await createTempDir(t);
	const root = join(dir, "pi-overflow");
	await writeFile(root, "not a directory");
	const store = new OverflowStore({ root, now: () => NOW });
	await assert.rejects(
		store.beginEntry(computeEntryId("s", "c")),
		(error: NodeJS.ErrnoException) => error.code === "ENOTDIR",
	);
	assert.equal(await readFile(root, "utf8"), "not a directory");
});

test("rejects with EACCES when the store directory is not writable and leaves no temp file", async (t) => {
	// Tests run as root, where a 0500 directory is still writable: the denial is injected instead.
	const dir = await createTempDir(t);
	const root = join(dir, "pi-overflow");
	const fs = injectFaults({ open: (path) => (isTempName(path) ? "EACCES" : undefined) });
	const store = new OverflowStore({ root, fs, now: () => NOW });
	await assert.rejects(
		store.beginEntry(computeEntryId("s", "c")),
		(error: NodeJS.ErrnoException) => error.code === "EACCES",
	);
	await assertEmptyStore(root);
});

test("rejects with the mkdir error's code when the store directory cannot be created", async (t) => {
	const dir = await createTempDir(t);
	const root = join(dir, "my-pi", "pi-overflow");
	const store = new OverflowStore({ root, fs: injectFaults({ mkdir: () => "EACCES" }), now: () => NOW });
	await assert.rejects(
		store.beginEntry(computeEntryId("s", "c")),
		(error: NodeJS.ErrnoException) => error.code === "EACCES",
	);
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

// ---- ids ----

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
	await writeFile(
		join(store.root, "bbbbbbbbbbbb.json"),
		JSON.stringify({ ...buildMeta("bbbbbbbbbbbb", Buffer.from("")), totalBytes: -1 }),
	);
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

// ---- openText ----

test("opens a stored text: its bytes by position, its size and mtime from fstat, and its descriptor", async (t) => {
	const dir = await createTempDir(t);
	const store = new OverflowStore({ root: join(dir, "store"), now: () => NOW });
	const entry = await storeEntry(store, {
		toolCallId: "call-1",
		text: Buffer.from("héllo\nwörld\n".repeat(1000), "utf8"),
	});
	const text = await store.openText(entry.id);
	try {
		assert.equal(text.id, entry.id);
		assert.equal(text.path, store.textPath(entry.id));
		assert.equal(text.size, entry.bytes.length);
		assert.equal(text.mtimeMs, (await stat(text.path)).mtimeMs);
		assert.equal(fstatSync(text.fd).size, entry.bytes.length, "the descriptor is the opened file");
		const whole = Buffer.alloc(entry.bytes.length + 10);
		assert.equal(await text.read(whole, 0), entry.bytes.length, "a read stops at the size");
		assert.ok(whole.subarray(0, entry.bytes.length).equals(entry.bytes));
		const middle = Buffer.alloc(5);
		assert.equal(await text.read(middle, 7), 5);
		assert.equal(middle.toString("utf8"), entry.bytes.subarray(7, 12).toString("utf8"));
		assert.equal(await text.read(middle, entry.bytes.length), 0);
	} finally {
		await text.close();
	}
});

test("reads the text it opened even when the file is replaced or removed afterwards", async (t) => {
	const dir = await createTempDir(t);
	const store = new OverflowStore({ root: join(dir, "store"), now: () => NOW });
	const entry = await storeEntry(store, { toolCallId: "call-1", text: "the original\n" });
	const text = await store.openText(entry.id);
	try {
		await rm(text.path);
		await writeFile(text.path, "a replacement, longer than the original\n");
		const bytes = Buffer.alloc(100);
		assert.equal(await text.read(bytes, 0), entry.bytes.length);
		assert.equal(bytes.toString("utf8", 0, entry.bytes.length), "the original\n");
	} finally {
		await text.close();
	}
});

test("openText fails with ENOENT for a text that is not there, and EINVAL for a bad id", async (t) => {
	const dir = await createTempDir(t);
	const store = new OverflowStore({ root: join(dir, "store"), now: () => NOW });
	await assert.rejects(
		store.openText("0123456789ab"),
		(error: NodeJS.ErrnoException) => error.code === "ENOENT",
		"no store directory yet",
	);
	const entry = await storeEntry(store, { toolCallId: "call-1" });
	await rm(store.textPath(entry.id));
	await assert.rejects(
		store.openText(entry.id),
		(error: NodeJS.ErrnoException) => error.code === "ENOENT",
		"the text vanished",
	);
	for (const bad of ["../../etc/passwd", "0123456789AB", ""]) {
		await assert.rejects(store.openText(bad), (error: NodeJS.ErrnoException) => error.code === "EINVAL");
	}
});

// An open that blocked on the FIFO would never return: the test's timeout turns that into a failure.
test(
	"openText refuses a symlink, a FIFO or a directory in place of the text (EINVAL), without blocking or following it",
	{ timeout: 60_000 },
	async (t) => {
		const dir = await createTempDir(t);
		const store = new OverflowStore({ root: join(dir, "store"), now: () => NOW });
		await store.ensureRoot();
		const outside = join(dir, "outside.txt");
		await writeFile(outside, "not the store's\n");
		await symlink(outside, store.textPath("aaaaaaaaaaaa"));
		execFileSync("mkfifo", [store.textPath("bbbbbbbbbbbb")]);
		await mkdir(store.textPath("cccccccccccc"));
		for (const [id, what] of [
			["aaaaaaaaaaaa", /symbolic link/],
			["bbbbbbbbbbbb", /special file/],
			["cccccccccccc", /directory/],
		] as const) {
			await assert.rejects(store.openText(id), (error: NodeJS.ErrnoException) => {
				assert.equal(error.code, "EINVAL", id);
				assert.match(error.message, /not a regular file/);
				assert.match(error.message, what);
				return true;
			});
		}
	},
);

test("openText reads through the injected file system: a failing open or read reaches the caller with its code", async (t) => {
	const dir = await createTempDir(t);
	const root = join(dir, "store");
	const entry = await storeEntry(new OverflowStore({ root, now: () => NOW }), { toolCallId: "call-1" });
	const failingOpen = new OverflowStore({ root, fs: injectFaults({ openRead: () => "EIO" }), now: () => NOW });
	await assert.rejects(failingOpen.openText(entry.id), (error: NodeJS.ErrnoException) => error.code === "EIO");
	const failingRead = new OverflowStore({ root, fs: injectFaults({ read: () => "EIO" }), now: () => NOW });
	const text = await failingRead.openText(entry.id);
	try {
		await assert.rejects(text.read(Buffer.alloc(10), 0), (error: NodeJS.ErrnoException) => error.code === "EIO");
	} finally {
		await text.close();
	}
});
