// Tests for src/scan/scan.ts: what a line is, totals, head/tail/signal collection, and that the result
// never depends on how the bytes were chunked.

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { findPatternKeywords } from "../../src/regex/keywords.js";
import { GIANT_LINE_KEEP_BYTES, renderTerminalLine, stripAnsi } from "../../src/lines/render.js";
import {
	LineScanner,
	SIGNAL_SCAN_BUDGET_MS,
	SIGNAL_WINDOW_STEP_CHARS,
	type ScanOptions,
	type ScanResult,
	scanText,
} from "../../src/scan/scan.js";
import { DEFAULT_SIGNAL_PATTERN } from "../../src/signals/pattern.js";

const MIB = 1024 * 1024;

function scanOptions(overrides: Partial<ScanOptions> = {}): ScanOptions {
	return {
		headLines: 60,
		tailLines: 80,
		maxSignalLines: 40,
		maxLineChars: 500,
		signalRegex: new RegExp(DEFAULT_SIGNAL_PATTERN, "i"),
		...overrides,
	};
}

function scanInChunks(bytes: Buffer, chunkBytes: number, options: ScanOptions = scanOptions()): ScanResult {
	const scanner = new LineScanner(options);
	for (let at = 0; at < bytes.length; at += chunkBytes) scanner.push(bytes.subarray(at, at + chunkBytes));
	return scanner.end();
}

/** Pushes the bytes in chunks of pseudo-random sizes (deterministic). */
function scanInRandomChunks(
	bytes: Buffer,
	seed: number,
	maxChunk: number,
	options: ScanOptions = scanOptions(),
): ScanResult {
	const scanner = new LineScanner(options);
	let state = seed;
	for (let at = 0; at < bytes.length;) {
		state = (state * 1103515245 + 12345) % 2147483648;
		const size = 1 + (state % maxChunk);
		scanner.push(bytes.subarray(at, at + size));
		at += size;
	}
	return scanner.end();
}

function seq(count: number): string {
	let text = "";
	for (let i = 1; i <= count; i++) text += `${i}\n`;
	return text;
}

function lastOf<T>(items: T[]): T {
	assert.ok(items.length > 0, "expected a non-empty list");
	return items[items.length - 1];
}

