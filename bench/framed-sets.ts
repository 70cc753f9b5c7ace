// What `npm run frames` and `npm run transforms` share: the recall sets whose outputs they put in a
// new setting, and the measure of one such output's view (its decisive lines looked for at their
// new numbers). Held-out sets are marked: those scripts print their counts only.

import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { DEFAULT_CONFIG } from "../src/config/config.js";
import { isShownInView, loadRealFixtures, parseViewLines, type RealFixture } from "../test/fixtures/real/fixtures.js";
import { loadUnseenFixtures } from "../test/fixtures/unseen/fixtures.js";
import { loadLateFixtures } from "../test/fixtures/unseen-late/fixtures.js";
import { loadTune2Fixtures } from "../test/fixtures/unseen-tune2/fixtures.js";
import { loadTune3Fixtures } from "../test/fixtures/unseen-tune3/fixtures.js";
import { loadTune4Fixtures } from "../test/fixtures/unseen-tune4/fixtures.js";
import { buildDefaultView } from "../test/fixtures/default-view.js";

export interface RecallSet {
	name: string;
	title: string;
	load: () => RealFixture[];
	heldOut: boolean;
}

export const RECALL_SETS: readonly RecallSet[] = [
	{ name: "real", title: "real/", load: () => loadRealFixtures(), heldOut: false },
	{ name: "tuning", title: "unseen tuning", load: () => loadUnseenFixtures("tuning"), heldOut: false },
	{ name: "tune2", title: "tuning set 2", load: loadTune2Fixtures, heldOut: false },
	{ name: "tune3", title: "tuning set 3", load: loadTune3Fixtures, heldOut: false },
	{ name: "tune4", title: "tuning set 4", load: loadTune4Fixtures, heldOut: false },
	{ name: "heldout", title: "unseen held-out", load: () => loadUnseenFixtures("heldout"), heldOut: true },
	{ name: "late", title: "unseen late", load: loadLateFixtures, heldOut: true },
];

export interface Measured {
	decisive: number;
	kept: number;
	served: boolean;
	chars: number;
	/** `name:line: text` of each decisive line the view does not show. */
	missed: string[];
}

/** The default view of `text` (written to a file in `dir`) at `threshold`, and which of `decisive` it shows. */
export async function measureView(
	dir: string,
	name: string,
	text: string,
	decisive: RealFixture["decisive"],
	threshold: number,
): Promise<Measured> {
	const path = join(dir, "output.log");
	writeFileSync(path, text);
	const view = await buildDefaultView(path, threshold);
	const shown = parseViewLines(view.text);
	const missed = decisive
		.filter((line) => !isShownInView(shown, line.lineNumber, line.shown, DEFAULT_CONFIG.maxLineChars))
		.map((line) => `${name}:${line.lineNumber}: ${line.shown.slice(0, 140)}`);
	return {
		decisive: decisive.length,
		kept: decisive.length - missed.length,
		served: missed.length === 0,
		chars: view.text.length,
		missed,
	};
}

/** `--name value` from the command line. */
export function optionOf(name: string): string | undefined {
	const at = process.argv.indexOf(name);
	return at === -1 ? undefined : process.argv[at + 1];
}

/** `--threshold <chars>`, or the default budget. */
export function thresholdOption(): number {
	const given = optionOf("--threshold");
	const threshold = given === undefined ? DEFAULT_CONFIG.thresholdChars : Number(given);
	if (!Number.isInteger(threshold) || threshold < 1000)
		throw new Error("--threshold takes a number of characters, 1000 or more");
	return threshold;
}
