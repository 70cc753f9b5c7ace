// The file-level steps of the store's atomic write (writer.ts): writing a buffer whole, placing a
// finished temp file under a final name that must not exist yet, and the best-effort close and
// unlink of cleanup. Invariant: placeNew never replaces a file; failures keep their `code`.

import { createStoreError, readErrorCode, type StoreFileHandle, type StoreFs } from "./fs.js";

/**
 * Moves a finished temp file to its final name, failing with EEXIST instead of replacing a file
 * there: link(2) then unlink the temp name. Where hard links are not supported, an lstat that
 * finds nothing and then rename(2) (racy only against another writer of the same id).
 */
export async function placeNew(fs: StoreFs, tempPath: string, finalPath: string): Promise<void> {
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

export async function writeFully(handle: StoreFileHandle, bytes: Uint8Array): Promise<void> {
	let offset = 0;
	while (offset < bytes.length) {
		const { bytesWritten } = await handle.write(bytes, offset, bytes.length - offset, null);
		if (!(bytesWritten > 0)) throw createStoreError("EIO", "write made no progress");
		offset += bytesWritten;
	}
}

export async function closeQuietly(handle: StoreFileHandle): Promise<void> {
	try {
		await handle.close();
	} catch {
		// Already closed or the descriptor is gone: nothing left to release.
	}
}

export async function unlinkQuietly(fs: StoreFs, path: string): Promise<void> {
	try {
		await fs.unlink(path);
	} catch {
		// Best effort: ENOENT means someone else already removed it; anything else we cannot fix here.
	}
}
