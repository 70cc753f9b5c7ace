// Cutting text by UTF-16 length without ever splitting a surrogate pair (an emoji is kept whole
// or left out whole), and the small text helpers every module shares. Pure.

/** At most `max` UTF-16 units from the start. */
export function keepStart(text: string, max: number): string {
	if (text.length <= max) return text;
	let end = Math.max(0, max);
	const code = text.charCodeAt(end - 1);
	if (code >= 0xd800 && code <= 0xdbff) end--;
	return text.slice(0, end);
}

/** At most `max` UTF-16 units from the end. */
export function keepEnd(text: string, max: number): string {
	if (text.length <= max) return text;
	let start = text.length - Math.max(0, max);
	const code = text.charCodeAt(start);
	if (code >= 0xdc00 && code <= 0xdfff) start++;
	return text.slice(start);
}

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

/** One short line for an error: its `code` (when Node gave one) and its message, at most 200 characters. */
export function describeError(error: unknown): string {
	const code = typeof error === "object" && error !== null ? (error as { code?: unknown }).code : undefined;
	const message = error instanceof Error ? error.message : String(error);
	const short = message.replace(/\s+/g, " ").slice(0, 200);
	return typeof code === "string" && !short.startsWith(code) ? `${code}: ${short}` : short;
}
