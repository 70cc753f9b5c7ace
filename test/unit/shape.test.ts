// The two forms of a line's shape (src/signals/shape.ts) differ exactly where its table says, and the
// rarity thresholds classify a count as that module documents.

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
	classifyShape,
	hashShape,
	RARE_CONTEXT_SHAPE_LINES,
	ROUTINE_CONTEXT_MIN_LINES,
	ROUTINE_CONTEXT_SHARE,
	SHAPE_CHARS,
	SHAPE_HASH_BLANK,
	SHAPE_HASH_BYTES,
	shapeOf,
	shapeStart,
	shapeWindowOf,
	frameSkeletonBytes,
	MAX_FRAME_BYTES,
	REPEAT_MIN_LINES,
} from "../../src/signals/shape.js";
import { ShapeCounter } from "../../src/signals/shape-counter.js";
import { learnLineFrame } from "../../src/lines/frame.js";
import { DEFAULT_CONFIG } from "../../src/config/config.js";
import { bufferSource } from "../../src/io/source.js";
import { buildViewFromFile, scanSource } from "../../src/view/compose.js";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { createRandom } from "../helpers/random.js";
import { createTempDir } from "../helpers/tmp.js";

function hashOf(text: string): number {
	const bytes = Buffer.from(text, "utf8");
	return hashShape(bytes, 0, bytes.length);
}

/** Whether the key and the hash each give `a` and `b` one shape: [key, hash]. */
function sameShape(a: string, b: string): [boolean, boolean] {
	return [shapeOf(a) === shapeOf(b), hashOf(a) === hashOf(b)];
}

