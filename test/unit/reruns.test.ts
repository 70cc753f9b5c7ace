// Tests for src/reruns/ (signatures, run identities, run summaries, comparisons and what a view and
// overflow_query say of them), the superseding of an earlier run's view in masking.ts, superseded.ts,
// the run record in an entry's metadata, and the `since` answer.

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { createDefaultConfig } from "../../src/config/config.js";
import { type ContextMessage, maskOldViews, MaskingState, readToolResultView } from "../../src/context/masking.js";
import { findSuccessors } from "../../src/context/superseded.js";
import { findEarlierCall, readEarlierRun } from "../../src/bound/previous-run.js";
import { runQuery } from "../../src/query/index.js";
import {
	compareRuns,
	describeStatus,
	formatComparison,
	formatRerunLines,
	RERUN_VIEW_CHARS,
	type RunSide,
} from "../../src/reruns/compare.js";
import { CallIdentities, runIdentityOf } from "../../src/reruns/run-key.js";
import { looseSignatureOf, signatureOf } from "../../src/reruns/signature.js";
import { findVerdict, summarizeScan } from "../../src/reruns/summary.js";
import { OverflowStore, parseEntryMeta, type RunLine } from "../../src/store/index.js";
import { scanSource } from "../../src/view/compose.js";
import { bufferSource } from "../../src/io/source.js";
import { writeStoreEntry } from "../helpers/store-entry.js";
import { createTempDir } from "../helpers/tmp.js";

const CONFIG = createDefaultConfig();
const line = (number: number, text: string, count = 1): RunLine => ({ line: number, text, count });

async function summarize(text: string) {
	const scanned = await scanSource(bufferSource(Buffer.from(text, "utf8")), CONFIG);
	return { ...summarizeScan(scanned.scan), totalLines: scanned.scan.totalLines };
}

describe("signatureOf", () => {
	test("what varies between runs is left out", () => {
		const pairs: Array<[string, string]> = [
			["2026-12-02T10:18:20.913Z FAILED t.py::a - boom", "2026-12-03T09:00:01.001Z FAILED t.py::a - boom"],
			["[10:18:20] error: disk full", "[11:00:02] error: disk full"],
			["=== 4 failed, 296 passed in 1.23s ===", "=== 4 failed, 296 passed in 12.5s ==="],
			["E   AssertionError: <Foo object at 0x7f3a2b1c9d80>", "E   AssertionError: <Foo object at 0x7f00aa11bb22>"],
			[
				"/tmp/tmp.AbCdEf12/src/main.c:14:3: error: 'x' undeclared",
				"/tmp/tmp.ZyXw9876/src/main.c:14:3: error: 'x' undeclared",
			],
			[
				"/tmp/pytest-of-root/pytest-12/test_a0/f.txt: not found",
				"/tmp/pytest-of-root/pytest-13/test_a0/f.txt: not found",
			],
			["no index.json in /tmp/x/cache-fF6kDV", "no index.json in /tmp/x/cache-gYpHPa"],
			["node[12345]: fatal error", "node[999]: fatal error"],
			["worker pid=4242 crashed", "worker pid=77 crashed"],
			["thread 'main' panicked (ThreadId(2))", "thread 'main' panicked (ThreadId(14))"],
			["commit 3f2a9c1b7d4e failed to apply", "commit 9d0e1f2a3b4c failed to apply"],
			["  duration_ms: 0.2345 error", "  duration_ms: 12 error"],
			["Randomized with seed 48213", "Randomized with seed 1"],
		];
		for (const [a, b] of pairs) assert.equal(signatureOf(a), signatureOf(b), `${a} ~ ${b}`);
	});

	test("what identifies a failure stays", () => {
		const pairs: Array<[string, string]> = [
			["src/a.ts(3,5): error TS2304: Cannot find name 'x'.", "src/a.ts(3,5): error TS2322: Cannot find name 'x'."],
			["src/a.ts:3:5 error", "src/b.ts:3:5 error"],
			["src/a.ts:3:5 error", "src/a.ts:30:5 error"],
			["FAILED tests/t.py::test_a - boom", "FAILED tests/t.py::test_b - boom"],
			["error[E0308]: mismatched types", "error[E0277]: mismatched types"],
			["not ok 401 - alpha adds", "not ok 401 - beta adds"],
		];
		for (const [a, b] of pairs) assert.notEqual(signatureOf(a), signatureOf(b), `${a} ≠ ${b}`);
	});

	test("the loose signature drops lone numbers only: a location's line, a count", () => {
		assert.equal(
			looseSignatureOf(signatureOf("src/a.ts:3:5 error")),
			looseSignatureOf(signatureOf("src/a.ts:31:9 error")),
		);
		assert.equal(looseSignatureOf(signatureOf("# fail 5")), looseSignatureOf(signatureOf("# fail 4")));
		assert.notEqual(looseSignatureOf(signatureOf("error TS2304: x")), looseSignatureOf(signatureOf("error TS2322: x")));
	});

	test("a pathological line is signed in linear time", () => {
		for (const text of ["0".repeat(200_000), "/tmp/".repeat(50_000), `${"a".repeat(100_000)}[${"1".repeat(100_000)}`]) {
			const signature = signatureOf(text);
			assert.ok(signature.length <= 400 + 10);
		}
	});
});

