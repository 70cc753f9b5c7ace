// Tests of issue 13's bound-stage overlaps (task pipe4): the stored copy is fsynced while it is
// written, and an early fsync's failure fails the entry (a later fsync may not report the lost
// write again); the view is composed while the commit runs, yet the result never comes before
// the commit, and a result sure to be bounded that begins its entry early leaves nothing behind
// when the commit fails.

import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { boundToolResult, type ToolResultInput } from "../../src/bound/bound.js";
import { createDefaultConfig } from "../../src/config/config.js";
import { createStash } from "../../src/intake/stash.js";
import {
	computeEntryId,
	DEFAULT_EARLY_SYNC_BYTES,
	NODE_STORE_FS,
	OverflowStore,
	type StoreFs,
} from "../../src/store/index.js";
import { numberedLog } from "../fixtures/ext/tools.js";
import { injectFaults } from "../helpers/faulty-fs.js";
import {
	assertEmptyStore,
	assertEntryReadsBack,
	buildMeta,
	isTempName,
	NOW,
	storeEntry,
} from "../helpers/store-fixtures.js";
import { createTempDir } from "../helpers/tmp.js";

/** A text of several early-fsync intervals, in 1 MiB chunks as the bound stage writes it. */
function buildLongText(): Buffer {
	return Buffer.from(
		"a line of the stored copy, long enough to fill megabytes\n".repeat(Math.ceil((3 * DEFAULT_EARLY_SYNC_BYTES) / 57)),
	);
}

async function writeInChunks(writer: { write(chunk: Uint8Array): Promise<void> }, bytes: Buffer): Promise<void> {
	for (let at = 0; at < bytes.length; at += 1024 * 1024) await writer.write(bytes.subarray(at, at + 1024 * 1024));
}

test("a long stored copy is fsynced while it is written, and still once more before it is placed", async (t) => {
	const dir = await createTempDir(t);
	const synced: string[] = [];
	const fs = injectFaults({ sync: (path) => (synced.push(path), undefined) });
	const store = new OverflowStore({ root: join(dir, "store"), fs, now: () => NOW });
	const text = buildLongText();
	const entry = await storeEntry(store, { toolCallId: "call-long", text, chunkSize: 1024 * 1024 });
	await assertEntryReadsBack(store, entry);
	const textSyncs = synced.filter((path) => isTempName(path)).length;
	// The metadata's one fsync, the text's last one, and at least one while it was written.
	assert.ok(textSyncs >= 3, `${textSyncs} fsyncs of temp files`);
});

test("an early fsync's failure fails the entry even when the last fsync succeeds, and leaves nothing behind", async (t) => {
	const dir = await createTempDir(t);
	const root = join(dir, "store");
	let syncs = 0;
	// Only the first fsync fails: the one started while the text is written.
	const fs = injectFaults({ sync: (path) => (isTempName(path) && syncs++ === 0 ? "EIO" : undefined) });
	const store = new OverflowStore({ root, fs, now: () => NOW });
	const id = computeEntryId("session-a", "call-early");
	const text = buildLongText();
	const writer = await store.beginEntry(id);
	let caught: NodeJS.ErrnoException | undefined;
	try {
		await writeInChunks(writer, text);
		await writer.commit(buildMeta(id, text));
	} catch (error) {
		caught = error as NodeJS.ErrnoException;
	}
	assert.equal(syncs > 0, true, "an fsync ran while the text was written");
	assert.equal(caught?.code, "EIO", "the early fsync's error, with its code");
	await writer.abort();
	await assertEmptyStore(root);
	assert.equal(await store.readMeta(id), undefined);
});

/** A file system whose link(2) waits until `open()` is called: the commit's last steps held back. */
function holdLinks(): { fs: StoreFs; open: () => void; linked: () => number; waiting: () => number } {
	let release: () => void = () => {};
	const gate = new Promise<void>((resolve) => (release = resolve));
	let links = 0;
	let waiting = 0;
	const fs: StoreFs = {
		...NODE_STORE_FS,
		link: async (from, to) => {
			waiting++;
			await gate;
			await NODE_STORE_FS.link(from, to);
			links++;
		},
	};
	return { fs, open: () => release(), linked: () => links, waiting: () => waiting };
}

/** Waits (polling, no fixed sleep) until `done` holds; a minute without it fails, saying what it waited for. */
async function until(done: () => boolean, what: string): Promise<void> {
	const limitS = 60;
	for (const start = Date.now(); !done(); await new Promise((resolve) => setTimeout(resolve, 2)))
		if (Date.now() - start > limitS * 1000) assert.fail(`waiting for ${what} timed out after ${limitS} s`);
}

