// Recall of the bounded view on real toolchain outputs: at the default settings, the view of every
// fixture in test/fixtures/real/, in the four tuning sets (the unseen corpus's tuning half,
// test/fixtures/unseen-tune2/, unseen-tune3/, unseen-tune4/) and in the CI logs' tuning half
// (test/fixtures/ci/) shows every decisive line in full at
// its true line number (but the few listed in TUNE3_KNOWN_MISSES and TUNE4_KNOWN_MISSES, which it
// must not show), and stays within thresholdChars. The held-out half and the late set are never tested here: they are
// measured as counts only. `npm run recall` prints the same measurement as a table next to
// what Pi's own bash cut (last 2000 lines / 50 KB) would have kept.

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { DEFAULT_CONFIG } from "../../src/config/config.js";
import { isShownInView, loadRealFixtures, parseViewLines } from "../fixtures/real/fixtures.js";
import { loadUnseenFixtures } from "../fixtures/unseen/fixtures.js";
import { loadTune2Fixtures } from "../fixtures/unseen-tune2/fixtures.js";
import { loadTune3Fixtures, TUNE3_KNOWN_MISSES } from "../fixtures/unseen-tune3/fixtures.js";
import { loadTune4Fixtures, TUNE4_KNOWN_MISSES } from "../fixtures/unseen-tune4/fixtures.js";
import { loadCiFixtures } from "../fixtures/ci/fixtures.js";
import { buildDefaultView } from "../fixtures/default-view.js";

const FIXTURES = [
	...loadRealFixtures(),
	...loadUnseenFixtures("tuning"),
	...loadTune2Fixtures(),
	...loadTune3Fixtures(),
	...loadTune4Fixtures(),
	...loadCiFixtures("tuning"),
];
/** Known misses of the sets that list them, by fixture name (fixture names are unique across sets). */
const KNOWN_MISSES: Readonly<Record<string, readonly number[]>> = { ...TUNE3_KNOWN_MISSES, ...TUNE4_KNOWN_MISSES };

describe("the view of real toolchain outputs at the default settings", () => {
	test("covers real/, the four tuning sets and the CI logs' tuning half", () =>
		assert.ok(FIXTURES.length >= 21 + 15 + 19 + 12 + 12 + 5, `${FIXTURES.length} outputs`));
	for (const fixture of FIXTURES) {
		test(`${fixture.name}: shows its ${fixture.decisive.length} decisive lines at their line numbers, within ${DEFAULT_CONFIG.thresholdChars} chars`, async () => {
			const view = await buildDefaultView(fixture.path);
			assert.ok(view.text.length <= DEFAULT_CONFIG.thresholdChars, `view has ${view.text.length} chars`);
			assert.equal(view.totalLines, fixture.lines.length, "line count");
			const shown = parseViewLines(view.text);
			const known = new Set(KNOWN_MISSES[fixture.name] ?? []);
			const missing = fixture.decisive
				.filter(
					(line) =>
						!isShownInView(shown, line.lineNumber, line.shown, DEFAULT_CONFIG.maxLineChars) !==
						known.has(line.lineNumber),
				)
				.map(
					(line) =>
						`${line.lineNumber}: ${line.shown} (${known.has(line.lineNumber) ? "listed as a known miss, but shown" : `view shows ${JSON.stringify(shown.get(line.lineNumber) ?? null)}`})`,
				);
			assert.deepEqual(missing, [], `${fixture.name}: decisive lines missing from the view`);
		});
	}
});