describe("runIdentityOf", () => {
	test("bash: the command text trimmed, its timeout aside", () => {
		const a = runIdentityOf("bash", { command: "  npm test\n" });
		const b = runIdentityOf("bash", { command: "npm test", timeout: 60 });
		assert.ok(a && b);
		assert.equal(a.key, b.key);
		assert.equal(a.label, "npm test");
		assert.notEqual(a.key, runIdentityOf("bash", { command: "npm test -- -x" })?.key);
		assert.equal(runIdentityOf("bash", { command: "   " }), undefined);
	});

	test("other tools: the same arguments in any key order; another tool or argument is another run", () => {
		const a = runIdentityOf("grep", { pattern: "x", path: "src", options: { i: true, n: 2 } });
		const b = runIdentityOf("grep", { options: { n: 2, i: true }, path: "src", pattern: "x" });
		assert.ok(a && b);
		assert.equal(a.key, b.key);
		assert.notEqual(a.key, runIdentityOf("find", { options: { n: 2, i: true }, path: "src", pattern: "x" })?.key);
		assert.notEqual(a.key, runIdentityOf("grep", { pattern: "y", path: "src", options: { i: true, n: 2 } })?.key);
		const cyclic: Record<string, unknown> = {};
		cyclic.self = cyclic;
		assert.equal(runIdentityOf("t", cyclic), undefined, "arguments JSON cannot say make no key");
	});

	test("CallIdentities remembers a call's run text by its arguments object, never by a reused id", () => {
		const identities = new CallIdentities();
		const input = { command: " make " };
		assert.equal(identities.textOf("bash", input), "bash\0make");
		assert.equal(identities.textOf("bash", input), "bash\0make", "remembered");
		assert.equal(identities.textOf("grep", input), `grep\0{"command":" make "}`, "another tool: its own text");
		assert.equal(identities.of("bash", input)?.key, runIdentityOf("bash", { command: "make" })?.key);
		assert.equal(
			identities.of("bash", { command: "make -j4" })?.key,
			runIdentityOf("bash", { command: "make -j4" })?.key,
		);
	});
});

describe("compareRuns", () => {
	const before = [
		line(10, "2026-01-01T00:00:01Z FAILED t.py::test_a - assert 1 == 2"),
		line(11, "2026-01-01T00:00:01Z FAILED t.py::test_b - assert 3 == 4"),
		line(12, "2026-01-01T00:00:02Z FAILED t.py::test_c - boom at 0x7f00aa"),
		line(30, "=== 3 failed, 97 passed in 1.02s ==="),
	];

	test("a fix: exactly its lines are gone, the rest still there (the summary's counts too)", () => {
		const after = [
			line(10, "2026-01-02T10:00:01Z FAILED t.py::test_b - assert 3 == 4"),
			line(11, "2026-01-02T10:00:02Z FAILED t.py::test_c - boom at 0x7f99bb"),
			line(29, "=== 2 failed, 98 passed in 0.98s ==="),
		];
		const comparison = compareRuns(before, after);
		assert.deepEqual(
			comparison.gone.map((item) => item.line),
			[10],
		);
		assert.deepEqual(comparison.added, []);
		assert.equal(comparison.unchanged.length, 3);
	});

	test("another order and other timings: nothing changed", () => {
		const after = [before[2], before[0], before[1], before[3]].map((item, index) => ({
			...item,
			line: index + 50,
			text: item.text.replace(/2026-01-01T00:00:0\d/, "2027-05-05T05:05:05").replace("1.02s", "3.5s"),
		}));
		const comparison = compareRuns(before, after);
		assert.deepEqual([comparison.added.length, comparison.gone.length, comparison.unchanged.length], [0, 0, 4]);
	});

	test("a new failure is new; two lines with one text are matched one for one", () => {
		const twice = [line(1, "error: x"), line(2, "error: x")];
		const comparison = compareRuns(twice, [line(5, "error: x"), line(6, "error: x"), line(7, "error: y")]);
		assert.deepEqual(
			comparison.added.map((item) => item.text),
			["error: y"],
		);
		assert.equal(comparison.unchanged.length, 2);
		assert.deepEqual(
			compareRuns(twice, [line(5, "error: x")]).gone.map((item) => item.line),
			[2],
		);
	});

	test("a shape kept only as a sample is compared by its count, not line by line", () => {
		const sample = (lines: number[], total: number) =>
			lines.map((number) => ({
				...line(number, `src/m${number}.ts(1,1): error TS2304: Cannot find name 'x${number}'.`),
				shapeCount: total,
			}));
		const comparison = compareRuns(sample([1, 50, 99], 688), sample([1, 60, 98], 687));
		assert.deepEqual([comparison.added.length, comparison.gone.length], [0, 0]);
		assert.deepEqual(
			comparison.shapes.map((change) => [change.before, change.after]),
			[[688, 687]],
		);
		// The whole shape fixed: its lines are gone.
		assert.equal(compareRuns(sample([1, 50], 688), []).gone.length, 2);
	});
});

