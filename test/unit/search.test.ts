import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { after, describe, type TestContext, test } from "node:test";
import { PROGRESS_SLOTS, type SearchWorkerMessage } from "../../src/query/engine/protocol.js";
import {
	disposeSearchWorkers,
	MAX_SEARCH_WORKERS,
	prewarmSearchWorker,
	readSearchWorkerStats,
	searchFile,
	type SearchOptions,
	type SearchResult,
} from "../../src/query/engine/search.js";
import { runAt } from "../../src/query/engine/pool.js";
import { assertChildOk, runChild } from "../helpers/child.js";
import { createTempDir } from "../helpers/tmp.js";
import { createRandom } from "../helpers/random.js";
import { randomText, searchReference, splitLines } from "../helpers/search-oracle.js";

after(() => disposeSearchWorkers());

const BASE_OPTIONS: SearchOptions = {
	pattern: "x",
	contextLines: 2,
	maxResults: 50,
	maxLineChars: 500,
	timeoutMs: 10_000,
	budgetChars: 1_000_000_000,
};

describe("searchFile against a line-by-line oracle", () => {
	const patterns = [
		"a",
		"bb+",
		"^a",
		"b$",
		"é",
		"😀",
		"a.b",
		"x|é",
		"(?<=a)b",
		"a(?!b)",
		"^$",
		"x*",
		"\\s$",
		"[^ab]{3}",
		"a\\r?b",
		"^[^x]*$",
		"b\\nA",
	];
	test("shows the same lines, windows and counts for random texts, chunk sizes and patterns", async (t) => {
		const dir = await createTempDir(t);
		const random = createRandom(20240601);
		let cases = 0;
		const chunkSizes = [37, 64, 256, 4096, 1 << 20];
		for (let round = 0; round < 15; round++) {
			// The 1 MiB rounds hold whole texts of several regex windows (16 KiB) each.
			const large = chunkSizes[round % chunkSizes.length] === 1 << 20;
			const text = randomText(random, large ? 4000 : 50 + Math.floor(random() * 400));
			const path = join(dir, `text-${round}.txt`);
			await writeFile(path, text);
			for (const pattern of patterns) {
				const options: SearchOptions = {
					...BASE_OPTIONS,
					pattern,
					contextLines: Math.floor(random() * 4),
					maxResults: 1 + Math.floor(random() * 25),
					maxLineChars: 5 + Math.floor(random() * 60),
					// Lines are at most ~3 KiB long here: small chunks cut them often, giant lines never occur.
					chunkBytes: chunkSizes[round % chunkSizes.length],
					giantLineBytes: 1 << 20,
				};
				const expected = searchReference(text, options);
				const actual = await searchFile(path, options);
				const label = `round ${round}, pattern /${pattern}/, chunk ${options.chunkBytes}`;
				assert.equal(actual.totalHits, expected.totalHits, label);
				assert.deepEqual(actual.lines, expected.lines, label);
				assert.equal(actual.stopped, null);
				assert.equal(actual.linesSearched, splitLines(text).length, label);
				cases++;
			}
		}
		t.diagnostic(`${cases} random cases agree with the oracle`);
	});
});

