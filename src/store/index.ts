// The private on-disk store, <root>/<id>.txt (the stored original) + <id>.json (its metadata), and
// the one way in and out of it. Invariants: the directory is 0700 and never reached through a
// symlink; an id shown once never answers with another result's content (allocateEntryId); every
// read of a stored text goes through openText (O_NOFOLLOW, fstat, the injected StoreFs); writes are
// atomic (writer.ts), housekeeping never throws, and with a quota a commit resolves only once the
// store, as this process knows it, is back within it (quota.ts).

import { dirname, resolve, sep } from "node:path";
import type { ByteSource } from "../io/source.js";
import { describeError } from "../lines/text.js";
import {
	classifyStoreNames,
	DEFAULT_MAX_META_BYTES,
	refuseStoreRoot,
	isComplete,
	type KnownEntry,
	StoreDirectory,
} from "./directory.js";
import {
	assertEntryId,
	computeEntryId,
	findIssuedIds,
	isEntryId,
	MAX_ID_ATTEMPTS,
	parseMetaText,
	rememberIssuedId,
	type EntryMeta,
} from "./entry.js";
import {
	createStoreError,
	NODE_STORE_FS,
	readErrorCode,
	toStoreError,
	type StoreFs,
	type StoreReadHandle,
	type StoreStats,
} from "./fs.js";
import { runHousekeeping, type HousekeepingOptions, type HousekeepingResult } from "./housekeeping.js";
import { StoreQuota } from "./quota.js";
import { type CommitResult, type EntryWriter, TempEntryWriter } from "./writer.js";

export { computeEntryId, countTextLines, isEntryId, parseEntryMeta, resolveStoreRoot } from "./entry.js";
export type { EntryGap, EntryMeta, EntrySource, GapSignal, RunCounts, RunLine, RunRecord } from "./entry.js";
export { NODE_STORE_FS } from "./fs.js";
export type { StoreDirent, StoreError, StoreFileHandle, StoreFs, StoreReadHandle, StoreStats } from "./fs.js";
export { DEFAULT_ORPHAN_AGE_MS, DEFAULT_STALE_TEMP_MS } from "./housekeeping.js";
export type { HousekeepingOptions, HousekeepingResult } from "./housekeeping.js";
export { DEFAULT_QUOTA_LOW_WATER_RATIO } from "./quota.js";
export { DEFAULT_EARLY_SYNC_BYTES, DEFAULT_FILE_MODE } from "./writer.js";
export type { CommitResult, EntryWriter } from "./writer.js";
export type { KnownEntry } from "./directory.js";

/** Mode of the store directory (and of `my-pi/` when the store creates it). */
export const DEFAULT_DIR_MODE = 0o700;

export interface StoreOptions {
	/** The store directory; use resolveStoreRoot(agentDir). */
	root: string;
	/** File system; default NODE_STORE_FS. */
	fs?: StoreFs;
	/** Clock in ms since the epoch; default Date.now. */
	now?: () => number;
	/**
	 * Quota in bytes (.txt + .json of every entry), enforced by every commit: default none (only
	 * housekeeping's). The committed entry's session is the current one for eviction order.
	 */
	maxStoreBytes?: number;
}

/**
 * A stored text opened for reading: the bytes every reader of `<id>.txt` uses (the lines answer and
 * its line index, the overview, the search). The caller closes it.
 */
export interface StoredText extends ByteSource {
	readonly id: string;
	/** Where it was opened: names it in caches (with size and mtimeMs); never opened again by path. */
	readonly path: string;
	/** The open descriptor, for the search worker (a thread of this process reading it with pread); valid until close(). */
	readonly fd: number;
	/** Bytes, as fstat said when it was opened (a stored text never changes); read() stops there. */
	readonly size: number;
	readonly mtimeMs: number;
}

export class OverflowStore {
	/** Absolute, normalised. */
	readonly root: string;
	/** root + separator: every store path is this plus a name matched by the store's patterns. */
	private readonly prefix: string;
	private readonly fs: StoreFs;
	private readonly now: () => number;
	private readonly dir: StoreDirectory;
	/** The quota at commit time; none without StoreOptions.maxStoreBytes. */
	private readonly quota: StoreQuota | undefined;
	/** The housekeeping under way: a first commit waits for its scan instead of scanning too. */
	private housekeeping: Promise<void> | undefined;

