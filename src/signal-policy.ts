// The signal policy: everything pi-overflow decides about which lines of an output matter, in one
// place. What counts is DEFAULT_SIGNAL_PATTERN (src/signals.ts, with its reasons per part); here:
// how severe a matching line is (a failure, or only a warning or a log line at a lower level), what
// shape a line has (its text with the variable parts — numbers, ids, quoted strings, paths —
// replaced, so that a thousand lines that differ only in a counter are one shape), which lines
// around a signal belong to it (its block and a little leading context), and how candidates rank
// (errors before warnings, rare shapes before common ones). Pure: strings in, decisions out.

/** How much a signal line says about a failure: an error (2), or only a warning / a lower log level (1). */
export type Severity = 1 | 2;
export const SEVERITY_ERROR: Severity = 2;
export const SEVERITY_WARNING: Severity = 1;

/** Words that only warn (a line with them and no failure word is a warning). */
const WARNING_WORDS = /\b(?:warn(?:ing)?s?|deprecat\w*|notice|hint|note)\b/i;
/** Words that report a failure. */
const FAILURE_WORDS =
	/err|fail|fatal|panic|exception|abort|fault|denied|killed|assert|traceback|undefined reference|not ok|cannot|unable|refused|timed out|✗|✖/i;
/**
 * A log level near the start of a line (after a timestamp, in brackets, as `level=` or a JSON
 * field, or glog's one-letter form `W1130 12:00:00.000`). The level decides the severity of a log
 * line: `WARN … connection error` is a warning, `ERROR … retrying` an error.
 */