describe("lines", () => {
	test("counts the output of seq 1 5000 as 5000 lines, like wc -l", () => {
		const text = seq(5000);
		const scan = scanText(text, scanOptions());
		assert.equal(scan.totalLines, 5000);
		assert.equal(scan.totalBytes, Buffer.byteLength(text));
		assert.deepEqual(
			scan.head.map((line) => line.text),
			Array.from({ length: 60 }, (_, i) => String(i + 1)),
		);
		assert.deepEqual(
			scan.tail.map((line) => [line.lineNumber, line.text]),
			Array.from({ length: 80 }, (_, i) => [4921 + i, String(4921 + i)]),
		);
	});

	test("counts the last partial line when there is no final newline", () => {
		const scan = scanText("one\ntwo\nthree", scanOptions());
		assert.equal(scan.totalLines, 3);
		assert.deepEqual(lastOf(scan.tail), { lineNumber: 3, text: "three", totalChars: 5, partial: false });
	});

	test("counts an empty line before the final newline as a line", () => {
		assert.equal(scanText("a\n\n", scanOptions()).totalLines, 2);
		assert.equal(scanText("\n", scanOptions()).totalLines, 1);
		assert.equal(scanText("\n\n\n", scanOptions()).totalLines, 3);
	});

	test("counts an empty text as zero lines and keeps nothing", () => {
		const scan = scanText("", scanOptions());
		assert.deepEqual(scan, {
			totalLines: 0,
			totalBytes: 0,
			head: [],
			tail: [],
			headEnd: 0,
			tailStart: 1,
			signals: [],
			shownSignals: [],
			signalMatches: 0,
			shapes: { shapedLines: 0, complete: true, rare: [], repeated: [] },
			steps: { marks: [], dropped: 0 },
			sections: [],
		});
		assert.deepEqual(new LineScanner(scanOptions()).end(), scan);
	});

	test("treats a carriage return before the newline as part of the line ending", () => {
		const bytes = Buffer.from("alpha\r\nbeta\r\ngamma\r\n");
		for (const chunk of [1, 2, 3, 1 * MIB]) {
			const scan = scanInChunks(bytes, chunk);
			assert.equal(scan.totalLines, 3, `chunk ${chunk}`);
			assert.deepEqual(
				scan.tail.map((line) => line.text),
				["alpha", "beta", "gamma"],
				`chunk ${chunk}`,
			);
			assert.deepEqual(
				scan.tail.map((line) => line.totalChars),
				[5, 4, 5],
			);
		}
	});

	test("counts a CRLF text without a final newline like its LF twin", () => {
		const crlf = scanText("a\r\nb\r\nc", scanOptions());
		const lf = scanText("a\nb\nc", scanOptions());
		assert.equal(crlf.totalLines, lf.totalLines);
		assert.deepEqual(
			crlf.tail.map((line) => line.text),
			lf.tail.map((line) => line.text),
		);
	});

	test("shows invalid UTF-8 as U+FFFD and counts its bytes as they are", () => {
		const bytes = Buffer.from([0x61, 0xff, 0x62, 0x0a, 0xc3, 0x0a, 0xe2, 0x82, 0x0a, 0x63]);
		for (const chunk of [1, 2, 3, 1 * MIB]) {
			const scan = scanInChunks(bytes, chunk);
			assert.equal(scan.totalBytes, bytes.length);
			assert.equal(scan.totalLines, 4);
			assert.deepEqual(
				scan.tail.map((line) => line.text),
				["a\ufffdb", "\ufffd", "\ufffd", "c"],
				`chunk ${chunk}`,
			);
		}
	});

	test("never shows U+FFFD for valid UTF-8 split across chunk boundaries", () => {
		const line = "😀 é 中文 ✓ ok — 😀😀";
		const text = `${line}\n`.repeat(300);
		const bytes = Buffer.from(text);
		for (const chunk of [1, 2, 3, 5, 7, 4096]) {
			const scan = scanInChunks(bytes, chunk, scanOptions({ headLines: 300, tailLines: 300 }));
			assert.equal(scan.totalLines, 300);
			for (const kept of [...scan.head, ...scan.tail])
				assert.equal(kept.text, line, `chunk ${chunk}, line ${kept.lineNumber}`);
		}
	});

	test("rejects a push after end", () => {
		const scanner = new LineScanner(scanOptions());
		scanner.end();
		assert.throws(() => scanner.push(Buffer.from("x")), /after end/);
	});
});

