// `npm run frames`: does the view keep an output's decisive lines when the output is one step of a
// CI job? Every recall output is put, unchanged, inside the frame each hosted CI service prints
// around a job's steps (test/fixtures/ci/frames.ts: the runner's preamble, the checkout and set-up
// steps, an install step with its deprecation warnings, the failing step, the post-job cleanup), and
// its decisive lines are looked for at their new line numbers. A view that keeps a line bare and
// loses it framed depends on where the output sits, not on what it says. Held-out sets print
// counts only, as in `npm run recall`. `--frame <name>` measures one frame beside the bare outputs,
// `--set <name>` one set, `--missed` lists the tuning sets' misses, `--threshold <chars>` measures at
// a budget other than the default (the budget follows the context window: a full window leaves a
// view a few thousand characters), to see which lines a tight budget gives up first. Not a test.

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { measureView, optionOf, RECALL_SETS, thresholdOption } from "./framed-sets.js";
import { cutLikePi } from "./pi-cut.js";
import { formatTable } from "./table.js";
import { DEFAULT_CONFIG } from "../src/config/config.js";
import { CI_FRAMES, frameOutput } from "../test/fixtures/ci/frames.js";

const dir = mkdtempSync(join(tmpdir(), "pi-overflow-frames-"));
const only = optionOf("--set");
const threshold = thresholdOption();
const keptRows: string[][] = [];
const piRows: string[][] = [];
const charRows: string[][] = [];
const frames = ["bare", ...CI_FRAMES.map((frame) => frame.name)];
const onlyFrame = optionOf("--frame");
const measuredFrames = frames.filter((frame) => onlyFrame === undefined || frame === "bare" || frame === onlyFrame);
for (const set of RECALL_SETS.filter((set) => only === undefined || set.name === only)) {
	const fixtures = set.load();
	const kept: string[] = [set.title, String(fixtures.length)];
	const pi: string[] = [set.title, String(fixtures.length)];
	const chars: string[] = [set.title, String(fixtures.length)];
	for (const frameName of measuredFrames) {
		const frame = CI_FRAMES.find((candidate) => candidate.name === frameName);
		let decisive = 0;
		let shown = 0;
		let served = 0;
		let size = 0;
		let piKept = 0;
		let piServed = 0;
		let piSize = 0;
		const missed: string[] = [];
		for (const fixture of fixtures) {
			const framed =
				frame === undefined ? { text: fixture.text, decisive: fixture.decisive } : frameOutput(frame, fixture);
			const result = await measureView(dir, fixture.name, framed.text, framed.decisive, threshold);
			decisive += result.decisive;
			shown += result.kept;
			served += result.served ? 1 : 0;
			size += result.chars;
			missed.push(...result.missed);
			const cut = cutLikePi(framed.text);
			const cutKept = framed.decisive.filter((line) => line.lineNumber >= cut.firstKeptLine).length;
			piKept += cutKept;
			piServed += cutKept === framed.decisive.length ? 1 : 0;
			piSize += cut.chars;
		}
		pi.push(`${piKept}/${decisive} ${piServed}/${fixtures.length} ${Math.round(piSize / fixtures.length)}`);
		kept.push(`${shown}/${decisive} ${served}/${fixtures.length}`);
		chars.push(String(Math.round(size / fixtures.length)));
		if (!set.heldOut && process.argv.includes("--missed"))
			for (const line of missed) console.log(`MISSED [${frameName}] ${line}`);
	}
	keptRows.push(kept);
	piRows.push(pi);
	charRows.push(chars);
}
rmSync(dir, { recursive: true, force: true });

function printTable(title: string, rows: string[][]): void {
	console.log(`\n${title}`);
	for (const line of formatTable(["set", "outputs", ...measuredFrames], rows)) console.log(line);
}
console.log(`budget: ${threshold} chars${threshold === DEFAULT_CONFIG.thresholdChars ? " (the default)" : ""}`);
printTable("decisive lines kept, outputs fully served (held-out sets as counts only)", keptRows);
printTable("mean view chars", charRows);
printTable("Pi's own bash cut of the same text (last 2 000 lines or 50 KB): kept, fully served, mean chars", piRows);
