// Hostile content through the bound stage: empty output, only newlines, CRLF and lone CR, NUL
// bytes, invalid UTF-8 (through a spill file), a single 50 MB line, 1 000 000 one-character lines,
// ANSI escape floods, a JSON array of 1 000 000 items, right-to-left and combining characters, and
// 4-byte emoji cut at the 1 MiB read-chunk boundary or at the maxEntryBytes cut. Every time: the
// view is bounded, its line numbers are the editor's (totalLines as an editor counts them, the last
// line shown with its number), every shown line is the stored line with that number, there is no
// U+FFFD where the input was valid, and the stored bytes are the original's. The time of each case
// is measured and the worst is printed. Two cases also go through the real Pi runtime in
// test/e2e/bound.test.ts.

import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { boundToolResult, type ToolResultInput, type ToolResultPatch } from "../../src/bound/bound.js";
import { createDefaultConfig, type OverflowConfig } from "../../src/config/config.js";
import { READ_CHUNK_BYTES } from "../../src/io/source.js";
import { createStash } from "../../src/intake/stash.js";
import { type EntryMeta, OverflowStore } from "../../src/store/index.js";
import { keepEnd } from "../../src/lines/text.js";
import { HOSTILE_INVALID_UTF8, HOSTILE_MIXED_LINES } from "../fixtures/ext/robust-tools.js";
import { countEditorLines, parseShownLines } from "../helpers/robust-common.js";
import { createTempDir } from "../helpers/tmp.js";

const MIB = 1024 * 1024;
const EMOJI = "😀"; // F0 9F 98 80
const timings: { name: string; ms: number; bytes: number }[] = [];

interface Bounded {
	patch: ToolResultPatch | undefined;
	view: string;
	id: string;
	stored: Buffer;
	/** The whole output, whose line numbers the view shows. */
	original: Buffer;
	meta: EntryMeta;
	overflow: { id?: string; totalLines: number; totalBytes: number; truncated: boolean };
	ms: number;
}

interface BoundOptions {
	/** The text the tool returned (what the model would see without pi-overflow). */
	text: string;
	/** Pi's bash spill file, holding the whole output. */
	spill?: Buffer;
	config?: Partial<OverflowConfig>;
	/** The output is CR-separated records (no LF, at least one CR): its lines are its records. */
	records?: boolean;
}

/** Runs one result through boundToolResult with a real store in a fresh directory, timed. */
async function bound(t: Parameters<typeof createTempDir>[0], name: string, options: BoundOptions): Promise<Bounded> {
	const dir = await createTempDir(t);
	const root = join(dir, "my-pi", "pi-overflow");
	const config = { ...createDefaultConfig(), ...options.config };
	const store = new OverflowStore({ root });
	let details: unknown;
	let text = options.text;
	if (options.spill) {
		const path = join(dir, "pi-bash-0123abcd.log");
		writeFileSync(path, options.spill);
		details = { fullOutputPath: path };
		// What the tool shows of its spill file: its decoded end, as long as the text the case asked for.
		text = keepEnd(new TextDecoder().decode(options.spill), options.text.length);
	}
	const event: ToolResultInput = {
		toolName: "bash",
		toolCallId: "call-hostile",
		content: [{ type: "text", text }],
		details,
		isError: false,
	};
	const started = performance.now();
	const patch = await boundToolResult(event, { config, store, sessionId: "robust-content", stash: createStash() });
	const ms = performance.now() - started;
	const bytes = options.spill?.length ?? Buffer.byteLength(options.text);
	timings.push({ name, ms, bytes });
	t.diagnostic(`${name}: ${ms.toFixed(0)} ms for ${bytes} bytes`);
	assert.ok(patch, "the result was bounded");
	const view = patch.content.flatMap((part) => (part.type === "text" ? [part.text] : [])).join("\n");
	assert.ok(view.length <= config.thresholdChars, `the view has ${view.length} > ${config.thresholdChars} characters`);
	const overflow = (patch.details as { overflow: Bounded["overflow"] }).overflow;
	assert.ok(overflow.id, `stored (${JSON.stringify(overflow)})`);
	const stored = readFileSync(join(root, `${overflow.id}.txt`));
	const meta = await store.readMeta(overflow.id);
	assert.ok(meta, "the metadata reads back");
	const original = options.spill ?? Buffer.from(options.text, "utf8");
	assert.equal(overflow.totalBytes, original.length, "the output's own size");
	assert.equal(meta.totalBytes, original.length);
	assert.equal(meta.storedBytes, stored.length);
	const lines = options.records ? countRecords(original) : countEditorLines(original);
	assert.equal(overflow.totalLines, lines, "totalLines counts lines as an editor does");
	assert.equal(meta.totalLines, lines);
	// A CR-separated copy's lines are its records, as overflow_query reads it.
	assert.equal(meta.storedLines, options.records ? countRecords(stored) : countEditorLines(stored));
	return { patch, view, id: overflow.id, stored, original, meta, overflow, ms };
}

