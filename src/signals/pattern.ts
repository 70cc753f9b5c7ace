// The default signalPattern: the project's knowledge of how software fails, built from real
// outputs of the major toolchains (test/fixtures/real/, re-made by its gen/ scripts).
// A line matching it (case-insensitive, tested per line with ANSI escapes removed) is a "signal
// line" that the bounded view keeps from anywhere in the output. Invariants: precise (a test merely
// named `error_handling`, `0 errors`, `Failures: 0` are noise), linear (no nested or unbounded
// ambiguous quantifiers, nothing that can match across a newline), shorter than the config cap.

import { findPatternKeywords } from "../regex/keywords.js";

/** One alternative of the default pattern, with the outputs it exists for. */
export interface SignalPatternPart {
	/** A regex source, compiled case-insensitive as part of one alternation. */
	source: string;
	/** What it recognises, with the real lines that motivated it. */
	why: string;
	/**
	 * Its prefilter keywords, only where they cannot be derived from `source` (regex/keywords.ts takes
	 * ASCII literals of three characters or more: non-ASCII symbols are given as their UTF-8 bytes in
	 * a Latin-1 string, and short literals), or where the derived ones would be words routine output
	 * is full of (a log's `level=`, a JSON record's `"status"`: every record a candidate). One of them
	 * must be in every match of the part.
	 */
	keywords?: readonly string[];
	/**
	 * Which of its top-level alternatives name one tool's output (per-tool knowledge, as data), by
	 * index, each with the corpus outputs that justify it: `set/name` of a tuning fixture (sets `real`,
	 * `tuning`, `tune2`-`tune4`, `ci`; never a held-out one) with a line the alternative matches, or
	 * none where no output here has the tool's form and its documented format alone justifies it
	 * (NO_FIXTURE). The others are principles that hold for output in general.
	 */
	tool?: Readonly<Record<number, readonly string[]>>;
}

/** Marks that say a line failed, whatever tool prints them (crosses): the marks part's and policy.ts's failure words. */
export const FAILURE_MARKS = "✕✖✗✘❌⨯";

/** Each character of `symbols` as the prefilter sees it: its UTF-8 bytes as a Latin-1 string. */
function symbolKeywords(symbols: string): string[] {
	return [...symbols].map((symbol) => Buffer.from(symbol, "utf8").toString("latin1"));
}

/** A per-tool alternative that no output here has: the tool's documented format is all that justifies it. */
export const NO_FIXTURE: readonly string[] = Object.freeze([]);

