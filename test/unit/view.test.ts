// Tests for src/view/view.ts: the bounded view's guarantees (size, true line numbers, the end always
// visible, signal selection, clipping, terminal rendering, determinism) on ordinary and adversarial
// inputs. Every view built here is checked line by line against the original text.

import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, test } from "node:test";
import fc from "fast-check";
import { createDefaultConfig } from "../../src/config/config.js";
import { scanText } from "../../src/scan/scan.js";
import { markTemplateFamilies } from "../../src/signals/shape.js";
import { DEFAULT_SIGNAL_PATTERN } from "../../src/signals/pattern.js";
import { buildView, renderTerminalLine, type ViewOptions } from "../../src/view/view.js";
import { buildViewFromFile, buildViewFromText } from "../../src/view/compose.js";
import { foldRuns, TAIL_UNFOLDED_LINES } from "../../src/view/rows.js";
import type { ScannedLine } from "../../src/lines/render.js";
import { createTempDir } from "../helpers/tmp.js";
import { isShownInView, loadRealFixtures, parseViewLines, showLine } from "../fixtures/real/fixtures.js";
import { loadTuningFixtures } from "../fixtures/tuning.js";
import { chunkLine, interleaved } from "../fixtures/ci/frames.js";

function viewOptions(overrides: Partial<ViewOptions> = {}): ViewOptions {
	return {
		thresholdChars: 24000,
		headLines: 60,
		tailLines: 80,
		maxSignalLines: 40,
		maxLineChars: 500,
		signalRegex: new RegExp(DEFAULT_SIGNAL_PATTERN, "i"),
		id: "0123456789ab",
		toolName: "bash",
		...overrides,
	};
}

/** The lines of a text as an editor numbers them (a final newline starts no extra line; "\r\n" ends a line). */
function splitLines(text: string): string[] {
	if (text.length === 0) return [];
	const lines = text.split("\n");
	if (text.endsWith("\n")) lines.pop();
	return lines.map((line) => (line.endsWith("\r") ? line.slice(0, -1) : line));
}

interface ShownLine {
	lineNumber: number;
	/** The line's text as shown, without its clipping note and repeat count. */
	text: string;
	/** Characters the view says it cut (0 when the line is whole). */
	cut: number;
	/** Which end was kept when the line was cut. */
	kept: "whole" | "start" | "end";
	count: number;
	/** Shown as context around a signal line ("N- "), not for itself ("N: "). */
	context: boolean;
	/** Shown in the tail: below the view's "... tail (last N lines) ..." notice, or in a view without a middle. */
	inTail: boolean;
	/** The line whose exact text this line's note says it repeats (`[the same as line N]`). */
	sameAs?: number;
}

const NUMBERED_LINE = /^\s*(\d+)\D/;

/** Parses the numbered lines of a view. */
function shownLines(view: string): ShownLine[] {
	const shown: ShownLine[] = [];
	// The tail starts below its notice; a view without a middle has none: below the omitted-lines notice.
	const tailNotice = /^ {2}\.\.\. tail \(last \d+ lines?\) \.\.\.$/;
	const tailStart = view.split("\n").some((line) => tailNotice.test(line))
		? tailNotice
		: /^ {2}\.\.\. \d+ lines? omitted/;
	let inTail = false;
	for (const line of view.split("\n")) {
		if (tailStart.test(line)) inTail = true;
		const numbered = NUMBERED_LINE.exec(line);
		if (!numbered) continue;
		const match = /^\s*(\d+)([:-]) (.*)$/s.exec(line);
		assert.ok(
			match,
			`a numbered line has "N: " (or "N- " for context) before its text: ${JSON.stringify(line.slice(0, 80))}`,
		);
		let body = match[3];
		const context = match[2] === "-";
		let count = 1;
		let sameAs: number | undefined;
		const note =
			/ {2}\[(?:(?:at least )?×(\d+)\]|the same as line (\d+)\]|(?:at least )?×\d+ (?:signal )?lines of this shape(?:, the last (?:found )?at line \d+)?\]|a rare line(?:: its shape appears (?:once|\d+ times(?:, in a row to line \d+)?))?\])$/.exec(
				body,
			);
		if (note) {
			if (note[1] !== undefined) count = Number(note[1]);
			if (note[2] !== undefined) sameAs = Number(note[2]);
			body = body.slice(0, -note[0].length);
		}
		const clippedEnd = /^(.*) … \[\+(\d+) chars\]$/s.exec(body);
		const clippedStart = /^\[\+(\d+) chars\] … (.*)$/s.exec(body);
		const lineNumber = Number(match[1]);
		if (clippedEnd)
			shown.push({
				lineNumber,
				text: clippedEnd[1],
				cut: Number(clippedEnd[2]),
				kept: "start",
				count,
				context,
				inTail,
				...(sameAs !== undefined ? { sameAs } : {}),
			});
		else if (clippedStart)
			shown.push({
				lineNumber,
				text: clippedStart[2],
				cut: Number(clippedStart[1]),
				kept: "end",
				count,
				context,
				inTail,
				...(sameAs !== undefined ? { sameAs } : {}),
			});
		else
			shown.push({
				lineNumber,
				text: body,
				cut: 0,
				kept: "whole",
				count,
				context,
				inTail,
				...(sameAs !== undefined ? { sameAs } : {}),
			});
	}
	return shown;
}

/**
 * Checks a view against its original: it fits, every shown line carries its true number and its
 * true text (as a terminal shows it, clipped with an exact count of the cut characters), line
 * numbers only grow, and the last line is there.
 */
function assertFaithfulView(view: string, original: string | string[], options: ViewOptions): ShownLine[] {
	const lines = typeof original === "string" ? splitLines(original) : original;
	assert.ok(view.length <= options.thresholdChars, `view is ${view.length} chars, more than ${options.thresholdChars}`);
	assert.ok(!view.includes("\x1b"), "no escape sequence reaches the view");
	const shown = shownLines(view);
	let previous = 0;
	for (const line of shown) {
		assert.ok(line.lineNumber > previous, `line ${line.lineNumber} comes after line ${previous}`);
		previous = line.lineNumber;
		assert.ok(line.lineNumber >= 1 && line.lineNumber <= lines.length, `line number ${line.lineNumber} exists`);
		const expected = renderTerminalLine(lines[line.lineNumber - 1]);
		const where = `line ${line.lineNumber}`;
		// A repeat's note is true: the line it names came before, with exactly its text.
		if (line.sameAs !== undefined)
			assert.ok(
				line.sameAs < line.lineNumber && lines[line.sameAs - 1] === lines[line.lineNumber - 1],
				`${where} is the same as line ${line.sameAs}`,
			);
		if (line.kept === "whole") {
			assert.equal(line.text, expected, where);
		} else {
			assert.ok(line.text.length <= options.maxLineChars, `${where} is clipped to maxLineChars`);
			if (line.kept === "start") assert.ok(expected.startsWith(line.text), `${where} shows the line's start`);
			else assert.ok(expected.endsWith(line.text), `${where} shows the line's end`);
			assert.equal(line.text.length + line.cut, expected.length, `${where}: the note counts the cut characters`);
		}
	}
	if (lines.length > 0) assert.equal(shown.at(-1)?.lineNumber, lines.length, "the last line is shown, last");
	return shown;
}

/** A word of letters only, distinct for each n: lines that differ by it have distinct shapes. */
function word(n: number): string {
	return n.toString(26).replace(/[0-9]/g, (digit) => String.fromCharCode(113 + Number(digit)));
}

/**
 * bandit-like: 600 uniform low findings of six lines, one high finding (its first line is line 1801)
 * whose Location line is of a common shape.
 */
function banditLike(): string[] {
	const lines: string[] = [];
	for (let i = 0; i < 600; i++) {
		const high = i === 300;
		lines.push(
			high
				? ">> Issue: [B602:subprocess_popen_with_shell_equals_true] subprocess call with shell=True identified, security issue."
				: ">> Issue: [B603:subprocess_without_shell_equals_true] subprocess call - check for execution of untrusted input.",
			high ? "   Severity: High   Confidence: High" : "   Severity: Low   Confidence: High",
			`   Location: opstools/task_${String(i).padStart(3, "0")}.py:${13 + (i % 7)}`,
			`   More Info: https://bandit.readthedocs.io/en/latest/plugins/${high ? "b602" : "b603"}.html`,
			`${13 + (i % 7)}\t    subprocess.run(cmd, check=True)`,
			"",
		);
	}
	lines.pop();
	return lines;
}

/** Six odd lines of a ledger's test run, each of a shape of its own and none a signal line. */
const ODD_LEDGER_LINES = [
	"retrying the connection to the ledger replica after a reset",
	"cache directory /tmp/ledger-cache was removed while in use",
	"slow query: SELECT balance FROM accounts took 2300 ms",
	"worker 3 restarted by the supervisor",
	"clock skew of 4 s detected against the database host",
	"fixture accounts.yml reloaded from disk",
];

function numbersOf(shown: ShownLine[]): number[] {
	return shown.map((line) => line.lineNumber);
}

function range(from: number, to: number): number[] {
	return Array.from({ length: to - from + 1 }, (_, i) => from + i);
}