describe("the shape key and the shape hash", () => {
	test("both give lines that differ only in their numbers and quoted strings one shape", () => {
		assert.deepEqual(sameShape("request 17 took 5 ms", "request 18 took 120 ms"), [true, true]);
		assert.deepEqual(sameShape('open "a.txt" failed', 'open "b/c.txt" failed'), [true, true]);
	});

	test("the key drops indentation, the hash keeps it", () => {
		assert.deepEqual(sameShape("    at run (a.js:1:2)", "at run (a.js:1:2)"), [true, false]);
	});

	test("the key sets paths aside anywhere, the hash only a leading path before a line number", () => {
		assert.deepEqual(sameShape("open /srv/a/b failed", "open /var/c failed"), [true, false]);
		assert.deepEqual(sameShape("src/a.c:12: error: x", "lib/other.c:3: error: x"), [true, true]);
	});

	test("both set a hex id (a whole word of 7 or more hex digits) aside, as a number", () => {
		assert.deepEqual(sameShape("commit deadbeefcafe by ann", "commit feedfacebead by ann"), [true, true]);
		// A bundler's content-hashed assets: one shape, whatever letters their hashes have.
		assert.deepEqual(
			sameShape("dist/assets/Widget12-9b2f8e61.js  4.1 kB", "dist/assets/Widget13-f22ae6c9.js  12.7 kB"),
			[true, true],
		);
		assert.deepEqual(sameShape("a3ed95caeb02: Pull complete", "FE4B2C1D9A07: Pull complete"), [true, true]);
		// Not whole words of hex digits, or too short: their letters tell lines apart.
		assert.deepEqual(sameShape("build cafe123g done", "build dead456h done")[1], false);
		assert.deepEqual(sameShape("build x_cafe1234 done", "build x_dead5678 done")[1], false);
		assert.deepEqual(sameShape("layer ab12 done", "layer cd34 done")[1], false);
	});

	test("the key of a JSON-lines record is its wrapped line's; the hash reads the record", () => {
		const record = (line: string, time: string) =>
			`{"log":${JSON.stringify(`${line}\n`)},"stream":"stderr","time":"2026-12-06T10:${time}.123456789Z"}`;
		// Two different lines: two keys (as quoted strings, every record would be one shape).
		assert.deepEqual(
			sameShape(record("--- FAIL: TestTotal (0.00s)", "00:01"), record("=== RUN   TestTotal", "00:02")),
			[false, true],
		);
		// One print statement's lines: one key, as the lines alone have.
		assert.equal(shapeOf(record("request 17 took 5 ms", "00:01")), shapeOf("request 18 took 120 ms"));
		assert.equal(
			shapeOf('{"level":40,"time":1796041042727,"msg":"upstream slow","sku":"SKU-1"}'),
			shapeOf("upstream slow"),
		);
		// A record with no text member keeps its own key.
		assert.equal(shapeOf('{"Action":"fail","Test":"TestTotal037"}'), "{Q:Q,Q:Q}");
	});

	test("the key reads SHAPE_CHARS characters, the hash SHAPE_HASH_BYTES bytes after the indentation", () => {
		const start = "w".repeat(SHAPE_HASH_BYTES);
		assert.deepEqual(sameShape(`${start} one`, `${start} two`), [false, true]);
		const longer = "w".repeat(SHAPE_CHARS);
		assert.deepEqual(sameShape(`${longer} one`, `${longer} two`), [true, true]);
	});

	test("the hash reads SHAPE_HASH_BYTES past the frame its output's lines start with", () => {
		// A journal's time, host and program: 33 skeleton bytes (each number one byte).
		const journal = Array.from({ length: 9 }, (_, i) => `Dec  6 10:27:${10 + i} ci-runner-07 npm[4123]: line ${i}`);
		assert.equal(frameSkeletonBytes(journal[0]), 33);
		assert.equal(shapeWindowOf(journal), SHAPE_HASH_BYTES + 33);
		// A job's tag (kubectl logs --prefix) is a frame; a level is the line's own word; no frame, no more.
		const tag = "[pod/widgets-check-7d9f8b6c5-x2k4q/check] ";
		assert.equal(
			shapeWindowOf([`${tag}ok 1`, `${tag}ok 2`, "", "unframed"]),
			SHAPE_HASH_BYTES + frameSkeletonBytes(tag),
		);
		assert.equal(shapeWindowOf(["[INFO] started", "[INFO] done"]), SHAPE_HASH_BYTES);
		assert.equal(shapeWindowOf(["make check", "ok 1"]), SHAPE_HASH_BYTES);
		// Most lines decide: a frame before one line in three is not the output's.
		assert.equal(shapeWindowOf([journal[0], "a", "b"]), SHAPE_HASH_BYTES);
		const long = `[${"x".repeat(38)}] `;
		assert.equal(
			shapeWindowOf([`${journal[0].slice(0, 40)}${long}${"y".repeat(60)}`]),
			SHAPE_HASH_BYTES + MAX_FRAME_BYTES,
		);
		// Two lines of one statement, different after the frame's 42 bytes and 18 of their own.
		const [a, b] = [`${tag}ok 12 - cart total is summed`, `${tag}ok 13 - cart total exceeds its limit`];
		const window = shapeWindowOf([a]);
		const [bytesA, bytesB] = [Buffer.from(a), Buffer.from(b)];
		assert.equal(hashShape(bytesA, 0, bytesA.length), hashShape(bytesB, 0, bytesB.length));
		assert.notEqual(hashShape(bytesA, 0, bytesA.length, window), hashShape(bytesB, 0, bytesB.length, window));
	});

	test("a blank line has no shape hash", () => {
		assert.equal(hashOf("  \t \r"), SHAPE_HASH_BLANK);
	});
});

