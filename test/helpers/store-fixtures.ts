// Shared by the store's tests: a fixed clock, entries written through the store, a StoreFs that
// counts its calls, and assertions that read stored files back byte for byte and
// list the directory to prove nothing was left behind.

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readdir, readFile, utimes } from "node:fs/promises";

import {
	computeEntryId,
	countTextLines,
	type EntryMeta,
	NODE_STORE_FS,
	type OverflowStore,
	type StoreFs,
} from "../../src/store/index.js";

export const NOW = Date.parse("2025-06-01T12:00:00.000Z");
export const MINUTE_MS = 60 * 1000;
export const HOUR_MS = 60 * MINUTE_MS;
export const DAY_MS = 24 * HOUR_MS;
export const ENTRY_NAME = /^[0-9a-f]{12}\.(txt|json)$/;
export const GENEROUS = { retentionMs: 7 * DAY_MS, maxStoreBytes: 512 * 1024 * 1024 };

export function isTempName(path: string): boolean {
	return /(^|\/)\.[0-9a-f]{12}\.\d+\.[0-9a-f]+\.tmp$/.test(path);
}

export function buildMeta(id: string, bytes: Uint8Array, overrides: Partial<EntryMeta> = {}): EntryMeta {
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

export interface StoredEntry {
	id: string;
	bytes: Buffer;
}

/** Writes one entry through the store, in chunks of `chunkSize`. */
export async function storeEntry(
	store: OverflowStore,
	options: { sessionId?: string; toolCallId: string; text?: string | Buffer; createdMs?: number; chunkSize?: number },
): Promise<StoredEntry> {
	const sessionId = options.sessionId ?? "session-a";
	const id = computeEntryId(sessionId, options.toolCallId);
	const bytes = Buffer.isBuffer(options.text)
		? options.text
		: Buffer.from(options.text ?? `output of ${options.toolCallId}\n`, "utf8");
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

export async function listNames(dir: string): Promise<string[]> {
	return (await readdir(dir)).sort();
}

export async function assertEmptyStore(root: string): Promise<void> {
	assert.deepEqual(await listNames(root), [], "no entry, partial or temp file may be left behind");
}

export async function assertEntryReadsBack(store: OverflowStore, entry: StoredEntry): Promise<void> {
	const stored = await readFile(store.textPath(entry.id));
	assert.ok(stored.equals(entry.bytes), "the stored text is byte-identical to what was written");
	const meta = await store.readMeta(entry.id);
	assert.ok(meta !== undefined, "the entry has readable metadata");
	assert.equal(meta.totalBytes, entry.bytes.length);
}

export function modeOf(stats: { mode: number }): number {
	return stats.mode & 0o777;
}

export async function withUmask<T>(mask: number, run: () => Promise<T>): Promise<T> {
	const previous = process.umask(mask);
	try {
		return await run();
	} finally {
		process.umask(previous);
	}
}

export function findDeadPid(): number {
	const child = spawnSync(process.execPath, ["-e", ""]);
	assert.ok(typeof child.pid === "number" && child.pid > 0);
	return child.pid;
}

export async function setMtime(path: string, ms: number): Promise<void> {
	await utimes(path, new Date(ms), new Date(ms));
}

/** NODE_STORE_FS, counting the calls of each method (and the files readSmallTextFiles is asked for). */
export function countFsCalls(): { fs: StoreFs; calls: Record<string, number> } {
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
		readSmallTextFiles: (paths, maxBytes) => (
			count("readSmallTextFiles"),
			count("smallFilesRead", paths.length),
			base.readSmallTextFiles(paths, maxBytes)
		),
	};
	return { fs, calls };
}
