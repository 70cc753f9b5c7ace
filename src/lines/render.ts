// The one line core: what a stored line looks like wherever it is shown (the view, the lines and
// search answers). A line is rendered as a terminal shows it — `\r` redraws resolved, ANSI escapes
// removed, other control characters as U+FFFD — and then clipped; a line too long to hold
// (GIANT_LINE_KEEP_BYTES) keeps only its two ends, whatever the chunking. Pure, linear in the line.

import { isAscii } from "node:buffer";
import * as textModule from "./text.js";

// Imported bindings copied into module constants once: under Pi's extension loader (jiti) every
// read of an imported binding goes through an interop Proxy, and these are read on every line.
const { keepEnd, keepStart } = textModule;

/** Bytes kept from each end of a line too long to hold whole; longer lines are "giant". */
export const GIANT_LINE_KEEP_BYTES = 64 * 1024;
const CARRIAGE_RETURN = 0x0d;

// ANSI: CSI sequences, the control strings a terminal does not show (OSC `ESC ]`: a title, a
// hyperlink; APC `ESC _`: Buildkite's `ESC _bk;t=1733476800000 BEL` before each line; DCS `ESC P`,
// PM `ESC ^`, SOS `ESC X`), each ended by BEL or ST and never crossing a line, and two-character
// escapes. Linear, and never matches a newline, so stripping a block keeps its lines in place.
export const ANSI_PATTERN = /\x1b\[[0-?]*[ -/]*[@-~]|\x1b[\]_P^X][^\x07\x1b\n]*(?:\x07|\x1b\\)?|\x1b[@-Z\\-_]/g;
const ERASE_LINE_PATTERN = /^\x1b\[[012]?K/;
// What is left of an escape sequence cut at the end of a kept piece, or at its start (the tail of a
// CSI sequence, recognised only when another escape follows, so visible text is never dropped).
const PARTIAL_ESCAPE_AT_END = /\x1b(?:\[[0-?]*[ -/]*|[\]_P^X][^\x07\x1b\n]*)?$/;
const PARTIAL_ESCAPE_AT_START = /^\[?[0-?]*[ -/]*[@-~](?=\x1b)/;
// C0 controls other than tab, and DEL: shown as U+FFFD so the view stays one line per line.
const CONTROL_PATTERN = /[\x00-\x08\x0b-\x1f\x7f]/g;

export interface ScannedLine {
	/** 1-based, as an editor shows it. */
	lineNumber: number;
	/** What a terminal shows of the line (see renderTerminalLine), possibly only part of it. */
	text: string;
	/** Characters (UTF-16 code units) of the whole rendered line; for a giant line, of its raw bytes. */
	totalChars: number;
	/** True when `text` is only part of the line. */
	partial: boolean;
	/** Set when `text` is the end of the line rather than its start (a giant line whose end signals). */
	keptEnd?: true;
	/** Set by the scan on a head or tail line the signal pattern matched (such a line never folds away). */
	signal?: true;
	/** Set when `text` is a stretch from inside a giant line: its characters [start, end) of the line. */
	window?: { start: number; end: number };
}

/**
 * What a terminal would show for a line: "\r" redraws resolved (a later, shorter draw leaves the
 * end of a longer one visible; an erase-line escape clears it), ANSI escapes removed, other control
 * characters shown as U+FFFD. Linear in the line's length.
 */
export function renderTerminalLine(raw: string): string {
	if (!raw.includes("\r") && !raw.includes("\x1b")) return raw.replace(CONTROL_PATTERN, "\ufffd");
	const segments = raw.split("\r");
	let shown = "";
	// From the last draw back: each earlier draw shows only where it is longer than all later ones.
	for (let i = segments.length - 1; i >= 0; i--) {
		const segment = segments[i];
		const visible = segment.replace(ANSI_PATTERN, "");
		if (visible.length > shown.length) shown += visible.slice(shown.length);
		if (ERASE_LINE_PATTERN.test(segment)) break;
	}
	return shown.replace(CONTROL_PATTERN, "\ufffd");
}

/** The text with its ANSI escapes removed (lines stay where they are). */
export function stripAnsi(text: string): string {
	return text.includes("\x1b") ? text.replace(ANSI_PATTERN, "") : text;
}

/** Copies a string out of a larger one so that keeping it does not keep the larger one alive. */
export function detach(text: string): string {
	return text.length === 0 ? "" : Buffer.from(text, "utf16le").toString("utf16le");
}

export function stripLineEnd(text: string): string {
	return text.endsWith("\r") ? text.slice(0, -1) : text;
}

/** UTF-16 code units the bytes decode to (exact for valid UTF-8). */
function countUtf16Units(bytes: Uint8Array): number {
	if (isAscii(bytes)) return bytes.length;
	let count = 0;
	for (let i = 0; i < bytes.length; i++) {
		const byte = bytes[i];
		if ((byte & 0xc0) !== 0x80) count++;
		if (byte >= 0xf0) count++;
	}
	return count;
}

/** The bytes without an incomplete UTF-8 sequence at their end. */
function trimIncompleteEnd(bytes: Buffer): Buffer {
	for (let back = 1; back <= Math.min(4, bytes.length); back++) {
		const byte = bytes[bytes.length - back];
		if ((byte & 0xc0) === 0x80) continue;
		const length = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
		return length > back ? bytes.subarray(0, bytes.length - back) : bytes;
	}
	return bytes;
}

/** The bytes without the continuation bytes of a character that started before them. */
function trimIncompleteStart(bytes: Buffer): Buffer {
	let start = 0;
	while (start < Math.min(3, bytes.length) && (bytes[start] & 0xc0) === 0x80) start++;
	return bytes.subarray(start);
}

/**
 * A line still being received, possibly far larger than what is kept of it: its first
 * GIANT_LINE_KEEP_BYTES bytes in a growing buffer, and the last ones after those in a ring, so
 * pushing it one byte at a time costs as little as pushing it whole.
 */
export class PendingLine {
	private head = Buffer.allocUnsafe(256);
	private headBytes = 0;
	private ring: Buffer | undefined;
	/** Where the next byte goes in the ring. */
	private ringAt = 0;
	bytes = 0;
	units = 0;
	lastByte = -1;

	append(chunk: Uint8Array): void {
		if (chunk.length === 0) return;
		this.bytes += chunk.length;
		this.units += countUtf16Units(chunk);
		this.lastByte = chunk[chunk.length - 1];
		let rest = chunk;
		if (this.headBytes < GIANT_LINE_KEEP_BYTES) {
			const take = Math.min(rest.length, GIANT_LINE_KEEP_BYTES - this.headBytes);
			if (this.headBytes + take > this.head.length) {
				const grown = Buffer.allocUnsafe(
					Math.min(GIANT_LINE_KEEP_BYTES, Math.max(this.head.length * 2, this.headBytes + take)),
				);
				this.head.copy(grown, 0, 0, this.headBytes);
				this.head = grown;
			}
			this.head.set(rest.subarray(0, take), this.headBytes);
			this.headBytes += take;
			rest = rest.subarray(take);
		}
		if (rest.length === 0) return;
		const ring = (this.ring ??= Buffer.allocUnsafe(GIANT_LINE_KEEP_BYTES));
		if (rest.length > ring.length) rest = rest.subarray(rest.length - ring.length);
		const first = Math.min(rest.length, ring.length - this.ringAt);
		ring.set(rest.subarray(0, first), this.ringAt);
		ring.set(rest.subarray(first), 0);
		this.ringAt = (this.ringAt + rest.length) % ring.length;
	}

	get isEmpty(): boolean {
		return this.bytes === 0;
	}

	get isGiant(): boolean {
		return this.bytes > GIANT_LINE_KEEP_BYTES;
	}

	/** The line's first bytes (all of it when it is not giant). */
	startBytes(): Uint8Array {
		return this.head.subarray(0, this.headBytes);
	}

	/** The whole line (only when it is not giant). */
	whole(): string {
		return this.head.toString("utf8", 0, this.headBytes);
	}

	/** The first and the last GIANT_LINE_KEEP_BYTES bytes (at most; never overlapping), cut at character boundaries. */
	ends(): { start: string; end: string } {
		const start = trimIncompleteEnd(this.head.subarray(0, this.headBytes));
		const ring = this.ring ?? Buffer.alloc(0);
		const endBytes = Math.min(ring.length, this.bytes - this.headBytes);
		// The ring's last `endBytes` bytes, oldest first.
		const from = (this.ringAt - endBytes + ring.length) % Math.max(1, ring.length);
		const tail =
			from + endBytes <= ring.length
				? ring.subarray(from, from + endBytes)
				: Buffer.concat([ring.subarray(from), ring.subarray(0, this.ringAt)]);
		const end = trimIncompleteStart(tail);
		return { start: start.toString("utf8"), end: end.toString("utf8") };
	}
}

/** Characters kept of a line for a view that clips lines at `maxLineChars` (room for \r redraws and escapes). */
export function keepCharsFor(maxLineChars: number): number {
	return Math.min(GIANT_LINE_KEEP_BYTES, maxLineChars * 4 + 1024);
}

/**
 * A whole line (with or without its line ending) as the view shows it: what a terminal shows of
 * it, its start kept up to `keepChars`. The one rendering of a stored line: the scan, the line
 * reader and the query answers all render lines here.
 */
export function renderLine(lineNumber: number, raw: string, keepChars: number): ScannedLine {
	const text = renderTerminalLine(stripLineEnd(raw));
	if (text.length <= keepChars) return { lineNumber, text: detach(text), totalChars: text.length, partial: false };
	return { lineNumber, text: detach(keepStart(text, keepChars)), totalChars: text.length, partial: true };
}

/**
 * The text renderLine gives a line, left inside the strings it was cut from (not detached): for lines
 * only looked at, of which little is kept (a signal line's leading context is found among 200).
 */
export function renderShownText(raw: string, keepChars: number): string {
	const text = renderTerminalLine(stripLineEnd(raw));
	return text.length <= keepChars ? text : keepStart(text, keepChars);
}

/**
 * A line too long to hold (more than GIANT_LINE_KEEP_BYTES): only its two ends are kept. It shows
 * its start when that is a signal; else, when its end is not, the `window` around a signal match
 * inside it that the scan found (scan/giant.ts); else, for a line redrawn with "\r", its last redraws (what a terminal
 * shows), or its end when only the end is a signal. Returns the line and whether it is a signal.
 */
export function renderGiantLine(
	lineNumber: number,
	pending: PendingLine,
	keepChars: number,
	isSignal: (text: string, isEnd: boolean) => boolean,
	window?: { start: number; end: number; text: string },
): [ScannedLine, boolean] {
	const ends = pending.ends();
	// The kept ends are cut at arbitrary bytes: drop an escape sequence cut in two at either cut.
	const start = ends.start.replace(PARTIAL_ESCAPE_AT_END, "");
	const end = stripLineEnd(ends.end).replace(PARTIAL_ESCAPE_AT_START, "");
	const totalChars = pending.units - (pending.lastByte === CARRIAGE_RETURN ? 1 : 0);
	const atStart = isSignal(start, false);
	const atEnd = !atStart && isSignal(end, true);
	if (!atStart && !atEnd && window !== undefined) {
		// A signal match inside the line: shown as the stretch around it, with where it lies.
		const text = detach(keepStart(renderTerminalLine(window.text), keepChars));
		return [{ lineNumber, text, totalChars, partial: true, window: { start: window.start, end: window.end } }, true];
	}
	const redraw = end.indexOf("\r");
	if (redraw >= 0) {
		const shown = renderTerminalLine(end.slice(redraw + 1));
		const text = detach(keepStart(shown, keepChars));
		return [{ lineNumber, text, totalChars: shown.length, partial: text.length < shown.length }, atStart || atEnd];
	}
	if (atEnd) {
		const text = detach(keepEnd(renderTerminalLine(end), keepChars));
		return [{ lineNumber, text, totalChars, partial: true, keptEnd: true }, true];
	}
	const shownStart = renderTerminalLine(start);
	if (shownStart.trim() === "") {
		// Nothing visible in its first 64 KiB (an escape flood): show its end instead.
		const text = detach(keepEnd(renderTerminalLine(end), keepChars));
		return [{ lineNumber, text, totalChars, partial: true, keptEnd: true }, atStart];
	}
	const text = detach(keepStart(shownStart, keepChars));
	return [{ lineNumber, text, totalChars, partial: true }, atStart];
}