/** The alternatives of DEFAULT_SIGNAL_PATTERN, in order; documented in the README. */
export const SIGNAL_PATTERN_PARTS: readonly SignalPatternPart[] = Object.freeze<SignalPatternPart[]>([
	{
		source: String.raw`(?:error|exception|warning|warn|\bpanic(?!::))(?: ?\[[\w-]{1,20}\])?:(?! *(?:null|none|nil|undefined|false|0)\b| *(?:true|yes|no|on|off|\d+)[ \t]*$| no test specified)`,
		why: "a diagnostic or an exception with its message: gcc/rustc `error:`, `error[E0308]:`, `TypeError:`, `KeyError:`, `java.lang.IllegalStateException:`, node `Error [ERR_X]:`, a panic with its message (Go's `panic: runtime error: index out of range`, a kernel's `panic: page fault`; not rust's `core::panic::` frames), `warning:` and `WARN:` (kept as weak signals); not `error: null`, nor a setting echoed with its value (`werror: true`, `max_errors: 3`, `on_warning: off`), nor npm's default `Error: no test specified` script",
	},
	{
		source: String.raw`^[ \t]*(?:--- |\d{1,4}\) )?(?:error|errors|fatal|fail|failed|failures?|critical|severe|conflict)\b(?! *[:=]? *0\b|-[a-z]| *[:=] *(?:true|false|yes|no|on|off|none|null)[ \t]*$)|^[ \t]*(?!no |without )[a-z]{3,12} error\b(?! *[:=]? *0\b)(?!s? (?:handling|handler|code|message|page|response)s?\b)`,
		why: 'a line that starts with a failure word: jest `FAIL src/x.test.js`, go `FAIL\tpkg` and `--- FAIL: TestX`, pytest `FAILED tests/…`, unittest `FAIL: test_x`, git `fatal: …` and `CONFLICT (content): Merge conflict in …` (a conflict is a failure: a merge, svn `Conflict discovered in …`), docker/pip `ERROR …`, phpunit `FAILURES!`, a numbered failure header (`  3) Error:`); not `Errors: 0`, nor a setting or a flag that starts with one (`fail-fast: true`, `errors = off`). Read in a JSON-lines record too, on the line its text member wraps (src/lines/stamp.ts wrappedLineOf): `go test -json`\'s `"Output":"--- FAIL: TestTotal037 (0.00s)\\n"`, docker\'s `{"log":"FAIL src/a.test.js\\n",…}`',
	},
	{
		source: String.raw`(?<!\b0 )\b(?:failed|panicked|aborted|killed)\b(?! *[:=] *0\b)`,
		why: "`1 failed`, `BUILD FAILED`, `assertion … failed`, `test x ... FAILED`, rust `panicked at`, `Aborted (core dumped)`, bash `Killed`; not `0 failed`, `failed: 0`",
	},
	{
		source: String.raw`\bnot ok\b|^[ \t]*● (?!console\b)|^E {2,}\S|_test\.go:\d+:|\.go:\d+:\d+: `,
		tool: {
			0: ["real/node-test-tap-failure", "tune4/bats-setup-file-failed"],
			1: ["real/jest-failure"],
			2: ["real/pytest-failure", "tune3/hypothesis-falsifying-example"],
			3: ["real/go-test-fail-panic", "tune3/go-test-json-ndjson-failure"],
			4: ["tune3/go-vet-printf-wrong-type"],
		},
		why: "test runners: pytest's `E   assert …`, TAP `not ok`, jest's `● Suite › test` header, go `x_test.go:12: …`, and the Go toolchain's diagnostics, which carry no severity word: `go vet`'s `handlers/h061/handler.go:63:9: fmt.Sprintf format %d has arg acct of wrong type string`, the compiler's `./main.go:10:2: undefined: x` (file:line:column; a stack frame's `ledger.go:20 +0xac` has no column)",
		keywords: [
			"not ok",
			"_test.go:",
			".go:",
			// `E  ` (pytest's assertion lines), and jest's ●.
			"e  ",
			...symbolKeywords("●"),
		],
	},
	{
		source: String.raw`[${FAILURE_MARKS}]|^[ \t]*(?:×|!{1,3}) +\S|^[ \t]*⚠`,
		why: "a mark that says a line failed or warns, whatever tool prints it: a cross anywhere in a line (jest's `✕ formats amounts (2 ms)`, node's and eslint's `✖`, ava's and esbuild's `✘ [ERROR]`, `❌`, Next.js's `⨯ Failed to compile`), vitest's `×` or a run of `!` that leads a line (TeX's `! Undefined control sequence.`, git's `! [rejected]        main -> main (fetch first)`, Portage's `!!! ERROR`), and a warning sign that leads one (Next.js's `⚠ Compiled with warnings`, a weak signal: src/signals/policy.ts)",
		// The marks, and `!` before a space.
		keywords: [...symbolKeywords(`${FAILURE_MARKS}×⚠`), "! "],
	},
	{
		source: String.raw`^[ \t]*(?:expected|received|actual)\b[^:\n]{0,40}:`,
		why: "assertion details at the start of a line: jest `Expected: …`/`Received: …`, node `Expected values to be strictly equal:`, TAP `expected:`/`actual:`",
	},
	{
		source: String.raw`\b[1-9]\d* (?:errors?|failures?|failing)\b|\b(?:errors|failures|failed)[:=] *[1-9]|^# fail [1-9]|\berror [a-z]{1,4}\d{3,5}\b`,
		tool: { 2: ["real/node-test-tap-failure"] },
		why: "summaries and coded errors that count: `2 errors`, `1 failure`, mocha `3 failing`, `Failures: 1`, `errors=1`, TAP `# fail 1`, tsc `error TS2304`, MSVC `error C2065`, valgrind's `ERROR SUMMARY: 2 errors from 2 contexts`",
	},
	{
		source: String.raw`[\d\]Z][ \t]{1,8}(?:error|fatal|severe|critical|crit|emerg|warn|warning)\b|^[ \t]*warn(?:ing)?\b(?![-_=:]| *[:=])|\[(?:error|err|fatal|severe|critical|fail|failed|failure|warn|warning)\]|\blevel"?[=:] *"?(?:error|fatal|critical|panic|warn|warning)\b|"level": ?[456]0\b`,
		why: 'log levels: `09:28:58 ERROR etl: …`, java.util.logging `19:31:59 SEVERE …`, maven `[ERROR]`, `level=error`, `"level":"error"`, and the numeric levels of JSON-lines loggers (bunyan, pino: `"level":50` error, `60` fatal); the warning level too (`10:02:11 WARN pool exhausted`, `WARN  cache miss ratio high` at a line\'s start, `[WARNING]`, `"level":40`), as a weak signal ranked after every error',
		// The level words, not `level=`: a logfmt log has it on every line.
		keywords: [
			"err",
			"fatal",
			"severe",
			"crit",
			"emerg",
			"panic",
			"warn",
			"fail",
			'"level":4',
			'"level": 4',
			'"level":5',
			'"level": 5',
			'"level":6',
			'"level": 6',
		],
	},
	{
		source: String.raw`(?<!\bno |\bwithout )\b(?:error|failure|exception)s? (?:while|when|during|occurred|encountered|detected|reading|writing|opening|loading|parsing)\b|\bbecause of (?:an? )?(?:errors?|failures?)\b`,
		why: "a failure word in mid-line that a phrase makes a report of what went wrong: `I/O error while reading block 7 -- skipping`, `unexpected error occurred`, `exception during teardown`, `Error when loading config`, sphinx's `2 errors occurred`, make's `Target 'all' not remade because of errors.`; not `no error while …`",
	},
	{
		source: String.raw`\b(?:cannot|can't|could not|couldn't|unable to) [a-z]{2}`,
		why: "a program saying what it could not do, whatever it is: node's `Cannot find module './x'`, ld's `cannot find -lfoo`, cargo's `could not compile \x60x\x60`, ninja's `build stopped: cannot make progress due to previous errors.`, haproxy's `unable to find required use_backend`, cmake's `Could not find a package configuration file`, tcl's `can't read \"x\": no such element in array`, apt's `E: Unable to locate package`",
	},
	{
		source: String.raw`\b(?:is not defined|not declared|undeclared|undefined (?:name|variable|function|method|symbol|reference|constant|type)|(?:unknown|unrecognized|unresolved) (?:option|argument|command|type|field|name|variable|property|module|identifier|element|attribute|directive|key|reference|import))\b`,
		why: "a name the program could not resolve, which linters and compilers report without a failure word: flake8's and ruff's `F821 undefined name 'totl'`, protoc's `\"Money\" is not defined.`, elixir's `undefined function fix_me/1`, ld's `undefined reference to \x60x\x27` and `undefined symbol`, `'x' was not declared in this scope`, `unknown option --frob`, `Unknown key 'RestartSecs'`, Kotlin's `e: src/App.kt:3:5 Unresolved reference: totl`",
	},
	{
		source: String.raw`(?<!\b0 |\bno |\bwithout )(?:error|exception|\bfail|\bfailed|\bfailure)[!\x2E]{0,3}[ \t]*$`,
		why: "a verdict: a failure word that ends its line, whatever tool wrote it: unittest's `test_x (t.T.test_x) ... FAIL` and `... ERROR`, pytest's `tests/t.py:17: AssertionError` (an exception's name ends the line), surefire's `<<< FAILURE!`, maven's `BUILD FAILURE`; not `0 failed`, `no error`",
	},
	{
		source: String.raw`traceback \(most recent call last\)|\bun(?:caught|handled)|\bterminate called\b|\bcalled \x60(?:option|result)::`,
		tool: {
			0: ["real/python-etl-traceback", "real/python-unittest-failure"],
			2: ["real/abort-killed-signals"],
			3: ["real/rust-thread-panic"],
		},
		why: "exceptions and panics: python `Traceback` (java's `Exception in thread \"main\" java.lang.IllegalStateException: boom` and `Caused by: java.io.IOException: …`, python's `The above exception was the direct cause of the following exception:` need no part of their own: the exception's name with its message, or ending the line, is a diagnostic and a verdict above), a failure nobody handled (node's `Uncaught TypeError` and `[UnhandledPromiseRejection: …]`, SBCL's `Unhandled DIVISION-BY-ZERO in thread`), C++ `terminate called after throwing`, rust `called \x60Option::unwrap()\x60 on a \x60None\x60 value`",
	},
	{
		source: String.raw`\bsegmentation fault\b|\bcore dumped\b|\bbus error\b|\billegal instruction\b|stack smashing detected|double free or corruption|\bsig(?:segv|abrt|bus|ill|fpe|kill)\b|\b(?:terminated|killed) (?:by|with) signal\b|\bout of memory\b|\boom-kill|^#0 (?: ?0x[\da-f]+ in \S| ?[\w:~<>\.]+ \()`,
		tool: { 10: ["real/segfault-core-dumped", "tune2/gdb-thread-segv-backtrace"] },
		why: "crashes and signals: bash `Segmentation fault (core dumped)`, gdb `Program terminated with signal SIGSEGV` and frame `#0`, glibc `double free or corruption`, OOM kills; a frame `#0` is a frame (`#0  0x… in main`, `#0  main (argc=2) at x.c:4`), not BuildKit's `#0 building with …` (rust's `thread 'main' has overflowed its stack` is followed by `fatal runtime error: stack overflow`)",
	},
	{
		source: String.raw`invalid (?:read|write) of size|invalid free\(\)|mismatched free|uninitialised value|conditional jump or move depends|definitely lost: [1-9]|are definitely lost|(?:address|leak|thread|memory|undefinedbehavior)sanitizer\b|\bdata race\b|\bconflicts with a previous (?:read|write)\b|^[ \t]*previous (?:read|write) (?:at|of)\b`,
		tool: {
			0: ["real/valgrind-memcheck"],
			1: NO_FIXTURE,
			2: NO_FIXTURE,
			3: NO_FIXTURE,
			4: NO_FIXTURE,
			5: ["real/valgrind-memcheck"],
			6: ["real/valgrind-memcheck"],
			7: NO_FIXTURE,
			8: ["tune2/go-race-detector", "tune2/helgrind-data-race"],
			9: ["tune2/helgrind-data-race"],
			10: ["tune2/go-race-detector"],
		},
		why: "valgrind memcheck (`Invalid read of size 8`, `definitely lost: 256 bytes`), the sanitizers, and race detectors: helgrind `Possible data race during read of size 8 …` and `This conflicts with a previous write …`, Go's and ThreadSanitizer's `WARNING: DATA RACE` and `Previous write at … by goroutine 7:`; not `definitely lost: 0 bytes`",
	},
	{
		source: String.raw`multiple definition of|returned [1-9]\d* exit status|make(?:\[\d+\])?: \*\*\*|cmake error`,
		tool: {
			0: NO_FIXTURE,
			1: ["real/cmake-link-undefined", "ci/make-gcc-link-error"],
			2: ["real/gcc-make-error", "real/cmake-link-undefined"],
			3: ["tune2/cmake-find-package-missing"],
		},
		why: "linkers and builds: `multiple definition of`, `collect2: error: ld returned 1 exit status`, `make[1]: *** … Error 1`, `CMake Error`",
	},
	{
		source: String.raw`\bcommand not found\b|\bmerge conflict\b|: not found\b|\b(?:permission|access) (?:is )?denied\b|no such file or directory|\bconnection refused\b|\btimed out\b|\bdeadline exceeded\b|\bexit(?:ed)?(?: with)? (?:code|status)[ :=]*[1-9]|\bexited with [1-9]|\bnon-zero (?:exit )?(?:code|status)`,
		why: "shells, processes and version control: bash `command not found`, a merge conflict whatever version control reports it (git's `CONFLICT (content): Merge conflict in …` behind a frame no stamp rule knows, Perforce's `… - merge conflict`), dash `sh: 1: x: not found`, `Permission denied`, `No such file or directory`, `exited with status 139`, strace's `+++ exited with 3 +++`, `exit code 1`, `returned a non-zero code`; not `exit code 0`",
	},
	{
		source: String.raw`\b(?:operation not permitted|connection reset|broken pipe|no space left|read-only file system|too many open files|address already in use| is unreachable|no route to host|bad file descriptor|disk quota exceeded|name or service not known)\b`,
		why: "the operating system's own error messages (strerror), which a program passes on with no failure word of its own, like `No such file or directory` and `Permission denied` above: Go's `listen tcp :8080: bind: address already in use` and `write /tmp/x: no space left on device`, `read tcp 10.0.0.2:5432: connection reset by peer`, `touch: cannot touch 'x': Read-only file system`, glibc's `Name or service not known`",
	},
	{
		source: String.raw`^npm error\b|\berr!|\berr_pnpm_|\b(?:eresolve|enoent|eacces|eperm|econnrefused|econnreset|etimedout|eaddrinuse|enotfound|etarget|e404|eintegrity|enospc|eisdir|enotdir|eexist|enotempty|ebadengine|elifecycle)\b`,
		tool: { 0: ["real/npm-install-errors", "tune4/npm-workspaces-first-error"], 1: NO_FIXTURE, 2: NO_FIXTURE },
		why: "package managers and system error codes: `npm error code ERESOLVE`, `npm ERR!`, `gyp ERR!`, `ERR_PNPM_…`, `ENOENT`, `EACCES`, `E404`, `ETARGET`",
	},
	{
		source: String.raw`"(?:error|errors|exception|failure|failures|fatal)" *:(?! *(?:null|false|0)\b| *""| *\[ *\]| *\{ *\})|"(?:action|status|state|result|outcome|conclusion)" *: *"(?:fail|failed|failure|error|errored|fatal)"`,
		why: 'JSON documents: an `"error": {…}` or `"errors": ["…"]` member with a value; not `"error": null`, `"errors": []`, and never a string value such as eslint\'s `"no-undef": "error"`. And a JSON-lines event whose outcome member says it failed: `go test -json`\'s `{"Action":"fail","Package":…,"Test":"TestTotal037"}`, a CI step\'s `"conclusion": "failure"` (the outcome members of the JSON rules in src/signals/policy.ts)',
		// The failure words, not the member names: a JSON-lines log has `"status"` in every record.
		keywords: ["error", "exception", "fail", "fatal"],
	},
	{
		source: String.raw`(?:^|: )(?:schwerwiegender )?fehler: |(?:^|: )erreur(?: fatale)? ?: `,
		why: "compiler diagnostics in a German or French locale, where `error:` is translated and no English failure word is left: gcc's `src/billing_104.c:15:21: Fehler: »const struct invoice« hat kein Element namens »totl«` and `schwerwiegender Fehler:`, `erreur:` and `erreur fatale:` (after a location or at the start of a line)",
	},
	{
		source: String.raw`^(?:created by )?[a-z\d-]+\.[\w\.-]*\/[\w\.\/-]*(?:\(\*?\w+\)\.\w+)?\((?:0x|\{0x|\.\.\.\))`,
		tool: { 0: ["real/go-test-fail-panic", "tune3/go-test-timeout-deadlock"] },
		why: "Go stack dumps (a panic, a test binary's `panic: test timed out after 20s`, a fatal deadlock): the frames of the program's own packages, whose import path starts with a domain (`example.com/bank/ledger.(*Book).Transfer(0x0?, …)`, `example.com/bank/ledger.TestTransferBothWaysConcurrently(0xc000007520)`); the standard library's frames (`sync.(*Mutex).Lock(…)`, `testing.tRunner(…)`, `runtime.gopark(…)`) have no domain and stay out",
	},
	{
		source: String.raw`\battempt to (?:call|index|compare|concatenate|perform arithmetic on)\b`,
		tool: { 0: ["tune2/lua-xpcall-traceback", "tune4/busted-before-each-error"] },
		why: "Lua's runtime errors, which carry no failure word: busted's `spec/journal_spec.lua:6: attempt to call field 'open_journal' (a nil value)` from a `before_each` hook, `attempt to index a nil value (local 'cfg')`, `attempt to compare number with nil`, `attempt to perform arithmetic on a nil value`",
	},
	{
		source: String.raw`\b(?:handling|received|receiving|caught|got) signal\b|\breceived sig(?:hup|term|int|quit|usr1|usr2)\b|\bsignal \d+ \(sig\w+\) received\b`,
		why: "a process told to reload or stop, which explains the failures or the silence after it (a log line, so usually a weak signal): gunicorn's `[INFO] Handling signal: hup` before its new workers fail to boot, supervisord's `received SIGTERM indicating exit request`, nginx's `signal 15 (SIGTERM) received from 1, exiting`",
	},
]);

