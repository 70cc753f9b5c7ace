// The private on-disk store: <root>/<id>.txt (the stored original) + <id>.json (its metadata).
// Invariant: a `<id>.json` under its final name means the entry is complete — `<id>.txt` is renamed
// into place first, the .json last, each written to a 0600 temp file in the same directory, fsynced,
// then renamed; any failure removes what it wrote. The directory is 0700 and is never reached
// through a symlink; housekeeping and quota eviction only ever delete regular files whose names
// match the store's patterns, never recurse, and never throw. With a quota (StoreOptions.maxStoreBytes)
// a commit resolves only once the store, as this process knows it, is back within the quota.

import { createHash, randomBytes } from "node:crypto";
import * as nodeFs from "node:fs";
import { dirname, join, resolve, sep } from "node:path";

/** Mode of the store directory (and of `my-pi/` when the store creates it). */
export const DEFAULT_DIR_MODE = 0o700;
/** Mode of every file the store writes. */
export const DEFAULT_FILE_MODE = 0o600;
/** A temp file older than this is stale even when its writer's pid is alive (pids get reused). */
export const DEFAULT_STALE_TEMP_MS = 60 * 60 * 1000;
/** A half entry (.txt without .json or the reverse) younger than this may be a writer between its two renames. */
export const DEFAULT_ORPHAN_AGE_MS = 10 * 60 * 1000;
/** Parallel file-system calls during housekeeping (libuv runs 4 at a time; this keeps its queue full). */
export const DEFAULT_HOUSEKEEPING_CONCURRENCY = 64;
/** A metadata file larger than this is not ours (ours are a few hundred bytes). */
export const DEFAULT_MAX_META_BYTES = 64 * 1024;
/** Metadata files read per readSmallTextFiles call during housekeeping (bounds memory for huge stores). */
export const DEFAULT_META_BATCH_FILES = 1024;
/** Files NODE_STORE_FS reads synchronously before it yields to the event loop (about a millisecond). */
export const DEFAULT_READ_SLICE_FILES = 128;
/**
 * A commit that finds the store past its quota evicts down to this share of it (hysteresis). The
 * band above it, a tenth of the quota, is also how much a process writes between two directory
 * scans at most, so what it does not know of other processes' writes stays that small.
 */
export const DEFAULT_QUOTA_LOW_WATER_RATIO = 0.9;

const ENTRY_ID_PATTERN = /^[0-9a-f]{12}$/;
const ENTRY_FILE_PATTERN = /^([0-9a-f]{12})\.(txt|json)$/;
const TEMP_FILE_PATTERN = /^\.([0-9a-f]{12})\.(\d{1,10})\.([0-9a-f]{1,32})\.tmp$/;
const ENTRY_SOURCES: readonly EntrySource[] = ["spill-file", "stash", "current"];
const HAS_TXT = 1;
const HAS_JSON = 2;

export type EntrySource = "spill-file" | "stash" | "current";

export interface EntryMeta {
	id: string;
	sessionId: string;
	toolCallId: string;
	toolName: string;
	/** ISO time the entry was stored. */
	createdAt: string;
	/** Lines of the output (as `wc -l`, plus 1 when the last line has no final newline): the true total. */
	totalLines: number;
	/** Bytes of the output. */
	totalBytes: number;
	/** Bytes of the stored copy: totalBytes, unless the middle was left out (`gap`). */
	storedBytes: number;
	/** Lines of the stored copy, counted like totalLines. */
	storedLines: number;
	/** The stored copy had its middle left out (maxEntryBytes); same as `gap` being set. */
	truncated: boolean;
	/** Where the middle was left out, to map stored line numbers to the output's. */
	gap?: EntryGap;
	source: EntrySource;
	/** E.g. why the spill file was not usable. */
	sourceNote?: string;
	/** Pi's verdict on a failed command ("Command exited with code 2"), shown under the view. */
	status?: string;
}

/** A left-out middle (see StoredGap in source.ts), with the signal lines the scan found in it. */
export interface EntryGap {
	/** Stored line number of the marker line that stands for the middle. */
	markerLine: number;
	/** Output line number of the stored line right after the marker. */
	firstTailLine: number;
	leftOutBytes: number;
	/** Signal lines found in the left-out middle (they can be shown, never read back), bounded. */
	signals: GapSignal[];
}

export interface GapSignal {
	/** Output line number. */
	line: number;
	/** As shown in the view (clipped). */
	text: string;
	/** Lines that carried this text. */
	count: number;
}

/** The part of fs.Stats the store reads. */
export interface StoreStats {
	isFile(): boolean;
	isDirectory(): boolean;
	isSymbolicLink(): boolean;
	mode: number;
	uid: number;
	size: number;
	mtimeMs: number;
}

/** The part of fs.Dirent the store reads (readdir with file types). */
export interface StoreDirent {
	name: string;
	isFile(): boolean;
}

/** The part of fs/promises FileHandle the store uses. */
export interface StoreFileHandle {
	write(buffer: Uint8Array, offset: number, length: number, position: number | null): Promise<{ bytesWritten: number }>;
	sync(): Promise<void>;
	chmod(mode: number): Promise<void>;
	close(): Promise<void>;
}

/** The subset of node:fs/promises the store uses; inject it to simulate ENOSPC, EACCES, EIO... */
export interface StoreFs {
	open(path: string, flags: number, mode?: number): Promise<StoreFileHandle>;
	lstat(path: string): Promise<StoreStats>;
	mkdir(path: string, options: { recursive?: boolean; mode?: number }): Promise<string | undefined | void>;
	chmod(path: string, mode: number): Promise<void>;
	rename(from: string, to: string): Promise<void>;
	/** Fails with EEXIST when `to` exists: how commit places a file without ever replacing one. */
	link(from: string, to: string): Promise<void>;
	unlink(path: string): Promise<void>;
	/** Names with their types, like fs.promises.readdir(path, { withFileTypes: true }). */
	readdir(path: string): Promise<StoreDirent[]>;
	/**
   * Reads small regular files as UTF-8, never through a symlink and never blocking on a FIFO: one
   * result per path, in order — its text, or the error (ENOENT; EFBIG above maxBytes; EINVAL when
   * not a regular file). The one addition to fs/promises: housekeeping reads thousands of these.
   */
	readSmallTextFiles(paths: readonly string[], maxBytes: number): Promise<(string | StoreError)[]>;
	constants: {
		O_RDONLY: number;
		O_WRONLY: number;
		O_CREAT: number;
		O_EXCL: number;
		O_NOFOLLOW: number;
		O_NONBLOCK: number;
	};
}

