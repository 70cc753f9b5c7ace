// scanGiantLine, the search worker's giant lines, in the main thread over a byte source in memory:
// matches across segment cuts, windows placed in the whole line, multi-byte characters cut by a
// segment, anchored matches at a cut, the deadline, and the bytes after the line carried on.

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { HitCollector } from "../../src/query/engine/collect.js";
import { ChunkFramer } from "../../src/query/engine/frame.js";
import { GIANT_OVERLAP_CHARS, scanGiantLine, takeOverlap } from "../../src/query/engine/giant.js";
import { PROGRESS_SLOTS, type SearchLine } from "../../src/query/engine/protocol.js";
import { compileSearchRegexes, SearchDeadline } from "../../src/query/engine/scan.js";
import { createRandom } from "../helpers/random.js";
import { createMemorySource } from "../helpers/search-oracle.js";

const CHUNK_BYTES = 64;
const GIANT_LINE_BYTES = 128;

/** Frames `text` until its first (giant) line is handed over, searches that line, and returns what was shown and what the framer reads next. */
function scanFirstGiantLine(
	text: string,
	pattern: string,
	options: { deadline?: SearchDeadline; maxLineChars?: number } = {},
) {
	const framer = new ChunkFramer(createMemorySource(Buffer.from(text)).read, CHUNK_BYTES, GIANT_LINE_BYTES);
	let kind = framer.next();
	while (kind === "partial") kind = framer.next();
	assert.equal(kind, "giant");
	const progress = new Float64Array(PROGRESS_SLOTS);
	const compiled = compileSearchRegexes(pattern);
	const shown: SearchLine[] = [];
	const collectOptions = {
		contextLines: 1,
		maxResults: 10,
		maxLineChars: options.maxLineChars ?? 20,
		budgetChars: 1_000_000,
		latin1: false,
	};
	const collector = new HitCollector(collectOptions, compiled.lineRegex, progress, (lines) => shown.push(...lines));
	const deadline = options.deadline ?? new SearchDeadline(Date.now(), 60_000);
	const finished = scanGiantLine(1, framer.held, framer, { pattern: compiled, collector, deadline, progress });
	// The line after the giant one, as the framer frames it next.
	const nextKind = framer.next();
	const after = nextKind === "lines" ? framer.decodeLines(false) : nextKind;
	return { finished, shown, collector, after };
}

/** Checks that a shown window is the part of `line` it says it is. */
function assertWindowOf(line: string, shown: SearchLine, label: string): void {
	assert.equal(
		shown.cutBefore + shown.text.length + shown.cutAfter,
		line.length,
		`${label}: the counts add up to the line`,
	);
	assert.equal(
		line.slice(shown.cutBefore, shown.cutBefore + shown.text.length),
		shown.text,
		`${label}: the window is where it says`,
	);
}

