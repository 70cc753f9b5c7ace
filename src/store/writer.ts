// One entry's atomic write, as write-file-atomic orders it: each file is a 0600 temp file in the
// store directory, written, fsynced, closed, then linked into place under a name that must not
// exist yet — the .txt first, the .json last, so a `<id>.json` under its final name means the entry
// is complete (both are fsynced before either is linked; a long text is also fsynced as it is
// written, so its last fsync has little left to flush). Invariant: everything the writer created
// and has not handed over (temp files, a placed .txt whose .json failed) is released by one path,
// release(), on every failure and abort; an entry is never replaced, and the error passed on keeps
// its `code`.

import { countNewlines } from "../prefilter/keyword-filter.js";
import { createTempName, parseEntryMeta, type EntryMeta } from "./entry.js";
import { closeQuietly, placeNew, unlinkQuietly, writeFully } from "./file-steps.js";
import { createStoreError, toStoreError, type StoreError, type StoreFileHandle, type StoreFs } from "./fs.js";

/** Mode of every file the store writes. */
export const DEFAULT_FILE_MODE = 0o600;

/**
 * Bytes written between two fsyncs of the text's temp file started while it is written (each
 * runs beside the next writes and the scan): the commit's own fsync then has only the last ones
 * to flush. The commit's fsync still comes after the last write, before the link.
 */
export const DEFAULT_EARLY_SYNC_BYTES = 2 * 1024 * 1024;

/** What a commit did for the quota (StoreOptions.maxStoreBytes) once the entry was in place. */
export interface CommitResult {
	/** Entries evicted: other sessions' first, then this session's, oldest first; never this one. */
	removedForQuota: number;
	/** One line per problem met while evicting; the entry is committed all the same. */
	errors: string[];
}

export interface EntryWriter {
	/** Appends to the temp file (partial writes handled). On failure the temp file is already removed. */
	write(chunk: Uint8Array): Promise<void>;
	/** No more writes: the text's last fsync starts after the last one, without waiting for commit (which waits for it). */
	seal(): void;
	/**
	 * fsync + close + link to <id>.txt, then writes <id>.json the same way. `meta.id` must be the
	 * writer's id and `meta.storedBytes`/`meta.storedLines` must describe what was written (else EINVAL).
	 * On failure nothing of the entry is left behind and the error (with its `code`) is rethrown.
	 * With a quota, evicts before it resolves when the store is over it (never throws for that).
	 */
	commit(meta: EntryMeta): Promise<CommitResult>;
	/** Closes and removes the temp file(s); safe after a failed write/commit, never throws. No-op after commit. */
	abort(): Promise<void>;
	/** Bytes written so far. */
	readonly bytesWritten: number;
	/** Lines written so far, counted like EntryMeta.storedLines. */
	readonly linesWritten: number;
}

/** Runs once the entry is in place (the store's quota pass); never rejects. */
export type OnCommitted = (meta: EntryMeta, bytes: number) => Promise<CommitResult>;

// Paths this process is writing right now, across all store instances and module instances (Pi
// loads each extension file, and each /reload, as its own module instance, so the sets live under a
// global key like the stash): housekeeping never removes them, whatever the clock says. A temp file
// named with this process's pid that is in neither set was abandoned (its cleanup unlink failed)
// and is stale at once.
const ACTIVE_PATHS_KEY = Symbol.for("my-pi.pi-overflow.store-active-paths.v1");

interface ActivePaths {
	temps: Set<string>;
	/** `<root>/<id>` of the entries being committed (their quota pass included). */
	commits: Set<string>;
}

function findActivePaths(): ActivePaths {
	const holder = globalThis as typeof globalThis & { [ACTIVE_PATHS_KEY]?: unknown };
	const existing = holder[ACTIVE_PATHS_KEY] as Partial<ActivePaths> | undefined;
	if (existing?.temps instanceof Set && existing.commits instanceof Set) return existing as ActivePaths;
	const created: ActivePaths = { temps: new Set(), commits: new Set() };
	holder[ACTIVE_PATHS_KEY] = created;
	return created;
}