describe("giant lines", () => {
	test("finds a match in a line longer than giantLineBytes and shows it around the match", async (t) => {
		const dir = await createTempDir(t);
		const path = join(dir, "giant.txt");
		const giant = `${"a".repeat(3_000_000)}NEEDLE${"b".repeat(500_000)}`;
		await writeFile(path, `before 1\nbefore 2\n${giant}\r\nafter 1\nafter 2\nafter 3\n`);
		const result = await searchFile(path, {
			...BASE_OPTIONS,
			pattern: "needle",
			maxLineChars: 100,
			chunkBytes: 64 * 1024,
			giantLineBytes: 256 * 1024,
		});
		assert.equal(result.totalHits, 1);
		assert.deepEqual(
			result.lines.map((line) => [line.lineNumber, line.hit]),
			[
				[1, false],
				[2, false],
				[3, true],
				[4, false],
				[5, false],
			],
		);
		const hit = result.lines[2]!;
		assert.equal(hit.text.length, 100);
		assert.equal(hit.cutBefore + hit.text.length + hit.cutAfter, giant.length);
		assert.equal(giant.slice(hit.cutBefore, hit.cutBefore + 100), hit.text);
		assert.equal(hit.text.slice(hit.matchStart, hit.matchStart + 6), "NEEDLE");
	});

	test("finds a match cut by a segment boundary", async (t) => {
		const dir = await createTempDir(t);
		const path = join(dir, "boundary.txt");
		const chunkBytes = 64 * 1024;
		// The giant line starts at byte 0; its first segment is 4 chunks, the next ones one chunk each.
		const boundary = 6 * chunkBytes;
		const giant = `${"a".repeat(boundary - 3)}NEEDLE${"b".repeat(chunkBytes * 3)}`;
		await writeFile(path, `${giant}\nnext line\n`);
		const result = await searchFile(path, {
			...BASE_OPTIONS,
			pattern: "needle$|needle",
			maxLineChars: 50,
			chunkBytes,
			giantLineBytes: 4 * chunkBytes,
		});
		assert.equal(result.totalHits, 1);
		const hit = result.lines.find((line) => line.hit)!;
		assert.equal(hit.lineNumber, 1);
		assert.equal(hit.text.slice(hit.matchStart, hit.matchStart + 6), "NEEDLE");
		assert.equal(hit.cutBefore + hit.matchStart, boundary - 3);
		assert.equal(result.linesSearched, 2);
	});

	test("shows a giant line as context with its length counted", async (t) => {
		const dir = await createTempDir(t);
		const path = join(dir, "context.txt");
		const giant = "é".repeat(400_000);
		await writeFile(path, `${giant}\nerror here\n${giant}`);
		const result = await searchFile(path, {
			...BASE_OPTIONS,
			pattern: "error",
			maxLineChars: 10,
			chunkBytes: 16 * 1024,
			giantLineBytes: 64 * 1024,
		});
		assert.deepEqual(
			result.lines.map((line) => [line.lineNumber, line.hit, line.text, line.cutAfter]),
			[
				[1, false, "é".repeat(10), 399_990],
				[2, true, "error here", 0],
				[3, false, "é".repeat(10), 399_990],
			],
		);
		assert.equal(result.linesSearched, 3);
	});
});

