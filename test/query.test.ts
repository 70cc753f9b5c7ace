import assert from "node:assert/strict";
import { after, describe, test, type TestContext } from "node:test";
import { createDefaultConfig, type OverflowConfig } from "../src/config.js";
import { QueryError, runQuery, type QueryAnswer, type QueryDependencies, type QueryParams } from "../src/query/index.js";
import { disposeSearchWorkers } from "../src/search.js";
import { type EntryMeta, OverflowStore } from "../src/store/index.js";
import { writeStoreEntry } from "./helpers/store-entry.js";
import { createTempDir } from "./helpers/tmp.js";

after(() => disposeSearchWorkers());

const SEQ_LINES = 300_000;
const SEQ_TEXT = `${Array.from({ length: SEQ_LINES }, (_, index) => String(index + 1)).join("\n")}\n`;

let idCounter = 0;
function nextId(): string {
	idCounter += 1;
	return idCounter.toString(16).padStart(12, "0");
}

function storeEntry(store: OverflowStore, text: string | Buffer, toolName = "bash"): Promise<EntryMeta> {
	return writeStoreEntry(store, nextId(), text, toolName);
}

async function createDeps(t: TestContext, overrides: Partial<OverflowConfig> = {}): Promise<QueryDependencies> {
	const root = await createTempDir(t);
	const config = { ...createDefaultConfig(), ...overrides };
	return { config, store: new OverflowStore({ root }) };
}

async function query(deps: QueryDependencies, params: QueryParams): Promise<QueryAnswer> {
	const answer = await runQuery(params, deps);
	assert.ok(answer.text.length <= deps.config.thresholdChars, `answer of ${answer.text.length} chars exceeds thresholdChars ${deps.config.thresholdChars}`);
	return answer;
}

async function queryError(deps: QueryDependencies, params: QueryParams): Promise<string> {
	try {
		await runQuery(params, deps);
	} catch (error) {
		assert.ok(error instanceof QueryError, `expected a QueryError, got ${String(error)}`);
		assert.ok(!error.message.includes("\n    at "), "no stack in the message");
		assert.ok(error.message.length <= 600, `message too long: ${error.message.length}`);
		return error.message;
	}
	assert.fail("expected the query to fail");
}

/** Numbered lines of an answer as [number, separator, text]. */
function numberedLines(text: string): Array<[number, string, string]> {
	const out: Array<[number, string, string]> = [];
	for (const line of text.split("\n")) {
		const match = /^ *(\d+)([:-]) (.*)$/.exec(line);
		if (match) out.push([Number(match[1]), match[2]!, match[3]!]);
	}
	return out;
}

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
		assert.deepEqual(numberedLines(answer.text).map(([number]) => number), [299_995, 299_996, 299_997, 299_998, 299_999, 300_000]);
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
		assert.deepEqual(seen, Array.from({ length: 4001 }, (_, index) => 1000 + index), "no gap, no overlap");
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
		assert.deepEqual(numberedLines(answer.text).map(([number, , text]) => [number, text]), [[1, "a"], [2, "b"], [3, ""], [4, "last"]]);
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