const { temps: activeTempPaths, commits: activeCommitPaths } = findActivePaths();

/** True while a writer of this process owns the temp file at `path`. */
export function isActiveTemp(path: string): boolean {
	return activeTempPaths.has(path);
}

/** True while this process commits the entry `<root>/<id>` (its quota pass included). */
export function isCommittingEntry(entryPath: string): boolean {
	return activeCommitPaths.size > 0 && activeCommitPaths.has(entryPath);
}

/** The entry's own quota pass is over: from now on it is an entry like any other (the next pass may evict it). */
export function endCommit(entryPath: string): void {
	activeCommitPaths.delete(entryPath);
}

/** A file the writer created and has not placed yet. */
interface TempFile {
	path: string;
	/** Open until finished (or released). */
	handle: StoreFileHandle | undefined;
}

export class TempEntryWriter implements EntryWriter {
	private state: "open" | "committing" | "committed" | "failed" | "aborted" = "open";
	private failure: StoreError | undefined;
	private queue: Promise<void> = Promise.resolve();
	/** Created and not placed: the text's temp file, then the metadata's. */
	private temps: TempFile[] = [];
	/** The placed <id>.txt while its .json is not placed yet. */
	private placedText: string | undefined;
	private written = 0;
	private newlines = 0;
	private lastByte = -1;
	/** The text's early fsync in flight (never rejects), and the bytes written when the last one started. */
	private syncing: Promise<void> | undefined;
	private syncedAt = 0;
	/** An early fsync failed: the entry fails (a later fsync may not report the lost write again). */
	private syncFailure: StoreError | undefined;
	/** The text's last fsync, asked for by seal() (never rejects: its outcome), and the fsync itself once it runs. */
	private lastSync: Promise<PromiseSettledResult<void>> | undefined;
	private lastSyncRunning: Promise<unknown> | undefined;

	/** Call open() before anything else. `prefix` is the store root with a trailing separator. */
	constructor(
		private readonly fs: StoreFs,
		private readonly prefix: string,
		private readonly id: string,
		private readonly onCommitted: OnCommitted,
	) {}

	get bytesWritten(): number {
		return this.written;
	}

	get linesWritten(): number {
		return this.newlines + (this.written > 0 && this.lastByte !== 0x0a ? 1 : 0);
	}

	/** Opens the text's temp file. On failure nothing is left of it, and open() may be tried again. */
	async open(): Promise<void> {
		try {
			await this.openTemp();
		} catch (error) {
			await this.release();
			throw error;
		}
	}

	write(chunk: Uint8Array): Promise<void> {
		const next = this.queue.then(() => this.writeNow(chunk));
		this.queue = next.catch(() => undefined);
		return next;
	}

	seal(): void {
		if (this.lastSync !== undefined || this.state !== "open") return;
		this.lastSync = this.queue.then(() => this.syncLast());
	}

	/** The text's last fsync (after every write), as an outcome; none when the text's file is gone (a failed write). */
	private async syncLast(): Promise<PromiseSettledResult<void>> {
		const handle = this.temps[0]?.handle;
		if (this.state === "failed" || this.state === "aborted" || handle === undefined)
			return {
				status: "rejected",
				reason: this.failure ?? createStoreError("EBADF", `entry ${this.id} has no text to fsync`),
			};
		const running = Promise.allSettled([handle.sync()]);
		this.lastSyncRunning = running;
		const [outcome] = await running;
		return outcome;
	}

	async commit(meta: EntryMeta): Promise<CommitResult> {
		await this.queue;
		this.assertOpen();
		this.state = "committing";
		const entryPath = this.prefix + this.id;
		// Held through the quota pass too: housekeeping and eviction leave the entry just written alone.
		activeCommitPaths.add(entryPath);
		try {
			const placed = await this.place(meta);
			return await this.onCommitted(placed.meta, placed.bytes);
		} finally {
			activeCommitPaths.delete(entryPath);
		}
	}