	constructor(options: StoreOptions) {
		if (typeof options?.root !== "string" || options.root.length === 0) {
			throw createStoreError("EINVAL", `store root must be a non-empty path, got ${JSON.stringify(options?.root)}`);
		}
		const maxStoreBytes = options.maxStoreBytes;
		if (
			maxStoreBytes !== undefined &&
			!(typeof maxStoreBytes === "number" && Number.isFinite(maxStoreBytes) && maxStoreBytes >= 0)
		) {
			throw createStoreError(
				"EINVAL",
				`maxStoreBytes must be a non-negative number of bytes, got ${String(maxStoreBytes)}`,
			);
		}
		this.root = resolve(options.root);
		this.prefix = this.root.endsWith(sep) ? this.root : this.root + sep;
		this.fs = options.fs ?? NODE_STORE_FS;
		this.now = options.now ?? Date.now;
		this.dir = new StoreDirectory(this.root, this.prefix, this.fs);
		this.quota =
			maxStoreBytes === undefined ? undefined : new StoreQuota(this.dir, maxStoreBytes, () => this.housekeeping);
	}

	/** Absolute path of <id>.txt; throws (code EINVAL) on anything but a valid id. */
	textPath(id: string): string {
		assertEntryId(id);
		return `${this.prefix}${id}.txt`;
	}

	/** Absolute path of <id>.json; throws (code EINVAL) on anything but a valid id. */
	metaPath(id: string): string {
		assertEntryId(id);
		return `${this.prefix}${id}.json`;
	}

	/**
	 * Creates the store directory (0700, `my-pi/` too when created here) or validates the existing
	 * one: a symlink (ELOOP), a non-directory (ENOTDIR) or another user's directory (EPERM) is
	 * refused; a mode wider than 0700 is tightened. Runs before every entry: once the directory
	 * exists it costs one lstat, and a directory swapped for a symlink later is still refused.
	 */
	async ensureRoot(): Promise<void> {
		const root = this.root;
		let stats = await this.lstatOrUndefined(root);
		let created = false;
		if (stats === undefined) {
			const parent = dirname(root);
			if (parent !== root && (await this.lstatOrUndefined(parent)) === undefined) {
				const firstCreated = await this.fs.mkdir(parent, { recursive: true, mode: DEFAULT_DIR_MODE });
				// mkdir's mode is filtered by the umask: make every directory created here exactly 0700.
				for (const dir of listCreatedDirectories(firstCreated, parent)) await this.fs.chmod(dir, DEFAULT_DIR_MODE);
			}
			try {
				await this.fs.mkdir(root, { mode: DEFAULT_DIR_MODE });
				created = true;
			} catch (error) {
				if (readErrorCode(error) !== "EEXIST") throw toStoreError(error); // EEXIST: a concurrent process won
			}
			stats = await this.fs.lstat(root);
		}
		const refused = refuseStoreRoot(root, stats);
		if (refused !== undefined) throw createStoreError(refused.code, refused.message);
		if (created || (stats.mode & 0o077) !== 0) await this.fs.chmod(root, DEFAULT_DIR_MODE);
	}

	/** Starts a new entry: a 0600 temp file in the (validated) store directory. */
	async beginEntry(id: string): Promise<EntryWriter> {
		assertEntryId(id);
		await this.ensureRoot();
		const writer = new TempEntryWriter(this.fs, this.prefix, id, (meta, bytes) => this.keepWithinQuota(meta, bytes));
		try {
			await writer.open();
		} catch (error) {
			// The directory vanished after it was validated (another process, a user's rm -r): once more.
			if (readErrorCode(error) !== "ENOENT") throw toStoreError(error);
			await this.ensureRoot();
			await writer.open().catch((retryError: unknown) => {
				throw toStoreError(retryError);
			});
		}
		return writer;
	}

	/**
	 * The id for a new entry of this tool call: computeEntryId's first attempt whose id this process
	 * never issued (nor saw in a session: rememberEntryIds) and that names no file in the store, so an
	 * id shown once never comes to answer with another result's content, even after its entry expired.
	 */
	async allocateEntryId(sessionId: string, toolCallId: string): Promise<string> {
		const issued = findIssuedIds();
		for (let attempt = 0; attempt < MAX_ID_ATTEMPTS; attempt++) {
			const id = computeEntryId(sessionId, toolCallId, attempt);
			if (issued.has(id)) continue;
			// Reserved before the disk is asked, so a parallel result with the same toolCallId moves on.
			rememberIssuedId(issued, id);
			if (await this.namesNoFile(id)) return id;
		}
		throw createStoreError(
			"EEXIST",
			`no free entry id for tool call ${JSON.stringify(toolCallId).slice(0, 60)} after ${MAX_ID_ATTEMPTS} attempts`,
		);
	}