describe("time bound and workers", () => {
	const catastrophic = `${Array.from({ length: 20 }, (_, index) => `ok ${index + 1}`).join("\n")}\n${Array.from({ length: 3000 }, () => `${"a".repeat(36)}!`).join("\n")}\n`;

	// How long the answer takes is measured by `npm run bench` (catastrophic regex row).
	test("terminates a runaway regex step at the deadline and keeps the main thread responsive", async (t) => {
		const dir = await createTempDir(t);
		const path = join(dir, "runaway.txt");
		await writeFile(path, catastrophic);
		// Timers set when the search begins fire while it runs: the regex never holds the main thread.
		const fired: string[] = [];
		setImmediate(() => fired.push("immediate"));
		setTimeout(() => fired.push("timeout"), 1);
		const result = await searchFile(path, { ...BASE_OPTIONS, pattern: "^ok 1\\d$|(a+)+$", timeoutMs: 400 });
		assert.deepEqual(fired.sort(), ["immediate", "timeout"], "the main thread ran its timers during the search");
		assert.equal(result.stopped?.terminated, true, "the runaway step was terminated, not waited for");
		assert.equal(result.stopped?.atLine, 20);
		assert.deepEqual(
			result.lines.filter((line) => line.hit).map((line) => line.lineNumber),
			[10, 11, 12, 13, 14, 15, 16, 17, 18, 19],
		);
		assert.equal(result.totalHits, 10);
		assert.equal(result.linesSearched, 19);
	});

	test("stops between regex steps when time runs out, saying where", async (t) => {
		const dir = await createTempDir(t);
		const path = join(dir, "slow.txt");
		// On a virtual clock (1 ms a line, deadline after 500 lines) the worker stops by itself between
		// steps, however loaded the machine; real time plays no part (60 s grace before a hard stop).
		await writeFile(path, Array.from({ length: 20_000 }, () => "a".repeat(300)).join("\n"));
		for (const pattern of ["(?=a)a{200}b", "a{200}b"]) {
			const result = await searchFile(path, {
				...BASE_OPTIONS,
				pattern,
				timeoutMs: 500,
				virtualMsPerLine: 1,
				hardStopGraceMs: 60_000,
			});
			const label = `/${pattern}/: ${JSON.stringify(result.stopped)}`;
			assert.ok(result.stopped !== null, label);
			assert.equal(result.stopped.cause, "time", label);
			assert.equal(result.stopped.terminated, false, `stopped by the worker itself, not terminated: ${label}`);
			assert.ok(
				result.stopped.atLine > 500 && result.stopped.atLine < 20_000,
				`stopped once 500 lines were searched, before the end: ${label}`,
			);
			assert.equal(result.linesSearched, result.stopped.atLine - 1, label);
		}
	});

	test("reuses a warm worker and replaces a terminated one", async (t) => {
		const dir = await createTempDir(t);
		const path = join(dir, "warm.txt");
		await writeFile(path, catastrophic);
		await searchFile(path, { ...BASE_OPTIONS, pattern: "ok" });
		const started = readSearchWorkerStats().started;
		for (let round = 0; round < 5; round++) {
			const result = await searchFile(path, { ...BASE_OPTIONS, pattern: "^ok 7$" });
			assert.equal(result.totalHits, 1);
		}
		assert.equal(readSearchWorkerStats().started, started, "no new worker for sequential searches");
		await disposeSearchWorkers();
		assert.equal(readSearchWorkerStats().idle, 0);
		await searchFile(path, { ...BASE_OPTIONS, pattern: "^ok 7$" });
		await searchFile(path, { ...BASE_OPTIONS, pattern: "(a+)+$", timeoutMs: 100 });
		const after = await searchFile(path, { ...BASE_OPTIONS, pattern: "^ok 7$" });
		assert.equal(after.totalHits, 1);
		assert.equal(readSearchWorkerStats().started, started + 2, "a fresh worker after the terminated one");
		assert.deepEqual({ busy: readSearchWorkerStats().busy }, { busy: 0 });
		await disposeSearchWorkers();
		prewarmSearchWorker();
		assert.deepEqual(readSearchWorkerStats(), { started: started + 3, idle: 1, busy: 0 });
		assert.equal((await searchFile(path, { ...BASE_OPTIONS, pattern: "^ok 7$" })).totalHits, 1);
		assert.equal(readSearchWorkerStats().started, started + 3, "the prewarmed worker served the search");
	});

	test("runs concurrent searches on separate workers", async (t) => {
		const dir = await createTempDir(t);
		const path = join(dir, "concurrent.txt");
		await writeFile(path, catastrophic);
		const results = await Promise.all(
			Array.from({ length: 6 }, (_, index) => searchFile(path, { ...BASE_OPTIONS, pattern: `^ok ${index + 1}$` })),
		);
		results.forEach((result, index) => assert.deepEqual(result.lines.find((line) => line.hit)?.lineNumber, index + 1));
		assert.ok(readSearchWorkerStats().idle <= 1);
	});

	test("rejects when the signal aborts, without waiting for the regex", async (t) => {
		const dir = await createTempDir(t);
		const path = join(dir, "abort.txt");
		await writeFile(path, catastrophic);
		const controller = new AbortController();
		setTimeout(() => controller.abort(), 50);
		// Without the abort this search would resolve (stopped) after its 60 s.
		await assert.rejects(
			searchFile(path, { ...BASE_OPTIONS, pattern: "(a+)+$", timeoutMs: 60_000, signal: controller.signal }),
			{ name: "AbortError" },
		);
		assert.equal(readSearchWorkerStats().busy, 0, "the worker was let go");
	});

	test("runs the worker module in a plain node process, without tsx", async (t) => {
		const dir = await createTempDir(t);
		const textPath = join(dir, "plain.txt");
		await writeFile(textPath, "one\ntwo error\nthree\n");
		const workerUrl = new URL("../../src/query/engine/worker.js", import.meta.url).href;
		const driver = `
			const { Worker, MessageChannel } = require("node:worker_threads");
			const { port1, port2 } = new MessageChannel();
			const progress = new SharedArrayBuffer(${PROGRESS_SLOTS * 8});
			const worker = new Worker(new URL(${JSON.stringify(workerUrl)}), { workerData: { port: port2, progress }, transferList: [port2] });
			const lines = [];
			let started;
			port1.on("message", (message) => {
				if (message.type === "started") started = message;
				else if (message.type === "lines") lines.push(...message.lines);
				else { console.log(JSON.stringify({ started, done: message, lines, execArgv: process.execArgv })); worker.terminate(); port1.close(); }
			});
			port1.postMessage({ type: "search", id: 7, path: ${JSON.stringify(textPath)}, pattern: "ERROR", contextLines: 1, maxResults: 10, maxLineChars: 100,
				budgetChars: 100000, timeoutMs: 5000, chunkBytes: 1048576, giantLineBytes: 8388608 });
		`;
		const run = runChild(process.execPath, ["-e", driver], { env: { ...process.env, NODE_OPTIONS: "" } });
		assertChildOk(run, "the plain node driver");
		const { stdout } = run;
		const reply = JSON.parse(stdout) as {
			started: Extract<SearchWorkerMessage, { type: "started" }>;
			done: Extract<SearchWorkerMessage, { type: "done" }>;
			lines: Array<{ lineNumber: number; hit: boolean; text: string }>;
			execArgv: string[];
		};
		assert.ok(
			!reply.execArgv.some((arg) => arg.includes("tsx") || arg.includes("--import") || arg.includes("--loader")),
			reply.execArgv.join(" "),
		);
		assert.equal(reply.started.id, 7, "the worker says when it begins the request");
		assert.equal(reply.done.totalHits, 1);
		assert.equal(reply.done.linesSearched, 3);
		assert.deepEqual(
			reply.lines.map((line) => [line.lineNumber, line.hit, line.text]),
			[
				[1, false, "one"],
				[2, true, "two error"],
				[3, false, "three"],
			],
		);
	});
});

