// The small text helpers every module shares, and (from text-cut.js, which the search worker also
// runs) cutting text by UTF-16 length without ever splitting a surrogate pair. Pure.

import * as textCutModule from "./text-cut.js";

// Imported bindings copied into module constants once: under Pi's extension loader (jiti) every
// read of an imported binding goes through an interop Proxy, and these are read on every line.
const { keepStart } = textCutModule;

export { keepEnd, keepStart } from "./text-cut.js";

/** "1 line", "2 lines". */
export function plural(count: number, word: string): string {
	return `${count} ${word}${count === 1 ? "" : "s"}`;
}

/** Characters the lines take when joined with "\n" (one newline counted per line). */
export function sizeOf(lines: readonly string[]): number {
	let size = 0;
	for (const line of lines) size += line.length + 1;
	return size;
}

/** Every control character and line separator as a space: the text stays one line, its length unchanged. */
export function flattenControls(text: string): string {
	return text.replace(/[\u0000-\u001f\u007f\u2028\u2029]/g, " ");
}

/** The text when it has at most `maxChars` characters, else its start and "…", `maxChars` in all (never half a surrogate pair). */
export function shortenText(text: string, maxChars: number): string {
	return text.length <= maxChars ? text : `${keepStart(text, maxChars - 1)}…`;
}

/** Whitespace runs as one space, trimmed, then shortened to `maxChars` with "…". */
export function toOneLine(text: string, maxChars: number): string {
	return shortenText(text.replace(/\s+/g, " ").trim(), maxChars);
}

/** One short line for an error: its `code` (when Node gave one) and its message, at most 200 characters. */
export function describeError(error: unknown): string {
	const code = typeof error === "object" && error !== null ? (error as { code?: unknown }).code : undefined;
	const message = error instanceof Error ? error.message : String(error);
	const short = message.replace(/\s+/g, " ").slice(0, 200);
	return typeof code === "string" && !short.startsWith(code) ? `${code}: ${short}` : short;
}
