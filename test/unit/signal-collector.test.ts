// The signal collector (src/signals/collector.ts) holds a bounded selection however many lines are
// signal candidates: a million distinct error lines leave a few shapes, a few lines per shape and a
// bounded shape memo. Lines it takes raw (addRaw: shaped only when kept, shapes remembered across
// lines that differ in their digits) give exactly what shaping every line and keeping it as an item
// (the plain algorithm, modelled here) gives.

import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import { keepCharsFor, renderLine, renderTerminalLine, type ScannedLine } from "../../src/lines/render.js";
import {
	LINES_PER_SHAPE,
	MAX_MEMO_LINES,
	MAX_RERUN_PRINTS,
	MAX_SHAPES,
	MAX_SPREAD_LINES,
	SignalCollector,
	SPREAD_LINES_PER_SHAPE,
	type SignalItem,
} from "../../src/signals/collector.js";
import { classifySeverity, type Severity, SEVERITY_ERROR, SEVERITY_WARNING } from "../../src/signals/policy.js";
import { learnLineFrame } from "../../src/lines/frame.js";
import { COLLAPSE_SHAPE_LINES, shapeOf } from "../../src/signals/shape.js";
import { keepEnd, keepStart } from "../../src/lines/text.js";

const MAX_LINE_CHARS = 200;

/** The collector's bounds, whatever it was given. */
function assertBounded(collector: SignalCollector, maxLineChars: number): void {
	const held = collector.retained;
	assert.ok(held.shapes <= 2 * MAX_SHAPES, `${held.shapes} shapes`);
	assert.ok(held.spreadLines <= MAX_SPREAD_LINES, `${held.spreadLines} spread lines`);
	assert.ok(
		held.lines <=
			(LINES_PER_SHAPE + 1) * held.shapes + Math.min(MAX_SPREAD_LINES, SPREAD_LINES_PER_SHAPE * held.shapes),
		`${held.lines} lines for ${held.shapes} shapes`,
	);
	assert.ok(held.longestLineChars <= maxLineChars, `a line of ${held.longestLineChars} characters held`);
	assert.ok(held.memoLines <= MAX_MEMO_LINES, `${held.memoLines} lines in the shape memo`);
}

test("1 000 000 distinct error lines of one shape: one shape, its first lines, its latest and a spread, exact counts", () => {
	const collector = new SignalCollector(MAX_LINE_CHARS);
	for (let n = 1; n <= 1_000_000; n++) collector.addRaw(n, `error: failure number ${n}`, (n - 1) * 30);
	assertBounded(collector, MAX_LINE_CHARS);
	const held = collector.retained;
	assert.deepEqual(held, {
		shapes: 1,
		lines: LINES_PER_SHAPE + 1 + held.spreadLines,
		spreadLines: held.spreadLines,
		longestLineChars: 29,
		memoLines: 7,
	});
	assert.ok(held.spreadLines > SPREAD_LINES_PER_SHAPE / 2 && held.spreadLines <= SPREAD_LINES_PER_SHAPE);
	assert.equal(collector.matches, 1_000_000);
	const items = collector.items();
	const [first, last, ...instances] = items;
	// The last line, where the failures ended, beside the first; it states no count.
	assert.deepEqual(last, {
		lineNumber: 1_000_000,
		text: "error: failure number 1000000",
		totalChars: 29,
		partial: false,
		offset: 999_999 * 30,
		count: 1,
		severity: 2,
		shapeCount: 1_000_000,
		last: true,
	});
	assert.ok(
		instances.every((item) => item.instance && item.count === 1 && item.shapeCount === 1_000_000),
		"the others are instances that state no count",
	);
	// Evenly spread: from the first lines to the last stride's, each a distinct line.
	const numbers = instances.map((item) => item.lineNumber);
	assert.equal(new Set(items.map((item) => item.text)).size, items.length);
	assert.ok(Math.max(...numbers) > 900_000 && numbers.some((n) => n > 300_000 && n < 700_000), numbers.join(" "));
	assert.deepEqual(first, {
		lineNumber: 1,
		text: "error: failure number 1",
		totalChars: 23,
		partial: false,
		offset: 0,
		count: 1,
		severity: 2,
		shapeCount: 1_000_000,
		similar: { count: 999_999, lastLine: 1_000_000 },
	});
});

