// What pi-overflow knows about Pi's own bash tool result: the notice Pi appends when it cut the
// output (`[Showing lines a-b of N. Full output: <tmpdir>/pi-bash-<hex>.log]`), the status line it
// throws with when the command failed (then `details` and its fullOutputPath are lost), and the
// name of its spill files. Pure: text in, facts out; nothing here opens a file. The notice is
// untrusted (a command can print one): it only names a candidate that source.ts must verify.

import { tmpdir } from "node:os";
import { basename, dirname, isAbsolute, resolve } from "node:path";

/** What Pi's notice says about the output it cut. */
export interface PiBashNotice {
	/** The spill file it names. */
	path: string;
	/** Pi's line count of the whole output ("of N"): newlines + 1. */
	totalLines: number;
	/** The output Pi kept, before the notice; "" when Pi kept nothing (it then shows "(no output)"). */
	kept: string;
	/** The status line after the notice (a failed command), if any. */
	status?: string;
}

/** The status line Pi's bash ends a failed result with. */
const STATUS = String.raw`Command exited with code -?\d{1,10}|Command timed out after [\d.]{1,20} seconds|Command aborted`;
const STATUS_AT_END = new RegExp(`(?:^|\\n)(${STATUS})$`);
// The notice, then on failure "\n\n<status>", at the very end of the text. Bounded repetitions only.
const NOTICE_AT_END = new RegExp(
	String.raw`\n\n\[Showing (?:lines \d{1,12}-\d{1,12} of (\d{1,12})(?: \([^)\]\n]{1,40}\))?|last [^\]\n]{1,40} of line (\d{1,12}) \(line is [^)\]\n]{1,40}\))\. Full output: ([^\]\n]{1,4096})\](?:\n\n(${STATUS}))?$`,
);
const SPILL_NAME = /^pi-bash-[0-9a-f]{1,64}\.log$/;
/** Only the end of a result is searched for Pi's notice. */
const NOTICE_SEARCH_CHARS = 8192;
/** What "]\n\n" and the longest status line take at the end of a text (55 characters). */
const STATUS_TAIL_CHARS = 64;
/** What Pi's bash shows when it kept no output (the last line was empty and the one before it too long). */
const NO_OUTPUT = "(no output)";

/**
 * Pi's notice at the very end of a bash result's text (the text as the tool produced it), or
 * undefined. On success the notice ends the text; on failure the status line follows it.
 */
export function parsePiBashNotice(text: string): PiBashNotice | undefined {
	if (!mayEndWithNotice(text)) return undefined;
	const from = Math.max(0, text.length - NOTICE_SEARCH_CHARS);
	const match = NOTICE_AT_END.exec(from > 0 ? text.slice(from) : text);
	if (!match) return undefined;
	const kept = text.slice(0, from + match.index);
	const status = match[4];
	return {
		path: match[3],
		totalLines: Number(match[1] ?? match[2]),
		kept: kept === NO_OUTPUT ? "" : kept,
		...(status !== undefined ? { status } : {}),
	};
}

/**
 * Whether a text can end with Pi's notice: it ends with "]", or with "]\n\n" and a status line.
 * Nearly every result fails this in a few characters, before the notice pattern walks 8 KiB.
 */
function mayEndWithNotice(text: string): boolean {
	const last = text.charCodeAt(text.length - 1);
	if (last === 0x5d) return true; // "]"
	// A status line ends with a digit, "seconds" or "aborted".
	if (!((last >= 0x30 && last <= 0x39) || last === 0x73 || last === 0x64)) return false;
	return text.includes("]\n\nCommand ", text.length - STATUS_TAIL_CHARS);
}

/** True for `<os tmpdir>/pi-bash-<hex>.log`, absolute and normalised: the only spill path taken from result text. */
export function isPiBashSpillPath(path: string): boolean {
	if (!isAbsolute(path) || resolve(path) !== path) return false;
	return dirname(path) === resolve(tmpdir()) && SPILL_NAME.test(basename(path));
}

/** Pi's verdict on a failed command ("Command exited with code 2"), when the text ends with it. */
export function findPiBashStatus(text: string): string | undefined {
	return STATUS_AT_END.exec(text.slice(-200))?.[1];
}
