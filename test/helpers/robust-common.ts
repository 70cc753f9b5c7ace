// Shared pieces of the robustness suites (test/unit/robust-*.test.ts, and test/e2e/robust-*.test.ts
// for those that start child processes) and their child processes.
// Invariant: everything here is deterministic — an entry's content and size are derived from its
// id alone, so a parent process can verify byte for byte what a child (possibly killed) wrote.

import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { lstatSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { type CommitResult, countTextLines, type EntryMeta, type OverflowStore } from "../../src/store/index.js";

/** `npm run test:stress` sets STRESS=1: heavier counts, same assertions. */
export const STRESS = process.env.STRESS === "1";

/** The CI count, or the stress count when STRESS=1. */
export function pickCount(ci: number, stress: number): number {
	return STRESS ? stress : ci;
}

export const HELPERS_DIR = fileURLToPath(new URL(".", import.meta.url));

/** How entry sizes are drawn: `largeShare` of entries between largeMin and largeMax bytes, the rest between smallMin and smallMax. */
export interface SizeProfile {
	smallMin: number;
	smallMax: number;
	largeMin: number;
	largeMax: number;
	largeShare: number;
}

/** Crash runs: half the entries several MB, so a kill often lands inside a write. */
export const CRASH_PROFILE: SizeProfile = {
	smallMin: 0,
	smallMax: 200 * 1024,
	largeMin: 1024 * 1024,
	largeMax: 6 * 1024 * 1024,
	largeShare: 0.5,
};
/** Concurrency runs: 50–500 KB entries against a quota of a few MB. */
export const CONCURRENCY_PROFILE: SizeProfile = {
	smallMin: 50 * 1000,
	smallMax: 500 * 1000,
	largeMin: 50 * 1000,
	largeMax: 500 * 1000,
	largeShare: 0,
};

// 63 printable ASCII characters and a newline: lines of ~64 bytes on average.
const ALPHABET = Buffer.from("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 -:\n", "latin1");

function seedFrom(id: string, salt: string): number {
	const digest = createHash("sha1").update(`${salt}\0${id}`).digest();
	return digest.readUInt32LE(0) || 0x9e3779b9;
}

/** The size of the entry with this id under the profile. */
export function entrySizeFor(id: string, profile: SizeProfile): number {
	const seed = seedFrom(id, "size");
	const large = (seed % 1000) / 1000 < profile.largeShare;
	const [min, max] = large ? [profile.largeMin, profile.largeMax] : [profile.smallMin, profile.smallMax];
	return min + (Math.floor(seed / 1000) % (max - min + 1));
}

/** The content of the entry with this id: `size` pseudo-random bytes (xorshift32 seeded by the id). */
export function generateEntryContent(id: string, size: number): Buffer {
	const out = Buffer.allocUnsafe(size);
	let state = seedFrom(id, "content");
	let index = 0;
	while (index < size) {
		state ^= state << 13;
		state ^= state >>> 17;
		state ^= state << 5;
		let word = state >>> 0;
		for (let k = 0; k < 5 && index < size; k++) {
			out[index++] = ALPHABET[word & 63];
			word >>>= 6;
		}
	}
	return out;
}

/** Metadata that describes `content` exactly (commit() refuses anything else). */
export function buildEntryMeta(
	id: string,
	content: Uint8Array,
	sessionId: string,
	toolCallId: string,
	createdMs: number,
): EntryMeta {
	return {
		id,
		sessionId,
		toolCallId,
		toolName: "bash",
		createdAt: new Date(createdMs).toISOString(),
		totalLines: countTextLines(content),
		totalBytes: content.length,
		storedLines: countTextLines(content),
		storedBytes: content.length,
		truncated: false,
		source: "current",
	};
}

/** Writes `content` as one entry, in chunks of `chunkBytes`; returns what the commit did for the quota. */
export async function writeEntry(
	store: OverflowStore,
	meta: EntryMeta,
	content: Buffer,
	chunkBytes: number,
): Promise<CommitResult> {
	const writer = await store.beginEntry(meta.id);
	try {
		for (let offset = 0; offset < content.length; offset += chunkBytes)
			await writer.write(content.subarray(offset, offset + chunkBytes));
		return await writer.commit(meta);
	} catch (error) {
		await writer.abort();
		throw error;
	}
}

export const TEMP_NAME = /^\.([0-9a-f]{12})\.(\d+)\.([0-9a-f]+)\.tmp$/;
export const ENTRY_NAME = /^([0-9a-f]{12})\.(txt|json)$/;

/** What a store directory holds, by kind of name. */
export interface StoreListing {
	/** Ids with both files. */
	complete: string[];
	/** Ids with only a .txt. */
	textOnly: string[];
	/** Ids with only a .json. */
	metaOnly: string[];
	/** Temp files: name and writer pid. */
	temps: { name: string; pid: number }[];
	/** Anything else. */
	other: string[];
}

export function listStore(root: string): StoreListing {
	const listing: StoreListing = { complete: [], textOnly: [], metaOnly: [], temps: [], other: [] };
	let names: string[];
	try {
		names = readdirSync(root);
	} catch (error) {
		if ((error as { code?: string }).code === "ENOENT") return listing;
		throw error;
	}
	const halves = new Map<string, Set<string>>();
	for (const name of names.sort()) {
		const temp = TEMP_NAME.exec(name);
		if (temp) {
			listing.temps.push({ name, pid: Number(temp[2]) });
			continue;
		}
		const entry = ENTRY_NAME.exec(name);
		if (!entry) {
			listing.other.push(name);
			continue;
		}
		const kinds = halves.get(entry[1]) ?? new Set<string>();
		kinds.add(entry[2]);
		halves.set(entry[1], kinds);
	}
	for (const [id, kinds] of halves) {
		if (kinds.size === 2) listing.complete.push(id);
		else if (kinds.has("txt")) listing.textOnly.push(id);
		else listing.metaOnly.push(id);
	}
	return listing;
}

/** Bytes (.txt + .json) of the given complete entries. */
export function sumEntryBytes(root: string, ids: readonly string[]): number {
	return ids.reduce(
		(sum, id) => sum + lstatSync(join(root, `${id}.txt`)).size + lstatSync(join(root, `${id}.json`)).size,
		0,
	);
}

/** Bytes of the complete entries of a store others are writing and evicting: measured again when one vanishes meanwhile. */
export function measureLiveStore(root: string): number {
	for (;;) {
		try {
			return summarizeStore(root).bytes;
		} catch (error) {
			if ((error as { code?: string }).code !== "ENOENT") throw error;
		}
	}
}

/** A quiet store's complete entries, their bytes, and every name that is not part of one. */
export function summarizeStore(root: string): { ids: Set<string>; bytes: number; stray: string[] } {
	const listing = listStore(root);
	const stray = [...listing.textOnly, ...listing.metaOnly, ...listing.temps.map((temp) => temp.name), ...listing.other];
	return { ids: new Set(listing.complete), bytes: sumEntryBytes(root, listing.complete), stray };
}

/** Asserts the entry's metadata is valid and its text is exactly the content derived from its id. */
export async function assertEntryVerifies(store: OverflowStore, id: string, profile: SizeProfile): Promise<void> {
	const meta = await store.readMeta(id);
	assert.ok(meta, `entry ${id} has readable metadata`);
	const expected = describeExpected(id, profile);
	assert.equal(meta.totalBytes, expected.size, `entry ${id}: metadata totalBytes`);
	assert.equal(meta.totalLines, expected.lines, `entry ${id}: metadata totalLines`);
	assertTextVerifies(store.root, id, profile);
}

// sha1 of each id's expected content: an entry re-verified after every kill is generated once.
const expectedDigests = new Map<string, { size: number; lines: number; digest: string }>();

function describeExpected(id: string, profile: SizeProfile): { size: number; lines: number; digest: string } {
	const key = `${id}/${profile.smallMin}/${profile.largeMax}`;
	let known = expectedDigests.get(key);
	if (known === undefined) {
		const expected = generateEntryContent(id, entrySizeFor(id, profile));
		known = {
			size: expected.length,
			lines: countTextLines(expected),
			digest: createHash("sha1").update(expected).digest("hex"),
		};
		expectedDigests.set(key, known);
	}
	return known;
}

/** Asserts `<id>.txt` is exactly the content derived from its id (complete, not a prefix). */
export function assertTextVerifies(root: string, id: string, profile: SizeProfile): void {
	const expected = describeExpected(id, profile);
	const stored = readFileSync(join(root, `${id}.txt`));
	assert.equal(stored.length, expected.size, `entry ${id}: stored ${stored.length} of ${expected.size} bytes`);
	assert.equal(
		createHash("sha1").update(stored).digest("hex"),
		expected.digest,
		`entry ${id}: stored bytes differ from what was written`,
	);
}

/** The lines a view shows, by number (`   123: text`). */
export function parseShownLines(view: string): Map<number, string> {
	const shown = new Map<number, string>();
	for (const line of view.split("\n")) {
		const match = /^\s*(\d+): (.*)$/s.exec(line);
		if (match) shown.set(Number(match[1]), match[2]);
	}
	return shown;
}

/** Lines as an editor counts them: split on \n, a final newline does not start another line. */
export function countEditorLines(bytes: Uint8Array): number {
	if (bytes.length === 0) return 0;
	let lines = 1;
	for (let index = 0; index < bytes.length; index++) if (bytes[index] === 0x0a) lines++;
	return bytes[bytes.length - 1] === 0x0a ? lines - 1 : lines;
}

/** Median and maximum of a list of numbers. */
export function summarize(values: readonly number[]): { median: number; max: number } {
	if (values.length === 0) return { median: 0, max: 0 };
	const sorted = [...values].sort((a, b) => a - b);
	return { median: sorted[Math.floor(sorted.length / 2)], max: sorted[sorted.length - 1] };
}
