// A result an earlier layer cut to nothing useful, through the real Pi runtime: Pi's bash keeps the
// last 50 KB of a one-line JSON document of 552 KiB — with a final newline its text is "(no output)",
// without one a fragment of the line. No whole line of the output survived the cut, so the model
// gets the bounded view of the original (its JSON outline, the problem object and the jsonPath hint)
// instead of Pi's text with the recovery marker.

import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { fauxAssistantMessage, fauxToolCall } from "@mariozechner/pi-ai";
import { CAPTURE_PATH, INDEX_PATH, resultText, runPi, writeConfiguredIndex } from "../helpers/pi.js";
import { createTempDir } from "../helpers/tmp.js";

/** 564 962 bytes of JSON on one line, one object of 9 000 saying it is a problem; "nl" adds a final newline. */
const GENERATOR = `const results = [];
for (let i = 0; i < 9000; i++) results.push(i === 6123
	? { id: "order-6123", valid: false, errors: [{ instancePath: "/total", keyword: "minimum", message: "must be >= 0" }] }
	: { id: "order-" + i, valid: true, sku: "sku-" + (i * 7919 % 100000), errors: [] });
process.stdout.write(JSON.stringify({ checked: 9000, results }) + (process.argv[2] === "nl" ? "\\n" : ""));
`;

const CASES = [
	{ ending: "with", thresholdChars: undefined },
	{ ending: "without", thresholdChars: undefined },
	// A budget the 50 KB fragment fits in: the fragment with the marker would be sent.
	{ ending: "without", thresholdChars: 100_000 },
] as const;

for (const { ending, thresholdChars } of CASES) {
	const budget = thresholdChars === undefined ? "" : `, thresholdChars ${thresholdChars}`;
	test(`a one-line JSON document Pi cut to its last 50 KB (${ending} a final newline${budget}) reaches the model as its JSON outline with the jsonPath hint`, async (t) => {
		const agentDir = await createTempDir(t);
		writeFileSync(join(agentDir, "gen.mjs"), GENERATOR);
		const command = ending === "with" ? "node gen.mjs nl" : "node gen.mjs";
		const index =
			thresholdChars === undefined ? INDEX_PATH : writeConfiguredIndex(agentDir, JSON.stringify({ thresholdChars }));
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
		const text = resultText(run.toolResults[0]!);
		assert.match(text, /^\[pi-overflow id=[0-9a-f]{12}\] bash output: 1 line, 56496[23] bytes/, text.slice(0, 300));
		assert.match(
			text,
			/\n {2}json: \{"checked": 9000, "results": \[9000 items\]\}; 1 object says it is a problem: \$\.results\[6123\]/,
		);
		assert.match(text, /\n\[use overflow_query with id=[0-9a-f]{12}: [^\n]*jsonPath\]$/, "the jsonPath hint");
		assert.doesNotMatch(text, /\(no output\)|Showing last|Showing lines/);
		assert.ok(text.length <= (thresholdChars ?? 24_000), `bounded: ${text.length} chars`);
	});
}
