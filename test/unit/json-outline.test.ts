/**
 * The JSON reading behind the view's outline and problem hunks (src/view/json-outline.ts):
 * one streaming pass, whatever the read sizes, finds the outline and the objects that
 * say they are a problem, with places that select them again.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { JSON_OUTLINE_LEVELS, LineCursor, readJsonFindings } from "../../src/view/json-outline.js";
import { JsonLexer } from "../../src/json/index.js";
import { buildViewFromText } from "../../src/view/compose.js";
import { createDefaultConfig } from "../../src/config/config.js";
import { parseJsonPath, selectJsonPath } from "../../src/json/path.js";
import { type ByteSource, bufferSource } from "../../src/io/source.js";

/** A source that hands out at most `step` bytes per read: every boundary falls somewhere new. */
function dribbleSource(text: string, step: number): ByteSource {
	const bytes = Buffer.from(text);
	return {
		size: bytes.length,
		async read(target, position) {
			return bytes.copy(target, 0, position, Math.min(bytes.length, position + Math.min(step, target.length)));
		},
		async close() {},
	};
}

function select(text: string, path: string): unknown {
	const parsed = parseJsonPath(path);
	assert.ok("segments" in parsed, `path ${path} parses`);
	const selected = selectJsonPath(JSON.parse(text), parsed.segments);
	assert.ok("value" in selected, `path ${path} selects`);
	return selected.value;
}

function lineOf(text: string, offset: number): number {
	return text.slice(0, offset).split("\n").length;
}

const report = JSON.stringify(
	{
		checked: 300,
		results: Array.from({ length: 300 }, (_, index) => ({
			file: `src/f${index}.ts`,
			valid: index !== 177,
			messages: [],
		})),
	},
	null,
	2,
);