describe("classifyShape", () => {
	test("a count up to RARE_CONTEXT_SHAPE_LINES is rare; an unknown shape (0) is usual", () => {
		assert.equal(classifyShape(0, 1000), "usual");
		assert.equal(classifyShape(1, 1000), "rare");
		assert.equal(classifyShape(RARE_CONTEXT_SHAPE_LINES, 1000), "rare");
		assert.equal(classifyShape(RARE_CONTEXT_SHAPE_LINES + 1, 1000), "usual");
	});

	test("routine takes both ROUTINE_CONTEXT_MIN_LINES lines and ROUTINE_CONTEXT_SHARE of the output", () => {
		const lines = 1000;
		const share = Math.ceil(ROUTINE_CONTEXT_SHARE * lines);
		assert.equal(classifyShape(share, lines), "routine");
		assert.equal(classifyShape(share - 1, lines), "usual");
		assert.equal(classifyShape(ROUTINE_CONTEXT_MIN_LINES - 1, ROUTINE_CONTEXT_MIN_LINES), "usual");
		assert.equal(classifyShape(ROUTINE_CONTEXT_MIN_LINES, ROUTINE_CONTEXT_MIN_LINES), "routine");
	});
});

/**
 * Gives `counter` the lines of `bytes` (whole lines) `blockLines` at a time, as a scan's blocks cut
 * them; one at a time as lines of their own (addLine) with `asLines`.
 */
function addInBlocks(counter: ShapeCounter, bytes: Buffer, blockLines: number, asLines = false): ShapeCounter {
	let line = 1;
	for (let from = 0; from < bytes.length; line += blockLines) {
		let end = from;
		for (let k = 0; k < blockLines && end < bytes.length; k++) end = bytes.indexOf(0x0a, end) + 1;
		if (asLines) counter.addLine(bytes.subarray(from, end - 1), line, from);
		else counter.addBlock(bytes, from, end, line, from);
		from = end;
	}
	return counter;
}