test("200 000 candidate lines of distinct shapes and lengths: at most twice MAX_SHAPES shapes, each line clipped", () => {
	const collector = new SignalCollector(MAX_LINE_CHARS);
	// Letters only (shapeOf keeps them), so every line is a shape of its own; every fourth line is
	// longer than the view shows, with a number that changes (a distinct latest line each time).
	const word = (n: number) => n.toString(26).replace(/[0-9]/g, (digit) => "qrstuvwxyz"[Number(digit)]);
	for (let n = 1; n <= 200_000; n++) {
		const text = n % 4 === 0 ? `error: ${"long ".repeat(60)}${n}` : `error: module ${word(n)} failed`;
		collector.addRaw(n, text, n);
		if (n % 50_000 === 0) assertBounded(collector, MAX_LINE_CHARS);
	}
	assert.equal(collector.matches, 200_000);
	assert.ok(collector.items().every((item) => item.text.length <= MAX_LINE_CHARS));
});

/** Lines built to take every path: digits (before an x too), hex, quotes, paths, control characters, ANSI, "\r" redraws, long runs. */
const piece = fc.oneof(
	fc.constantFrom(
		"error:",
		"failed",
		"warning:",
		"ERROR",
		"note",
		" ",
		"  ",
		"\t",
		"x",
		"X",
		"0x",
		"ff",
		"deadbeef",
		"/src/a.c",
		'"q 1"',
		"'2'",
		"`3`",
		".",
		":",
		",",
		"+",
		"-",
		"é",
		"日本",
	),
	fc.constantFrom("\r", "\x1b[31m", "\x1b[0m", "\x01", "\x7f", "\b", "\x1b"),
	fc.nat({ max: 10 ** 9 }).map(String),
	fc.nat({ max: 9 }).map((n) => "a".repeat(n * 13)),
	fc.constant("b".repeat(1100)),
);
const line = fc
	.tuple(fc.constantFrom("error ", "warning: ", "INFO ", ""), fc.array(piece, { maxLength: 14 }))
	.map(([start, parts]) => `${start}${parts.join("")}`);

/**
 * The plain algorithm, as a model: every line shaped with shapeOf and made a SignalItem; a shape's
 * first LINES_PER_SHAPE distinct lines and its latest one, each with its exact repeats, and a
 * collapsed failure's last line (no pruning: the inputs here have few shapes).
 */
