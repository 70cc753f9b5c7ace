// The frame an output is written in (src/lines/frame.ts): learned from its first lines when most of
// them share a prefix that stands before lines of every kind, and never from what a line says of its
// subject (a location, a verdict, a level alone, a numbered subject, one template's lines); then a
// line's own text starts after it, in the scan and in the view.

import assert from "node:assert/strict";
import { describe, test, type TestContext } from "node:test";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import {
	FRAME_SAMPLE_BYTES,
	frameLengthAt,
	frameSamples,
	learnLineFrame,
	learnLineReading,
	learnRecordLevel,
	type LineFrame,
	unframed,
} from "../../src/lines/frame.js";
import { CI_FRAMES, frameOutput, prefixed } from "../fixtures/ci/frames.js";
import { isShownInView, parseViewLines, type RealFixture, showLine } from "../fixtures/real/fixtures.js";
import { loadTune2Fixtures } from "../fixtures/unseen-tune2/fixtures.js";
import { loadTune3Fixtures } from "../fixtures/unseen-tune3/fixtures.js";
import { loadUnseenFixtures } from "../fixtures/unseen/fixtures.js";
import { buildDefaultView } from "../fixtures/default-view.js";
import { DEFAULT_CONFIG } from "../../src/config/config.js";
import { SignalFinder } from "../../src/signals/finder.js";
import { createTempDir } from "../helpers/tmp.js";

/** A build's lines of many kinds, a blank one among them, as a tool prints them under any frame. */
const BODY = [
	"Compiling widgets v0.1.0 (/home/dev/widgets)",
	"src/cart.c: In function ‘cart_total’:",
	"src/cart.c:12:5: error: ‘rate’ undeclared (first use in this function)",
	"   12 |     return rate * n;",
	"      |     ^~~~",
	"make[1]: *** [Makefile:7: cart.o] Error 1",
	"",
	"=== RUN   TestTotals",
	"--- FAIL: TestTotals (0.00s)",
	"    totals_test.go:9: got 3, want 4",
	"FAIL\texample.com/cart\t0.004s",
	"Traceback (most recent call last):",
	'  File "cart.py", line 3, in <module>',
	"ZeroDivisionError: division by zero",
	"npm error code 1",
	"1 failed, 12 passed in 0.41s",
	"warning: unused variable `scratch`",
	"Downloading rate tables...",
	"done.",
	"Summary: 2 errors",
];

/** `lines` repeated to `count` lines. */
function repeated(lines: readonly string[], count: number): string[] {
	return Array.from({ length: count }, (_, index) => lines[index % lines.length]);
}

/** The frame's tokens, each run of digits (that may change from line to line) as `#`. */
function tokensOf(frame: LineFrame | undefined): readonly string[] | undefined {
	return frame?.tokens.map((token) => token.replace(/\0/g, "#"));
}