describe("readJsonFindings", () => {
	test("outlines a document and finds its one problem object, at any read size", async () => {
		for (const step of [1, 7, 64, 4096, 1 << 20]) {
			const findings = await readJsonFindings(dribbleSource(report, step));
			assert.ok(findings, `step ${step}`);
			assert.equal(findings.outline, '{"checked": 300, "results": [300 items]}', `step ${step}`);
			assert.equal(findings.problemCount, 1);
			const [problem] = findings.problems;
			assert.equal(problem!.path, "$.results[177]");
			assert.equal(problem!.reason, '"valid": false');
			assert.deepEqual(select(report, problem!.path), { file: "src/f177.ts", valid: false, messages: [] });
			assert.equal(report[problem!.start], "{");
			assert.equal(report[problem!.end - 1], "}");
			assert.equal(problem!.startLine, lineOf(report, problem!.start));
			assert.equal(problem!.endLine, lineOf(report, problem!.end - 1));
			assert.equal(report.lastIndexOf("\n", problem!.start - 1) + 1, problem!.lineStart);
			const memberAt = report.indexOf('"valid": false');
			assert.equal(problem!.member.startLine, lineOf(report, memberAt));
		}
	});

	test("a minified one-line document has the same findings on line 1", async () => {
		const minified = JSON.stringify(JSON.parse(report));
		const findings = await readJsonFindings(dribbleSource(minified, 13));
		assert.ok(findings);
		assert.equal(findings.outline, '{"checked": 300, "results": [300 items]}');
		assert.equal(findings.problems[0]!.path, "$.results[177]");
		assert.equal(findings.problems[0]!.startLine, 1);
		assert.equal(findings.problems[0]!.endLine, 1);
	});

	test("JSON lines: each record is read on its own, and a problem record is flagged with its line", async () => {
		const records = Array.from({ length: 500 }, (_, index) =>
			JSON.stringify(
				index === 321 ? { level: 50, msg: "db connection lost" } : { level: 30, msg: `request ${index} ok` },
			),
		);
		const text = `${records.join("\n")}\n`;
		for (const step of [5, 4096]) {
			const findings = await readJsonFindings(dribbleSource(text, step));
			assert.ok(findings);
			assert.equal(findings.outline, "JSON lines: 500 records");
			assert.equal(findings.problemCount, 1);
			const [problem] = findings.problems;
			assert.equal(problem!.record, true);
			assert.equal(problem!.startLine, 322);
			assert.match(problem!.reason, /"level": 50/);
		}
	});

	test("a document that was cut off still reports the problems it had read, without an outline", async () => {
		const cut = report.slice(0, report.indexOf('"src/f250.ts"'));
		const findings = await readJsonFindings(bufferSource(Buffer.from(cut)));
		assert.ok(findings);
		assert.equal(findings.outline, undefined);
		assert.equal(findings.problems[0]!.path, "$.results[177]");
	});

	test("an invalid document reports what it read before the fault", async () => {
		const broken = report.replace('"src/f200.ts"', "src/f200.ts");
		const findings = await readJsonFindings(bufferSource(Buffer.from(broken)));
		assert.ok(findings);
		assert.equal(findings.outline, undefined);
		assert.equal(findings.problemCount, 1);
	});

	test("a problem member on the root is named by its own path", async () => {
		const text = JSON.stringify({ ok: 12, errors: [{ message: "boom" }], stats: { files: 3 } }, null, 2);
		const findings = await readJsonFindings(bufferSource(Buffer.from(text)));
		assert.ok(findings);
		assert.equal(findings.problemCount, 1);
		assert.equal(findings.problems[0]!.path, "$.errors");
		assert.deepEqual(select(text, "$.errors"), [{ message: "boom" }]);
	});

	test("plain text, an empty source and an oversized one have no findings", async () => {
		assert.equal(await readJsonFindings(bufferSource(Buffer.from('error: it broke\n{"x": 1}\n'))), undefined);
		assert.equal(await readJsonFindings(bufferSource(Buffer.alloc(0))), undefined);
		assert.equal(await readJsonFindings(bufferSource(Buffer.from("   \n  "))), undefined);
		assert.equal(await readJsonFindings(bufferSource(Buffer.from(report)), 1024), undefined);
	});

	test("a text that does not start like JSON is given up after a look at its first 4 KiB", async () => {
		const text = Buffer.from(`   \nerror: it broke\n${"x".repeat(2 * 1024 * 1024)}\n`);
		const whole = bufferSource(text);
		let bytesRead = 0;
		const counted: ByteSource = {
			...whole,
			read: async (target, position) => {
				const read = await whole.read(target, position);
				bytesRead += read;
				return read;
			},
		};
		assert.equal(await readJsonFindings(counted), undefined);
		assert.ok(bytesRead <= 4096, `read ${bytesRead} bytes`);
	});

	test("past JSON_OUTLINE_LEVELS only syntax is read: the outline and the problems above it stay, and it says so", async () => {
		const levels = JSON_OUTLINE_LEVELS + 500;
		const deep = `${"[".repeat(levels)}{"ok": false}${"]".repeat(levels)}`;
		const text = `{"check": {"ok": false, "name": "lint"},\n "deep": ${deep},\n "count": 2}`;
		const findings = await readJsonFindings(dribbleSource(text, 65_521));
		assert.ok(findings);
		assert.equal(findings.outline, '{"check": {2 keys}, "deep": [1 item], "count": 2}');
		assert.equal(findings.problemCount, 1);
		assert.equal(findings.problems[0]!.path, "$.check");
		assert.equal(findings.deeperThan, JSON_OUTLINE_LEVELS);
		// Just at the limit, everything is read: no note.
		const atLimit = `${"[".repeat(JSON_OUTLINE_LEVELS - 1)}{"ok": false}${"]".repeat(JSON_OUTLINE_LEVELS - 1)}`;
		const read = await readJsonFindings(bufferSource(Buffer.from(atLimit)));
		assert.equal(read?.problemCount, 1);
		assert.equal(read?.deeperThan, undefined);
		// The view says the count is a lower bound, and why.
		const view = (
			await buildViewFromText(`${text}\n${"x\n".repeat(3000)}`, {
				...createDefaultConfig(),
				id: "000000000000",
				toolName: "t",
			})
		).text;
		assert.match(view, /json: .*at least 1 object says it is a problem: \$\.check .*nested deeper than 10000 levels/);
	});

	test("keys met again are known by all their bytes: keys alike in length, ends and middle stay apart", async () => {
		// "error" and "errar" (and an escaped "err\u006fr", which is "error") fall in one slot of the key cache.
		const keys = ["error", "errar", "err\\u006fr", "erxor"];
		const records = Array.from({ length: 400 }, (_, index) => `{"id": ${index}, "${keys[index % 4]}": "disk full"}`);
		const text = `{"results": [\n${records.join(",\n")}\n]}`;
		const findings = await readJsonFindings(dribbleSource(text, 8191));
		assert.ok(findings);
		const problems = JSON.parse(text).results.flatMap((record: Record<string, unknown>, index: number) =>
			"error" in record ? [index] : [],
		);
		assert.equal(findings.problemCount, problems.length);
		assert.deepEqual(
			findings.problems.map((problem) => problem.path),
			problems.slice(0, 20).map((index: number) => `$.results[${index}]`),
		);
	});

	test("a lexer reports no event past maxEventLevel, and accepts and refuses exactly what it does with every event", () => {
		const documents = [
			`${"[".repeat(5000)}1${"]".repeat(5000)}`,
			`${"[".repeat(3000)}{"a": [[[]]]}${"]".repeat(3000)}`,
			`${"[".repeat(3000)}${"]".repeat(2999)}}`,
			`${"[".repeat(3000)}${"]".repeat(3001)}`,
			`${"[".repeat(50)}[[[ ]] ]${"]".repeat(50)}`,
			`[${"[".repeat(3000)}{"a":1}]${"]".repeat(2999)}]`,
			`${"[".repeat(3000)}`,
			`${"[".repeat(3000)}${"]".repeat(100)}}${"]".repeat(2899)}`,
			`${"[".repeat(3000)}{}${"]".repeat(100)},[1]${"]".repeat(2900)}`,
			`{"a": ${"[".repeat(3000)}{"b": [[]]}${"]".repeat(3000)}}`,
		];
		for (const document of documents) {
			const bytes = Buffer.from(document);
			const outcome = (maxEventLevel: number) => {
				let deepest = -1;
				const note = (level: number) => (deepest = Math.max(deepest, level));
				const lexer = new JsonLexer({
					onOpen: (_kind: unknown, level: number) => note(level),
					onClose: (_kind: unknown, level: number) => note(level),
					onKey: note,
					onScalar: (_kind: unknown, level: number) => note(level),
					onComma: note,
				} as never);
				lexer.maxEventLevel = maxEventLevel;
				for (let at = 0; at < bytes.length; at += 777) lexer.feed(bytes, at, Math.min(bytes.length, at + 777), 0);
				lexer.finish(bytes.length);
				return { error: lexer.error, deepest };
			};
			const every = outcome(2 ** 30 - 1);
			let parses = true;
			try {
				JSON.parse(document);
			} catch {
				parses = false;
			}
			assert.equal(every.error === null, parses, document.slice(0, 40));
			for (const level of [0, 3, 100]) {
				const capped = outcome(level);
				assert.deepEqual(capped.error, every.error, `maxEventLevel ${level}: ${document.slice(-40)}`);
				assert.ok(capped.deepest <= level, `an event at level ${capped.deepest} past ${level}`);
			}
		}
	});

	test("a problem nested thousands of levels deep is found with its path, and every further one is counted", async () => {
		const levels = 5000;
		const problems = Array.from({ length: 30 }, (_, index) => `{"id": ${index}, "ok": false}`).join(",\n");
		const text = `${"[".repeat(levels)}{"name": "deep", "items": [\n${problems}\n]}${"]".repeat(levels)}`;
		const findings = await readJsonFindings(dribbleSource(text, 4093));
		assert.ok(findings);
		assert.equal(findings.outline, "[1 item]");
		assert.equal(findings.problemCount, 30);
		assert.equal(findings.problems.length, 20);
		const first = findings.problems[0]!;
		assert.equal(first.path, `$${"[0]".repeat(levels)}.items[0]`);
		assert.equal(findings.problems[7]!.path, `$${"[0]".repeat(levels)}.items[7]`);
		assert.equal(first.startLine, 2);
	});

	test("gives the event loop a turn whenever its slice's time is up, and finds the same", async () => {
		const text = `${report}\n${"[".repeat(200_000)}${"]".repeat(200_000)}`;
		const lines = `${report.replaceAll("\n", "")}\n{"ok": false}\n`.repeat(40);
		for (const document of [report, lines, text]) {
			let turns = 0;
			let counting = true;
			const count = (): void => {
				turns++;
				if (counting) setImmediate(count);
			};
			setImmediate(count);
			let clock = 0;
			const sliced = await readJsonFindings(bufferSource(Buffer.from(document)), undefined, {
				sliceMs: 1,
				now: () => clock++,
			});
			counting = false;
			const whole = await readJsonFindings(bufferSource(Buffer.from(document)), undefined, { now: () => 0 });
			assert.deepEqual(sliced, whole);
			const slices = Math.ceil(Buffer.byteLength(document) / (16 * 1024));
			assert.ok(turns >= slices - 1, `${turns} turns for ${slices} slices of ${Buffer.byteLength(document)} bytes`);
		}
	});

	test("a clean document gets an outline and no problems", async () => {
		const clean = JSON.stringify({ name: "pkg", version: "1.0.0", dependencies: { a: "1", b: "2" } }, null, 2);
		const findings = await readJsonFindings(bufferSource(Buffer.from(clean)));
		assert.ok(findings);
		assert.equal(findings.problemCount, 0);
		assert.match(findings.outline!, /^\{"name": "pkg", "version": "1\.0\.0", "dependencies": \{2 keys\}\}$/);
	});
});

