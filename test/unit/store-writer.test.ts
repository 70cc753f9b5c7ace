// Tests of src/store/writer.ts, one entry's atomic write: stored byte for byte whatever the chunks,
// partial writes completed, and after a failure at any step (injected by errno code) nothing of the
// entry left behind — no partial, temp or unpaired file — while the error keeps its code; an
// entry is never replaced. Every test uses its own mkdtemp directory and an injected clock.

import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { test } from "node:test";

import { computeEntryId, NODE_STORE_FS, OverflowStore } from "../../src/store/index.js";
import {
	assertEmptyStore,
	assertEntryReadsBack,
	buildMeta,
	isTempName,
	listNames,
	NOW,
	storeEntry,
} from "../helpers/store-fixtures.js";
import { type Faults, injectFaults } from "../helpers/faulty-fs.js";
import { createTempDir } from "../helpers/tmp.js";

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
	{
		name: "EIO on fsync of the text",
		code: "EIO",
		createFaults: () => ({ sync: (path) => (isTempName(path) ? "EIO" : undefined) }),
	},
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
	for (const overrides of [
		{ storedBytes: 3 },
		{ storedLines: 3 },
		{ id: "0123456789ab" },
		{ source: "disk" as never },
		{ truncated: true },
	]) {
		const writer = await store.beginEntry(id);
		await writer.write(bytes);
		await assert.rejects(
			writer.commit(buildMeta(id, bytes, overrides)),
			(error: NodeJS.ErrnoException) => error.code === "EINVAL",
		);
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
	await committed.commit(
		buildMeta(computeEntryId("session-a", "call-3"), Buffer.from("x\n"), { toolCallId: "call-3" }),
	);
	await committed.abort();
	await assertEntryReadsBack(store, entry);
	assert.equal((await listNames(store.root)).length, 4);
});

test("never replaces an entry: a second commit under the same id fails with EEXIST and leaves the first intact", async (t) => {
	const dir = await createTempDir(t);
	for (const fs of [NODE_STORE_FS, injectFaults({ link: () => "EPERM" })]) {
		const store = new OverflowStore({
			root: join(dir, `store-${fs === NODE_STORE_FS ? "link" : "rename"}`),
			fs,
			now: () => NOW,
		});
		const first = await storeEntry(store, { toolCallId: "call-1", text: "old\n" });
		const writer = await store.beginEntry(first.id);
		const bytes = Buffer.from("new and longer\nsecond\n");
		await writer.write(bytes);
		await assert.rejects(
			writer.commit(buildMeta(first.id, bytes)),
			(error: NodeJS.ErrnoException) => error.code === "EEXIST",
		);
		await assertEntryReadsBack(store, first);
		assert.equal((await listNames(store.root)).length, 2);
	}
});