describe("which prefix is the frame an output is written in", () => {
	const framed: Array<[string, (index: number) => string, string[]]> = [
		["a remote builder's", () => "remote: ", ["remote:"]],
		[
			"Ruby's Logger",
			(index) => `I, [2026-12-06T09:30:${String(index % 60).padStart(2, "0")}.123456 #4123]  INFO -- : `,
			["I,", "[#-#-#T#:#:#.#", "##]", "INFO", "--", ":"],
		],
		["yarn's build step", () => "➤ YN0000: │ ", ["➤", "YN#:", "│"]],
		["an epoch time", (index) => `${1765013400 + index}.${100 + index} `, ["#.#"]],
		["`cat -n`'s numbers", (index) => `${String(index + 1).padStart(6)}\t`, ["#"]],
		["ant's task", () => "    [javac] ", ["[javac]"]],
		["a process's tag", () => "[pid 4123] ", ["[pid", "#]"]],
	];
	for (const [name, prefix, tokens] of framed)
		test(`${name}: learned, digits that change aside`, () => {
			const lines = repeated(BODY, 40).map((line, index) => prefix(index) + line);
			assert.deepEqual(tokensOf(learnLineFrame(lines)), tokens);
		});

	test("after a timestamp, which stays the line's (TeamCity's step after its time)", () => {
		const lines = repeated(BODY, 40).map(
			(line, index) => `[09:30:${String(index % 60).padStart(2, "0")}] :\t [Step 2/3] ${line}`,
		);
		const frame = learnLineFrame(lines);
		assert.deepEqual(tokensOf(frame), [":", "[Step", "#/#]"]);
		assert.equal(unframed(frame, lines[2]), `[09:30:02] ${BODY[2]}`);
	});

	test("a remote builder's before one statement's lines: the builder's prefix, not the statement's first words", () => {
		// Three lines in four are one INSERT's, and `INSERT INTO orders (id, total)` ends like a label; but
		// every line after it begins alike (`VALUES`): those words are the lines' own.
		const inserts = Array.from({ length: 48 }, (_, i) => `INSERT INTO orders (id, total) VALUES (${i}, ${i * 7});`);
		const lines = [...inserts, ...BODY.slice(0, 12)].map((line) => `remote: ${line}`);
		assert.deepEqual(tokensOf(learnLineFrame(lines)), ["remote:"]);
		assert.equal(unframed(learnLineFrame(lines), "remote: Parse error near line 9"), "Parse error near line 9");
	});

	const notFramed: Array<[string, string[]]> = [
		["TAP's results", repeated(["ok 1 - totals", "ok 2 - rates", "ok 3 - carts"], 40).map((l, i) => l + i)],
		["cargo's progress", repeated(["   Compiling serde v1.0.1", "   Compiling libc v0.2.9"], 40)],
		["a level alone", repeated(BODY, 40).map((line) => `[INFO] ${line}`)],
		["a list's bullet", repeated(BODY, 40).map((line) => `- ${line}`)],
		["a file's findings", repeated(BODY, 40).map((line, i) => `src/cart_${i}.py:${i + 3}:5: ${line}`)],
		["a location's line and column", repeated(BODY, 40).map((line, i) => `  ${i + 3}:5  ${line}`)],
		["a numbered subject", repeated(BODY, 40).map((line, i) => `request ${i}: ${line}`)],
		["a named worker", repeated(BODY, 40).map((line, i) => `[worker-${i % 4}] ${line}`)],
		["a verdict", repeated(BODY, 40).map((line) => `  [PASS] ${line}`)],
		["an error's level", repeated(BODY, 40).map((line) => `ERROR runner: ${line}`)],
		[
			"one template's lines",
			Array.from({ length: 40 }, (_, i) => `INFO rendered invoice-${i} rate=${i % 7} (warnings=0, errors=0)`),
		],
		["too few lines", repeated(BODY, 15).map((line) => `remote: ${line}`)],
		[
			"a prefix on fewer than three lines in four",
			repeated(BODY, 40).map((line, i) => (i % 3 === 0 ? line : `remote: ${line}`)),
		],
	];
	for (const [name, lines] of notFramed)
		test(`not ${name}`, () => {
			assert.equal(learnLineFrame(lines), undefined);
		});
});

describe("a frame learned further on, where the first lines are a runner's", () => {
	// A CI job's preamble and set-up steps (no frame), then the failing step's output in one, then the job's cleanup.
	const preamble = Array.from({ length: 120 }, (_, i) => `${["Run", "Syncing", "Fetching", "env:"][i % 4]} step ${i}`);
	const cleanup = Array.from({ length: 20 }, (_, i) => `Terminate orphan process: pid (${2100 + i})`);
	function sampled(lines: readonly string[]): LineFrame | undefined {
		const bytes = Buffer.from(`${lines.join("\n")}\n`, "utf8");
		const samples = frameSamples(bytes.length);
		assert.equal(samples.length, 2, "long enough for a later sample");
		return learnLineReading(
			samples.map(({ from, to }) => bytes.subarray(from, to).toString("utf8")),
			bytes.length,
		).frame;
	}

	test("a remote builder's, read from the lines near the end", () => {
		const framed = repeated(BODY, 2000).map((line) => `remote: ${line}`);
		assert.deepEqual(tokensOf(sampled([...preamble, ...framed, ...cleanup])), ["remote:"]);
	});

	test("a wrapper's before lines all of one or two kinds (go test's runs, unittest's verdicts)", () => {
		const goTest = Array.from({ length: 2000 }, (_, i) =>
			i % 2 === 0 ? `=== RUN   TestTotal${i}` : `--- PASS: TestTotal${i - 1} (0.00s)`,
		);
		const unittest = Array.from({ length: 2000 }, (_, i) => `test_total_${i} (tests.test_cart.CartTests) ... ok`);
		for (const [wrapper, tokens] of [
			["remote: ", ["remote:"]],
			["➤ YN0000: │ ", ["➤", "YN#:", "│"]],
			["2026-12-06 09:30:00,123 INFO runner: ", ["INFO", "runner:"]],
		] as const)
			for (const lines of [goTest, unittest])
				assert.deepEqual(
					tokensOf(sampled([...preamble, ...lines.map((line) => `${wrapper}${line}`), ...cleanup])),
					tokens,
					`${wrapper}${lines[0]}`,
				);
	});

	test("in a job's log too short for two samples apart, from the bytes after the first", () => {
		const framed = repeated(BODY, 700).map((line) => `remote: ${line}`);
		const lines = [...preamble, ...framed, ...cleanup];
		const bytes = Buffer.from(`${lines.join("\n")}\n`, "utf8");
		assert.ok(bytes.length > FRAME_SAMPLE_BYTES && bytes.length < 3 * FRAME_SAMPLE_BYTES, `${bytes.length} bytes`);
		assert.deepEqual(tokensOf(sampled(lines)), ["remote:"]);
	});

	test("not one job's lines that fill the later sample", () => {
		const worker = Array.from({ length: 2000 }, (_, i) => `[worker-2] shard ${i}: 16 rows ok, subtotal ${i * 7}`);
		assert.equal(sampled([...preamble, ...worker, ...cleanup]), undefined);
	});
});

