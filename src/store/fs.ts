// The store's file system: the subset of node:fs the store uses (StoreFs), injected so that tests
// can fail any call with an errno code, and NODE_STORE_FS, the real one. Invariants: every failure
// the store passes on is an Error with a `code` (StoreError), matched by code, never by text; a
// handle never touches its descriptor after close (a reused fd is never read or written); small
// files are read without following a symlink or blocking on a FIFO.

import * as nodeFs from "node:fs";

/** Files NODE_STORE_FS reads synchronously before it yields to the event loop (about a millisecond). */
export const DEFAULT_READ_SLICE_FILES = 128;

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

/** The part of fs/promises FileHandle the writer uses. */
export interface StoreFileHandle {
	write(buffer: Uint8Array, offset: number, length: number, position: number | null): Promise<{ bytesWritten: number }>;
	sync(): Promise<void>;
	chmod(mode: number): Promise<void>;
	close(): Promise<void>;
}

/** The part of fs/promises FileHandle a reader of stored text uses, and its descriptor. */
export interface StoreReadHandle {
	/** The descriptor, for a reader in another thread of this process (the search worker); valid until close(). */
	readonly fd: number;
	/** fstat: what was opened, whatever has happened to its name since. */
	stat(): Promise<StoreStats>;
	/** pread: reads at `position`, never moves a file offset. */
	read(buffer: Uint8Array, offset: number, length: number, position: number): Promise<{ bytesRead: number }>;
	close(): Promise<void>;
}

/** The subset of node:fs/promises the store uses; inject it to simulate ENOSPC, EACCES, EIO... */
export interface StoreFs {
	open(path: string, flags: number, mode?: number): Promise<StoreFileHandle>;
	/** Opens a file for reading (the store's readers pass O_RDONLY|O_NOFOLLOW|O_NONBLOCK). */
	openRead(path: string, flags: number): Promise<StoreReadHandle>;
	lstat(path: string): Promise<StoreStats>;
	mkdir(path: string, options: { recursive?: boolean; mode?: number }): Promise<string | undefined | void>;
	chmod(path: string, mode: number): Promise<void>;
	rename(from: string, to: string): Promise<void>;
	/** Fails with EEXIST when `to` exists: how commit places a file without ever replacing one. */
	link(from: string, to: string): Promise<void>;
	unlink(path: string): Promise<void>;
	/** Removes an empty directory (ENOTEMPTY otherwise), like fs.promises.rmdir. */
	rmdir(path: string): Promise<void>;
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

/** An Error with a `code`, like Node's own, so callers match on `code`, never on text. */
export interface StoreError extends Error {
	code: string;
}

export function createStoreError(code: string, message: string): StoreError {
	const error = new Error(message) as StoreError;
	error.code = code;
	return error;
}

export function readErrorCode(error: unknown): string | undefined {
	if (typeof error !== "object" || error === null) return undefined;
	const code = (error as { code?: unknown }).code;
	return typeof code === "string" ? code : undefined;
}

/** Makes sure what we rethrow is an Error carrying a `code` (EIO when the cause had none). */
export function toStoreError(error: unknown): StoreError {
	if (error instanceof Error && readErrorCode(error) !== undefined) return error as StoreError;
	const wrapped = createStoreError("EIO", error instanceof Error ? error.message : String(error));
	(wrapped as Error & { cause?: unknown }).cause = error;
	return wrapped;
}

type FsCallback<T> = (error: NodeJS.ErrnoException | null, value: T) => void;

/** Runs a callback-style fs call as a promise: several times cheaper than node:fs/promises per call. */
function callFs<T>(run: (done: FsCallback<T>) => void): Promise<T> {
	return new Promise<T>((resolve, reject) => {
		run((error, value) => (error ? reject(error) : resolve(value)));
	});
}

/** Runs calls on a raw descriptor until close(); after it every call fails with EBADF and never touches a reused fd. */
function guardFd(fd: number): {
	withFd: <T>(run: (done: FsCallback<T>) => void) => Promise<T>;
	close: () => Promise<void>;
} {
	let closed = false;
	return {
		withFd: (run) => (closed ? Promise.reject(createStoreError("EBADF", "file handle is closed")) : callFs(run)),
		close: () => {
			if (closed) return Promise.resolve();
			closed = true;
			return callFs<void>((done) => nodeFs.close(fd, (error) => done(error, undefined)));
		},
	};
}

function createFileHandle(fd: number): StoreFileHandle {
	const { withFd, close } = guardFd(fd);
	return {
		write: (buffer, offset, length, position) =>
			withFd<number>((done) => nodeFs.write(fd, buffer, offset, length, position, done)).then((bytesWritten) => ({
				bytesWritten,
			})),
		sync: () => withFd<void>((done) => nodeFs.fsync(fd, (error) => done(error, undefined))),
		chmod: (mode) => withFd<void>((done) => nodeFs.fchmod(fd, mode, (error) => done(error, undefined))),
		close,
	};
}

function createReadHandle(fd: number): StoreReadHandle {
	const { withFd, close } = guardFd(fd);
	return {
		fd,
		stat: () => withFd<StoreStats>((done) => nodeFs.fstat(fd, done)),
		read: (buffer, offset, length, position) =>
			withFd<number>((done) => nodeFs.read(fd, buffer, offset, length, position, done)).then((bytesRead) => ({
				bytesRead,
			})),
		close,
	};
}

/** The real file system. Tests spread it and replace one method to inject a failure. */
export const NODE_STORE_FS: StoreFs = {
	open: (path, flags, mode) => callFs<number>((done) => nodeFs.open(path, flags, mode, done)).then(createFileHandle),
	openRead: (path, flags) => callFs<number>((done) => nodeFs.open(path, flags, done)).then(createReadHandle),
	lstat: (path) => callFs<StoreStats>((done) => nodeFs.lstat(path, done)),
	mkdir: (path, options) => callFs<string | undefined>((done) => nodeFs.mkdir(path, options, done)),
	chmod: (path, mode) => callFs<void>((done) => nodeFs.chmod(path, mode, (error) => done(error, undefined))),
	rename: (from, to) => callFs<void>((done) => nodeFs.rename(from, to, (error) => done(error, undefined))),
	link: (from, to) => callFs<void>((done) => nodeFs.link(from, to, (error) => done(error, undefined))),
	unlink: (path) => callFs<void>((done) => nodeFs.unlink(path, (error) => done(error, undefined))),
	rmdir: (path) => callFs<void>((done) => nodeFs.rmdir(path, (error) => done(error, undefined))),
	readdir: (path) => callFs<StoreDirent[]>((done) => nodeFs.readdir(path, { withFileTypes: true }, done)),
	readSmallTextFiles: (paths, maxBytes) => readSmallTextFilesInSlices(paths, maxBytes),
	constants: nodeFs.constants,
};

/**
 * Synchronous reads in slices, yielding between slices: a thread-pool round trip for each of
 * open/read/close costs ~10x the system call itself, and 10 000 metadata files must take well
 * under a second. A slice blocks the event loop for about a millisecond.
 */
async function readSmallTextFilesInSlices(
	paths: readonly string[],
	maxBytes: number,
): Promise<(string | StoreError)[]> {
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