describe("chunking", () => {
	/** A text with every kind of line the scanner treats specially. */
	function mixedText(): Buffer {
		const parts: Buffer[] = [];
		const add = (text: string) => parts.push(Buffer.from(text));
		for (let i = 1; i <= 70; i++) add(`head ${i} 😀 é\n`);
		add("error: first failure in the head\n");
		for (let i = 0; i < 2000; i++) {
			if (i % 97 === 0) add(`src/file${i}.ts(1,2): error TS2304: Cannot find name 'x${i}'\n`);
			else if (i % 89 === 0) add(`warning: unused variable v${i}\r\n`);
			else if (i % 83 === 0) add("error: first failure in the head\n");
			else if (i % 71 === 0) add(`\x1b[31merror\x1b[0m: colored failure ${i}\n`);
			else if (i % 67 === 0) add(`${"x".repeat(5000)} error far into a long line ${i}\n`);
			else if (i % 61 === 0) add(`${"10%\r".repeat(50)}100% done ${i}\n`);
			else add(`ordinary line ${i} with ünïcödé 中文 and 😀\n`);
		}
		// Giant lines: a signal only at the end, a signal only at the start, a redrawn one, multi-byte
		// characters straddling the kept ends, and one with nothing to signal.
		add(`${"y".repeat(100_000)} panic: at the very end\n`);
		add(`fatal error at the start ${"z".repeat(150_000)}\n`);
		add(`${"progress 1%\r".repeat(20_000)}progress 100% done\n`);
		add(`${"é".repeat(40_000)}${"😀".repeat(20_000)}\n`);
		add(`${"q".repeat(GIANT_LINE_KEEP_BYTES)}\n`);
		add(`${"q".repeat(GIANT_LINE_KEEP_BYTES + 1)}\n`);
		parts.push(Buffer.from([0x62, 0x61, 0x64, 0xff, 0xfe, 0x0a]));
		for (let i = 1; i <= 90; i++) add(`tail ${i} ✓\r\n`);
		add("last line without a newline: error 42");
		return Buffer.concat(parts);
	}

	test("gives an identical result for chunks of 1, 7, 4096 and 1 MiB bytes and for the whole text", () => {
		const bytes = mixedText();
		const whole = scanInChunks(bytes, bytes.length);
		assert.ok(whole.signals.length >= 5, "the text has signal lines");
		for (const chunk of [1, 7, 4096, 1 * MIB]) assert.deepEqual(scanInChunks(bytes, chunk), whole, `chunk ${chunk}`);
		for (const seed of [1, 2, 3])
			assert.deepEqual(scanInRandomChunks(bytes, seed, 70_000), whole, `random chunks, seed ${seed}`);
		assert.deepEqual(scanText(bytes.toString("utf8"), scanOptions()).totalLines, whole.totalLines);
	});

	/** The records scan of the bytes pushed in chunks of `chunkBytes` (undefined when they are not CR-separated). */
	function recordsInChunks(bytes: Buffer, chunkBytes: number): ScanResult | undefined {
		const scanner = new LineScanner(scanOptions());
		for (let at = 0; at < bytes.length; at += chunkBytes) scanner.push(bytes.subarray(at, at + chunkBytes));
		return scanner.records()?.end();
	}

	test("reads an output with no LF and at least one CR as CR-separated records, whatever the chunking", () => {
		const records = Array.from({ length: 3000 }, (_, i) =>
			i === 1700 ? "error: disk quota exceeded" : `progress ${i + 1} ok`,
		);
		const bytes = Buffer.from(`${records.join("\r")}\r`);
		const whole = recordsInChunks(bytes, bytes.length);
		assert.ok(whole, "records");
		assert.equal(whole.totalLines, 3000);
		assert.equal(whole.head[0].text, "progress 1 ok");
		assert.equal(lastOf(whole.tail).text, "progress 3000 ok");
		assert.deepEqual(
			whole.signals.map((item) => [item.lineNumber, item.text]),
			[[1701, "error: disk quota exceeded"]],
		);
		for (const chunk of [1, 7, 4096]) assert.deepEqual(recordsInChunks(bytes, chunk), whole, `chunk ${chunk}`);
		for (const seed of [1, 2, 3]) {
			const scanner = new LineScanner(scanOptions());
			let state = seed;
			for (let at = 0; at < bytes.length;) {
				state = (state * 1103515245 + 12345) % 2147483648;
				const size = 1 + (state % 5000);
				scanner.push(bytes.subarray(at, at + size));
				at += size;
			}
			assert.deepEqual(scanner.records()?.end(), whole, `random chunks, seed ${seed}`);
		}
	});

	test("keeps lines for CRLF, progress-bar CRs, one LF after many CRs, and no CR at all", () => {
		const texts = [
			"one\r\ntwo\r\n",
			"10%\r20%\r30%\ndone\n",
			`${"step ok\r".repeat(50_000)}finished\n`,
			`${"x".repeat(100_000)}`,
		];
		for (const text of texts)
			for (const chunk of [1, 4096, 1 * MIB])
				assert.equal(
					recordsInChunks(Buffer.from(text), chunk),
					undefined,
					`${JSON.stringify(text.slice(0, 20))}, chunk ${chunk}`,
				);
	});

	test("keeps the same tail of long lines (a block's last lines over 256 KiB) whatever the chunking", () => {
		const lines = Array.from(
			{ length: 200 },
			(_, i) => `${i % 7 === 0 ? "error: " : ""}${String(i).padStart(5, "0")} ${"é".repeat(2000 + i)}\r`,
		);
		const bytes = Buffer.from(`${lines.join("\n")}\n`);
		const whole = scanInChunks(bytes, bytes.length);
		assert.deepEqual(
			whole.tail.map((line) => [line.lineNumber, line.text.slice(0, 5), line.signal === true]),
			lines.slice(120).map((text, i) => [121 + i, text.slice(0, 5), text.startsWith("error")]),
		);
		for (const chunk of [7, 65_537, 1 * MIB]) assert.deepEqual(scanInChunks(bytes, chunk), whole, `chunk ${chunk}`);
	});

	test("gives an identical result whatever the chunking with small head, tail and signal limits", () => {
		const bytes = mixedText();
		const options = scanOptions({ headLines: 0, tailLines: 1, maxSignalLines: 3, maxLineChars: 80 });
		const whole = scanInChunks(bytes, bytes.length, options);
		for (const chunk of [7, 4096, 65_537])
			assert.deepEqual(scanInChunks(bytes, chunk, options), whole, `chunk ${chunk}`);
	});

	test("finds a signal far into a long line and in a coloured line whatever the chunking", () => {
		const text = `ok\n${"x".repeat(6000)} error: deep\n\x1b[1;31merror\x1b[0m: coloured\nok\n`;
		const options = scanOptions({ headLines: 1, tailLines: 1 });
		for (const chunk of [1, 4096, 1 * MIB]) {
			const scan = scanInChunks(Buffer.from(text), chunk, options);
			assert.deepEqual(
				scan.signals.map((line) => line.lineNumber),
				[2, 3],
				`chunk ${chunk}`,
			);
			assert.equal(scan.signals[1].text, "error: coloured");
		}
	});

	test("never shows U+FFFD at the kept ends of a giant line of multi-byte characters", () => {
		for (const char of ["é", "中", "😀"]) {
			for (const shift of [0, 1, 2, 3]) {
				const line = `${"a".repeat(shift)}${char.repeat(Math.ceil(200_000 / Buffer.byteLength(char)))} error`;
				const options = scanOptions({ headLines: 0, tailLines: 1, maxLineChars: 100_000 });
				const scan = scanInChunks(Buffer.from(`${line}\n`), 4096, options);
				const kept = lastOf(scan.tail);
				assert.ok(kept.partial);
				assert.ok(!kept.text.includes("\ufffd"), `${char} shifted by ${shift}`);
				assert.equal(kept.totalChars, line.length, "characters are counted in UTF-16 units, like String.length");
			}
		}
	});
});

