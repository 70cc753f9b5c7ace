// The block rules of the signal policy (src/signals/policy.ts): which lines around a signal line
// belong to it — its block below (continuation forms, deeper indentation, rare shapes, never the
// output's routine lines; long blocks thinned), its leading context above (the frames it continues
// from, its parent, a location line, the call a resumed one started), its section header, and a
// line a little further up that names its subject. Pure: strings in, decisions out.

import { blockFormRegex } from "./forms.js";
import * as shapeModule from "./shape.js";
import { type ShapeKind } from "./shape.js";
import * as stampModule from "../lines/stamp.js";
import * as stepsModule from "./steps.js";

// Imported bindings copied into module constants once: under Pi's extension loader (jiti) every
// read of an imported binding goes through an interop Proxy, and these are read on every line.
const { BLOCK_RUN_LINES, shapeOf } = shapeModule;
const { isLogfmtRecord, stampLength, unstamped, wrappedLineStart } = stampModule;
const { stepMarkOf } = stepsModule;

/** Most lines after a signal line shown with it (its block), and before it (leading context). */
export const HUNK_AFTER_LINES = 16;
/** Lines of a block looked at below its signal line, before runs are thinned (a deep backtrace). */
export const HUNK_BLOCK_SCAN_LINES = 48;
/** A line with a letter or a digit in it (not drawing alone). */
const WORDED = /[\p{L}\p{N}]/u;

/**
 * A block with each run of BLOCK_RUN_LINES or more lines of one shape thinned to its first and last
 * line: a backtrace 30 frames deep in one recursive function keeps the frame that faulted, the
 * recursion's two ends and the frame below it (gdb's `#31 … in worker (arg=0x4) at src/stock.c:48`).
 */
