// `npm run invariance`: which lines does an output's view show bare that it does not show when the
// output is written otherwise, or when the view has more room? Counts of decisive lines are too
// coarse to find a rule that reads a prefix as the line's own text: the tuning sets keep every
// decisive line under almost every prefix. Every line a view shows is compared instead: each tuning
// output's bare view against its view with `--prefix <text>` before every line, or inside the CI
// frame `--frame <name>` (npm run frames), each line looked for at its new number; or against its
// own view at a larger budget, `--larger <chars>` (a larger budget that shows less of what the
// smaller one showed gives room in the wrong order). A line shown bare and not otherwise depends on
// the writing: a budget a prefix makes tighter, or a rule that counts the prefix (a word, a level,
// a frame that takes in the line's own words). Tuning sets only, as every shown line is printed
// with `--lines`; `--only <name>` measures one output, `--threshold <chars>` another budget. Not a
// test.

import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { optionOf, RECALL_SETS, thresholdOption } from "./framed-sets.js";
import { CI_FRAMES, frameLines, prefixed } from "../test/fixtures/ci/frames.js";
import { parseViewLines, type RealFixture } from "../test/fixtures/real/fixtures.js";
import { buildDefaultView } from "../test/fixtures/default-view.js";

const prefix = optionOf("--prefix");
const frameName = optionOf("--frame");
const frame = CI_FRAMES.find((candidate) => candidate.name === frameName);
const largerOption = optionOf("--larger");
const larger = largerOption === undefined ? undefined : Number(largerOption);
const threshold = thresholdOption();
if ([prefix, frame, larger].filter((given) => given !== undefined).length !== 1) {
	const names = CI_FRAMES.map((candidate) => candidate.name).join(", ");
	console.error(`npm run invariance: give --prefix <text>, --frame <name> (one of: ${names}) or --larger <chars>`);
	process.exit(2);
}
if (larger !== undefined && !(Number.isInteger(larger) && larger > threshold)) {
	console.error(`npm run invariance: --larger takes a number of characters above the budget (${threshold})`);
	process.exit(2);
}
const only = optionOf("--only");
const listLines = process.argv.includes("--lines");

/** The output written otherwise, and the number each of its lines has there (both 1-based). */
function writtenOtherwise(fixture: RealFixture): { text: string; numberOf: (lineNumber: number) => number } {
	if (larger !== undefined) return { text: fixture.text, numberOf: (lineNumber) => lineNumber };
	if (prefix !== undefined) {
		const lines = prefixed(() => prefix)(fixture.lines).lines;
		return { text: `${lines.join("\n")}\n`, numberOf: (lineNumber) => lineNumber };
	}
	return frameLines(frame!, fixture.lines);
}

const dir = mkdtempSync(join(tmpdir(), "pi-overflow-invariance-"));
const viewOf = async (text: string, budget = threshold) => {
	const path = join(dir, "output.log");
	writeFileSync(path, text);
	return (await buildDefaultView(path, budget)).text;
};
let total = 0;
let outputs = 0;
try {
	for (const set of RECALL_SETS.filter((candidate) => !candidate.heldOut)) {
		for (const fixture of set.load()) {
			if (only !== undefined && fixture.name !== only) continue;
			outputs++;
			const bare = parseViewLines(await viewOf(fixture.text));
			const other = writtenOtherwise(fixture);
			const view = await viewOf(other.text, larger ?? threshold);
			const shown = parseViewLines(view);
			const lost = [...bare.keys()].filter(
				(lineNumber) => lineNumber <= fixture.lines.length && !shown.has(other.numberOf(lineNumber)),
			);
			total += lost.length;
			if (lost.length === 0) continue;
			console.log(`${set.name}/${fixture.name}: ${lost.length} of ${bare.size} lines (view ${view.length} chars)`);
			if (listLines)
				for (const lineNumber of lost) console.log(`  ${lineNumber}: ${fixture.lines[lineNumber - 1]!.slice(0, 120)}`);
		}
	}
} finally {
	rmSync(dir, { recursive: true, force: true });
}
const otherwise =
	larger !== undefined
		? `at ${larger} characters`
		: prefix !== undefined
			? `after ${JSON.stringify(prefix)}`
			: `inside ${frameName}`;
console.log(
	`${total} lines shown bare and not ${otherwise}, over ${outputs} tuning outputs, at ${threshold} characters`,
);