	/** Ids a session already showed (a resumed session's results): never issued again. */
	rememberEntryIds(ids: Iterable<string>): void {
		const issued = findIssuedIds();
		for (const id of ids) if (isEntryId(id)) rememberIssuedId(issued, id);
	}

	/**
	 * Why the store must not be read or cleaned (one short line), or undefined: the directory is a
	 * symlink, not a directory, or another user's (ensureRoot refuses to write there for the same
	 * reasons). A store that does not exist yet is not refused.
	 */
	async refusal(): Promise<string | undefined> {
		let stats: StoreStats | undefined;
		try {
			stats = await this.lstatOrUndefined(this.root);
		} catch (error) {
			return `cannot read store directory ${this.root}: ${describeError(error)}`;
		}
		return stats === undefined ? undefined : refuseStoreRoot(this.root, stats)?.message;
	}

	/** Metadata of a complete entry; undefined for a bad id, an unknown id, an unreadable/invalid .json or a refused store. Never throws. */
	async readMeta(id: string): Promise<EntryMeta | undefined> {
		if (!isEntryId(id)) return undefined;
		if ((await this.refusal()) !== undefined) return undefined;
		try {
			const [content] = await this.fs.readSmallTextFiles([`${this.prefix}${id}.json`], DEFAULT_MAX_META_BYTES);
			return typeof content === "string" ? parseMetaText(content, id) : undefined;
		} catch {
			return undefined;
		}
	}