describe("giant lines", () => {
	test("keeps the start of a giant line and counts all its characters", () => {
		const line = "s".repeat(3 * GIANT_LINE_KEEP_BYTES);
		const scan = scanText(`${line}\n`, scanOptions());
		const kept = scan.head[0];
		assert.equal(kept.totalChars, line.length);
		assert.ok(kept.partial);
		assert.ok(kept.text.length >= 500 && kept.text.length < line.length);
		assert.ok(line.startsWith(kept.text));
	});

	test("keeps the end of a giant line whose signal is at its end", () => {
		const line = `${"y".repeat(200_000)} Segmentation fault (core dumped)`;
		const scan = scanText(`ok\n${line}\nok\n`, scanOptions({ headLines: 1, tailLines: 1 }));
		assert.equal(scan.signals.length, 1);
		const signal = scan.signals[0];
		assert.equal(signal.lineNumber, 2);
		assert.equal(signal.keptEnd, true);
		assert.ok(signal.text.endsWith("Segmentation fault (core dumped)"));
		assert.equal(signal.totalChars, line.length);
	});

	test("shows the final state of a giant line redrawn with carriage returns", () => {
		const line = `${"downloading 42%\r".repeat(10_000)}downloading 100% done`;
		const scan = scanText(`${line}\r\n`, scanOptions());
		assert.equal(scan.totalLines, 1);
		assert.equal(scan.tail[0].text, "downloading 100% done");
	});

	// How long this takes is measured by `npm run bench` (bound stage rows: their logs hold lines of several MB).
	test("scans a 50 MB line without a newline, counting all of it", () => {
		const line = Buffer.alloc(50 * 1000 * 1000, "x");
		const scan = scanInChunks(line, 1 * MIB);
		assert.equal(scan.totalLines, 1);
		assert.equal(scan.totalBytes, line.length);
		assert.equal(scan.tail[0].totalChars, line.length);
	});
});

