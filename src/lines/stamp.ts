// The timestamp a logger or a CI service prints before every line of a log (hosted CI's raw logs:
// `2026-12-02T10:18:20.9133560Z `; loggers: `2024-05-01 12:00:00,123 `, `[10:18:20] `). What a line
// says starts after it: a failure word "at the line's start", a line's indentation, a section's
// opener are read there. Pure; a stamp is recognised in one linear match at the line's start.

/** A date and time, or a time, optionally bracketed, then one space or tab (the indentation after it is the line's own). */
const STAMP = /^\[?(?:\d{4}-\d\d-\d\d[T ])?\d\d:\d\d:\d\d(?:[.,]\d{1,9})?(?:Z|[+-]\d\d(?::?\d\d)?)?\]?[ \t]/;
const DIGIT_0 = 0x30;
const DIGIT_9 = 0x39;
const OPEN_BRACKET = 0x5b;

/** Characters of the timestamp `text` starts with, and the one space after it (0 when none). */
export function stampLength(text: string): number {
	const first = text.charCodeAt(0);
	if (first !== OPEN_BRACKET && (first < DIGIT_0 || first > DIGIT_9)) return 0;
	const match = STAMP.exec(text);
	return match === null ? 0 : match[0].length;
}

/** `text` after its timestamp (itself when it has none). */
export function unstamped(text: string): string {
	const length = stampLength(text);
	return length === 0 ? text : text.slice(length);
}