type FsCallback<T> = (error: NodeJS.ErrnoException | null, value: T) => void;

/** Runs a callback-style fs call as a promise: several times cheaper than node:fs/promises per call. */
function callFs<T>(run: (done: FsCallback<T>) => void): Promise<T> {
	return new Promise<T>((resolve, reject) => {
		run((error, value) => (error ? reject(error) : resolve(value)));
	});
}

/** A file handle over a raw descriptor; after close() every call fails with EBADF and never touches a reused fd. */
function createFdHandle(fd: number): StoreFileHandle {
	let closed = false;
	const withFd = <T>(run: (done: FsCallback<T>) => void): Promise<T> =>
		closed ? Promise.reject(createStoreError("EBADF", "file handle is closed")) : callFs(run);
	return {
		write: (buffer, offset, length, position) =>
			withFd<number>((done) => nodeFs.write(fd, buffer, offset, length, position, done)).then((bytesWritten) => ({ bytesWritten })),
		sync: () => withFd<void>((done) => nodeFs.fsync(fd, (error) => done(error, undefined))),
		chmod: (mode) => withFd<void>((done) => nodeFs.fchmod(fd, mode, (error) => done(error, undefined))),
		close: () => {
			if (closed) return Promise.resolve();
			closed = true;
			return callFs<void>((done) => nodeFs.close(fd, (error) => done(error, undefined)));
		},
	};
}

/** The real file system. Tests spread it and replace one method to inject a failure. */
export const NODE_STORE_FS: StoreFs = {
	open: (path, flags, mode) => callFs<number>((done) => nodeFs.open(path, flags, mode, done)).then(createFdHandle),
	lstat: (path) => callFs<StoreStats>((done) => nodeFs.lstat(path, done)),
	mkdir: (path, options) => callFs<string | undefined>((done) => nodeFs.mkdir(path, options, done)),
	chmod: (path, mode) => callFs<void>((done) => nodeFs.chmod(path, mode, (error) => done(error, undefined))),
	rename: (from, to) => callFs<void>((done) => nodeFs.rename(from, to, (error) => done(error, undefined))),
	link: (from, to) => callFs<void>((done) => nodeFs.link(from, to, (error) => done(error, undefined))),
	unlink: (path) => callFs<void>((done) => nodeFs.unlink(path, (error) => done(error, undefined))),
	readdir: (path) => callFs<StoreDirent[]>((done) => nodeFs.readdir(path, { withFileTypes: true }, done)),
	readSmallTextFiles: (paths, maxBytes) => readSmallTextFilesInSlices(paths, maxBytes),
	constants: nodeFs.constants,
};

/**
 * Synchronous reads in slices, yielding between slices: a thread-pool round trip for each of
 * open/read/close costs ~10x the system call itself, and 10 000 metadata files must take well
 * under a second. A slice blocks the event loop for about a millisecond.
 */
async function readSmallTextFilesInSlices(paths: readonly string[], maxBytes: number): Promise<(string | StoreError)[]> {
	const results: (string | StoreError)[] = [];
	const buffer = Buffer.allocUnsafe(maxBytes + 1);
	for (let start = 0; start < paths.length; start += DEFAULT_READ_SLICE_FILES) {
		if (start > 0) await new Promise<void>((resolve) => setImmediate(resolve));
		const end = Math.min(paths.length, start + DEFAULT_READ_SLICE_FILES);
		for (let index = start; index < end; index++) results.push(readSmallTextFileSync(paths[index], buffer, maxBytes));
	}
	return results;
}