describe("the view's shape", () => {
	test("shows head, omitted-lines notice, tail and the query footer for a long seq", async () => {
		const text = Array.from({ length: 300_000 }, (_, i) => `${i + 1}`).join("\n") + "\n";
		const options = viewOptions();
		const { text: view, totalLines, totalBytes } = await buildViewFromText(text, options);
		assert.equal(totalLines, 300_000);
		assert.equal(totalBytes, Buffer.byteLength(text));
		const lines = view.split("\n");
		assert.equal(
			lines[0],
			`[pi-overflow id=0123456789ab] bash output: 300000 lines, ${totalBytes} bytes — showing head, 0 signal lines, tail`,
		);
		// Sixty head lines of one shape fold into the first, a count and the last.
		assert.deepEqual(lines.slice(1, 5), [
			"     1: 1",
			"  ... 58 more lines like these ...",
			"    60: 60",
			"  ... 299860 lines omitted ...",
		]);
		// So do the tail's lines above its last TAIL_UNFOLDED_LINES, which are shown as they are.
		const unfolded = TAIL_UNFOLDED_LINES;
		assert.deepEqual(lines.slice(-unfolded - 4, -unfolded), [
			"299921: 299921",
			`  ... ${78 - unfolded} more lines like these ...`,
			`${300_000 - unfolded}: ${300_000 - unfolded}`,
			`${300_001 - unfolded}: ${300_001 - unfolded}`,
		]);
		assert.equal(lines.at(-2), "300000: 300000");
		assert.equal(
			lines.at(-1),
			"[use overflow_query with id=0123456789ab: search (regex), lines {start,end}, jsonPath]",
		);
		const shown = assertFaithfulView(view, text, options);
		assert.deepEqual(numbersOf(shown), [1, 60, 299_921, ...range(300_000 - unfolded, 300_000)]);
	});

	test("folds a run of one shape in the tail above its last lines, but never a signal line among them", async () => {
		const lines = Array.from({ length: 5000 }, (_, i) => `  CC [M]  drivers/module_${i}.o`);
		// ansible's recap: lines that differ only in digits, one of which says what failed.
		for (let host = 1; host <= 10; host++)
			lines.push(`web${String(host).padStart(2, "0")} : ok=17 changed=3 failed=${host === 4 ? 1 : 0} skipped=0`);
		lines.push(...Array.from({ length: 20 }, (_, i) => `  LD [M]  drivers/module_${i}.ko`));
		const options = viewOptions();
		const view = (await buildViewFromText(lines.join("\n"), options)).text;
		const shown = assertFaithfulView(view, lines, options);
		const rows = view.split("\n");
		const tail = rows.slice(
			rows.findIndex((row) => row.startsWith("  4951:")),
			-1,
		);
		assert.deepEqual(tail, [
			"  4951:   CC [M]  drivers/module_4950.o",
			"  ... 48 more lines like these ...",
			"  5000:   CC [M]  drivers/module_4999.o",
			"  5001: web01 : ok=17 changed=3 failed=0 skipped=0",
			"  5002: web02 : ok=17 changed=3 failed=0 skipped=0",
			"  5003: web03 : ok=17 changed=3 failed=0 skipped=0",
			"  5004: web04 : ok=17 changed=3 failed=1 skipped=0",
			"  5005: web05 : ok=17 changed=3 failed=0 skipped=0",
			"  ... 4 more lines like these ...",
			"  5010: web10 : ok=17 changed=3 failed=0 skipped=0",
			// The link lines above the last TAIL_UNFOLDED_LINES fold; those never do.
			"  5011:   LD [M]  drivers/module_0.ko",
			`  ... ${18 - TAIL_UNFOLDED_LINES} more lines like these ...`,
			`  ${5030 - TAIL_UNFOLDED_LINES}:   LD [M]  drivers/module_${19 - TAIL_UNFOLDED_LINES}.ko`,
			...Array.from(
				{ length: TAIL_UNFOLDED_LINES },
				(_, i) => `  ${5031 - TAIL_UNFOLDED_LINES + i}:   LD [M]  drivers/module_${20 - TAIL_UNFOLDED_LINES + i}.ko`,
			),
		]);
		assert.equal(shown.at(-1)?.lineNumber, 5030);
	});

	test("folds a run of one print statement's lines whose quoted strings and paths differ, not only digits (tune4: Caddy's JSON access records)", async () => {
		const lines = Array.from({ length: 400 }, (_, i) => `deploy: step ${i}`);
		// One access record per request: the path, the port and the order of the headers (a Go map) vary.
		const headers = [
			'"Accept-Encoding":["identity"],"User-Agent":["Python-urllib/3.11"]',
			'"User-Agent":["Python-urllib/3.11"],"Accept-Encoding":["identity"]',
		];
		for (let i = 0; i < 60; i++) {
			const path = i % 10 === 0 ? "/health" : `/api/orders/${1000 + i}`;
			lines.push(
				`{"level":"info","ts":1796094896.${671026 + i * 37},"logger":"http.log.access.log0","msg":"handled request","request":{"remote_ip":"127.0.0.1","remote_port":"${44764 + i}","uri":"${path}","headers":{${headers[i % 2]}}},"status":200}`,
			);
		}
		lines.push(...Array.from({ length: 20 }, (_, i) => `deploy: done ${i}`));
		const options = viewOptions();
		const view = (await buildViewFromText(lines.join("\n"), options)).text;
		assertFaithfulView(view, lines, options);
		assert.match(
			view,
			/^ {2}\.\.\. 58 more lines like these \.\.\.$/m,
			"the tail's records fold to their first and last line",
		);
		assert.ok(view.length < 8000, `${view.length} chars`);
	});

	test("folds a group of two or three shapes in turn as a run, in the tail and above it as one fold (tune2: a worker pool)", async () => {
		// A pool's worker and primary print in turn; the one odd line is the primary's, near the end.
		const lines = Array.from({ length: 40 }, (_, i) => `setup step ${word(i)} done in ${word(i + 100)}`);
		for (let i = 0; i < 400; i++)
			lines.push(
				i === 350
					? "[primary] worker 2 stopped answering; its queue is handed to worker 1"
					: `[worker 1] thumbnail ok uploads/img_${i}.jpg -> 256x192`,
				`[primary] worker 1 finished uploads/img_${i}.jpg (${i}/400)`,
			);
		const options = viewOptions();
		const view = (await buildViewFromText(lines.join("\n"), options)).text;
		const shown = assertFaithfulView(view, lines, options);
		// The tail (its last 80 lines) is one run of two shapes in turn: it folds to its first pair, a
		// count and its last pair above its last TAIL_UNFOLDED_LINES, and the view reads on above it, where the
		// same run, on the other side of the odd line, folds again; the fold the odd line's side shares
		// with the tail's is one (its pairs start on the other shape: the group goes on in step).
		assert.deepEqual(
			numbersOf(shown).filter((n) => n > 60 && n <= lines.length - TAIL_UNFOLDED_LINES),
			[361, 362, 739, 740, 741, 742, 743, 839 - TAIL_UNFOLDED_LINES, 840 - TAIL_UNFOLDED_LINES],
		);
		assert.deepEqual(
			view.split("\n").filter((row) => row.includes("more lines like these")),
			// The head's last twenty lines are the run's first: they fold too.
			[
				"  ... 16 more lines like these ...",
				"  ... 376 more lines like these ...",
				`  ... ${95 - TAIL_UNFOLDED_LINES} more lines like these ...`,
			],
		);
	});

	test("a head's routine folds whole, lines one word apart too; a tail's lines one word apart stay (a traceback's frames)", async () => {
		// An install before the command (its lines name different packages), then the command's output,
		// which ends in faulthandler's frames: one word apart, each decisive.
		const packages = ["requests", "urllib3", "idna", "certifi", "numpy", "pandas", "pytz", "six", "attrs", "click"];
		const lines = ["$ pip install -r requirements.txt && pytest"];
		packages.forEach((name, i) =>
			lines.push(
				`Collecting ${name}==1.${i}.0 (from -r requirements.txt (line ${i + 1}))`,
				`  Downloading ${name}-1.${i}.0-py3-none-any.whl (${20 + i * 7} kB)`,
			),
		);
		lines.push(...Array.from({ length: 3000 }, (_, i) => `tests/test_tiles_${i}.py ok`));
		lines.push("Fatal Python error: Segmentation fault", "", "Current thread 0x00007f3a (most recent call first):");
		for (const name of ["peek_header", "header_of", "released_tile", "fastpath", "check_tile", "test_fastpath"])
			lines.push(`  File "/srv/tiles/fastpath.py", line 6 in ${name}`);
		lines.push(...Array.from({ length: 20 }, (_, i) => `cleanup step ${word(i)}`));
		const options = viewOptions();
		const view = (await buildViewFromText(lines.join("\n"), options)).text;
		const shown = assertFaithfulView(view, lines, options);
		// The install's pairs fold to their first pair, a count and their last pair; the frames are all shown.
		assert.deepEqual(
			numbersOf(shown).filter((n) => n <= 21),
			[1, 2, 3, 20, 21],
		);
		for (let k = 0; k < 6; k++) assert.ok(numbersOf(shown).includes(3025 + k), `frame ${k}`);
	});

	test("a group folds from FOLD_RUN_LINES repetitions on, its lines of more than one shape, never with a signal line", () => {
		const line = (lineNumber: number, text: string, signal = false): ScannedLine => ({
			lineNumber,
			text,
			totalChars: text.length,
			partial: false,
			...(signal ? { signal: true as const } : {}),
		});
		const group = (n: number) => [
			`Collecting pkg==${n}.0`,
			`  Downloading pkg-${n}.0.whl.metadata`,
			`  Downloading pkg-${n}.0.whl`,
		];
		const ofGroups = (count: number) =>
			Array.from({ length: count }, (_, i) => group(i))
				.flat()
				.map((text, i) => line(i + 1, text));
		const rowsOf = (lines: ScannedLine[]) => foldRuns(lines, (scanned) => `${scanned.lineNumber}: ${scanned.text}`);
		// Six groups of three: the first group, a count of the twelve between, the last group.
		assert.deepEqual(
			rowsOf(ofGroups(6)).map((row) => row.lines ?? row.lineNumber),
			[1, 2, 3, 12, 16, 17, 18],
		);
		assert.equal(rowsOf(ofGroups(5)).length, 15, "five groups stay as they are");
		// A line of one shape twice over is a run of one shape, not a group of two.
		const same = Array.from({ length: 8 }, (_, i) => line(i + 1, `step ${i}`));
		assert.deepEqual(
			rowsOf(same).map((row) => row.lines ?? row.lineNumber),
			[1, 6, 8],
		);
		// A signal line among the groups is shown; the groups above it fold (six and a line), the five below not.
		const broken = ofGroups(12);
		broken[19] = line(20, "ERROR: Could not find a version that satisfies the requirement pkg==6.0", true);
		assert.deepEqual(
			rowsOf(broken).map((row) => row.lines ?? row.lineNumber),
			[1, 2, 3, 13, 17, 18, 19, ...Array.from({ length: 17 }, (_, i) => 20 + i)],
		);
	});

	test("routine lines around an error are not its block, however they are indented; its own block is", async () => {
		const lines = Array.from({ length: 3000 }, (_, i) => `  CC [M]  drivers/module_${i}.o`);
		lines.splice(
			1500,
			0,
			"drivers/net/socket.c:88:12: error: struct sock has no member named sk_flags",
			"   88 |         sk->sk_flags = 0;",
			"      |             ^~",
		);
		const options = viewOptions();
		const view = (await buildViewFromText(lines.join("\n"), options)).text;
		const shown = numbersOf(assertFaithfulView(view, lines, options));
		assert.deepEqual(
			shown.filter((n) => n > 60 && n < 2900),
			[1501, 1502, 1503],
			"the error with its gutter lines, no CC [M] lines around it",
		);
	});

	test("sets aside rare lines of one template's family (one word differs) and shows the odd line instead (tune4)", async () => {
		const regions = "de fr nl be at it es pt ie fi se dk pl cz sk hu si hr ro bg gr cy mt lu ee lv lt no ch is".split(
			" ",
		);
		const lines: string[] = [];
		regions.forEach((region, n) => {
			lines.push(`Feature: checkout totals for region ${region}`, "");
			for (let k = 0; k < 100; k++)
				lines.push(`    Given a basket with ${k + 1} items of 1000 cents ... passed in 0.000s`);
			if (n === 20) lines.push("Using the fallback tax table, the seed for region gr has no rate", "");
		});
		const options = viewOptions();
		const view = (await buildViewFromText(lines.join("\n"), options)).text;
		// The middle's lines (a tail that is one run of `Given` lines reaches past it: its lines are the output's own).
		const shown = numbersOf(assertFaithfulView(view, lines, options).filter((line) => !line.inTail)).filter(
			(n) => n > 60,
		);
		const odd = lines.indexOf("Using the fallback tax table, the seed for region gr has no rate") + 1;
		assert.ok(shown.includes(odd), "the odd line is shown");
		assert.deepEqual(
			shown.filter((n) => lines[n - 1].startsWith("Feature:")),
			[],
			"no line of the Feature family",
		);
		assert.deepEqual(
			markTemplateFamilies(["a b c", "a b d", "a b e", "a b f", "x y z"]),
			[false, false, false, false, false],
			"four alike are not a family",
		);
		assert.deepEqual(markTemplateFamilies(["run a 1", "run b 2", "run c 3", "run d 4", "run e 5", "stop now please"]), [
			true,
			true,
			true,
			true,
			true,
			false,
		]);
	});

	test("an install's lines of their own before the routine do not hide the routine's odd line, nor stand as rare", async () => {
		// `pip install -r requirements.txt && make`: 150 lines each of a shape of its own, then a build's routine.
		const preamble = Array.from({ length: 50 }, (_, n) => {
			const name = n.toString(26).replace(/[0-9]/g, (digit) => "qrstuvwxyz"[Number(digit)]);
			return [`Collecting py${name}==1.${n}`, `  Downloading py${name}-1.${n}.whl (${n} kB)`, `Installed py${name}`];
		}).flat();
		const routine = Array.from({ length: 1000 }, (_, n) => `  CC [M]  drivers/net/module_${n}.o`);
		routine[600] = "ld: relocation R_X86_64_32 against `.rodata' can not be used when making a PIE object";
		const lines = [...preamble, ...routine];
		const options = viewOptions();
		const view = (await buildViewFromText(lines.join("\n"), options)).text;
		const shown = numbersOf(assertFaithfulView(view, lines, options));
		const odd = preamble.length + 601;
		assert.ok(shown.includes(odd), "the odd line of the routine");
		assert.match(
			view,
			new RegExp(`\\n *${odd}: ld: relocation R_X86_64_32 .*\\[a rare line: its shape appears once\\]`),
		);
		assert.doesNotMatch(view, /(?:Collecting|Downloading|Installed) .*\[a rare line/, "no line of the install as rare");
	});

	test("shows a rare line with its block: the deeper lines right below it that are not routine", async () => {
		const lines = banditLike();
		const options = viewOptions();
		const shown = numbersOf(
			assertFaithfulView((await buildViewFromText(lines.join("\n"), options)).text, lines, options),
		);
		assert.deepEqual(
			shown.filter((n) => n > 60 && n < lines.length - 80),
			[1801, 1802, 1803, 1804],
			"the odd issue line, its own severity line, the Location and More Info lines under it; the code excerpt, of a common shape and not indented, is not part of it",
		);
	});

	test("a run of odd lines takes one rare line's place: the odd lines after it are shown too", async () => {
		// A build's routine, then a test step's own set-up (twelve lines of their own), then its routine with six odd lines.
		const setUp = [
			"Preparing the test database from db/schema.sql",
			"  tables created: 14",
			"Seeding fixtures for accounts and ledgers",
			"  seeded rows: 2306",
			"Starting the mail catcher on port 1025",
			"Listening for webhooks on /hooks/incoming",
			"Clock frozen at 2026-12-06T10:00:00Z",
			"Random seed 48213",
			"Browser: headless chromium 131",
			"Parallel workers: 4",
			"Coverage collection enabled",
			"Running 1000 examples",
		];
		const build = Array.from({ length: 300 }, (_, n) => `  CC [M]  drivers/net/module_${n}.o`);
		const tests = Array.from({ length: 1000 }, (_, n) => `ok ${n + 1} - ledger case ${n + 1} passed`);
		const odd = ODD_LEDGER_LINES;
		odd.forEach((line, k) => (tests[120 + 140 * k] = line));
		const lines = [...build, ...setUp, ...tests];
		const options = viewOptions();
		const shown = numbersOf(
			assertFaithfulView((await buildViewFromText(lines.join("\n"), options)).text, lines, options),
		);
		for (const line of odd) assert.ok(shown.includes(lines.indexOf(line) + 1), `shown: ${line}`);
		const setUpFrom = build.length + 1;
		assert.deepEqual(
			shown.filter((n) => n >= setUpFrom && n < setUpFrom + setUp.length),
			range(setUpFrom, setUpFrom + setUp.length - 1),
			"the set-up's lines, in the blocks of three of them",
		);
	});

	test("a rare line that an odd line's block shows is paid with that line, before the odd lines after it", async () => {
		const lines = Array.from({ length: 800 }, (_, n) => `ok ${n + 1} - ledger case ${n + 1} passed`);
		lines[199] = "settlement batches done; reconciling house accounts";
		lines[200] = "watchdog: no output for 5s after 8s, requesting a thread dump of pid 30932";
		const later = ODD_LEDGER_LINES;
		later.forEach((line, k) => (lines[300 + 60 * k] = line));
		let tight = 0;
		for (let threshold = 1000; threshold <= 4000; threshold += 20) {
			const options = viewOptions({ thresholdChars: threshold, headLines: 10, tailLines: 10 });
			const shown = numbersOf(
				assertFaithfulView((await buildViewFromText(lines.join("\n"), options)).text, lines, options),
			);
			const laterShown = later.filter((line) => shown.includes(lines.indexOf(line) + 1)).length;
			if (laterShown === 0) continue;
			assert.ok(shown.includes(201), `at ${threshold}: the watchdog line before any later odd line`);
			if (laterShown < later.length) tight++;
		}
		assert.ok(tight > 0, "at some budget, some later odd lines and not all");
	});

	test("a rare line is shown before the head grows past its share: a larger budget does not lose it", async () => {
		// A server's start-up, each line its own (a head that does not fold), a routine of requests
		// with one odd line in it, an error far below that line, and the server's own end.
		const startUp = Array.from(
			{ length: 60 },
			(_, n) =>
				`{"level":"info","logger":"${word(n + 40)}","msg":"${word(n + 900)} ${word(n + 5000)} started","cache":"${word(n + 77)}"}`,
		);
		const requests = Array.from(
			{ length: 1500 },
			(_, n) => `{"level":"info","logger":"http.access","msg":"handled request","uri":"/health","port":${41000 + n}}`,
		);
		const rare = 800;
		requests[rare - 1] = "deploy: reloading with Caddyfile.new";
		requests[1300] = "Error: sending configuration to instance: bind: address already in use";
		const lines = [...startUp, ...requests];
		let shownFrom = Number.POSITIVE_INFINITY;
		let headCut = false;
		for (let threshold = 2000; threshold <= 16000; threshold += 500) {
			const options = viewOptions({ thresholdChars: threshold });
			const view = (await buildViewFromText(lines.join("\n"), options)).text;
			const shown = numbersOf(assertFaithfulView(view, lines, options));
			const odd = startUp.length + rare;
			if (shown.includes(odd)) {
				shownFrom = Math.min(shownFrom, threshold);
				if (!range(1, startUp.length).every((n) => shown.includes(n))) headCut = true;
			} else assert.ok(threshold < shownFrom, `at ${threshold}: the odd line, shown at ${shownFrom} already`);
		}
		assert.ok(shownFrom < Number.POSITIVE_INFINITY, "the odd line, at some budget");
		assert.ok(headCut, "at some budget, the odd line and not the whole head");
	});

	test("an error's context takes the lines nearest to it first, above as below", async () => {
		// A template error: where the user's code asked for it is right above the error, its notes below.
		const lines: string[] = [];
		for (let n = 0; n < 300; n++) lines.push(`g++ -o obj/part_${n}.o -c -std=c++17 -Wall -O1 src/part_${n}.cpp`);
		lines.push(
			"In file included from /usr/include/c++/12/numeric:62,",
			"                 from src/amounts.hpp:3,",
			"                 from src/part_073.cpp:1:",
			"/usr/include/c++/12/bits/stl_numeric.h: In instantiation of '_Tp std::accumulate(_InputIterator, _InputIterator, _Tp)':",
			"src/amounts.hpp:14:24:   required from 'T sum_amounts(const std::vector<T>&) [with T = LineItem]'",
			"src/part_073.cpp:11:20:   required from here",
			"/usr/include/c++/12/bits/stl_numeric.h:141:46: error: no match for 'operator+' (operand types are 'LineItem' and 'const LineItem')",
			"  141 |         __init = _GLIBCXX_MOVE_IF_20(__init) + *__first;",
			"      |                                              ^",
			"/usr/include/c++/12/bits/stl_iterator.h:630:5: note: candidate: 'template<class _Iterator> std::operator+(difference_type, const reverse_iterator<_Iterator>&)'",
			"  630 |     operator+(typename reverse_iterator<_Iterator>::difference_type __n,",
			"      |     ^~~~~~~~",
			"/usr/include/c++/12/bits/stl_iterator.h:630:5: note:   template argument deduction/substitution failed:",
		);
		const error = lines.length - 6;
		for (let n = 300; n < 600; n++) lines.push(`g++ -o obj/part_${n}.o -c -std=c++17 -Wall -O1 src/part_${n}.cpp`);
		lines.push("scons: done building targets (errors occurred during build).");
		let partial = 0;
		for (let threshold = 1500; threshold <= 8000; threshold += 100) {
			const options = viewOptions({ thresholdChars: threshold, headLines: 10, tailLines: 10 });
			const shown = numbersOf(
				assertFaithfulView((await buildViewFromText(lines.join("\n"), options)).text, lines, options),
			);
			if (!shown.includes(error)) continue;
			const below = [1, 2, 3, 4].filter((k) => shown.includes(error + k)).length;
			const above = [1, 2].filter((k) => shown.includes(error - k)).length;
			assert.ok(above >= Math.min(2, below - 1), `at ${threshold}: ${below} lines below the error and ${above} above`);
			if (below > 0 && below < 4) partial++;
		}
		assert.ok(partial > 0, "at some budget, some of the lines below the error and not all");
	});

	test("a rare line's block shows as much as fits from its top", async () => {
		// Its view at tight budgets: short head and tail, little room for the middle.
		const lines = banditLike();
		const block = [1802, 1803, 1804];
		const partial: number[] = [];
		for (let threshold = 1000; threshold <= 3000; threshold += 20) {
			const options = viewOptions({ thresholdChars: threshold, headLines: 10, tailLines: 10 });
			const view = (await buildViewFromText(lines.join("\n"), options)).text;
			const shown = numbersOf(assertFaithfulView(view, lines, options));
			if (!shown.includes(1801)) continue;
			const rows = block.filter((n) => shown.includes(n));
			assert.deepEqual(rows, block.slice(0, rows.length), `at ${threshold}: the block's top`);
			if (rows.length > 0 && rows.length < block.length) partial.push(threshold);
		}
		assert.ok(partial.length > 0, "at some budget, the block's first lines without its last");
	});

	test("shows every line of a small group of similar signal lines, and with room the distinct lines of a larger one", async () => {
		const lines = Array.from({ length: 3000 }, (_, i) => `Auto-merging src/file_${i}.go`);
		const conflicts = [300, 900, 1400, 2000, 2500, 2700];
		for (const at of conflicts) lines[at - 1] = `CONFLICT (content): Merge conflict in src/file_${at}.go`;
		const options = viewOptions();
		const shown = assertFaithfulView((await buildViewFromText(lines.join("\n"), options)).text, lines, options);
		assert.deepEqual(
			numbersOf(shown).filter((n) => lines[n - 1].startsWith("CONFLICT")),
			conflicts,
		);
		lines[2800 - 1] = "CONFLICT (content): Merge conflict in src/file_2800.go";
		const view = (await buildViewFromText(lines.join("\n"), options)).text;
		const collapsed = assertFaithfulView(view, lines, options);
		assert.deepEqual(
			collapsed.filter((line) => line.text.startsWith("CONFLICT")).map((line) => line.lineNumber),
			[...conflicts, 2800],
			"seven lines of one shape: the first stands for the others, and with room the others are shown too",
		);
		assert.match(
			view,
			/ 300: CONFLICT \(content\): Merge conflict in src\/file_300\.go {2}\[×7 signal lines of this shape, the last at line 2800\]/,
		);
	});

	test("shows the distinct lines of a failure's shape, not of a warning's", async () => {
		const lines = Array.from({ length: 3000 }, (_, i) => `compiled module ${i}`);
		for (let at = 100; at < 1500; at += 20) lines[at] = `src/m${at}.c:3:1: warning: unused variable 'v${at}'`;
		for (let at = 1510; at < 2900; at += 20) lines[at] = `src/m${at}.c:3:1: error: 'X${at}' undeclared`;
		const options = viewOptions();
		const view = (await buildViewFromText(lines.join("\n"), options)).text;
		const shown = assertFaithfulView(view, lines, options);
		const warnings = shown.filter((line) => line.text.includes("warning:"));
		const errors = shown.filter((line) => line.text.includes("error:"));
		assert.equal(warnings.length, 1, "the warnings' shape stands as one line with its count");
		assert.match(view, /warning: unused variable 'v100' {2}\[×70 signal lines of this shape/);
		assert.ok(errors.length > 5, `${errors.length} distinct errors shown`);
	});

	test("collapses the lines of one shape that would not fit, and shows as many distinct ones as the room allows", async () => {
		const lines = Array.from({ length: 3000 }, (_, i) => `Auto-merging src/file_${i}.go`);
		for (let at = 100; at <= 2900; at += 2) lines[at - 1] = `CONFLICT (content): Merge conflict in src/file_${at}.go`;
		const options = viewOptions();
		const view = (await buildViewFromText(lines.join("\n"), options)).text;
		const shown = assertFaithfulView(view, lines, options).filter((line) => line.text.startsWith("CONFLICT"));
		assert.ok(view.length <= options.thresholdChars);
		assert.match(view, / 100: CONFLICT .*\[×1401 signal lines of this shape, the last at line 2900\]/);
		// More than the first: distinct instances spread over the shape's lines, but far fewer than all.
		assert.ok(shown.length > 10 && shown.length < 100, `${shown.length} shown`);
		const middle = shown.filter((line) => line.lineNumber > 1000 && line.lineNumber < 2000);
		assert.ok(middle.length > 0, "instances from the middle too");
	});

	test("reaches past a tail that is one run to what the output printed before it, as room allows", async () => {
		// A batch job's report lines, the last one the anomaly (one shape: none is rare, none a signal),
		// then a step that zips 300 coverage pages.
		const rows = Array.from({ length: 2000 }, (_, i) => `step ${i + 1}: wrote ${i === 1999 ? 0 : 100 + i} records`);
		const zip = Array.from(
			{ length: 300 },
			(_, i) => `  adding: coverage/lcov-report/src/module${i}.ts.html (deflated ${40 + (i % 50)}%)`,
		);
		const lines = [...rows, ...zip];
		const options = viewOptions();
		const view = (await buildViewFromText(lines.join("\n"), options)).text;
		const shown = assertFaithfulView(view, lines, options);
		// The lines above the tail (read back as far as 400 lines up): the steps' run folded, its last
		// line whole, then the zip's lines as one fold (read above the tail and in it), then the tail's
		// last TAIL_UNFOLDED_LINES (and the fold's last line right above them).
		const first = lines.length - 80 - 400 + 1;
		assert.deepEqual(
			numbersOf(shown).filter((n) => n > 60),
			[first, 2000, 2001, ...range(lines.length - TAIL_UNFOLDED_LINES, lines.length)],
		);
		assert.deepEqual(
			view.split("\n").filter((row) => row.includes("more lines like these")),
			[
				"  ... 58 more lines like these ...",
				"  ... 178 more lines like these ...",
				`  ... ${298 - TAIL_UNFOLDED_LINES} more lines like these ...`,
			],
		);
		assert.match(view, /\n {2}\.\.\. 1760 lines omitted \.\.\.\n/, "the lines left out, counted true");
		// The lines above the tail take only the room left: under a tight budget the tail is its own.
		const tight = viewOptions({ thresholdChars: 1500 });
		const tightShown = numbersOf(
			assertFaithfulView((await buildViewFromText(lines.join("\n"), tight)).text, lines, tight),
		);
		assert.ok(!tightShown.includes(2000) && tightShown.includes(lines.length));
		// A tail of lines of their own does not reach: it shows its own.
		const own = [...rows, ...zip.map((line, i) => `${word(i + 1)} ${line}`)];
		const ownView = (await buildViewFromText(own.join("\n"), options)).text;
		assert.ok(!numbersOf(assertFaithfulView(ownView, own, options)).includes(2000));
	});

	test("keeps a failure report longer than the tail from its header, and its start and end when it is longer than the room", async () => {
		const report = (blockLines: number) => {
			const lines = Array.from({ length: 3000 }, (_, i) => `tests/test_mod${i % 50}.py::test_case_${i} PASSED`);
			lines.push("=================================== FAILURES ===================================");
			for (const name of ["test_refund", "test_tax", "test_total"]) {
				lines.push(`_________________________________ ${name} _________________________________`);
				const code = [
					"total = 0",
					"for item in cart.items:",
					"    total += item.price",
					"if item.refunded:",
					"    total -= item.refund",
					"return round(total, 2)",
				];
				for (let k = 0; k < blockLines; k++) lines.push(`    ${code[k % code.length]}`);
				lines.push("E       assert 580 == 460", `tests/${name}.py:88: AssertionError`);
			}
			lines.push("=========================== short test summary info ============================");
			for (const name of ["test_refund", "test_tax", "test_total"]) lines.push(`FAILED tests/${name}.py::${name}`);
			lines.push("======================== 3 failed, 3000 passed in 9.1s =========================");
			return lines;
		};
		const options = viewOptions();
		const lines = report(50);
		const shown = numbersOf(
			assertFaithfulView((await buildViewFromText(lines.join("\n"), options)).text, lines, options),
		);
		// From the report's header to the last line, every line: the tail grew back to where the report starts.
		const header = lines.indexOf(lines.find((line) => line.includes(" FAILURES "))!) + 1;
		for (let n = header; n <= lines.length; n++) assert.ok(shown.includes(n), `line ${n} (${lines[n - 1]}) shown`);
		assert.ok(!shown.includes(header - 1), "not the passing lines above it");

		// Too long for the room: the report's header and first lines, then its end.
		const long = report(400);
		const longView = (await buildViewFromText(long.join("\n"), options)).text;
		const longShown = numbersOf(assertFaithfulView(longView, long, options));
		const longHeader = long.findIndex((line) => line.includes(" FAILURES ")) + 1;
		assert.ok(longShown.includes(longHeader) && longShown.includes(longHeader + 1), "the report's start");
		assert.ok(longShown.includes(long.length) && longShown.includes(long.length - 3), "its end");

		// An output that does not end in failure keeps its plain tail.
		const passing = lines.map((line) => line.replace(/^E {7}assert.*|^FAILED |AssertionError|3 failed, /, "ok "));
		const plain = numbersOf(
			assertFaithfulView((await buildViewFromText(passing.join("\n"), options)).text, passing, options),
		);
		assert.ok(!plain.includes(header + 20), "no report without a failure");
	});

	test("keeps the step a tail's failure happened in from its title, above the runner's cleanup", async () => {
		// A JVM that deadlocked: the watchdog's kill in the tail, the deadlock report (a title a rule
		// underlines) above it, and 50 lines of a CI runner's cleanup after it pushing the report's
		// start above the tail. The report holds no error line of its own.
		const fixture = loadTuningFixtures().get("tune3/jvm-deadlock-thread-dump");
		assert.ok(fixture);
		const cleanup = [
			"Post job cleanup.",
			"[command]/usr/bin/git version",
			"Temporarily overriding HOME before making global git config changes",
			"Cache saved with key: node-cache-Linux-x64-npm-4f3a2b1c",
			"Stopping container 7d793037a076",
			"Removing network ci_default",
			"Evaluate and set job outputs",
		];
		const lines = [...fixture.lines, ...Array.from({ length: 50 }, (_, k) => `${cleanup[k % cleanup.length]} (${k})`)];
		const options = viewOptions();
		const view = (await buildViewFromText(lines.join("\n"), options)).text;
		const shown = numbersOf(assertFaithfulView(view, lines, options));
		const title = fixture.lines.indexOf("Found one Java-level deadlock:") + 1;
		assert.ok(title > 0 && lines[title] === "=============================");
		for (let n = title; n <= fixture.lines.length; n++)
			assert.ok(shown.includes(n), `line ${n} (${lines[n - 1]}) shown`);

		// A step longer than the tail is no failure's report: pytest-benchmark's table of 162 rows, opened
		// by `--- benchmark: 162 tests ---` above the tail's `FAILED` lines, is not shown from there.
		const benchmark = loadTuningFixtures().get("tune3/pytest-benchmark-regression");
		assert.ok(benchmark);
		const opener = benchmark.lines.findIndex((line) => / benchmark: 162 tests /.test(line)) + 1;
		assert.ok(opener > 0);
		const benchmarkView = (await buildViewFromText(benchmark.lines.join("\n"), options)).text;
		assert.ok(!numbersOf(assertFaithfulView(benchmarkView, benchmark.lines, options)).includes(opener));
	});

	test("shows a few lines left out between two shown parts when room is left, not a gap that holds a left-out signal line", async () => {
		const build = (errorsAt: readonly number[]) => {
			const lines = Array.from({ length: 3000 }, (_, i) => `compiled module ${i + 1}`);
			for (const at of errorsAt) lines[at - 1] = `src/m${at}.c:3:1: error: 'v${at}' undeclared`;
			return lines;
		};
		// Seven routine lines between two errors are shown; fifteen are not (MAX_GAP_LINES).
		const lines = build([1000, 1008, 1500, 1516]);
		for (const thresholdChars of [1000, 1500, 2500, 24000]) {
			const options = viewOptions({ thresholdChars });
			const shown = numbersOf(
				assertFaithfulView((await buildViewFromText(lines.join("\n"), options)).text, lines, options),
			);
			if (thresholdChars < 24000) continue;
			for (let n = 1000; n <= 1008; n++) assert.ok(shown.includes(n), `line ${n} shown`);
			assert.ok(!shown.includes(1508), "a gap of fifteen lines stays");
		}
		// With room for two of three errors, the view shows the first and the last; the one between them
		// is counted with them, and the gap that holds it stays.
		const three = build([1000, 1004, 1008]);
		const options = viewOptions({ maxSignalLines: 2 });
		const view = (await buildViewFromText(three.join("\n"), options)).text;
		const shown = numbersOf(assertFaithfulView(view, three, options));
		assert.ok(shown.includes(1000) && shown.includes(1008));
		assert.deepEqual(
			shown.filter((n) => n > 1000 && n < 1008),
			[],
		);
	});

	test("shows identical signal lines once with their count, never again as rare lines", async () => {
		for (const spread of [false, true]) {
			const lines = Array.from({ length: 3000 }, (_, i) => `GET /api/items/${i} 200 ${i % 17}ms`);
			for (const at of spread ? [1000, 1500, 2000] : [1000, 1001, 1002]) lines[at] = "WARN  cache miss ratio high";
			const options = viewOptions();
			const view = (await buildViewFromText(lines.join("\n"), options)).text;
			const shown = assertFaithfulView(view, lines, options).filter((line) => line.text.startsWith("WARN"));
			assert.deepEqual(
				shown.map((line) => line.lineNumber),
				[1001],
			);
			assert.match(view, / 1001: WARN {2}cache miss ratio high {2}\[×3\]/);
			assert.doesNotMatch(view, /appears once/);
		}
	});

	test("CI-like logs of any shape (steps, failed steps, reports, floods, timestamps): the view is faithful and fits", async () => {
		const piece = fc.oneof(
			fc.constantFrom(
				"##[group]Run npm test",
				"##[endgroup]",
				"##[error]Process completed with exit code 1.",
				"=================================== FAILURES ===================================",
				"_____ test_refund _____",
				"failures:",
				"E       assert 580 == 460",
				"error: could not compile `ledger`",
				"WARN  cache miss",
				"werror: true",
				"ok 17 - case",
				"",
				"    at Object.<anonymous> (src/a.js:3:9)",
			),
			fc.nat({ max: 10_000 }).map((n) => `compiled module ${n}`),
			fc.nat({ max: 10_000 }).map((n) => `src/m${n % 97}.c:${n}:3: error: ‘X${n}’ undeclared`),
		);
		const block = fc.tuple(piece, fc.integer({ min: 1, max: 400 }));
		await fc.assert(
			fc.asyncProperty(
				fc.array(block, { minLength: 1, maxLength: 30 }),
				fc.boolean(),
				fc.integer({ min: 2000, max: 24000 }),
				async (blocks, stamped, thresholdChars) => {
					const lines: string[] = [];
					for (const [text, repeat] of blocks)
						for (let k = 0; k < repeat; k++)
							lines.push(stamped ? `2026-12-02T10:18:20.${String(k).padStart(7, "0")}Z ${text}` : text);
					// A last line of its own: a text of one empty line is no line at all.
					lines.push("Cleaning up orphan processes");
					const options = viewOptions({ thresholdChars });
					const view = (await buildViewFromText(lines.join("\n"), options)).text;
					assertFaithfulView(view, lines, options);
				},
			),
			{ numRuns: 60 },
		);
	});

	test("shows every line of a short text once, without an omitted notice", async () => {
		const text = "a\nb\nc\n";
		const view = (await buildViewFromText(text, viewOptions())).text;
		assert.deepEqual(numbersOf(assertFaithfulView(view, text, viewOptions())), [1, 2, 3]);
		assert.ok(!view.includes("omitted"));
	});

	test("shows the header and footer alone for an empty text", async () => {
		const view = (await buildViewFromText("", viewOptions())).text;
		assert.deepEqual(shownLines(view), []);
		assert.match(view, /^\[pi-overflow id=0123456789ab\] bash output: 0 lines, 0 bytes/);
	});

	test("numbers lines wider than six digits without losing alignment of the text", async () => {
		const text = "x\n".repeat(1_234_567);
		const options = viewOptions();
		const view = (await buildViewFromText(text, options)).text;
		assert.ok(view.includes("\n1234567: x\n"));
		assert.ok(view.includes("\n      1: x\n"));
		assertFaithfulView(view, text, options);
	});

	test("gives the same bytes for the same input, from memory and from a file", async (t) => {
		const dir = await createTempDir(t);
		const lines: string[] = [];
		for (let i = 0; i < 50_000; i++)
			lines.push(i % 777 === 0 ? `error: E${i % 5} failed step ${i}` : `line ${i} ${"·".repeat(i % 40)}`);
		const text = `${lines.join("\n")}\n`;
		const path = join(dir, "original.txt");
		await writeFile(path, text);
		const options = viewOptions();
		const first = await buildViewFromText(text, options);
		const second = await buildViewFromText(text, viewOptions());
		const fromFile = await buildViewFromFile(path, options);
		assert.equal(second.text, first.text);
		assert.deepEqual(fromFile, first);
		assert.equal(buildView(scanText(text, options), options), first.text);
	});

	test("works with the default configuration object", async () => {
		const config = createDefaultConfig();
		const text = "error: x\n".repeat(10) + "ok\n".repeat(100_000);
		const view = (await buildViewFromText(text, { ...config, id: "0123456789ab", toolName: "bash" })).text;
		assertFaithfulView(view, text, { ...config, id: "0123456789ab", toolName: "bash" });
	});
});

describe("the view stays within thresholdChars on adversarial inputs", () => {
	const inputs: Record<string, () => string> = {
		"every line 100 KB long": () => Array.from({ length: 160 }, (_, i) => `${i} ${"w".repeat(100_000)}`).join("\n"),
		"1 000 000 one-character lines": () => "x\n".repeat(1_000_000),
		"one 50 MB line": () => "m".repeat(50_000_000),
		"200 lines of 499 characters": () =>
			Array.from({ length: 200 }, (_, i) => `${String(i).padStart(3, "0")}${"y".repeat(496)}`).join("\n") + "\n",
		"lines of 100 KB that all signal": () =>
			Array.from({ length: 150 }, (_, i) => `error: ${i} ${"e".repeat(100_000)}`).join("\n") + "\n",
		"10 000 distinct long error lines": () =>
			Array.from({ length: 10_000 }, (_, i) => `error: E${i} ${"r".repeat(600)}`).join("\n") + "\n",
		"multi-byte and astral characters everywhere": () =>
			Array.from({ length: 3000 }, (_, i) => `${i} ${"😀é中".repeat(200)}`).join("\n"),
		"coloured progress output": () =>
			Array.from(
				{ length: 5000 },
				(_, i) => `\x1b[32m${i}%\x1b[0m\r${"#".repeat(i % 700)}\r\x1b[31merror\x1b[0m ${i}`,
			).join("\r\n"),
		"control characters and tabs": () =>
			Array.from({ length: 5000 }, (_, i) => `\t${i}\x00\x07\x08 error\x7f`).join("\n"),
	};
	const variants: Record<string, Partial<ViewOptions>> = {
		defaults: {},
		"thresholdChars 1000": { thresholdChars: 1000 },
		"headLines and tailLines 10 000": { headLines: 10_000, tailLines: 10_000 },
		"thresholdChars 1000, headLines and tailLines 10 000, 1000 signal lines": {
			thresholdChars: 1000,
			headLines: 10_000,
			tailLines: 10_000,
			maxSignalLines: 1000,
		},
		"maxLineChars 100 000": { maxLineChars: 100_000 },
		"no id: the store failed": {
			thresholdChars: 1000,
			id: undefined,
			storeError: `ENOSPC: no space left on device, write ${"/very/long/path".repeat(200)}`,
			toolName: "t".repeat(5000),
			truncatedNote: `stored copy capped ${"n".repeat(5000)}`,
		},
	};
	for (const [name, make] of Object.entries(inputs)) {
		test(name, async () => {
			const text = make();
			const lines = splitLines(text);
			// Variants that scan alike share one scan (the view is pure over it).
			const scans = new Map<string, ReturnType<typeof scanText>>();
			for (const [variant, overrides] of Object.entries(variants)) {
				const options = viewOptions(overrides);
				const key = [options.headLines, options.tailLines, options.maxSignalLines, options.maxLineChars].join();
				const scan = scans.get(key) ?? scanText(text, options);
				scans.set(key, scan);
				const view = buildView(scan, options);
				try {
					const shown = assertFaithfulView(view, lines, options);
					assert.ok(shown.length > 0);
				} catch (error) {
					(error as Error).message = `${variant}: ${(error as Error).message}`;
					throw error;
				}
			}
		});
	}
});

describe("the end is always visible", () => {
	test("shows all tail lines when the head and the signal lines are huge", async () => {
		const lines: string[] = [];
		for (let i = 0; i < 60; i++) lines.push(`head ${i} ${"h".repeat(100_000)}`);
		for (let i = 0; i < 1000; i++) lines.push(`error: ${word(i)} ${"s".repeat(100_000)}`);
		for (let i = 0; i < 80; i++) lines.push(`tail line ${word(i)}`);
		const options = viewOptions();
		const view = (await buildViewFromText(lines.join("\n"), options)).text;
		const shown = assertFaithfulView(view, lines, options);
		const numbers = numbersOf(shown);
		assert.deepEqual(numbers.slice(-80), range(1061, 1140));
		assert.ok(
			numbers.some((n) => n <= 60),
			"some head is still shown",
		);
		assert.ok(
			numbers.some((n) => n > 60 && n <= 1060),
			"some signal lines are still shown",
		);
	});

	test("gives the tail more room than the head when every line is long", async () => {
		const text = Array.from({ length: 200 }, (_, i) => `${word(i)} ${"y".repeat(490)}`).join("\n") + "\n";
		const options = viewOptions();
		const shown = assertFaithfulView((await buildViewFromText(text, options)).text, text, options);
		const head = shown.filter((line) => line.lineNumber <= 60).length;
		const tail = shown.filter((line) => line.lineNumber > 120).length;
		assert.ok(tail > head, `tail ${tail} lines, head ${head}`);
		assert.ok(head > 0);
		assert.deepEqual(numbersOf(shown).slice(-tail), range(201 - tail, 200), "the tail is the last lines, contiguous");
	});

	test("shows the last line clipped harder when it alone is larger than the room", async () => {
		const text = `first\n${"z".repeat(30_000)}`;
		for (const thresholdChars of [1000, 24000]) {
			const options = viewOptions({ thresholdChars, maxLineChars: 100_000 });
			const shown = assertFaithfulView((await buildViewFromText(text, options)).text, text, {
				...options,
				maxLineChars: 100_000,
			});
			assert.equal(shown.at(-1)?.lineNumber, 2);
		}
	});

	test("says how many lines were dropped to fit, and from which part", async () => {
		const lines: string[] = [];
		// Head lines two words apart: no run folds them.
		for (let i = 0; i < 60; i++) lines.push(`head ${word(i)} ${word(i + 100)} ${"h".repeat(600)}`);
		for (let i = 0; i < 40; i++) lines.push(`error: ${word(i)} ${"s".repeat(600)}`);
		for (let i = 0; i < 80; i++) lines.push(`tail ${word(i)} ${"t".repeat(600)}`);
		const options = viewOptions();
		const view = (await buildViewFromText(lines.join("\n"), options)).text;
		const shown = assertFaithfulView(view, lines, options);
		const head = shown.filter((line) => line.lineNumber <= 60).length;
		const signals = shown.filter((line) => line.lineNumber > 60 && line.lineNumber <= 100).length;
		const tail = shown.filter((line) => line.lineNumber > 100).length;
		assert.ok(head < 60 && signals < 40 && tail < 80);
		assert.ok(
			view.includes(`; ${60 - head} head, ${40 - signals} signal, ${80 - tail} tail lines dropped to fit 24000 chars`),
			view.split("\n").find((line) => line.includes("omitted")),
		);
		assert.ok(view.includes(`\n  ... tail (last ${tail} lines) ...\n`));
		assert.match(view.split("\n")[0], new RegExp(`showing head, ${signals} signal lines, tail$`));
	});
});

describe("signal lines", () => {
	test("spreads the chosen signal lines over the whole file", async () => {
		const lines: string[] = [];
		for (let i = 1; i <= 20_000; i++) lines.push(i % 100 === 0 ? `error: ${word(i)} failed` : `ok ${i}`);
		const options = viewOptions();
		const shown = assertFaithfulView((await buildViewFromText(lines.join("\n"), options)).text, lines, options);
		// The middle shows the 40 chosen signal lines and nothing else, but those of them the tail shows:
		// the tail, one run of `ok` lines, reaches past it to the last errors (the runs between them folded).
		const middle = numbersOf(shown.filter((line) => !line.inTail && line.lineNumber > 60));
		assert.ok(middle.every((n) => n % 100 === 0));
		const tailFrom = shown.find((line) => line.inTail)?.lineNumber ?? 0;
		assert.ok(middle.length >= 36 && middle.length <= 40 && tailFrom < 20_000 - 80, `${middle.length} in the middle`);
		const signals = numbersOf(shown).filter((n) => n > 60 && n <= 20_000 - 80 && n % 100 === 0);
		assert.ok(signals.length >= 40, `${signals.length} shown`);
		assert.ok(signals[0] <= 2_000, `first at ${signals[0]}`);
		assert.ok(
			signals.some((n) => n >= 8_000 && n <= 12_000),
			"one from the middle",
		);
		assert.ok(signals[signals.length - 1] >= 18_000, `last at ${signals.at(-1)}`);
	});

	test("shows identical repeated signals once, at the first line number, with a count", async () => {
		const lines: string[] = [];
		for (let i = 1; i <= 10_000; i++)
			lines.push(i > 100 && i <= 9000 && i % 20 === 0 ? "error: connection refused" : `ok ${i}`);
		const options = viewOptions();
		const shown = assertFaithfulView((await buildViewFromText(lines.join("\n"), options)).text, lines, options);
		const signals = shown.filter((line) => line.text === "error: connection refused");
		assert.deepEqual(
			signals.map((line) => [line.lineNumber, line.count]),
			[[120, 445]],
		);
	});

	test("shows a line a retry printed again at its last copy too, with its block, saying which line it repeats", async () => {
		// A test run, run again by a retry wrapper: both attempts print the same lines.
		const run: string[] = [];
		for (let i = 1; i <= 400; i++) {
			run.push(i === 200 ? "test_total ... FAIL" : `test_case_${word(i)} ... ok`);
			if (i === 200) run.push("    at total (src/cart.py:12)", "    at run_case (src/runner.py:40)");
		}
		run.push("AssertionError: 41 != 42", "FAILED (failures=1)");
		const lines = [...run, "Attempt 1 failed, retrying (attempt 2 of 2)", ...run, "tail line"];
		const options = viewOptions();
		const shown = assertFaithfulView((await buildViewFromText(lines.join("\n"), options)).text, lines, options);
		const second = run.length + 2;
		const failure = shown.filter((line) => line.text === "test_total ... FAIL");
		assert.deepEqual(
			failure.map((line) => [line.lineNumber, line.count, line.sameAs]),
			[
				[200, 2, undefined],
				[second + 199, 1, 200],
			],
		);
		// The last attempt's failure with its block: the frames below it.
		const frames = shown.filter((line) => line.lineNumber > second && line.text.startsWith("    at "));
		assert.deepEqual(
			frames.map((line) => [line.lineNumber, line.context]),
			[
				[second + 200, true],
				[second + 201, true],
			],
		);
	});

	test("does not repeat signal lines of the head or the tail", async () => {
		const lines: string[] = [
			"error: boot failed",
			...Array.from({ length: 5000 }, (_, i) => (i >= 100 && i % 50 === 0 ? "error: boot failed" : `ok ${i}`)),
		];
		for (let i = 0; i < 80; i++) lines.push(i === 40 ? "error: in the tail" : `tail ${i}`);
		const options = viewOptions();
		const view = (await buildViewFromText(lines.join("\n"), options)).text;
		const shown = assertFaithfulView(view, lines, options);
		assert.equal(shown.filter((line) => line.text === "error: boot failed").length, 1);
		assert.equal(shown.filter((line) => line.text === "error: in the tail").length, 1);
		assert.match(view.split("\n")[0], /showing head, 0 signal lines, tail$/);
	});

	test("lets warnings yield to errors when room is short", async () => {
		const lines: string[] = [];
		for (let i = 1; i <= 60; i++) lines.push(`head ${i}`);
		for (let i = 1; i <= 30; i++)
			lines.push(`error: ${word(i)} ${"e".repeat(300)}`, `warning: ${word(i)} ${"w".repeat(300)}`);
		for (let i = 1; i <= 80; i++) lines.push(`tail ${i}`);
		const options = viewOptions({ thresholdChars: 8000 });
		const shown = assertFaithfulView((await buildViewFromText(lines.join("\n"), options)).text, lines, options);
		const signals = shown.filter((line) => line.lineNumber > 60 && line.lineNumber <= 120);
		assert.ok(signals.length > 3 && signals.length < 30, `${signals.length} signal lines fit`);
		assert.ok(
			signals.every((line) => line.text.startsWith("error")),
			"no warning while an error was left out",
		);
	});

	test("shows the step the failure happened in: the last line above its first error saying what the program was doing", async () => {
		const lines: string[] = [];
		for (let i = 1; i <= 40; i++) {
			lines.push(
				`INFO  [alembic.runtime.migration] Running upgrade ${String(i - 1).padStart(4, "0")} -> ${String(i).padStart(4, "0")}, seed ${word(i)}`,
			);
			for (let k = 1; k <= 30; k++)
				lines.push(`INFO  [sqlalchemy.engine.Engine] INSERT INTO customers VALUES (${i * 100 + k})`);
		}
		lines.push("INFO  [sqlalchemy.engine.Engine] ROLLBACK");
		const failure = lines.length + 1;
		lines.push("sqlite3.IntegrityError: UNIQUE constraint failed: customers.email");
		// Far from the end: the error is shown among the middle's lines, with its context.
		for (let k = 1; k <= 3000; k++)
			lines.push(k % 2 === 0 ? `INFO  [cleanup] closing connection ${k}` : `DEBUG pool size now ${k}, idle ${k % 7}`);
		const options = viewOptions();
		const shown = assertFaithfulView((await buildViewFromText(lines.join("\n"), options)).text, lines, options);
		const steps = shown.filter((line) => line.text.includes("Running upgrade"));
		assert.ok(shown.some((line) => line.lineNumber === failure));
		assert.deepEqual(
			steps.filter((line) => line.lineNumber > 60).map((line) => line.text),
			[lines[failure - 33]],
			"the last step before the error, no other",
		);
		assert.match(lines[failure - 33], /Running upgrade 0039 -> 0040/);
	});

	test("does not take a step in progress from before the CI step a failure is in", async () => {
		const lines: string[] = [];
		for (let k = 1; k <= 100; k++) lines.push(`runner preamble ${k}`);
		lines.push("##[group]Run actions/checkout@v4");
		for (let k = 1; k <= 100; k++) lines.push(`Fetching object ${k}`);
		lines.push("##[endgroup]", "##[group]Run make check", "make check", "##[endgroup]");
		for (let k = 1; k <= 100; k++) lines.push(`compiled module ${k}`);
		const failure = lines.length + 1;
		lines.push("src/a.c:3:5: error: 'total' undeclared");
		for (let k = 1; k <= 3000; k++) lines.push(`linked object ${k}`);
		const options = viewOptions();
		const shown = assertFaithfulView((await buildViewFromText(lines.join("\n"), options)).text, lines, options);
		assert.ok(shown.some((line) => line.lineNumber === failure));
		assert.deepEqual(
			shown.filter((line) => line.text.startsWith("Fetching object 100")),
			[],
			"the checkout step's last line is not the failing step's step",
		);
	});

	test("pays for the separators context rows apart from their signal line need: the view fits and its last line is whole", async () => {
		// A real build's output with another job's lines interleaved (turbo's `pkg:task: ` tags): an
		// error's context rows are its own job's lines, each apart from the next, and the step in
		// progress (`make[1]: Entering directory`) is far above. Each apart row costs a `--` row too.
		const fixture = loadRealFixtures().find((candidate) => candidate.name === "gcc-make-error");
		assert.ok(fixture);
		const lines: string[] = [];
		let seed = 7;
		const next = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
		const hex = (k: number) => (((k + 1) * 2654435761) % 4294967296).toString(16).padStart(8, "0");
		const other = (k: number) =>
			k % 2 === 0
				? `transforming (${k}) src/components/Widget${k}.tsx`
				: `dist/assets/Widget${k}-${hex(k)}.js  ${(k % 300) + 1}.${k % 100} kB │ gzip: ${(k % 90) + 1}.${k % 10} kB`;
		let k = 0;
		for (const line of fixture.lines) {
			if (next() < 0.3)
				for (let n = 1 + Math.floor(next() * 4); n > 0; n--) lines.push(`@acme/web:build: ${other(k++)}`);
			lines.push(`@acme/api:test: ${line}`);
		}
		const options = { ...createDefaultConfig(), id: "0123456789ab", toolName: "bash" };
		const view = (await buildViewFromText(lines.join("\n"), options)).text;
		const shown = assertFaithfulView(view, lines, options);
		assert.equal(shown.at(-1)?.kept, "whole", "the last line is whole");
		assert.ok(
			shown.some((line) => line.text.includes("make[1]: Entering directory")),
			"a step in progress is shown",
		);
	});

	test("reads an untagged line's block and context among the untagged lines when another job's tagged lines interleave", async () => {
		// Another job (a bundler in watch mode, a parallel task) writes its lines, each after its tag,
		// among the output's own untagged lines: a frame of a traceback, a diagnostic's location line,
		// a file's header above its findings lie one or more of those lines away. Read at the default
		// budget without them, every decisive line of each output is shown; before, six of them were not.
		const fixtures = loadTuningFixtures();
		const withBundler = interleaved((k) => `[web] ${chunkLine(k)}`, 1);
		const missed: string[] = [];
		for (const name of [
			"tuning/eslint-one-error-many-warnings",
			"tune2/gfortran-no-implicit-type",
			"tune2/lua-xpcall-traceback",
			"tune2/helgrind-data-race",
			"tune4/behave-before-feature-hook-error",
			"tune4/tidy-html-unknown-element",
		]) {
			const fixture = fixtures.get(name);
			assert.ok(fixture, name);
			const { lines, at } = withBundler(fixture.lines);
			const options = viewOptions();
			const shown = parseViewLines((await buildViewFromText(lines.join("\n"), options)).text);
			for (const line of fixture.decisive) {
				const lineNumber = at[line.lineNumber - 1] + 1;
				if (!isShownInView(shown, lineNumber, showLine(lines[lineNumber - 1]), options.maxLineChars))
					missed.push(`${name}:${lineNumber}: ${line.shown}`);
			}
		}
		assert.deepEqual(missed, []);
	});

	test("reads a line after a log drain's, a container runtime's, a stream's or a job runner's frame", async () => {
		// Each tuning output here loses decisive lines behind the frame when it is not read past: a
		// failure word is no longer at the line's start, a block's lines are indented past it.
		const pad = (n: number) => String(n).padStart(2, "0");
		const time = (i: number) => `2026-12-06T10:${pad(Math.floor(i / 60) % 60)}:${pad(i % 60)}`;
		const frames: Array<[string, string, (line: string, i: number) => string]> = [
			// Heroku's log drain: a timestamp, then the program and its dyno, as syslog tags a line.
			["real/go-test-fail-panic", "log drain", (line, i) => `${time(i)}.123456+00:00 app[web.1]: ${line}`],
			// The CRI log format kubelet writes: the time, the stream, P (partial) or F (full).
			[
				"real/go-test-fail-panic",
				"container runtime",
				(line, i) => `${time(i)}.123456789Z ${/fail|panic|error/i.test(line) ? "stderr" : "stdout"} F ${line}`,
			],
			// A runner that labels each line with the stream it was written to.
			[
				"tune2/helgrind-data-race",
				"stream labels",
				(line) => `${/error|fail|conflict|race/i.test(line) ? "[stderr]" : "[stdout]"} ${line}`,
			],
			// rsyslog's file format: an RFC 3339 time, the host, the program and its process id.
			["real/go-test-fail-panic", "rsyslog", (line, i) => `${time(i)}.123456+00:00 ci-runner-07 go[4123]: ${line}`],
			// Bazel's `--show_timestamps`, yarn's `workspaces foreach --verbose`.
			["tune2/helgrind-data-race", "a time in parentheses", (line, i) => `(${time(i).slice(11)}) ${line}`],
			["tune2/helgrind-data-race", "yarn foreach", (line) => `[@acme/ledger]: ${line}`],
			// pnpm's box around a script's output, and Earthly's target before each line.
			["tune2/helgrind-data-race", "pnpm's box", (line) => `│ ${line}`],
			["real/go-test-fail-panic", "Earthly", (line) => `+test | ${line}`],
			// GNU parallel's `--tag`: the job's argument and a tab.
			["tune2/helgrind-data-race", "parallel --tag", (line) => `tests/ledger_race.sh\t${line}`],
		];
		const fixtures = loadTuningFixtures();
		const options = { ...createDefaultConfig(), id: "0123456789ab", toolName: "bash" };
		for (const [name, frame, framed] of frames) {
			const fixture = fixtures.get(name);
			assert.ok(fixture, name);
			const lines = fixture.lines.map(framed);
			const shown = parseViewLines((await buildViewFromText(lines.join("\n"), options)).text);
			const missed = fixture.decisive.filter(
				(line) => !isShownInView(shown, line.lineNumber, showLine(lines[line.lineNumber - 1]), options.maxLineChars),
			);
			assert.deepEqual(
				missed.map((line) => lines[line.lineNumber - 1]),
				[],
				`${name} behind ${frame}`,
			);
		}
	});

	test("shows distinct failures of a JSON-lines log as distinct lines, not one record shape", async () => {
		// Docker's json-file log: every line a record of quoted members. As quoted strings every record
		// was one shape, and the race's `--- FAIL` and `FAIL\tpkg` lines collapsed into its first warning.
		const fixture = loadTuningFixtures().get("tune2/go-race-detector");
		assert.ok(fixture);
		const lines = fixture.lines.map(
			(line, i) =>
				`{"log":${JSON.stringify(`${line}\n`)},"stream":"stdout","time":"2026-12-06T10:00:${String(i % 60).padStart(2, "0")}.1Z"}`,
		);
		const options = { ...createDefaultConfig(), id: "0123456789ab", toolName: "bash" };
		const shown = parseViewLines((await buildViewFromText(lines.join("\n"), options)).text);
		// And a record is no routine line of a block for being one of thousands of records: the test's
		// `testing.go:1319: race detected` under its `--- FAIL` is shown with it.
		for (const text of [
			"--- FAIL: TestConcurrentRestock (0.01s)",
			"    testing.go:1319: race detected during execution of test",
			"FAIL\texample.invalid/inventory/pkg11/cache\t0.042s",
		]) {
			const number = fixture.lines.indexOf(text) + 1;
			assert.ok(number > 0, text);
			assert.ok(isShownInView(shown, number, showLine(lines[number - 1]), options.maxLineChars), text);
		}
	});

	test("keeps an error's own lines before the tail's oldest lines when room is short", async () => {
		const lines: string[] = [];
		for (let i = 1; i <= 60; i++) lines.push(`head ${i}`);
		for (let i = 1; i <= 400; i++) lines.push(`compiling src/module_${i}.c`);
		lines.push(
			"src/report.c:7:9: warning: unused variable 'spare' [-Wunused-variable]",
			"    7 |     int spare = 0;",
			"      |         ^~~~~",
		);
		for (let i = 401; i <= 800; i++) lines.push(`compiling src/module_${i}.c`);
		const error = lines.length + 1;
		lines.push(
			"src/ledger.c:42:17: error: incompatible types when assigning to type 'long' from type 'char *'",
			"   42 |         total = name;",
			"      |                 ^~~~",
		);
		for (let i = 801; i <= 1200; i++) lines.push(`compiling src/module_${i}.c`);
		// Tail lines of distinct shapes: none fold, so the tail alone could take all the room.
		for (let i = 1; i <= 80; i++) lines.push(`linking ${word(i)} into the shared object ${"-".repeat(60)}`);
		for (const thresholdChars of [2000, 3000, 4000, 6000, 8000]) {
			const options = viewOptions({ thresholdChars });
			const numbers = numbersOf(
				assertFaithfulView((await buildViewFromText(lines.join("\n"), options)).text, lines, options),
			);
			const tailShown = numbers.filter((n) => n > lines.length - 80).length;
			assert.ok(tailShown >= 5 && tailShown < 80, `${thresholdChars}: the tail keeps its share, ${tailShown} lines`);
			assert.deepEqual(
				range(error, error + 2).filter((n) => numbers.includes(n)),
				range(error, error + 2),
				`${thresholdChars}: the error with its source line and caret`,
			);
		}
	});

	test("shows the error lines of a head and a tail the budget cuts, where they are, and counts the rest as dropped", async () => {
		const lines: string[] = [];
		// Lines of distinct shapes: no run folds, so a tight budget cuts the head and the tail.
		for (let i = 1; i <= 60; i++)
			lines.push(`starting service ${word(i)} with settings ${word(i + 100)} ${"=".repeat(80)}`);
		lines[46] = "[ALERT] config : Proxy 'fe_edge': unable to find required use_backend: 'be_order_211'.";
		for (let i = 1; i <= 2000; i++) lines.push(`checking backend ${i}`);
		for (let i = 1; i <= 80; i++) lines.push(`stopping service ${word(i)} and releasing its port ${"=".repeat(80)}`);
		const tailError = lines.length - 80 + 3;
		lines[tailError - 1] = "Error: backend 'be_order_211' has no server available";
		const options = viewOptions({ thresholdChars: 6000 });
		const view = (await buildViewFromText(lines.join("\n"), options)).text;
		const shown = assertFaithfulView(view, lines, options);
		const numbers = numbersOf(shown);
		assert.ok(!numbers.includes(46) && !numbers.includes(tailError + 1), "the budget cut the head and the tail");
		assert.ok(numbers.includes(47) && numbers.includes(tailError), "their error lines are shown");
		const [, head, tail] = /; (\d+) head, (\d+) tail lines dropped/.exec(view) ?? [];
		const shownHead = numbers.filter((n) => n <= 60).length;
		const shownTail = numbers.filter((n) => n > lines.length - 80).length;
		assert.equal(Number(head), 60 - shownHead, "the head lines dropped, not counting the error shown");
		assert.equal(Number(tail), 80 - shownTail, "the tail lines dropped, not counting the error shown");
	});

	test("adds warnings after the errors when there is room", async () => {
		const lines: string[] = [];
		for (let i = 1; i <= 60; i++) lines.push(`head ${i}`);
		for (let i = 1; i <= 30; i++) lines.push(`error: ${word(i)} broken`, `warning: ${word(i)} unused`);
		// Tail lines of shapes of their own: a tail that is one run would reach past it to these lines.
		for (let i = 1; i <= 80; i++) lines.push(`tail ${word(i)}`);
		const options = viewOptions();
		const shown = assertFaithfulView((await buildViewFromText(lines.join("\n"), options)).text, lines, options);
		// Lines shown for themselves; a warning right under an error may also be shown as its context.
		const signals = shown.filter((line) => line.lineNumber > 60 && line.lineNumber <= 120 && !line.context);
		assert.equal(signals.filter((line) => line.text.startsWith("error")).length, 30);
		assert.equal(signals.filter((line) => line.text.startsWith("warning")).length, 10);
	});

	test("shows the end of a giant line when only its end signals", async () => {
		const lines = [
			"start",
			...Array.from({ length: 100 }, (_, i) => `ok ${i}`),
			`${"j".repeat(300_000)} Segmentation fault`,
		];
		for (let i = 0; i < 80; i++) lines.push(`tail ${i}`);
		const options = viewOptions({ headLines: 1 });
		const shown = assertFaithfulView((await buildViewFromText(lines.join("\n"), options)).text, lines, options);
		const giant = shown.find((line) => line.lineNumber === 102);
		assert.equal(giant?.kept, "end");
		assert.ok(giant?.text.endsWith("Segmentation fault"));
	});
});

describe("what a terminal would show", () => {
	test("clips a long line to maxLineChars with a note counting the cut characters", async () => {
		const long = "L".repeat(1234);
		const view = (await buildViewFromText(`a\n${long}\nb\n`, viewOptions())).text;
		assert.ok(view.includes(`\n     2: ${"L".repeat(500)} … [+734 chars]\n`));
	});

	test("counts cut characters in UTF-16 units without splitting a surrogate pair", async () => {
		const long = "😀".repeat(600);
		const text = `${long}\n`;
		const options = viewOptions();
		const shown = assertFaithfulView((await buildViewFromText(text, options)).text, text, options);
		assert.ok(!shown[0].text.includes("\ufffd"));
		assert.equal(shown[0].text.length, 500);
	});

	test("shows a progress-bar line in its final state", async () => {
		const text = `start\n10%\r20%\r100% done\nend\n`;
		const view = (await buildViewFromText(text, viewOptions())).text;
		assert.ok(view.includes("\n     2: 100% done\n"));
	});

	test("shows a long progress-bar line in its final state, not its first draw", async () => {
		const line = `${Array.from({ length: 3000 }, (_, i) => `${String(i % 100).padStart(3)}%`).join("\r")}\r100% done`;
		const view = (await buildViewFromText(`start\n${line}\nend\n`, viewOptions())).text;
		assert.ok(view.includes("\n     2: 100% done\n"), view);
	});

	test("removes ANSI colour codes from the view", async () => {
		const text = "\x1b[1m\x1b[31merror\x1b[0m: \x1b[33mbad\x1b[39m thing\n\x1b]0;title\x07plain\n";
		const view = (await buildViewFromText(text, viewOptions())).text;
		assert.ok(view.includes("\n     1: error: bad thing\n"));
		assert.ok(view.includes("\n     2: plain\n"));
		assert.ok(!view.includes("\x1b"));
	});

	test("hides the control strings a terminal does not show, and reads a line's start after them", async () => {
		// Buildkite stamps each line with an APC string (`ESC _bk;t=<ms> BEL`); a DCS, a PM, an SOS
		// and an OSC hyperlink (`ESC ]8;;url ESC \\`) are not shown either.
		const lines = Array.from({ length: 1000 }, (_, i) => `\x1b_bk;t=${1733476800000 + i}\x07ok ${i}`);
		lines[500] = "\x1b_bk;t=1733476800500\x07FAIL src/cart.test.js";
		lines[600] =
			"\x1bPq#0;2;0;0;0\x1b\\\x1b^private\x07\x1bXstring\x1b\\see \x1b]8;;https://example.com/x\x1b\\the docs\x1b]8;;\x1b\\";
		const view = (await buildViewFromText(lines.join("\n"), viewOptions())).text;
		assert.ok(view.includes("\n   501: FAIL src/cart.test.js\n"), view);
		assert.equal(renderTerminalLine(lines[600]), "see the docs");
		assert.equal(renderTerminalLine("\x1b_unterminated"), "");
		assert.ok(!view.includes("bk;t="));
	});

	test("finds coloured signal lines and shows them without colour", async () => {
		const lines = Array.from({ length: 1000 }, (_, i) =>
			i === 500 ? "\x1b[1;31merror[E0308]\x1b[0m: mismatched types" : `ok ${i}`,
		);
		const options = viewOptions();
		const view = (await buildViewFromText(lines.join("\n"), options)).text;
		assert.ok(view.includes("\n   501: error[E0308]: mismatched types\n"));
	});
});

describe("when the store failed", () => {
	test("says the output could not be stored and why, shows no id, and fits", async () => {
		const text = "error: x\n".repeat(100) + "ok\n".repeat(100_000);
		const options = viewOptions({ id: undefined, storeError: "EACCES: permission denied, open '/store/abc.txt'" });
		const view = (await buildViewFromText(text, options)).text;
		assertFaithfulView(view, text, options);
		assert.ok(!view.includes("id="));
		assert.match(view, /could not be stored \(EACCES: permission denied, open '\/store\/abc.txt'\)/);
		assert.match(view.split("\n").at(-1) ?? "", /nothing was stored/);
	});

	test("fits in 1000 characters even with a long reason, tool name and capping note", async () => {
		const text = Array.from({ length: 100_000 }, (_, i) =>
			i % 1000 === 0 ? `error: ${i} ${"x".repeat(2000)}` : `line ${i}`,
		).join("\n");
		const options = viewOptions({
			thresholdChars: 1000,
			id: undefined,
			storeError: "E".repeat(10_000),
			toolName: "tool\n".repeat(1000),
			truncatedNote: "note ".repeat(1000),
		});
		const view = (await buildViewFromText(text, options)).text;
		assertFaithfulView(view, text, options);
		assert.equal(view.split("\n")[0].includes("\n"), false);
		assert.ok(view.split("\n").length >= 4, "the view still shows lines");
	});
});