/** Default for `signalPattern` (compiled case-insensitive): every part of SIGNAL_PATTERN_PARTS. */
export const DEFAULT_SIGNAL_PATTERN = SIGNAL_PATTERN_PARTS.map((part) => part.source).join("|");

/**
 * Top-level alternatives of the default pattern that are principles, those that name one tool's
 * output, and how many of those no output here justifies (NO_FIXTURE).
 */
export function countPatternEntries(): { principle: number; tool: number; withoutFixture: number } {
	let principle = 0;
	let tool = 0;
	let withoutFixture = 0;
	for (const part of SIGNAL_PATTERN_PARTS) {
		const fixtures = Object.values(part.tool ?? {});
		tool += fixtures.length;
		principle += countAlternatives(part.source) - fixtures.length;
		withoutFixture += fixtures.filter((names) => names.length === 0).length;
	}
	return { principle, tool, withoutFixture };
}

/** Top-level alternatives of a regex source (a `|` outside groups, classes and escapes). */
export function countAlternatives(source: string): number {
	return alternativesOf(source).length;
}

/** The top-level alternatives of a regex source, each a regex source of its own. */
export function alternativesOf(source: string): string[] {
	let depth = 0;
	let inClass = false;
	let start = 0;
	const alternatives: string[] = [];
	for (let i = 0; i < source.length; i++) {
		const char = source[i];
		if (char === "\\") i++;
		else if (inClass) inClass = char !== "]";
		else if (char === "[") inClass = true;
		else if (char === "(") depth++;
		else if (char === ")") depth--;
		else if (char === "|" && depth === 0) {
			alternatives.push(source.slice(start, i));
			start = i + 1;
		}
	}
	alternatives.push(source.slice(start));
	return alternatives;
}

