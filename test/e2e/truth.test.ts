// What the view states is true of the whole output, end to end through the real Pi runtime and its
// real bash tool (issue 22): the built-in signal pattern searches to the end however long the search
// takes, and a view's counts hold for the whole output.

import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { type Context, fauxAssistantMessage, fauxToolCall } from "@mariozechner/pi-ai";
import { CAPTURE_PATH, INDEX_PATH, resultText, runPi, writeConfiguredIndex } from "../helpers/pi.js";
import { createTempDir } from "../helpers/tmp.js";

const THRESHOLD = 24_000;

/** Runs `command` with the real bash tool through Pi with pi-overflow (`index`); returns the view. */
async function viewOf(agentDir: string, index: string, command: string): Promise<string> {
	const run = await runPi({
		agentDir,
		cwd: agentDir,
		extensionPaths: [CAPTURE_PATH, index],
		responses: [
			fauxAssistantMessage([fauxToolCall("bash", { command })], { stopReason: "toolUse" }),
			fauxAssistantMessage("done"),
		],
	});
	assert.deepEqual(run.extensionErrors, []);
	const view = resultText(run.toolResults[0]);
	assert.ok(view.length <= THRESHOLD, `view has ${view.length} chars`);
	return view;
}

/** The shown lines of a view: number → text (shown for itself or as context). */
function shownLines(view: string): Map<number, string> {
	const shown = new Map<number, string>();
	for (const line of view.split("\n")) {
		const match = /^\s*(?:key\s+)?(\d+)[:-] (.*)$/.exec(line);
		if (match) shown.set(Number(match[1]), match[2]);
	}
	return shown;
}

test("the built-in pattern searches to the end: a FATAL line after 100 000 identical ERROR lines is shown, on a machine where every search step takes a second", async (t) => {
	const agentDir = await createTempDir(t);
	// No setting at all but the clock: the bundle's defaults, the built-in signal pattern.
	const index = writeConfiguredIndex(agentDir, "{}", { racingScanClock: true });
	const errors = 100_000;
	const command = `yes 'ERROR: connection refused by upstream host' | head -n ${errors}; echo 'FATAL: giving up after too many refusals'; seq 1 2000 | sed 's/^/shutdown step /'`;
	const view = await viewOf(agentDir, index, command);
	const header = view.split("\n")[0];
	assert.match(header, new RegExp(`bash output: ${errors + 2001} lines`), header);
	assert.doesNotMatch(
		view,
		/stopped|too slow|signalPattern/,
		"the built-in pattern never stops, and no setting is blamed",
	);
	assert.equal(
		shownLines(view).get(errors + 1),
		"FATAL: giving up after too many refusals",
		`line ${errors + 1}, the FATAL line, is shown:\n${view.slice(0, 3000)}`,
	);
	assert.match(view, new RegExp(`matched ${errors + 1} lines in all`), "every line was searched");
});

test("three identical WARN lines at lines 50 000, 60 000 and 70 000 of 100 000: the view states no count of them that is false", async (t) => {
	const agentDir = await createTempDir(t);
	const warnings = [50_000, 60_000, 70_000];
	const program = `BEGIN { for (i = 1; i <= 100000; i++) print (i == 50000 || i == 60000 || i == 70000) ? "WARN: retrying connection" : "processed record " i " in batch " (i % 97) " ok" }`;
	const view = await viewOf(agentDir, INDEX_PATH, `awk '${program}'`);
	const rows = view.split("\n").filter((row) => row.includes("WARN: retrying connection"));
	assert.ok(rows.length > 0, `a WARN line is shown:\n${view}`);
	for (const row of rows) {
		// A key line under the header too (a WARN line is a weak signal line).
		const shownAt = Number(/^ *(?:key +)?(\d+)/.exec(row)?.[1]);
		assert.ok(warnings.includes(shownAt), `shown at its own line number: ${row}`);
		const note = /  \[([^\]]*)\]$/.exec(row)?.[1] ?? "";
		// Any count the note states is of the three.
		assert.doesNotMatch(note, /\bonce\b/, row);
		for (const stated of note.matchAll(/(?:×|appears )(\d+)/g))
			assert.ok(
				/at least/.test(note) ? Number(stated[1]) <= warnings.length : Number(stated[1]) === warnings.length,
				`the note's count is true of the whole output: ${row}`,
			);
	}
});

