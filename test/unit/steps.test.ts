// The steps of a CI job's log (src/signals/steps.ts): the scan finds their markers with the keyword
// prefilter, the view outlines them and gives a failed step's first and last error a place first.

import assert from "node:assert/strict";
import { test } from "node:test";
import { createDefaultConfig } from "../../src/config/config.js";
import { LineScanner, scanText } from "../../src/scan/scan.js";
import { MAX_STEP_MARKS, StepLog, stepMarkOf } from "../../src/signals/steps.js";
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
