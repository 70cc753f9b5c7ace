// What a signal line says apart from what varies between two runs of the same command: its
// signature. Timestamps (a log line's stamp and any date or time in it), durations, memory
// addresses and long hex ids, process and thread ids, random seeds and the random parts of temp
// paths are replaced by placeholders; what identifies a failure stays (test names, file paths and
// their line:column, error codes, messages). The loose signature also drops every number that stands
// alone (a location's line, a count): two lines equal by it are one failure that moved or whose
// count changed. Pure; every pattern is linear (no nested quantifier, no backtracking across words).

import { unstamped } from "../lines/stamp.js";

/** Longest part of a line a signature is made of: two lines equal this far are the same failure. */
export const SIGNATURE_CHARS = 400;

/** What varies between runs, in the order replaced (each replacement's text matches none of the later patterns). */
const VOLATILE: ReadonlyArray<readonly [RegExp, string]> = [
	// An ISO date and time, or a date, or a time of day.
	[/\d{4}-\d\d-\d\d(?:[T ]\d\d:\d\d(?::\d\d)?(?:[.,]\d{1,9})?(?:Z|[+-]\d\d:?\d\d)?)?/g, "<time>"],
	[/\b\d{1,2}:\d\d:\d\d(?:[.,]\d{1,9})?\b/g, "<time>"],
	// A UUID, an address, a long hex id (a commit, a hash, an object's id): 8 or more hex digits with a digit among them.
	[/\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b/g, "<id>"],
	[/\b0x[0-9a-fA-F]+\b/g, "0x<addr>"],
	[/\b(?=[a-fA-F]*\d)[0-9a-fA-F]{8,}\b/g, "<hex>"],
	// A duration: a number and a unit of time (`1.23s`, `450 ms`, `1m23s`, `(0.5 sec)`), or a number after a word that names one.
	[/\b\d+m\d+(?:\.\d+)?s\b/g, "<dur>"],
	[/\b\d+(?:\.\d+)?[ \t]?(?:ns|µs|μs|us|ms|s|sec|secs|seconds?|m|min|mins|minutes?|h|hrs?|hours?)\b/g, "<dur>"],
	[
		/\b(duration|elapsed|took|time|timing|runtime|total_time)(_ms|_ns|_us|_s|_secs?|_seconds)?(["']?[ \t]*[:=]?[ \t]*)\d+(?:\.\d+)?/gi,
		"$1$2$3<dur>",
	],
	// A process or thread id, and a seed.
	[/\b(pid|PID|tid|TID|thread|Thread|ThreadId|process|worker|seed|Seed|SEED)(\(|[ \t]*[=:#]?[ \t]*)\d+/g, "$1$2<n>"],
	[/([A-Za-z_][\w.-]*)\[\d+\]:/g, "$1[<pid>]:"],
];

/** A temp directory's path and what follows it up to a space or quote. */
const TEMP_PATH =
	/(?:\/private)?(?:\/var\/folders\/[^/\s'"]+\/[^/\s'"]+\/T|\/var\/tmp|\/tmp|\/dev\/shm)(?:\/[^/\s'":,;()[\]]+)+/g;
/**
 * A part of a temp path made by the run: a digit in it, mktemp's `tmp.XXXXXXXX`, or mkdtemp's random
 * suffix (six or more letters and digits of both cases after a `-`, `_` or `.`: `cache-gYpHPa`).
 */
const RANDOM_SEGMENT = /^(?:.*\d.*|tmp[._-]?\w*|.*[-_.](?=[A-Za-z]*[A-Z])(?=[A-Za-z]*[a-z])[A-Za-z]{6,})$/;
/** A number that stands alone (not part of a word or a decimal already replaced). */
const LONE_NUMBER = /(?<![\w.<])\d+(?:\.\d+)?(?![\w>])/g;

/**
 * The signature of a signal line: its text after its stamp, with what varies between runs replaced
 * and white space made single. Equal signatures are the same signal line.
 */
export function signatureOf(text: string): string {
	let out = unstamped(text).slice(0, SIGNATURE_CHARS);
	out = out.replace(TEMP_PATH, (path) =>
		path
			.split("/")
			.map((segment, index) => (index >= 2 && RANDOM_SEGMENT.test(segment) ? "*" : segment))
			.join("/"),
	);
	for (const [pattern, replacement] of VOLATILE) out = out.replace(pattern, replacement);
	return out.replace(/\s+/g, " ").trim();
}

/** The signature with every number that stands alone made `#`: a failure that moved (its line) or whose count changed. */
export function looseSignatureOf(signature: string): string {
	return signature.replace(LONE_NUMBER, "#");
}
