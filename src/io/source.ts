// Where the original of a tool result comes from, and how it is copied. A spill file is untrusted
// input: it is used only when it is a regular file of the user's own, with one link, written since
// the tool started and reached without a foreign symlink; it is opened without blocking (a FIFO or
// device is refused before any read) and streamed in fixed chunks, never read whole. An original
// larger than `maxEntryBytes` is stored as its head and its tail, cut at line boundaries, with one
// marker line between them; the scan still reads the middle, so line numbers stay the output's.

import { constants, type promises as fsPromises, read as readFd } from "node:fs";
import { lstat, open } from "node:fs/promises";
import type { Stats } from "node:fs";
import { dirname, isAbsolute } from "node:path";
import { acquireReadBuffers, releaseReadBuffers, SHARED_READ_BUFFER_BYTES } from "../prefilter/keyword-filter.js";
import { formatNote } from "../lines/protocol.js";
import { crAsNewline } from "../lines/records.js";
import { describeError } from "../lines/text.js";
import { TimeSlice } from "./time-slice.js";

/** Bytes read at a time from a spill file: the size of the scan's shared read buffers (keyword-filter.ts). */
export const READ_CHUNK_BYTES = SHARED_READ_BUFFER_BYTES;

/**
 * Bytes handed to a scan at a time between looks at the clock: a few ms at its slowest (one push of a
 * MiB of short signal lines or of invalid UTF-8 took 250–470 ms on a loaded machine).
 */
export const SCAN_SLICE_BYTES = 64 * 1024;
/** A scan also gives the event loop a turn after this many bytes whatever the clock says (a few turns per MiB cost nothing). */
export const SCAN_TURN_BYTES = 256 * 1024;

/**
 * Feeds a synchronous scan a SCAN_SLICE_BYTES slice at a time, and gives Pi's event loop a turn between
 * slices once the slice's time is up (TimeSlice) and at least every SCAN_TURN_BYTES. The caller must not
 * reuse a chunk's buffer before `push` resolves.
 */
export class SlicedScan {
	private readonly scan: (chunk: Buffer) => void;
	private readonly slice = new TimeSlice({ turnBytes: SCAN_TURN_BYTES });

	constructor(scan: (chunk: Buffer) => void) {
		this.scan = scan;
	}

	/** Turns given to the event loop so far. */
	get turns(): number {
		return this.slice.yields;
	}

	async push(chunk: Buffer): Promise<void> {
		for (let from = 0; from < chunk.length; from += SCAN_SLICE_BYTES) {
			const end = Math.min(chunk.length, from + SCAN_SLICE_BYTES);
			this.scan(from === 0 && end === chunk.length ? chunk : chunk.subarray(from, end));
			await this.slice.passed(end - from);
		}
	}
}

/** Random-access bytes: a file descriptor or a buffer in memory. */
export interface ByteSource {
	readonly size: number;
	/** Reads into `target` from `position`; returns the bytes read. */
	read(target: Buffer, position: number): Promise<number>;
	close(): Promise<void>;
}

/** The bytes of `source` in [from, to), clamped to the source (fewer when a read comes up short). */
export async function readRange(source: ByteSource, from: number, to: number): Promise<Buffer> {
	const start = Math.max(0, from);
	const end = Math.min(source.size, to);
	if (end <= start) return Buffer.alloc(0);
	const buffer = Buffer.allocUnsafe(end - start);
	const read = await source.read(buffer, start);
	return buffer.subarray(0, read);
}