describe("the shape counter", () => {
	test("finds the odd line of an output whose every line has a long tag, however its blocks come", () => {
		// `kubectl logs --prefix`: the pod's and container's tag takes 42 of the line's first 48 bytes.
		const tag = "[pod/widgets-check-7d9f8b6c5-x2k4q/check] ";
		const lines = Array.from({ length: 400 }, (_, i) => `${tag}ok ${i + 1} - cart total is summed for basket ${i}`);
		lines[300] = `${tag}ok 301 - cart total exceeds the basket's limit`;
		// What kubectl prints first has no tag: the window is the frame of the output's first 64 lines.
		lines.unshift(
			"$ kubectl logs job/widgets-check --all-containers --prefix",
			"Found 1 pods, using pod/widgets-check-7d9f8b6c5-x2k4q",
		);
		const bytes = Buffer.from(lines.join("\n") + "\n");
		const rareOf = (blockLines: number) =>
			addInBlocks(new ShapeCounter(), bytes, blockLines)
				.result()
				.rare.map((rare) => rare.lineNumber);
		assert.deepEqual(rareOf(402), [303]);
		// Three lines at a time: the window waits for the output's first 64 lines.
		assert.deepEqual(rareOf(3), [303]);
	});

	test("a shape printed in one place, fewer than REPEAT_MIN_LINES times, is one odd event", async (t) => {
		// busted: a failing `before_each` prints its error once per test of the file, in a row (here in
		// words no signal pattern knows).
		const spec = (file: string, i: number) => [
			`[ RUN      ] spec/${file}_spec.lua @ ${5 + 6 * i}: ${file} case ${i} sums its postings`,
			`[       OK ] spec/${file}_spec.lua @ ${5 + 6 * i}: ${file} case ${i} sums its postings (0.05 ms)`,
		];
		const files = ["accounts", "budget", "cashflow", "journal", "transfers"];
		const burst = (count: number) =>
			Array.from({ length: count }, () => "spec/journal_spec.lua:6: field 'open_journal' is a nil value here");
		const outputOf = (count: number, places: number) =>
			files.flatMap((file, f) => [
				...(f >= 3 && f < 3 + places ? burst(count) : []),
				...Array.from({ length: 40 }, (_, i) => spec(file, i)).flat(),
			]);
		const rareOf = (lines: readonly string[]) => {
			const counter = new ShapeCounter();
			const bytes = Buffer.from(lines.join("\n") + "\n");
			counter.addBlock(bytes, 0, bytes.length, 1, 0);
			return counter.result().rare.map(({ lineNumber, count, lastLine }) => ({ lineNumber, count, lastLine }));
		};
		const first = 3 * 80 + 1;
		// Six in a row: its first line stands for them.
		assert.deepEqual(rareOf(outputOf(6, 1)), [{ lineNumber: first, count: 6, lastLine: first + 5 }]);
		assert.deepEqual(rareOf(outputOf(REPEAT_MIN_LINES - 1, 1)), [
			{ lineNumber: first, count: REPEAT_MIN_LINES - 1, lastLine: first + REPEAT_MIN_LINES - 2 },
		]);
		// A burst of REPEAT_MIN_LINES is a repetition, and the same lines in two places are no one event.
		assert.deepEqual(rareOf(outputOf(REPEAT_MIN_LINES, 1)), []);
		assert.deepEqual(rareOf(outputOf(4, 2)), []);
		const dir = await createTempDir(t);
		const path = join(dir, "busted.log");
		await writeFile(path, outputOf(6, 1).join("\n") + "\n");
		const options = { ...DEFAULT_CONFIG, id: "0123456789ab", toolName: "bash", thresholdChars: 24_000 };
		const view = (await buildViewFromFile(path, options)).text;
		assert.match(
			view,
			new RegExp(
				`\\n *${first}: spec/journal_spec.lua:6: field .*\\[a rare line: its shape appears 6 times, in a row to line ${first + 5}\\]`,
			),
		);
		assert.doesNotMatch(view, new RegExp(`\\n *${first + 1}: `), "the burst's other lines are not shown one by one");
		// Each line stamped with its own time, as a CI service prints it: still one line printed again.
		const stamp = (index: number) =>
			`2026-12-06T09:${String(30 + Math.floor(index / 600)).padStart(2, "0")}:${String(Math.floor(index / 10) % 60).padStart(2, "0")}.${String(index % 10).padStart(7, "0")}Z `;
		await writeFile(
			path,
			outputOf(6, 1)
				.map((line, index) => stamp(index) + line)
				.join("\n") + "\n",
		);
		const stampedView = (await buildViewFromFile(path, options)).text;
		assert.match(
			stampedView,
			new RegExp(`\\n *${first}: \\S+ spec/journal_spec.lua:6: field .*in a row to line ${first + 5}\\]`),
		);
		// Lines of one shape in a row that differ (a parametrized test's cases) are a list, not an event.
		const listed = outputOf(6, 1).map((line, index) =>
			line.startsWith("spec/journal_spec.lua:6:")
				? `spec/journal_spec.lua:6: field 'open_${index}' is a nil value here`
				: line,
		);
		await writeFile(path, listed.join("\n") + "\n");
		const listView = (await buildViewFromFile(path, options)).text;
		assert.doesNotMatch(listView, /journal_spec\.lua:6: field .*\[a rare line/);
	});

	test("the shape window reads past the frame the output is written in, as past a timestamp", () => {
		// Ruby's Logger before every line: its 49 characters are about 33 of the hash's 48 skeleton bytes.
		const logger = (i: number) =>
			`I, [2026-12-06T09:${String(30 + Math.floor(i / 60)).padStart(2, "0")}:${String(i % 60).padStart(2, "0")}.${String(i * 7919).padStart(6, "0")} #4123]  INFO -- : `;
		const lines = Array.from({ length: 300 }, (_, i) => `${logger(i)}shard ${i} of the nightly run: rows copied`);
		lines[200] = `${logger(200)}shard 200 of the nightly run: lock wait timeout`;
		const frame = learnLineFrame(lines.slice(0, 64));
		assert.ok(frame !== undefined, "the logger's prefix is the output's frame");
		assert.equal(shapeWindowOf(lines.slice(0, 64)), SHAPE_HASH_BYTES, "no timestamp starts the line");
		assert.ok(shapeWindowOf(lines.slice(0, 64), frame) > SHAPE_HASH_BYTES + 20);
		const rareOf = (counter: ShapeCounter) => {
			const bytes = Buffer.from(lines.join("\n") + "\n");
			counter.addBlock(bytes, 0, bytes.length, 1, 0);
			return counter.result().rare.map((rare) => rare.lineNumber);
		};
		assert.deepEqual(rareOf(new ShapeCounter(frame)), [201]);
		assert.deepEqual(rareOf(new ShapeCounter()), [], "48 bytes from the line's start end in the line's common words");
		// Inside a CI job: its first lines are the runner's, stamped; the frame is learned further on.
		const stamp = (i: number) => `2026-12-06T09:30:${String(i % 60).padStart(2, "0")}.${String(i).padStart(7, "0")}Z `;
		const runner = Array.from({ length: 80 }, (_, i) => `Runner step ${i % 9}: preparing workspace item ${i}`);
		const job = [...runner, ...lines].map((line, i) => stamp(i) + line);
		const further = learnLineFrame(job.slice(200, 264), true);
		assert.ok(further !== undefined);
		assert.equal(learnLineFrame(job.slice(0, 64)), undefined, "the runner's lines carry no frame");
		const bytes = Buffer.from(job.join("\n") + "\n");
		const counter = new ShapeCounter(further);
		counter.addBlock(bytes, 0, bytes.length, 1, 0);
		assert.ok(
			counter.result().rare.some((rare) => rare.lineNumber === 281),
			"the odd line stands out where the job's routine is",
		);
	});

	test("a record that wraps a line is shaped as that line: the odd one is rare, and counted as its line", () => {
		// svn's `U` lines with two `C` among them, as a container runtime's JSON log and as a logger's
		// logfmt records after a CI service's timestamp: every record's quoted members were one shape.
		const update = Array.from({ length: 600 }, (_, i) => `U    site/section_${Math.floor(i / 60)}/page_${i}.html`);
		update[150] = "C    site/section_2/page_150.html";
		update[450] = "C    site/section_7/page_450.html";
		const time = (i: number) => `2026-12-06T09:30:${String(i % 60).padStart(2, "0")}.${String(i).padStart(9, "0")}Z`;
		const wrappings: Array<(line: string, i: number) => string> = [
			(line, i) => `{"log":${JSON.stringify(`${line}\n`)},"stream":"stdout","time":"${time(i)}"}`,
			(line, i) => `${time(i)} time="${time(i)}" level=info msg=${JSON.stringify(line)}`,
			// A logger's JSON record, with spaces; and after a timestamp.
			(line, i) => `{ "level": 30, "time": ${i}, "msg": ${JSON.stringify(line)} }`,
			(line, i) => `${time(i)} {"level":30,"time":${i},"msg":${JSON.stringify(line)}}`,
		];
		for (const wrap of wrappings) {
			const lines = update.map(wrap);
			const bytes = Buffer.from(lines.join("\n") + "\n");
			for (const blockLines of [600, 7, 1]) {
				const counter = addInBlocks(new ShapeCounter(), bytes, blockLines, blockLines === 1);
				const name = `${lines[0].slice(0, 60)}, ${blockLines} lines at a time`;
				assert.deepEqual(
					counter.result().rare.map((rare) => rare.lineNumber),
					[151, 451],
					name,
				);
				assert.equal(counter.countOf(lines[150]), 2, name);
				assert.equal(counter.countOf(lines[0]), 598, name);
			}
		}
		// A line that only looks like a record (`{"` in mid-line, no member wrapping a line) is shaped as it is.
		const plain = Array.from({ length: 200 }, (_, i) => `request ${i} body {"id":${i},"ok":true} took ${i % 9} ms`);
		plain[90] = `request 90 body {"id":90,"ok":false} retried once`;
		const counter = new ShapeCounter();
		const bytes = Buffer.from(plain.join("\n") + "\n");
		counter.addBlock(bytes, 0, bytes.length, 1, 0);
		assert.deepEqual(
			counter.result().rare.map((rare) => rare.lineNumber),
			[91],
		);
	});

	test("counts every line by the shape hash of where its shape starts (shapeStart), whatever it is made of (300 seeds)", () => {
		// Lines made of the pieces of records and of what only looks like one: each line's count is the
		// number of lines whose hash, from shapeStart on, is its own.
		const pieces = [
			"{",
			'{"',
			'{ "',
			"}",
			' msg="',
			' message="',
			"msg=",
			'"log":"',
			'"msg": "',
			'"Output":"',
			"level=info",
			"time=1",
			"2026-12-06T09:30:01.1234567Z ",
			'\\"',
			"\\",
			'"',
			"=",
			"  ",
			"\t",
			"FAIL src/a.test.js",
			"ok 12",
			"é",
			"\r",
		];
		for (let seed = 1; seed <= 300; seed++) {
			const random = createRandom(seed);
			const pick = (from: readonly string[]) => from[Math.floor(random() * from.length)];
			const some = (count: number) => Array.from({ length: Math.floor(random() * count) }, () => pick(pieces)).join("");
			// Half of them built as a record is (a JSON one or a logfmt one), of pieces that may break it.
			const recordOf = () =>
				random() < 0.6
					? `${pick(["", "2026-12-06T09:30:01.1234567Z ", "[x] "])}${pick(["{", "{ ", '{"a":1,', "x{"])}${pick(['"log":"', '"msg": "', '"Output" : "', '"level":"'])}${some(4)}"${pick(["", ',"n":2', ' , "b": "c"'])}${pick(["}", "} ", "}\r", "", " }x"])}`
					: `${pick(["", "2026-12-06T09:30:01.1234567Z "])}${pick(["time=1 ", "level=info ", "", 'ts="a b" '])}${pick(['msg="', 'message="', 'x msg="'])}${some(4)}${pick(['"', ""])}${pick(["", " n=2"])}`;
			const lines = Array.from({ length: 40 + Math.floor(random() * 40) }, () =>
				random() < 0.5 ? recordOf() : some(9),
			);
			const bytes = Buffer.from(lines.join("\n") + "\n");
			const counter = addInBlocks(new ShapeCounter(), bytes, 1 + Math.floor(random() * 20));
			const window = shapeWindowOf(lines.slice(0, 64));
			const hashOfLine = (text: string) => {
				const own = Buffer.from(text, "utf8");
				return hashShape(own, shapeStart(own, 0, own.length), own.length, window);
			};
			const hashes = lines.map(hashOfLine);
			for (const [k, text] of lines.entries()) {
				const expected = hashes[k] === SHAPE_HASH_BLANK ? 0 : hashes.filter((hash) => hash === hashes[k]).length;
				assert.equal(counter.countOf(text), expected, `seed ${seed}, line ${k + 1}: ${JSON.stringify(text)}`);
			}
		}
	});

	test("an odd line stands out among the routine lines around it, after a step of many shapes", () => {
		// A bundler's thousand lines, most of them hashed file names (each a shape of its own), then
		// svn's `U` lines with two `C` among them: the output is not of few shapes (it settles into its
		// routine with the bundler's first lines), the stretch around each `C` is.
		const letters = (i: number) =>
			[...i.toString(26)].map((digit) => "klmnopqrstuvwxyzabcdefghij"[parseInt(digit, 26)]).join("");
		const bundle = Array.from({ length: 1000 }, (_, i) =>
			i % 5 === 0
				? `transforming (${i}) modules`
				: `dist/assets/Widget-${letters(i * 7919 + 17)}.js  ${i % 300}.${i % 10} kB`,
		);
		const update = Array.from({ length: 600 }, (_, i) => `U    site/section_${Math.floor(i / 60)}/page_${i}.html`);
		update[150] = "C    site/section_2/page_150.html";
		update[450] = "C    site/section_7/page_450.html";
		const rareOf = (lines: readonly string[]) => {
			const counter = new ShapeCounter();
			const bytes = Buffer.from(lines.join("\n") + "\n");
			counter.addBlock(bytes, 0, bytes.length, 1, 0);
			return counter.result().rare.map((line) => line.lineNumber);
		};
		assert.deepEqual(rareOf(update), [151, 451], "alone, the output is of few shapes");
		assert.deepEqual(rareOf([...bundle, ...update]), [1151, 1451]);
		// An odd line among the hashed names does not stand out: the lines around it are all different.
		const odd = [...bundle];
		odd[500] = "C    site/section_2/page_150.html";
		assert.deepEqual(rareOf([...odd, ...update.map((line) => line.replace(/^C /, "U "))]), []);
	});

	test("only the output's own lines say whether it is of few shapes: not the job's that share its shapes", () => {
		// A panic's backtrace (30 odd lines) among 300 routine ones: 300 of 330 lines (91%) are of a
		// common shape, so every odd line stands out. A CI job's lines after the failing step (set aside)
		// repeat the backtrace's shapes; counted with the output's, only 300 of 360 (83%) would be, and
		// around the backtrace no stretch is routine enough for its lines to stand out there either.
		const words = "alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar".split(
			" ",
		);
		const odd = Array.from(
			{ length: 30 },
			(_, k) => `   at ${words[k % 15]}::${words[(k * 7 + 3) % 15]}_${k < 15 ? "inner" : "outer"}`,
		);
		const routine = Array.from({ length: 300 }, (_, i) => `[worker-1] shard ${i}: 16 rows ok, errors 0`);
		const output = [...routine.slice(0, 150), ...odd, ...routine.slice(150)];
		const job = [...output, ...odd];
		const counter = new ShapeCounter();
		const bytes = Buffer.from(job.join("\n") + "\n");
		counter.addBlock(bytes, 0, bytes.length, 1, 0);
		const rare = counter.result((lineNumber) => lineNumber > output.length).rare.map((line) => line.lineNumber);
		assert.deepEqual(
			rare.sort((a, b) => a - b),
			Array.from({ length: 30 }, (_, k) => 151 + k),
		);
	});

	test("shapes the end of a long output whole, past the sampled middle: its odd line is rare", async (t) => {
		// 3.6 MB of passing lines, then a job's batches with one odd line among them.
		const passing = Array.from(
			{ length: 80_000 },
			(_, i) => `ok ${i + 1} - suite ${i % 97} case ${i} passed in ${i % 13} ms`,
		);
		const batches = Array.from({ length: 3000 }, (_, i) => `processed batch ${i} in ${i % 90} ms`);
		batches[2500] = "reconciling house accounts before the next window";
		const lines = [...passing, ...batches];
		const options = { ...DEFAULT_CONFIG, id: "0123456789ab", toolName: "bash" };
		const { scan } = await scanSource(bufferSource(Buffer.from(lines.join("\n") + "\n")), options);
		const odd = passing.length + 2501;
		assert.equal(scan.shapes.complete, false, "the middle was sampled");
		assert.deepEqual(
			scan.shapes.rare.map((line) => line.lineNumber),
			[odd],
		);
		// Read from a file through reused buffers: the end waits as a copy, not as a view of a buffer read into again.
		const dir = await createTempDir(t);
		const path = join(dir, "long.log");
		await writeFile(path, lines.join("\n") + "\n");
		const view = (await buildViewFromFile(path, { ...options, thresholdChars: 24_000 })).text;
		assert.match(view, new RegExp(`\\n *${odd}: reconciling house accounts before the next window {2}\\[a rare line`));
	});
});
