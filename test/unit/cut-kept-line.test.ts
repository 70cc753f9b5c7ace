// cutKeptWholeLine and the rule it feeds (decideBound): an earlier layer's cut that kept no whole
// line of the output — nothing, or a fragment of one line — gets the view of the original, not the
// marker; a cut that kept whole lines from either end keeps its text.

import assert from "node:assert/strict";
import { test } from "node:test";
import { decideBound } from "../../src/bound/bound.js";
import { cutKeptWholeLine } from "../../src/bound/scan-report.js";
import { createDefaultConfig } from "../../src/config/config.js";
import { bufferSource } from "../../src/io/source.js";
import type { ScanResult } from "../../src/scan/scan.js";
import { scanSource } from "../../src/view/compose.js";

async function scanOf(text: string): Promise<ScanResult> {
	return (await scanSource(bufferSource(Buffer.from(text, "utf8")), createDefaultConfig())).scan;
}

test("decideBound: a cut that kept no whole line of a longer original is bounded even when it fits with the marker", () => {
	const fits = { currentChars: 50, budgetChars: 1000, longer: true, markerChars: 100 };
	assert.equal(decideBound({ ...fits, keptWholeLine: true }), "mark");
	assert.equal(decideBound({ ...fits, keptWholeLine: false }), "bound");
	assert.equal(decideBound({ ...fits, longer: false, keptWholeLine: false }), "leave");
});

test("cutKeptWholeLine: Pi's tail or a head of whole lines kept them; nothing or a fragment of one line did not", async () => {
	const seq = Array.from({ length: 5000 }, (_, index) => String(index + 1)).join("\n") + "\n";
	const seqScan = await scanOf(seq);
	const tail = seq.split("\n").slice(3000, 5000).join("\n");
	assert.equal(cutKeptWholeLine(seqScan, `${tail}\n\n[Showing lines 3001-5000 of 5001. Full output: x]`), true);
	assert.equal(cutKeptWholeLine(seqScan, seq.slice(0, 300)), true, "a head cut mid-line keeps whole lines");
	assert.equal(cutKeptWholeLine(seqScan, "(no output)"), false);

	const json = `{"results":[${Array.from({ length: 20_000 }, (_, index) => `{"id":${index},"ok":true}`).join(",")}]}`;
	const jsonScan = await scanOf(json);
	for (const ending of ["", "\n"]) {
		const scan = ending === "" ? jsonScan : await scanOf(json + ending);
		assert.equal(cutKeptWholeLine(scan, ""), false, "nothing kept");
		assert.equal(cutKeptWholeLine(scan, "(no output)\n\n[Showing lines 2-2 of 2 (50.0KB limit).]"), false);
		assert.equal(cutKeptWholeLine(scan, `${json.slice(-50_000)}\n\n[Showing last 50.0KB of line 1]`), false);
		assert.equal(cutKeptWholeLine(scan, `${json.slice(0, 20_000)}`), false, "a head fragment");
		assert.equal(cutKeptWholeLine(scan, `${json}\n[a layer's note]`), true, "the whole line");
	}

	// Colours a layer stripped, and a CR line ending, still count as the same line.
	const coloured = await scanOf("\x1b[31merror: one\x1b[0m\r\nmiddle\nlast line\n");
	assert.equal(cutKeptWholeLine(coloured, "error: one\n[cut]"), true);
	// Only blank lines at both ends: nothing to judge by, the text is kept.
	assert.equal(cutKeptWholeLine(await scanOf("\n\n\n"), "(no output)"), true);
});