describe("a line read in its frame", () => {
	const frame = learnLineFrame(repeated(BODY, 40).map((line) => `remote: ${line}`));

	test("keeps its own indentation after the one separator, its timestamp before", () => {
		assert.equal(unframed(frame, "remote:     3 |     return rate * n;"), "    3 |     return rate * n;");
		assert.equal(
			unframed(frame, "2026-12-06T09:30:00.1234567Z remote: FAIL\tpkg"),
			"2026-12-06T09:30:00.1234567Z FAIL\tpkg",
		);
		assert.equal(unframed(frame, "remote:"), "");
	});

	test("is itself without the frame, or with a token that only starts like it", () => {
		assert.equal(unframed(frame, "Counting objects: 100% (5/5), done."), "Counting objects: 100% (5/5), done.");
		assert.equal(frameLengthAt(frame as LineFrame, "remote:x", 0), 0);
		assert.equal(unframed(undefined, "remote: FAIL"), "remote: FAIL");
	});

	test("is learned from the whole lines of its samples: the first bytes, and bytes near the end of a long output", () => {
		assert.deepEqual(frameSamples(10_000), [{ from: 0, to: 10_000 }]);
		assert.deepEqual(frameSamples(FRAME_SAMPLE_BYTES), [{ from: 0, to: FRAME_SAMPLE_BYTES }]);
		// Too short for two samples apart: the second right after the first.
		assert.deepEqual(frameSamples(40_000), [
			{ from: 0, to: FRAME_SAMPLE_BYTES },
			{ from: FRAME_SAMPLE_BYTES, to: 2 * FRAME_SAMPLE_BYTES },
		]);
		assert.deepEqual(frameSamples(FRAME_SAMPLE_BYTES + 100), [
			{ from: 0, to: FRAME_SAMPLE_BYTES },
			{ from: FRAME_SAMPLE_BYTES, to: FRAME_SAMPLE_BYTES + 100 },
		]);
		assert.deepEqual(frameSamples(100_000), [
			{ from: 0, to: FRAME_SAMPLE_BYTES },
			{ from: 100_000 - 2 * FRAME_SAMPLE_BYTES, to: 100_000 - FRAME_SAMPLE_BYTES },
		]);
		const text = (count: number) =>
			repeated(BODY, count)
				.map((line) => `remote: ${line}\n`)
				.join("");
		const short = text(40);
		assert.deepEqual(tokensOf(learnLineReading([short], Buffer.byteLength(short)).frame), ["remote:"]);
		// A first sample cut inside a line: that line is not read (it would lack its frame's end).
		const long = Buffer.from(text(600), "utf8");
		assert.ok(long.length > FRAME_SAMPLE_BYTES);
		const [first] = frameSamples(long.length);
		assert.deepEqual(
			tokensOf(learnLineReading([long.subarray(first.from, first.to).toString("utf8")], long.length).frame),
			["remote:"],
		);
	});
});