function collectByModel(lines: readonly ScannedLine[], offsets: readonly number[], maxLineChars: number): SignalItem[] {
	interface ModelShape {
		count: number;
		lastLine: number;
		severity: Severity;
		items: SignalItem[];
		latest?: SignalItem;
		/** The shape's last line, as an item that states no count. */
		last?: SignalItem;
		spread: SignalItem[];
		stride: number;
		nextSample: number;
	}
	const shapes = new Map<string, ModelShape>();
	const copies = new Map<SignalItem, { lineNumber: number; offset: number }>();
	lines.forEach((line, index) => {
		const key = shapeOf(line.text);
		const shape = shapes.get(key) ?? {
			count: 0,
			lastLine: 0,
			severity: classifySeverity(line.text),
			items: [],
			spread: [],
			stride: 1,
			nextSample: LINES_PER_SHAPE + 1,
		};
		shapes.set(key, shape);
		shape.count++;
		shape.lastLine = line.lineNumber;
		const clipped =
			line.text.length <= maxLineChars
				? line.text
				: line.keptEnd
					? keepEnd(line.text, maxLineChars)
					: keepStart(line.text, maxLineChars);
		const itemOf = (): SignalItem => ({
			...line,
			text: clipped,
			partial: line.partial || clipped.length < line.text.length,
			offset: offsets[index],
			count: 1,
			severity: shape.severity,
			shapeCount: 1,
		});
		shape.last = itemOf();
		// Every stride-th line from the one after the first distinct lines; full, every other one goes.
		if (shape.count === shape.nextSample) {
			if (shape.spread.length >= SPREAD_LINES_PER_SHAPE) {
				shape.spread = shape.spread.filter((_, k) => k % 2 === 0);
				shape.stride *= 2;
			}
			shape.nextSample = shape.count + shape.stride;
			shape.spread.push(itemOf());
		}
		const same =
			shape.items.find((item) => item.text === line.text) ??
			(shape.latest?.text === line.text ? shape.latest : undefined);
		if (same !== undefined) {
			same.count++;
			// Where its last copy is (a first distinct line's, not the latest's).
			if (same !== shape.latest) copies.set(same, { lineNumber: line.lineNumber, offset: offsets[index] });
			return;
		}
		const text =
			line.text.length <= maxLineChars
				? line.text
				: line.keptEnd
					? keepEnd(line.text, maxLineChars)
					: keepStart(line.text, maxLineChars);
		const item: SignalItem = {
			...line,
			text,
			partial: line.partial || text.length < line.text.length,
			offset: offsets[index],
			count: 1,
			severity: shape.severity,
			shapeCount: 1,
		};
		if (shape.items.length < LINES_PER_SHAPE) shape.items.push(item);
		else shape.latest = item;
	});
	const itemsOf = (shape: ModelShape): SignalItem[] => {
		const candidates = [...shape.items, ...(shape.latest ? [shape.latest] : [])];
		for (const item of candidates) item.shapeCount = shape.count;
		if (shape.count < COLLAPSE_SHAPE_LINES) return candidates;
		const others = shape.count - candidates[0].count;
		const first =
			others > 0 ? { ...candidates[0], similar: { count: others, lastLine: shape.lastLine } } : candidates[0];
		const texts = new Set([first.text]);
		const instances: SignalItem[] = [];
		// A failure's shape shows its last line too, beside the first, when its text is another.
		const last = shape.last as SignalItem;
		if (shape.severity === 2 && !texts.has(last.text)) {
			texts.add(last.text);
			instances.push({ ...last, shapeCount: shape.count, last: true });
		}
		for (const item of [...shape.spread, ...shape.items.slice(1)]) {
			if (texts.has(item.text)) continue;
			texts.add(item.text);
			instances.push({ ...item, count: 1, shapeCount: shape.count, instance: true });
		}
		return [first, ...instances];
	};
	// Then each shape's line printed again, at its last copy: of a shape shown as one, its first line's.
	return [...shapes.values()].flatMap((shape) => [
		...itemsOf(shape),
		...(shape.count >= COLLAPSE_SHAPE_LINES ? shape.items.slice(0, 1) : shape.items).flatMap((item) => {
			const copy = copies.get(item);
			return copy === undefined || item.count > MAX_RERUN_PRINTS
				? []
				: [{ ...item, ...copy, count: 1, shapeCount: shape.count, instance: true as const, repeatOf: item.lineNumber }];
		}),
	]);
}