describe("signals", () => {
	test("counts every matching line and shows repeats of one text once, at its first line", () => {
		const lines = ["start"];
		for (let i = 0; i < 500; i++) lines.push(i % 5 === 0 ? "error: the same failure" : `ok ${i}`);
		lines.push("end");
		const scan = scanText(`${lines.join("\n")}\n`, scanOptions({ headLines: 1, tailLines: 1 }));
		assert.equal(scan.signalMatches, 100);
		assert.equal(scan.signals.length, 1);
		assert.deepEqual([scan.signals[0].lineNumber, scan.signals[0].count], [2, 100]);
	});

	test("does not offer a signal first seen in the head again, nor the signals in the last lines", () => {
		const lines = ["error: in the head", "ok"];
		for (let i = 0; i < 100; i++)
			lines.push(i === 50 ? "error: in the middle" : i % 10 === 0 ? "error: in the head" : `ok ${i}`);
		lines.push("error: in the tail", "ok");
		const scan = scanText(`${lines.join("\n")}\n`, scanOptions({ headLines: 2, tailLines: 2 }));
		assert.deepEqual(
			scan.signals.map((line) => line.text),
			["error: in the middle"],
		);
		assert.equal(scan.signalMatches, 12);
	});

	test("keeps an evenly spread sample of many distinct failures, the first and the last ranked first", () => {
		const word = (n: number) => n.toString(26).replace(/[0-9]/g, (d) => String.fromCharCode(113 + Number(d)));
		const lines: string[] = [];
		for (let i = 0; i < 100_000; i++) lines.push(i % 10 === 0 ? `error: ${word(i)} failed` : `ok ${i}`);
		const scan = scanText(`${lines.join("\n")}\n`, scanOptions());
		assert.ok(
			scan.signals.length >= 1000 && scan.signals.length <= 2048,
			`${scan.signals.length} candidates kept of 10 000 distinct shapes`,
		);
		const numbers = scan.signals.slice(0, 40).map((line) => line.lineNumber);
		assert.ok(Math.min(...numbers) < 10_000, `first at ${Math.min(...numbers)}`);
		assert.ok(Math.max(...numbers) > 90_000, `last at ${Math.max(...numbers)}`);
		assert.ok(numbers.some((n) => n > 40_000 && n < 60_000));
	});

	test("shows lines of one shape once, with how many there were and where the last one is", () => {
		const lines: string[] = [];
		for (let i = 0; i < 1000; i++) lines.push(i % 100 === 50 ? `error: middle ${i}` : `ok ${i}`);
		for (let i = 0; i < 80; i++) lines.push(`error: tail ${i}`);
		const scan = scanText(`${lines.join("\n")}\n`, scanOptions({ maxSignalLines: 10, headLines: 10 }));
		assert.deepEqual(
			scan.signals.map((line) => [line.text, line.similar, line.instance ?? line.last]),
			[
				["error: middle 50", { count: 9, lastLine: 951 }, undefined],
				// Its last line, where the failures ended, ranked beside it.
				["error: middle 950", undefined, true],
				// The others it stands for, each once, ranked after them and spread (first, last, middle, …): shown only with room.
				...[150, 850, 550, 350, 650, 250, 450, 750].map((n) => [`error: middle ${n}`, undefined, true]),
			],
		);
		assert.equal(scan.shownSignals.length, 1, "the tail's 80 lines of one shape, shown in the tail");
	});

	test("rates a line by its log level or its words: a warning, even one that mentions a failure, yields to an error", () => {
		const scan = scanText(
			"ok\nwarning: unused import\nerror: broken\nwarning: failed to clean\nok\n",
			scanOptions({ headLines: 1, tailLines: 1 }),
		);
		assert.deepEqual(
			scan.signals.map((line) => [line.text, line.severity]),
			[
				["error: broken", 2],
				["warning: unused import", 1],
				["warning: failed to clean", 1],
			],
		);
	});

	test("looks for nothing when maxSignalLines is 0", () => {
		const scan = scanText("error\n".repeat(1000), scanOptions({ maxSignalLines: 0 }));
		assert.deepEqual([scan.signals.length, scan.signalMatches], [0, 0]);
	});

	test("honours a custom pattern with anchors, per line", () => {
		const scan = scanText(
			"ok\nFAIL here\nnot FAIL\nok\n",
			scanOptions({ headLines: 1, tailLines: 1, signalRegex: /^FAIL/i }),
		);
		assert.deepEqual(
			scan.signals.map((line) => line.lineNumber),
			[2],
		);
	});
});

