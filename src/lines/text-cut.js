// @ts-check
// Cutting text by UTF-16 length without ever splitting a surrogate pair (an emoji is kept whole or
// left out whole). Plain JavaScript checked by tsc (JSDoc types), because the search worker runs it
// with no TypeScript loader; the TypeScript modules take it through text.ts. Pure.

/**
 * The first unit of a surrogate pair.
 * @param {number} code a UTF-16 code unit
 */
export function isHighSurrogate(code) {
	return code >= 0xd800 && code <= 0xdbff;
}

/**
 * The second unit of a surrogate pair.
 * @param {number} code a UTF-16 code unit
 */
export function isLowSurrogate(code) {
	return code >= 0xdc00 && code <= 0xdfff;
}

/**
 * At most `max` UTF-16 units from the start.
 * @param {string} text
 * @param {number} max
 * @returns {string}
 */
export function keepStart(text, max) {
	if (text.length <= max) return text;
	let end = Math.max(0, max);
	if (isHighSurrogate(text.charCodeAt(end - 1))) end--;
	return text.slice(0, end);
}

/**
 * At most `max` UTF-16 units from the end.
 * @param {string} text
 * @param {number} max
 * @returns {string}
 */
export function keepEnd(text, max) {
	if (text.length <= max) return text;
	let start = text.length - Math.max(0, max);
	if (isLowSurrogate(text.charCodeAt(start))) start++;
	return text.slice(start);
}
