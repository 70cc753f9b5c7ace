// The timestamp a logger or a CI service prints before every line of a log (hosted CI's raw logs:
// `2026-12-02T10:18:20.9133560Z `; loggers: `2024-05-01 12:00:00,123 `, `[10:18:20] `; BuildKit's
// `#8 12.345 `; syslog's and journald's, with the host and the program: `Dec  6 10:00:00 ci-7
// make[4123]: `), and the
// tab-separated columns a CI client puts before it (`gh run view --log`: `build\tRun npm test\t`
// then the timestamp). What a line says starts after them: a failure word "at the line's start",
// a line's indentation, a section's opener are read there. Pure; one linear match at the start.

/**
 * Syslog's header after its time: the host, then the program and its process id (the kernel has
 * none): `ci-7 make[4123]: `. A line's own words (`error TS2304: `) are no host and program.
 */
const SYSLOG_HEADER = String.raw`[\w.-]{1,64} (?:kernel|[\w.@/()-]{1,64}\[\d{1,10}\]): `;
/**
 * A date and time, or a time, optionally in brackets or parentheses (Bazel's `(10:18:20) `), then
 * one space or tab (the indentation after it is the line's own); then, where GitLab's runner stamps
 * lines (FF_TIMESTAMPS), its stream column: the stream's number, O or E (stdout, stderr), "+" when
 * the line goes on one cut before (`00O+ `); or the container runtime's (the CRI log format kubelet
 * writes, `/var/log/containers/*.log`): the stream's name, then P for a partial line or F for a full
 * one (`stdout F `); or syslog's header (rsyslog's file format, `journalctl -o short-iso`:
 * `2026-12-06T10:00:35+00:00 ci-7 npm[4123]: `). Sticky: matched where a caller sets lastIndex.
 */
const STAMP = new RegExp(
	String.raw`[[(]?(?:\d{4}-\d\d-\d\d[T ])?\d\d:\d\d:\d\d(?:[.,]\d{1,9})?(?:Z|[+-]\d\d(?::?\d\d)?)?[\])]?[ \t](?:[\da-f]{2}[OE]\+?[ \t]|std(?:out|err) [PF] |${SYSLOG_HEADER})?`,
	"y",
);
/**
 * BuildKit's plain progress (`docker build` in CI): each line a build step prints after the step's
 * number and the seconds since it started (`#8 12.345 `), the time column docker puts before it.
 */
const BUILD_STEP_STAMP = /#\d{1,5} \d{1,7}\.\d{3} /y;
/**
 * The month's name, the day and the time: moreutils' `ts` (`Dec 06 10:00:00 `), and syslog's and
 * journald's line (`journalctl`, `/var/log/syslog`) with its header (SYSLOG_HEADER).
 */
const SYSLOG_STAMP = new RegExp(
	String.raw`(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) [ \d]\d \d\d:\d\d:\d\d(?:\.\d{1,9})? (?:${SYSLOG_HEADER})?`,
	"y",
);
/** At most this many tab-separated columns, each at most COLUMN_CHARS long, before a timestamp. */
const MAX_COLUMNS = 3;
const COLUMN_CHARS = 120;
const DIGIT_0 = 0x30;
const DIGIT_9 = 0x39;
const CAPITAL_A = 0x41;
const CAPITAL_Z = 0x5a;
const OPEN_BRACKET = 0x5b;
const OPEN_PARENTHESIS = 0x28;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const HASH = 0x23;
const TAB = 0x09;
const BACKSLASH = 0x5c;
const QUOTE = 0x22;
const BYTE_ORDER_MARK = 0xfeff;

/**
 * What a runner draws before each line of one job's output, after the timestamp: the name of the
 * stream it was written to, in brackets (`[stderr] `, `[stdout] `: one process's lines, whichever
 * stream, are one job's), or the left edge of the box it draws around the job (pnpm's `│ ` under
 * `packages/api test$ jest`, down to `└─ Failed in 2.3s`; a blank line of it is the edge alone).
 */
const JOB_MARGIN = /\[std(?:out|err)\] |\u2502(?: |$)/y;
const BOX_EDGE = 0x2502;