test("lines taken raw or shaped give exactly what the plain algorithm gives", () => {
	fc.assert(
		fc.property(
			fc.array(line, { minLength: 1, maxLength: 20 }),
			fc.array(fc.nat(), { maxLength: 200 }),
			fc.integer({ min: 8, max: 80 }),
			(pool, picks, maxLineChars) => {
				// Repeats and near-repeats: lines picked from a small pool, some with their digits changed,
				// some ending in "\r" (as a CRLF file's lines reach the collector).
				const raws = picks.map((pick, k) => {
					const text = pool[pick % pool.length];
					const varied = pick % 3 === 0 ? text.replace(/[0-9]/g, (digit) => String((Number(digit) + k) % 10)) : text;
					return k % 5 === 0 ? `${varied}\r` : varied;
				});
				// Every seventh line arrives shaped, as the end of a giant line (keptEnd) does.
				const isGiantEnd = (index: number) => index % 7 === 3;
				const shapedLines = raws.map((raw, index) => {
					const shaped = renderLine(index + 1, raw, keepCharsFor(maxLineChars));
					return isGiantEnd(index) ? { ...shaped, partial: true, keptEnd: true as const } : shaped;
				});
				const offsets = raws.map((_, index) => index * 100);
				const expected = JSON.stringify(collectByModel(shapedLines, offsets, maxLineChars));
				const byRaw = new SignalCollector(maxLineChars);
				const byLine = new SignalCollector(maxLineChars);
				// As a scan's block hands them over: each line's bytes in one buffer, a "\n" after each.
				const byBytes = new SignalCollector(maxLineChars);
				const block = Buffer.from(`${raws.join("\n")}\n`, "utf8");
				let lineStart = 0;
				raws.forEach((raw, index) => {
					if (isGiantEnd(index)) byRaw.add(shapedLines[index], offsets[index]);
					else byRaw.addRaw(index + 1, raw, offsets[index]);
					byLine.add(shapedLines[index], offsets[index]);
					if (isGiantEnd(index)) byBytes.add(shapedLines[index], offsets[index]);
					else byBytes.addRawBytes(index + 1, raw, offsets[index], block, lineStart);
					lineStart += Buffer.byteLength(raw, "utf8") + 1;
				});
				assert.equal(JSON.stringify(byRaw.items()), expected, "addRaw");
				assert.equal(JSON.stringify(byLine.items()), expected, "add");
				assert.equal(JSON.stringify(byBytes.items()), expected, "addRawBytes");
				assert.equal(byBytes.matches, raws.length);
			},
		),
		// A line longer than what the scan keeps of it (keepChars) is judged by its kept start: here a
		// note, its failure word cut off.
		{ numRuns: 500, examples: [[[`note ${"b".repeat(1100)} failed`], [0, 0], 8]] },
	);
});

test("a flood of one shape taken as bytes only counts once shown as one line, and every count stays exact", () => {
	const lines = Array.from({ length: 5000 }, (_, index) =>
		index % 4 === 0 ? "ERROR: connection refused host-7:5432" : `ERROR: connection refused host-${index % 10}:5432`,
	);
	const block = Buffer.from(`${lines.join("\n")}\n`);
	const byBytes = new SignalCollector(MAX_LINE_CHARS);
	const byLine = new SignalCollector(MAX_LINE_CHARS);
	let lineStart = 0;
	lines.forEach((text, index) => {
		byBytes.addRawBytes(index + 1, text, lineStart * 1, block, lineStart);
		byLine.add(renderLine(index + 1, text, keepCharsFor(MAX_LINE_CHARS)), lineStart);
		lineStart += text.length + 1;
	});
	const items = byBytes.items();
	assert.deepEqual(items, byLine.items());
	// The last line stands beside the first; the others are instances. None states a count.
	assert.equal(items[1]!.lineNumber, 5000);
	assert.equal(items[1]!.text, "ERROR: connection refused host-9:5432");
	assert.ok(items.slice(1).every((item, index) => (index === 0) !== (item.instance === true) && item.count === 1));
	// host-7 is the first line's text: a quarter of the lines plus every tenth of the others.
	const first = items[0]!;
	assert.equal(first.text, "ERROR: connection refused host-7:5432");
	assert.equal(first.count, lines.filter((line) => line === first.text).length);
	assert.deepEqual(first.similar, { count: 5000 - first.count, lastLine: 5000 });
	assert.equal(first.shapeCount, 5000);
});