const LOG_LEVEL =
	/^(?:[^\n]{0,48}?(?:^|[\s[|(<"'])(?:level"?[=:] *"?)?)(TRACE|DEBUG|INFO|NOTICE|WARN(?:ING)?|ERROR|ERR|FATAL|SEVERE|CRIT(?:ICAL)?|PANIC|EMERG(?:ENCY)?|trace|debug|info|notice|warn(?:ing)?|error|err|fatal|severe|crit(?:ical)?|panic|emerg(?:ency)?)(?=$|[\s\]|:>)"',])|^([IWEF])\d{4} \d/;
const ERROR_LEVELS = /^(?:error|err|fatal|severe|crit(?:ical)?|panic|emerg(?:ency)?|e|f)$/i;
const WARNING_LEVELS = /^(?:warn(?:ing)?|w)$/i;

/**
 * The severity of a line that matched the signal pattern. A line's own log level decides when it
 * has one; otherwise a warning word without a failure word makes it a warning.
 */
export function classifySeverity(text: string): Severity {
	const level = LOG_LEVEL.exec(text);
	if (level) {
		const name = level[1] ?? level[2] ?? "";
		if (ERROR_LEVELS.test(name)) return SEVERITY_ERROR;
		if (WARNING_LEVELS.test(name)) return SEVERITY_WARNING;
		// INFO, DEBUG, TRACE, NOTICE: the level says the program carried on.
		return SEVERITY_WARNING;
	}
	return WARNING_WORDS.test(text) && !FAILURE_WORDS.test(text) ? SEVERITY_WARNING : SEVERITY_ERROR;
}

// ---------------------------------------------------------------------------------------------
// Shapes

/** Characters of a line that decide its shape. */
const SHAPE_CHARS = 160;
/**
 * The variable parts of a line, in one pass: quoted strings, paths, hex ids and numbers. Linear:
 * every alternative is bounded or a simple run.
 */
const VARIABLE_PARTS =
	/"[^"\n]{0,200}"|'[^'\n]{0,200}'|`[^`\n]{0,200}`|(?:[\w.@~+-]*\/)+[\w.@~+-]*|\b0x[0-9a-f]+\b|\b[0-9a-f]{7,}\b|[+-]?\d+(?:[.,:]\d+)*/gi;

/**
 * The shape of a line: its start with quoted strings, paths, hex ids and numbers replaced, so that
 * lines written by one print statement have one shape (`request 17 took 5 ms`, `request 18 took 12
 * ms`). Used to count how common a kind of line is.
 */
export function shapeOf(text: string): string {
	return text
		.slice(0, SHAPE_CHARS)
		.replace(VARIABLE_PARTS, (part) => (part[0] === '"' || part[0] === "'" || part[0] === "`" ? "Q" : /^[+-]?\d/.test(part) ? "0" : "V"))
		.replace(/\s+/g, " ")
		.trim();
}

// ---------------------------------------------------------------------------------------------
// Hunks: the block a signal line belongs to

/** Most lines after a signal line shown with it (its block), and before it (leading context). */
export const HUNK_AFTER_LINES = 16;
/** Lines of a block looked at below its signal line, before runs are thinned (a deep backtrace). */
export const HUNK_BLOCK_SCAN_LINES = 48;
/** A line with a letter or a digit in it (not drawing alone). */
const WORDED = /[\p{L}\p{N}]/u;
/** Consecutive lines of one shape in a block from which only the first and the last are kept. */
const BLOCK_RUN_LINES = 3;

/**
 * A block with each run of BLOCK_RUN_LINES or more lines of one shape thinned to its first and last
 * line: a backtrace 30 frames deep in one recursive function keeps the frame that faulted, the
 * recursion's two ends and the frame below it (gdb's `#31 … in worker (arg=0x4) at src/stock.c:48`).
 */
export function thinRuns<T extends { text: string }>(lines: readonly T[]): T[] {
	// Past HUNK_AFTER_LINES, drawing goes first: gutters, carets and rules (`    |      |   ^~~~`)
	// say nothing the lines with words around them do not (gcc -fanalyzer's event paths).
	if (lines.length > HUNK_AFTER_LINES) lines = lines.filter((line) => WORDED.test(line.text));
	const kept: T[] = [];
	for (let start = 0; start < lines.length; ) {
		const shape = shapeOf(lines[start].text);
		let end = start + 1;
		while (end < lines.length && shapeOf(lines[end].text) === shape) end++;
		if (end - start >= BLOCK_RUN_LINES) kept.push(lines[start], lines[end - 1]);
		else kept.push(...lines.slice(start, end));
		start = end;
	}
	return kept;
}
export const HUNK_BEFORE_LINES = 4;
/** How far above a signal line its section header (a test's name, a task) is looked for. */
export const HUNK_HEADER_LOOKBACK_LINES = 200;
/** How far into a block a signal line opens (`FAILED! => {`) its message lines are looked for, and how many are kept. */
export const BLOCK_SCAN_LINES = 120;
export const BLOCK_MESSAGE_LINES = 3;

/**
 * Lines that continue the diagnostic above them whatever their indentation: a stack frame (`at …`),
 * rustc's `-->` and `|` gutters and `= note`, a numbered source line (`20 |`), carets and tildes
 * under code, the `+`/`-` lines of a diff, `Caused by:`, `... 3 more`, a `note:`/`help:`
 * diagnostic, labelled details (PostgreSQL's `DETAIL:`/`HINT:`/`LINE 3:`, an assertion's
 * `expected:`/`got:`/`want:`/`diff:`), and TAP's indented `#` diagnostics.
 */
const CONTINUATION =
	/^\s*(?:at |-->|::: |\||\d+\s*\||= |[~^][~^\s]*$|[+-] |caused by\b|\.\.\. \d+ more|(?:note|help|hint|detail|context|where|line \d+|query|expected|received|actual|got|want|wanted|left|right|found|diff|stack(?:trace)?|locks held)\b\s*:)|^#\s{2,}\S|^#\d+ +(?:0x[\da-f]+ in )?[\w:~<>.]+ \(|^\S+:\d+(?::\d+)?: (?:note|help):/i;
/**
 * A line that opens a section a failure may sit in: a test's name or a build step (GoogleTest's
 * `[ RUN      ]`, Go's `=== RUN`, pytest's `____ test_x ____`, Rust's `---- x stdout ----`, Ansible's
 * `TASK [x]`, a numbered failure `1) name`). Shown above a signal that follows it.
 */
const SECTION_HEADER =
	/^(?:\[ RUN +\]|=== RUN\b|--- (?:FAIL|PASS):|_{3,} .+ _{3,}$|-{3,} .+ -{3,}$|={3,} .+ ={3,}$|(?:TASK|PLAY|RUNNING HANDLER) \[|\s*\d+\) \S)/;

/** A line that is only a source location (`src/tariff.f90:17:28:`), printed above the snippet and message it locates. */
const LOCATION_ALONE = /^\S+:\d+(?::\d+)?:?\s*$/;

/** A signal line that opens a structured block: it ends with `{` or `[` (a JSON or YAML error object follows). */
const OPENS_BLOCK = /[{[]\s*$/;
/** Lines inside such a block that say what went wrong: a message, an error, a reason, stderr. */
const MESSAGE_KEY = /^\s*"?(?:msg|message|error|errors|reason|stderr|detail|details|cause|description|exception|failure)"?\s*[:=]/i;

/** Does the signal line open a structured block whose message lines belong to it? */
export function opensBlock(line: string): boolean {
	return OPENS_BLOCK.test(line);
}

/** Is `line`, inside a block a signal line opened, one that says what went wrong? */
export function isBlockMessage(line: string): boolean {
	return MESSAGE_KEY.test(line);
}

/**
 * A margin some tools put before every line of a report, after which the report's own indentation
 * starts: valgrind's `==12345== ` (memcheck, helgrind: `==1==    at 0x…: f (x.c:15)` is a frame
 * under `==1== Possible data race …`).
 */
const REPORT_MARGIN = /^==\d{1,10}== ?/;

/** Is `line` (after its report margin) in one of the known continuation forms? */
function isContinuation(line: string): boolean {
	return CONTINUATION.test(line.charCodeAt(0) === 0x3d ? line.replace(REPORT_MARGIN, "") : line);
}

/** Leading whitespace width (a tab counts as 4), after a report margin; -1 for a blank line (or a bare margin). */
export function indentOf(text: string): number {
	let width = 0;
	const margin = text.charCodeAt(0) === 0x3d ? REPORT_MARGIN.exec(text) : null;
	for (let i = margin === null ? 0 : margin[0].length; i < text.length; i++) {
		const char = text.charCodeAt(i);
		if (char === 0x20) width += 1;
		else if (char === 0x09) width += 4;
		else return width;
	}
	return -1; // blank
}

/** A line whose shape the whole output has at most this many times is rare: unlike the output's routine lines. */
export const RARE_CONTEXT_SHAPE_LINES = 2;
/**
 * A line whose shape makes up at least this share of the output's lines (and at least
 * ROUTINE_CONTEXT_MIN_LINES of them) is routine: the build's `  CC [M] module_N.o` around an
 * error is not part of its block, however it is indented.
 */
export const ROUTINE_CONTEXT_SHARE = 0.25;
export const ROUTINE_CONTEXT_MIN_LINES = 50;

/** How a line's shape compares with the rest of the output, for the block rules. */
export type ShapeKind = "rare" | "routine" | "usual";

/** The ShapeKind of a line whose shape the output has `count` times among `shapedLines` (0: not known). */
export function classifyShape(count: number, shapedLines: number): ShapeKind {
	if (count <= 0) return "usual";
	if (count <= RARE_CONTEXT_SHAPE_LINES) return "rare";
	return count >= ROUTINE_CONTEXT_MIN_LINES && count >= ROUTINE_CONTEXT_SHARE * shapedLines ? "routine" : "usual";
}

/**
 * Does `line` continue the block of a signal line indented by `signalIndent`? A blank line ends
 * it; a line indented deeper belongs to it (a traceback's frames, javac's `symbol:`/`location:`);
 * under an indented signal, a line indented as much does too (ExUnit's `left:`/`right:`); the
 * known continuation forms (CONTINUATION) do at any indentation; and so does a line of a rare
 * shape, since a report differs from the routine lines around it (a sanitizer's `READ of size 4 …`
 * under its `ERROR`). A routine line continues a block only in a known continuation form.
 */
export function continuesBlock(signalIndent: number, line: string, shape: ShapeKind = "usual"): boolean {
	const indent = indentOf(line);
	if (indent < 0) return false;
	if (shape === "routine") return isContinuation(line);
	if (indent > signalIndent || (signalIndent > 0 && indent >= signalIndent)) return true;
	return shape === "rare" || isContinuation(line);
}

/** Is `line` a section header (a test's name, a build step) that a signal below it belongs to? */
export function isSectionHeader(line: string): boolean {
	return SECTION_HEADER.test(line);
}

/**
 * The leading context of a signal line, given the lines just above it (nearest last): the lines
 * it continues from (deeper-indented or rare lines right above an unindented signal: the frames
 * above Python's exception; lines of the same or deeper indentation above an indented one, up to
 * their parent), its parent (the nearest line indented less, e.g. ESLint's file name above its
 * findings), and the nearest section header. Returns indexes into `above`, ascending.
 */
export function findLeadingContext(
	signal: string,
	above: readonly string[],
	shapeOf: (index: number) => ShapeKind = () => "usual",
): { context: number[]; header?: number } {
	const signalIndent = Math.max(0, indentOf(signal));
	const context: number[] = [];
	let parent: number | undefined;
	for (let k = above.length - 1; k >= 0 && above.length - k <= HUNK_BEFORE_LINES; k--) {
		const indent = indentOf(above[k]);
		if (indent < 0) {
			// gfortran: `file.f90:17:28:`, a blank line, the source snippet, then `Error: …`.
			if (k > 0 && LOCATION_ALONE.test(above[k - 1])) context.push(k, k - 1);
			break;
		}
		const shape = shapeOf(k);
		if (shape === "routine" ? isContinuation(above[k]) : signalIndent === 0 ? indent > 0 || isContinuation(above[k]) || shape === "rare" : indent >= signalIndent) {
			context.push(k);
			continue;
		}
		if (signalIndent > 0 && indent < signalIndent) parent = k;
		break;
	}
	if (parent === undefined && signalIndent > 0) {
		// The parent may sit further up, above the signal's siblings.
		for (let k = above.length - 1 - context.length; k >= 0 && above.length - k <= HUNK_HEADER_LOOKBACK_LINES; k--) {
			const indent = indentOf(above[k]);
			if (indent >= 0 && indent < signalIndent) {
				parent = k;
				break;
			}
		}
	}
	if (parent !== undefined) context.push(parent);
	const started = findStartedCall(signal, above);
	if (started !== undefined && !context.includes(started)) context.push(started);
	let header: number | undefined;
	const from = Math.min(above.length - 1, (parent ?? above.length - context.length) - 1);
	for (let k = from; k >= 0 && above.length - k <= HUNK_HEADER_LOOKBACK_LINES; k--) {
		if (isSectionHeader(above[k])) {
			header = k;
			break;
		}
	}
	context.sort((a, b) => a - b);
	return header === undefined || context.includes(header) ? { context } : { context, header };
}

/** strace -f: `[pid 8890] <... openat resumed>) = -1 ENOENT …` finishes a call another line started. */
const RESUMED_CALL = /^\[pid +(\d+)\] <\.\.\. (\w+) resumed>/;

/**
 * For a resumed system call, the index in `above` of the line that started it (`[pid 8890]
 * openat(AT_FDCWD, "assets/x.tmpl", O_RDONLY <unfinished ...>`: the arguments, the file name),
 * the nearest such line of the same process within HUNK_HEADER_LOOKBACK_LINES.
 */
function findStartedCall(signal: string, above: readonly string[]): number | undefined {
	const resumed = RESUMED_CALL.exec(signal);
	if (resumed === null) return undefined;
	const start = `[pid ${resumed[1]}] ${resumed[2]}(`;
	for (let k = above.length - 1; k >= 0 && above.length - k <= HUNK_HEADER_LOOKBACK_LINES; k--) {
		const line = above[k];
		if (line.replace(/^\[pid +/, "[pid ").startsWith(start) && line.trimEnd().endsWith("<unfinished ...>")) return k;
	}
	return undefined;
}

// ---------------------------------------------------------------------------------------------
// Ranking

/** A candidate as the ranking sees it. */
export interface RankedCandidate {
	lineNumber: number;
	severity: Severity;
	/** Signal lines of this candidate's shape in the whole output. */
	shapeCount: number;
}

/**
 * The order in which candidates earn a place in the view: errors before warnings; within each,
 * rare shapes (seen at most RARE_SHAPE_COUNT times) before common ones, the rarer first; lines of
 * equally common shapes spread over the output (first and last first, then evenly in between), so
 * the view shows where failures start and end, not only the first ones.
 */
export function rankCandidates<T extends RankedCandidate>(candidates: readonly T[]): T[] {
	const groups = new Map<string, T[]>();
	for (const candidate of candidates) {
		const key = `${candidate.severity}:${candidate.shapeCount}`;
		const group = groups.get(key) ?? [];
		group.push(candidate);
		groups.set(key, group);
	}
	const ranked: T[] = [];
	const keys = [...groups.keys()].sort((a, b) => {
		const [severityA, countA] = a.split(":").map(Number);
		const [severityB, countB] = b.split(":").map(Number);
		return severityB - severityA || countA - countB;
	});
	for (const key of keys) ranked.push(...spreadOrder((groups.get(key) as T[]).sort((a, b) => a.lineNumber - b.lineNumber)));
	return ranked;
}

/** Items in an order that covers their range early: first, last, middle, then the quarters, and so on. */
export function spreadOrder<T>(items: readonly T[]): T[] {
	if (items.length <= 2) return [...items];
	const order: T[] = [items[0], items[items.length - 1]];
	const taken = new Uint8Array(items.length);
	taken[0] = 1;
	taken[items.length - 1] = 1;
	for (let parts = 2; order.length < items.length; parts *= 2) {
		for (let k = 1; k < parts; k += 2) {
			const index = Math.round((k * (items.length - 1)) / parts);
			if (taken[index]) continue;
			taken[index] = 1;
			order.push(items[index]);
		}
		if (parts > items.length * 2) {
			for (let index = 0; index < items.length; index++) if (!taken[index]) order.push(items[index]);
			break;
		}
	}
	return order;
}

// ---------------------------------------------------------------------------------------------
// Structured output: which members of a JSON object say the object is a problem

/** Members whose presence with a value says something went wrong: `"error": "…"`, `"errors": [ … ]`, `"failures": 2`. */
const JSON_PROBLEM_MEMBERS = new Set([
	"error",
	"errors",
	"err",
	"exception",
	"exceptions",
	"fault",
	"faults",
	"failure",
	"failures",
	"failed",
	"problem",
	"problems",
	"violations",
	"invalid",
	"missing",
	"errorcount",
	"error_count",
	"fatalerrorcount",
	"numfailedtests",
	"numfailedtestsuites",
]);
/** Members naming a level or an outcome: a problem when the value is one of JSON_BAD_OUTCOME. */
const JSON_SEVERITY_MEMBERS = new Set(["level", "severity", "status", "state", "result", "outcome", "conclusion", "loglevel", "log_level", "levelname"]);
const JSON_BAD_OUTCOME = /^(?:err(?:or|ored)?|fatal|crit(?:ical)?|emerg(?:ency)?|alert|panic|fail(?:ed|ure)?|broken|invalid)$/i;
/** Members whose `false` is a verdict against the object: `"valid": false`, `"ok": false`. */
const JSON_VERDICT_MEMBERS = new Set(["valid", "ok", "success", "succeeded", "passed", "pass"]);
/** pino's and bunyan's numeric levels: 50 is error, 60 fatal. */
const JSON_ERROR_LEVEL = 50;
/** Longest member name the rules know (longer keys are not decoded). */
export const JSON_RULE_KEY_BYTES = 20;

/** The value of a JSON member, as far as the rules need it. */
export type JsonMemberValue =
	| { kind: "string"; value: string }
	| { kind: "number"; value: number }
	| { kind: "boolean"; value: boolean }
	| { kind: "null" }
	| { kind: "container"; empty: boolean };

/** Whether a member's value is needed to judge it (a string or number the rules compare). */
export function isJsonRuleKey(key: string): boolean {
	const name = key.toLowerCase();
	return JSON_PROBLEM_MEMBERS.has(name) || JSON_SEVERITY_MEMBERS.has(name) || JSON_VERDICT_MEMBERS.has(name);
}

/**
 * Whether the member `key: value` says its object is a problem: an error-like member with a value
 * (not null, false, 0, "" or empty), a level or outcome that is an error or a failure (or a numeric
 * log level of 50 and up), a verdict that is false.
 */
export function judgeJsonMember(key: string, value: JsonMemberValue): boolean {
	const name = key.toLowerCase();
	if (JSON_PROBLEM_MEMBERS.has(name)) {
		switch (value.kind) {
			case "string":
				return value.value.trim() !== "";
			case "number":
				return value.value > 0;
			case "boolean":
				return value.value;
			case "container":
				return !value.empty;
			default:
				return false;
		}
	}
	if (JSON_SEVERITY_MEMBERS.has(name)) {
		if (value.kind === "string") return JSON_BAD_OUTCOME.test(value.value.trim());
		return name === "level" && value.kind === "number" && value.value >= JSON_ERROR_LEVEL;
	}
	return JSON_VERDICT_MEMBERS.has(name) && value.kind === "boolean" && !value.value;
}