/** The same bytes with each CR read as an LF (crAsNewline): a CR-separated output's records as lines. */
export function recordsSource<T extends ByteSource>(source: T): T {
	return Object.assign(Object.create(source) as T, {
		async read(target: Buffer, position: number): Promise<number> {
			const count = await source.read(target, position);
			crAsNewline(target, 0, count);
			return count;
		},
	});
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

/** What a spill file must be to be used (see openSpillFile). */
export interface SpillChecks {
	/** The user running Pi: the file must be theirs (undefined where the platform has no uids). */
	uid?: number;
	/** Epoch ms when the tool started: the file must have been written since (undefined: not checked). */
	notBeforeMs?: number;
}

/**
 * Slack for `notBeforeMs`: file times lag the clock by a tick, and some file systems keep
 * them in whole (even two-)seconds.
 */
export const SPILL_MTIME_SLACK_MS = 2000;

/**
 * Opens a spill file for streaming, or says why it cannot be used. A spill path is untrusted (any
 * tool, or text a command printed, can name one), so the file must be a regular file with one link
 * (a hard link to another file must not pass), owned by the user running Pi, written since the tool
 * started, and reached without a symlink: the last component is opened with O_NOFOLLOW, and a
 * symlink above it is accepted only when root or the user owns it (the system's own, such as
 * macOS's /var). O_NONBLOCK: a FIFO or device is refused before any read, never waited on.
 */
export async function openSpillFile(path: string, checks: SpillChecks = {}): Promise<OpenSpillResult> {
	if (!isAbsolute(path)) return { ok: false, reason: "spill path is not absolute" };
	let handle: fsPromises.FileHandle;
	try {
		handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
	} catch (error) {
		return { ok: false, reason: `spill file ${describeError(error)}` };
	}
	try {
		const stats = await handle.stat();
		const refused = await refuseSpill(path, stats, checks);
		if (refused !== undefined) {
			await handle.close();
			return { ok: false, reason: refused };
		}
		return { ok: true, source: readThroughFd(handle, stats.size) };
	} catch (error) {
		await handle.close().catch(() => {});
		return { ok: false, reason: `spill file ${describeError(error)}` };
	}
}

/**
 * The file's bytes, read with the callback API on the handle's descriptor (several times cheaper
 * per read than FileHandle.read). close() waits for the reads under way, so none ever reaches a
 * descriptor number reused after it; a read after close fails.
 */
export function readThroughFd(handle: fsPromises.FileHandle, size: number): ByteSource {
	const reading = new Set<Promise<number>>();
	let closed = false;
	return {
		size,
		read(target, position) {
			const length = Math.max(0, Math.min(target.length, size - position));
			if (closed) return Promise.reject(Object.assign(new Error("EBADF: the file is closed"), { code: "EBADF" }));
			if (length === 0) return Promise.resolve(0);
			const read = new Promise<number>((resolve, reject) => {
				readFd(handle.fd, target, 0, length, position, (error, bytesRead) =>
					error ? reject(error) : resolve(bytesRead),
				);
			});
			reading.add(read);
			const forget = () => reading.delete(read);
			read.then(forget, forget);
			return read;
		},
		async close() {
			closed = true;
			await Promise.allSettled([...reading]);
			await handle.close();
		},
	};
}

/** Why an opened spill file must not be used, or undefined when it passes every check. */
async function refuseSpill(path: string, stats: Stats, checks: SpillChecks): Promise<string | undefined> {
	if (!stats.isFile()) return `spill file is not a regular file (${fileKind(stats)})`;
	if (checks.uid !== undefined && stats.uid !== checks.uid)
		return `spill file belongs to uid ${stats.uid}, not to the user running Pi (uid ${checks.uid})`;
	if (stats.nlink !== 1) return `spill file has ${stats.nlink} hard links`;
	if (checks.notBeforeMs !== undefined && stats.mtimeMs < checks.notBeforeMs - SPILL_MTIME_SLACK_MS) {
		return "spill file was last written before the tool ran";
	}
	// Every directory above it: a symlink someone else owns could point anywhere. Looked at all at
	// once, judged from the nearest up (a failure counts only where a walk up would have reached it).
	const dirs: string[] = [];
	for (let dir = dirname(path); ; dir = dirname(dir)) {
		dirs.push(dir);
		if (dirname(dir) === dir) break;
	}
	const found = await Promise.allSettled(dirs.map((dir) => lstat(dir)));
	for (let k = 0; k < dirs.length; k++) {
		const outcome = found[k];
		if (outcome.status === "rejected") throw outcome.reason;
		const above = outcome.value;
		if (above.isSymbolicLink() && above.uid !== 0 && above.uid !== checks.uid) {
			return `spill file is reached through ${dirs[k]}, a symlink owned by uid ${above.uid}`;
		}
	}
	return undefined;
}

function fileKind(stats: Stats): string {
	if (stats.isDirectory()) return "a directory";
	if (stats.isFIFO()) return "a FIFO";
	if (stats.isCharacterDevice() || stats.isBlockDevice()) return "a device";
	if (stats.isSocket()) return "a socket";
	return "not a regular file";
}

/**
 * True when the source, decoded as Pi decodes output (UTF-8, each invalid sequence one U+FFFD),
 * ends with `text`, trailing newlines aside on both sides: a tool may show a file's last lines
 * without its final newline, as Pi's bash does. Reads only the end: the trailing newlines, then the
 * text's UTF-8 length plus a few bytes, which covers it whatever invalid bytes it came from (one
 * invalid byte decodes to three).
 */
export async function sourceEndsWith(source: ByteSource, text: string): Promise<boolean> {
	let textEnd = text.length;
	while (textEnd > 0 && text.charCodeAt(textEnd - 1) === 0x0a) textEnd--;
	const wanted = text.slice(0, textEnd);
	if (wanted.length === 0) return true;
	const end = await endBeforeNewlines(source);
	const length = Math.min(end, Buffer.byteLength(wanted, "utf8") + 8);
	if (length === 0) return false;
	const buffer = Buffer.allocUnsafe(length);
	const read = await source.read(buffer, end - length);
	return new TextDecoder().decode(buffer.subarray(0, read)).endsWith(wanted);
}

/** The source's size without its trailing newline bytes, read backwards a chunk at a time. */
async function endBeforeNewlines(source: ByteSource): Promise<number> {
	let end = source.size;
	const buffer = Buffer.allocUnsafe(Math.min(4096, Math.max(1, end)));
	while (end > 0) {
		const start = Math.max(0, end - buffer.length);
		const read = await source.read(buffer.subarray(0, end - start), start);
		let at = read;
		while (at > 0 && buffer[at - 1] === 0x0a) at--;
		if (at > 0) return start + at;
		end = start;
	}
	return 0;
}

/**
 * The least number of bytes a decoded text can have come from: each U+FFFD may stand for one
 * invalid byte. A source no longer than this cannot be an uncut original of the text.
 */
export function minSourceBytes(text: string): number {
	let replacements = 0;
	for (let at = text.indexOf("\ufffd"); at >= 0; at = text.indexOf("\ufffd", at + 1)) replacements++;
	return Buffer.byteLength(text, "utf8") - 2 * replacements;
}

/** Where the pump sends the original's bytes. */
export interface PumpSinks {
	/** Every byte of the original, in order: the scan sees the whole output, a left-out middle too. */
	scan(chunk: Buffer): void;
	/**
	 * The stored copy (head, marker line, tail); done with a chunk when its promise resolves (the
	 * buffer is reused). `last` is set on the stored copy's last chunk (the scan may not have seen it yet).
	 */
	store(chunk: Buffer, last: boolean): void | Promise<void>;
	/** Newlines the scan has seen so far: the true line numbers around a left-out middle. */
	newlinesSeen(): number;
	/**
	 * CR-separated records the scan has seen so far, while it has seen no LF (then undefined): the
	 * record numbers around a left-out middle of an output that turns out to have no LF at all.
	 */
	recordsSeen?(): number | undefined;
}

/** Where the stored copy left out the original's middle, to map its line numbers to the original's. */
export interface StoredGap {
	/** Line number, in the stored copy, of the marker line that stands for the middle. */
	markerLine: number;
	/** Line number, in the original, of the stored line right after the marker. */
	firstTailLine: number;
	/** Bytes of the original left out. */
	leftOutBytes: number;
}

export interface PumpResult {
	/** Bytes of the original. */
	originalBytes: number;
	/** Bytes passed to the store sink (the stored copy). */
	storedBytes: number;
	/** Set when the middle was left out of the stored copy. */
	gap?: StoredGap;
	/**
	 * The same gap in CR-separated records (its marker line numbered so), set when the output has no LF
	 * (recordsSeen): the stored copy read with each CR as an LF (recordsSource) has its records as lines.
	 */
	recordGap?: StoredGap;
}

/**
 * Streams the source to the scan and, capped at `maxEntryBytes`, to the store: beyond the cap the
 * store gets the head and the tail (about half each, cut at line boundaries) with one marker line
 * between them, counted inside the cap, while the scan still gets every byte (the middle is read
 * once, for the scan only). Memory: two READ_CHUNK_BYTES buffers (acquireReadBuffers). The next chunk is read,
 * and the last one stored, while the scan works on it: the scan runs on the main thread, reads and
 * writes in the thread pool. The store sink sees the chunks in order, one at a time; the scan gets them
 * through SlicedScan, so the event loop turns while it works.
 */
export async function pumpCapped(source: ByteSource, maxEntryBytes: number, sinks: PumpSinks): Promise<PumpResult> {
	const size = source.size;
	const buffers = acquireReadBuffers(2, Math.min(READ_CHUNK_BYTES, Math.max(1, size)));
	try {
		return await pumpWith(buffers, source, maxEntryBytes, sinks);
	} finally {
		// No read or write is under way any more (pumpRange waits for them).
		releaseReadBuffers(buffers);
	}
}

async function pumpWith(
	buffers: readonly Buffer[],
	source: ByteSource,
	maxEntryBytes: number,
	sinks: PumpSinks,
): Promise<PumpResult> {
	const size = source.size;
	const scan = new SlicedScan((chunk) => sinks.scan(chunk));
	// The chunk being stored lives in one buffer; the next read goes to the other.
	let storing: Promise<void> = Promise.resolve();
	let turn = 0;
	const readInto = (buffer: Buffer, at: number, to: number): Promise<number> => {
		const want = Math.min(buffer.length, to - at);
		return want <= 0 ? Promise.resolve(0) : source.read(want === buffer.length ? buffer : buffer.subarray(0, want), at);
	};
	const pumpRange = async (from: number, to: number, store: boolean, lastStored: boolean): Promise<number> => {
		let pumped = 0;
		let reading = readInto(buffers[turn], from, to);
		try {
			for (let at = from; at < to;) {
				const read = await reading;
				if (read <= 0) break;
				const chunk = buffers[turn].subarray(0, read);
				at += read;
				pumped += read;
				// The other buffer is free once its chunk is stored: read ahead into it.
				await storing;
				turn = 1 - turn;
				reading = readInto(buffers[turn], at, to);
				if (store) storing = Promise.resolve(sinks.store(chunk, lastStored && at >= to));
				// The chunk's buffer is read into again only after the next chunk: not before this resolves.
				await scan.push(chunk);
			}
			await storing;
		} finally {
			// No read or write outlives the pump, also when the scan or the store threw.
			await Promise.allSettled([reading, storing]);
		}
		return pumped;
	};
	if (size <= maxEntryBytes) {
		const storedBytes = await pumpRange(0, size, true, true);
		return { originalBytes: size, storedBytes };
	}

	// The marker is measured at its longest (every number as large as the original) so the copy fits.
	const longest = formatGapMarker({ from: size, to: size, bytes: size, size, maxEntryBytes, newline: true });
	const half = Math.max(0, Math.floor((maxEntryBytes - Buffer.byteLength(longest)) / 2));
	const headEnd = await findCut(source, half, "back");
	const tailStart = await findCut(source, size - half, "forward");
	let stored = await pumpRange(0, headEnd, true, false);
	const headNewlines = sinks.newlinesSeen();
	const headRecords = sinks.recordsSeen?.();
	// The byte before the cut: it ends a line (an LF) or, among records, a record (a CR) too.
	const beforeCut = stored > 0 ? await byteBefore(source, headEnd) : NEWLINE_BYTE;
	const headEndsInLine = beforeCut !== NEWLINE_BYTE;
	await pumpRange(headEnd, tailStart, false, false);
	const leftOutBytes = tailStart - headEnd;
	const firstTailLine = sinks.newlinesSeen() + 1;
	const markerLine = headNewlines + (headEndsInLine ? 2 : 1);
	const gap = { markerLine, firstTailLine, leftOutBytes };
	// A CR so far, no LF so far and none in the tail: the output is CR-separated records, and its marker
	// line is numbered, and placed, among the records. (Without a CR by now, the tail is not read again.)
	const recordsAfter = sinks.recordsSeen?.();
	let recordGap: StoredGap | undefined;
	let endsInside = headEndsInLine;
	if (headRecords !== undefined && recordsAfter && !(await hasNewline(source, tailStart, size))) {
		endsInside = headEndsInLine && beforeCut !== CARRIAGE_RETURN_BYTE;
		recordGap = { markerLine: headRecords + (endsInside ? 2 : 1), firstTailLine: recordsAfter + 1, leftOutBytes };
	}
	const shown = recordGap ?? gap;
	const marker = Buffer.from(
		formatGapMarker({
			// The lines left out whole (a line cut by a cut is kept in part).
			from: shown.markerLine,
			to: shown.firstTailLine - 1,
			bytes: leftOutBytes,
			size,
			maxEntryBytes,
			newline: endsInside,
		}),
	);
	await sinks.store(marker, tailStart >= size);
	stored += marker.length;
	stored += await pumpRange(tailStart, size, true, true);
	return { originalBytes: size, storedBytes: stored, gap, ...(recordGap ? { recordGap } : {}) };
}

/** True when source[from, to) holds an LF (read in chunks of READ_CHUNK_BYTES at most). */
async function hasNewline(source: ByteSource, from: number, to: number): Promise<boolean> {
	const buffer = Buffer.allocUnsafe(Math.min(READ_CHUNK_BYTES, Math.max(1, to - from)));
	for (let at = from; at < to;) {
		const read = await source.read(buffer.subarray(0, Math.min(buffer.length, to - at)), at);
		if (read <= 0) return false;
		if (buffer.subarray(0, read).includes(0x0a)) return true;
		at += read;
	}
	return false;
}

/** The one line that stands for a left-out middle in a stored copy (after a "\n" when the head ends inside a line). */
function formatGapMarker(gap: {
	from: number;
	to: number;
	bytes: number;
	size: number;
	maxEntryBytes: number;
	newline: boolean;
}): string {
	const lines = gap.to >= gap.from ? `lines ${gap.from}-${gap.to}` : `part of line ${gap.from - 1}`;
	return `${gap.newline ? "\n" : ""}${formatNote(`${lines} (${gap.bytes} bytes) left out of the stored copy; the output was ${gap.size} bytes, more than maxEntryBytes=${gap.maxEntryBytes}`)}\n`;
}

const NEWLINE_BYTE = 0x0a;
const CARRIAGE_RETURN_BYTE = 0x0d;

/** The byte before `position` (an LF at the start: a line starts there). */
async function byteBefore(source: ByteSource, position: number): Promise<number> {
	if (position <= 0) return NEWLINE_BYTE;
	const one = Buffer.alloc(1);
	await source.read(one, position - 1);
	return one[0]!;
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
	// A line boundary (after an LF), else a record boundary (after a CR that no LF follows): a
	// CR-separated output has no LF to cut at.
	const after = (index: number) => from + index + 1;
	const lf = direction === "back" ? view.subarray(0, at).lastIndexOf(0x0a) : view.indexOf(0x0a);
	if (lf >= 0) return after(lf);
	// Only where the byte after the CR is read too (the window's last byte may be a CRLF's CR).
	const isLoneCr = (index: number) => view[index] === 0x0d && index + 1 < view.length && view[index + 1] !== 0x0a;
	if (direction === "back") {
		for (let index = at - 1; index >= 0; index--) if (isLoneCr(index)) return after(index);
	} else {
		for (let index = 0; index < view.length; index++) if (isLoneCr(index)) return after(index);
	}
	// No newline nearby: a character boundary (the byte at the cut is not a UTF-8 continuation byte).
	let cut = at;
	const step = direction === "back" ? -1 : 1;
	for (let moved = 0; moved < 3 && cut > 0 && cut < view.length && (view[cut] & 0xc0) === 0x80; moved++) cut += step;
	return from + cut;
}
