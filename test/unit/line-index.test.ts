import assert from "node:assert/strict";
import { open, utimes, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, test } from "node:test";
import { clearLineIndexCache, describeLineIndex, type IndexedText, readLinesFrom } from "../../src/query/line-index.js";
import { renderLine, type ScannedLine } from "../../src/lines/render.js";
import { createTempDir } from "../helpers/tmp.js";

/** Lines as the store counts them: split on \n, \r before it dropped, no line after a final \n. */
function splitLines(text: string): string[] {
	if (text === "") return [];
	const lines = text.split("\n");
	if (text.endsWith("\n")) lines.pop();
	return lines.map((line) => (line.endsWith("\r") ? line.slice(0, -1) : line));
}

/** What the scan shows of a line (the one rendering of a stored line): the reader must give the same. */
function expectedLine(line: string, lineNumber: number, keepChars: number): ScannedLine {
	return renderLine(lineNumber, line, keepChars);
}

/** The file as a reader gets a stored text (store.openText): size and mtime from fstat, bytes by pread. */
async function openIndexedText(path: string): Promise<IndexedText> {
	const handle = await open(path, "r");
	const { size, mtimeMs } = await handle.stat();
	return {
		path,
		size,
		mtimeMs,
		read: async (target, position) => (await handle.read(target, 0, target.length, position)).bytesRead,
		close: () => handle.close(),
	};
}

async function readAll(
	path: string,
	start: number,
	options: Parameters<typeof readLinesFrom>[2],
	limit = Infinity,
): Promise<ScannedLine[]> {
	const lines: ScannedLine[] = [];
	const text = await openIndexedText(path);
	try {
		for await (const line of readLinesFrom(text, start, options)) {
			lines.push(line);
			if (lines.length >= limit) break;
		}
	} finally {
		await text.close();
	}
	return lines;
}

describe("readLinesFrom", () => {
	test("yields the same lines as splitting the text, from any start, with any chunk size and stride", async (t) => {
		const dir = await createTempDir(t);
		const pieces = ["a", "bc", "é", "😀", "\r", " ", "xyz"];
		let seed = 7;
		const random = (): number => {
			seed = (seed * 1103515245 + 12345) % 2147483648;
			return seed / 2147483648;
		};
		for (let round = 0; round < 8; round++) {
			const lines: string[] = [];
			for (let index = 0; index < 300; index++) {
				const length = random() < 0.05 ? 200 + Math.floor(random() * 400) : Math.floor(random() * 12);
				let line = "";
				for (let k = 0; k < length; k++) line += pieces[Math.floor(random() * pieces.length)];
				lines.push(line);
			}
			const text = lines.join(round % 2 === 0 ? "\n" : "\r\n") + (round % 3 === 0 ? "" : "\n");
			const path = join(dir, `lines-${round}.txt`);
			await writeFile(path, text);
			clearLineIndexCache();
			const expected = splitLines(text);
			const options = {
				keepChars: 5 + round * 7,
				stride: [1, 3, 16, 64][round % 4],
				chunkBytes: [7, 64, 333, 4096][round % 4],
			};
			for (const start of [1, 2, 17, 150, 299, expected.length, expected.length + 1]) {
				const actual = await readAll(path, start, options);
				const wanted = expected
					.slice(start - 1)
					.map((line, index) => expectedLine(line, start + index, options.keepChars));
				assert.deepEqual(actual, wanted, `round ${round}, start ${start}`);
			}
		}
	});

	test("seeks through the index instead of rescanning, and extends it only as far as needed", async (t) => {
		const dir = await createTempDir(t);
		const path = join(dir, "seq.txt");
		await writeFile(path, `${Array.from({ length: 100_000 }, (_, index) => String(index + 1)).join("\n")}\n`);
		clearLineIndexCache();
		await readAll(path, 10, { keepChars: 100, stride: 1000, chunkBytes: 4096 }, 1);
		assert.deepEqual(
			describeLineIndex(path),
			{ offsets: 1, scannedBytes: 0, complete: false },
			"no index needed near the start",
		);
		const [line] = await readAll(path, 50_500, { keepChars: 100, stride: 1000, chunkBytes: 4096 }, 1);
		assert.deepEqual(line, { lineNumber: 50_500, text: "50500", totalChars: 5, partial: false });
		const partial = describeLineIndex(path)!;
		assert.equal(partial.complete, false);
		assert.ok(partial.offsets === 51 || partial.offsets === 52, String(partial.offsets));
		const [last] = await readAll(path, 100_000, { keepChars: 100, stride: 1000, chunkBytes: 4096 });
		assert.equal(last!.text, "100000");
		assert.equal(describeLineIndex(path)!.offsets, 100, "offsets of lines 1, 1001, …, 99001");
	});

	test("rebuilds the index when the file changes", async (t) => {
		const dir = await createTempDir(t);
		const path = join(dir, "changing.txt");
		await writeFile(path, "a\nb\nc\nd\n");
		assert.equal((await readAll(path, 4, { keepChars: 10, stride: 2 }))[0]!.text, "d");
		await writeFile(path, "1\n2\n3\n4\n5\n");
		await utimes(path, new Date(), new Date(Date.now() + 5000));
		assert.equal((await readAll(path, 4, { keepChars: 10, stride: 2 }))[0]!.text, "4");
	});

	test("keeps the start of a very long line and counts the rest", async (t) => {
		const dir = await createTempDir(t);
		const path = join(dir, "long.txt");
		await writeFile(path, `short\n${"é".repeat(3_000_000)}\r\nend`);
		const lines = await readAll(path, 1, { keepChars: 8, chunkBytes: 64 * 1024 });
		assert.deepEqual(lines, [
			{ lineNumber: 1, text: "short", totalChars: 5, partial: false },
			{ lineNumber: 2, text: "éééééééé", totalChars: 3_000_000, partial: true },
			{ lineNumber: 3, text: "end", totalChars: 3, partial: false },
		]);
	});
});
