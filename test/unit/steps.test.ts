// The steps of a CI job's log (src/signals/steps.ts): the scan finds their markers with the keyword
// prefilter, the view outlines them and gives a failed step's first and last error a place first.

import assert from "node:assert/strict";
import { test } from "node:test";
import { createDefaultConfig } from "../../src/config/config.js";
import { LineScanner, scanText } from "../../src/scan/scan.js";
import { classifySeverity, SEVERITY_WARNING } from "../../src/signals/policy.js";
import {
	lastFailedStep,
	MAX_STEP_MARKS,
	sectionsOf,
	StepLog,
	stepMarkOf,
	stepStanding,
} from "../../src/signals/steps.js";
import { buildViewFromText } from "../../src/view/compose.js";

const config = createDefaultConfig();
/** A word of letters only, different for each n (shapeOf keeps letters: a shape of its own). */
const word = (n: number) => n.toString(26).replace(/[0-9]/g, (digit) => "qrstuvwxyz"[Number(digit)]);
const at = (text: string) => `2026-12-02T10:18:20.9133560Z ${text}`;

/** A job printed as hosted CI prints one: each step a group, a failed one closed by its verdict. */
function job(steps: { run: string; lines: string[]; exit?: number }[]): string[] {
	const out: string[] = [];
	for (const step of steps) {
		out.push(at(`##[group]Run ${step.run}`), at("shell: /usr/bin/bash -e {0}"), at("##[endgroup]"));
		out.push(...step.lines.map(at));
		if (step.exit) out.push(at(`##[error]Process completed with exit code ${step.exit}.`));
	}
	return out;
}

test("knows the markers of the CI services, after a timestamp or not, and nothing else", () => {
	assert.equal(stepMarkOf(at("##[group]Run npm test"))?.kind, "open");
	assert.equal(stepMarkOf("::group::Build")?.kind, "open");
	assert.equal(stepMarkOf("travis_fold:start:install")?.kind, "open");
	assert.equal(stepMarkOf(at("##[error]Process completed with exit code 1."))?.kind, "failed");
	for (const line of ["## [group]", "echo ##[group]x", "##[endgroup]", at("section started"), ""])
		assert.equal(stepMarkOf(line), undefined, line);
});

test("reads the markers a raw log packs into one line, each after a carriage return, and titles a step as a terminal shows it", () => {
	const ESC = "\x1b";
	const travisCommand = `travis_time:end:5a8d:start=1,finish=2,duration=1,event=install\r${ESC}[0Ktravis_fold:end:install.npm\r${ESC}[0Ktravis_time:start:6b9e\r${ESC}[0K$ make check`;
	assert.equal(stepMarkOf(travisCommand)?.prefix, "travis_time:start:");
	const verdict = `travis_time:end:6b9e:start=1,finish=2,duration=1,event=script\r${ESC}[0K${ESC}[31;1mThe command "make check" exited with 2.${ESC}[0m`;
	assert.equal(stepMarkOf(verdict)?.kind, "failed");
	assert.equal(stepMarkOf('The command "make check" exited with 0.'), undefined, "a command that passed");
	assert.equal(stepMarkOf('The command "make" is not found'), undefined);
	const gitlab = `section_end:1796549520:step_script\r${ESC}[0Ksection_start:1796549520:cleanup_file_variables\r${ESC}[0K${ESC}[0K${ESC}[36;1mCleaning up project directory and file based variables${ESC}[0;m`;
	assert.equal(stepMarkOf(gitlab)?.prefix, "section_start:");
	const log = new StepLog();
	// The scan gives the log the raw line, escapes and all: its line erases decide what a terminal shows.
	for (const [n, line] of [
		travisCommand,
		verdict,
		gitlab,
		"travis_fold:start:worker_info\rWorker information",
		"##[group]Run npm test",
	].entries())
		log.add(n + 1, -1, line, stepMarkOf(line)!);
	assert.deepEqual(
		log.result().marks.map((mark) => mark.title),
		[
			"$ make check",
			'The command "make check" exited with 2.',
			"Cleaning up project directory and file based variables",
			"Worker information",
			"Run npm test",
		],
	);
});