/** CR-separated records: CRs, plus 1 for a last record without one. */
function countRecords(bytes: Buffer): number {
	let records = 0;
	for (let at = bytes.indexOf(0x0d); at !== -1; at = bytes.indexOf(0x0d, at + 1)) records++;
	return records + (bytes.length > 0 && bytes[bytes.length - 1] !== 0x0d ? 1 : 0);
}

/** The stored text split into editor lines (a final newline does not start another line). */
function splitEditorLines(stored: Buffer): Buffer[] {
	const lines: Buffer[] = [];
	let start = 0;
	for (let at = stored.indexOf(0x0a); at !== -1; at = stored.indexOf(0x0a, start)) {
		lines.push(stored.subarray(start, at));
		start = at + 1;
	}
	if (start < stored.length) lines.push(stored.subarray(start));
	return lines;
}

/** How a plain line is shown: UTF-8 decoded, its CR line ending dropped. */
function renderPlain(line: Buffer): string {
	return line.toString("utf8").replace(/\r$/, "");
}

/**
 * Every numbered line of the view is the stored line with that number, as `render` shows it
 * (whole, or clipped with a note of how much was cut); numbers rise; the last line is shown.
 */
/** Every shown line is the output's line of that number (the stored copy may leave out the middle). */
function assertShownLinesTrue(result: Bounded, render: (line: Buffer) => string = renderPlain): number {
	const lines = splitEditorLines(result.original);
	const shown = [...parseShownLines(result.view)];
	assert.ok(shown.length > 0, "the view shows lines");
	let previous = 0;
	for (const [number, text] of shown) {
		assert.ok(number > previous && number <= lines.length, `line number ${number} in order and within ${lines.length}`);
		previous = number;
		const expected = render(lines[number - 1]);
		const body = text.replace(/ {2}\[×\d+\]$/, "");
		if (body === expected) continue;
		const clippedEnd = /^(.*) … \[\+(\d+) chars\]$/s.exec(body);
		const clippedStart = /^\[\+(\d+) chars\] … (.*)$/s.exec(body);
		if (clippedEnd) assert.ok(expected.startsWith(clippedEnd[1]), `line ${number}: a clipped line shows its start`);
		else if (clippedStart)
			assert.ok(expected.endsWith(clippedStart[2]), `line ${number}: a clipped line shows its end`);
		else assert.equal(body, expected, `line ${number} is shown as stored`);
	}
	assert.equal(previous, lines.length, "the last line is shown");
	return shown.length;
}

function assertNoReplacementCharacter(result: Bounded): void {
	assert.ok(!result.view.includes("\ufffd"), "no U+FFFD in the view of valid input");
	assert.ok(!result.stored.toString("utf8").includes("\ufffd"), "the stored text is valid UTF-8");
}

test("an empty output and a short output of only newlines are left alone", async (t) => {
	const dir = await createTempDir(t);
	const store = new OverflowStore({ root: join(dir, "store") });
	for (const text of ["", "\n", "\n".repeat(1000), "\r\n".repeat(500)]) {
		const event: ToolResultInput = { toolName: "bash", toolCallId: "call-empty", content: [{ type: "text", text }] };
		assert.equal(
			await boundToolResult(event, { config: createDefaultConfig(), store, sessionId: "s", stash: createStash() }),
			undefined,
		);
	}
	const noText: ToolResultInput = { toolName: "bash", toolCallId: "call-none", content: [] };
	assert.equal(
		await boundToolResult(noText, { config: createDefaultConfig(), store, sessionId: "s", stash: createStash() }),
		undefined,
	);
});