describe("what a re-run's view and overflow_query say", () => {
	const earlier: RunSide = {
		id: "aaaaaaaaaaaa",
		signals: [line(10, "FAILED a"), line(11, "FAILED b")],
		verdict: line(20, "2 failed"),
		status: "Command exited with code 1",
		totalLines: 20,
	};

	test("nothing changed: one line", () => {
		const lines = formatRerunLines(compareRuns(earlier.signals, earlier.signals), earlier, {
			...earlier,
			id: undefined,
		});
		assert.deepEqual(lines, [
			"[pi-overflow: re-run: nothing changed since the last run of this command (id=aaaaaaaaaaaa): the same 2 signal lines, exit code 1 again]",
		]);
	});

	test("counts, then the new lines, then the gone ones, then the verdict; bounded whatever the number of lines", () => {
		const later: RunSide = {
			signals: [line(11, "FAILED b"), line(12, "FAILED c")],
			verdict: line(21, "2 failed, 1 new"),
			totalLines: 21,
		};
		const lines = formatRerunLines(compareRuns(earlier.signals, later.signals), earlier, later);
		assert.equal(
			lines[0],
			"[pi-overflow: re-run: since the last run of this command (id=aaaaaaaaaaaa): 1 new, 1 gone, 1 still there; exit code 1 → no error]",
		);
		assert.match(lines[1], /^ {2}new +12: FAILED c$/);
		assert.match(lines[2], /^ {2}gone +10: FAILED a$/);
		assert.ok(lines.some((text) => text.startsWith("  verdict: 2 failed → 2 failed, 1 new")));
		const many = Array.from({ length: 300 }, (_, index) => line(index + 1, `FAILED test_${index} ${"x".repeat(300)}`));
		const big = formatRerunLines(compareRuns(many, []), { ...earlier, signals: many }, later);
		assert.ok(big.join("\n").length <= RERUN_VIEW_CHARS);
		assert.match(big.join("\n"), /295 more gone/);
	});

	test("the full comparison lists every line with line numbers on both sides, within its budget", () => {
		const later = { id: "bbbbbbbbbbbb", signals: [line(3, "FAILED b"), line(4, "FAILED c")], totalLines: 9 };
		const { text, truncated } = formatComparison(
			compareRuns(earlier.signals, later.signals),
			{ ...earlier, id: "aaaaaaaaaaaa" },
			later,
			24_000,
		);
		assert.equal(truncated, false);
		assert.match(text, /1 new, 1 gone, 1 still there/);
		assert.match(text, /^new \(numbered as in id=bbbbbbbbbbbb\):\n +4: FAILED c$/m);
		assert.match(text, /^gone \(numbered as in id=aaaaaaaaaaaa\):\n +10: FAILED a$/m);
		assert.match(text, /^ {2}11 → 3: FAILED b$/m);
		const many = Array.from({ length: 2000 }, (_, index) => line(index + 1, `FAILED test_${index}`));
		const cut = formatComparison(
			compareRuns(many, []),
			{ ...earlier, id: "aaaaaaaaaaaa", signals: many },
			later,
			3_000,
		);
		assert.equal(cut.truncated, true);
		assert.ok(cut.text.length <= 3_000);
		assert.match(cut.text, /more not shown/);
	});

	test("Pi's status in a few words", () => {
		assert.equal(describeStatus("Command exited with code 2"), "exit code 2");
		assert.equal(describeStatus(undefined), "no error");
		assert.equal(describeStatus("Command timed out after 30 seconds"), "Command timed out after 30 seconds");
	});
});

