// The search inside a giant line (longer than GIANT_LINE_KEEP_BYTES, of which the scan keeps only the
// two ends): its bytes are decoded and searched as they arrive, with a little text carried from one
// piece to the next (for a match across a cut, and for `^`, `\b` and lookbehinds), and the first match
// is kept as a window: a bounded stretch of characters around it, cut at a "\r" on either side (a
// lone-CR record), with its character offsets in the line. Memory: the carried text, the window, a
// scratch buffer. Only the default signal pattern (trusted, linear) is run here, and only on pieces
// where its keyword prefilter (SIMD) finds a keyword: the pattern cannot match without one.

import { StringDecoder } from "node:string_decoder";
import type { KeywordLineFinder } from "../prefilter/keyword-filter.js";

/** Characters at the end of a piece not yet searched as match starts: a match there may need what follows. */
const HOLD_CHARS = 256;
/** Characters before the first unsearched one that a search sees (for `\b` and lookbehinds). */
const CONTEXT_CHARS = 128;
/** Characters of a window before its match, and from the match's start on, at most. */
export const WINDOW_BEFORE_CHARS = 120;
export const WINDOW_AFTER_CHARS = 360;

const CARRIAGE_RETURN = "\r";
/** Bytes looked at by the keyword prefilter at once (within its SIMD window), and bytes of the piece before them seen too (a keyword across the cut). */
const PIECE_BYTES = 64 * 1024;
const KEYWORD_OVERLAP_BYTES = 64;

/** A stretch of a giant line around a signal match: `text` is characters [start, end) of the line (UTF-16 units). */
export interface LineWindow {
	start: number;
	end: number;
	text: string;
}

export class GiantLineSearch {
	private readonly decoder = new StringDecoder("utf8");
	/** Text carried from the pieces before; `base` is the offset of its first character in the line. */
	private text = "";
	private base = 0;
	/** The first offset not yet searched as a match start. */
	private from = 0;
	/** The window being filled (once a match was found), and whether it is complete. */
	private window: LineWindow | undefined;
	private matchAt = 0;
	private complete = false;

	/** A piece's bytes after the last bytes of the one before, then "\n": what the prefilter is given. */
	private readonly scratch = Buffer.alloc(KEYWORD_OVERLAP_BYTES + PIECE_BYTES + 1);
	/** The last bytes of the piece before (a keyword across the cut is found), in scratch[0, overlap). */
	private overlap = 0;
	/** A piece whose text is not all searched yet holds a keyword. */
	private keywordHeld = false;
	private readonly found: number[] = [];

	/**
	 * `regex`: the signal pattern with the "g" and "m" flags (SignalFinder's window form); `keywords`:
	 * its keyword prefilter (no match without a keyword), or undefined to search every piece.
	 */
	constructor(
		private readonly regex: RegExp,
		private readonly keywords: KeywordLineFinder | undefined,
	) {}

	/** The line's next bytes. */
	feed(bytes: Uint8Array): void {
		for (let at = 0; at < bytes.length && !this.complete; at += PIECE_BYTES) {
			const piece = Buffer.from(bytes.buffer, bytes.byteOffset + at, Math.min(PIECE_BYTES, bytes.length - at));
			const keyword = this.window === undefined && this.hasKeyword(piece);
			this.take(this.decoder.write(piece), keyword, false);
		}
	}

	/** The line has ended: the window around its first match, if any. */
	end(): LineWindow | undefined {
		if (!this.complete) this.take(this.decoder.end(), false, true);
		return this.window;
	}

	/** Does the piece (after the end of the one before) hold a keyword of the pattern? A giant line has no "\n". */
	private hasKeyword(piece: Buffer): boolean {
		if (this.keywords === undefined) return true;
		const scratch = this.scratch;
		piece.copy(scratch, this.overlap);
		const end = this.overlap + piece.length;
		scratch[end] = 0x0a;
		this.found.length = 0;
		this.keywords.findLines(scratch, 0, end + 1, this.found);
		const keep = Math.min(KEYWORD_OVERLAP_BYTES, end);
		scratch.copyWithin(0, end - keep, end);
		this.overlap = keep;
		return this.found.length > 0;
	}

	/** Decoded text of the line, in order; `keyword`: its bytes held a keyword. */
	private take(decoded: string, keyword: boolean, final: boolean): void {
		if (this.window !== undefined) {
			this.extend(decoded);
			return;
		}
		const text = this.text + decoded;
		const limit = final ? text.length : Math.max(0, text.length - HOLD_CHARS);
		if (!keyword && !this.keywordHeld) {
			// No keyword in any text not yet searched: nothing can match there.
			this.carry(text, limit);
			return;
		}
		const regex = this.regex;
		regex.lastIndex = this.from - this.base;
		const found = regex.exec(text);
		if (found !== null && found.index < limit) {
			const at = found.index;
			let start = Math.max(0, at - WINDOW_BEFORE_CHARS);
			const record = text.lastIndexOf(CARRIAGE_RETURN, at - 1);
			if (record >= start) start = record + 1;
			this.matchAt = this.base + at;
			this.window = { start: this.base + start, end: this.base + at, text: text.slice(start, at) };
			this.text = "";
			this.extend(text.slice(at));
			if (final) this.complete = true;
			return;
		}
		// The text held back (the last HOLD_CHARS) is searched with the next piece: it came from this
		// piece, or, when this piece is shorter than that, possibly from the ones before.
		this.keywordHeld = keyword || (decoded.length < HOLD_CHARS && this.keywordHeld);
		this.carry(text, limit);
	}

	/** Everything before `limit` in `text` is searched: keep what a later search needs. */
	private carry(text: string, limit: number): void {
		this.from = Math.max(this.from, this.base + limit);
		const keep = Math.max(0, this.from - this.base - CONTEXT_CHARS);
		this.text = text.slice(keep);
		this.base += keep;
	}

	/** Adds text after the match to the window, up to WINDOW_AFTER_CHARS from the match or the next "\r". */
	private extend(more: string): void {
		const window = this.window as LineWindow;
		const room = this.matchAt + WINDOW_AFTER_CHARS - window.end;
		const record = more.indexOf(CARRIAGE_RETURN, window.end === this.matchAt ? 1 : 0);
		const take = Math.min(room, record >= 0 ? record : more.length);
		window.text += more.slice(0, take);
		window.end += take;
		if (take < more.length) this.complete = true;
	}
}
