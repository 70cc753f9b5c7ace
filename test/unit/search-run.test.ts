// runSearch, the whole search as the worker runs it, in the main thread: against the line-by-line
// oracle, over a byte source in memory; the source is closed however the search ends; the
// progress slots and the done message say where it stopped.

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { isByteSafePattern } from "../../src/regex/safety.js";
import {
	PROGRESS_COMPLETE,
	PROGRESS_RESUME_LINE,
	PROGRESS_SLOTS,
	PROGRESS_TOTAL_HITS,
	type SearchLine,
} from "../../src/query/engine/protocol.js";
import { runSearch } from "../../src/query/engine/run.js";
import { createRandom } from "../helpers/random.js";
import {
	createMemorySource,
	createSearchRequest,
	randomText,
	searchReference,
	splitLines,
} from "../helpers/search-oracle.js";

type Request = Parameters<typeof createSearchRequest>[0];

/** Runs one search in this thread: its done message, its lines in the order posted, its progress slots and source. */
function runInProcess(text: string | Buffer, request: Request) {
	const source = createMemorySource(typeof text === "string" ? Buffer.from(text) : text);
	const progress = new Float64Array(PROGRESS_SLOTS);
	const batches: SearchLine[][] = [];
	const done = runSearch(
		createSearchRequest(request),
		Date.now(),
		() => source,
		progress,
		(lines) => batches.push(lines),
	);
	return { done, lines: batches.flat(), batches, progress, source };
}

describe("runSearch in the main thread", () => {
	test("shows the same lines, windows and counts as the oracle, by either decoding path", () => {
		const random = createRandom(7_2025);
		const patterns = [
			"a",
			"bb+",
			"^a",
			"b$",
			"é",
			"😀",
			"a.b",
			"x|é",
			"(?<=a)b",
			"a(?!b)",
			"^$",
			"x*",
			"\\s$",
			"[^ab]{3}",
			"a\\r?b",
			"b\\nA",
		];
		let cases = 0;
		for (let round = 0; round < 12; round++) {
			const text = randomText(random, round % 4 === 3 ? 3000 : 40 + Math.floor(random() * 300));
			for (const pattern of patterns) {
				const options = {
					pattern,
					contextLines: Math.floor(random() * 4),
					maxResults: 1 + Math.floor(random() * 25),
					maxLineChars: 5 + Math.floor(random() * 60),
					chunkBytes: [37, 256, 4096, 1 << 20][round % 4]!,
				};
				const expected = searchReference(text, options);
				// The Latin-1 view is taken only for byte-safe patterns; the decoding path takes any.
				for (const latin1 of isByteSafePattern(pattern) ? [true, false] : [false]) {
					const label = `round ${round}, /${pattern}/, latin1 ${latin1}`;
					const { done, lines, source } = runInProcess(text, { ...options, latin1 });
					assert.equal(done.totalHits, expected.totalHits, label);
					assert.deepEqual(lines, expected.lines, label);
					assert.equal(done.stoppedAtLine, 0, label);
					assert.equal(done.linesSearched, splitLines(text).length, label);
					assert.equal(done.collectedHits, expected.lines.filter((line) => line.hit).length, label);
					assert.equal(source.closed, true, label);
					cases++;
				}
			}
		}
		assert.ok(cases > 200);
	});

	test("a complete search sets the progress slots last, after posting every batch", () => {
		const text = "one\ntwo error\nthree\nfour error\n";
		const { done, batches, progress } = runInProcess(text, { pattern: "error", contextLines: 0 });
		assert.deepEqual(
			batches.map((batch) => batch.map((line) => line.lineNumber)),
			[[2], [4]],
			"a batch per hit, posted as soon as it is final",
		);
		assert.deepEqual(
			{
				complete: progress[PROGRESS_COMPLETE],
				resume: progress[PROGRESS_RESUME_LINE],
				hits: progress[PROGRESS_TOTAL_HITS],
			},
			{ complete: 1, resume: 5, hits: 2 },
		);
		assert.deepEqual(done, {
			type: "done",
			id: 1,
			totalHits: 2,
			collectedHits: 2,
			collectionStop: null,
			stoppedAtLine: 0,
			linesSearched: 4,
		});
	});

	test("stops at the deadline between steps, counting only the lines searched before it", () => {
		const text = `${Array.from({ length: 5000 }, (_, index) => (index % 100 === 0 ? "needle" : "hay")).join("\n")}\n`;
		// The virtual clock: 1 ms a line, deadline after 1000 lines; 64-byte chunks, so it is checked often.
		const { done, progress, source } = runInProcess(text, {
			pattern: "needle",
			timeoutMs: 1000,
			virtualMsPerLine: 1,
			chunkBytes: 64,
		});
		assert.ok(done.stoppedAtLine > 1000 && done.stoppedAtLine < 5000, JSON.stringify(done));
		assert.equal(done.linesSearched, done.stoppedAtLine - 1);
		assert.equal(done.totalHits, Math.ceil((done.stoppedAtLine - 1) / 100));
		assert.equal(progress[PROGRESS_COMPLETE], 0, "not complete");
		assert.equal(source.closed, true);
	});

	test("a search over nothing is complete with no lines; a line without its final newline counts", () => {
		assert.deepEqual(runInProcess("", { pattern: "x" }).done.linesSearched, 0);
		const last = runInProcess("a\nb x", { pattern: "x", chunkBytes: 2 });
		assert.deepEqual(
			[last.done.linesSearched, last.lines.map((line) => [line.lineNumber, line.hit, line.text])],
			[
				2,
				[
					[1, false, "a"],
					[2, true, "b x"],
				],
			],
		);
	});

	test("a failing read closes the source and throws; a bad pattern throws before the source is opened", () => {
		const source = createMemorySource(Buffer.from("one\ntwo\n"));
		source.read = () => {
			throw new Error("EIO: the disk failed");
		};
		const request = createSearchRequest({ pattern: "two" });
		assert.throws(
			() =>
				runSearch(
					request,
					0,
					() => source,
					new Float64Array(PROGRESS_SLOTS),
					() => {},
				),
			/EIO/,
		);
		assert.equal(source.closed, true);
		let opened = false;
		assert.throws(
			() =>
				runSearch(
					createSearchRequest({ pattern: "(" }),
					0,
					() => ((opened = true), source),
					new Float64Array(PROGRESS_SLOTS),
					() => {},
				),
			SyntaxError,
		);
		assert.equal(opened, false);
	});
});