describe("summarizeScan and findVerdict", () => {
	test("a run keeps its signal lines in line order and its verdict", async () => {
		const text = [
			...Array.from({ length: 300 }, (_, index) => `ok ${index} - passes`),
			"not ok 301 - alpha adds",
			"  error: boom",
			...Array.from({ length: 300 }, (_, index) => `ok ${index + 302} - passes`),
			"# tests 602",
			"# pass 600",
			"# fail 2",
			"# duration_ms 123.4",
		].join("\n");
		const run = await summarize(text);
		assert.ok(run.signals.some((item) => item.text === "not ok 301 - alpha adds"));
		assert.deepEqual(
			run.signals.map((item) => item.line),
			[...run.signals.map((item) => item.line)].sort((a, b) => a - b),
		);
		assert.equal(run.verdict?.text, "# fail 2");
	});

	test("the verdict is the last line stating an outcome near the end, else the last line", () => {
		const tail = (texts: string[]) =>
			texts.map((text, index) => ({ lineNumber: index + 1, text, totalChars: text.length, partial: false }));
		assert.equal(
			findVerdict(tail(["x", "Tests: 3 failed, 9 passed", "Time: 2s", ""]))?.text,
			"Tests: 3 failed, 9 passed",
		);
		assert.equal(findVerdict(tail(["compiling", "make: *** [all] Error 2"]))?.text, "make: *** [all] Error 2");
		assert.equal(findVerdict(tail(["a", "b", "  "]))?.text, "b");
		assert.equal(findVerdict([]), undefined);
	});
});

describe("superseded views in what the model is sent", () => {
	const OPTIONS = { maskAfterChars: 0, maskBatchChars: 20_000, signalRegex: CONFIG.signalRegex };
	let counter = 0;
	const call = (command: string) => {
		const id = `call-${counter++}`;
		return {
			assistant: {
				role: "assistant",
				content: [{ type: "toolCall", id, name: "bash", arguments: { command } }],
			} as ContextMessage,
			result: (viewId?: string): ContextMessage => ({
				role: "toolResult",
				toolCallId: id,
				toolName: "bash",
				content: [
					{
						type: "text",
						text: viewId ? `[pi-overflow id=${viewId}] bash output: 9 lines, 99 bytes\n     9: FAILED a` : "all passed",
					},
				],
				...(viewId ? { details: { overflow: { id: viewId, totalLines: 9, totalBytes: 99 } } } : {}),
				isError: false,
				timestamp: 0,
			}),
		};
	};

	test("findSuccessors pairs each run with the next run of the same command", () => {
		const identities = new CallIdentities();
		const a1 = call("npm test");
		const b1 = call("make");
		const a2 = call("  npm test ");
		const messages = [a1.assistant, a1.result("aaaaaaaaaaaa"), b1.assistant, b1.result(), a2.assistant, a2.result()];
		assert.deepEqual([...findSuccessors(messages, [1, 3], identities)], [[1, 5]]);
		assert.deepEqual([...findSuccessors(messages, [], identities)], [], "no view, nothing to supersede");
	});

	test("a view is masked as superseded once the re-run was sent, whatever maskAfterChars says; the stub then never changes", () => {
		const identities = new CallIdentities();
		const state = new MaskingState();
		const run1 = call("npm test");
		const run2 = call("npm test");
		const run3 = call("npm test");
		const options = {
			...OPTIONS,
			findSuccessors: (list: readonly ContextMessage[], views: readonly number[]) =>
				findSuccessors(list, views, identities),
		};
		const mask = (messages: ContextMessage[]) => maskOldViews(messages, state, options, readToolResultView);
		const first = [run1.assistant, run1.result("aaaaaaaaaaaa")];
		assert.equal(mask(first).masked, 0);
		const second = [...first, run2.assistant, run2.result("bbbbbbbbbbbb")];
		assert.equal(mask(second).masked, 0, "not before the model saw the re-run");
		// Steps are at least MASK_MIN_CALLS_BETWEEN calls apart: the first call that may step masks it.
		let result = mask(second);
		for (let calls = 0; !result.stepped && calls < 8; calls++) result = mask(second);
		assert.equal(result.stepped, true);
		const stub = (result.messages[1].content as Array<{ text: string }>)[0].text;
		assert.match(
			stub,
			/^\[pi-overflow id=aaaaaaaaaaaa\] bash output: 9 lines, 99 bytes — superseded by a later run of the same command \(id=bbbbbbbbbbbb\), masked here/,
		);
		assert.doesNotMatch(stub, /FAILED a/, "a superseded run's stale lines are not shown again");
		assert.equal(stub.split("\n").length, 2, "its header and how to read it back");
		assert.equal(result.messages[3], second[3], "the re-run stays whole");
		// A third run (left whole: it fit) supersedes the second; the first one's stub stays as it was.
		const third = [...second, run3.assistant, run3.result()];
		for (let calls = 0; calls < 10; calls++) result = mask(third);
		assert.equal((result.messages[1].content as Array<{ text: string }>)[0].text, stub);
		assert.match(
			(result.messages[3].content as Array<{ text: string }>)[0].text,
			/superseded by a later run of the same command \(shown whole below\)/,
		);
	});
});

