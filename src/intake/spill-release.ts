// No world-readable copies: once a result's output is committed to the private store, Pi's own
// `<tmpdir>/pi-bash-<hex>.log` of it is removed and the result's details.fullOutputPath (and any
// mention of the file in the text the model keeps) points to the private copy instead. Invariants:
// only a file named as Pi names its spill files, in the OS temp directory, that is a regular file of
// this user with the size the stored entry says, and that the entry was read from (source
// "spill-file") is ever removed; when the entry left the middle out (maxEntryBytes) the file is the
// only whole copy, so it is kept and made private (0600) instead. The spill file of the user's own
// `!`/`!!` command is never removed (Pi's screen and session name it): makeSpillFilePrivate makes it
// 0600 where it is. Never throws.

import { constants } from "node:fs";
import { lstat, open, unlink } from "node:fs/promises";
import type { ContentPart, ToolResultPatch } from "./tool-result.js";
import { isPiBashSpillPath } from "./pi-bash.js";
import { joinTextParts } from "./stash.js";
import type { OverflowStore } from "../store/index.js";

/** Mode a kept spill file is given (the stored copy left its middle out, so it stays the whole output). */
const PRIVATE_FILE_MODE = 0o600;

/** What makeSpillFilePrivate found: private now (made so or already), not there (yet), or not Pi's file of this user. */
export type SpillPrivacy = "private" | "missing" | "refused";

/**
 * Makes Pi's own spill file `spillPath` private (0600) where it is, when it is a regular file of
 * this user (of `size` bytes, when given); the file is opened without following a symlink or
 * blocking, and changed through that descriptor, so what is checked is what is changed.
 */
export async function makeSpillFilePrivate(
	spillPath: string,
	uid: number | undefined = process.getuid?.(),
	size?: number,
): Promise<SpillPrivacy> {
	if (!isPiBashSpillPath(spillPath)) return "refused";
	let handle: Awaited<ReturnType<typeof open>>;
	try {
		handle = await open(spillPath, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
	} catch (error) {
		return (error as NodeJS.ErrnoException).code === "ENOENT" ? "missing" : "refused";
	}
	try {
		const stats = await handle.stat();
		if (!stats.isFile() || (uid !== undefined && stats.uid !== uid) || (size !== undefined && stats.size !== size))
			return "refused";
		if ((stats.mode & 0o077) !== 0) await handle.chmod(PRIVATE_FILE_MODE);
		return "private";
	} catch {
		return "refused";
	} finally {
		await handle.close().catch(() => {});
	}
}

/** What was done with the spill file of one result. */
export type SpillRelease = "removed" | "made-private" | "none";

/**
 * Removes (or makes private) `spillPath`, the file the bound stage read the committed entry from
 * (boundToolResult's onSpillUsed), when it is Pi's own temp file, and returns the patch with
 * details.fullOutputPath and the text pointing to the private copy. The patch is returned as it is
 * when nothing qualifies, or when the text naming the private copy would exceed `maxChars`.
 */
export async function releaseSpillFile(
	patch: ToolResultPatch,
	spillPath: string,
	store: OverflowStore,
	maxChars: number,
	uid: number | undefined = process.getuid?.(),
): Promise<{ patch: ToolResultPatch; release: SpillRelease }> {
	const unchanged = { patch, release: "none" as const };
	try {
		const id = readOverflowId(patch.details);
		if (id === undefined || !isPiBashSpillPath(spillPath)) return unchanged;
		const meta = await store.readMeta(id);
		if (meta === undefined || meta.source !== "spill-file") return unchanged;
		if (meta.truncated) {
			const privacy = await makeSpillFilePrivate(spillPath, uid, meta.totalBytes);
			return privacy === "private" ? { patch, release: "made-private" } : unchanged;
		}
		const stats = await lstat(spillPath);
		if (!stats.isFile() || (uid !== undefined && stats.uid !== uid) || stats.size !== meta.totalBytes) return unchanged;
		const released = pointToPrivateCopy(patch, spillPath, store.textPath(id));
		// The private path may be longer than Pi's: a text that would no longer fit keeps Pi's file.
		if (joinTextParts(released.content).length > maxChars) return unchanged;
		await unlink(spillPath);
		return { patch: released, release: "removed" };
	} catch {
		return unchanged;
	}
}

function pointToPrivateCopy(patch: ToolResultPatch, spillPath: string, privatePath: string): ToolResultPatch {
	const content: ContentPart[] = patch.content.map((part) =>
		part.type === "text" && part.text.includes(spillPath)
			? { type: "text", text: part.text.split(spillPath).join(privatePath) }
			: part,
	);
	const details =
		isRecord(patch.details) && typeof patch.details.fullOutputPath === "string"
			? { ...patch.details, fullOutputPath: privatePath }
			: patch.details;
	return { content, details };
}

function readOverflowId(details: unknown): string | undefined {
	if (!isRecord(details) || !isRecord(details.overflow)) return undefined;
	const id = details.overflow.id;
	return typeof id === "string" ? id : undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
	return typeof value === "object" && value !== null && !Array.isArray(value);
}