test("lines taken as bytes are like the last one only when every byte but a digit is the same", () => {
	// Same lengths, differing in their first or last byte, or in a digit against a letter.
	const lines = [
		...Array.from({ length: 10 }, (_, index) => `error: stage ${index} failed A`),
		"error: stage 3 failed B",
		"Error: stage 3 failed A",
		"error: stage x failed A",
	];
	const block = Buffer.from(`${lines.join("\n")}\n`);
	const byBytes = new SignalCollector(MAX_LINE_CHARS);
	const byLine = new SignalCollector(MAX_LINE_CHARS);
	let lineStart = 0;
	lines.forEach((text, index) => {
		byBytes.addRawBytes(index + 1, text, lineStart, block, lineStart);
		byLine.add(renderLine(index + 1, text, keepCharsFor(MAX_LINE_CHARS)), lineStart);
		lineStart += text.length + 1;
	});
	assert.deepEqual(byBytes.items(), byLine.items());
	// Three shapes (the digits' one collapsed, with its first and last line), and the others.
	assert.equal(byBytes.items().filter((item) => !item.instance).length, 5);
});

test("a line taken raw is rendered, even after a line like it was added with its control characters", () => {
	// A line that reaches add() unrendered (a text kept from an earlier scan) must not let a raw
	// line with the same control characters skip rendering.
	const collector = new SignalCollector(MAX_LINE_CHARS);
	collector.add({ lineNumber: 1, text: "error: step 1 \x01 failed", totalChars: 24, partial: false }, 0);
	for (let n = 2; n <= 6; n++) collector.addRaw(n, `error: step ${n} \x01 failed`, n * 30);
	const texts = collector.items().map((item) => item.text);
	assert.ok(texts.includes("error: step 2 \ufffd failed"), JSON.stringify(texts));
});

// What the collector's shape memo relies on (src/signals/shape.ts shapeOf, src/lines/render.ts renderTerminalLine).

test("shapeOf gives lines that differ only in their digits one shape, when no digit stands before an x", () => {
	fc.assert(
		fc.property(line, fc.array(fc.nat({ max: 9 }), { minLength: 1, maxLength: 20 }), (text, digits) => {
			fc.pre(!/[0-9][xX]/.test(text));
			let k = 0;
			const other = text.replace(/[0-9]/g, () => String(digits[k++ % digits.length]));
			assert.equal(shapeOf(other), shapeOf(text));
		}),
		{ numRuns: 2000 },
	);
});

test("renderTerminalLine shows its own output as it is, and so a line like it but for its digits", () => {
	fc.assert(
		fc.property(line, fc.nat({ max: 9 }), (text, digit) => {
			const shown = renderTerminalLine(text);
			assert.equal(renderTerminalLine(shown), shown);
			const other = shown.replace(/[0-9]/g, String(digit));
			assert.equal(renderTerminalLine(other), other);
		}),
		{ numRuns: 2000 },
	);
});

test("a level every line carries in its frame says nothing of a line: its severity is read past the frame", () => {
	// Ruby's Logger wrapping a build: `INFO -- :` before every line the build printed, its errors too.
	const prefix = (n: number) => `I, [2026-12-06T09:30:${String(n % 60).padStart(2, "0")}.123456 #4123]  INFO -- : `;
	const kinds = [
		"Compiling cart v0.1.0",
		"warning: unused variable `v`",
		"  --> src/cart.c:3:7",
		"Downloading rates",
		"done.",
	];
	const lines = Array.from({ length: 40 }, (_, i) =>
		i === 20 ? "src/cart.c:12:5: error: ‘rate’ undeclared" : kinds[i % kinds.length]!,
	).map((line, i) => prefix(i) + line);
	const frame = learnLineFrame(lines);
	assert.deepEqual(frame?.tokens.slice(-3), ["INFO", "--", ":"]);
	const severityOf = (collector: SignalCollector) => {
		lines.forEach((line, i) => collector.addRaw(i + 1, line, i * 100));
		return collector.items().find((item) => item.lineNumber === 21)?.severity;
	};
	assert.equal(severityOf(new SignalCollector(MAX_LINE_CHARS, frame)), SEVERITY_ERROR);
	// Read with the frame's level, every line is a warning.
	assert.equal(severityOf(new SignalCollector(MAX_LINE_CHARS)), SEVERITY_WARNING);
});