describe("search", () => {
	test("merges two nearby hits into one window without repeating a line", async (t) => {
		const deps = await createDeps(t);
		const meta = await storeEntry(deps.store, SEQ_TEXT);
		const answer = await query(deps, { id: meta.id, search: "^15000[03]$" });
		const lines = numberedLines(answer.text);
		assert.deepEqual(
			lines.map(([number, separator]) => `${number}${separator}`),
			["149998-", "149999-", "150000:", "150001-", "150002-", "150003:", "150004-", "150005-"],
		);
		assert.ok(!answer.text.split("\n").includes("--"), "one window, no gap marker");
		assert.match(answer.text, /2 hit lines in 300000 lines; all shown/);
		assert.equal(answer.summary.hits, 2);
	});

	test("marks the gap between two windows", async (t) => {
		const deps = await createDeps(t);
		const meta = await storeEntry(deps.store, SEQ_TEXT);
		const answer = await query(deps, { id: meta.id, search: "^(1000|2000)$" });
		const body = answer.text.split("\n").slice(1);
		assert.deepEqual(body, [
			"   998- 998",
			"   999- 999",
			"  1000: 1000",
			"  1001- 1001",
			"  1002- 1002",
			"--",
			"  1998- 1998",
			"  1999- 1999",
			"  2000: 2000",
			"  2001- 2001",
			"  2002- 2002",
		]);
	});

	test("stops at maxResults and still reports the total number of hits", async (t) => {
		const deps = await createDeps(t, { maxResults: 5 });
		const meta = await storeEntry(deps.store, SEQ_TEXT);
		const expected = SEQ_TEXT.split("\n").filter((line) => /^1\d*7$/.test(line)).length;
		const answer = await query(deps, { id: meta.id, search: "^1\\d*7$" });
		assert.equal(numberedLines(answer.text).filter(([, separator]) => separator === ":").length, 5);
		assert.match(answer.text, new RegExp(`${expected} hit lines in 300000 lines; showing 5`));
		assert.match(answer.text, /5 of \d+ hit lines shown \(maxResults is 5\); the last shown is line 137 — narrow the pattern, or read on with lines: \{start: 138\}/);
		assert.equal(answer.summary.hits, expected);
		assert.equal(answer.summary.shownHits, 5);
		assert.equal(answer.summary.truncated, true);
	});

	test("shows a long hit line around the match, with the chars cut on each side", async (t) => {
		const deps = await createDeps(t, { maxLineChars: 200 });
		const long = `${"a".repeat(7000)}NEEDLE${"b".repeat(3000)}`;
		const meta = await storeEntry(deps.store, `first\n${long}\nlast\n`);
		const answer = await query(deps, { id: meta.id, search: "needle" });
		const hit = numberedLines(answer.text).find(([, separator]) => separator === ":")!;
		assert.equal(hit[0], 2);
		const match = /^\[\+(\d+) chars\] … (a+NEEDLEb+) … \[\+(\d+) chars\]$/.exec(hit[2]);
		assert.ok(match, hit[2]);
		assert.equal(match[2]!.length, 200);
		assert.equal(Number(match[1]) + 200 + Number(match[3]), long.length);
		const before = match[2]!.indexOf("NEEDLE");
		assert.ok(Math.abs(before - (200 - 6 - before)) <= 2, "the match is centred");
	});

	test("rejects an invalid regex with the reason and what to do", async (t) => {
		const deps = await createDeps(t);
		const meta = await storeEntry(deps.store, SEQ_TEXT);
		const message = await queryError(deps, { id: meta.id, search: "foo(bar" });
		assert.match(message, /^overflow_query: invalid regex \/foo\(bar\/: Unterminated group; escape special characters/);
		assert.match(message, /or use a simpler pattern$/);
	});

	test("says so when no line matches", async (t) => {
		const deps = await createDeps(t);
		const meta = await storeEntry(deps.store, SEQ_TEXT);
		const answer = await query(deps, { id: meta.id, search: "zzz" });
		assert.match(answer.text, /no line matches in 300000 lines/);
		assert.equal(answer.summary.hits, 0);
		assert.equal(answer.summary.truncated, false);
	});

	test("gives up on a catastrophic regex within the time bound, keeping the hits so far", async (t) => {
		const timeoutMs = 300;
		const deps = await createDeps(t, { searchTimeoutMs: timeoutMs });
		const okLines = Array.from({ length: 99 }, (_, index) => `ok line ${index + 1}`);
		const bad = Array.from({ length: 5000 }, () => `${"a".repeat(40)}!`);
		const meta = await storeEntry(deps.store, `${[...okLines, ...bad].join("\n")}\n`);
		// Timers set when the query begins fire while it runs: the regex never holds the main thread.
		// (How long the answer takes is measured by `npm run bench`.)
		const fired: string[] = [];
		setImmediate(() => fired.push("immediate"));
		setTimeout(() => fired.push("timeout"), 1);
		const answer: QueryAnswer = await query(deps, { id: meta.id, search: "ok line 9$|(a+)+$" });
		assert.deepEqual(fired.sort(), ["immediate", "timeout"], "the main thread ran its timers during the search");
		const stop = /search stopped after \d+ ms \(searchTimeoutMs=300\) at line 10 of 5099: one regex step over lines 10–(\d+) was still running and was stopped; lines 1–9 were searched/.exec(answer.text);
		assert.ok(stop, answer.text);
		assert.ok(Number(stop[1]) >= 100 && Number(stop[1]) < 1000, "the step's lines include the first runaway line, 100");
		assert.match(answer.text, /use a simpler pattern/);
		assert.match(answer.text, /at least 1 hit line/);
		assert.deepEqual(numberedLines(answer.text).filter(([, separator]) => separator === ":").map(([number]) => number), [9]);
		assert.equal(answer.summary.timedOut, true);
		// The next search runs on a fresh worker.
		const next = await query(deps, { id: meta.id, search: "^ok line 99$" });
		assert.match(next.text, /1 hit line in 5099 lines; all shown/);
	});
});

describe("jsonPath", () => {
	const document = {
		meta: { count: 8000, "key.with.dots": "dotted" },
		items: Array.from({ length: 8000 }, (_, index) => ({ id: index, name: `item-${index}`, tags: ["a", "b"] })),
	};

	test("selects a value deep in an 8000-item array", async (t) => {
		const deps = await createDeps(t);
		const meta = await storeEntry(deps.store, JSON.stringify(document));
		const answer = await query(deps, { id: meta.id, jsonPath: "items[7999].name" });
		assert.equal(answer.text, `[pi-overflow id=${meta.id}] jsonPath $.items[7999].name: a string\n"item-7999"`);
		const object = await query(deps, { id: meta.id, jsonPath: "$.items[12]" });
		assert.equal(object.text.split("\n").slice(1).join("\n"), JSON.stringify(document.items[12], null, 2));
	});

	test("reads quoted keys", async (t) => {
		const deps = await createDeps(t);
		const meta = await storeEntry(deps.store, JSON.stringify(document, null, 2));
		const answer = await query(deps, { id: meta.id, jsonPath: 'meta["key.with.dots"]' });
		assert.match(answer.text, /jsonPath \$\.meta\["key\.with\.dots"\]: a string\n"dotted"$/);
	});

	test("says which segment is missing and what exists there", async (t) => {
		const deps = await createDeps(t);
		const meta = await storeEntry(deps.store, JSON.stringify(document));
		const message = await queryError(deps, { id: meta.id, jsonPath: "items[3].nmae" });
		assert.match(message, /\$\.items\[3\]\.nmae does not exist: \$\.items\[3\] is an object with 3 keys: "id", "name", "tags"/);
		const outOfRange = await queryError(deps, { id: meta.id, jsonPath: "items[8000]" });
		assert.match(outOfRange, /an array of 8000 items \(indexes 0–7999\)/);
	});

	test("reports a path that does not parse", async (t) => {
		const deps = await createDeps(t);
		const meta = await storeEntry(deps.store, JSON.stringify(document));
		const message = await queryError(deps, { id: meta.id, jsonPath: "items[abc]" });
		assert.match(message, /^overflow_query: jsonPath: expected an array index/);
	});

	test("rejects a stored text that is not JSON", async (t) => {
		const deps = await createDeps(t);
		const meta = await storeEntry(deps.store, "compiling...\nerror: x\n");
		const message = await queryError(deps, { id: meta.id, jsonPath: "a" });
		assert.match(message, new RegExp(`^overflow_query: the stored output of id=${meta.id} is not JSON \\(.+\\); use search or lines instead$`));
		const trailing = await storeEntry(deps.store, '{"a": 1}\n[pi notice]');
		assert.match(await queryError(deps, { id: trailing.id, jsonPath: "a" }), /not JSON \(Unexpected non-whitespace character after JSON at position 9 \(line 2, column 1\)\)/);
	});

	test("stops reading at searchTimeoutMs and says the whole text must be read, so search or lines are the way on", async (t) => {
		let clock = 0;
		const deps = await createDeps(t, { searchTimeoutMs: 1000 });
		deps.jsonPathTuning = { chunkBytes: 64 * 1024, now: () => (clock += 400) };
		const meta = await storeEntry(deps.store, JSON.stringify(document));
		const message = await queryError(deps, { id: meta.id, jsonPath: "items[7999].name" });
		assert.match(message, new RegExp(`^overflow_query: jsonPath stopped after \\d+ ms \\(searchTimeoutMs=1000\\) having read \\d+ of ${meta.totalBytes} bytes of id=${meta.id}; .*use search or lines instead$`));
	});

	test("cuts a value too large for the answer and suggests a deeper path", async (t) => {
		const deps = await createDeps(t, { thresholdChars: 1000 });
		const meta = await storeEntry(deps.store, JSON.stringify(document));
		const answer = await query(deps, { id: meta.id, jsonPath: "items" });
		assert.match(answer.text, /\[… \d+ more chars of this value left out \(it is \d+ chars as pretty JSON, the answer is limited to 1000\); ask for a deeper path, e\.g\. \$\.items\[0\] … \$\.items\[7999\]\]$/);
		assert.equal(answer.summary.truncated, true);
		const total = Number(/it is (\d+) chars/.exec(answer.text)![1]);
		assert.equal(total, JSON.stringify(document.items, null, 2).length);
	});

	test("prints values exactly as JSON.stringify with two-space indentation", async (t) => {
		const deps = await createDeps(t);
		const small = await createDeps(t, { thresholdChars: 1000 });
		const values: unknown[] = [null, true, 0, -1.5e-7, "tab\tquote\"", [], {}, [[[]]], { a: [1, { b: null }], "": "empty key", "é": "ünï" }, document.items.slice(0, 3), document.items.slice(0, 40)];
		for (const value of values) {
			const expected = JSON.stringify(value, null, 2);
			const meta = await storeEntry(deps.store, JSON.stringify(value));
			const whole = await query(deps, { id: meta.id, jsonPath: "$" });
			assert.equal(whole.text.slice(whole.text.indexOf("\n") + 1), expected);
			assert.equal(whole.summary.truncated, false);
			// Cut: the answer shows the start of the same text and counts all of it.
			const cutMeta = await storeEntry(small.store, JSON.stringify(value));
			const cut = await query(small, { id: cutMeta.id, jsonPath: "$" });
			const shown = cut.text.split("\n").slice(1);
			if (cut.summary.truncated) {
				const note = shown.pop()!;
				assert.ok(expected.startsWith(shown.join("\n")));
				assert.match(note, new RegExp(`it is ${expected.length} chars as pretty JSON`));
			} else {
				assert.equal(shown.join("\n"), expected);
			}
		}
	});
});

describe("ids, selectors and bounds", () => {
	test("rejects an unknown id, saying it is unknown or expired", async (t) => {
		const deps = await createDeps(t);
		const message = await queryError(deps, { id: "0123456789ab", lines: { start: 1 } });
		assert.match(message, /no stored output with id=0123456789ab; it is unknown or expired/);
	});

	test("rejects an id that could form a path", async (t) => {
		const deps = await createDeps(t);
		const message = await queryError(deps, { id: "../../etc/passwd", lines: { start: 1 } });
		assert.match(message, /^overflow_query: id must be 12 lowercase hex characters/);
	});

	test("rejects two selectors in one call", async (t) => {
		const deps = await createDeps(t);
		const meta = await storeEntry(deps.store, SEQ_TEXT);
		const message = await queryError(deps, { id: meta.id, search: "1", lines: { start: 1 } });
		assert.match(message, /give at most one of search, lines, jsonPath \(got search and lines\)/);
	});

	test("treats an entry whose text vanished as expired", async (t) => {
		const deps = await createDeps(t);
		const meta = await storeEntry(deps.store, SEQ_TEXT);
		const { unlink } = await import("node:fs/promises");
		await unlink(deps.store.textPath(meta.id));
		assert.match(await queryError(deps, { id: meta.id, search: "1" }), /unknown or expired/);
	});

	for (const thresholdChars of [1000, 24_000]) {
		test(`keeps every answer within thresholdChars = ${thresholdChars}`, async (t) => {
			const deps = await createDeps(t, { thresholdChars, maxLineChars: 2000, contextLines: 5, maxResults: 1000 });
			const wide = Array.from({ length: 3000 }, (_, index) => `${index % 3 === 0 ? "error " : "ok "}${"w".repeat(index % 4000)}`).join("\n");
			const text = await storeEntry(deps.store, wide);
			const json = await storeEntry(deps.store, JSON.stringify({ list: Array.from({ length: 5000 }, (_, index) => ({ index, text: "v".repeat(index % 50) })) }));
			const asked: QueryParams[] = [
				{ id: text.id },
				{ id: text.id, search: "error" },
				{ id: text.id, search: "error w{100}" },
				{ id: text.id, search: "^ok" },
				{ id: text.id, lines: { start: 1 } },
				{ id: text.id, lines: { start: 2999, end: 3000 } },
				{ id: json.id },
				{ id: json.id, jsonPath: "$" },
				{ id: json.id, jsonPath: "list[4999]" },
				{ id: json.id, search: "index" },
			];
			for (const params of asked) {
				const answer = await query(deps, params);
				assert.ok(answer.text.length <= thresholdChars);
				assert.ok(answer.text.startsWith(`[pi-overflow id=`), answer.text.slice(0, 80));
			}
		});
	}

	test("answers the same query with the same bytes", async (t) => {
		const deps = await createDeps(t);
		const meta = await storeEntry(deps.store, SEQ_TEXT);
		for (const params of [{ search: "^2\\d*99$" }, { lines: { start: 77_777, end: 78_000 } }]) {
			const first = await query(deps, { id: meta.id, ...params });
			const second = await query(deps, { id: meta.id, ...params });
			assert.equal(first.text, second.text);
		}
	});
});