describe("waiting for a worker", () => {
	// Line 1 holds the word; every other line makes (a+)+$ run for ever.
	const needleThenRunaway = `needle\n${`${"a".repeat(40)}!\n`.repeat(2000)}`;
	const runaway: SearchOptions = { ...BASE_OPTIONS, pattern: "(a+)+$", hardStopGraceMs: 50 };

	/** Fresh workers all busy with runaway searches of 60 s; `ended` turns true once they end (only disposeSearchWorkers ends them). */
	async function occupyEveryWorker(
		t: TestContext,
		name: string,
	): Promise<{ path: string; others: Promise<unknown[]>; ended: () => boolean }> {
		const dir = await createTempDir(t);
		const path = join(dir, name);
		await writeFile(path, needleThenRunaway);
		await disposeSearchWorkers();
		let ended = false;
		const others = Promise.all(
			Array.from({ length: MAX_SEARCH_WORKERS }, () =>
				searchFile(path, { ...runaway, timeoutMs: 60_000 }).catch((error: Error) => error),
			),
		);
		void others.then(() => (ended = true));
		return { path, others, ended: () => ended };
	}

	test("a search that waited behind runaway searches still gets its whole time once it runs, and finds a word on line 1", async (t) => {
		const dir = await createTempDir(t);
		const path = join(dir, "queued.txt");
		await writeFile(path, needleThenRunaway);
		await disposeSearchWorkers();
		const slow = Array.from({ length: MAX_SEARCH_WORKERS }, () => searchFile(path, { ...runaway, timeoutMs: 500 }));
		const queued = searchFile(path, { ...BASE_OPTIONS, pattern: "needle", timeoutMs: 500 });
		const [needle, ...stopped] = await Promise.all([queued, ...slow]);
		for (const result of stopped)
			assert.equal(result.stopped?.cause, "time", "the runaway searches ran out of their own time");
		assert.equal(needle.stopped, null, `the queued search was reported stopped: ${JSON.stringify(needle.stopped)}`);
		assert.deepEqual(
			needle.lines.filter((line) => line.hit).map((line) => line.lineNumber),
			[1],
		);
		assert.equal(needle.totalHits, 1);
		assert.equal(needle.linesSearched, 2001);
		// The runaway searches hold every worker for 500 ms after they begin, which is after this one was asked.
		assert.ok(needle.waitedMs >= 500, `it waited ${needle.waitedMs} ms for a worker`);
	});

	test("a search that no worker begins within maxWaitMs answers that it did not run, while the others still run", async (t) => {
		const { path, others, ended } = await occupyEveryWorker(t, "wait-limit.txt");
		const result = await searchFile(path, { ...BASE_OPTIONS, pattern: "needle", timeoutMs: 500, maxWaitMs: 100 });
		assert.equal(ended(), false, "answered while every worker was still busy");
		assert.deepEqual(result.stopped, { cause: "wait", atLine: 1, elapsedMs: 0, terminated: false, stepLastLine: 1 });
		assert.deepEqual([result.lines, result.totalHits, result.linesSearched], [[], 0, 0]);
		assert.ok(result.waitedMs >= 100, `waited ${result.waitedMs} ms`);
		assert.equal(readSearchWorkerStats().busy, MAX_SEARCH_WORKERS, "the runaway searches keep their workers");
		await disposeSearchWorkers();
		for (const outcome of await others) assert.equal((outcome as Error).name, "SearchEngineError");
		assert.equal((await searchFile(path, { ...BASE_OPTIONS, pattern: "needle" })).totalHits, 1, "a later search runs");
	});

	test("a search aborted while it waits leaves the line at once; shutting down fails the searches still waiting", async (t) => {
		const { path, others, ended } = await occupyEveryWorker(t, "wait-abort.txt");
		const controller = new AbortController();
		const aborted = searchFile(path, { ...BASE_OPTIONS, pattern: "needle", signal: controller.signal });
		const waiting = searchFile(path, { ...BASE_OPTIONS, pattern: "needle" });
		controller.abort();
		await assert.rejects(aborted, { name: "AbortError" });
		assert.equal(ended(), false, "the abort did not wait for a worker");
		const waitingFails = assert.rejects(waiting, { name: "SearchEngineError" });
		await disposeSearchWorkers();
		await waitingFails;
		for (const outcome of await others) assert.equal((outcome as Error).name, "SearchEngineError");
		assert.deepEqual(readSearchWorkerStats().busy, 0);
	});
});