describe("LineCursor", () => {
	/** The line of every offset and its start, counted naively once (index: offset, 0..length). */
	function naiveLines(bytes: Buffer): Array<{ line: number; lineStart: number }> {
		const at: Array<{ line: number; lineStart: number }> = [];
		let line = 1;
		let lineStart = 0;
		for (let offset = 0; offset <= bytes.length; offset++) {
			at.push({ line, lineStart });
			if (bytes[offset] === 0x0a) {
				line++;
				lineStart = offset + 1;
			}
		}
		return at;
	}

	test("a move per container over 1 MiB without a newline searches each byte once, not once per move", () => {
		const bytes = Buffer.from("[".repeat(512 * 1024) + "]".repeat(512 * 1024));
		const cursor = new LineCursor();
		for (let offset = 0; offset <= bytes.length; offset += 2) cursor.moveTo(bytes, 0, offset);
		assert.equal(cursor.line, 1);
		assert.ok(cursor.scanned <= bytes.length, `${cursor.scanned} bytes searched for ${bytes.length}`);
	});

	test("lines and line starts agree with a naive count, moves forwards and back, across chunk buffers", () => {
		const text = Array.from({ length: 3000 }, (_, index) => "x".repeat((index * 7919) % 53)).join("\n");
		const bytes = Buffer.from(text);
		const naive = naiveLines(bytes);
		for (const chunk of [1, 7, 64, 4096, bytes.length]) {
			const cursor = new LineCursor();
			let moves = 0;
			for (let base = 0; base < bytes.length; base += chunk) {
				const buffer = bytes.subarray(base, Math.min(bytes.length, base + chunk));
				for (let offset = base; offset < base + buffer.length; offset += 1 + ((offset * 31) % 97)) {
					const back = offset - ((offset * 13) % 5);
					for (const target of [offset, back]) {
						cursor.moveTo(buffer, base, target);
						moves++;
						const expected = naive[Math.min(Math.max(target, cursor.offset), bytes.length)];
						assert.deepEqual(
							{ line: cursor.line, lineStart: cursor.lineStart },
							expected,
							`chunk ${chunk} at ${target}`,
						);
					}
				}
				cursor.moveTo(buffer, base, base + buffer.length);
			}
			assert.ok(moves > 0);
			assert.ok(cursor.scanned <= bytes.length, `chunk ${chunk}: ${cursor.scanned} bytes searched for ${bytes.length}`);
		}
	});
});

