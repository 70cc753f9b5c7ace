// The store directory as housekeeping and the quota see it: one listing, the store's own names
// sorted into temp files and entry halves, metadata read in bounded batches, files removed one by
// one. Invariants: the directory is never read through a symlink and never created just to be
// found empty; only regular files whose names match the store's patterns are ever looked at or
// removed, nothing recurses; a directory another user owns is neither listed nor cleaned; every
// problem is reported as a line in `errors`, never thrown.

import { describeError } from "../lines/text.js";
import { ENTRY_FILE_PATTERN, parseMetaText, TEMP_FILE_PATTERN } from "./entry.js";
import { readErrorCode, type StoreDirent, type StoreFs, type StoreStats } from "./fs.js";
import { isCommittingEntry } from "./writer.js";

/** A metadata file larger than this is not ours (ours are a few hundred bytes). */
export const DEFAULT_MAX_META_BYTES = 64 * 1024;
/** Metadata files read per readSmallTextFiles call (bounds memory for huge stores). */
export const DEFAULT_META_BATCH_FILES = 1024;
/** Parallel file-system calls during housekeeping (libuv runs 4 at a time; this keeps its queue full). */
export const DEFAULT_HOUSEKEEPING_CONCURRENCY = 64;

const HAS_TXT = 1;
const HAS_JSON = 2;

/** Where problems are reported. */
export interface ErrorLog {
	errors: string[];
}

export interface EntryPaths {
	id: string;
	txtPath: string;
	jsonPath: string;
}

/** What eviction needs to know of a complete entry. */
export interface KnownEntry {
	id: string;
	createdMs: number;
	/** .txt + .json. */
	bytes: number;
	/** undefined when the metadata is not readable (never the current session's). */
	sessionId: string | undefined;
}

export type LiveEntry = EntryPaths & KnownEntry;

/** The store's own names in a listing: temp files with their writer's pid, and which halves of each entry are there. */
export interface StoreNames {
	temps: { path: string; pid: number }[];
	/** id -> HAS_TXT | HAS_JSON (see isComplete). */
	halves: Map<string, number>;
}

/** Our temp files, and which halves of each entry are present; other names and non-regular files are left out. */
export function classifyStoreNames(dirents: readonly StoreDirent[], prefix: string): StoreNames {
	// readdir's types spare an lstat per file: symlinks, directories and sockets are never looked at again.
	const temps: { path: string; pid: number }[] = [];
	const halves = new Map<string, number>();
	for (const dirent of dirents) {
		if (!dirent.isFile()) continue;
		const name = dirent.name;
		if (name.endsWith(".tmp")) {
			const temp = TEMP_FILE_PATTERN.exec(name);
			if (temp !== null) temps.push({ path: prefix + name, pid: Number(temp[2]) });
			continue;
		}
		const entry = ENTRY_FILE_PATTERN.exec(name);
		if (entry === null) continue;
		halves.set(entry[1], (halves.get(entry[1]) ?? 0) | (entry[2] === "txt" ? HAS_TXT : HAS_JSON));
	}
	return { temps, halves };
}

/** True when both files of the entry are there. */
export function isComplete(has: number): boolean {
	return has === (HAS_TXT | HAS_JSON);
}

/** The one file of a half entry: its .txt or its .json. */
export function halfExtension(has: number): "txt" | "json" {
	return has === HAS_TXT ? "txt" : "json";
}

export async function runWithConcurrency<T>(
	items: readonly T[],
	limit: number,
	task: (item: T) => Promise<void>,
): Promise<void> {
	let next = 0;
	const workers = Array.from({ length: Math.min(limit, items.length) }, async () => {
		while (next < items.length) {
			const item = items[next++];
			await task(item);
		}
	});
	await Promise.all(workers);
}

/**
 * Why a store directory is not ours to read or clean: another user's (a planted store, even one
 * open to all), or undefined where it is the user's own or the platform has no uids.
 */
function describeForeignOwner(root: string, stats: StoreStats): string | undefined {
	const uid = typeof process.getuid === "function" ? process.getuid() : undefined;
	if (uid === undefined || stats.uid === uid) return undefined;
	return `store directory ${root} belongs to another user (uid ${stats.uid})`;
}

/**
 * Why the store directory must be neither written, read nor cleaned, with the code a refused write
 * fails with, or undefined: a symlink, not a directory, or another user's.
 */
export function refuseStoreRoot(root: string, stats: StoreStats): { code: string; message: string } | undefined {
	if (stats.isSymbolicLink())
		return { code: "ELOOP", message: `store directory ${root} is a symbolic link; refusing to follow it` };
	if (!stats.isDirectory())
		return { code: "ENOTDIR", message: `store directory ${root} exists but is not a directory` };
	const foreign = describeForeignOwner(root, stats);
	return foreign === undefined ? undefined : { code: "EPERM", message: foreign };
}