describe("a search that searched every line is complete", () => {
	/** Lines 1, 60 and the last hold the word; the text ends with a newline. */
	function buildText(lineCount: number, longLines: boolean): string {
		const lines = Array.from({ length: lineCount }, (_, index) => {
			const filler = longLines && index % 3 === 0 ? "z".repeat(300) : `line ${index + 1}`;
			return index === 0 || index === 59 || index === lineCount - 1 ? `${filler} needle` : filler;
		});
		return `${lines.join("\n")}\n`;
	}

	test("wherever the deadline passes, the search either stops at a line it has not searched or reports every line (virtual clock: 1 ms a line)", async (t) => {
		const dir = await createTempDir(t);
		const lineCount = 120;
		const variants = [
			{ name: "windows, one chunk", pattern: "needle", chunkBytes: 1 << 20, longLines: false },
			{ name: "windows, 64-byte chunks", pattern: "needle", chunkBytes: 64, longLines: false },
			{ name: "line by line (lookbehind)", pattern: "(?<=e)edle", chunkBytes: 256, longLines: false },
			{ name: "giant lines", pattern: "needle", chunkBytes: 64, longLines: true },
		];
		let runs = 0;
		for (const variant of variants) {
			const path = join(dir, `${variant.name.replace(/\W+/g, "-")}.txt`);
			const text = buildText(lineCount, variant.longLines);
			await writeFile(path, text);
			const hitLines = splitLines(text).flatMap((line, index) => (line.includes("needle") ? [index + 1] : []));
			for (let timeoutMs = 0; timeoutMs <= lineCount + 2; timeoutMs++) {
				const result: SearchResult = await searchFile(path, {
					...BASE_OPTIONS,
					pattern: variant.pattern,
					timeoutMs,
					virtualMsPerLine: 1,
					chunkBytes: variant.chunkBytes,
					giantLineBytes: 64,
					hardStopGraceMs: 60_000,
				});
				runs++;
				const label = `${variant.name}, deadline after ${timeoutMs} lines: ${JSON.stringify(result.stopped)}`;
				if (timeoutMs >= lineCount || result.stopped === null) {
					assert.equal(result.stopped, null, label);
					assert.equal(result.linesSearched, lineCount, label);
					assert.equal(result.totalHits, hitLines.length, label);
					continue;
				}
				const { atLine } = result.stopped;
				assert.ok(atLine >= 1 && atLine <= lineCount, `stopped at a line of the file: ${label}`);
				assert.ok(atLine - 1 >= timeoutMs, `stopped only once the time was up: ${label}`);
				assert.equal(result.linesSearched, atLine - 1, label);
				assert.equal(result.totalHits, hitLines.filter((line) => line < atLine).length, label);
			}
		}
		t.diagnostic(`${runs} searches, each stopped inside the file or complete`);
	});

	test("a search that searched every line is complete when its answer comes after the hard stop", async (t) => {
		const dir = await createTempDir(t);
		const path = join(dir, "late-answer.txt");
		await writeFile(path, "one\ntwo needle\nthree\n");
		await disposeSearchWorkers();
		// The worker's own clock never runs out (1e-9 ms a line); it searches 3 lines, then holds its
		// answer far past the hard stop (1 s + 0 ms grace), which then terminates it.
		const result = await searchFile(path, {
			...BASE_OPTIONS,
			pattern: "needle",
			timeoutMs: 1000,
			hardStopGraceMs: 0,
			virtualMsPerLine: 1e-9,
			holdBeforeDoneMs: 30_000,
		});
		assert.deepEqual(
			readSearchWorkerStats(),
			{ started: readSearchWorkerStats().started, idle: 0, busy: 0 },
			"the hard stop terminated the worker",
		);
		assert.equal(result.stopped, null, JSON.stringify(result.stopped));
		assert.equal(result.linesSearched, 3);
		assert.equal(result.totalHits, 1);
		assert.deepEqual(
			result.lines.map((line) => [line.lineNumber, line.hit]),
			[
				[1, false],
				[2, true],
				[3, false],
			],
		);
	});
});

