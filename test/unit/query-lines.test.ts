// overflow_query's lines answer (src/query/lines.ts): ranges read through the line index, numbered
// as the view numbers them, cut with how to continue.

import assert from "node:assert/strict";
import { after, describe, test } from "node:test";
import { disposeSearchWorkers } from "../../src/query/engine/search.js";
import { SEQ_TEXT, storeEntry, createDeps, query, queryError, numberedLines } from "../helpers/query-fixtures.js";

after(() => disposeSearchWorkers());

describe("lines", () => {
	test("reads a line range from the middle of seq 1 300000", async (t) => {
		const deps = await createDeps(t);
		const meta = await storeEntry(deps.store, SEQ_TEXT);
		const answer = await query(deps, { id: meta.id, lines: { start: 150_000, end: 150_010 } });
		const lines = numberedLines(answer.text);
		assert.deepEqual(
			lines.map(([number, , text]) => [number, text]),
			Array.from({ length: 11 }, (_, index) => [150_000 + index, String(150_000 + index)]),
		);
		assert.match(answer.text, /^\[pi-overflow id=[0-9a-f]{12}\] lines 150000–150010 of 300000/);
		assert.deepEqual(answer.summary.lines, [150_000, 150_010]);
		assert.equal(answer.summary.truncated, false);
	});

	test("clamps an end past the last line and says the last line was reached", async (t) => {
		const deps = await createDeps(t);
		const meta = await storeEntry(deps.store, SEQ_TEXT);
		const answer = await query(deps, { id: meta.id, lines: { start: 299_995, end: 400_000 } });
		assert.deepEqual(
			numberedLines(answer.text).map(([number]) => number),
			[299_995, 299_996, 299_997, 299_998, 299_999, 300_000],
		);
		assert.match(answer.text, /end 400000 clamped to the last line/);
		assert.match(answer.text, /line 300000 is the last line/);
	});

	test("rejects a start past the end, stating the line count", async (t) => {
		const deps = await createDeps(t);
		const meta = await storeEntry(deps.store, SEQ_TEXT);
		const message = await queryError(deps, { id: meta.id, lines: { start: 300_001, end: 300_010 } });
		assert.match(message, /has 300000 lines; ask for lines within 1–300000/);
	});

	test("rejects an end before the start, stating the line count", async (t) => {
		const deps = await createDeps(t);
		const meta = await storeEntry(deps.store, SEQ_TEXT);
		const message = await queryError(deps, { id: meta.id, lines: { start: 50, end: 10 } });
		assert.match(message, /lines\.end=10 is before lines\.start=50/);
		assert.match(message, /300000 lines/);
	});

	test("cuts a range too large for thresholdChars and continues exactly where it stopped", async (t) => {
		const deps = await createDeps(t, { thresholdChars: 1000 });
		const meta = await storeEntry(deps.store, SEQ_TEXT);
		const seen: number[] = [];
		let start = 1000;
		for (let round = 0; round < 200; round++) {
			const answer = await query(deps, { id: meta.id, lines: { start, end: 5000 } });
			const numbers = numberedLines(answer.text).map(([number]) => number);
			assert.equal(numbers[0], start, "continues at the line the hint named");
			seen.push(...numbers);
			const hint = /continue with lines: \{start: (\d+), end: 5000\}/.exec(answer.text);
			if (!hint) {
				assert.equal(answer.summary.truncated, false);
				break;
			}
			assert.equal(answer.summary.truncated, true);
			assert.equal(Number(hint[1]), numbers[numbers.length - 1]! + 1, "the hint names the next line");
			start = Number(hint[1]);
		}
		assert.deepEqual(
			seen,
			Array.from({ length: 4001 }, (_, index) => 1000 + index),
			"no gap, no overlap",
		);
	});

	test("without an end returns as many lines as fit and where to continue", async (t) => {
		const deps = await createDeps(t, { thresholdChars: 2000 });
		const meta = await storeEntry(deps.store, SEQ_TEXT);
		const answer = await query(deps, { id: meta.id, lines: { start: 10 } });
		const numbers = numberedLines(answer.text).map(([number]) => number);
		assert.ok(numbers.length > 20);
		assert.match(answer.text, new RegExp(`continue with lines: \\{start: ${numbers[numbers.length - 1]! + 1}\\}`));
	});

	test("clips a line longer than maxLineChars with a note of the chars cut", async (t) => {
		const deps = await createDeps(t, { maxLineChars: 100 });
		const meta = await storeEntry(deps.store, `short\n${"x".repeat(5000)}\nafter\n`);
		const answer = await query(deps, { id: meta.id, lines: { start: 1, end: 3 } });
		const [, second] = numberedLines(answer.text);
		assert.equal(second![2], `${"x".repeat(100)} … [+4900 chars]`);
	});

	test("numbers and shows lines exactly as the bounded view does", async (t) => {
		const deps = await createDeps(t, { headLines: 5, tailLines: 5 });
		const lines = Array.from({ length: 400 }, (_, index) => {
			if (index === 200) return "\x1b[31merror: red text\x1b[0m";
			if (index === 201) return "progress 10%\rprogress 100%";
			if (index === 202) return `crlf line\r`;
			return `line ${index + 1} ${"é".repeat(index % 7)}`;
		});
		const meta = await storeEntry(deps.store, `${lines.join("\n")}\n`);
		const info = await query(deps, { id: meta.id });
		const viewLines = info.text.split("\n").filter((line) => /^ *\d+: /.test(line));
		assert.ok(viewLines.length >= 10);
		for (const viewLine of viewLines) {
			const number = Number(/^ *(\d+):/.exec(viewLine)![1]);
			const answer = await query(deps, { id: meta.id, lines: { start: number, end: number } });
			const shown = answer.text.split("\n")[1];
			assert.equal(shown, viewLine.replace(/  \[[^\]]*\]$/, ""), `line ${number}`);
		}
	});

	test("counts lines like the store: CRLF endings, no final newline, a lone last line", async (t) => {
		const deps = await createDeps(t);
		const meta = await storeEntry(deps.store, "a\r\nb\r\n\r\nlast");
		assert.equal(meta.totalLines, 4);
		const answer = await query(deps, { id: meta.id, lines: { start: 1 } });
		assert.deepEqual(
			numberedLines(answer.text).map(([number, , text]) => [number, text]),
			[
				[1, "a"],
				[2, "b"],
				[3, ""],
				[4, "last"],
			],
		);
	});

	// How fast (first call, then through the index) is measured by `npm run bench`.
	test("reads lines at the end of a 32 MiB entry, again and again", async (t) => {
		const deps = await createDeps(t);
		const parts: string[] = [];
		let size = 0;
		for (let index = 1; size < 32 * 1024 * 1024; index++) {
			const line = `${index} info: request served in ${index % 97} ms path=/srv/app/module-${index % 1000}.js`;
			parts.push(line);
			size += line.length + 1;
		}
		const meta = await storeEntry(deps.store, `${parts.join("\n")}\n`);
		const total = meta.totalLines;
		for (let round = 0; round < 6; round++) {
			const answer = await query(deps, { id: meta.id, lines: { start: total - 300 + round, end: total } });
			assert.equal(numberedLines(answer.text)[0]![0], total - 300 + round);
			assert.equal(numberedLines(answer.text).at(-1)![0], total);
		}
		t.diagnostic(`lines at the end of a ${size}-byte, ${total}-line entry`);
	});
});
