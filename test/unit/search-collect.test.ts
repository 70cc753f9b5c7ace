// HitCollector, the search worker's collection of shown lines, fed by hand in the main thread:
// context across texts and giant lines, never a line twice, the stops (maxResults, budget) with the
// counting that goes on, the progress slots, and the Latin-1 path.

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { type CollectOptions, HitCollector } from "../../src/query/engine/collect.js";
import {
	PROGRESS_COLLECTION_STOP,
	PROGRESS_SLOTS,
	PROGRESS_TOTAL_HITS,
	type SearchLine,
} from "../../src/query/engine/protocol.js";

function createCollector(options: Partial<CollectOptions> = {}, pattern = "hit") {
	const progress = new Float64Array(PROGRESS_SLOTS);
	const batches: SearchLine[][] = [];
	const settings = {
		contextLines: 2,
		maxResults: 100,
		maxLineChars: 100,
		budgetChars: 1_000_000,
		latin1: false,
		...options,
	};
	const collector = new HitCollector(settings, new RegExp(pattern, "i"), progress, (lines) => batches.push(lines));
	const shown = () => batches.flat().map((line) => `${line.lineNumber}${line.hit ? ":" : "-"}${line.text}`);
	return { collector, progress, batches, shown };
}

/** Hands a text of whole lines (first line `base`) to the collector as the scanner does: each line holding `word` is a hit. */
function feedText(collector: HitCollector, text: string, base: number, word = "hit"): void {
	collector.beginText();
	let start = 0;
	let n = base;
	for (; start < text.length; n++) {
		let end = text.indexOf("\n", start);
		if (end === -1) end = text.length;
		const at = text.slice(start, end).indexOf(word);
		if (at !== -1) collector.addHit(text, base, start, end, end, n, at, word.length);
		start = end + 1;
	}
	collector.endText(text, n - 1);
}

describe("HitCollector", () => {
	test("shows context before and after a hit across the texts it came in, each line once", () => {
		const { collector, shown } = createCollector();
		feedText(collector, "a\nb\nc\n", 1);
		feedText(collector, "hit 4\nd\n", 4);
		feedText(collector, "e\nhit 7\n", 6);
		feedText(collector, "f\ng\nh\n", 8);
		assert.deepEqual(shown(), ["2-b", "3-c", "4:hit 4", "5-d", "6-e", "7:hit 7", "8-f", "9-g"]);
	});

	test("posts a batch per hit, as soon as its lines are final", () => {
		const { collector, batches } = createCollector({ contextLines: 1 });
		feedText(collector, "a\nhit 2\nb\nc\nhit 5\nd\n", 1);
		assert.deepEqual(
			batches.map((batch) => batch.map((line) => line.lineNumber)),
			[[1, 2], [3, 4, 5], [6]],
		);
	});

	test("stops collecting at maxResults and keeps counting; the last window ends before a hit it does not show", () => {
		const { collector, progress, shown } = createCollector({ contextLines: 3, maxResults: 1 });
		feedText(collector, "hit 1\na\nhit 3\nb\nhit 5\n", 1);
		assert.deepEqual(shown(), ["1:hit 1", "2-a"]);
		assert.deepEqual([collector.totalHits, collector.collectedHits, collector.collectionStop], [3, 1, "maxResults"]);
		assert.deepEqual([progress[PROGRESS_TOTAL_HITS], progress[PROGRESS_COLLECTION_STOP]], [3, 1]);
	});

	test("stops collecting once the shown characters pass budgetChars", () => {
		const { collector, progress, shown } = createCollector({ contextLines: 0, budgetChars: 20 });
		feedText(collector, "hit one\nhit two\nhit three\n", 1);
		assert.deepEqual(shown(), ["1:hit one", "2:hit two"]);
		assert.deepEqual(
			[collector.totalHits, collector.collectionStop, progress[PROGRESS_COLLECTION_STOP]],
			[3, "budget", 2],
		);
	});

	test("decodes the lines of a Latin-1 view and finds the match again in the decoded hit line", () => {
		const { collector, batches } = createCollector({ contextLines: 1, latin1: true });
		const view = Buffer.from("日本\né hit\n").toString("latin1");
		feedText(collector, view, 1);
		assert.deepEqual(
			batches.flat().map((line) => [line.text, line.matchStart, line.matchLength]),
			[
				["日本", -1, 0],
				["é hit", 2, 3],
			],
		);
	});

	test("a giant line is a hit or context between texts, and context for the next text's first hit", () => {
		const { collector, shown, batches } = createCollector({ contextLines: 1, maxLineChars: 4 });
		feedText(collector, "hit 1\n", 1);
		const context = collector.createDecodedContextLine(2, "giant");
		context.cutAfter = 1000;
		collector.addGiantLine(null, context);
		feedText(collector, "x\nhit 4\n", 3);
		collector.addGiantLine(
			collector.createHitLine(5, "a hit here", 2, 3, 500),
			collector.createDecodedContextLine(5, "a hi"),
		);
		assert.deepEqual(shown(), ["1:hit ", "2-gian", "3-x", "4:hit ", "5:hit "]);
		assert.deepEqual(collector.totalHits, 3);
		const giantHit = batches.flat().at(-1)!;
		assert.deepEqual(
			[giantHit.cutBefore, giantHit.matchStart, giantHit.cutAfter],
			[502, 0, 4],
			"the window's place in the whole giant line",
		);
	});
});