describe("run records in an entry's metadata, and since", () => {
	const base = {
		id: "aaaaaaaaaaaa",
		sessionId: "s",
		toolCallId: "c",
		toolName: "bash",
		createdAt: "2026-01-01T00:00:00.000Z",
		totalLines: 3,
		totalBytes: 9,
		storedLines: 3,
		storedBytes: 9,
		truncated: false,
		source: "current",
	};

	test("a run record is read back; a malformed one costs the comparison, never the entry", () => {
		const run = {
			key: "k",
			label: "npm test",
			signals: [line(1, "FAILED a")],
			verdict: line(3, "1 failed"),
			rerunOf: { id: "bbbbbbbbbbbb", lines: ["x"], counts: { new: 0, gone: 1, still: 2 } },
		};
		assert.deepEqual(parseEntryMeta({ ...base, run })?.run, run);
		for (const bad of [
			{ key: 1 },
			{ ...run, signals: [{ line: -1, text: "x", count: 1 }] },
			{ ...run, rerunOf: { id: "../x", lines: [], counts: { new: 0, gone: 0, still: 0 } } },
			{ ...run, rerunOf: { lines: [] } },
		]) {
			const meta = parseEntryMeta({ ...base, run: bad });
			assert.ok(meta, "the entry stays");
			assert.equal(meta.run, undefined);
		}
	});

	test("overflow_query since: the comparison of two runs of one command; a clear error otherwise", async (t) => {
		const store = new OverflowStore({ root: await createTempDir(t) });
		const deps = { config: CONFIG, store };
		await writeRun(store, "aaaaaaaaaaaa", "k", ["FAILED a", "FAILED b"]);
		await writeRun(store, "bbbbbbbbbbbb", "k", ["FAILED b"]);
		await writeRun(store, "cccccccccccc", "other", ["FAILED b"]);
		const answer = await runQuery({ id: "bbbbbbbbbbbb", since: "aaaaaaaaaaaa" }, deps);
		assert.equal(answer.summary.selector, "since");
		assert.match(answer.text, /compared with the earlier run id=aaaaaaaaaaaa: 0 new, 1 gone, 1 still there/);
		await assert.rejects(runQuery({ id: "bbbbbbbbbbbb", since: "cccccccccccc" }, deps), /ran something else/);
		await assert.rejects(runQuery({ id: "bbbbbbbbbbbb", since: "bbbbbbbbbbbb" }, deps), /another run/);
		await assert.rejects(
			runQuery({ id: "bbbbbbbbbbbb", since: "dddddddddddd" }, deps),
			/no stored output with id=dddddddddddd/,
		);
		await assert.rejects(runQuery({ id: "bbbbbbbbbbbb", since: "aaaaaaaaaaaa", search: "x" }, deps), /at most one of/);
		await writeStoreEntry(store, "eeeeeeeeeeee", "FAILED a\n");
		await assert.rejects(
			runQuery({ id: "bbbbbbbbbbbb", since: "eeeeeeeeeeee" }, deps),
			/no record of its signal lines/,
		);
	});
});