/** Characters of the columns, timestamp and job's margin `text` starts with, and the one space after them (0 when none). */
export function stampLength(text: string): number {
	// A file's byte-order mark (hosted CI's raw logs start with one) comes before its first line's stamp.
	const start = text.charCodeAt(0) === BYTE_ORDER_MARK ? 1 : 0;
	let from = start;
	for (let column = 0; column <= MAX_COLUMNS; column++) {
		const stamp = stampAt(text, from);
		// A program's own timestamp may follow CI's (a logger run in a CI job: `…Z 2026-12-01 03:10:03,591 INFO …`).
		if (stamp > 0) {
			const end = from + stamp + stampAt(text, from + stamp);
			return end + jobMarginAt(text, end);
		}
		if (column === MAX_COLUMNS) break;
		// The next column, when a tab ends this one soon enough.
		const tab = text.indexOf("\t", from);
		if (tab < 0 || tab - from > COLUMN_CHARS) break;
		from = tab + 1;
		if (text.charCodeAt(from) === TAB) break;
	}
	return jobMarginAt(text, start);
}

/** The length of the job's margin (JOB_MARGIN) `text` has at `from`, 0 when none. */
function jobMarginAt(text: string, from: number): number {
	const first = text.charCodeAt(from);
	if (first !== OPEN_BRACKET && first !== BOX_EDGE) return 0;
	JOB_MARGIN.lastIndex = from;
	return JOB_MARGIN.exec(text)?.[0].length ?? 0;
}

/**
 * The length of the timestamp (STAMP; BUILD_STEP_STAMP after a `#`; SYSLOG_STAMP after a capital)
 * `text` has at `from`, 0 when none.
 */
function stampAt(text: string, from: number): number {
	const first = text.charCodeAt(from);
	const stamp =
		first === HASH
			? BUILD_STEP_STAMP
			: first >= CAPITAL_A && first <= CAPITAL_Z
				? SYSLOG_STAMP
				: first === OPEN_BRACKET || first === OPEN_PARENTHESIS || (first >= DIGIT_0 && first <= DIGIT_9)
					? STAMP
					: null;
	if (stamp === null) return 0;
	stamp.lastIndex = from;
	const match = stamp.exec(text);
	return match === null ? 0 : match[0].length;
}

/** `text` after its columns and timestamp (itself when it has none). */
export function unstamped(text: string): string {
	const length = stampLength(text);
	return length === 0 ? text : text.slice(length);
}

/**
 * The tag a multiplexer puts before each line of one of the jobs whose output it interleaves: a
 * service's or a target's name and a bar (docker compose's `api-1  | `, foreman's and honcho's
 * `web.1  | `, Earthly's `+test | `), a
 * package's task (turborepo's `@acme/api:test: `, `web:build: `; pnpm's `packages/api test: `), a
 * scoped package (lerna's `@acme/api: `), a name in brackets (concurrently's
 * `[api] `, strace's `[pid 1001] `), a program and its process or dyno, as syslog tags a line
 * (Heroku's `app[web.1]: `, `sshd[812]: `, make's `make[2]: `; not rustc's `error[E0308]: `), a
 * first column a tab ends that names a file or a host (GNU parallel's `--tag`: `tests/test_cart.py\t`;
 * not go test's `FAIL\t` nor `ok  \t`, nor du's `4.0K\t`). Read per line, a tag may also be a
 * line's own first word (`[INFO] ` is a level, `name | value` a table's row): a caller takes it for
 * one when the lines around share it.
 */
export const LINE_TAG =
	/^(?:[A-Za-z+][\w.@/-]{0,40} +\| |@?[\w./-]{1,60}:(?=[\w-]{0,29}[A-Za-z])[\w-]{1,30}: |(?=[\w.@-]{0,40}\/)[\w.@/-]{1,80} [\w:-]{1,30}: |@[\w.-]{1,40}\/[\w.-]{1,60}: |\[[^\]\s][^\]]{0,38}\]:? |(?!(?:error|warning|warn|note|help|info|debug|fatal|panic)\[)[A-Za-z][\w.-]{0,40}\[[\w.:-]{1,40}\]: |(?=[^\t/.]{0,79}[/.])[A-Za-z./~][^\t]{0,79}\t)/i;