// Pi sets details.fullOutputPath when the raw output passed 50 KB, even if stripping escapes brought
// it back under: such a spill file was not cut, and SPEC says "otherwise → do nothing".
test("a spill file no longer than the current text costs nothing: no entry, no marker", async (t) => {
	const dir = await createTempDir(t);
	const root = join(dir, "store");
	const text = "colored output, already short\n".repeat(100);
	for (const [name, spill] of [
		["equal", text],
		["empty", ""],
	] as const) {
		const path = join(dir, `pi-bash-${name}.log`);
		writeFileSync(path, spill);
		const event: ToolResultInput = {
			toolName: "bash",
			toolCallId: `call-${name}`,
			content: [{ type: "text", text: spill }],
			details: { fullOutputPath: path },
		};
		const patch = await boundToolResult(event, {
			config: createDefaultConfig(),
			store: new OverflowStore({ root }),
			sessionId: "s",
			stash: createStash(),
		});
		assert.equal(patch, undefined, `${name}: the result is left alone`);
	}
});

test("100 000 empty lines: 100 000 lines, each numbered, the last one shown", async (t) => {
	const text = "\n".repeat(100_000);
	const result = await bound(t, "only newlines", { text });
	assert.equal(result.overflow.totalLines, 100_000);
	assert.ok(result.stored.equals(Buffer.from(text)));
	assertShownLinesTrue(result);
	assert.match(result.view, /\n100000: \n/);
	assertNoReplacementCharacter(result);
});

test("CRLF line endings: lines counted on LF, the CR shown as part of the ending, stored untouched", async (t) => {
	const text = Array.from({ length: 50_000 }, (_, i) => `line ${i + 1} ends in CRLF`).join("\r\n") + "\r\n";
	const result = await bound(t, "CRLF", { text });
	assert.equal(result.overflow.totalLines, 50_000);
	assert.ok(result.stored.equals(Buffer.from(text)));
	assert.ok(!result.view.includes("\r"), "no CR reaches the model");
	assertShownLinesTrue(result);
	assert.match(result.view, /\n 50000: line 50000 ends in CRLF\n/);
	assertNoReplacementCharacter(result);
});

test("lone CRs: a redrawn progress line shows its final state, a CR-only output is its records", async (t) => {
	const bar = Array.from({ length: 2000 }, (_, i) => `downloading ${String(i).padStart(4, " ")}/1999`).join("\r");
	const text = `${bar}\r\x1b[2Kdownload complete\n${"step ok\n".repeat(30_000)}${bar}\rfinal: error in step 30001\n`;
	const result = await bound(t, "lone CR", { text });
	assert.equal(result.overflow.totalLines, 30_002);
	assert.ok(result.stored.equals(Buffer.from(text)));
	assert.ok(!result.view.includes("\r"));
	const shown = parseShownLines(result.view);
	assert.equal(shown.get(1), "download complete", "erase-line then the final draw");
	// A shorter final draw over a longer one leaves the longer one's end visible, as a terminal does.
	assert.equal(shown.get(30_002), "final: error in step 30001");
	assertNoReplacementCharacter(result);

	const onlyCr = await bound(t, "CR only", { text: "spinner\r".repeat(100_000), records: true });
	assert.equal(onlyCr.overflow.totalLines, 100_000);
	assert.equal(onlyCr.meta.separator, "cr");
	assert.equal(parseShownLines(onlyCr.view).get(1), "spinner");
	assert.equal(parseShownLines(onlyCr.view).get(100_000), "spinner");
});

test("NUL bytes are stored byte for byte and never reach the model raw", async (t) => {
	const text = Array.from({ length: 20_000 }, (_, i) => `record\0${i}\0end`).join("\n");
	const result = await bound(t, "NUL bytes", { text });
	assert.ok(result.stored.equals(Buffer.from(text)));
	assert.equal(result.overflow.totalLines, 20_000, "no final newline: the last partial line counts");
	assert.ok(!result.view.includes("\0"));
	// The view shows each control character as U+FFFD, so a line stays one line: exactly where the NULs were.
	assertShownLinesTrue(result, (line) => renderPlain(line).replaceAll("\0", "\ufffd"));
	const shown = parseShownLines(result.view);
	assert.equal(shown.get(20_000), "record\ufffd19999\ufffdend");
});