describe("scanGiantLine", () => {
	test("finds a match cut by a segment boundary and carries the bytes after the line", () => {
		const line = `${"a".repeat(GIANT_LINE_BYTES - 3)}NEEDLE${"b".repeat(300)}`;
		const { finished, shown, after } = scanFirstGiantLine(`${line}\r\nnext\n`, "needle");
		assert.equal(finished, true);
		assert.equal(shown.length, 1);
		const hit = shown[0]!;
		assertWindowOf(line, hit, "hit");
		assert.equal(hit.cutBefore + hit.matchStart, GIANT_LINE_BYTES - 3);
		assert.equal(hit.text.slice(hit.matchStart, hit.matchStart + hit.matchLength), "NEEDLE");
		assert.equal(after, "next\n");
	});

	test("an anchored match that ends at a cut is no hit while the line goes on", () => {
		// The first segment (GIANT_LINE_BYTES) ends right after the first "needle"; only the last one ends the line.
		const line = `${"x".repeat(GIANT_LINE_BYTES - 6)}needle${"y".repeat(200)}needle`;
		const { shown } = scanFirstGiantLine(`${line}\n`, "needle$");
		assert.equal(shown.length, 1);
		assert.equal(shown[0]!.cutBefore + shown[0]!.matchStart, line.length - 6);
	});

	test("shows any giant line's window in place, multi-byte characters and surrogate pairs cut by segments included", () => {
		const random = createRandom(4242);
		const alphabet = ["a", "b", "é", "日", "😀", " ", "x"];
		for (let round = 0; round < 150; round++) {
			const length = GIANT_LINE_BYTES + Math.floor(random() * 3 * GIANT_OVERLAP_CHARS);
			let line = "";
			while (line.length < length) line += alphabet[Math.floor(random() * alphabet.length)];
			const pattern = ["ab", "é", "😀", "x|日", "zz"][round % 5]!;
			const maxLineChars = 5 + Math.floor(random() * 40);
			const { shown, collector, after } = scanFirstGiantLine(`${line}\nafter\n`, pattern, { maxLineChars });
			const label = `round ${round}, /${pattern}/`;
			const first = new RegExp(pattern, "i").exec(line);
			assert.equal(collector.totalHits, first === null ? 0 : 1, label);
			assert.equal(after, "after\n", label);
			if (first === null) {
				assert.deepEqual(shown, [], label);
				continue;
			}
			const hit = shown[0]!;
			assertWindowOf(line, hit, label);
			assert.ok(hit.text.length <= maxLineChars, label);
			assert.match(
				hit.text.slice(hit.matchStart, hit.matchStart + hit.matchLength),
				new RegExp(`^(?:${pattern})$`, "i"),
				label,
			);
			assert.equal(hit.cutBefore + hit.matchStart, first.index, `${label}: the first match in the line`);
		}
	});

	test("a giant line that is not a hit is context: its start, with its length counted", () => {
		const line = "é".repeat(500);
		const framer = new ChunkFramer(
			createMemorySource(Buffer.from(`hit\n${line}\n`)).read,
			CHUNK_BYTES,
			GIANT_LINE_BYTES,
		);
		assert.equal(framer.next(), "lines");
		const progress = new Float64Array(PROGRESS_SLOTS);
		const compiled = compileSearchRegexes("hit");
		const shown: SearchLine[] = [];
		const collectOptions = { contextLines: 1, maxResults: 10, maxLineChars: 7, budgetChars: 1_000_000, latin1: false };
		const collector = new HitCollector(collectOptions, compiled.lineRegex, progress, (lines) => shown.push(...lines));
		collector.beginText();
		collector.addHit("hit\n", 1, 0, 3, 3, 1, 0, 3);
		collector.endText("hit\n", 1);
		assert.equal(framer.dropLines(), true);
		let kind = framer.next();
		while (kind === "partial") kind = framer.next();
		assert.equal(
			scanGiantLine(2, framer.held, framer, {
				pattern: compiled,
				collector,
				deadline: new SearchDeadline(Date.now(), 60_000),
				progress,
			}),
			true,
		);
		assert.deepEqual(
			shown.map((shownLine) => [shownLine.lineNumber, shownLine.hit, shownLine.text, shownLine.cutAfter]),
			[
				[1, true, "hit", 0],
				[2, false, "é".repeat(7), 493],
			],
		);
	});

	test("stops when the deadline has passed before the line's end", () => {
		const { finished, shown } = scanFirstGiantLine(`${"a".repeat(1000)}\n`, "needle", {
			deadline: new SearchDeadline(Date.now() - 10, 5),
		});
		assert.equal(finished, false);
		assert.deepEqual(shown, []);
	});

	test("takeOverlap keeps the last GIANT_OVERLAP_CHARS characters and never starts inside a surrogate pair", () => {
		assert.equal(takeOverlap("short"), "short");
		const text = `${"x".repeat(10)}${"😀".repeat(GIANT_OVERLAP_CHARS)}`;
		const overlap = takeOverlap(text);
		assert.equal(overlap.length, GIANT_OVERLAP_CHARS);
		assert.equal(takeOverlap(`${text}y`).length, GIANT_OVERLAP_CHARS - 1, "one less rather than half an emoji");
	});
});
