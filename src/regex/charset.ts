// Sets of characters as bits, for the regex analysis: the 128 ASCII characters, and three bits
// that stand for all other characters (the non-ASCII spaces `\s` matches, U+2028/U+2029, every
// other non-ASCII character). ASCII letters are folded: signal patterns are compiled with `i`.

/**
 * Characters as bits: 0–127 ASCII; then three stand for all other characters: the non-ASCII spaces
 * `\s` matches, U+2028/U+2029 (line terminators), and every other non-ASCII character.
 */
export type CharSet = bigint;
export const NONE: CharSet = 0n;
export const NON_ASCII_OTHER: CharSet = 1n << 128n;
export const NON_ASCII_SPACES: CharSet = 1n << 129n;
export const LINE_SEPARATORS: CharSet = 1n << 130n;
export const NON_ASCII: CharSet = NON_ASCII_OTHER | NON_ASCII_SPACES | LINE_SEPARATORS;
export const ANY: CharSet = (1n << 131n) - 1n;
export const ASCII: CharSet = (1n << 128n) - 1n;
/** What `\s` matches beyond ASCII (besides U+2028/U+2029). */
const UNICODE_SPACES = /^[\u00a0\u1680\u2000-\u200a\u202f\u205f\u3000\ufeff]$/;

/** The bits of the ASCII letters A–Z; a–z are the same bits 32 higher. */
const UPPER_LETTERS: CharSet = ((1n << 26n) - 1n) << 65n;
const LOWER_LETTERS: CharSet = UPPER_LETTERS << 32n;

/** The set with each ASCII letter's other case added (signal patterns are compiled with the `i` flag). */
function foldCase(set: CharSet): CharSet {
	return set | ((set & UPPER_LETTERS) << 32n) | ((set & LOWER_LETTERS) >> 32n);
}

export function rangeSet(from: number, to: number): CharSet {
	if (from === to && from >= 128) {
		if (from === 0x2028 || from === 0x2029) return LINE_SEPARATORS;
		return UNICODE_SPACES.test(String.fromCharCode(from)) ? NON_ASCII_SPACES : NON_ASCII_OTHER;
	}
	// The ASCII codes from..to as one run of bits; anything past 127 is all three non-ASCII bits.
	const asciiEnd = Math.min(to, 127) + 1;
	let set = from < asciiEnd ? (1n << BigInt(asciiEnd)) - (1n << BigInt(from)) : NONE;
	if (to >= 128) set |= NON_ASCII;
	return foldCase(set);
}

export const charSet = (code: number): CharSet => rangeSet(code, code);
export const DIGITS = rangeSet(48, 57);
export const WORD = DIGITS | rangeSet(65, 90) | rangeSet(97, 122) | charSet(95);
export const SPACES = rangeSet(9, 13) | charSet(32) | NON_ASCII_SPACES | LINE_SEPARATORS;
export const LINE_TERMINATORS = charSet(10) | charSet(13) | LINE_SEPARATORS;
export const DOT = ANY & ~LINE_TERMINATORS;
export const CLASS_ESCAPES: Record<string, CharSet> = {
	d: DIGITS,
	D: ANY & ~DIGITS,
	w: WORD,
	W: ANY & ~WORD,
	s: SPACES,
	S: ANY & ~SPACES,
};