	async abort(): Promise<void> {
		try {
			await this.queue;
		} catch {
			// A failed write already cleaned up; nothing to add.
		}
		if (this.state === "committed" || this.state === "committing") return;
		if (this.state === "open") this.state = "aborted";
		await this.release();
	}

	/**
	 * The commit's file work, owned by one try/finally: the text's temp file fsynced and closed while
	 * the metadata's is written, fsynced and closed; then the text linked to <id>.txt, and the
	 * metadata to <id>.json. Unless that last link succeeds, the finally releases every file of the
	 * entry. Returns the clean metadata and the entry's bytes.
	 */
	private async place(meta: EntryMeta): Promise<{ meta: EntryMeta; bytes: number }> {
		try {
			const clean = this.checkMeta(meta);
			const body = Buffer.from(`${JSON.stringify(clean, null, 2)}\n`, "utf8");
			const text = this.temps[0] as TempFile;
			// Both on disk before either is placed (the text's last fsync beside the metadata's write and
			// fsync); both settled before anything is released.
			const [textFlushed, metaWritten] = await Promise.allSettled([this.flushText(text), this.writeMetaTemp(body)]);
			if (textFlushed.status === "rejected") throw textFlushed.reason;
			if (metaWritten.status === "rejected") throw metaWritten.reason;
			// Never replaces an entry: an id answers with one result's content only (placeNew fails with EEXIST).
			const txtPath = `${this.prefix}${this.id}.txt`;
			await this.moveTemp(text, txtPath);
			this.placedText = txtPath;
			await this.moveTemp(metaWritten.value, `${this.prefix}${this.id}.json`);
			this.placedText = undefined;
			this.state = "committed";
			return { meta: clean, bytes: this.written + body.length };
		} catch (error) {
			this.failure = toStoreError(error);
			this.state = "failed";
			throw this.failure;
		} finally {
			if (this.state !== "committed") await this.release();
		}
	}

	/**
	 * The text's temp file fsynced and closed: its last fsync starts at once (after the last write,
	 * beside an early one still running), and it is closed once both are over and neither failed.
	 */
	private async flushText(text: TempFile): Promise<void> {
		const handle = text.handle as StoreFileHandle;
		const [, last] = await Promise.all([this.syncing, this.lastSync ?? this.syncLast()]);
		if (this.syncFailure !== undefined) throw this.syncFailure;
		if (last.status === "rejected") throw last.reason;
		text.handle = undefined;
		await handle.close();
	}

	/** The metadata's temp file, written, fsynced and closed. */
	private async writeMetaTemp(body: Buffer): Promise<TempFile> {
		const json = await this.openTemp();
		await writeFully(json.handle as StoreFileHandle, body);
		await flushTemp(json);
		return json;
	}

	/** Links a flushed temp file into place. */
	private async moveTemp(temp: TempFile, finalPath: string): Promise<void> {
		await placeNew(this.fs, temp.path, finalPath);
		this.temps = this.temps.filter((other) => other !== temp);
		activeTempPaths.delete(temp.path);
	}

	/** Opens `.<id>.<pid>.<hex>.tmp` exclusively, never through a symlink, and makes it exactly 0600. */
	private async openTemp(): Promise<TempFile> {
		const { O_CREAT, O_EXCL, O_WRONLY, O_NOFOLLOW } = this.fs.constants;
		const temp: TempFile = { path: this.prefix + createTempName(this.id), handle: undefined };
		// Marked active before it exists: housekeeping treats a file of this pid that is not marked as abandoned.
		activeTempPaths.add(temp.path);
		try {
			temp.handle = await this.fs.open(temp.path, O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW, DEFAULT_FILE_MODE);
		} catch (error) {
			// Not created here (EEXIST names someone else's file): nothing to remove.
			activeTempPaths.delete(temp.path);
			throw error;
		}
		this.temps.push(temp);
		// open's mode is filtered by the umask; fchmod makes it exactly 0600 whatever the umask.
		await temp.handle.chmod(DEFAULT_FILE_MODE);
		return temp;
	}

