// One tool result through both stages of the real Pi runtime (createAgentSession, the real bash and
// read tools, extensions loaded from files in order, a scripted faux model): what is bounded, what is
// left alone, what is stored and with which modes, hostile content, and the config and warnings that
// shape it. Each test has its own agent directory.

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import {
	chmodSync,
	closeSync,
	existsSync,
	fstatSync,
	lstatSync,
	mkdirSync,
	openSync,
	readdirSync,
	readFileSync,
	readSync,
	statSync,
	symlinkSync,
	writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { fauxAssistantMessage, fauxToolCall } from "@mariozechner/pi-ai";
import { createDefaultConfig } from "../../src/config/config.js";
import type { EntryMeta } from "../../src/store/index.js";
import { buildMixedOutput } from "../fixtures/ext/robust-tools.js";
import { numberedLog, TINY_PNG } from "../fixtures/ext/tools.js";
import {
	CAPTURE_PATH,
	CUTTER_PATH,
	INDEX_PATH,
	REPO_ROOT,
	resultText,
	runPi,
	TEST_TOOLS_PATH,
	writeConfiguredIndex,
} from "../helpers/pi.js";
import { countEditorLines } from "../helpers/robust-common.js";
import { createTempDir } from "../helpers/tmp.js";

const THRESHOLD = 24_000;
/** The recovery marker under a kept text (what the cut left out may follow it). */
const MARKER = /\n\[pi-overflow id=([0-9a-f]{12}) lines=(\d+) bytes=(\d+)\] [^\n]*(?:\n|$)/;

function storeDir(agentDir: string): string {
	return join(agentDir, "my-pi", "pi-overflow");
}

function mode(path: string): number {
	return lstatSync(path).mode & 0o777;
}

function expectedId(sessionId: string, toolCallId: string): string {
	return createHash("sha1").update(`${sessionId}\0${toolCallId}`).digest("hex").slice(0, 12);
}

/** One assistant turn calling the given tools, then a final answer. */
function script(...calls: ReturnType<typeof fauxToolCall>[]) {
	return [fauxAssistantMessage(calls, { stopReason: "toolUse" }), fauxAssistantMessage("done")];
}

/** The line numbers and texts shown in a view (`  123: text`). */
function shownLines(view: string): Map<number, string> {
	const shown = new Map<number, string>();
	for (const line of view.split("\n")) {
		const match = /^\s*(\d+): (.*)$/.exec(line);
		if (match) shown.set(Number(match[1]), match[2]);
	}
	return shown;
}

function overflowOf(details: unknown): {
	id?: string;
	totalLines: number;
	totalBytes: number;
	truncated: boolean;
	storeError?: string;
} {
	assert.ok(details && typeof details === "object", "details is an object");
	const overflow = (details as { overflow?: unknown }).overflow;
	assert.ok(overflow && typeof overflow === "object", "details.overflow is set");
	return overflow as ReturnType<typeof overflowOf>;
}

test("real bash running seq 1 300000: Pi's cut text is kept, the marker is appended and the whole output is stored", async (t) => {
	const agentDir = await createTempDir(t);
	const run = await runPi({
		agentDir,
		extensionPaths: [CAPTURE_PATH, INDEX_PATH],
		responses: script(fauxToolCall("bash", { command: "seq 1 300000" })),
	});
	assert.deepEqual(run.extensionErrors, []);
	const [result] = run.toolResults;
	const text = resultText(result);
	assert.equal(result.isError, false);
	assert.ok(text.length <= THRESHOLD);
	assert.match(text, /\n300000\n/, "Pi's own tail is kept");
	const marker = MARKER.exec(text);
	assert.ok(marker, "ends with the one-line marker");
	const id = marker[1];
	assert.equal(id, expectedId(run.sessionId, result.toolCallId));
	const overflow = overflowOf(result.details);
	const full = execFileSync("seq", ["1", "300000"], { maxBuffer: 64 * 1024 * 1024 });
	assert.deepEqual(overflow, { id, totalLines: 300000, totalBytes: full.length, truncated: false });
	assert.equal(Number(marker[2]), 300000);
	assert.equal(Number(marker[3]), full.length);
	// Pi's own details survive the merge.
	assert.equal(typeof (result.details as { fullOutputPath?: unknown }).fullOutputPath, "string");
	const dir = storeDir(agentDir);
	assert.ok(readFileSync(join(dir, `${id}.txt`)).equals(full), "stored original is byte-identical");
	const meta = JSON.parse(readFileSync(join(dir, `${id}.json`), "utf8"));
	assert.equal(meta.source, "spill-file");
	assert.equal(meta.toolName, "bash");
	assert.equal(meta.sessionId, run.sessionId);
	assert.equal(mode(join(agentDir, "my-pi")), 0o700);
	assert.equal(mode(dir), 0o700);
	assert.equal(mode(join(dir, `${id}.txt`)), 0o600);
	assert.equal(mode(join(dir, `${id}.json`)), 0o600);
});

test("a custom tool's 200 000-line log becomes a bounded view that shows each error at its true line number and the last line", async (t) => {
	const agentDir = await createTempDir(t);
	const errors = {
		"150": "ERROR db: connection refused to 10.0.0.7:5432",
		"100000": "FATAL worker-3: out of memory while processing batch 100000",
		"200000": "SUMMARY: 2 errors, 199998 batches processed",
	};
	const run = await runPi({
		agentDir,
		extensionPaths: [CAPTURE_PATH, TEST_TOOLS_PATH, INDEX_PATH],
		responses: script(fauxToolCall("big_log", { lines: 200000, errors })),
	});
	const [result] = run.toolResults;
	const view = resultText(result);
	assert.ok(view.length <= THRESHOLD, `view has ${view.length} chars`);
	const shown = shownLines(view);
	for (const [line, text] of Object.entries(errors)) assert.equal(shown.get(Number(line)), text, `line ${line} shown`);
	assert.ok(view.includes(`200000: ${errors["200000"]}`));
	const overflow = overflowOf(result.details);
	assert.equal(overflow.totalLines, 200000);
	assert.equal((result.details as { kind?: string }).kind, "big_log", "the tool's own details are kept");
	assert.match(view, new RegExp(`^\\[pi-overflow id=${overflow.id}\\] big_log output: 200000 lines`));
	assert.match(view, new RegExp(`\\[use overflow_query with id=${overflow.id}`));
	// Every shown line is the stored line with that number.
	const stored = readFileSync(join(storeDir(agentDir), `${overflow.id}.txt`), "utf8").split("\n");
	for (const [line, text] of shown) assert.equal(text, stored[line - 1], `line ${line} matches the store`);
});

test("an extension between the stages that keeps the first 12 000 characters: its text is kept, the marker appended, the uncut original stored", async (t) => {
	const agentDir = await createTempDir(t);
	const run = await runPi({
		agentDir,
		extensionPaths: [CAPTURE_PATH, TEST_TOOLS_PATH, CUTTER_PATH, INDEX_PATH],
		responses: script(fauxToolCall("big_log", { lines: 50000, errors: { "40000": "ERROR hidden by the cutter" } })),
	});
	const [result] = run.toolResults;
	const text = resultText(result);
	const original = numberedLog(50000, { 40000: "ERROR hidden by the cutter" });
	const marker = MARKER.exec(text);
	assert.ok(marker, "marker appended");
	assert.equal(text.slice(0, marker.index), original.slice(0, 12000), "the cutter's text is kept as it was");
	const stored = readFileSync(join(storeDir(agentDir), `${marker[1]}.txt`), "utf8");
	assert.equal(stored, original);
	const meta = JSON.parse(readFileSync(join(storeDir(agentDir), `${marker[1]}.json`), "utf8"));
	assert.equal(meta.source, "stash");
});

test("read of a big file and a 1 000-character result are left untouched, with nothing on disk", async (t) => {
	const agentDir = await createTempDir(t);
	const big = numberedLog(20000, {});
	writeFileSync(join(agentDir, "big.txt"), big);
	const run = await runPi({
		agentDir,
		extensionPaths: [CAPTURE_PATH, TEST_TOOLS_PATH, INDEX_PATH],
		responses: script(fauxToolCall("read", { path: "big.txt" }), fauxToolCall("small", {})),
	});
	const [read, small] = run.toolResults;
	assert.equal(read.toolName, "read");
	assert.doesNotMatch(resultText(read), /pi-overflow/);
	assert.equal((read.details as { overflow?: unknown } | undefined)?.overflow, undefined);
	assert.equal(resultText(small), "x".repeat(1000));
	assert.deepEqual(small.details, { kind: "small" });
	assert.equal(existsSync(join(agentDir, "my-pi")), false, "no store directory was created");
});

test("text and image in one result, two big results in one message: image kept, text bounded, distinct ids, both stored", async (t) => {
	const agentDir = await createTempDir(t);
	const run = await runPi({
		agentDir,
		extensionPaths: [CAPTURE_PATH, TEST_TOOLS_PATH, INDEX_PATH],
		responses: script(
			fauxToolCall("image_log", { lines: 100000 }),
			fauxToolCall("big_log", { lines: 100000, errors: {} }),
		),
	});
	const [image, log] = run.toolResults;
	assert.equal(image.content[0].type, "image");
	assert.equal((image.content[0] as { data: string }).data, TINY_PNG);
	assert.equal(image.content.length, 2);
	assert.ok(resultText(image).length <= THRESHOLD);
	assert.deepEqual((image.details as { keep?: number[] }).keep, [1, 2, 3]);
	const a = overflowOf(image.details).id;
	const b = overflowOf(log.details).id;
	assert.ok(a && b && a !== b, "distinct ids");
	for (const id of [a, b]) {
		assert.ok(existsSync(join(storeDir(agentDir), `${id}.txt`)));
		assert.ok(existsSync(join(storeDir(agentDir), `${id}.json`)));
	}
});

test("a failing bash command with huge output keeps isError and its full output is recoverable", async (t) => {
	const agentDir = await createTempDir(t);
	const command = "seq 1 300000; echo 'error: linker failed'; exit 3";
	const run = await runPi({
		agentDir,
		extensionPaths: [CAPTURE_PATH, INDEX_PATH],
		responses: script(fauxToolCall("bash", { command })),
	});
	const [result] = run.toolResults;
	assert.equal(result.isError, true);
	const text = resultText(result);
	assert.ok(text.length <= THRESHOLD);
	assert.match(text, /Command exited with code 3/);
	const overflow = overflowOf(result.details);
	assert.equal(overflow.totalLines, 300001);
	const stored = readFileSync(join(storeDir(agentDir), `${overflow.id}.txt`), "utf8");
	assert.equal(
		stored,
		`${execFileSync("seq", ["1", "300000"], { maxBuffer: 64 * 1024 * 1024 }).toString()}error: linker failed\n`,
	);
	const meta = JSON.parse(readFileSync(join(storeDir(agentDir), `${overflow.id}.json`), "utf8"));
	assert.equal(meta.source, "spill-file", "found through Pi's notice although details were lost");
});

test("a failing bash command whose notice an earlier layer cut away is still recovered from the stashed original, and Pi's temp file is removed", async (t) => {
	const agentDir = await createTempDir(t);
	// A last line no other test prints: Pi's temp file of this output is recognisable by its end.
	const lastLine = `end of run ${randomBytes(8).toString("hex")}`;
	const command = `seq 1 300000; echo '${lastLine}'; exit 2`;
	const run = await runPi({
		agentDir,
		extensionPaths: [CAPTURE_PATH, CUTTER_PATH, INDEX_PATH],
		responses: script(fauxToolCall("bash", { command })),
	});
	const [result] = run.toolResults;
	assert.equal(result.isError, true);
	const overflow = overflowOf(result.details);
	assert.equal(overflow.totalLines, 300001);
	const meta = JSON.parse(readFileSync(join(storeDir(agentDir), `${overflow.id}.json`), "utf8"));
	assert.equal(meta.source, "spill-file");
	const left = readdirSync(tmpdir()).filter(
		(name) => /^pi-bash-[0-9a-f]+\.log$/.test(name) && readTail(join(tmpdir(), name)).includes(lastLine),
	);
	assert.deepEqual(left, [], "Pi's temp file, which only the stashed original named, is gone");
});

/** The last bytes of a file ("" when it is gone). */
function readTail(path: string): string {
	let fd: number | undefined;
	try {
		fd = openSync(path, "r");
		const size = fstatSync(fd).size;
		const tail = Buffer.alloc(Math.min(200, size));
		readSync(fd, tail, 0, tail.length, size - tail.length);
		return tail.toString("utf8");
	} catch {
		return "";
	} finally {
		if (fd !== undefined) closeSync(fd);
	}
}

test("under umask 000 the store is still 0700 and its files 0600", async (t) => {
	const agentDir = await createTempDir(t);
	const previous = process.umask(0);
	try {
		const run = await runPi({
			agentDir,
			extensionPaths: [CAPTURE_PATH, INDEX_PATH],
			responses: script(fauxToolCall("bash", { command: "seq 1 100000" })),
		});
		const id = overflowOf(run.toolResults[0].details).id;
		assert.equal(mode(join(agentDir, "my-pi")), 0o700);
		assert.equal(mode(storeDir(agentDir)), 0o700);
		assert.equal(mode(join(storeDir(agentDir), `${id}.txt`)), 0o600);
		assert.equal(mode(join(storeDir(agentDir), `${id}.json`)), 0o600);
	} finally {
		process.umask(previous);
	}
});

test("a pre-existing 0777 store directory is tightened to 0700", async (t) => {
	const agentDir = await createTempDir(t);
	mkdirSync(storeDir(agentDir), { recursive: true });
	chmodSync(storeDir(agentDir), 0o777);
	await runPi({
		agentDir,
		extensionPaths: [CAPTURE_PATH, INDEX_PATH],
		responses: script(fauxToolCall("bash", { command: "seq 1 100000" })),
	});
	assert.equal(mode(storeDir(agentDir)), 0o700);
});

test("a symlink in place of the store directory is never followed and the result is still bounded", async (t) => {
	const agentDir = await createTempDir(t);
	const elsewhere = join(agentDir, "elsewhere");
	mkdirSync(elsewhere);
	mkdirSync(join(agentDir, "my-pi"), { mode: 0o700 });
	symlinkSync(elsewhere, storeDir(agentDir));
	const run = await runPi({
		agentDir,
		extensionPaths: [CAPTURE_PATH, TEST_TOOLS_PATH, INDEX_PATH],
		responses: script(fauxToolCall("big_log", { lines: 100000, errors: { "5000": "ERROR visible anyway" } })),
	});
	const [result] = run.toolResults;
	const view = resultText(result);
	assert.ok(view.length <= THRESHOLD);
	assert.match(view, /full output could not be stored/);
	assert.doesNotMatch(view, /id=[0-9a-f]{12}/, "no id is shown, since none would resolve");
	assert.ok(shownLines(view).get(5000)?.includes("ERROR visible anyway"));
	assert.deepEqual(readdirSync(elsewhere), [], "nothing written through the link");
	assert.ok(lstatSync(storeDir(agentDir)).isSymbolicLink());
	assert.ok(overflowOf(result.details).storeError);
});

test("an unusable store location (a file where the directory should be) still yields a bounded result and leaves no file behind", async (t) => {
	const agentDir = await createTempDir(t);
	writeFileSync(join(agentDir, "my-pi"), "not a directory");
	const run = await runPi({
		agentDir,
		extensionPaths: [CAPTURE_PATH, TEST_TOOLS_PATH, INDEX_PATH],
		responses: script(fauxToolCall("big_log", { lines: 100000, errors: {} })),
	});
	const view = resultText(run.toolResults[0]);
	assert.ok(view.length <= THRESHOLD);
	assert.match(view, /full output could not be stored/);
	assert.equal(readFileSync(join(agentDir, "my-pi"), "utf8"), "not a directory");
	assert.deepEqual(
		readdirSync(agentDir).filter((name) => name.endsWith(".tmp")),
		[],
	);
});

test("session_start housekeeping removes expired entries and evicts the oldest until the store is under quota", async (t) => {
	const agentDir = await createTempDir(t);
	const dir = storeDir(agentDir);
	mkdirSync(dir, { recursive: true, mode: 0o700 });
	const day = 24 * 60 * 60 * 1000;
	const now = Date.now();
	const entry = (id: string, ageMs: number, bytes: number) => {
		writeFileSync(join(dir, `${id}.txt`), "x".repeat(bytes), { mode: 0o600 });
		const meta = {
			id,
			sessionId: "other",
			toolCallId: id,
			toolName: "bash",
			createdAt: new Date(now - ageMs).toISOString(),
			totalLines: 1,
			totalBytes: bytes,
			originalBytes: bytes,
			truncated: false,
			source: "current",
		};
		writeFileSync(join(dir, `${id}.json`), JSON.stringify(meta), { mode: 0o600 });
	};
	const mib = 1024 * 1024;
	entry("aaaaaaaaaaa1", 10 * day, 1000); // expired (retention 7 days)
	entry("aaaaaaaaaaa2", 3 * day, mib); // oldest within retention: evicted for quota
	entry("aaaaaaaaaaa3", 2 * day, mib); // evicted for quota
	entry("aaaaaaaaaaa4", 1 * day, mib); // kept
	const configured = writeConfiguredIndex(agentDir, JSON.stringify({ maxEntryBytes: mib, maxStoreBytes: 1.5 * mib }));
	await runPi({
		agentDir,
		extensionPaths: [CAPTURE_PATH, configured],
		responses: [fauxAssistantMessage("nothing to do")],
	});
	// Housekeeping runs after session_start has returned: wait for it (generously; this times nothing).
	const deadline = Date.now() + 60_000;
	while (existsSync(join(dir, "aaaaaaaaaaa3.txt")) && Date.now() < deadline)
		await new Promise((resolve) => setTimeout(resolve, 20));
	const names = readdirSync(dir).sort();
	assert.deepEqual(names, ["aaaaaaaaaaa4.json", "aaaaaaaaaaa4.txt"]);
});

test("a custom thresholdChars and signalPattern are honoured, and invalid fields fall back with one warning", async (t) => {
	const agentDir = await createTempDir(t);
	const configured = writeConfiguredIndex(
		agentDir,
		`{ // custom settings
			"thresholdChars": 5000,
			"signalPattern": "CUSTOMSIG",
			"headLines": "many",
			"tailLines": -3,
		}`,
	);
	const warnings: string[] = [];
	const write = process.stderr.write.bind(process.stderr);
	process.stderr.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
		if (String(chunk).includes("pi-overflow")) warnings.push(String(chunk));
		return (write as (...args: unknown[]) => boolean)(chunk, ...rest);
	}) as typeof process.stderr.write;
	try {
		const run = await runPi({
			agentDir,
			extensionPaths: [CAPTURE_PATH, TEST_TOOLS_PATH, configured],
			responses: script(
				fauxToolCall("big_log", {
					lines: 30000,
					errors: { "15000": "CUSTOMSIG reached", "16000": "ERROR not a signal here" },
				}),
			),
		});
		const view = resultText(run.toolResults[0]);
		assert.ok(view.length <= 5000, `view has ${view.length} chars`);
		assert.equal(shownLines(view).get(15000), "CUSTOMSIG reached");
		assert.equal(shownLines(view).has(16000), false, "the default pattern is not used");
		// The default 60 head lines (headLines fell back) — as many as fit in 5000 chars.
		assert.ok(shownLines(view).has(1));
		assert.equal(warnings.length, 1, "one warning for the config");
		assert.match(warnings[0], /headLines/);
		assert.match(warnings[0], /tailLines/);
	} finally {
		process.stderr.write = write;
	}
});