/** A tag that is a level or a verdict (`[INFO] `, `[ERROR] `, `[PASS] `): the line's own first word, no job's. */
const LEVEL_TAG =
	/^\[(?:info|error|errors|warn|warning|debug|trace|fatal|notice|crit|critical|alert|emerg|severe|ok|fail|failed|pass|passed|skip|skipped)\]:? $/i;
/** A tag that counts or tells the time (`[12/345] `, `[100%] `, `[Sun Dec 06 10:00:00 2026] `): it changes from line to line. */
const COUNTING_TAG = /\d:\d\d|\d%|\d\/\d/;

/**
 * Can `tag` (lineTagOf) name a job whose lines a multiplexer interleaves with other jobs' (a name,
 * not a level, a verdict, a progress count or a time)? Whether it does is told by the lines around
 * it (hunks.ts neighboursOf).
 */
export function isStreamTag(tag: string): boolean {
	return /[A-Za-z]/.test(tag) && !LEVEL_TAG.test(tag) && !COUNTING_TAG.test(tag);
}

/** Characters of a line (after its timestamp) a tag is looked for in: every form is bounded, and shorter. */
const TAG_WINDOW_CHARS = 80;

/** The tag (LINE_TAG) `text` has after its columns and timestamp, "" when none. */
export function lineTagOf(text: string): string {
	return lineTagAt(text, stampLength(text));
}

/** The tag (LINE_TAG) `text` has at `from` (where its columns and timestamp end: stampLength), "" when none. */
export function lineTagAt(text: string, from: number): string {
	const match = LINE_TAG.exec(text.slice(from, from + TAG_WINDOW_CHARS));
	return match === null ? "" : match[0];
}

/**
 * `text` without `tag` after its columns and timestamp (itself when it has another tag or none): a line
 * read as its neighbours are, when they share the tag of the line they are read around.
 */
export function untagged(text: string, tag: string): string {
	if (tag === "") return text;
	const stamp = stampLength(text);
	return text.startsWith(tag, stamp) ? text.slice(0, stamp) + text.slice(stamp + tag.length) : text;
}

/** Longest line read as a JSON-lines record for the line it wraps (wrappedLineOf): longer ones are documents. */
export const MAX_WRAPPING_RECORD_CHARS = 16 * 1024;
/**
 * A JSON-lines record's text member with its string value: a container runtime's `{"log":"…\n"}`
 * (docker's json-file, fluentd), a logger's `"msg"` or `"message"`, `go test -json`'s `"Output"`.
 * The value's characters are either not a quote nor a backslash, or an escape: one way to match each.
 */
const TEXT_MEMBER = /"(?:log|msg|message|output|text|line)" ?: ?"((?:[^"\\]|\\.)*)"/gi;

/**
 * The line a JSON-lines record wraps in its text member, decoded (`{"log":"FAIL src/a.test.js\n",
 * "stream":"stderr"}` wraps `FAIL src/a.test.js`), without its line end; undefined when `text` is no
 * such record (it starts with `{`, at most MAX_WRAPPING_RECORD_CHARS long) or the value is not a
 * valid JSON string.
 */
export function wrappedLineOf(text: string): string | undefined {
	const member = textMemberOf(text);
	const quoted = member !== null ? member[1] : logfmtMessageOf(text);
	if (quoted === undefined) return undefined;
	try {
		return (JSON.parse(`"${quoted}"`) as string).replace(/\r?\n$/, "");
	} catch {
		return undefined;
	}
}

/** Where the line a JSON-lines record wraps starts in it (its text member's value: wrappedLineOf), 0 when it wraps none. */
export function wrappedLineStart(text: string): number {
	const member = textMemberOf(text);
	if (member !== null) return memberValueStart(member);
	const start = logfmtMessageStart(text);
	return start < 0 ? 0 : start;
}

/** Where a text member's value (TEXT_MEMBER's group 1) starts in the record: after its opening quote. */
function memberValueStart(member: RegExpExecArray): number {
	return member.index + member[0].length - member[1].length - 1;
}

/**
 * A record's level member (logfmt's `level=info`, `lvl=warn`, JSON's `"level":"info"`,
 * `"severity":"ERROR"`): the level word, in group 1.
 */
