// Where the original of a tool result comes from, and how it is copied. A spill file is opened
// without following a final symlink and without blocking (a FIFO or device is refused before any
// read), checked to be a regular file and streamed in fixed chunks: it is never read whole. An
// original larger than `maxEntryBytes` keeps its head and its tail, cut at line boundaries, with
// one marker line between them; the part left out is only counted for newlines, never decoded.

import { constants, type promises as fsPromises } from "node:fs";
import { open } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, dirname, isAbsolute, resolve } from "node:path";

/** Bytes read at a time from a spill file. */
export const READ_CHUNK_BYTES = 1024 * 1024;

/** Random-access bytes: a file descriptor or a buffer in memory. */
export interface ByteSource {
	readonly size: number;
	/** Reads into `target` from `position`; returns the bytes read. */
	read(target: Buffer, position: number): Promise<number>;
	close(): Promise<void>;
}

export function bufferSource(bytes: Buffer): ByteSource {
	return {
		size: bytes.length,
		async read(target, position) {
			return bytes.copy(target, 0, position, Math.min(bytes.length, position + target.length));
		},
		async close() {},
	};
}

export type OpenSpillResult = { ok: true; source: ByteSource } | { ok: false; reason: string };

/** Opens a spill file for streaming, or says why it cannot be used. Never blocks on a FIFO. */
export async function openSpillFile(path: string): Promise<OpenSpillResult> {
	let handle: fsPromises.FileHandle;
	try {
		handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
	} catch (error) {
		return { ok: false, reason: `spill file ${describeError(error)}` };
	}
	try {
		const stats = await handle.stat();
		if (!stats.isFile()) {
			await handle.close();
			return { ok: false, reason: `spill file is not a regular file (${fileKind(stats)})` };
		}
		const size = stats.size;
		return {
			ok: true,
			source: {
				size,
				async read(target, position) {
					const length = Math.max(0, Math.min(target.length, size - position));
					if (length === 0) return 0;
					const { bytesRead } = await handle.read(target, 0, length, position);
					return bytesRead;
				},
				close: () => handle.close(),
			},
		};
	} catch (error) {
		await handle.close().catch(() => {});
		return { ok: false, reason: `spill file ${describeError(error)}` };
	}
}

function fileKind(stats: { isDirectory(): boolean; isFIFO(): boolean; isCharacterDevice(): boolean; isBlockDevice(): boolean; isSocket(): boolean }): string {
	if (stats.isDirectory()) return "a directory";
	if (stats.isFIFO()) return "a FIFO";
	if (stats.isCharacterDevice() || stats.isBlockDevice()) return "a device";
	if (stats.isSocket()) return "a socket";
	return "not a regular file";
}

export function describeError(error: unknown): string {
	const code = typeof error === "object" && error !== null ? (error as { code?: unknown }).code : undefined;
	const message = error instanceof Error ? error.message : String(error);
	const short = message.replace(/\s+/g, " ").slice(0, 200);
	return typeof code === "string" && !short.startsWith(code) ? `${code}: ${short}` : short;
}

// Pi's bash notice when it cut the output, followed by the status line it throws with on failure.
const PI_BASH_FAILURE_NOTICE =
	/\[Showing [^\]\n]{1,200}Full output: ([^\]\n]{1,4096})\]\n\n(?:Command exited with code -?\d+|Command timed out after [\d.]+ seconds|Command aborted)$/;
const PI_BASH_SPILL_NAME = /^pi-bash-[0-9a-f]{1,64}\.log$/;
/** Only the end of a failed bash result is searched for Pi's notice. */
const NOTICE_SEARCH_CHARS = 8192;

/**
 * The spill path named in Pi's own notice at the end of a failed bash result (where Pi throws and
 * `details` is lost). Accepted only as `<os tmpdir>/pi-bash-<hex>.log`.
 */
export function findFailedBashSpillPath(text: string): string | undefined {
	const end = text.length > NOTICE_SEARCH_CHARS ? text.slice(-NOTICE_SEARCH_CHARS) : text;
	const match = PI_BASH_FAILURE_NOTICE.exec(end);
	if (!match) return undefined;
	const path = match[1];
	if (!isAbsolute(path) || resolve(path) !== path) return undefined;
	if (dirname(path) !== resolve(tmpdir()) || !PI_BASH_SPILL_NAME.test(basename(path))) return undefined;
	return path;
}

/**
 * The output Pi kept before its notice; a spill file named by the notice must end with it, so a
 * command that merely prints such a notice cannot make pi-overflow read another command's file.
 */
export function outputBeforeNotice(text: string): string {
	const at = text.lastIndexOf("\n\n[Showing ");
	return at >= 0 ? text.slice(0, at) : "";
}