test("without capture.ts the user is warned once and results are still bounded", async (t) => {
	const agentDir = await createTempDir(t);
	const warnings: string[] = [];
	const write = process.stderr.write.bind(process.stderr);
	process.stderr.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
		if (String(chunk).includes("capture.ts")) warnings.push(String(chunk));
		return (write as (...args: unknown[]) => boolean)(chunk, ...rest);
	}) as typeof process.stderr.write;
	try {
		// A fresh global: the stash of earlier tests in this process is removed.
		delete (globalThis as Record<symbol, unknown>)[Symbol.for("my-pi.pi-overflow.stash.v1")];
		delete (globalThis as Record<symbol, unknown>)[Symbol.for("my-pi.pi-overflow.warned.v1")];
		const run = await runPi({
			agentDir,
			extensionPaths: [TEST_TOOLS_PATH, INDEX_PATH],
			responses: script(
				fauxToolCall("big_log", { lines: 50000, errors: {} }),
				fauxToolCall("big_log", { lines: 50000, errors: {} }),
			),
		});
		assert.equal(warnings.length, 1);
		for (const result of run.toolResults) assert.ok(resultText(result).length <= THRESHOLD);
		assert.deepEqual(run.extensionErrors, []);
	} finally {
		process.stderr.write = write;
	}
	assert.ok(statSync(storeDir(agentDir)).isDirectory());
});

