// A configured signalPattern through the real Pi runtime (issue 8, item 7): a pattern that is slow
// but allowed (`\w+Exception`, quadratic on runs of word characters) on 24 lines of 40 000 of them
// from real bash. The result arrives bounded, and the view says where and after how long the signal
// search stopped, or, on a machine fast enough to finish, that it found what was there to find.

import assert from "node:assert/strict";
import { test } from "node:test";
import { fauxAssistantMessage, fauxToolCall } from "@mariozechner/pi-ai";
import { parseConfig } from "../../src/config/config.js";
import { findPatternKeywords } from "../../src/regex/keywords.js";
import { SIGNAL_SCAN_BUDGET_MS } from "../../src/scan/scan.js";
import { CAPTURE_PATH, resultText, runPi, writeConfiguredIndex } from "../helpers/pi.js";
import { createTempDir } from "../helpers/tmp.js";

const THRESHOLD = 24_000;
const LINES = 24;
const LINE_CHARS = 40_000;
/** The one line that matches: FooException at its end. */
const SIGNAL_LINE = 12;

/** Line numbers shown in a view (`  12: text`). */
function shownLineNumbers(view: string): number[] {
	return [...view.matchAll(/^\s*(\d+): /gm)].map((match) => Number(match[1]));
}

test("a slow configured signalPattern on 24 lines of 40 000 word characters: bounded result, and the view says where the search stopped", async (t) => {
	const agentDir = await createTempDir(t);
	const config = { signalPattern: "\\w+Exception", headLines: 2, tailLines: 2 };
	assert.deepEqual(parseConfig(JSON.stringify(config)).problems, [], "the pattern is allowed: slow, not catastrophic");
	const index = writeConfiguredIndex(agentDir, JSON.stringify(config));
	const command = `for i in $(seq 1 ${LINES}); do head -c ${LINE_CHARS} /dev/zero | tr '\\0' a; [ $i = ${SIGNAL_LINE} ] && printf FooException; echo; done`;
	const run = await runPi({
		agentDir,
		extensionPaths: [CAPTURE_PATH, index],
		responses: [
			fauxAssistantMessage([fauxToolCall("bash", { command })], { stopReason: "toolUse" }),
			fauxAssistantMessage("done"),
		],
	});
	assert.deepEqual(run.extensionErrors, []);
	const [result] = run.toolResults;
	const view = resultText(result);
	assert.ok(view.length <= THRESHOLD, `bounded: ${view.length} chars`);
	const header = view.split("\n")[0];
	assert.match(
		header,
		new RegExp(
			`^\\[pi-overflow id=[0-9a-f]{12}\\] bash output: ${LINES} lines, ${LINES * (LINE_CHARS + 1) + "FooException".length} bytes`,
		),
		header,
	);

	const shown = shownLineNumbers(view);
	const stopped = /; signal search stopped at line (\d+) of 24 after (\d+) ms \(signalPattern too slow\)$/.exec(header);
	if (stopped) {
		const atLine = Number(stopped[1]);
		assert.ok(atLine >= 1 && atLine <= LINES, `stopped at a line of the output: ${atLine}`);
		assert.ok(Number(stopped[2]) > SIGNAL_SCAN_BUDGET_MS, "reports the time spent, past the budget");
		assert.equal(
			shown.includes(SIGNAL_LINE),
			atLine > SIGNAL_LINE,
			`line ${SIGNAL_LINE} is shown if and only if it was searched (stopped at ${atLine})`,
		);
		t.diagnostic(`signal search stopped at line ${atLine} after ${stopped[2]} ms`);
	} else {
		// Only a machine fast enough to search everything within the budget gets here.
		assert.doesNotMatch(view, /signal search stopped/, "no other notice of a stop");
		assert.ok(shown.includes(SIGNAL_LINE), `the completed search found line ${SIGNAL_LINE}`);
		t.diagnostic("the signal search completed within its budget");
	}
	assert.deepEqual(shown.slice(0, 2), [1, 2], "the head is complete");
	assert.deepEqual(shown.slice(-2), [23, 24], "the tail is complete");
});

test("a configured signalPattern of words finds its lines anywhere in 200 000 lines of real bash output, through the keyword prefilter", async (t) => {
	const agentDir = await createTempDir(t);
	const config = { signalPattern: "kaput|\\bboom\\b" };
	assert.deepEqual(
		findPatternKeywords(config.signalPattern),
		["boom", "kaput"],
		"the pattern has keywords: the prefilter runs",
	);
	const index = writeConfiguredIndex(agentDir, JSON.stringify(config));
	// Line 77 777 plainly, line 123 457 with ANSI escapes splitting the word, line 190 001 in upper case.
	const command = `awk 'BEGIN { for (i = 1; i <= 200000; i++) { if (i == 77777) print "worker 3: kaput at step " i; else if (i == 123457) printf "step %d \\033[31mKA\\033[0mPUT here\\n", i; else if (i == 190001) print "BOOM went step " i; else print "step " i " ok, boomerang " i % 7 } }'`;
	const run = await runPi({
		agentDir,
		extensionPaths: [CAPTURE_PATH, index],
		responses: [
			fauxAssistantMessage([fauxToolCall("bash", { command })], { stopReason: "toolUse" }),
			fauxAssistantMessage("done"),
		],
	});
	assert.deepEqual(run.extensionErrors, []);
	const view = resultText(run.toolResults[0]);
	assert.match(view.split("\n")[0], /^\[pi-overflow id=[0-9a-f]{12}\] bash output: 200000 lines/);
	assert.doesNotMatch(view, /signal search stopped/);
	assert.match(view, /^\s*77777: worker 3: kaput at step 77777$/m);
	assert.match(view, /^\s*123457: step 123457 KAPUT here$/m);
	assert.match(view, /^\s*190001: BOOM went step 190001$/m);
	assert.match(view, /the signal pattern matched 3 lines/);
});