test("invalid UTF-8 in a spill file is stored byte for byte and shown with U+FFFD only where it was invalid", async (t) => {
	const invalid = Buffer.from(HOSTILE_INVALID_UTF8, "latin1");
	const spill = Buffer.concat([
		Buffer.from("valid line é ✓\n".repeat(5000)),
		invalid,
		Buffer.from("last valid line ✓\n"),
	]);
	const result = await bound(t, "invalid UTF-8 spill", { text: "valid line é ✓\n".repeat(3000), spill });
	assert.ok(result.stored.equals(spill), "byte for byte, invalid bytes included");
	assert.equal(result.meta.source, "spill-file");
	assertShownLinesTrue(result);
	const shown = parseShownLines(result.view);
	for (const [number, text] of shown) {
		const original = splitEditorLines(spill)[number - 1];
		const valid = Buffer.from(original.toString("utf8"), "utf8").equals(original);
		assert.equal(text.includes("\ufffd"), !valid, `line ${number}: U+FFFD exactly where the bytes were invalid`);
	}
	assert.equal(shown.get(countEditorLines(spill)), "last valid line ✓");
});

test("a single 50 MB line is stored whole when maxEntryBytes allows, counted as one line, and bounded", async (t) => {
	const text = `ERROR at the start ${"x".repeat(50 * 1000 * 1000)} the very end`;
	const result = await bound(t, "one 50 MB line", { text, config: { maxEntryBytes: 64 * MIB } });
	assert.equal(result.overflow.totalLines, 1);
	assert.equal(result.overflow.truncated, false);
	assert.ok(result.stored.equals(Buffer.from(text)));
	assertShownLinesTrue(result);
	assertNoReplacementCharacter(result);
});