test("a Travis job's command that failed is its failed step, and the view's tail ends at its verdict", async () => {
	const ESC = "\x1b";
	const lines = [
		`travis_fold:start:install.npm\r${ESC}[0Ktravis_time:start:5a8d\r${ESC}[0K$ npm ci`,
		...Array.from({ length: 300 }, (_, i) => `added package ${word(i)}`),
		`travis_time:end:5a8d:start=1,finish=2,duration=1,event=install\r${ESC}[0Ktravis_fold:end:install.npm\r${ESC}[0Ktravis_time:start:6b9e\r${ESC}[0K$ make check`,
		...Array.from({ length: 200 }, (_, i) => `checked module ${i}`),
		"src/ledger.c:12:5: error: 'totl' undeclared",
		`travis_time:end:6b9e:start=1,finish=2,duration=1,event=script\r${ESC}[0K${ESC}[31;1mThe command "make check" exited with 2.${ESC}[0m`,
		`travis_fold:start:cache.2\r${ESC}[0Kstore build cache`,
		...Array.from({ length: 60 }, (_, i) => `uploading cache part ${i}`),
		`travis_fold:end:cache.2\r${ESC}[0K`,
		"Done. Your build exited with 1.",
	];
	const scan = scanText(lines.join("\n") + "\n", config);
	const failed = lastFailedStep(scan.steps);
	assert.equal(failed?.opener.lineNumber, 302, "the step is the command the verdict follows");
	assert.equal(failed?.opener.title, "$ make check");
	assert.equal(failed?.verdict.lineNumber, 504);
	const view = (await buildViewFromText(lines.join("\n") + "\n", { ...config, id: "0123456789ab", toolName: "bash" }))
		.text;
	assert.match(view, /steps: 3, 1 failed/);
	assert.match(view, /   503: src\/ledger\.c:12:5: error: 'totl' undeclared/);
	assert.match(view, /lines after the failed step's verdict/, "the cache upload folds into one counted line");
});

test("keeps the latest marks of a job with very many steps, and counts the others", () => {
	const log = new StepLog();
	for (let n = 1; n <= 5000; n++) log.add(n, n * 30, `##[group]Run step ${n}`, stepMarkOf("##[group]x")!);
	const { marks, dropped } = log.result();
	assert.equal(marks.length, MAX_STEP_MARKS);
	assert.equal(dropped, 5000 - MAX_STEP_MARKS);
	assert.deepEqual(marks[marks.length - 1], {
		lineNumber: 5000,
		offset: 150_000,
		kind: "open",
		title: "Run step 5000",
	});
});

test("the scan finds every marker, in the head, in blocks and in lines that arrive in pieces", () => {
	const lines = job([
		{ run: "npm ci", lines: Array.from({ length: 300 }, (_, i) => `added package ${i}`) },
		{ run: "npm run lint", lines: Array.from({ length: 300 }, (_, i) => `checked file ${i}`), exit: 1 },
		{ run: "npm test", lines: Array.from({ length: 300 }, (_, i) => `ok ${i} - case ${i}`), exit: 2 },
	]);
	const text = `${lines.join("\n")}\n`;
	const expected = [
		[1, "open", "Run npm ci"],
		[304, "open", "Run npm run lint"],
		[607, "failed", "Process completed with exit code 1."],
		[608, "open", "Run npm test"],
		[911, "failed", "Process completed with exit code 2."],
	];
	const whole = scanText(text, { ...config, headLines: 10 });
	assert.deepEqual(
		whole.steps.marks.map((mark) => [mark.lineNumber, mark.kind, mark.title]),
		expected,
	);
	// Each mark's offset is where its line starts.
	const bytes = Buffer.from(text);
	for (const mark of whole.steps.marks) {
		const line = bytes.toString("utf8", mark.offset, bytes.indexOf(0x0a, mark.offset));
		assert.equal(line, lines[mark.lineNumber - 1]);
	}
	// Pushed a few bytes at a time: every line arrives in pieces.
	const scanner = new LineScanner({ ...config, headLines: 10 });
	for (let i = 0; i < bytes.length; i += 7) scanner.push(bytes.subarray(i, i + 7));
	assert.deepEqual(
		scanner.end().steps.marks.map((mark) => [mark.lineNumber, mark.offset, mark.kind, mark.title]),
		whole.steps.marks.map((mark) => [mark.lineNumber, mark.offset, mark.kind, mark.title]),
	);
});

test("the view outlines the steps and shows a failed step's first error before an earlier step's many errors", async () => {
	const lines = job([
		{ run: "npm ci", lines: Array.from({ length: 50 }, (_, i) => `added package ${i}`) },
		{
			run: "npx tsc --noEmit",
			// An allowed step: 300 errors, each a shape of its own (letters differ), as rare as the cause.
			lines: Array.from({ length: 300 }, (_, i) => `src/m.ts(${i},1): error TS2304: Cannot find name ${word(i)}`),
			exit: 2,
		},
		{
			run: "npm test",
			lines: [
				...Array.from({ length: 600 }, (_, i) => `ok ${i} - case ${i}`),
				"Error: connect ECONNREFUSED 127.0.0.1:5432 while seeding the test database",
				...Array.from({ length: 20 }, (_, i) => `not ok ${i + 600} - ${word(i + 1000)} failed`),
				...Array.from({ length: 600 }, (_, i) => `ok ${i + 620} - case ${i + 620}`),
			],
			exit: 1,
		},
	]);
	const options = { ...config, toolName: "bash", id: "0123456789ab", maxSignalLines: 8 };
	const view = (await buildViewFromText(`${lines.join("\n")}\n`, options)).text;
	assert.match(
		view,
		/\n {2}steps: 3, 2 failed — 1-53 Run npm ci; 54-\d+ Run npx tsc --noEmit: failed at line \d+, Process completed with exit code 2\.; \d+-\d+ Run npm test: failed at line \d+, Process completed with exit code 1\.\n/,
	);
	const cause = lines.findIndex((line) => line.includes("ECONNREFUSED")) + 1;
	assert.match(view, new RegExp(`\\n\\s*${cause}: \\S+ Error: connect ECONNREFUSED`));
	assert.ok(view.length <= options.thresholdChars);
});

test("the view shows where a long failed step starts, the command it ran, however far above the tail", async () => {
	const lines = job([
		{ run: "npm ci", lines: Array.from({ length: 300 }, (_, i) => `added package ${i}`) },
		{
			run: "npm test -- --reporter=spec",
			lines: [
				...Array.from({ length: 3000 }, (_, i) => `  ✓ case ${word(i)} passes`),
				"  1) Error: connect ECONNREFUSED 127.0.0.1:5432",
				...Array.from({ length: 30 }, (_, i) => `      at ${word(i)} (node:net:${i})`),
			],
			exit: 1,
		},
	]);
	const options = { ...config, toolName: "bash", id: "0123456789ab" };
	const view = (await buildViewFromText(`${lines.join("\n")}\n`, options)).text;
	const opener = lines.findIndex((line) => line.includes("Run npm test")) + 1;
	assert.ok(opener > 300);
	assert.match(
		view,
		new RegExp(`\\n\\s*${opener}: \\S+ ##\\[group\\]Run npm test -- --reporter=spec\\n\\s*${opener + 1}: `),
	);
	assert.match(view, new RegExp(`\\n\\s*${lines.length}: \\S+ ##\\[error\\]Process completed with exit code 1\\.`));
	assert.ok(view.length <= options.thresholdChars);
});

test("a job's steps: where each starts and ends, which failed, and where a line lies", () => {
	const lines = [
		"Current runner version: '2.321.0'",
		...job([
			{ run: "actions/checkout@v4", lines: ["Syncing repository: a/b"] },
			{ run: "npm run lint", lines: ["lint ok"], exit: 1 },
			{ run: "npm test", lines: ["not ok 1 - adds"], exit: 2 },
			{ run: "npm pack", lines: ["packed"] },
		]),
	];
	const scan = scanText(`${lines.join("\n")}\n`, { ...config, headLines: 2, tailLines: 2 });
	const sections = sectionsOf(scan.steps, scan.totalLines);
	assert.deepEqual(
		sections.map((section) => [section.start, section.end, section.title, section.failed?.lineNumber]),
		[
			[2, 5, "Run actions/checkout@v4", undefined],
			[6, 10, "Run npm run lint", 10],
			[11, 15, "Run npm test", 15],
			[16, 19, "Run npm pack", undefined],
		],
	);
	assert.equal(lastFailedStep(scan.steps)?.opener.lineNumber, 11);
	const standing = stepStanding(sections);
	assert.deepEqual(
		[1, 2, 6, 12, 16, 19].map(standing),
		[1, 2, 0, 0, 2, 2],
		"outside every step, passed, failed, failed, passed, passed",
	);
	// A job none of whose steps failed sets nothing aside.
	const passing = scanText(
		`${job([
			{ run: "a", lines: ["x"] },
			{ run: "b", lines: ["y"] },
		]).join("\n")}\n`,
		config,
	);
	assert.equal(stepStanding(sectionsOf(passing.steps, passing.totalLines))(3), 0);
	assert.equal(lastFailedStep(passing.steps), undefined);
});

/** A runner's set-up as hosted CI prints it: lines of their own, outside steps and in steps that pass. */
function runnerSetUp(): string[] {
	const out = [
		"Requested labels: ubuntu-latest",
		"Job defined at: example-org/widgets/.github/workflows/ci.yml@refs/pull/412/merge",
		"Waiting for a runner to pick up this job...",
		"Job is about to start running on the hosted runner: GitHub Actions 17 (hosted)",
		"Current runner version: '2.321.0'",
		"Secret source: Actions",
	].map(at);
	out.push(
		...job([
			{ run: "actions/checkout@v4", lines: Array.from({ length: 70 }, (_, i) => `checkout says ${word(i + 50)}`) },
			{ run: "actions/setup-node@v4", lines: Array.from({ length: 70 }, (_, i) => `set-up says ${word(i + 500)}`) },
		]),
	);
	return out;
}

test("a job whose step failed: its view's head is that step's head, and a few of the runner's first lines", async () => {
	const setUp = runnerSetUp();
	const lines = [
		...setUp,
		...job([
			{
				run: "make check",
				lines: Array.from({ length: 1500 }, (_, i) => `unit ${word(i)} ok ${word(i + 7)}`),
				exit: 2,
			},
		]),
	];
	const options = { ...config, toolName: "bash", id: "0123456789ab" };
	const view = (await buildViewFromText(`${lines.join("\n")}\n`, options)).text;
	const shown = new Set([...view.matchAll(/^ *(\d+)[:-] /gm)].map((match) => Number(match[1])));
	const opener = setUp.length + 1;
	assert.equal(lines[opener - 1], at("##[group]Run make check"));
	for (let line = opener; line < opener + 20; line++) assert.ok(shown.has(line), `step head line ${line}`);
	// Of the job's own head, its first lines at most (room allowing), and no note that the others were dropped to fit.
	assert.deepEqual(
		[...shown].filter((line) => line > 5 && line <= options.headLines),
		[],
	);
	// Those offered and not shown are counted as dropped to fit: never the job head's other lines.
	const dropped = /(\d+) head lines? dropped/.exec(view);
	assert.ok(dropped === null || Number(dropped[1]) <= 5, dropped?.[0]);
	assert.ok(shown.has(lines.length));
	assert.ok(view.length <= options.thresholdChars);
});

test("a line seen once in a failed step is shown, not the lines seen once in the runner's set-up", async () => {
	const setUp = runnerSetUp();
	// The set-up's lines of their own are over a tenth of the job's: an output of few shapes only without them.
	const stepLines = Array.from({ length: 1000 }, (_, i) => `compiled module_${i}.o in ${i % 7} ms`);
	stepLines[500] = "ld: relocation R_X86_64_32 against `.rodata' can not be used when making a PIE object";
	const lines = [...setUp, ...job([{ run: "make all", lines: stepLines, exit: 2 }])];
	const options = { ...config, toolName: "bash", id: "0123456789ab" };
	const view = (await buildViewFromText(`${lines.join("\n")}\n`, options)).text;
	const odd = lines.findIndex((line) => line.includes("relocation R_X86_64_32")) + 1;
	assert.match(
		view,
		new RegExp(`\\n\\s*${odd}: \\S+ ld: relocation R_X86_64_32 .*\\[a rare line: its shape appears once\\]`),
	);
	assert.doesNotMatch(view, /says \w+ {2}\[a rare line/);
});

test("a failed step's head starts after the runner's header, and its tail ends at its verdict", async () => {
	const setUp = runnerSetUp();
	const header = [
		"##[group]Run make check",
		"\x1b[36;1mmake check\x1b[0m",
		"shell: /usr/bin/bash -e {0}",
		"env:",
		"  CI: true",
		"##[endgroup]",
	].map(at);
	const output = Array.from({ length: 1500 }, (_, i) => `unit ${word(i)} ok ${word(i + 7)}`);
	const cleanup = [
		"Post job cleanup.",
		"[command]/usr/bin/git version",
		"git version 2.47.1",
		"[command]/usr/bin/git config --local --unset-all http.https://github.com/.extraheader",
		"Cleaning up orphan processes",
	].map(at);
	const lines = [
		...setUp,
		...header,
		...output.map(at),
		at("##[error]Process completed with exit code 2."),
		...cleanup,
	];
	const options = { ...config, toolName: "bash", id: "0123456789ab" };
	const view = (await buildViewFromText(`${lines.join("\n")}\n`, options)).text;
	const shown = new Set([...view.matchAll(/^ *(\d+)[:-] /gm)].map((match) => Number(match[1])));
	const first = setUp.length + header.length + 1;
	const verdict = first + output.length;
	// The output's own first lines, as many as the head shows of an output, after the header.
	for (let line = first; line < first + options.headLines; line++) assert.ok(shown.has(line), `head line ${line}`);
	// Its last lines up to the verdict, as many as a tail has; the runner's cleanup folded, but for the last line.
	for (let line = verdict - options.tailLines + 1; line <= verdict; line++)
		assert.ok(shown.has(line), `tail line ${line}`);
	assert.match(view, /\n {2}\.\.\. 4 lines after the failed step's verdict: the job's own last steps \.\.\.\n/);
	assert.ok(shown.has(lines.length) && !shown.has(verdict + 1));
	assert.ok(view.length <= options.thresholdChars);
});

test("a log level after CI's timestamp decides a line's severity, as it does without the timestamp", () => {
	const line = "2026-12-01 03:10:03,591 INFO gave up: ledger-sync entered FATAL state, too many start retries";
	assert.equal(classifySeverity(at(line)), classifySeverity(line));
	assert.equal(classifySeverity(at(line)), SEVERITY_WARNING);
});

test("steps run after a failed one: the view still ends the failed step at its verdict, the rest counted", async () => {
	const setUp = runnerSetUp();
	const output = Array.from({ length: 1500 }, (_, i) => `unit ${word(i)} checked`);
	const coverage = Array.from({ length: 200 }, (_, i) => `  widget_${i}.ts | ${60 + (i % 40)} | ${50 + (i % 50)} |`);
	const lines = [
		...setUp,
		...job([{ run: "make check", lines: output, exit: 2 }]),
		...job([{ run: "npx nyc report", lines: coverage }]),
		at("Cleaning up orphan processes"),
	];
	const options = { ...config, toolName: "bash", id: "0123456789ab" };
	const view = (await buildViewFromText(`${lines.join("\n")}\n`, options)).text;
	const shown = new Set([...view.matchAll(/^ *(\d+)[:-] /gm)].map((match) => Number(match[1])));
	const verdict = lines.findIndex((line) => line.includes("##[error]Process completed")) + 1;
	assert.ok(lines.length - verdict > options.tailLines, "the verdict lies above the output's tail");
	for (let line = verdict - options.tailLines + 1; line <= verdict; line++) assert.ok(shown.has(line), `line ${line}`);
	const after = lines.length - 1 - verdict;
	assert.match(
		view,
		new RegExp(
			`\\n {2}\\.\\.\\. ${after} lines after the failed step's verdict: the job's own last steps \\.\\.\\.\\n`,
		),
	);
	assert.ok(shown.has(lines.length));
	assert.ok(![...shown].some((line) => line > verdict && line < lines.length), "no line of the steps after it");
	assert.ok(view.length <= options.thresholdChars);
});

test("a tool's groups inside a failed step are part of that step, not steps that passed", async () => {
	const setUp = runnerSetUp();
	const tasks = [1, 2, 3, 4].flatMap((task) => [
		`##[group]widgets-${task}:check`,
		...Array.from({ length: 400 }, (_, i) => `task ${task} compiled module_${i}.o in ${i % 7} ms`),
		...(task === 2 ? ["ld: relocation R_X86_64_32 against `.rodata' can not be used when making a PIE object"] : []),
		"##[endgroup]",
	]);
	const lines = [...setUp, ...job([{ run: "npx turbo run check", lines: tasks, exit: 1 }])];
	const scan = scanText(`${lines.join("\n")}\n`, config);
	const sections = sectionsOf(scan.steps, scan.totalLines);
	const opener = lines.findIndex((line) => line.includes("##[group]Run npx turbo")) + 1;
	assert.deepEqual(
		sections.slice(-1).map((section) => [section.start, section.end, section.title, section.failed?.lineNumber]),
		[[opener, lines.length, "Run npx turbo run check", lines.length]],
	);
	assert.equal(lastFailedStep(scan.steps)?.opener.lineNumber, opener);
	// The odd line of the second task is rare in the failed step, not set aside with steps that passed.
	const view = (await buildViewFromText(`${lines.join("\n")}\n`, { ...config, toolName: "bash", id: "0123456789ab" }))
		.text;
	const odd = lines.findIndex((line) => line.includes("relocation R_X86_64_32")) + 1;
	assert.match(view, new RegExp(`\\n\\s*${odd}: \\S+ ld: relocation R_X86_64_32 `));
});