test("a line the signal pattern takes without the frame it takes in it too", () => {
	// A frame that starts with a mark the pattern takes at a line's start (`! `, as TeX marks an
	// error): the text after the timestamp is tested as before, the text after the frame besides.
	const stamp = (index: number) => `2026-12-06T09:30:${String(index % 60).padStart(2, "0")}.1234567Z `;
	const lines = repeated(BODY, 40).map((line, index) => `${stamp(index)}! [lint] ${line}`);
	const frame = learnLineFrame(lines);
	assert.deepEqual(tokensOf(frame), ["!", "[lint]"]);
	const bare = new SignalFinder(DEFAULT_CONFIG.signalRegex);
	const framed = new SignalFinder(DEFAULT_CONFIG.signalRegex, undefined, frame);
	const found = (finder: SignalFinder) => lines.filter((line, index) => finder.testLine(line, index + 1));
	assert.equal(found(bare).length, lines.length);
	assert.deepEqual(
		found(bare).filter((line) => !found(framed).includes(line)),
		[],
	);
	// And past the frame: `FAIL\texample.com/cart` starts its line only there.
	assert.ok(found(framed).some((line) => line.endsWith("FAIL\texample.com/cart\t0.004s")));
});

describe("the level every record of an output carries", () => {
	const record = (index: number, level: string, message: string) =>
		`time="2026-12-06T09:30:${String(index % 60).padStart(2, "0")}.123Z" level=${level} msg=${JSON.stringify(message)}`;
	const lines = (count: number, levelOf: (index: number) => string) =>
		Array.from({ length: count }, (_, index) => record(index, levelOf(index), `gcc -c src/spool_${index}.c`));

	test("is learned when three in four of the sample's records carry it, from 16 of them at least", () => {
		assert.equal(learnRecordLevel(lines(64, () => "info")), "info");
		assert.equal(learnRecordLevel(lines(64, (index) => (index % 5 === 4 ? "warn" : "info"))), "info");
		// JSON records, the level after the message, in any case.
		const json = Array.from({ length: 20 }, (_, index) => JSON.stringify({ msg: `step ${index}`, level: "INFO" }));
		assert.equal(learnRecordLevel(json), "info");
		// Blank lines are no lines of the sample.
		assert.equal(learnRecordLevel([...lines(16, () => "info"), "", "", ""]), "info");
	});

	test("is none where levels vary, records are few, or lines are no records that wrap a line", () => {
		assert.equal(learnRecordLevel(lines(64, (index) => (index % 3 === 0 ? "warn" : "info"))), undefined);
		assert.equal(learnRecordLevel(lines(15, () => "info")), undefined);
		assert.equal(learnRecordLevel([...lines(40, () => "info"), ...Array(24).fill("plain line")]), undefined);
		// A level without a message member (`level=info` alone): no line is wrapped.
		const bare = Array.from({ length: 64 }, (_, index) => `ts=${index} level=info component=sync rows=${index}`);
		assert.equal(learnRecordLevel(bare), undefined);
	});

	test("is learned further on when a CI runner's lines fill the first sample", () => {
		const runner = Array.from({ length: 400 }, (_, index) => `Runner line ${index}: preparing the job`).join("\n");
		const later = `${lines(200, () => "info").join("\n")}\n`;
		const size = FRAME_SAMPLE_BYTES * 4;
		assert.equal(learnLineReading([runner, `partial line\n${later}`], size).recordLevel, "info");
		assert.equal(learnLineReading([runner], FRAME_SAMPLE_BYTES).recordLevel, undefined);
	});

	test("an error a supervisor's records wrap ranks as an error: its block shows before the tail grows (8 000 characters)", async (t) => {
		// gcc's analyzer path under `level=info msg="…"`: read by the record's `info`, the error was a
		// warning, the tail took the room and the path's lines were lost.
		const fixture = loadTune2Fixtures().find((candidate) => candidate.name === "gcc-analyzer-double-free");
		assert.ok(fixture);
		const wrapped = fixture.lines.map((line, index) => record(index, "info", line));
		const dir = await createTempDir(t);
		const path = join(dir, "output.log");
		await writeFile(path, `${wrapped.join("\n")}\n`);
		const shown = parseViewLines((await buildDefaultView(path, 8000)).text);
		const error = fixture.decisive.find((line) => line.raw.includes(": error: double-"));
		assert.ok(error);
		for (const lineNumber of [error.lineNumber - 1, error.lineNumber, error.lineNumber + 8])
			assert.ok(shown.has(lineNumber), `line ${lineNumber}: ${wrapped[lineNumber - 1]}`);
	});
});