// Hostile content through the real Pi runtime (the unit cases are test/unit/robust-content.test.ts).

const ROBUST_TOOLS_PATH = join(REPO_ROOT, "test", "fixtures", "ext", "robust-tools.ts");
const EMOJI = "😀"; // F0 9F 98 80

test("through the real Pi runtime: a tool returning CRLF, NUL, ANSI, RTL and split emoji lines is bounded and stored byte for byte", async (t) => {
	const agentDir = await createTempDir(t);
	const run = await runPi({
		agentDir,
		extensionPaths: [CAPTURE_PATH, ROBUST_TOOLS_PATH, INDEX_PATH],
		responses: [
			fauxAssistantMessage([fauxToolCall("hostile_output", { kind: "mixed", lines: 40_000 })], {
				stopReason: "toolUse",
			}),
			fauxAssistantMessage("done"),
		],
	});
	assert.deepEqual(run.extensionErrors, []);
	const [result] = run.toolResults;
	const text = resultText(result);
	assert.ok(text.length <= createDefaultConfig().thresholdChars);
	const overflow = (result.details as { overflow: { id: string; totalLines: number } }).overflow;
	const stored = readFileSync(join(agentDir, "my-pi", "pi-overflow", `${overflow.id}.txt`));
	const expected = Buffer.from(buildMixedOutput(40_000));
	assert.ok(stored.equals(expected), "stored byte for byte");
	assert.equal(overflow.totalLines, countEditorLines(expected));
	assert.ok(!text.includes("\x1b") && !text.includes("\0") && !text.includes("\r"));
	assert.ok(text.includes(`40000: end ${EMOJI}`), "the last line, with its emoji, is shown");
});