/** Stores an entry whose run record has `key` and these signal lines. */
async function writeRun(store: OverflowStore, id: string, key: string, texts: string[]) {
	const text = `${texts.join("\n")}\n`;
	const writer = await store.beginEntry(id);
	await writer.write(Buffer.from(text));
	await writer.commit({
		id,
		sessionId: "s",
		toolCallId: `call-${id}`,
		toolName: "bash",
		createdAt: "2026-01-01T00:00:00.000Z",
		totalLines: texts.length,
		totalBytes: text.length,
		storedLines: texts.length,
		storedBytes: text.length,
		truncated: false,
		source: "current",
		run: { key, label: key, signals: texts.map((item, index) => line(index + 1, item)) },
	});
}

describe("the last run of the same command, in the session's branch", () => {
	const identities = new CallIdentities();
	const identity = runIdentityOf("bash", { command: "make" });
	assert.ok(identity);
	const assistant = (id: string, command: string) => ({
		type: "message",
		message: { role: "assistant", content: [{ type: "toolCall", id, name: "bash", arguments: { command } }] },
	});
	const result = (id: string, text: string, extra: Record<string, unknown> = {}) => ({
		type: "message",
		message: {
			role: "toolResult",
			toolCallId: id,
			toolName: "bash",
			content: [{ type: "text", text }],
			isError: false,
			...extra,
		},
	});

	test("the latest earlier call of the same command whose result the branch holds; never the call itself", () => {
		const branch = [
			assistant("a", "make"),
			result("a", "first"),
			assistant("b", " make "),
			result("b", "second"),
			assistant("c", "make -j4"),
			result("c", "other"),
			assistant("d", "make"),
		];
		assert.equal(findEarlierCall(branch, "d", "bash", "bash\0make", identities)?.toolCallId, "b");
		assert.equal(findEarlierCall(branch.slice(0, 2), "a", "bash", "bash\0make", identities), undefined);
	});

	test("a result that fit is read from its text, Pi's status line aside; a view that could not be stored is not", async (t) => {
		const store = new OverflowStore({ root: await createTempDir(t) });
		const deps = { store, config: CONFIG, sessionIds: async () => new Set(["s"]) };
		const text = "cc -c a.c\na.c:3:1: error: expected ';'\nmake: *** [all] Error 2\n\nCommand exited with code 2";
		const small = await readEarlierRun(
			{ toolCallId: "a", content: [{ type: "text", text }], details: undefined, isError: true },
			identity,
			deps,
		);
		assert.ok(small);
		assert.equal(small.id, undefined);
		assert.equal(small.status, "Command exited with code 2");
		assert.deepEqual(
			small.signals.map((line) => line.text),
			["a.c:3:1: error: expected ';'", "make: *** [all] Error 2"],
		);
		const unstored = await readEarlierRun(
			{
				toolCallId: "a",
				content: [{ type: "text", text }],
				details: { overflow: { totalLines: 3, totalBytes: 9, storeError: "EACCES" } },
				isError: true,
			},
			identity,
			deps,
		);
		assert.equal(unstored, undefined);
	});

	test("a stored run is read from its entry only when it was made for that call, of that command, in this session's lineage", async (t) => {
		const store = new OverflowStore({ root: await createTempDir(t) });
		await writeRun(store, "aaaaaaaaaaaa", identity.key, ["a.c:3:1: error: expected ';'"]);
		const call = (toolCallId: string) => ({
			toolCallId,
			content: [{ type: "text", text: "[pi-overflow id=aaaaaaaaaaaa] view" }],
			details: { overflow: { id: "aaaaaaaaaaaa", totalLines: 1, totalBytes: 9 } },
			isError: false,
		});
		const deps = (session: string) => ({ store, config: CONFIG, sessionIds: async () => new Set([session]) });
		const stored = await readEarlierRun(call("call-aaaaaaaaaaaa"), identity, deps("s"));
		assert.equal(stored?.id, "aaaaaaaaaaaa");
		assert.equal(stored?.signals.length, 1);
		assert.equal(await readEarlierRun(call("another call"), identity, deps("s")), undefined, "another call's entry");
		assert.equal(
			await readEarlierRun(call("call-aaaaaaaaaaaa"), identity, deps("other")),
			undefined,
			"another session's",
		);
		const otherCommand = runIdentityOf("bash", { command: "make test" });
		assert.ok(otherCommand);
		assert.equal(
			await readEarlierRun(call("call-aaaaaaaaaaaa"), otherCommand, deps("s")),
			undefined,
			"another command",
		);
	});
});