describe("renderTerminalLine", () => {
	test("shows the final state of a line redrawn with carriage returns", () => {
		assert.equal(renderTerminalLine("10%\r20%\r100% done"), "100% done");
		assert.equal(renderTerminalLine("downloading 10%\rDONE"), "DONEloading 10%");
		assert.equal(renderTerminalLine("downloading 10%\r\x1b[Kdone"), "done");
		assert.equal(renderTerminalLine("abc\r"), "abc");
	});

	test("removes ANSI colour, cursor and OSC sequences", () => {
		assert.equal(renderTerminalLine("\x1b[1;31merror\x1b[0m: x"), "error: x");
		assert.equal(renderTerminalLine("\x1b]8;;http://x\x07link\x1b]8;;\x07"), "link");
		assert.equal(renderTerminalLine("a\x1b[2Ab"), "ab");
	});

	test("shows other control characters as U+FFFD and keeps tabs", () => {
		assert.equal(renderTerminalLine("a\tb\x00c\x07"), "a\tb\ufffdc\ufffd");
	});

	// How long this takes, against splitting the same line at each \r, is measured by `npm run bench`.
	test("resolves a line with many redraws", () => {
		const line = `${"x".repeat(60_000)}${"\ry".repeat(60_000)}`;
		assert.equal(renderTerminalLine(line), `y${"x".repeat(59_999)}`);
	});

	test("stripAnsi keeps the lines of a block in place", () => {
		assert.equal(stripAnsi("\x1b]0;title\nnext\x1b[0m\n"), "\nnext\n");
	});
});

describe("a large log", () => {
	// How fast, against grep on the same log, is measured by `npm run bench` (view build, 32 MiB entry).
	test("scans a 32 MiB log with the default signal pattern, counting every line", () => {
		const lines: string[] = [];
		let size = 0;
		for (let i = 0; size < 32 * MIB; i++) {
			const line =
				i % 1000 === 0
					? `src/module${i}.ts(12,5): error TS2304: Cannot find name 'value${i}'.`
					: i % 333 === 0
						? `warning: deprecated API used in handler ${i}`
						: `[2024-01-01T00:00:${String(i % 60).padStart(2, "0")}Z] INFO request ${i} served in ${i % 97} ms path=/api/v1/items/${i}`;
			lines.push(line);
			size += line.length + 1;
		}
		const bytes = Buffer.from(`${lines.join("\n")}\n`);
		const scan = scanInChunks(bytes, 1 * MIB);
		assert.equal(scan.totalLines, lines.length);
		assert.ok(scan.signals.length > 0);
	});
});