export function thinRuns<T extends { text: string }>(
	lines: readonly T[],
	own: (text: string) => string = (text) => text,
): T[] {
	// Past HUNK_AFTER_LINES, drawing goes first: gutters, carets and rules (`    |      |   ^~~~`)
	// say nothing the lines with words around them do not (gcc -fanalyzer's event paths). `own`: a
	// line's text without the tag it shares with the lines around it (hunks.ts ownText).
	if (lines.length > HUNK_AFTER_LINES) lines = lines.filter((line) => WORDED.test(unstamped(own(line.text))));
	const kept: T[] = [];
	for (let start = 0; start < lines.length;) {
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
 * Lines that continue the diagnostic above them whatever their indentation (forms.ts: a stack frame,
 * a numbered frame (`#1 0x… in f`), a count of elided frames, a code frame's gutter, numbered source
 * lines and carets, a diff's `+`/`-` lines, `Caused by:`, labelled details such as `note:` or
 * `= help:`, an arrow to a location (`--> src/main.rs:4:18`); TAP's `#` diagnostics).
 */
const CONTINUATION = blockFormRegex("continuation");
/**
 * A line that opens a section a failure may sit in (forms.ts): a title between rules or a rule
 * follows (Ansible's `TASK [x] ****`), a numbered failure, a line that says what starts to run
 * (GoogleTest's `[ RUN      ]`, Go's `=== RUN`), Go's `--- FAIL:`, the package line Go's build and
 * vet print above a package's diagnostics. Shown above a signal that follows it.
 */
const SECTION_HEADER = blockFormRegex("section");

/**
 * A line that says what the program is doing now (forms.ts: `Running upgrade 0030 -> 0031`,
 * `Applying shop.0031_unique_email...`, `Compiling ledger v0.1.0`). A failure below it happened in
 * that step: when no section header above it says more, the step is its section, like a test's name
 * above a test's failure.
 */
const STEP_IN_PROGRESS = blockFormRegex("progress");

/**
 * A location that names no file: `line 11 column 1 - Error: <tabel> is not recognized!` (HTML
 * Tidy), `line 3, col 5: …`. Tools that print such locations print the file they are about on a
 * line of its own above its findings.
 */
const FILELESS_LOCATION = /^\W{0,3}line \d+(?:(?:,| -)? col(?:umn)? \d+)?\b/i;
/** A file name or path with an extension (`site/guide/page_143.html`, `main.c`), as a token of its own. */
const NAMES_FILE = /(?:^|[\s'"`(=:])(?:[\w.-]*\/)*[\w-][\w.-]*\.[a-z][a-z\d]{0,5}(?=$|[\s'"`),:;])/i;

/**
 * Is `line` the header of a section that `signal` sits in: a section header (SECTION_HEADER), or,
 * for a signal whose location names no file (FILELESS_LOCATION), the nearest line naming a file
 * that is not itself such a finding (the script's `check: site/guide/page_143.html` above Tidy's
 * findings for that page)?
 */
function headsSection(line: string, filelessSignal: boolean): boolean {
	const text = unstamped(line);
	if (SECTION_HEADER.test(text)) return true;
	return filelessSignal && NAMES_FILE.test(text) && !FILELESS_LOCATION.test(text);
}

/**
 * A diagnostic that starts with its own location (`src/a.c:3:5: error: …`, `src/a.ts(3,5): error
 * TS2322: …`, javac's `/src/x/Invoice17.java:9: error: …` after Ant's task column): it opens a new
 * report, so the indented lines right above it are the block of the report before it (javac's
 * `where E is a type-variable:` notes under a warning), not its leading context.
 */
const LOCATION_LED = /^(?:[\w.@~+-]*\/)*[\w.@~+-]+(?::\d+(?::\d+)?:|\(\d+(?:,\d+)?\):) /;

/** A line that is only a source location (`src/tariff.f90:17:28:`), printed above the snippet and message it locates. */
const LOCATION_ALONE = /^\S+:\d+(?::\d+)?:?\s*$/;

/** A signal line that opens a structured block: it ends with `{` or `[` (a JSON or YAML error object follows). */
const OPENS_BLOCK = /[{[]\s*$/;
/** Lines inside such a block that say what went wrong: a message, an error, a reason, stderr. */
const MESSAGE_KEY =
	/^\s*"?(?:msg|message|error|errors|reason|stderr|detail|details|cause|description|exception|failure)"?\s*[:=]/i;

/** Does the signal line open a structured block whose message lines belong to it? */
export function opensBlock(line: string): boolean {
	return OPENS_BLOCK.test(line);
}

/** Is `line`, inside a block a signal line opened, one that says what went wrong? */
export function isBlockMessage(line: string): boolean {
	return MESSAGE_KEY.test(unstamped(line));
}

/**
 * A margin some tools put before every line of a report, after which the report's own indentation
 * starts: valgrind's `==12345== ` (memcheck, helgrind: `==1==    at 0x…: f (x.c:15)` is a frame
 * under `==1== Possible data race …`).
 */
const REPORT_MARGIN = /^==\d{1,10}== ?/;
/**
 * Ant's task column, the other such margin: the running task's name in brackets, right-aligned in
 * TASK_COLUMN_CHARS columns (`    [javac] `, `   [subant] `, `      [jar] `). javac's diagnostics
 * start right after it and their snippets and notes are indented past it: without it every line
 * of a compile would look indented alike, and an error's block would run on into the warnings
 * after it.
 */
const TASK_COLUMN = /^ {1,9}\[[a-z][\w-]*\] /;
const TASK_COLUMN_CHARS = 12;

/** The width of a line's margin (a timestamp, then REPORT_MARGIN or TASK_COLUMN), 0 when it has none. */
export function marginOf(text: string): number {
	const stamp = stampLength(text);
	return stamp === 0 ? toolMarginOf(text) : stamp + toolMarginOf(text.slice(stamp));
}

/** The width of a tool's margin (REPORT_MARGIN, TASK_COLUMN) at the start of `text`, 0 when it has none. */
function toolMarginOf(text: string): number {
	const first = text.charCodeAt(0);
	if (first === 0x3d) return REPORT_MARGIN.exec(text)?.[0].length ?? 0;
	if (first === 0x7b) return wrappedLineStart(text);
	// A logger's logfmt record (`level=info msg="…"`) wraps the line its message is.
	if (first !== 0x20) return isLogfmtRecord(text) ? wrappedLineStart(text) : 0;
	const column = TASK_COLUMN.exec(text)?.[0].length ?? 0;
	return column === TASK_COLUMN_CHARS ? column : 0;
}

/** Is `line` (after its margin) in one of the known continuation forms? */
function isContinuation(line: string): boolean {
	const margin = marginOf(line);
	return CONTINUATION.test(margin === 0 ? line : line.slice(margin));
}

/** Leading whitespace width (a tab counts as 4), after a margin; -1 for a blank line (or a bare margin). */
export function indentOf(text: string): number {
	let width = 0;
	for (let i = marginOf(text); i < text.length; i++) {
		const char = text.charCodeAt(i);
		if (char === 0x20) width += 1;
		else if (char === 0x09) width += 4;
		else return width;
	}
	return -1; // blank
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

/**
 * Does the block of a signal line indented by `signalIndent` go on past a blank line right under
 * it? Only when the line after the blank is indented deeper and not routine: esbuild's
 * `✘ [ERROR] Could not resolve …`, a blank line, then `    src/views/view_131.ts:1:31:` and its
 * code frame.
 */
export function continuesPastBlank(signalIndent: number, afterBlank: string, shape: ShapeKind = "usual"): boolean {
	return shape !== "routine" && indentOf(afterBlank) > signalIndent;
}

/**
 * A line that opens a step of an output, the principle first: a title set off by a run of rule
 * characters (`===== FAILURES =====`, `_____ test_refund _____`, `----- Captured stdout -----`,
 * `### Build`), or the header of a list of failures (`failures:`, `Failed tests:`, `The following
 * tests FAILED:`). Then, as data, the step markers of CI services (steps.ts STEP_MARKERS) and of
 * build tools (forms.ts), each with the output it exists for: Gradle's `> Task :compileJava`, Maven's
 * `[INFO] --- surefire:3.2.2:test (default-test) @ shop ---`, docker build's `Step 3/7 :` and
 * BuildKit's `#8 [3/7] RUN make`. Read after a line's timestamp.
 */
const RULED_TITLE = /^[ \t]*(?:={3,}|_{3,}|\*{3,}|#{2,}|~{3,}|-{3,}) ?[^\s=_*#~-]/;
const FAILURE_LIST_HEADER = /^[ \t]*(?:[\w-]+ ){0,5}(?:fail(?:ed|ures?|ing)?|errors?|errored)(?: [\w-]+){0,4}:[ \t]*$/i;
const BUILD_STEP = blockFormRegex("build-step");

/** Does `line` open a step of the output (a section a report or a failing step starts with)? */
export function opensStep(line: string): boolean {
	if (stepMarkOf(line)?.kind === "open") return true;
	const text = unstamped(line);
	return BUILD_STEP.test(text) || RULED_TITLE.test(text) || FAILURE_LIST_HEADER.test(text) || isSectionHeader(text);
}

/** A line of one rule character and nothing else (`=============================`, `---------`), after its timestamp. */
const RULE_ONLY = /^[ \t]*(?:={3,}|-{3,}|_{3,}|\*{3,}|~{3,}|#{3,})[ \t]*$/;

/**
 * The indexes of `lines` that open a step (opensStep), and the titles a rule-only line underlines
 * after a blank line: `Found one Java-level deadlock:` over `=============================`, a
 * heading as Markdown and reStructuredText write one.
 */
export function stepOpeners(lines: ReadonlyArray<{ text: string }>): number[] {
	const openers: number[] = [];
	for (let k = 0; k < lines.length; k++) {
		const text = lines[k].text;
		if (opensStep(text)) openers.push(k);
		else if (k > 0 && k + 1 < lines.length && isUnderlinedTitle(lines[k - 1].text, text, lines[k + 1].text))
			openers.push(k);
	}
	return openers;
}

/** A title starts a paragraph: the line above it is blank (a list's last item over a closing rule is no title). */
function isUnderlinedTitle(above: string, line: string, next: string): boolean {
	const title = unstamped(line);
	return (
		unstamped(above).trim() === "" && title.trim() !== "" && !RULE_ONLY.test(title) && RULE_ONLY.test(unstamped(next))
	);
}

/** Does `line` say what the program is doing now (STEP_IN_PROGRESS: `Running upgrade 0030 -> 0031`)? Read after its timestamp. */
export function isStepInProgress(line: string): boolean {
	return STEP_IN_PROGRESS.test(unstamped(line));
}

/** Is `line` a section header (a test's name, a build step) that a signal below it belongs to? */
export function isSectionHeader(line: string): boolean {
	return headsSection(line, false);
}

/**
 * The leading context of a signal line, given the lines just above it (nearest last): the lines
 * it continues from (deeper-indented or rare lines right above an unindented signal: the frames
 * above Python's exception; lines of the same or deeper indentation above an indented one, up to
 * their parent), its parent (the nearest line indented less, e.g. ESLint's file name above its
 * findings), and the nearest section header (headsSection: a test's name, the line naming the file
 * of a finding whose location names none), or, when there is none, the step in progress
 * (STEP_IN_PROGRESS: `Running upgrade 0030 -> 0031`, the last thing the program said it was doing).
 * Returns indexes into `above`, ascending.
 */
export function findLeadingContext(
	signal: string,
	above: readonly string[],
	shapeKindOf: (index: number) => ShapeKind = () => "usual",
): { context: number[]; header?: number; step?: number } {
	const signalIndent = Math.max(0, indentOf(signal));
	// An unindented report takes the indented lines above it only when it does not open with its own location.
	const takesIndented = !LOCATION_LED.test(signal.slice(marginOf(signal)));
	const context: number[] = [];
	let parent: number | undefined;
	for (let k = above.length - 1; k >= 0 && above.length - k <= HUNK_BEFORE_LINES; k--) {
		const indent = indentOf(above[k]);
		if (indent < 0) {
			// gfortran: `file.f90:17:28:`, a blank line, the source snippet, then `Error: …`.
			if (k > 0 && LOCATION_ALONE.test(unstamped(above[k - 1]))) context.push(k, k - 1);
			break;
		}
		const shape = shapeKindOf(k);
		if (
			shape === "routine"
				? isContinuation(above[k])
				: signalIndent === 0
					? (indent > 0 && takesIndented) || isContinuation(above[k]) || shape === "rare"
					: indent >= signalIndent
		) {
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
	const fileless = FILELESS_LOCATION.test(unstamped(signal));
	const from = Math.min(above.length - 1, (parent ?? above.length - context.length) - 1);
	let step: number | undefined;
	// A CI step's start ends the search for the step in progress: what ran before it is another step's.
	let stepSought = true;
	for (let k = from; k >= 0 && above.length - k <= HUNK_HEADER_LOOKBACK_LINES; k--) {
		if (headsSection(above[k], fileless)) {
			header = k;
			break;
		}
		if (!stepSought) continue;
		if (stepMarkOf(above[k])?.kind === "open") stepSought = false;
		else if (isStepInProgress(above[k])) {
			step = k;
			stepSought = false;
		}
	}
	context.sort((a, b) => a - b);
	if (header !== undefined) return context.includes(header) ? { context } : { context, header };
	return step === undefined || context.includes(step) ? { context } : { context, step };
}

/** strace -f: `[pid 8890] <... openat resumed>) = -1 ENOENT …` finishes a call another line started. */
const RESUMED_CALL = /^\[pid +(\d+)\] <\.\.\. (\w+) resumed>/;

/**
 * For a resumed system call, the index in `above` of the line that started it (`[pid 8890]
 * openat(AT_FDCWD, "assets/x.tmpl", O_RDONLY <unfinished ...>`: the arguments, the file name),
 * the nearest such line of the same process within HUNK_HEADER_LOOKBACK_LINES.
 */
function findStartedCall(signal: string, above: readonly string[]): number | undefined {
	const resumed = RESUMED_CALL.exec(unstamped(signal));
	if (resumed === null) return undefined;
	const start = `[pid ${resumed[1]}] ${resumed[2]}(`;
	for (let k = above.length - 1; k >= 0 && above.length - k <= HUNK_HEADER_LOOKBACK_LINES; k--) {
		const line = unstamped(above[k]);
		if (line.replace(/^\[pid +/, "[pid ").startsWith(start) && line.trimEnd().endsWith("<unfinished ...>")) return k;
	}
	return undefined;
}

// ---------------------------------------------------------------------------------------------
// Subject lines: a line above a signal that names what the signal is about

/** Lines above a signal line looked at for a line that names its subject. */
export const SUBJECT_LOOKBACK_LINES = 30;
/** Lines naming a signal's subject shown with it, at most. */
export const SUBJECT_MAX_LINES = 1;
/** Shortest subject token, in characters. */
const SUBJECT_MIN_CHARS = 6;
/** Subject tokens taken from one signal line, at most (in line order). */
const SUBJECT_MAX_TOKENS = 6;
/**
 * A token carried by more of the lines looked at than this is the neighbourhood's common ground
 * (the file every diagnostic of a build names, the lint rule of a run of findings), not the
 * subject of one signal.
 */
const SUBJECT_MAX_CARRIERS = 2;
/** Runs of identifier characters and the separators of qualified names and paths. */
const TOKEN_RUN = /[\w$.:/-]+/g;
/** What makes a token distinctive: `_`, `::`, a dot or a slash between name characters, or camelCase. */
const DISTINCTIVE = /_|::|\w\.[A-Za-z_]|\w\/\w|[a-z][A-Z]/;
/**
 * Tokens that name no particular subject: the pattern's own words as the last part of a name (an
 * exception's or a check's type, `AssertionError`, `java.io.IOException`), C's and C++'s common
 * types, Python's dunders, package directories, product names.
 */
const GENERIC_LAST_PART = /(?:error|errors|exception|failure|failed|fault|warning|panic)$/i;
const GENERIC_TOKEN =
	/^(?:u?int\d*_t|s?size_t|ptrdiff_t|off_t|std::\w+|__\w+__(?:\.py)?|node_modules|site-packages|dist-packages|package\.json|Node\.js|JavaScript|TypeScript|GitHub|GitLab|macOS)$/;

/** Trims a raw token to a name: no `:line:col` after it, no separators around it (`./src/a.c` is `src/a.c`). */
function trimToken(raw: string): string {
	return raw.replace(/(?::\d+)+:?$/, "").replace(/^[.:/-]+|[.:/-]+$/g, "");
}

/**
 * The subject of a signal line: its distinctive tokens (a test, a benchmark, a function, a module,
 * a resource, a file), in line order. A token must have a lower-case letter, start with a letter,
 * `_` or `$`, be SUBJECT_MIN_CHARS long and distinctive (DISTINCTIVE); common words, numbers, ids
 * in capitals (`AT_FDCWD`), a location (`src/a.c:12:`, `a.ts(6,10)`: the diagnostic's own place,
 * which its parent and block rules cover), a tag in brackets (`[-Wsign-compare]`,
 * `(reportUnusedImport)`: a rule shared by many findings), URLs and the pattern's own words are not.
 */
export function findSubjectTokens(signal: string): string[] {
	const tokens: string[] = [];
	for (const match of signal.matchAll(TOKEN_RUN)) {
		const raw = match[0];
		const start = match.index ?? 0;
		const before = signal[start - 1];
		const after = signal[start + raw.length];
		if (/:\d/.test(raw) || (after === "(" && /\d/.test(signal[start + raw.length + 1] ?? ""))) continue;
		if ((before === "[" && after === "]") || (before === "(" && after === ")")) continue;
		const token = trimToken(raw);
		if (token.length < SUBJECT_MIN_CHARS || token.includes("://") || !/^[A-Za-z_$]/.test(token) || !/[a-z]/.test(token))
			continue;
		if (!DISTINCTIVE.test(token) || GENERIC_TOKEN.test(token)) continue;
		if (GENERIC_LAST_PART.test(token.split(/::|[./]/).pop() ?? token)) continue;
		if (!tokens.includes(token)) tokens.push(token);
		if (tokens.length === SUBJECT_MAX_TOKENS) break;
	}
	return tokens;
}

/** Does `line` carry `token` as a whole name (no name character right before or after it)? */
function carriesToken(line: string, token: string): boolean {
	for (let at = line.indexOf(token); at >= 0; at = line.indexOf(token, at + 1)) {
		const before = at === 0 ? "" : line[at - 1];
		const after = line[at + token.length] ?? "";
		if (!/[\w$]/.test(before) && !/[\w$]/.test(after)) return true;
	}
	return false;
}

/**
 * The lines just above a signal line (`above`, nearest last) that name its subject: within
 * SUBJECT_LOOKBACK_LINES, the nearest lines carrying one of its tokens (findSubjectTokens) that is
 * not common ground (SUBJECT_MAX_CARRIERS), at most SUBJECT_MAX_LINES. A line already shown
 * (`isShown`: its leading context, its header, a head or tail line) counts toward that number
 * without being taken again: the subject is on screen already. A blank line or a repeat of the
 * signal line is never taken. Returns indexes into `above`, ascending. Cheap: it looks only at the
 * lines the hunk reader has decoded already, a few index searches per line.
 */
export function findSubjectLines(
	signal: string,
	above: readonly string[],
	isShown: (index: number) => boolean = () => false,
): number[] {
	const tokens = findSubjectTokens(signal);
	if (tokens.length === 0) return [];
	const from = Math.max(0, above.length - SUBJECT_LOOKBACK_LINES);
	const carried = new Set<number>();
	for (const token of tokens) {
		const carriers: number[] = [];
		for (let k = from; k < above.length && carriers.length <= SUBJECT_MAX_CARRIERS; k++)
			if (carriesToken(above[k], token)) carriers.push(k);
		if (carriers.length > SUBJECT_MAX_CARRIERS) continue;
		for (const k of carriers) carried.add(k);
	}
	const taken: number[] = [];
	let slots = 0;
	const trimmedSignal = signal.trim();
	for (const k of [...carried].sort((a, b) => b - a)) {
		if (slots === SUBJECT_MAX_LINES) break;
		const text = above[k].trim();
		if (text === "" || text === trimmedSignal) continue;
		slots++;
		if (!isShown(k)) taken.push(k);
	}
	return taken.sort((a, b) => a - b);
}