test("a single 50 MB line of 2-byte characters over maxEntryBytes keeps its head and tail cut on character boundaries", async (t) => {
	const text = "é".repeat(25 * 1000 * 1000 + 1);
	const result = await bound(t, "one 50 MB line, capped", { text });
	const config = createDefaultConfig();
	assert.equal(result.overflow.truncated, true);
	assert.ok(result.stored.length <= config.maxEntryBytes, "within maxEntryBytes");
	const original = Buffer.from(text);
	assert.ok(result.stored.subarray(0, 4096).equals(original.subarray(0, 4096)), "head kept");
	assert.ok(result.stored.subarray(-4096).equals(original.subarray(-4096)), "tail kept");
	assert.match(
		result.stored.toString("utf8"),
		/\n\[pi-overflow: part of line 1 \(\d+ bytes\) left out of the stored copy; the output was 50000002 bytes/,
	);
	assertNoReplacementCharacter(result);
	assertShownLinesTrue(result);
});

test("1 000 000 one-character lines: numbered to 1000000, with and without a final newline", async (t) => {
	for (const [name, text] of [
		["1 000 000 lines", "a\n".repeat(1_000_000)],
		["1 000 000 lines, no final newline", `${"a\n".repeat(999_999)}z`],
	] as const) {
		const result = await bound(t, name, { text });
		assert.equal(result.overflow.totalLines, 1_000_000);
		assert.ok(result.stored.equals(Buffer.from(text)));
		assertShownLinesTrue(result);
		assert.match(result.view, new RegExp(`\\n1000000: ${text.endsWith("z") ? "z" : "a"}\\n`));
	}
});

test("1 000 000 distinct error lines: every line a signal candidate, still bounded with exact numbers", async (t) => {
	const text = Array.from({ length: 1_000_000 }, (_, i) => `error: failure number ${i + 1}`).join("\n");
	const result = await bound(t, "1 000 000 distinct error lines", { text });
	assert.equal(result.overflow.totalLines, 1_000_000);
	assert.ok(result.stored.equals(Buffer.from(text)));
	const shown = assertShownLinesTrue(result);
	assert.ok(shown > 40, "head, signal lines and tail are shown");
	assert.match(result.view, /showing head, \d+ signal lines, tail/);
});

test("ANSI escape floods are removed from the view, never from the store, even across a read-chunk boundary", async (t) => {
	const colored = Array.from(
		{ length: 50_000 },
		(_, i) => `\x1b[1;31m\x1b[48;5;200mline ${i + 1}\x1b[0m \x1b]8;;http://x\x07link\x1b]8;;\x07`,
	).join("\n");
	const result = await bound(t, "ANSI on every line", { text: colored });
	assert.ok(result.stored.equals(Buffer.from(colored)));
	assert.ok(!result.view.includes("\x1b"));
	assertShownLinesTrue(result, (line) => `line ${line.toString().match(/line (\d+)/)?.[1]} link`);
	assertNoReplacementCharacter(result);

	// An escape sequence split by the 1 MiB chunk boundary, then 45 KB of escapes on one line, then text.
	const prefix = "padding line\n".repeat(Math.floor((READ_CHUNK_BYTES - 100) / 13));
	const pad = "p".repeat(READ_CHUNK_BYTES - 2 - Buffer.byteLength(prefix));
	const flood = `${"\x1b[31m\x1b[0m".repeat(5_000)}visible after the flood\n`;
	const split = `${prefix}${pad}\x1b[32msplit escape\x1b[0m\n${flood}${"tail\n".repeat(10)}`;
	assert.equal(Buffer.from(split).indexOf("\x1b[32m"), READ_CHUNK_BYTES - 2, "the escape straddles the chunk boundary");
	const spilled = await bound(t, "ANSI flood and split escape", {
		text: "tail\n".repeat(5000),
		spill: Buffer.from(split),
	});
	assert.ok(spilled.stored.equals(Buffer.from(split)));
	assert.ok(
		!spilled.view.includes("\x1b") && !spilled.view.includes("[32m") && !spilled.view.includes("[31m"),
		"no escape or escape residue in the view",
	);
	const shown = [...parseShownLines(spilled.view).values()];
	assert.ok(
		shown.some((line) => line.endsWith("psplit escape")),
		"the split line shows its text",
	);
	assert.ok(
		shown.some((line) => line.endsWith("visible after the flood")),
		"the flooded line shows its text",
	);
});

// A line longer than GIANT_LINE_KEEP_BYTES keeps only its two ends, cut at arbitrary bytes: an
// escape sequence cut in two must leave no residue, and an invisible start gives way to the end.
test("a line of 90 KB of ANSI escapes followed by text shows the text, with no escape residue", async (t) => {
	const flood = `${"\x1b[31m\x1b[0m".repeat(10_000)}visible after the flood\n`;
	const text = `${"a\n".repeat(30_000)}${flood}${"tail\n".repeat(10)}`;
	const result = await bound(t, "giant ANSI line", { text });
	assert.ok(result.stored.equals(Buffer.from(text)));
	const line = parseShownLines(result.view).get(30_001) ?? "";
	// The clip note ("[+N chars] …") is the view's own; what must not appear is a piece of an escape.
	assert.ok(
		!line.includes("\ufffd") && !/\[[0-9;]*m|\x1b/.test(line),
		`no escape residue: ${JSON.stringify(line.slice(0, 40))}`,
	);
	assert.ok(line.includes("visible after the flood"), "the visible text of the line is shown");
});

test("a JSON array of 1 000 000 items, on one line and one item per line, is bounded with exact line numbers", async (t) => {
	const items = Array.from({ length: 1_000_000 }, (_, i) => i);
	const compact = JSON.stringify(items);
	const oneLine = await bound(t, "JSON 1 000 000 items, one line", { text: compact });
	assert.equal(oneLine.overflow.totalLines, 1);
	assert.ok(oneLine.stored.equals(Buffer.from(compact)));
	assertShownLinesTrue(oneLine);

	const perLine = JSON.stringify(items, null, 1);
	const many = await bound(t, "JSON 1 000 000 items, one per line", { text: perLine });
	assert.equal(many.overflow.totalLines, 1_000_002);
	assert.ok(many.stored.equals(Buffer.from(perLine)));
	assertShownLinesTrue(many);
	assert.match(many.view, /\n1000001:  999999\n1000002: \]\n/);
	assertNoReplacementCharacter(many);
});

test("right-to-left scripts, combining marks and joined emoji are shown exactly as written", async (t) => {
	const text = `${Array.from({ length: 24_000 }, (_, i) => `${i + 1} ${HOSTILE_MIXED_LINES[i % HOSTILE_MIXED_LINES.length]}`).join("\n")}\n`;
	const result = await bound(t, "RTL and combining", { text });
	assert.ok(result.stored.equals(Buffer.from(text)));
	assertShownLinesTrue(result);
	assertNoReplacementCharacter(result);
	assert.ok(result.view.includes(`24000 ${HOSTILE_MIXED_LINES[23_999 % HOSTILE_MIXED_LINES.length]}`));
});

test("a 4-byte emoji cut by the 1 MiB read-chunk boundary is shown whole, in a short line and in a giant one", async (t) => {
	const before = "filler line\n".repeat(Math.floor((READ_CHUNK_BYTES - 40) / 12));
	const lead = "error: emoji ";
	// Pad so the emoji starts 2 bytes before the boundary: its bytes land in two chunks.
	const pad = "-".repeat(READ_CHUNK_BYTES - 2 - Buffer.byteLength(before) - Buffer.byteLength(lead));
	const text = `${before}${lead}${pad}${EMOJI} after\n${"tail line\n".repeat(20)}`;
	const at = Buffer.from(text).indexOf(Buffer.from(EMOJI));
	assert.equal(at, READ_CHUNK_BYTES - 2, "the emoji straddles the boundary");
	for (const [name, options] of [
		["emoji at the chunk boundary, from memory", { text }],
		["emoji at the chunk boundary, from a spill file", { text: "tail line\n".repeat(3000), spill: Buffer.from(text) }],
	] as const) {
		const result = await bound(t, name, options);
		assert.ok(result.stored.equals(Buffer.from(text)));
		assertShownLinesTrue(result);
		assertNoReplacementCharacter(result);
		assert.ok(result.view.includes(`${EMOJI} after`), "the emoji is shown whole");
	}

	// A giant line (beyond what the scanner keeps whole) made of emoji, its bytes split at every chunk boundary.
	const giant = `${EMOJI.repeat(Math.ceil((3 * READ_CHUNK_BYTES + 2) / 4))}\n`;
	const giantSpill = Buffer.concat([Buffer.from("xy"), Buffer.from(giant)]);
	const result = await bound(t, "giant emoji line", { text: "short\n".repeat(5000), spill: giantSpill });
	assert.ok(result.stored.equals(giantSpill));
	assertNoReplacementCharacter(result);
	assertShownLinesTrue(result);
});

test("4-byte emoji at the maxEntryBytes cut: the stored head and tail stay valid UTF-8", async (t) => {
	// No newline within 64 KiB of either cut: the cut falls back to a character boundary.
	const spill = Buffer.from(`x${EMOJI.repeat(800_000)}\n`);
	const result = await bound(t, "emoji at the maxEntryBytes cut", {
		text: "y\n".repeat(20_000),
		spill,
		config: { maxEntryBytes: MIB },
	});
	assert.equal(result.overflow.truncated, true);
	assert.ok(result.stored.length <= MIB);
	assertNoReplacementCharacter(result);
	assertShownLinesTrue(result);
});

// Times are printed, not asserted: `npm run bench` measures the bound stage against grep (its
// "1 000 000 distinct error lines" row is this suite's slowest case).
test("every hostile case was bounded (times printed)", (t) => {
	assert.ok(timings.length >= 15, "every case was measured");
	const worst = timings.reduce((a, b) => (b.ms > a.ms ? b : a));
	const table = timings.map((entry) => `${entry.name} ${entry.ms.toFixed(0)} ms`).join("; ");
	t.diagnostic(
		`hostile content: worst case "${worst.name}" ${worst.ms.toFixed(0)} ms for ${(worst.bytes / 1e6).toFixed(1)} MB; ${table}`,
	);
});