describe("signal search budget and windows (a configured pattern)", () => {
	/** A fake clock: every reading is `stepMs` later than the one before. */
	function steppingClock(stepMs: number): () => number {
		let now = 0;
		return () => (now += stepMs);
	}
	const slowPattern = /\w+Exception/i;

	test("charges head lines to the budget and reports the line where the search stopped", () => {
		const text = Array.from({ length: 10 }, (_, i) => `line ${i + 1} FooException`).join("\n");
		const scan = scanText(`${text}\n`, scanOptions({ signalRegex: slowPattern, now: steppingClock(700) }));
		const stopped = scan.signalSearchStopped;
		assert.ok(stopped, "the search stopped although every line is in the head");
		assert.ok(
			stopped.afterMs > SIGNAL_SCAN_BUDGET_MS && stopped.afterMs <= SIGNAL_SCAN_BUDGET_MS + 700,
			`stopped within one line's charge: ${stopped.afterMs} ms`,
		);
		assert.ok(stopped.atLine > 1 && stopped.atLine < 10, `at line ${stopped.atLine}`);
		assert.equal(scan.signalMatches, stopped.atLine - 1, "the lines before it were searched, none from it on");
		assert.equal(scan.head.length, 10, "head and tail are complete");
	});

	test("never stops the built-in pattern, however slow the clock says it is", () => {
		const text = Array.from({ length: 10 }, (_, i) => `line ${i + 1} error: refused`).join("\n");
		const scan = scanText(
			`${text}\n`,
			scanOptions({ signalRegex: new RegExp(DEFAULT_SIGNAL_PATTERN, "i"), now: steppingClock(700) }),
		);
		assert.equal(scan.signalSearchStopped, undefined);
		assert.equal(scan.signalMatches, 10, "every line was searched");
	});

	test("checks the budget between the windows of one long line, and stops within it", () => {
		const long = `${"a".repeat(40_000)}FooException`;
		const options = scanOptions({ headLines: 1, tailLines: 1, signalRegex: slowPattern });
		const text = `ok\n${long}\nok BarException\nok\n`;
		const complete = scanText(text, { ...options, now: steppingClock(0) });
		assert.equal(complete.signalSearchStopped, undefined);
		assert.deepEqual(
			complete.signals.map((line) => line.lineNumber),
			[2, 3],
			"with time to spare, the windows reach the match at the end of the long line",
		);
		const stoppedScan = scanText(text, { ...options, now: steppingClock(100) });
		const stopped = stoppedScan.signalSearchStopped;
		assert.ok(stopped, "stopped");
		assert.equal(stopped.atLine, 2, "inside the long line");
		assert.ok(stopped.afterMs <= SIGNAL_SCAN_BUDGET_MS + 100, `within one window's charge: ${stopped.afterMs} ms`);
		assert.deepEqual(stoppedScan.signals, [], "nothing after the stop was searched");
		assert.equal(stoppedScan.totalLines, 4);
	});

	/**
	 * 10 000 lines, a FooException every 100th from line 51, scanned with `signalRegex` on a clock
	 * stepping `stepMs` per reading: the search stops inside the block, within `chargeMs` past the
	 * budget, having searched every line before the stop and none after it, and counts every line.
	 */
	function assertStopsInsideBlock(signalRegex: RegExp, stepMs: number, chargeMs: number): void {
		const lines = Array.from({ length: 10_000 }, (_, i) =>
			i % 100 === 50 ? `step ${i} FooException` : `step ${i} ${"x".repeat(90)}`,
		);
		const scan = scanText(
			`${lines.join("\n")}\n`,
			scanOptions({ headLines: 0, tailLines: 1, signalRegex, now: steppingClock(stepMs) }),
		);
		const stopped = scan.signalSearchStopped;
		assert.ok(stopped, "stopped");
		assert.ok(stopped.afterMs <= SIGNAL_SCAN_BUDGET_MS + chargeMs, `within one run's charge: ${stopped.afterMs} ms`);
		assert.ok(stopped.atLine > 1 && stopped.atLine < 10_000, `inside the block: line ${stopped.atLine}`);
		assert.ok(scan.signals.length > 0);
		assert.ok(
			scan.signals.every((line) => line.lineNumber < stopped.atLine),
			"no signal from the lines not searched",
		);
		assert.equal(
			scan.signalMatches,
			Math.ceil((stopped.atLine - 1 - 50) / 100),
			"every line before the stop was searched",
		);
		assert.equal(scan.totalLines, 10_000, "the lines after the stop are counted");
	}

	test("checks the budget between pieces of a block of ordinary lines", () => {
		// No keyword is certain in every match ("ex" is too short), so the pattern runs over pieces of the block.
		const noKeywords = /\w+(?:Exception|Ex)\b/i;
		assert.equal(findPatternKeywords(noKeywords.source), undefined);
		assertStopsInsideBlock(noKeywords, 50, 50);
	});

	test("checks the budget between the keyword prefilter's windows of a block", () => {
		assert.deepEqual(findPatternKeywords(slowPattern.source), ["exception"]);
		// Each window reads the clock three times (the pass is not charged, its candidates are).
		assertStopsInsideBlock(slowPattern, 400, 800);
	});

	test("does not report a search that ended with its last line as stopped", () => {
		const scan = scanText(
			"a FooException\nb FooException\n",
			scanOptions({ signalRegex: slowPattern, now: steppingClock(1500) }),
		);
		assert.equal(scan.signalSearchStopped, undefined);
		assert.equal(scan.signalMatches, 2);
	});

	test("finds a match anywhere in a long line, whatever window boundary it straddles", () => {
		const options = scanOptions({ headLines: 0, tailLines: 1, signalRegex: /\bneedle\b/i });
		for (let at = 1; at < 5 * SIGNAL_WINDOW_STEP_CHARS; at += 37) {
			const hit = `${"a ".repeat(at).slice(0, at)} needle ${"b".repeat(6000)}`;
			const miss = `${"a".repeat(at)}needle ${"b".repeat(6000)}`;
			const scan = scanText(`ok\n${hit}\n${miss}\nok\n`, options);
			assert.deepEqual(
				scan.signals.map((line) => line.lineNumber),
				[2],
				`needle at ${at}: found after a space, not after a word character (a window's context)`,
			);
		}
	});

	test("finds any match up to SIGNAL_WINDOW_STEP_CHARS characters long in a long line", () => {
		const options = scanOptions({ headLines: 0, tailLines: 1, signalRegex: /start\.*end/i });
		for (const at of [0, 1000, SIGNAL_WINDOW_STEP_CHARS * 3 - 5, 20_000]) {
			const match = `start${".".repeat(SIGNAL_WINDOW_STEP_CHARS - 8)}end`;
			const line = `${"x".repeat(at)}${match}${"y".repeat(10_000)}`;
			assert.equal(scanText(`ok\n${line}\nok\n`, options).signals.length, 1, `match at ${at}`);
		}
	});

	test("anchors a configured pattern at the start of a long line only", () => {
		const options = scanOptions({ headLines: 0, tailLines: 1, signalRegex: /^FAIL/i });
		const scan = scanText(
			`ok\nFAIL ${"x".repeat(10_000)}\n${"x".repeat(SIGNAL_WINDOW_STEP_CHARS * 2)}FAIL ${"x".repeat(10_000)}\nok\n`,
			options,
		);
		assert.deepEqual(
			scan.signals.map((line) => line.lineNumber),
			[2],
		);
	});

	test("gives an identical result for a configured pattern whatever the chunking", () => {
		const parts: string[] = [];
		// Long lines over several windows. Pairs like "w-" rather than runs of word characters keep the
		// quadratic pattern linear there: with the clock stopped its speed is no part of what is proven.
		for (let i = 0; i < 300; i++) {
			if (i % 17 === 0) parts.push(`${"w-".repeat(1500 + i * 20)} FooException ${i}`);
			else if (i % 13 === 0) parts.push(`FooException at line ${i} ${"é".repeat(1500)}`);
			else parts.push(`ordinary ${i} ${"v-".repeat(i * 4).slice(0, i * 7)}`);
		}
		parts.push(`${"z-".repeat(50_000)} TailException`);
		const bytes = Buffer.from(`${parts.join("\n")}\nlast`);
		// A clock that stands still: on a loaded machine the budget must not end the search halfway.
		const options = scanOptions({ headLines: 3, tailLines: 3, signalRegex: /\w+Exception/i, now: () => 0 });
		const whole = scanInChunks(bytes, bytes.length, options);
		assert.ok(whole.signalMatches > 20, `${whole.signalMatches} signal lines`);
		for (const chunk of [1, 7, 2047, 4096, 1 * MIB])
			assert.deepEqual(scanInChunks(bytes, chunk, options), whole, `chunk ${chunk}`);
	});

	test("the default pattern still sees a long line whole, however long its match", () => {
		const line = `exit code${" ".repeat(3000)}1`;
		const scan = scanText(`ok\n${line}\nok\n`, scanOptions({ headLines: 0, tailLines: 1 }));
		assert.deepEqual(
			scan.signals.map((signal) => signal.lineNumber),
			[2],
		);
	});
});