describe("a large file", () => {
	// How fast, against grep -n -i -E -C2 on the same entry, is measured by `npm run bench`.
	test("counts and shows the hits of a 32 MiB file exactly", async (t) => {
		const dir = await createTempDir(t);
		const path = join(dir, "big.txt");
		const words = [
			"compiling module",
			"info: request served in 12ms",
			"debug: cache hit for key",
			"warning: deprecated API used",
			"GET /api/v1/items 200",
		];
		const parts: string[] = [];
		let size = 0;
		for (let index = 1; size < 32 * 1024 * 1024; index++) {
			const line =
				index % 997 === 0
					? `error: something failed at step ${index}`
					: `${words[index % 5]} #${index} path=/usr/lib/x86_64/lib${index % 100}.so`;
			parts.push(line);
			size += line.length + 1;
		}
		await writeFile(path, `${parts.join("\n")}\n`);
		const hitLines = Math.floor(parts.length / 997);
		for (const pattern of ["error", "fail(ed|ure)", "zzzz-not-there"]) {
			const result = await searchFile(path, {
				...BASE_OPTIONS,
				pattern,
				budgetChars: 24_000,
				hardStopGraceMs: 60_000,
				timeoutMs: 60_000,
			});
			assert.equal(result.stopped, null, pattern);
			assert.equal(result.linesSearched, parts.length, pattern);
			assert.equal(result.totalHits, pattern === "zzzz-not-there" ? 0 : hitLines, pattern);
			const shown = result.lines.filter((line) => line.hit).map((line) => line.lineNumber);
			if (pattern !== "zzzz-not-there")
				assert.deepEqual(
					shown,
					Array.from({ length: shown.length }, (_, index) => 997 * (index + 1)),
					pattern,
				);
		}
		t.diagnostic(`searched ${size} bytes, ${parts.length} lines, ${hitLines} hit lines`);
	});
});

describe("shutdown", () => {
	test("disposeSearchWorkers ends a running search at once with an error", async (t) => {
		const dir = await createTempDir(t);
		const path = join(dir, "shutdown.txt");
		await writeFile(path, `${"a".repeat(40)}!\n`.repeat(100));
		// Without the shutdown this search would resolve (stopped) after its 60 s.
		const running = searchFile(path, { ...BASE_OPTIONS, pattern: "(a+)+$", timeoutMs: 60_000 });
		const fails = assert.rejects(running, { name: "SearchEngineError" });
		await new Promise((resolve) => setTimeout(resolve, 100));
		await disposeSearchWorkers();
		await fails;
		assert.deepEqual(readSearchWorkerStats().busy, 0);
		const after = await searchFile(path, { ...BASE_OPTIONS, pattern: "!$" });
		assert.equal(after.totalHits, 100);
	});
});

describe("runAt", () => {
	test("never runs before Date.now() reaches its time, though the timer fires early by Date.now()", async (t) => {
		const at = Date.now() + 20;
		// The clock reads 1 ms short of `at` the first time the timer checks it (a timer firing early).
		let reads = 0;
		const realNow = Date.now.bind(Date);
		t.mock.method(Date, "now", () => (reads++ === 1 ? at - 1 : realNow()));
		const ranAt: number[] = [];
		await new Promise<void>((resolve) => {
			runAt(at, () => {
				ranAt.push(realNow());
				resolve();
			});
		});
		assert.equal(ranAt.length, 1);
		assert.ok(ranAt[0] >= at, `ran at ${ranAt[0]}, ${at - ranAt[0]} ms before its time`);
		assert.ok(reads >= 3, "the early check re-armed the timer and looked at the clock again");
	});

	test("cancelled, it never runs", async () => {
		let ran = false;
		const cancel = runAt(Date.now() + 5, () => {
			ran = true;
		});
		cancel();
		await new Promise((resolve) => setTimeout(resolve, 30));
		assert.equal(ran, false);
	});
});