function readSmallTextFileSync(path: string, buffer: Buffer, maxBytes: number): string | StoreError {
	const { O_RDONLY, O_NOFOLLOW, O_NONBLOCK } = nodeFs.constants;
	let fd: number | undefined;
	try {
		fd = nodeFs.openSync(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
		if (!nodeFs.fstatSync(fd).isFile()) return createStoreError("EINVAL", `${path} is not a regular file`);
		let filled = 0;
		while (filled < buffer.length) {
			const bytesRead = nodeFs.readSync(fd, buffer, filled, buffer.length - filled, filled);
			if (bytesRead === 0) break;
			filled += bytesRead;
		}
		if (filled > maxBytes) return createStoreError("EFBIG", `${path} is larger than ${maxBytes} bytes`);
		return buffer.toString("utf8", 0, filled);
	} catch (error) {
		return toStoreError(error);
	} finally {
		if (fd !== undefined) {
			try {
				nodeFs.closeSync(fd);
			} catch {
				// Nothing to release if close itself fails.
			}
		}
	}
}

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

export interface HousekeepingOptions {
	/** Entries whose createdAt is older than this are removed. */
	retentionMs: number;
	/** While all entries together exceed this, whole entries are evicted oldest first. */
	maxStoreBytes: number;
	/** Entries of this session are evicted for quota only after every other session's. */
	currentSessionId?: string;
}

export interface HousekeepingResult {
	removedExpired: number;
	removedForQuota: number;
	removedTemp: number;
	removedOrphans: number;
	/** Bytes (.txt + .json) of the complete entries left. */
	remainingBytes: number;
	/** One line per problem; housekeeping never throws. */
	errors: string[];
}

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
	/**
   * fsync + close + rename to <id>.txt, then writes <id>.json the same way. `meta.id` must be the
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

/** An Error with a `code`, like Node's own, so callers match on `code`, never on text. */
export interface StoreError extends Error {
	code: string;
}

/**
 * sha1(sessionId + "\0" + toolCallId), first 12 hex characters: the id of the first result of a
 * tool call. A later result with the same toolCallId (providers reuse ids, or send none) gets
 * attempt n ≥ 1: sha1(sessionId + "\0" + toolCallId + "\0" + n).
 */
export function computeEntryId(sessionId: string, toolCallId: string, attempt = 0): string {
	const key = attempt === 0 ? `${sessionId}\0${toolCallId}` : `${sessionId}\0${toolCallId}\0${attempt}`;
	return createHash("sha1").update(key, "utf8").digest("hex").slice(0, 12);
}

/** Ids tried before allocateEntryId gives up (a collision of twelve hex digits a thousand times over). */
const MAX_ID_ATTEMPTS = 1000;
/** Ids remembered as issued by this process; the oldest are forgotten beyond this. */
const MAX_ISSUED_IDS = 200_000;
const ISSUED_IDS_KEY = Symbol.for("my-pi.pi-overflow.issued-ids.v1");

/** Every id this process issued or saw in its sessions, across module instances (/reload). */
function findIssuedIds(): Set<string> {
	const holder = globalThis as typeof globalThis & { [ISSUED_IDS_KEY]?: unknown };
	const existing = holder[ISSUED_IDS_KEY];
	if (existing instanceof Set) return existing as Set<string>;
	const created = new Set<string>();
	holder[ISSUED_IDS_KEY] = created;
	return created;
}

function rememberIssuedId(issued: Set<string>, id: string): void {
	issued.add(id);
	if (issued.size > MAX_ISSUED_IDS) {
		const oldest = issued.values().next();
		if (!oldest.done) issued.delete(oldest.value);
	}
}

/** True for exactly 12 lowercase hex characters: the only text a store path is ever formed from. */
export function isEntryId(value: unknown): value is string {
	return typeof value === "string" && ENTRY_ID_PATTERN.test(value);
}

/** `<agentDir>/my-pi/pi-overflow`. */
export function resolveStoreRoot(agentDir: string): string {
	return join(agentDir, "my-pi", "pi-overflow");
}

/** Lines as EntryMeta.storedLines counts them: newlines, plus 1 for a last line without one. */
export function countTextLines(bytes: Uint8Array): number {
	let lines = 0;
	for (let index = bytes.indexOf(0x0a); index !== -1; index = bytes.indexOf(0x0a, index + 1)) lines++;
	if (bytes.length > 0 && bytes[bytes.length - 1] !== 0x0a) lines++;
	return lines;
}

/**
 * Validates untrusted JSON as EntryMeta; returns a clean copy or undefined. Entries written before
 * the stored copy had its own counts (no storedBytes) describe the stored copy in totalLines/totalBytes.
 */
export function parseEntryMeta(value: unknown): EntryMeta | undefined {
	if (!isRecord(value)) return undefined;
	const { id, sessionId, toolCallId, toolName, createdAt, totalLines, totalBytes, truncated, source, sourceNote, status } = value;
	const storedBytes = value.storedBytes ?? totalBytes;
	const storedLines = value.storedLines ?? totalLines;
	if (!isEntryId(id)) return undefined;
	if (typeof sessionId !== "string" || typeof toolCallId !== "string" || typeof toolName !== "string") return undefined;
	if (typeof createdAt !== "string" || Number.isNaN(Date.parse(createdAt))) return undefined;
	if (!isCount(totalLines) || !isCount(totalBytes) || !isCount(storedBytes) || !isCount(storedLines)) return undefined;
	if (typeof truncated !== "boolean") return undefined;
	if (typeof source !== "string" || !ENTRY_SOURCES.includes(source as EntrySource)) return undefined;
	if (sourceNote !== undefined && typeof sourceNote !== "string") return undefined;
	if (status !== undefined && typeof status !== "string") return undefined;
	const gap = value.gap === undefined ? undefined : parseGap(value.gap, storedLines, totalLines);
	if (gap === null || (gap !== undefined) !== (truncated && value.storedBytes !== undefined)) return undefined;
	const meta: EntryMeta = {
		id, sessionId, toolCallId, toolName, createdAt, totalLines, totalBytes, storedBytes, storedLines, truncated,
		source: source as EntrySource,
	};
	if (gap !== undefined) meta.gap = gap;
	if (sourceNote !== undefined) meta.sourceNote = sourceNote;
	if (status !== undefined) meta.status = status;
	return meta;
}

/** A gap that maps stored lines into 1..totalLines, or null. */
function parseGap(value: unknown, storedLines: number, totalLines: number): EntryGap | null {
	if (!isRecord(value)) return null;
	const { markerLine, firstTailLine, leftOutBytes, signals } = value;
	if (!isCount(markerLine) || markerLine < 1 || markerLine > storedLines) return null;
	if (!isCount(firstTailLine) || firstTailLine < markerLine - 1 || firstTailLine > totalLines + 1) return null;
	if (!isCount(leftOutBytes) || !Array.isArray(signals)) return null;
	const clean: GapSignal[] = [];
	for (const signal of signals) {
		if (!isRecord(signal) || !isCount(signal.line) || typeof signal.text !== "string" || !isCount(signal.count)) return null;
		clean.push({ line: signal.line, text: signal.text, count: signal.count });
	}
	return { markerLine, firstTailLine, leftOutBytes, signals: clean };
}

function isRecord(value: unknown): value is Record<string, unknown> {
	return typeof value === "object" && value !== null && !Array.isArray(value);
}

function parseMetaText(text: string, expectedId: string): EntryMeta | undefined {
	try {
		const meta = parseEntryMeta(JSON.parse(text));
		return meta !== undefined && meta.id === expectedId ? meta : undefined;
	} catch {
		return undefined;
	}
}

function isCount(value: unknown): value is number {
	return typeof value === "number" && Number.isSafeInteger(value) && value >= 0;
}

function createStoreError(code: string, message: string): StoreError {
	const error = new Error(message) as StoreError;
	error.code = code;
	return error;
}

function readErrorCode(error: unknown): string | undefined {
	if (typeof error !== "object" || error === null) return undefined;
	const code = (error as { code?: unknown }).code;
	return typeof code === "string" ? code : undefined;
}

/** Makes sure what we rethrow is an Error carrying a `code` (EIO when the cause had none). */
function toStoreError(error: unknown): StoreError {
	if (error instanceof Error && readErrorCode(error) !== undefined) return error as StoreError;
	const wrapped = createStoreError("EIO", error instanceof Error ? error.message : String(error));
	(wrapped as Error & { cause?: unknown }).cause = error;
	return wrapped;
}

function describeError(error: unknown): string {
	return error instanceof Error ? error.message : String(error);
}

function assertEntryId(id: unknown): asserts id is string {
	if (!isEntryId(id)) {
		throw createStoreError("EINVAL", `invalid entry id ${JSON.stringify(String(id)).slice(0, 40)}: expected 12 lowercase hex characters`);
	}
}

function createTempName(id: string): string {
	return `.${id}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`;
}

// Paths this process is writing right now, across all store instances and module instances (Pi
// loads each extension file, and each /reload, as its own module instance, so the sets live under a
// global key like the stash): housekeeping never removes them, whatever the clock says. A temp file
// named with this process's pid that is in neither set was abandoned (its cleanup unlink failed)
// and is stale at once.
const ACTIVE_PATHS_KEY = Symbol.for("my-pi.pi-overflow.store-active-paths.v1");

interface ActivePaths {
	temps: Set<string>;
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

export class OverflowStore {
	/** Absolute, normalised. */
	readonly root: string;
	/** root + separator: every store path is this plus a name matched by our patterns. */
	private readonly prefix: string;
	private readonly fs: StoreFs;
	private readonly now: () => number;
	private readonly maxStoreBytes: number | undefined;
	/** The complete entries as this instance knows them (kept only with a quota). */
	private readonly picture = new EntryPicture();
	/** Quota passes run one at a time; a pass never rejects. */
	private quotaQueue: Promise<void> = Promise.resolve();
	/** The housekeeping under way: a first commit waits for its scan instead of scanning too. */
	private housekeeping: Promise<void> | undefined;

	constructor(options: StoreOptions) {
		if (typeof options?.root !== "string" || options.root.length === 0) {
			throw createStoreError("EINVAL", `store root must be a non-empty path, got ${JSON.stringify(options?.root)}`);
		}
		const maxStoreBytes = options.maxStoreBytes;
		if (maxStoreBytes !== undefined && !(typeof maxStoreBytes === "number" && Number.isFinite(maxStoreBytes) && maxStoreBytes >= 0)) {
			throw createStoreError("EINVAL", `maxStoreBytes must be a non-negative number of bytes, got ${String(maxStoreBytes)}`);
		}
		this.root = resolve(options.root);
		this.prefix = this.root.endsWith(sep) ? this.root : this.root + sep;
		this.fs = options.fs ?? NODE_STORE_FS;
		this.now = options.now ?? Date.now;
		this.maxStoreBytes = maxStoreBytes;
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
		if (stats.isSymbolicLink()) {
			throw createStoreError("ELOOP", `store directory ${root} is a symbolic link; refusing to follow it`);
		}
		if (!stats.isDirectory()) {
			throw createStoreError("ENOTDIR", `store directory ${root} exists but is not a directory`);
		}
		const uid = typeof process.getuid === "function" ? process.getuid() : undefined;
		if (uid !== undefined && stats.uid !== uid) {
			throw createStoreError("EPERM", `store directory ${root} belongs to another user (uid ${stats.uid})`);
		}
		if (created || (stats.mode & 0o077) !== 0) await this.fs.chmod(root, DEFAULT_DIR_MODE);
	}

	/** Starts a new entry: a 0600 temp file in the (validated) store directory. */
	async beginEntry(id: string): Promise<EntryWriter> {
		assertEntryId(id);
		await this.ensureRoot();
		let opened: { handle: StoreFileHandle; path: string };
		try {
			opened = await openTempFile(this.fs, this.prefix, id);
		} catch (error) {
			// The directory vanished after it was validated (another process, a user's rm -r): once more.
			if (readErrorCode(error) !== "ENOENT") throw toStoreError(error);
			await this.ensureRoot();
			opened = await openTempFile(this.fs, this.prefix, id).catch((retryError: unknown) => {
				throw toStoreError(retryError);
			});
		}
		return new TempEntryWriter(this.fs, this.prefix, id, opened.handle, opened.path, (meta, bytes) => this.keepWithinQuota(meta, bytes));
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
		throw createStoreError("EEXIST", `no free entry id for tool call ${JSON.stringify(toolCallId).slice(0, 60)} after ${MAX_ID_ATTEMPTS} attempts`);
	}

	/** Ids a session already showed (a resumed session's results): never issued again. */
	rememberEntryIds(ids: Iterable<string>): void {
		const issued = findIssuedIds();
		for (const id of ids) if (isEntryId(id)) rememberIssuedId(issued, id);
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

	/** Metadata of a complete entry; undefined for a bad id, an unknown id, or an unreadable/invalid .json. Never throws. */
	async readMeta(id: string): Promise<EntryMeta | undefined> {
		if (!isEntryId(id)) return undefined;
		try {
			const [content] = await this.fs.readSmallTextFiles([`${this.prefix}${id}.json`], DEFAULT_MAX_META_BYTES);
			return typeof content === "string" ? parseMetaText(content, id) : undefined;
		} catch {
			return undefined;
		}
	}

	/** Removes stale temp files, old half entries, expired entries, then evicts for quota. Never throws. */
	async housekeep(options: HousekeepingOptions): Promise<HousekeepingResult> {
		const result: HousekeepingResult = {
			removedExpired: 0, removedForQuota: 0, removedTemp: 0, removedOrphans: 0, remainingBytes: 0, errors: [],
		};
		const run = this.runHousekeeping(options, result).catch((error: unknown) => {
			result.errors.push(`housekeeping stopped: ${describeError(error)}`);
		});
		this.housekeeping = run;
		await run;
		if (this.housekeeping === run) this.housekeeping = undefined;
		return result;
	}

	private async lstatOrUndefined(path: string): Promise<StoreStats | undefined> {
		try {
			return await this.fs.lstat(path);
		} catch (error) {
			if (readErrorCode(error) === "ENOENT") return undefined;
			throw error;
		}
	}

	private async runHousekeeping(options: HousekeepingOptions, result: HousekeepingResult): Promise<void> {
		const now = this.now();
		const pictureSeq = this.picture.seq;
		const retentionMs = options?.retentionMs;
		const maxStoreBytes = options?.maxStoreBytes;
		const currentSessionId = options?.currentSessionId;
		const checkRetention = typeof retentionMs === "number" && retentionMs > 0;
		const checkQuota = typeof maxStoreBytes === "number" && maxStoreBytes >= 0;
		if (!checkRetention) result.errors.push(`retentionMs must be a positive number, got ${String(retentionMs)}; expiry skipped`);
		if (!checkQuota) result.errors.push(`maxStoreBytes must be a non-negative number, got ${String(maxStoreBytes)}; quota skipped`);

		const dirents = await this.listRoot("housekeeping", result);
		if (dirents === undefined) return;
		const { temps, halves } = classifyStoreNames(dirents, this.prefix);

		// 1. Stale temp files: a dead writer, or older than an hour.
		const pidAlive = new Map<number, boolean>();
		await runWithConcurrency(temps, DEFAULT_HOUSEKEEPING_CONCURRENCY, async ({ path, pid }) => {
			if (activeTempPaths.has(path)) return;
			const stats = await this.lstatRegularFile(path, result);
			if (stats === undefined) return;
			let alive = pidAlive.get(pid);
			if (alive === undefined) {
				// Our own pid: no writer of this process holds the file (checked above), so it was abandoned.
				alive = pid !== process.pid && isProcessAlive(pid);
				pidAlive.set(pid, alive);
			}
			if (alive && now - stats.mtimeMs <= DEFAULT_STALE_TEMP_MS) return;
			if (await this.removeFile(path, result)) result.removedTemp++;
		});

		// 2. Half entries (a .txt without its .json or the reverse) older than the orphan age.
		const complete: EntryPaths[] = [];
		const halfPaths: string[] = [];
		const prefix = this.prefix;
		for (const [id, has] of halves) {
			if (this.isCommitting(id)) continue;
			if (has === (HAS_TXT | HAS_JSON)) complete.push(this.pathsOf(id));
			else halfPaths.push(`${prefix}${id}.${has === HAS_TXT ? "txt" : "json"}`);
		}
		await runWithConcurrency(halfPaths, DEFAULT_HOUSEKEEPING_CONCURRENCY, async (path) => {
			const stats = await this.lstatRegularFile(path, result);
			if (stats !== undefined && now - stats.mtimeMs > DEFAULT_ORPHAN_AGE_MS && (await this.removeFile(path, result))) {
				result.removedOrphans++;
			}
		});

		// 3. Complete entries: createdAt from the metadata; expired ones go.
		const entries: LiveEntry[] = [];
		const expired: EntryPaths[] = [];
		const invalid = await this.readEntryMetas(complete, result, (entry, known) => {
			if (checkRetention && now - known.createdMs > retentionMs) expired.push(entry);
			else entries.push({ ...entry, ...known });
		});
		await runWithConcurrency(expired, DEFAULT_HOUSEKEEPING_CONCURRENCY, async (entry) => {
			if (await this.removeEntry(entry.txtPath, entry.jsonPath, result)) result.removedExpired++;
		});
		// Invalid metadata makes an entry unusable (readMeta says unknown): once old, it goes like an orphan.
		await runWithConcurrency(invalid, DEFAULT_HOUSEKEEPING_CONCURRENCY, async (entry) => {
			const [txtStats, jsonStats] = await Promise.all([
				this.lstatRegularFile(entry.txtPath, result),
				this.lstatRegularFile(entry.jsonPath, result),
			]);
			if (jsonStats === undefined) return;
			if (now - jsonStats.mtimeMs > DEFAULT_ORPHAN_AGE_MS) {
				if (await this.removeEntry(entry.txtPath, entry.jsonPath, result)) result.removedOrphans++;
				return;
			}
			entries.push({ ...entry, createdMs: jsonStats.mtimeMs, bytes: (txtStats?.size ?? 0) + jsonStats.size, sessionId: undefined });
		});

		// 4. Quota: whole entries, other sessions' first, oldest first within each group.
		let totalBytes = entries.reduce((sum, entry) => sum + entry.bytes, 0);
		const victims = new Set<LiveEntry>();
		if (checkQuota && totalBytes > maxStoreBytes) {
			for (const victim of selectVictims(entries, totalBytes, maxStoreBytes, currentSessionId)) victims.add(victim);
			await runWithConcurrency([...victims], DEFAULT_HOUSEKEEPING_CONCURRENCY, async (entry) => {
				if (await this.removeEntry(entry.txtPath, entry.jsonPath, result)) {
					result.removedForQuota++;
					totalBytes -= entry.bytes;
				}
			});
		}
		result.remainingBytes = totalBytes;
		// What is left is the picture the commits' quota starts from.
		if (this.maxStoreBytes !== undefined) {
			this.picture.replace(
				entries.filter((entry) => !victims.has(entry)),
				pictureSeq,
				(id) => this.isCommitting(id),
			);
		}
	}

	/**
	 * After a commit (its entry still marked as committing): when the store as this instance knows
	 * it fits the quota and that knowledge is fresh enough, that is all — no I/O. Otherwise a quota
	 * pass runs before the commit resolves. Passes run one at a time, so a queued one may find room
	 * already; each protects the entries still waiting for theirs, so of two that cannot both fit,
	 * the later stays.
	 */
	private async keepWithinQuota(meta: EntryMeta, bytes: number): Promise<CommitResult> {
		const result: CommitResult = { removedForQuota: 0, errors: [] };
		const quota = this.maxStoreBytes;
		if (quota === undefined) return result;
		this.picture.add({ id: meta.id, bytes, createdMs: Date.parse(meta.createdAt), sessionId: meta.sessionId });
		if (!this.needsQuotaPass(quota)) return result;
		const scansBefore = this.picture.scans;
		const pass = this.quotaQueue.then(async () => {
			await this.runQuotaPass(quota, meta.sessionId, scansBefore, result);
			// Its own pass over, the entry is no longer the one just written: the next pass may evict it.
			activeCommitPaths.delete(this.prefix + meta.id);
		});
		this.quotaQueue = pass;
		await pass;
		return result;
	}

	/**
	 * Over the quota as far as this instance knows, or its picture is stale: never scanned, or this
	 * instance has written more than the band below the quota since its last scan.
	 */
	private needsQuotaPass(quota: number): boolean {
		const picture = this.picture;
		return !picture.scanned || picture.totalBytes > quota || picture.bytesSinceScan > quota - lowWaterOf(quota);
	}

	/**
	 * Rescans the directory (the picture misses what other processes wrote or removed) unless a scan
	 * ended since the commit was counted, then evicts down to the low-water mark, so the next pass
	 * is a band of writes away: other sessions' entries first, then this session's, oldest first;
	 * never an entry being committed in this process. Never rejects.
	 */
	private async runQuotaPass(quota: number, sessionId: string, scansBefore: number, result: CommitResult): Promise<void> {
		try {
			if (!this.picture.scanned && this.housekeeping !== undefined) await this.housekeeping;
			if (!this.needsQuotaPass(quota)) return;
			if (this.picture.scans === scansBefore && !(await this.scanForQuota(result))) return;
			const targetBytes = lowWaterOf(quota);
			if (this.picture.totalBytes <= targetBytes) return;
			const candidates = this.picture.list().filter((entry) => !this.isCommitting(entry.id));
			const victims = selectVictims(candidates, this.picture.totalBytes, targetBytes, sessionId);
			await runWithConcurrency(victims, DEFAULT_HOUSEKEEPING_CONCURRENCY, async (victim) => {
				const { txtPath, jsonPath } = this.pathsOf(victim.id);
				if (await this.removeEntry(txtPath, jsonPath, result)) result.removedForQuota++;
				// Forgotten even when it could not be removed (that is reported): a failing disk must not
				// make every later commit rescan; the next scan finds it again.
				this.picture.delete(victim.id);
			});
		} catch (error) {
			result.errors.push(`quota pass stopped: ${describeError(error)}`);
		}
	}

	/**
	 * Brings the picture up to date: one readdir; metadata is read only for entries it does not know.
	 * False when the directory cannot be listed (nothing is evicted then).
	 */
	private async scanForQuota(result: CommitResult): Promise<boolean> {
		const pictureSeq = this.picture.seq;
		const dirents = await this.listRoot("quota pass", result);
		if (dirents === undefined) return false;
		const found: KnownEntry[] = [];
		const unknown: EntryPaths[] = [];
		for (const [id, has] of classifyStoreNames(dirents, this.prefix).halves) {
			// Entries being committed count too (another store instance's are in no picture here).
			if (has !== (HAS_TXT | HAS_JSON)) continue;
			const known = this.picture.get(id);
			if (known !== undefined) found.push(known);
			else unknown.push(this.pathsOf(id));
		}
		// Metadata that is not ours is left to housekeeping (it removes it once old): not counted here.
		await this.readEntryMetas(unknown, result, (_entry, known) => found.push(known));
		this.picture.replace(found, pictureSeq, (id) => this.isCommitting(id));
		return true;
	}

	/**
	 * The store directory's entries, never read through a symlink: none when it does not exist
	 * (it is not created just to find it empty); undefined (reported) when it cannot be listed.
	 */
	private async listRoot(task: string, result: { errors: string[] }): Promise<StoreDirent[] | undefined> {
		const rootStats = await this.lstatOrUndefined(this.root);
		if (rootStats === undefined) return [];
		if (rootStats.isSymbolicLink() || !rootStats.isDirectory()) {
			result.errors.push(`store directory ${this.root} is not a plain directory; ${task} skipped`);
			return undefined;
		}
		try {
			return await this.fs.readdir(this.root);
		} catch (error) {
			if (readErrorCode(error) === "ENOENT") return [];
			result.errors.push(`cannot list ${this.root}: ${describeError(error)}`);
			return undefined;
		}
	}

	/**
	 * Reads complete entries' metadata in batches (bounded memory) and hands each valid one on with
	 * its size (.txt + .json). Returns the entries whose metadata is not ours (invalid or too large).
	 */
	private async readEntryMetas(
		complete: readonly EntryPaths[],
		result: { errors: string[] },
		onEntry: (entry: EntryPaths, known: KnownEntry) => void,
	): Promise<EntryPaths[]> {
		const invalid: EntryPaths[] = [];
		for (let start = 0; start < complete.length; start += DEFAULT_META_BATCH_FILES) {
			const batch = complete.slice(start, start + DEFAULT_META_BATCH_FILES);
			const contents = await this.fs.readSmallTextFiles(batch.map((entry) => entry.jsonPath), DEFAULT_MAX_META_BYTES);
			batch.forEach((entry, index) => {
				const content = contents[index];
				if (typeof content !== "string") {
					const code = readErrorCode(content);
					// ENOENT: a concurrent housekeeper removed it. EFBIG: not ours, judged by the caller. Else: leave it alone.
					if (code === "EFBIG") invalid.push(entry);
					else if (code !== "ENOENT") result.errors.push(`cannot read ${entry.jsonPath}: ${describeError(content)}`);
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

	private pathsOf(id: string): EntryPaths {
		return { id, txtPath: `${this.prefix}${id}.txt`, jsonPath: `${this.prefix}${id}.json` };
	}

	/** True while this process commits the entry (its quota pass included). */
	private isCommitting(id: string): boolean {
		return activeCommitPaths.size > 0 && activeCommitPaths.has(this.prefix + id);
	}

	/** lstat that answers only for regular files; ENOENT (a concurrent housekeeper) is not an error. */
	private async lstatRegularFile(path: string, result: { errors: string[] }): Promise<StoreStats | undefined> {
		try {
			const stats = await this.fs.lstat(path);
			return stats.isFile() ? stats : undefined;
		} catch (error) {
			if (readErrorCode(error) !== "ENOENT") result.errors.push(`cannot stat ${path}: ${describeError(error)}`);
			return undefined;
		}
	}

	/** True when this call removed the file (ENOENT: someone else did, not counted, not an error). */
	private async removeFile(path: string, result: { errors: string[] }): Promise<boolean> {
		try {
			await this.fs.unlink(path);
			return true;
		} catch (error) {
			if (readErrorCode(error) !== "ENOENT") result.errors.push(`cannot remove ${path}: ${describeError(error)}`);
			return false;
		}
	}

	/**
   * The .json first, so readers see "unknown" before the text disappears. Counted by whoever
   * removed the .json, so two housekeepers racing over one entry count it once between them.
   */
	private async removeEntry(txtPath: string, jsonPath: string, result: { errors: string[] }): Promise<boolean> {
		const removedJson = await this.removeFile(jsonPath, result);
		await this.removeFile(txtPath, result);
		return removedJson;
	}
}

interface EntryPaths {
	id: string;
	txtPath: string;
	jsonPath: string;
}

/** What eviction needs to know of a complete entry. */
interface KnownEntry {
	id: string;
	createdMs: number;
	/** .txt + .json. */
	bytes: number;
	/** undefined when the metadata is not readable (never the current session's). */
	sessionId: string | undefined;
}

type LiveEntry = EntryPaths & KnownEntry;

/** Our temp files, and which halves of each entry are present; other names and non-regular files are left out. */
function classifyStoreNames(dirents: readonly StoreDirent[], prefix: string): { temps: { path: string; pid: number }[]; halves: Map<string, number> } {
	// readdir's types spare an lstat per file: symlinks, directories and sockets are never looked at again.
	const temps: { path: string; pid: number }[] = [];
	const halves = new Map<string, number>(); // id -> HAS_TXT | HAS_JSON
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

/** The quota's low-water mark: what a quota pass evicts down to. */
function lowWaterOf(quota: number): number {
	return Math.floor(quota * DEFAULT_QUOTA_LOW_WATER_RATIO);
}

/**
 * The entries to evict until `totalBytes` is at most `targetBytes`: other sessions' first, then
 * the current session's, oldest first within each (ties by id, so every process agrees).
 */
function selectVictims<T extends KnownEntry>(entries: readonly T[], totalBytes: number, targetBytes: number, currentSessionId: string | undefined): T[] {
	const isCurrent = (entry: KnownEntry) => currentSessionId !== undefined && entry.sessionId === currentSessionId;
	const ordered = [...entries].sort((a, b) => {
		if (isCurrent(a) !== isCurrent(b)) return isCurrent(a) ? 1 : -1;
		if (a.createdMs !== b.createdMs) return a.createdMs - b.createdMs;
		return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
	});
	const victims: T[] = [];
	let planned = totalBytes;
	for (const entry of ordered) {
		if (planned <= targetBytes) break;
		victims.push(entry);
		planned -= entry.bytes;
	}
	return victims;
}

/**
 * One store instance's picture of the complete entries, for the quota at commit time: seeded by
 * housekeeping, kept by its own commits and evictions, refreshed by a scan when it may be stale
 * (other processes write and evict too). `seq` numbers what commits taught it, so a scan never
 * forgets a commit that landed after the scan began.
 */
class EntryPicture {
	/** Scans (housekeeping's or a quota pass's) that have replaced the picture so far. */
	scans = 0;
	/** False until housekeeping or a quota pass has listed the directory. */
	scanned = false;
	totalBytes = 0;
	/** Bytes added by commits since the last scan began. */
	bytesSinceScan = 0;
	/** The number of the last add. */
	seq = 0;
	private entries = new Map<string, KnownEntry & { seq: number }>();

	get(id: string): KnownEntry | undefined {
		return this.entries.get(id);
	}

	list(): KnownEntry[] {
		return [...this.entries.values()];
	}

	add(entry: KnownEntry): void {
		this.delete(entry.id);
		this.entries.set(entry.id, { ...entry, seq: ++this.seq });
		this.totalBytes += entry.bytes;
		this.bytesSinceScan += entry.bytes;
	}

	delete(id: string): void {
		const known = this.entries.get(id);
		if (known === undefined) return;
		this.entries.delete(id);
		this.totalBytes -= known.bytes;
	}

	/**
	 * What a scan that began at `startSeq` found. Kept from before: what commits added since then,
	 * and entries still being committed (housekeeping leaves those out).
	 */
	replace(found: readonly KnownEntry[], startSeq: number, isCommitting: (id: string) => boolean): void {
		const next = new Map<string, KnownEntry & { seq: number }>();
		for (const entry of found) next.set(entry.id, { id: entry.id, createdMs: entry.createdMs, bytes: entry.bytes, sessionId: entry.sessionId, seq: 0 });
		this.bytesSinceScan = 0;
		for (const [id, known] of this.entries) {
			if (known.seq > startSeq) this.bytesSinceScan += known.bytes;
			if (known.seq > startSeq || isCommitting(id)) next.set(id, known);
		}
		this.entries = next;
		this.totalBytes = 0;
		for (const known of next.values()) this.totalBytes += known.bytes;
		this.scanned = true;
		this.scans++;
	}
}

class TempEntryWriter implements EntryWriter {
	private handle: StoreFileHandle | undefined;
	private tempPath: string | undefined;
	private state: "open" | "committing" | "committed" | "failed" | "aborted" = "open";
	private failure: StoreError | undefined;
	private queue: Promise<void> = Promise.resolve();
	private written = 0;
	private newlines = 0;
	private lastByte = -1;

	constructor(
		private readonly fs: StoreFs,
		private readonly prefix: string,
		private readonly id: string,
		handle: StoreFileHandle,
		tempPath: string,
		/** The store's quota pass; never rejects. */
		private readonly onCommitted: (meta: EntryMeta, bytes: number) => Promise<CommitResult>,
	) {
		this.handle = handle;
		this.tempPath = tempPath;
	}

	get bytesWritten(): number {
		return this.written;
	}

	get linesWritten(): number {
		return this.newlines + (this.written > 0 && this.lastByte !== 0x0a ? 1 : 0);
	}

	write(chunk: Uint8Array): Promise<void> {
		const next = this.queue.then(() => this.writeNow(chunk));
		this.queue = next.catch(() => undefined);
		return next;
	}

	async commit(meta: EntryMeta): Promise<CommitResult> {
		await this.queue;
		this.assertOpen();
		this.state = "committing";
		const commitKey = this.prefix + this.id;
		// Held through the quota pass too: housekeeping and eviction leave the entry just written alone.
		activeCommitPaths.add(commitKey);
		try {
			const placed = await this.place(meta);
			return await this.onCommitted(placed.meta, placed.bytes);
		} finally {
			activeCommitPaths.delete(commitKey);
		}
	}

	/** The commit's file work: the .txt renamed into place, then the .json. Returns the clean metadata and the entry's bytes. */
	private async place(meta: EntryMeta): Promise<{ meta: EntryMeta; bytes: number }> {
		const fs = this.fs;
		const txtPath = `${this.prefix}${this.id}.txt`;
		const jsonPath = `${this.prefix}${this.id}.json`;
		let jsonTempPath: string | undefined;
		let txtRenamed = false;
		try {
			const clean = this.checkMeta(meta);
			const body = Buffer.from(`${JSON.stringify(clean, null, 2)}\n`, "utf8");
			const handle = this.handle as StoreFileHandle;
			await handle.sync();
			this.handle = undefined;
			await handle.close();
			// Never replaces an entry: an id answers with one result's content only (placeNew fails with EEXIST).
			await placeNew(fs, this.tempPath as string, txtPath);
			txtRenamed = true;
			activeTempPaths.delete(this.tempPath as string);
			this.tempPath = undefined;

			const opened = await openTempFile(fs, this.prefix, this.id);
			jsonTempPath = opened.path;
			try {
				await writeFully(opened.handle, body);
				await opened.handle.sync();
			} catch (error) {
				await closeQuietly(opened.handle);
				throw error;
			}
			// close() can report a deferred write error (NFS): on the success path it is not ignored.
			await opened.handle.close();
			await placeNew(fs, jsonTempPath, jsonPath);
			activeTempPaths.delete(jsonTempPath);
			jsonTempPath = undefined;
			this.state = "committed";
			return { meta: clean, bytes: this.written + body.length };
		} catch (error) {
			this.failure = toStoreError(error);
			this.state = "failed";
			if (jsonTempPath !== undefined) {
				await unlinkQuietly(fs, jsonTempPath);
				activeTempPaths.delete(jsonTempPath);
			}
			// No unpaired entry: the text goes when its metadata could not be written.
			if (txtRenamed) await unlinkQuietly(fs, txtPath);
			await this.discardTemp();
			throw this.failure;
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
		await this.discardTemp();
	}

	private async writeNow(chunk: Uint8Array): Promise<void> {
		this.assertOpen();
		if (!(chunk instanceof Uint8Array)) {
			throw createStoreError("EINVAL", `write expects a Uint8Array chunk, got ${typeof chunk}`);
		}
		if (chunk.length === 0) return;
		try {
			await writeFully(this.handle as StoreFileHandle, chunk);
		} catch (error) {
			this.failure = toStoreError(error);
			this.state = "failed";
			await this.discardTemp();
			throw this.failure;
		}
		this.written += chunk.length;
		for (let index = chunk.indexOf(0x0a); index !== -1; index = chunk.indexOf(0x0a, index + 1)) this.newlines++;
		this.lastByte = chunk[chunk.length - 1];
	}

	private assertOpen(): void {
		if (this.state === "open") return;
		if (this.state === "failed" && this.failure !== undefined) throw this.failure;
		throw createStoreError("EBADF", `entry ${this.id} is already ${this.state}`);
	}

	private checkMeta(meta: EntryMeta): EntryMeta {
		const clean = parseEntryMeta(meta);
		if (clean === undefined) throw createStoreError("EINVAL", `invalid metadata for entry ${this.id}`);
		if (clean.id !== this.id) throw createStoreError("EINVAL", `metadata id ${clean.id} does not match entry ${this.id}`);
		if (clean.storedBytes !== this.written) {
			throw createStoreError("EINVAL", `metadata storedBytes ${clean.storedBytes} does not match the ${this.written} bytes written`);
		}
		if (clean.storedLines !== this.linesWritten) {
			throw createStoreError("EINVAL", `metadata storedLines ${clean.storedLines} does not match the ${this.linesWritten} lines written`);
		}
		return clean;
	}

	private async discardTemp(): Promise<void> {
		const handle = this.handle;
		const tempPath = this.tempPath;
		this.handle = undefined;
		this.tempPath = undefined;
		if (handle !== undefined) await closeQuietly(handle);
		if (tempPath !== undefined) {
			await unlinkQuietly(this.fs, tempPath);
			activeTempPaths.delete(tempPath);
		}
	}
}

/** Opens `.<id>.<pid>.<hex>.tmp` exclusively, never through a symlink, and makes it exactly 0600. */
async function openTempFile(fs: StoreFs, prefix: string, id: string): Promise<{ handle: StoreFileHandle; path: string }> {
	const { O_CREAT, O_EXCL, O_WRONLY, O_NOFOLLOW } = fs.constants;
	const path = prefix + createTempName(id);
	// Marked active before it exists: housekeeping treats a file of this pid that is not marked as abandoned.
	activeTempPaths.add(path);
	let handle: StoreFileHandle;
	try {
		handle = await fs.open(path, O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW, DEFAULT_FILE_MODE);
	} catch (error) {
		activeTempPaths.delete(path);
		throw error;
	}
	try {
		// open's mode is filtered by the umask; fchmod makes it exactly 0600 whatever the umask.
		await handle.chmod(DEFAULT_FILE_MODE);
	} catch (error) {
		await closeQuietly(handle);
		await unlinkQuietly(fs, path);
		activeTempPaths.delete(path);
		throw error;
	}
	return { handle, path };
}

async function unlinkQuietly(fs: StoreFs, path: string): Promise<void> {
	try {
		await fs.unlink(path);
	} catch {
		// Best effort: ENOENT means someone else already removed it; anything else we cannot fix here.
	}
}

/**
 * Moves a finished temp file to its final name, failing with EEXIST instead of replacing a file
 * there: link(2) then unlink the temp name. Where hard links are not supported, an lstat that
 * finds nothing and then rename(2) (racy only against another writer of the same id).
 */
async function placeNew(fs: StoreFs, tempPath: string, finalPath: string): Promise<void> {
	try {
		await fs.link(tempPath, finalPath);
	} catch (error) {
		const code = readErrorCode(error);
		if (code !== "EPERM" && code !== "ENOTSUP" && code !== "EOPNOTSUPP" && code !== "ENOSYS") throw error;
		try {
			await fs.lstat(finalPath);
		} catch (missing) {
			if (readErrorCode(missing) !== "ENOENT") throw missing;
			await fs.rename(tempPath, finalPath);
			return;
		}
		throw createStoreError("EEXIST", `${finalPath} already exists`);
	}
	await unlinkQuietly(fs, tempPath);
}

async function writeFully(handle: StoreFileHandle, bytes: Uint8Array): Promise<void> {
	let offset = 0;
	while (offset < bytes.length) {
		const { bytesWritten } = await handle.write(bytes, offset, bytes.length - offset, null);
		if (!(bytesWritten > 0)) throw createStoreError("EIO", "write made no progress");
		offset += bytesWritten;
	}
}

async function closeQuietly(handle: StoreFileHandle): Promise<void> {
	try {
		await handle.close();
	} catch {
		// Already closed or the descriptor is gone: nothing left to release.
	}
}

/** `process.kill(pid, 0)`: ESRCH means gone; EPERM means alive but someone else's. */
function isProcessAlive(pid: number): boolean {
	if (!Number.isSafeInteger(pid) || pid < 1) return false;
	if (pid === process.pid) return true;
	try {
		process.kill(pid, 0);
		return true;
	} catch (error) {
		return readErrorCode(error) === "EPERM";
	}
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

async function runWithConcurrency<T>(items: readonly T[], limit: number, task: (item: T) => Promise<void>): Promise<void> {
	let next = 0;
	const workers = Array.from({ length: Math.min(limit, items.length) }, async () => {
		while (next < items.length) {
			const item = items[next++];
			await task(item);
		}
	});
	await Promise.all(workers);
}