const RECORD_LEVEL = /(?:^|[\s{,])"?(?:level|lvl|severity)"?[=:] *"?([A-Za-z]{1,12})\b/;

/**
 * The level, lowercased, of a record that wraps a line (`info` of `time=… level=info msg="make:
 * *** [all] Error 2"`): read before the line the record wraps, or after it in a JSON record
 * (`{"msg":"…","level":"info"}`); undefined for any other line or a record without one.
 */
export function recordLevelOf(text: string): string | undefined {
	const member = textMemberOf(text);
	const start = member !== null ? memberValueStart(member) : logfmtMessageStart(text);
	if (start <= 0) return undefined;
	// A logfmt record's level stands before its message; a JSON record's may follow it.
	const level =
		RECORD_LEVEL.exec(text.slice(0, start)) ??
		(member !== null ? RECORD_LEVEL.exec(text.slice(quotedEnd(text, start))) : null);
	return level?.[1].toLowerCase();
}

/** Where the JSON string whose text starts at `start` ends: after its closing quote (the text's end when unclosed). */
function quotedEnd(text: string, start: number): number {
	for (let at = start; at < text.length; at++) {
		const char = text.charCodeAt(at);
		if (char === 0x5c) at++;
		else if (char === 0x22) return at + 1;
	}
	return text.length;
}

/** A logfmt record starts with a key and `=` (`time=`, `ts=`, `level=`). Sticky: matched where a caller sets lastIndex. */
const LOGFMT_START = /[A-Za-z_][\w.-]{0,30}=/y;
/** The message members of a logfmt record whose quoted value is the line it wraps. */
export const LOGFMT_MESSAGES: readonly string[] = [' msg="', ' message="'];

/** Does `text` hold a logfmt record's message member (LOGFMT_MESSAGES)? A cheap test before wrappedLineStart reads it. */
export function isLogfmtRecord(text: string): boolean {
	return LOGFMT_MESSAGES.some((key) => text.includes(key));
}

/**
 * Where the quoted message of a logfmt record (`time=… level=info msg="FAIL\tpkg"`, as Go's slog
 * and logrus write a line) starts, after its opening quote; -1 when `text` is no such record.
 */
function logfmtMessageStart(text: string): number {
	if (text.length > MAX_WRAPPING_RECORD_CHARS) return -1;
	// The record starts after the line's timestamp (hosted CI's before a supervisor's record).
	const from = stampLength(text);
	LOGFMT_START.lastIndex = from;
	if (!LOGFMT_START.test(text)) return -1;
	for (const key of LOGFMT_MESSAGES) {
		const at = text.indexOf(key, from);
		if (at >= 0) return at + key.length;
	}
	return -1;
}

/** The quoted message of a logfmt record (logfmtMessageStart), still escaped; undefined when none or unclosed. */
function logfmtMessageOf(text: string): string | undefined {
	const start = logfmtMessageStart(text);
	if (start < 0) return undefined;
	for (let at = start; at < text.length; at++) {
		const code = text.charCodeAt(at);
		if (code === BACKSLASH) at++;
		else if (code === QUOTE) return text.slice(start, at);
	}
	return undefined;
}

/** Characters before a record a line may start with: a timestamp, a tag, a column (GNU parallel's `--tag`). */
const MAX_RECORD_PREFIX_CHARS = 200;

/**
 * The text member (TEXT_MEMBER) of a JSON-lines record, null when `text` is none: the line is a
 * record from a `{"` at its start or after a prefix of at most MAX_RECORD_PREFIX_CHARS, to a `}` at
 * its end.
 */
function textMemberOf(text: string): RegExpExecArray | null {
	if (text.length > MAX_WRAPPING_RECORD_CHARS) return null;
	const record = text.trimEnd();
	if (record.charCodeAt(record.length - 1) !== CLOSE_BRACE) return null;
	const start = text.charCodeAt(0) === OPEN_BRACE ? 0 : text.slice(0, MAX_RECORD_PREFIX_CHARS + 2).indexOf('{"');
	if (start < 0) return null;
	TEXT_MEMBER.lastIndex = start;
	return TEXT_MEMBER.exec(text);
}
