// full-output.ts: Pi's row of a bounded result names where the whole output is, and once a view
// replaced Pi's cut text, Pi's truncation record counts the view's lines of the output's true total.

import assert from "node:assert/strict";
import { test } from "node:test";
import { countShownLines, describeFullOutput } from "../../src/bound/full-output.js";

const ID = "0123456789ab";
const VIEW = [
	`[pi-overflow id=${ID}] bash output: 5000 lines, 505000 bytes — showing head, 1 signal line, tail`,
	"  key   4000: error: boom",
	"     1: first",
	"     2: second",
	"  ... 4995 lines omitted ...",
	"  3999- context",
	"  4000: error: boom",
	"  5000: last",
	`[use overflow_query with id=${ID}: search (regex), lines {start,end}, jsonPath]`,
].join("\n");
const PI_TRUNCATION = { truncated: true, truncatedBy: "bytes", totalLines: 5001, outputLines: 507, content: "x" };
const textPath = (id: string) => `/agent/my-pi/pi-overflow/${id}.txt`;

test("countShownLines counts the output's lines a view shows, each once, not its key lines or notices", () => {
	assert.equal(countShownLines(VIEW), 5);
	assert.equal(countShownLines("no numbered lines\n[pi-overflow: note]"), 0);
});

test("a view in place of Pi's cut: the row names the private copy and counts the view's lines of the true total", () => {
	const patch = describeFullOutput(
		{
			content: [{ type: "text", text: VIEW }],
			details: { truncation: PI_TRUNCATION, overflow: { id: ID, totalLines: 5000, totalBytes: 505000 } },
		},
		{ textPath, budgetChars: 24000 },
	);
	const details = patch.details as Record<string, unknown>;
	assert.equal(details.fullOutputPath, textPath(ID));
	assert.deepEqual(details.truncation, {
		content: VIEW,
		truncated: true,
		truncatedBy: "lines",
		totalLines: 5000,
		totalBytes: 505000,
		outputLines: 5,
		outputBytes: Buffer.byteLength(VIEW),
		lastLinePartial: false,
		firstLineExceedsLimit: false,
		maxLines: 5,
		maxBytes: 24000,
	});
});

test("Pi's text kept with the marker keeps Pi's truncation; a path already set or a kept spill file wins; no id, no change", () => {
	const kept = `tail\n[pi-overflow id=${ID} lines=3 bytes=9] full output stored; overflow_query can search or read it`;
	const details = { truncation: PI_TRUNCATION, overflow: { id: ID, totalLines: 3, totalBytes: 9 } };
	const marked = describeFullOutput(
		{ content: [{ type: "text", text: kept }], details },
		{ textPath, budgetChars: 24000 },
	);
	assert.equal((marked.details as { truncation: unknown }).truncation, PI_TRUNCATION);
	assert.equal((marked.details as { fullOutputPath: unknown }).fullOutputPath, textPath(ID));
	const spilled = describeFullOutput(
		{ content: [{ type: "text", text: kept }], details },
		{ textPath, keptSpillPath: "/tmp/pi-bash-1.log", budgetChars: 24000 },
	);
	assert.equal((spilled.details as { fullOutputPath: unknown }).fullOutputPath, "/tmp/pi-bash-1.log");
	const named = { ...details, fullOutputPath: "/already" };
	assert.equal(
		(describeFullOutput({ content: [], details: named }, { textPath, budgetChars: 1 }).details as typeof named)
			.fullOutputPath,
		"/already",
	);
	const unstored = { content: [{ type: "text" as const, text: VIEW }], details: { overflow: { totalLines: 1 } } };
	assert.equal(describeFullOutput(unstored, { textPath, budgetChars: 1 }), unstored);
});