describe("an output written in a frame keeps in its view what the bare output keeps", () => {
	/** The fixture's decisive lines at the same numbers, each line after `prefix`. */
	function inFrame(
		fixture: RealFixture,
		prefix: (index: number) => string,
	): { text: string; decisive: RealFixture["decisive"] } {
		const lines = prefixed(prefix)(fixture.lines).lines;
		return {
			text: `${lines.join("\n")}\n`,
			decisive: fixture.decisive.map((line) => {
				const raw = lines[line.lineNumber - 1];
				return { ...line, raw, shown: showLine(raw) };
			}),
		};
	}

	async function missed(t: TestContext, text: string, decisive: RealFixture["decisive"]): Promise<string[]> {
		const dir = await createTempDir(t);
		const path = join(dir, "output.log");
		await writeFile(path, text);
		const shown = parseViewLines((await buildDefaultView(path)).text);
		return decisive
			.filter((line) => !isShownInView(shown, line.lineNumber, line.shown, DEFAULT_CONFIG.maxLineChars))
			.map((line) => `${line.lineNumber}: ${line.shown}`);
	}

	const cases: Array<[string, () => RealFixture[], string, (index: number) => string]> = [
		// `FAIL\texample.com/bank/ledger` starts its line only past `remote: `; the deadlock's frames below it.
		["go-test-timeout-deadlock", loadTune3Fixtures, "a remote builder's", () => "remote: "],
		[
			"eslint-one-error-many-warnings",
			() => loadUnseenFixtures("tuning"),
			"Ruby's Logger",
			(index) =>
				`I, [2026-12-06T09:${String(30 + (Math.floor(index / 60) % 30)).padStart(2, "0")}:${String(index % 60).padStart(2, "0")}.123456 #4123]  INFO -- : `,
		],
	];
	test("eslint-one-error-many-warnings and gfortran-no-implicit-type under `remote: ` inside a GitHub job", async (t) => {
		// The runner's preamble fills the first lines: the frame is learned from lines near the end.
		const github = CI_FRAMES.find((frame) => frame.name === "github");
		assert.ok(github);
		const fixtures = [...loadUnseenFixtures("tuning"), ...loadTune2Fixtures()];
		for (const name of ["eslint-one-error-many-warnings", "gfortran-no-implicit-type"]) {
			const fixture = fixtures.find((candidate) => candidate.name === name);
			assert.ok(fixture, name);
			const framed = frameOutput({ ...github, within: prefixed(() => "remote: ") }, fixture);
			assert.deepEqual(await missed(t, framed.text, framed.decisive), [], name);
		}
	});

	test("a prefix adds no word to a line: git's short `UU` and svn's `U` lines read as bare", async (t) => {
		// `UU config/limits_0505.go` has two words of its own: no template's family (three at least), and
		// no head's run of lines one word apart. `[check] ` and a time before each line made them three.
		const fixtures = loadTune2Fixtures();
		const dir = await createTempDir(t);
		const viewed = async (lines: readonly string[]) => {
			const path = join(dir, "output.log");
			await writeFile(path, `${lines.join("\n")}\n`);
			return parseViewLines((await buildDefaultView(path)).text);
		};
		const prefixes = [
			() => "[check] ",
			(index: number) => `2026-12-06T09:${String(30 + (index % 30)).padStart(2, "0")}:00.123Z `,
		];
		for (const [name, lines] of [
			// Its rare lines: the files left in conflict among the merged ones.
			["git-merge-conflicts", [808, 945, 986, 1074, 1288]],
			// Its head's first `G` (merged) lines among the `U` (updated) ones.
			["svn-update-conflicts", [22, 23, 42, 43]],
		] as const) {
			const fixture = fixtures.find((candidate) => candidate.name === name);
			assert.ok(fixture, name);
			const bare = await viewed(fixture.lines);
			assert.deepEqual(
				lines.filter((lineNumber) => !bare.has(lineNumber)),
				[],
				`${name} bare`,
			);
			for (const prefix of prefixes) {
				const shown = await viewed(prefixed(prefix)(fixture.lines).lines);
				assert.deepEqual(
					lines.filter((lineNumber) => !shown.has(lineNumber)),
					[],
					`${name} after ${prefix(0)}`,
				);
			}
		}
	});

	for (const [name, load, frameName, prefix] of cases)
		test(`${name} under ${frameName} frame`, async (t) => {
			const fixture = load().find((candidate) => candidate.name === name);
			assert.ok(fixture, name);
			assert.deepEqual(await missed(t, fixture.text, fixture.decisive), [], "bare");
			const framed = inFrame(fixture, prefix);
			assert.deepEqual(await missed(t, framed.text, framed.decisive), [], frameName);
		});
});