/** The store directory's files, for the tasks that list, read and remove them. */
export class StoreDirectory {
	/** `root` + separator: every store path is this plus a name matched by the store's patterns. */
	constructor(
		readonly root: string,
		readonly prefix: string,
		private readonly fs: StoreFs,
	) {}

	pathsOf(id: string): EntryPaths {
		return { id, txtPath: `${this.prefix}${id}.txt`, jsonPath: `${this.prefix}${id}.json` };
	}

	/** True while this process commits the entry (its quota pass included). */
	isCommitting(id: string): boolean {
		return isCommittingEntry(this.prefix + id);
	}

	/**
	 * The directory's entries, never read through a symlink: none when it does not exist (it is
	 * not created just to find it empty); undefined (reported) when it cannot be listed.
	 */
	async list(task: string, log: ErrorLog): Promise<StoreDirent[] | undefined> {
		let rootStats: StoreStats;
		try {
			rootStats = await this.fs.lstat(this.root);
		} catch (error) {
			if (readErrorCode(error) === "ENOENT") return [];
			throw error;
		}
		const refused = refuseStoreRoot(this.root, rootStats);
		if (refused !== undefined) {
			log.errors.push(`${refused.message}; ${task} skipped`);
			return undefined;
		}
		try {
			return await this.fs.readdir(this.root);
		} catch (error) {
			if (readErrorCode(error) === "ENOENT") return [];
			log.errors.push(`cannot list ${this.root}: ${describeError(error)}`);
			return undefined;
		}
	}

	/**
	 * Reads complete entries' metadata in batches (bounded memory) and hands each valid one on with
	 * its size (.txt + .json). Returns the entries whose metadata is not ours (invalid or too large).
	 */
	async readEntryMetas(
		complete: readonly EntryPaths[],
		log: ErrorLog,
		onEntry: (entry: EntryPaths, known: KnownEntry) => void,
	): Promise<EntryPaths[]> {
		const invalid: EntryPaths[] = [];
		for (let start = 0; start < complete.length; start += DEFAULT_META_BATCH_FILES) {
			const batch = complete.slice(start, start + DEFAULT_META_BATCH_FILES);
			const contents = await this.fs.readSmallTextFiles(
				batch.map((entry) => entry.jsonPath),
				DEFAULT_MAX_META_BYTES,
			);
			batch.forEach((entry, index) => {
				const content = contents[index];
				if (typeof content !== "string") {
					const code = readErrorCode(content);
					// ENOENT: a concurrent housekeeper removed it. EFBIG: not ours, judged by the caller. Else: leave it alone.
					if (code === "EFBIG") invalid.push(entry);
					else if (code !== "ENOENT") log.errors.push(`cannot read ${entry.jsonPath}: ${describeError(content)}`);
					return;
				}
				const meta = parseMetaText(content, entry.id);
				if (meta === undefined) {
					invalid.push(entry);
					return;
				}
				onEntry(entry, {
					id: entry.id,
					createdMs: Date.parse(meta.createdAt),
					// The text's size is its storedBytes: commit() refuses metadata that says otherwise.
					bytes: meta.storedBytes + Buffer.byteLength(content, "utf8"),
					sessionId: meta.sessionId,
				});
			});
		}
		return invalid;
	}

	/** lstat that answers only for regular files; ENOENT (a concurrent housekeeper) is not an error. */
	async lstatRegularFile(path: string, log: ErrorLog): Promise<StoreStats | undefined> {
		try {
			const stats = await this.fs.lstat(path);
			return stats.isFile() ? stats : undefined;
		} catch (error) {
			if (readErrorCode(error) !== "ENOENT") log.errors.push(`cannot stat ${path}: ${describeError(error)}`);
			return undefined;
		}
	}

	/** True when this call removed the file (ENOENT: someone else did, not counted, not an error). */
	async removeFile(path: string, log: ErrorLog): Promise<boolean> {
		try {
			await this.fs.unlink(path);
			return true;
		} catch (error) {
			if (readErrorCode(error) !== "ENOENT") log.errors.push(`cannot remove ${path}: ${describeError(error)}`);
			return false;
		}
	}

	/**
	 * The .json first, so readers see "unknown" before the text disappears. Counted by whoever
	 * removed the .json, so two housekeepers racing over one entry count it once between them.
	 */
	async removeEntry(entry: EntryPaths, log: ErrorLog): Promise<boolean> {
		const removedJson = await this.removeFile(entry.jsonPath, log);
		await this.removeFile(entry.txtPath, log);
		return removedJson;
	}
}