	/**
	 * Opens an entry's stored text for reading: O_RDONLY|O_NOFOLLOW|O_NONBLOCK through the injected
	 * file system, then fstat on the descriptor must say regular file, so a symlink, FIFO, device or
	 * socket in its place is never read and never blocks. Fails (with a `code`) with ENOENT when there
	 * is no such text (expired, or never stored), EINVAL for a bad id or when something other than a
	 * regular file is there, EPERM when the store is refused (see refusal); any other failure as the
	 * file system gave it.
	 */
	async openText(id: string): Promise<StoredText> {
		const path = this.textPath(id);
		const refused = await this.refusal();
		if (refused !== undefined) throw createStoreError("EPERM", refused);
		const { O_RDONLY, O_NOFOLLOW, O_NONBLOCK } = this.fs.constants;
		let handle: StoreReadHandle;
		try {
			handle = await this.fs.openRead(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
		} catch (error) {
			const refused = REFUSED_OPEN_CODES[readErrorCode(error) ?? ""];
			throw refused === undefined ? toStoreError(error) : refuseText(path, refused);
		}
		let stats: StoreStats;
		try {
			stats = await handle.stat();
			if (!stats.isFile()) throw refuseText(path, stats.isDirectory() ? "a directory" : "a special file");
		} catch (error) {
			await handle.close().catch(() => undefined);
			throw toStoreError(error);
		}
		const { size, mtimeMs } = stats;
		return {
			id,
			path,
			fd: handle.fd,
			size,
			mtimeMs,
			async read(target, position) {
				const length = Math.max(0, Math.min(target.length, size - position));
				if (length === 0) return 0;
				return (await handle.read(target, 0, length, position)).bytesRead;
			},
			close: () => handle.close(),
		};
	}

	/** Removes stale temp files, old half entries, expired entries, then evicts for quota. Never throws. */
	async housekeep(options: HousekeepingOptions): Promise<HousekeepingResult> {
		const result: HousekeepingResult = {
			removedExpired: 0,
			removedForQuota: 0,
			removedTemp: 0,
			removedOrphans: 0,
			remainingBytes: 0,
			errors: [],
		};
		const now = this.now();
		const startSeq = this.quota?.beginScan() ?? 0;
		const run = runHousekeeping(this.dir, options, now, result).then((kept) => {
			// What is left is the picture the commits' quota starts from.
			if (kept !== undefined) this.quota?.adoptScan(kept, startSeq);
		});
		this.housekeeping = run;
		await run;
		if (this.housekeeping === run) this.housekeeping = undefined;
		return result;
	}

	/** Every complete entry (id, time, bytes, session), for the user's /overflow; problems in `errors`. Never throws. */
	async listEntries(): Promise<{ entries: KnownEntry[]; errors: string[] }> {
		const log = { errors: [] as string[] };
		const entries: KnownEntry[] = [];
		try {
			const dirents = await this.dir.list("listing", log);
			const { halves } = classifyStoreNames(dirents ?? [], this.prefix);
			const complete = [...halves].filter(([, has]) => isComplete(has)).map(([id]) => this.dir.pathsOf(id));
			await this.dir.readEntryMetas(complete, log, (_paths, known) => entries.push(known));
		} catch (error) {
			log.errors.push(describeError(error));
		}
		return { entries, errors: log.errors };
	}

	/** Removes entries (.json first, so readers see "unknown" before the text goes); never throws. */
	async removeEntries(ids: readonly string[]): Promise<{ removed: number; errors: string[] }> {
		const log = { errors: [] as string[] };
		let removed = 0;
		const refused = await this.refusal();
		if (refused !== undefined) return { removed, errors: [`${refused}; nothing removed`] };
		for (const id of ids) if (isEntryId(id) && (await this.dir.removeEntry(this.dir.pathsOf(id), log))) removed++;
		return { removed, errors: log.errors };
	}

	/**
	 * Removes every entry and half entry, then the store directory itself once it is empty (the
	 * user's purge all: nothing of the store stays behind). A file the store did not write, or a temp
	 * file another Pi process is still writing, keeps the directory: it is named in `kept`. Never throws.
	 */
	async removeAll(): Promise<{ removed: number; kept?: string; errors: string[] }> {
		const log = { errors: [] as string[] };
		let removed = 0;
		const refused = await this.refusal();
		if (refused !== undefined) return { removed, kept: this.root, errors: [`${refused}; nothing removed`] };
		try {
			const dirents = await this.dir.list("purging", log);
			if (dirents === undefined) return { removed, kept: this.root, errors: log.errors };
			const { halves } = classifyStoreNames(dirents, this.prefix);
			for (const [id, has] of halves)
				if ((await this.dir.removeEntry(this.dir.pathsOf(id), log)) && isComplete(has)) removed++;
			await this.fs.rmdir(this.root);
			return { removed, errors: log.errors };
		} catch (error) {
			const code = readErrorCode(error);
			if (code === "ENOENT") return { removed, errors: log.errors };
			if (code !== "ENOTEMPTY" && code !== "EEXIST") log.errors.push(describeError(error));
			return { removed, kept: this.root, errors: log.errors };
		}
	}

	private keepWithinQuota(meta: EntryMeta, bytes: number): Promise<CommitResult> {
		return this.quota?.keepWithinQuota(meta, bytes) ?? Promise.resolve({ removedForQuota: 0, errors: [] });
	}

	/** True when neither file of the id exists; a store that cannot be read fails with its error's code. */
	private async namesNoFile(id: string): Promise<boolean> {
		for (const path of [`${this.prefix}${id}.txt`, `${this.prefix}${id}.json`]) {
			try {
				await this.fs.lstat(path);
				return false;
			} catch (error) {
				if (readErrorCode(error) !== "ENOENT") throw toStoreError(error);
			}
		}
		return true;
	}

	private async lstatOrUndefined(path: string): Promise<StoreStats | undefined> {
		try {
			return await this.fs.lstat(path);
		} catch (error) {
			if (readErrorCode(error) === "ENOENT") return undefined;
			throw error;
		}
	}
}

/** What an open's failure says is there instead of a regular file. */
const REFUSED_OPEN_CODES: Readonly<Record<string, string>> = {
	// O_NOFOLLOW met a symlink (EMLINK on the BSDs).
	ELOOP: "a symbolic link",
	EMLINK: "a symbolic link",
	ENXIO: "a socket",
	EISDIR: "a directory",
};

/** Something other than a regular file where a stored text should be: never read (code EINVAL). */
function refuseText(path: string, what: string): Error {
	return createStoreError("EINVAL", `${path} is not a regular file (${what})`);
}

/** The directories mkdir({recursive}) created, from the first down to `target` (never above the first). */
function listCreatedDirectories(firstCreated: string | undefined | void, target: string): string[] {
	if (typeof firstCreated !== "string") return [target];
	if (firstCreated !== target && !target.startsWith(firstCreated.endsWith(sep) ? firstCreated : firstCreated + sep)) {
		return [target];
	}
	const created: string[] = [];
	for (let dir = target; ; dir = dirname(dir)) {
		created.unshift(dir);
		if (dir === firstCreated || dirname(dir) === dir) break;
	}
	return created;
}
