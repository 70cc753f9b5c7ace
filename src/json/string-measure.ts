// How long JSON.stringify makes a string, counted byte by byte while the lexer reads it: UTF-16
// units as Buffer#toString decodes the UTF-8 (WHATWG: a broken sequence is one U+FFFD), plus what
// each escape prints as. Memory: a few numbers; the string is never built.

/** JSON.stringify's length for one UTF-16 unit from an escape (surrogates are handled apart). */
function escapedUnitChars(unit: number): number {
	if (unit === 0x22 || unit === 0x5c) return 2;
	if (unit < 0x20) return unit === 0x08 || unit === 0x09 || unit === 0x0a || unit === 0x0c || unit === 0x0d ? 2 : 6;
	return 1;
}

export class StringMeasure {
	/** JSON.stringify(the string so far).length, quotes included. */
	chars = 0;
	// UTF-8 decoding state (WHATWG) and a pending high surrogate from \uXXXX.
	private utf8Needed = 0;
	private utf8Seen = 0;
	private utf8Lower = 0x80;
	private utf8Upper = 0xbf;
	private highSurrogate = false;

	/** A new string: its two quotes. */
	start(): void {
		this.chars = 2;
		this.utf8Needed = 0;
		this.highSurrogate = false;
	}

	/** One content byte of a measured string: UTF-16 units as Buffer#toString decodes them (WHATWG). */
	addByte(byte: number): void {
		if (this.highSurrogate) {
			this.highSurrogate = false;
			this.chars += 6;
		}
		if (this.utf8Needed !== 0) {
			if (byte >= this.utf8Lower && byte <= this.utf8Upper) {
				this.utf8Lower = 0x80;
				this.utf8Upper = 0xbf;
				if (++this.utf8Seen === this.utf8Needed) {
					this.chars += this.utf8Needed === 3 ? 2 : 1;
					this.utf8Needed = 0;
				}
				return;
			}
			// A broken sequence is one U+FFFD; the byte then starts afresh.
			this.chars += 1;
			this.utf8Needed = 0;
			this.utf8Lower = 0x80;
			this.utf8Upper = 0xbf;
		}
		if (byte < 0x80) {
			this.chars += 1;
		} else if (byte >= 0xc2 && byte <= 0xdf) {
			this.utf8Needed = 1;
			this.utf8Seen = 0;
		} else if (byte >= 0xe0 && byte <= 0xef) {
			if (byte === 0xe0) this.utf8Lower = 0xa0;
			if (byte === 0xed) this.utf8Upper = 0x9f;
			this.utf8Needed = 2;
			this.utf8Seen = 0;
		} else if (byte >= 0xf0 && byte <= 0xf4) {
			if (byte === 0xf0) this.utf8Lower = 0x90;
			if (byte === 0xf4) this.utf8Upper = 0x8f;
			this.utf8Needed = 3;
			this.utf8Seen = 0;
		} else {
			this.chars += 1;
		}
	}

	/** An ASCII byte that is not content (quote, backslash) ends a pending UTF-8 sequence. */
	breakSequence(): void {
		if (this.utf8Needed !== 0) {
			this.chars += 1;
			this.utf8Needed = 0;
			this.utf8Lower = 0x80;
			this.utf8Upper = 0xbf;
		}
	}

	/** One UTF-16 unit from an escape; a high surrogate waits for its low half. */
	addUnit(unit: number): void {
		if (unit >= 0xdc00 && unit <= 0xdfff) {
			if (this.highSurrogate) {
				this.highSurrogate = false;
				this.chars += 2;
			} else {
				this.chars += 6;
			}
			return;
		}
		if (this.highSurrogate) {
			this.highSurrogate = false;
			this.chars += 6;
		}
		if (unit >= 0xd800 && unit <= 0xdbff) {
			this.highSurrogate = true;
			return;
		}
		this.chars += escapedUnitChars(unit);
	}

	/** The closing quote: a pending sequence or lone high surrogate is counted as printed. */
	end(): void {
		this.breakSequence();
		if (this.highSurrogate) {
			this.highSurrogate = false;
			this.chars += 6;
		}
	}
}