/**
 * The alternatives of DEFAULT_SIGNAL_PATTERN that can match a line's text after a prefix (a timestamp, a
 * multiplexer's tag: stamp.ts) and not the whole line: those with an anchor or a lookbehind (a `^` in a
 * class counts too: a few more than needed). Any other alternative that matches a line's end matches
 * the line, so the text after a prefix is tested with these alone (finder.ts).
 */
export const DEFAULT_LINE_START_PATTERN = alternativesOf(DEFAULT_SIGNAL_PATTERN)
	.filter((alternative) => /\^|\(\?<[!=]/.test(alternative))
	.join("|");

/** Each part's keywords: its own `keywords` where it names them, else derived from its source (regex/keywords.ts). */
export function partKeywords(part: SignalPatternPart): readonly string[] {
	if (part.keywords !== undefined) return part.keywords;
	const derived = findPatternKeywords(part.source);
	if (derived === undefined) throw new Error(`no prefilter keywords for the signal pattern part ${part.source}`);
	return derived;
}

/**
 * Literal keywords of which every line matching DEFAULT_SIGNAL_PATTERN contains at least one
 * (case-insensitive), written for text decoded as Latin-1 — one character per byte, so the
 * non-ASCII symbols appear as their UTF-8 bytes: each part's keywords (partKeywords), derived from
 * the pattern, never kept in step by hand. A cheap first pass (src/prefilter/keyword-automaton.ts)
 * finds candidate lines with them; each candidate is then tested with the full pattern. "\x1b"
 * makes every line with an ANSI escape a candidate, since the full pattern is tested with escapes
 * removed. The test "the prefilter keeps every line the default pattern matches" guards the
 * superset property.
 */
export function defaultSignalPrefilterKeywords(): readonly string[] {
	// Derived on first use (the prefilter's, or the prewarm's), not when the module loads: parsing
	// every part costs about 20 ms, which Pi's start-up need not pay.
	defaultKeywords ??= Object.freeze([
		...new Set([...SIGNAL_PATTERN_PARTS.flatMap((part) => partKeywords(part)), "\x1b"]),
	]);
	return defaultKeywords;
}
let defaultKeywords: readonly string[] | undefined;