function textEvent(text: string, overrides: Partial<ToolResultInput> = {}): ToolResultInput {
	return {
		toolName: "bash",
		toolCallId: "call-1",
		content: [{ type: "text", text }],
		details: undefined,
		isError: false,
		...overrides,
	};
}

test("the bounded view is ready before the commit ends, but the result waits for the commit", async (t) => {
	const root = join(await createTempDir(t), "store");
	const held = holdLinks();
	const config = createDefaultConfig();
	const big = numberedLog(20000, { 15000: "ERROR: the one line that matters" });
	let settled = false;
	const bounding = boundToolResult(textEvent(big), {
		config,
		store: new OverflowStore({ root, fs: held.fs }),
		sessionId: "s",
		stash: createStash(),
	}).finally(() => {
		settled = true;
	});
	// Everything but the links runs; the result must not come while the entry is not in place.
	await until(() => held.waiting() > 0, "the first link");
	assert.equal(settled, false, "no result before the stored copy is committed");
	assert.equal(held.linked(), 0);
	held.open();
	const patch = await bounding;
	assert.equal(held.linked(), 2, "the .txt and the .json placed");
	const id = (patch?.details as { overflow: { id: string } }).overflow.id;
	assert.match(String(patch?.content.find((part) => part.type === "text")?.text), new RegExp(`id=${id}`));
	assert.equal(readFileSync(join(root, `${id}.txt`), "utf8"), big);
});

test("a spill-file result whose commit fails is composed again without the id, and leaves no file", async (t) => {
	const dir = await createTempDir(t);
	const root = join(dir, "store");
	const spill = join(dir, "bash-output.log");
	const full = numberedLog(40000, { 12000: "ERROR: the one line that matters" });
	writeFileSync(spill, full);
	const shown = full.slice(full.length - 30_000);
	const kept = shown.slice(shown.indexOf("\n") + 1);
	const fs = injectFaults({ link: (_from, to) => (to.endsWith(".json") ? "EIO" : undefined) });
	const config = createDefaultConfig();
	const patch = await boundToolResult(textEvent(kept, { details: { fullOutputPath: spill } }), {
		config,
		store: new OverflowStore({ root, fs }),
		sessionId: "s",
		stash: createStash(),
	});
	const view = String(patch?.content.find((part) => part.type === "text")?.text);
	assert.match(view, /full output could not be stored \(EIO/);
	assert.doesNotMatch(view, /id=[0-9a-f]{12}/);
	assert.match(view, /12000: ERROR: the one line that matters/);
	assert.equal((patch?.details as { overflow: { id?: string } }).overflow.id, undefined);
	if (existsSync(root)) assert.deepEqual(readdirSync(root), [], "no partial or temp file");
});

test("a sealed entry's last fsync runs before commit; a write after seal fails, a failed last fsync fails the commit", async (t) => {
	const dir = await createTempDir(t);
	const root = join(dir, "store");
	const synced: string[] = [];
	let failLast = false;
	const fs = injectFaults({ sync: (path) => (synced.push(path), failLast && isTempName(path) ? "EIO" : undefined) });
	const store = new OverflowStore({ root, fs, now: () => NOW });
	const text = Buffer.from("one\ntwo\n");
	const id = computeEntryId("session-a", "call-sealed");
	const writer = await store.beginEntry(id);
	await writer.write(text);
	writer.seal();
	await assert.rejects(writer.write(Buffer.from("three\n")), (error: NodeJS.ErrnoException) => error.code === "EBADF");
	// The text's fsync is under way before commit is called.
	await until(() => synced.length > 0, "the text's fsync");
	assert.equal(synced.length, 1);
	await writer.commit(buildMeta(id, text));
	assert.equal(synced.length, 2, "the text's fsync once, the metadata's once");
	await assertEntryReadsBack(store, { id, bytes: text });

	failLast = true;
	const failedId = computeEntryId("session-a", "call-sealed-eio");
	const failing = await store.beginEntry(failedId);
	await failing.write(text);
	failing.seal();
	await assert.rejects(
		failing.commit(buildMeta(failedId, text)),
		(error: NodeJS.ErrnoException) => error.code === "EIO",
	);
	await failing.abort();
	assert.equal(await store.readMeta(failedId), undefined);
	assert.deepEqual(readdirSync(root).sort(), [`${id}.json`, `${id}.txt`]);
});
