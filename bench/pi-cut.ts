// Pi's own bash cut, the baseline every recall measurement is set against: truncateTail keeps the last
// 2 000 lines or 50 KB of an output, whichever is hit first, whole lines counted from the end, and
// Pi adds its one-line notice. Not a test.

import { DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, formatSize, truncateTail } from "@mariozechner/pi-coding-agent";

/** Pi's bash cut of `text`: the first 1-based line it keeps, and the length of what the model gets. */
export function cutLikePi(text: string): { firstKeptLine: number; chars: number } {
	const cut = truncateTail(text, { maxLines: DEFAULT_MAX_LINES, maxBytes: DEFAULT_MAX_BYTES });
	// truncateTail splits on "\n", so a final newline is one more (empty) line at the end.
	const splitLines = text.split("\n").length;
	const firstKeptLine = splitLines - cut.outputLines + 1 + (cut.lastLinePartial ? 1 : 0);
	const startLine = cut.totalLines - cut.outputLines + 1;
	const notice = cut.truncated
		? `\n\n[Showing lines ${startLine}-${cut.totalLines} of ${cut.totalLines}${cut.truncatedBy === "bytes" ? ` (${formatSize(DEFAULT_MAX_BYTES)} limit)` : ""}. Full output: /tmp/pi-bash-0123456789abcdef.log]`
		: "";
	return { firstKeptLine, chars: cut.content.length + notice.length };
}