	/** Closes and removes every file the writer holds; best effort, never throws. */
	private async release(): Promise<void> {
		const temps = this.temps;
		const placedText = this.placedText;
		this.temps = [];
		this.placedText = undefined;
		// No fsync may be running on a descriptor that is closed (it could be reused); none starts now.
		await Promise.all([this.syncing, this.lastSyncRunning]);
		for (const temp of temps) {
			if (temp.handle !== undefined) await closeQuietly(temp.handle);
			temp.handle = undefined;
			await unlinkQuietly(this.fs, temp.path);
			activeTempPaths.delete(temp.path);
		}
		// No unpaired entry: the text goes when its metadata could not be placed.
		if (placedText !== undefined) await unlinkQuietly(this.fs, placedText);
	}

	private async writeNow(chunk: Uint8Array): Promise<void> {
		this.assertOpen();
		if (!(chunk instanceof Uint8Array)) {
			throw createStoreError("EINVAL", `write expects a Uint8Array chunk, got ${typeof chunk}`);
		}
		if (this.lastSync !== undefined) throw createStoreError("EBADF", `entry ${this.id} is sealed: no more writes`);
		if (chunk.length === 0) return;
		try {
			if (this.syncFailure !== undefined) throw this.syncFailure;
			await writeFully(this.temps[0]?.handle as StoreFileHandle, chunk);
		} catch (error) {
			this.failure = toStoreError(error);
			this.state = "failed";
			await this.release();
			throw this.failure;
		}
		this.written += chunk.length;
		this.newlines += countNewlines(chunk, 0, chunk.length);
		this.lastByte = chunk[chunk.length - 1];
		if (this.syncing === undefined && this.written - this.syncedAt >= DEFAULT_EARLY_SYNC_BYTES) this.startEarlySync();
	}

	/** Starts an fsync of what the text's temp file holds so far; not waited for here. */
	private startEarlySync(): void {
		const handle = this.temps[0]?.handle;
		if (handle === undefined) return;
		this.syncedAt = this.written;
		this.syncing = handle.sync().then(
			() => {
				this.syncing = undefined;
			},
			(error: unknown) => {
				this.syncing = undefined;
				this.syncFailure ??= toStoreError(error);
			},
		);
	}

	private assertOpen(): void {
		if (this.state === "open") return;
		if (this.state === "failed" && this.failure !== undefined) throw this.failure;
		throw createStoreError("EBADF", `entry ${this.id} is already ${this.state}`);
	}

	private checkMeta(meta: EntryMeta): EntryMeta {
		const clean = parseEntryMeta(meta);
		if (clean === undefined) throw createStoreError("EINVAL", `invalid metadata for entry ${this.id}`);
		if (clean.id !== this.id)
			throw createStoreError("EINVAL", `metadata id ${clean.id} does not match entry ${this.id}`);
		if (clean.storedBytes !== this.written) {
			throw createStoreError(
				"EINVAL",
				`metadata storedBytes ${clean.storedBytes} does not match the ${this.written} bytes written`,
			);
		}
		// A CR-separated copy's lines are its records, which the scan counted; the writer counts LFs.
		if (clean.separator === undefined && clean.storedLines !== this.linesWritten) {
			throw createStoreError(
				"EINVAL",
				`metadata storedLines ${clean.storedLines} does not match the ${this.linesWritten} lines written`,
			);
		}
		return clean;
	}
}

/** fsync, then close (on this path its deferred write error, as NFS reports one, is not ignored). */
async function flushTemp(temp: TempFile): Promise<void> {
	const handle = temp.handle as StoreFileHandle;
	await handle.sync();
	temp.handle = undefined;
	await handle.close();
}