describe("signal matches inside a giant line", () => {
	test("a match in the middle of a 3-million-character line is shown as a window with its true character offsets, whatever the chunking", () => {
		const line = `${"a".repeat(1_500_000)} error: checksum mismatch at block 77 ${"b".repeat(1_500_000)}`;
		const bytes = Buffer.from(`start\n${line}\nend\n`);
		const windows = [7, 65_536, 1 * MIB].map((chunk) => {
			const scan = scanInChunks(bytes, chunk);
			const [signal] = scan.shownSignals;
			assert.ok(signal?.window, `a window at chunks of ${chunk}`);
			return { start: signal.window.start, end: signal.window.end, text: signal.text };
		});
		for (const window of windows) assert.deepEqual(window, windows[0]);
		const { start, end, text } = windows[0];
		assert.equal(line.slice(start, end), text, "the offsets are those of the text in the line");
		assert.ok(text.includes("error: checksum mismatch at block 77"), text);
		assert.ok(end - start <= 500, `bounded: ${end - start} chars`);
	});

	test("lone-CR records: the window is the record with the error, cut at its CRs", () => {
		const records = Array.from({ length: 100_000 }, (_, i) =>
			i === 60_000 ? "error: disk quota exceeded on /var" : `progress ${i} of 100000 records copied`,
		);
		const text = records.join("\r");
		const scan = scanText(text, scanOptions());
		assert.equal(scan.totalLines, 1);
		const [line] = scan.tail;
		assert.equal(line.text, "error: disk quota exceeded on /var");
		assert.ok(line.window);
		assert.equal(text.slice(line.window.start, line.window.end), line.text);
	});
});