/** The shown row of line `lineNumber` that is a window of it: its 1-based character range and its text. */
function windowRow(view: string, lineNumber: number): { start: number; end: number; total: number; text: string } {
	for (const row of view.split("\n")) {
		const match = /^ *(\d+): \[chars (\d+)–(\d+) of (\d+)\] (.*?)(?: … \[\+\d+ chars\])?$/.exec(row);
		if (match && Number(match[1]) === lineNumber)
			return { start: Number(match[2]), end: Number(match[3]), total: Number(match[4]), text: match[5] };
	}
	assert.fail(`no window of line ${lineNumber} in:\n${view.slice(0, 4000)}`);
}

test("an error in the middle of a 5-million-character line is shown as a window with its true character offsets", async (t) => {
	const agentDir = await createTempDir(t);
	const giant = `${"a".repeat(2_500_000)} error: checksum mismatch at block 77 ${"b".repeat(2_500_000)}`;
	const script = `const out = [];
for (let i = 1; i <= 300; i++) out.push("step " + i + " fine");
out.push("a".repeat(2500000) + " error: checksum mismatch at block 77 " + "b".repeat(2500000));
for (let i = 1; i <= 300; i++) out.push("after " + i + " fine");
process.stdout.write(out.join("\\n") + "\\n");`;
	writeFileSync(join(agentDir, "gen.mjs"), script);
	const view = await viewOf(agentDir, INDEX_PATH, "node gen.mjs");
	const window = windowRow(view, 301);
	assert.equal(window.total, giant.length);
	assert.match(window.text, /error: checksum mismatch at block 77/);
	assert.equal(
		giant.slice(window.start - 1, window.start - 1 + window.text.length),
		window.text,
		"the offsets are true",
	);
});

test("10 MB of CR-separated records with no LF: each record is a line, in the view and in overflow_query alike", async (t) => {
	const agentDir = await createTempDir(t);
	const records = 250_000;
	const errorRecord = 120_001;
	const errorText = "error: disk quota exceeded on /var/lib/app";
	// Real bash: awk ends each record with a CR, and not one LF is written.
	const program = `BEGIN { ORS = "\\r"; for (i = 1; i <= ${records}; i++) print (i == ${errorRecord}) ? "${errorText}" : "progress " i " of ${records} records copied ok" }`;
	const seenId = (context: Context): string => {
		for (const message of [...context.messages].reverse()) {
			if (message.role !== "toolResult") continue;
			const text = message.content.map((part) => (part.type === "text" ? part.text : "")).join("\n");
			const id = /\[pi-overflow id=([0-9a-f]{12})/.exec(text)?.[1];
			if (id) return id;
		}
		throw new Error("no pi-overflow id seen");
	};
	const run = await runPi({
		agentDir,
		cwd: agentDir,
		extensionPaths: [CAPTURE_PATH, INDEX_PATH],
		responses: [
			fauxAssistantMessage([fauxToolCall("bash", { command: `awk '${program}'` })], { stopReason: "toolUse" }),
			(context) =>
				fauxAssistantMessage(
					[fauxToolCall("overflow_query", { id: seenId(context), lines: { start: errorRecord, end: errorRecord } })],
					{ stopReason: "toolUse" },
				),
			(context) =>
				fauxAssistantMessage([fauxToolCall("overflow_query", { id: seenId(context), search: "error:" })], {
					stopReason: "toolUse",
				}),
			fauxAssistantMessage("done"),
		],
	});
	assert.deepEqual(run.extensionErrors, []);
	const [bash, lines, search] = run.toolResults.map((result) => resultText(result));
	assert.ok(bash.length <= THRESHOLD, `view has ${bash.length} chars`);
	assert.match(bash.split("\n")[0], new RegExp(`bash output: ${records} lines`), bash.slice(0, 2000));
	assert.equal(
		shownLines(bash).get(errorRecord),
		errorText,
		`record ${errorRecord} is its own line:\n${bash.slice(0, 4000)}`,
	);
	assert.equal(
		shownLines(bash).get(records),
		`progress ${records} of ${records} records copied ok`,
		"the last record ends the tail",
	);
	assert.match(lines, new RegExp(`^ *${errorRecord}: ${errorText}$`, "m"), lines);
	assert.match(lines, new RegExp(`lines ${errorRecord}–${errorRecord} of ${records}`), lines);
	assert.match(search, new RegExp(`^ *${errorRecord}: ${errorText}$`, "m"), search);
	assert.doesNotMatch(search, /^ *1: /m, `no hit on line 1:\n${search.slice(0, 2000)}`);
});