/** True when the source's last bytes, decoded, end with the given text (compared on its last 256 characters). */
export async function sourceEndsWith(source: ByteSource, text: string): Promise<boolean> {
	const expected = text.replace(/\n+$/, "").slice(-256);
	if (expected.length === 0) return true;
	const length = Math.min(source.size, 4096);
	const buffer = Buffer.alloc(length);
	const read = await source.read(buffer, source.size - length);
	return buffer.toString("utf8", 0, read).replace(/\n+$/, "").endsWith(expected);
}

export interface PumpResult {
	/** Bytes of the original. */
	originalBytes: number;
	/** Bytes passed to the sink (the stored copy). */
	storedBytes: number;
	/** The middle was left out. */
	truncated: boolean;
}

/**
 * Streams the source to `sink`, capped at `maxEntryBytes`: beyond it, the head and the tail (about
 * half each, cut at line boundaries) with one marker line between them, counted inside the cap.
 * The sink must be done with a chunk when its promise resolves (the buffer is reused).
 */
export async function pumpCapped(
	source: ByteSource,
	maxEntryBytes: number,
	sink: (chunk: Buffer) => void | Promise<void>,
): Promise<PumpResult> {
	const size = source.size;
	const buffer = Buffer.allocUnsafe(Math.min(READ_CHUNK_BYTES, Math.max(1, size)));
	const copyRange = async (from: number, to: number): Promise<number> => {
		let copied = 0;
		for (let at = from; at < to; ) {
			const want = Math.min(buffer.length, to - at);
			const read = await source.read(want === buffer.length ? buffer : buffer.subarray(0, want), at);
			if (read <= 0) break;
			await sink(buffer.subarray(0, read));
			at += read;
			copied += read;
		}
		return copied;
	};
	if (size <= maxEntryBytes) {
		const storedBytes = await copyRange(0, size);
		return { originalBytes: size, storedBytes, truncated: false };
	}

	// The marker is measured at its longest (every count as large as the original) so the copy fits.
	const markerFor = (leftOutBytes: number, leftOutLines: number, newline: boolean): Buffer =>
		Buffer.from(
			`${newline ? "\n" : ""}[pi-overflow: ${leftOutBytes} bytes (${leftOutLines} lines) left out here; the original was ${size} bytes, more than maxEntryBytes=${maxEntryBytes}]\n`,
		);
	const half = Math.max(0, Math.floor((maxEntryBytes - markerFor(size, size, true).length) / 2));
	const headEnd = await findCut(source, half, "back");
	const tailStart = await findCut(source, size - half, "forward");
	let leftOutLines = 0;
	for (let at = headEnd; at < tailStart; ) {
		const want = Math.min(buffer.length, tailStart - at);
		const read = await source.read(buffer.subarray(0, want), at);
		if (read <= 0) break;
		for (let nl = buffer.indexOf(0x0a, 0); nl >= 0 && nl < read; nl = buffer.indexOf(0x0a, nl + 1)) leftOutLines++;
		at += read;
	}
	let stored = await copyRange(0, headEnd);
	const marker = markerFor(tailStart - headEnd, leftOutLines, stored > 0 && !(await endsWithNewline(source, headEnd)));
	await sink(marker);
	stored += marker.length;
	stored += await copyRange(tailStart, size);
	return { originalBytes: size, storedBytes: stored, truncated: true };
}

async function endsWithNewline(source: ByteSource, end: number): Promise<boolean> {
	if (end <= 0) return true;
	const one = Buffer.alloc(1);
	await source.read(one, end - 1);
	return one[0] === 0x0a;
}

/** Bytes searched for a newline on the far side of a cut before cutting inside a line. */
const CUT_SEARCH_BYTES = 64 * 1024;

/**
 * A cut near `position` on a line boundary: the end of the last whole line at or before it ("back")
 * or the start of the first whole line at or after it ("forward"), searched within 64 KiB; without a
 * newline there, the nearest UTF-8 character boundary on the same side.
 */
async function findCut(source: ByteSource, position: number, direction: "back" | "forward"): Promise<number> {
	if (position <= 0) return 0;
	if (position >= source.size) return source.size;
	// Both windows include the bytes just before and at `position`, which decide a cut right there.
	const from = direction === "back" ? Math.max(0, position - CUT_SEARCH_BYTES) : position - 1;
	const length = Math.min(direction === "back" ? position - from + 1 : CUT_SEARCH_BYTES + 1, source.size - from);
	const bytes = Buffer.alloc(length);
	const view = bytes.subarray(0, await source.read(bytes, from));
	const at = position - from;
	if (direction === "back") {
		const nl = view.subarray(0, at).lastIndexOf(0x0a);
		if (nl >= 0) return from + nl + 1;
	} else {
		const nl = view.indexOf(0x0a);
		if (nl >= 0) return from + nl + 1;
	}
	// No newline nearby: a character boundary (the byte at the cut is not a UTF-8 continuation byte).
	let cut = at;
	const step = direction === "back" ? -1 : 1;
	for (let moved = 0; moved < 3 && cut > 0 && cut < view.length && (view[cut] & 0xc0) === 0x80; moved++) cut += step;
	return from + cut;
}