test("through the real Pi runtime: a spill file with invalid UTF-8 is stored byte for byte and its metadata names the spill file as source", async (t) => {
	const agentDir = await createTempDir(t);
	const spillPath = join(agentDir, "hostile-spill.log");
	const run = await runPi({
		agentDir,
		extensionPaths: [CAPTURE_PATH, ROBUST_TOOLS_PATH, INDEX_PATH],
		responses: [
			fauxAssistantMessage([fauxToolCall("hostile_output", { kind: "spill", lines: 30_000, path: spillPath })], {
				stopReason: "toolUse",
			}),
			fauxAssistantMessage("done"),
		],
	});
	assert.deepEqual(run.extensionErrors, []);
	const [result] = run.toolResults;
	const overflow = (result.details as { overflow: { id: string } }).overflow;
	const root = join(agentDir, "my-pi", "pi-overflow");
	assert.ok(readFileSync(join(root, `${overflow.id}.txt`)).equals(readFileSync(spillPath)), "stored byte for byte");
	const meta = JSON.parse(readFileSync(join(root, `${overflow.id}.json`), "utf8")) as EntryMeta;
	assert.equal(meta.source, "spill-file");
	assert.ok(resultText(result).includes("\ufffd"), "the invalid bytes are shown as U+FFFD");
});
