// The block forms of the signal policy, as data: the lines that continue the diagnostic above them,
// that head the section a failure sits in, that say what step the program is in (the step a failure
// below them happened in), and that open a build tool's step. In each kind the principles come first (forms many tools print); a form only
// one tool prints names the tuning fixtures that justify it, as the signal pattern's per-tool
// alternatives do (src/signals/pattern.ts: `set/name`, never a held-out output; NO_FIXTURE where
// the tool's documented format alone does). blocks.ts compiles each kind into one regex. Pure.

import { NO_FIXTURE } from "./pattern.js";

/** What a form says about the line it matches. */
export type BlockFormKind = "continuation" | "section" | "progress" | "build-step";

/** One form of a kind, with the output it exists for. */
export interface BlockForm {
	kind: BlockFormKind;
	/** A regex source, tested on the line after its timestamp (and, for continuations, a tool's margin). */
	source: string;
	why: string;
	/** The tuning fixtures that justify a form only one tool prints; absent for a principle. */
	fixtures?: readonly string[];
}

/** Flags each kind's regex is compiled with. */
const KIND_FLAGS: Readonly<Record<BlockFormKind, string>> = Object.freeze({
	continuation: "i",
	section: "",
	progress: "",
	"build-step": "",
});

/** The block forms, by kind, principles first. */
export const BLOCK_FORMS: readonly BlockForm[] = Object.freeze<BlockForm[]>([
	// Lines that continue the diagnostic above them, whatever their indentation.
	{
		kind: "continuation",
		source: String.raw`^\s*at `,
		why: "a stack frame, in the form most runtimes print it: java's and node's `    at com.x.Y.f(Y.java:12)`, C#'s `   at X.F() in x.cs:line 3`",
	},
	{
		kind: "continuation",
		source: String.raw`^\s*\|`,
		why: "the gutter of a code frame under a diagnostic: rustc's and gcc's `    |`, jest's and ruff's frames",
	},
	{
		kind: "continuation",
		source: String.raw`^\s*\d+\s*\|`,
		why: "a numbered source line in a code frame: `20 |     let x: i64 = s;`, gcc's `   12 |   return totl;`",
	},
	{
		kind: "continuation",
		source: String.raw`^\s*[~^][~^\s]*$`,
		why: "carets and tildes under the code a diagnostic points at: `    ^~~~`, Python's `    ^^^^^^`",
	},
	{
		kind: "continuation",
		source: String.raw`^\s*[+-] `,
		why: "the lines of a diff under an assertion: `- expected`, `+ actual`",
	},
	{
		kind: "continuation",
		source: String.raw`^\s*caused by\b`,
		why: "the next link of a cause chain: java's `Caused by: java.io.IOException`, anyhow's `Caused by:`",
	},
	{
		kind: "continuation",
		source: String.raw`^\s*(?:[=*•] *)?(?:note|help|hint|detail|context|where|line \d+|query|expected|received|actual|got|want|wanted|left|right|found|diff|stack(?:trace)?|locks held)\b\s*:`,
		why: "a labelled detail, bulleted or not: a `note:`/`help:` diagnostic (rustc's `  = note: expected type \x60i64\x60`), PostgreSQL's `DETAIL:`/`HINT:`/`LINE 3:`, an assertion's `expected:`/`got:`/`want:`/`left:`/`diff:`",
	},
	{
		kind: "continuation",
		source: String.raw`^\S+:\d+(?::\d+)?: (?:note|help):`,
		why: "a located note that explains the diagnostic above it: gcc's and clang's `src/a.c:3:5: note: declared here`",
	},
	{
		kind: "continuation",
		source: String.raw`^\s*(?:-->|:::) *\S+:\d+`,
		why: "an arrow that points at a location under the diagnostic it places: rustc's and clippy's `  --> src/main.rs:4:18` and `   ::: src/lib.rs:10:5`, ruff's and deno lint's `--> src/app.py:3:8`",
	},
	{
		kind: "continuation",
		source: String.raw`^\s*(?:\.\.\.|…|\[previous line repeated) ?\d+ more\b`,
		why: "a trace's count of the frames it leaves out: the JVM's `\t... 3 more`, python's `[Previous line repeated 996 more times]`",
	},
	{
		kind: "continuation",
		source: String.raw`^#\s{2,}\S`,
		why: "TAP's indented `#` diagnostics under a `not ok` (bats: `#   \x60[ \"$status\" -eq 0 ]' failed`)",
		fixtures: ["tune4/bats-setup-file-failed"],
	},
	{
		kind: "continuation",
		source: String.raw`^\s*#\d+ +(?:0x[\da-f]+ in \S|[\w:~<>.]+ \()`,
		why: "a numbered stack frame, as debuggers and the sanitizers print it: gdb's `#1  0x000055555555513d in worker (arg=0x4) at src/stock.c:48` and `#0  worker (arg=0x4) at …`, AddressSanitizer's and ThreadSanitizer's `    #0 0x4f5a3c in main /src/x.c:12:5`",
	},
	// Lines that head a section a failure may sit in: shown above a signal that follows them.
	{
		kind: "section",
		source: String.raw`^_{3,} .+ _{3,}$`,
		why: "a title between rules: pytest's `____ test_refund ____`",
	},
	{
		kind: "section",
		source: String.raw`^-{3,} .+ -{3,}$`,
		why: "a title between rules: Rust's `---- tests::x stdout ----`, pytest's `---- Captured stdout ----`",
	},
	{
		kind: "section",
		source: String.raw`^={3,} .+ ={3,}$`,
		why: "a title between rules: pytest's `==== FAILURES ====`",
	},
	{
		kind: "section",
		source: String.raw`^[A-Za-z][^|]*?\S (?:\*{3,}|={3,}|-{3,}|_{3,}|~{3,}|#{3,})\s*$`,
		why: "a title a rule follows to the end of its line: Ansible's `TASK [render config] ****` and `RUNNING HANDLER [restart] ****`, `PLAY RECAP ****` (a title starts with a letter: a level's `[INFO] ----` rule and a code frame's `6 | =======` are none)",
	},
	{
		kind: "section",
		source: String.raw`^[^\w\s]{0,4} *RUN(?:NING)?\b +\S`,
		why: "a line that says what starts to run, the word in capitals after a mark or two: GoogleTest's (and busted's) `[ RUN      ] Suite.Test`, Go's `=== RUN   TestTransfer`, Ansible's `RUNNING HANDLER [restart config]`",
	},
	{
		kind: "section",
		source: String.raw`^\s*\d+\) \S`,
		why: "a numbered failure: RSpec's and ExUnit's `  1) Billing computes totals`, mocha's `  3) Error:`",
	},
	{
		kind: "section",
		source: String.raw`^--- (?:FAIL|PASS):`,
		why: "Go's `--- FAIL: TestTransfer (0.00s)`",
		fixtures: ["real/go-test-fail-panic", "tune2/go-race-detector"],
	},
	{
		kind: "section",
		source: String.raw`^# [\w.-]+\/[\w./-]+$`,
		why: "the `# example.com/api/handlers/h061` package line Go's build and vet print above a package's diagnostics",
		fixtures: ["tune3/go-vet-printf-wrong-type"],
	},
	// A step in progress: a failure below it happened in that step (its section), when no section
	// header above it says more (blocks.ts).
	{
		kind: "progress",
		source: String.raw`(?:^|[\]\t]|: )[ \t]*(?:[A-Z]{4,7} +(?:\[[^\]\s]{1,80}\] *)?)?[^\w\s]{0,3} *(?!(?:During|Warning|Nothing|Something|Anything|Everything|Missing|Pending|String|Following|Remaining)\b)[A-Z][a-z]{2,}ing \S`,
		why: "a line that says what the program is doing now, a capitalised verb in -ing leading its message (at the line's start or after a tag, a tab or a colon that ends a frame, then after a level and a logger's name) with its object after it: Alembic's `INFO  [alembic.runtime.migration] Running upgrade 0030 -> 0031, unique customer email`, Django's `  Applying shop.0031_unique_email...`, Flyway's `Migrating schema \"public\" to version \"31\"`, Liquibase's `Running Changeset: db/changelog.xml::31::dev`, cargo's `   Compiling ledger v0.1.0`, CMake's `-- Looking for pthread.h`; not `During handling of …`, `Warning …`, `Nothing to do`",
	},
	{
		kind: "progress",
		source: String.raw`^== [\w.-]+ [\w:-]+: (?:migrating|reverting)\b`,
		why: "Rails' and Sequelize's `== 20240101120000 AddIndex: migrating ===`",
		fixtures: NO_FIXTURE,
	},
	// A build tool's step: a report or a failing step may start with it.
	{
		kind: "build-step",
		source: String.raw`^\[INFO\] --- `,
		why: "Maven's `[INFO] --- surefire:3.2.2:test (default-test) @ shop ---`",
		fixtures: ["real/maven-surefire-failure", "tune2/maven-missing-artifact"],
	},
	{
		kind: "build-step",
		source: String.raw`^> Task :`,
		why: "Gradle's `> Task :compileJava`",
		fixtures: NO_FIXTURE,
	},
	{
		kind: "build-step",
		source: String.raw`^(?:#\d+ \[(?:[\w.-]+ )?\d+\/\d+\]|Step \d+\/\d+ :) \S`,
		why: "docker build's step, counted out of the build's steps: the classic builder's `Step 3/7 : RUN make`, BuildKit's `#8 [3/7] RUN make` and `#8 [build 3/7] RUN make` (a progress counter alone, as ninja's `[12/345] Building …` on every line, is routine, not a step)",
		fixtures: NO_FIXTURE,
	},
]);

/** One form as a regex of its own, with its kind's flags. */
export function blockFormRegexOf(form: BlockForm): RegExp {
	return new RegExp(form.source, KIND_FLAGS[form.kind]);
}

/** The forms of one kind as one regex (the alternation of their sources, with the kind's flags). */
export function blockFormRegex(kind: BlockFormKind): RegExp {
	const sources = BLOCK_FORMS.filter((form) => form.kind === kind).map((form) => form.source);
	return new RegExp(sources.join("|"), KIND_FLAGS[kind]);
}

/** Block forms that are principles, those only one tool prints, and how many of those no output here justifies. */
export function countBlockForms(): { principle: number; tool: number; withoutFixture: number } {
	const tools = BLOCK_FORMS.filter((form) => form.fixtures !== undefined);
	return {
		principle: BLOCK_FORMS.length - tools.length,
		tool: tools.length,
		withoutFixture: tools.filter((form) => form.fixtures?.length === 0).length,
	};
}
