// Cutting text by UTF-16 length without ever splitting a surrogate pair (an emoji is kept whole
// or left out whole). Pure; shared by the scan, the view, the line reader and the query answers.

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
