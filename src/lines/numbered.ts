// The one numbered-line format, wherever an output line is shown with its number (the view, the
// lines and search answers, the cut report under a recovery marker, a masked view's stub):
// `<number><separator> <text>`, the number right-aligned to the width of the output's largest line
// number (at least MIN_LINE_NUMBER_WIDTH), ":" for a line shown for itself, "-" for context (as grep).
// Pure. Invariant: the same line of the same output looks the same in every place it is shown.

import type { ScannedLine } from "./render.js";
import * as renderModule from "./render.js";
import * as textModule from "./text.js";

// Imported bindings copied into module constants once: under Pi's extension loader (jiti) every
// read of an imported binding goes through an interop Proxy, and these are read on every line.
const { renderTerminalLine } = renderModule;
const { keepEnd, keepStart } = textModule;

/** Narrowest line number column. */
export const MIN_LINE_NUMBER_WIDTH = 6;

/** ":" for a line shown for itself (a hit, a signal line, a line asked for), "-" for context around one. */
export type LineSeparator = ":" | "-";

/** Width of line numbers for an output of `totalLines` lines. */
export function lineNumberWidth(totalLines: number): number {
	return Math.max(MIN_LINE_NUMBER_WIDTH, String(totalLines).length);
}

/** `<number><separator> <text>`, the number padded to `width`. */
export function formatNumberedLine(lineNumber: number, separator: LineSeparator, text: string, width: number): string {
	return `${String(lineNumber).padStart(width, " ")}${separator} ${text}`;
}

/**
 * A scanned line numbered: its text clipped to `maxChars` with a note of what was cut (its end kept
 * when the scan kept its end), then `note` (the view's note of repeats, rarity or a JSON path).
 */
export function formatScannedLine(
	line: ScannedLine,
	width: number,
	maxChars: number,
	separator: LineSeparator = ":",
	note = "",
): string {
	// Scanned lines are already rendered; rendering again only matters for hand-made lines.
	const shown = renderTerminalLine(line.text);
	if (line.window) {
		// A stretch from inside a giant line, with its characters' place in the line (1-based).
		const where = `[chars ${line.window.start + 1}–${line.window.end} of ${line.totalChars}]`;
		const kept = keepStart(shown, maxChars);
		const cut = kept.length < shown.length ? ` … [+${shown.length - kept.length} chars]` : "";
		return formatNumberedLine(line.lineNumber, separator, `${where} ${kept}${cut}${note}`, width);
	}
	const kept = line.keptEnd ? keepEnd(shown, maxChars) : keepStart(shown, maxChars);
	// Counted from what is really kept: a cut never splits a surrogate pair, so it may keep one less.
	const hidden = shown.length - kept.length + (line.partial ? Math.max(0, line.totalChars - line.text.length) : 0);
	let text = shown;
	if (hidden > 0) text = line.keptEnd ? `[+${hidden} chars] … ${kept}` : `${kept} … [+${hidden} chars]`;
	return formatNumberedLine(line.lineNumber, separator, `${text}${note}`, width);
}
