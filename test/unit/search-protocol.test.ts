// The progress slots as the worker writes and the main thread reads them; fitSearchLine, the one cut of a shown line to a width (the worker's to maxLineChars, the query
// answer's to its room): the window is the part of the line it says it is, holds the match, never
// splits a surrogate pair, and cutting a cut line again still adds up to the original line.

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import fc from "fast-check";
import {
	COLLECTION_STOP_BUDGET,
	fitSearchLine,
	PROGRESS_COLLECTION_STOP,
	PROGRESS_SLOTS,
	PROGRESS_TOTAL_HITS,
	readProgress,
	resetProgress,
	type SearchLine,
} from "../../src/query/engine/protocol.js";

/** The line as the worker sees it before any cut: a hit when `match` is found in it. */
function createLine(text: string, match: { index: number; length: number } | null): SearchLine {
	return {
		lineNumber: 1,
		text,
		hit: match !== null,
		cutBefore: 0,
		cutAfter: 0,
		matchStart: match?.index ?? -1,
		matchLength: match?.length ?? 0,
	};
}

function assertWindowOf(original: string, line: SearchLine, maxChars: number): void {
	assert.ok(line.text.length <= maxChars);
	assert.equal(line.cutBefore + line.text.length + line.cutAfter, original.length);
	assert.equal(original.slice(line.cutBefore, line.cutBefore + line.text.length), line.text);
	const first = line.text.charCodeAt(0);
	const last = line.text.charCodeAt(line.text.length - 1);
	assert.ok(line.text === "" || !(first >= 0xdc00 && first <= 0xdfff), "starts with half a pair");
	assert.ok(line.text === "" || !(last >= 0xd800 && last <= 0xdbff), "ends with half a pair");
}

describe("fitSearchLine", () => {
	test("returns a line that fits as it is", () => {
		const line = createLine("short", { index: 0, length: 5 });
		assert.equal(fitSearchLine(line, 5), line);
	});

	test("centres a hit's window on its match, and starts a long match's window at the match", () => {
		const text = `${"a".repeat(50)}MATCH${"b".repeat(50)}`;
		assert.deepEqual(fitSearchLine(createLine(text, { index: 50, length: 5 }), 15), {
			lineNumber: 1,
			text: "aaaaaMATCHbbbbb",
			hit: true,
			cutBefore: 45,
			cutAfter: 45,
			matchStart: 5,
			matchLength: 5,
		});
		const long = fitSearchLine(createLine(text, { index: 50, length: 5 }), 3);
		assert.deepEqual([long.text, long.matchStart, long.matchLength], ["MAT", 0, 3]);
		assert.deepEqual(fitSearchLine(createLine("context line", null), 7), {
			...createLine("context", null),
			cutAfter: 5,
		});
	});

	test("any line, cut once and again narrower, is the part of the line it says, holding the match, with no half emoji", () => {
		const chars = fc.constantFrom("a", "b", "é", "😀", " ", "日");
		fc.assert(
			fc.property(
				fc.array(chars, { maxLength: 200 }),
				fc.nat(),
				fc.nat(10),
				fc.boolean(),
				fc.integer({ min: 1, max: 80 }),
				fc.integer({ min: 1, max: 80 }),
				(parts, at, length, hit, first, second) => {
					const text = parts.join("");
					const index = text.length === 0 ? 0 : at % text.length;
					const match = hit ? { index, length: Math.min(length, text.length - index) } : null;
					const once = fitSearchLine(createLine(text, match), first);
					assertWindowOf(text, once, first);
					const twice = fitSearchLine(once, second);
					assertWindowOf(text, twice, Math.min(first, second));
					if (match !== null && match.length > 0 && twice.text.length > 2) {
						// The window keeps (the start of) the match.
						const kept = twice.cutBefore + twice.matchStart;
						assert.ok(kept >= match.index - 1 && kept <= match.index + 1, `match at ${match.index}, kept at ${kept}`);
					}
				},
			),
			{ numRuns: 500 },
		);
	});
});

describe("the progress slots", () => {
	test("read as a request's only once the worker has reset them for it", () => {
		const progress = new Float64Array(PROGRESS_SLOTS);
		resetProgress(progress, 7);
		progress[PROGRESS_TOTAL_HITS] = 3;
		progress[PROGRESS_COLLECTION_STOP] = COLLECTION_STOP_BUDGET;
		assert.equal(readProgress(progress, 8), null, "another request's slots");
		assert.deepEqual(readProgress(progress, 7), {
			resumeLine: 1,
			totalHits: 3,
			stepLastLine: 1,
			complete: false,
			collectionStop: "budget",
		});
		resetProgress(progress, 8);
		assert.deepEqual(readProgress(progress, 8), {
			resumeLine: 1,
			totalHits: 0,
			stepLastLine: 1,
			complete: false,
			collectionStop: null,
		});
	});
});