describe("problems of a kind of their own", () => {
	/** A scanner's report on one line: 1 200 findings of one check, one of a check of its own at index 777. */
	function report(): string {
		const results: object[] = [];
		for (let i = 0; i < 1200; i++)
			results.push({ filename: `src/m${i}.py`, test_id: "B101", errors: [`assert used ${i}`] });
		results.splice(777, 0, { filename: "src/deploy.py", test_id: "B602", errors: ["shell=True with untrusted input"] });
		for (let i = 0; i < 40; i++) results.push({ filename: `src/n${i}.py`, test_id: "B311", errors: [`random ${i}`] });
		return JSON.stringify({ metrics: { total: results.length }, results });
	}

	test("are kept past the first problems, the rarest kinds first, with true counts", async () => {
		const text = report();
		const findings = (await readJsonFindings(bufferSource(Buffer.from(text))))!;
		assert.equal(findings.problemCount, 1241);
		const [first, second, third] = findings.problems;
		assert.deepEqual([first.path, first.identity, first.identityCount], ["$.results[777]", 'test_id "B602"', 1]);
		assert.deepEqual([second.identity, second.identityCount], ['test_id "B311"', 40]);
		assert.deepEqual([third.identity, third.identityCount], ['test_id "B101"', 1200]);
		assert.deepEqual(select(text, first.path), JSON.parse(text).results[777]);
	});

	test("are named with their jsonPath under the header of a one-line document's view", async () => {
		const view = (await buildViewFromText(report(), { ...createDefaultConfig(), toolName: "bash", id: "0123456789ab" }))
			.text;
		assert.match(
			view,
			/\n {2}json: .*1241 objects say they are problems; by kind, the rarest first: test_id "B602" ×1: \$\.results\[777\] \(line 1\), test_id "B311" ×40: \$\.results\[1201\] \(line 1\), test_id "B101" ×1200: \$\.results\[0\] \(line 1\)\n/,
		);
	});
});
