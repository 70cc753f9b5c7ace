// Tests for src/source.ts: the capped copy of an original (head + marker + tail, counted inside the
// cap, cut at line and character boundaries), opening a spill file safely (never blocking, never
// following a symlink), and recognising Pi's own notice on a failed bash result.

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdir, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { describe, test } from "node:test";
import { createBashToolDefinition } from "@mariozechner/pi-coding-agent";
import {
	type ByteSource,
	bufferSource,
	findFailedBashSpillPath,
	openSpillFile,
	outputBeforeNotice,
	type PumpResult,
	pumpCapped,
	sourceEndsWith,
} from "../src/source.js";
import { createTempDir } from "./helpers/tmp.js";

const MARKER_LINE = /^\[pi-overflow: (\d+) bytes \((\d+) lines\) left out here; the original was (\d+) bytes, more than maxEntryBytes=(\d+)\]$/;

async function pumpToBuffer(source: ByteSource, maxEntryBytes: number): Promise<{ out: Buffer; result: PumpResult }> {
	const chunks: Buffer[] = [];
	// The pump reuses its buffer once the sink returns: keep a copy.
	const result = await pumpCapped(source, maxEntryBytes, (chunk) => {
		chunks.push(Buffer.from(chunk));
	});
	return { out: Buffer.concat(chunks), result };
}

function countNewlines(bytes: Buffer): number {
	let count = 0;
	for (let at = bytes.indexOf(0x0a); at >= 0; at = bytes.indexOf(0x0a, at + 1)) count++;
	return count;
}

interface CappedCopy {
	head: Buffer;
	tail: Buffer;
	leftOutBytes: number;
	leftOutLines: number;
	/** The marker was put on a line of its own after a head that ended inside a line. */
	markerAfterNewline: boolean;
}

/**
 * Splits a capped copy into head, marker and tail, checking that there is exactly one marker line
 * and that the head and the tail are the original's own first and last bytes.
 */
function assertCappedCopy(original: Buffer, out: Buffer, maxEntryBytes: number): CappedCopy {
	assert.ok(out.length <= maxEntryBytes, `copy is ${out.length} bytes, more than ${maxEntryBytes}`);
	const markerStart = out.indexOf("[pi-overflow: ");
	assert.ok(markerStart >= 0, "the copy has a marker");
	assert.equal(out.indexOf("[pi-overflow: ", markerStart + 1), -1, "exactly one marker");
	const markerEnd = out.indexOf(0x0a, markerStart);
	const marker = MARKER_LINE.exec(out.toString("utf8", markerStart, markerEnd));
	assert.ok(marker, `the marker line: ${out.toString("utf8", markerStart, markerEnd)}`);
	const markerAfterNewline = markerStart > 0 && out[markerStart - 1] === 0x0a && original[markerStart - 1] !== 0x0a;
	const head = out.subarray(0, markerAfterNewline ? markerStart - 1 : markerStart);
	const tail = out.subarray(markerEnd + 1);
	assert.ok(original.subarray(0, head.length).equals(head), "the head is the original's first bytes");
	assert.ok(original.subarray(original.length - tail.length).equals(tail), "the tail is the original's last bytes");
	const leftOut = original.subarray(head.length, original.length - tail.length);
	assert.equal(Number(marker[1]), leftOut.length, "the marker counts the bytes left out");
	assert.equal(Number(marker[2]), countNewlines(leftOut), "the marker counts the lines left out");
	assert.equal(Number(marker[3]), original.length);
	assert.equal(Number(marker[4]), maxEntryBytes);
	return { head, tail, leftOutBytes: leftOut.length, leftOutLines: countNewlines(leftOut), markerAfterNewline };
}

/** Lines of pseudo-random lengths (0 to 300 bytes) with multi-byte characters. */
function makeLines(count: number, seed = 7): Buffer {
	let state = seed;
	const lines: string[] = [];
	for (let i = 0; i < count; i++) {
		state = (state * 1103515245 + 12345) % 2147483648;
		const length = state % 120;
		lines.push(`${i}:${"aé€😀".repeat(Math.ceil(length / 4)).slice(0, length)}`);
	}
	return Buffer.from(`${lines.join("\n")}\n`);
}

describe("pumpCapped", () => {
	test("copies an original at or below the cap byte for byte", async () => {
		const original = Buffer.concat([makeLines(2000), Buffer.from([0xff, 0xfe, 0x00, 0xc3])]);
		for (const cap of [original.length, original.length + 1, original.length * 10]) {
			const { out, result } = await pumpToBuffer(bufferSource(original), cap);
			assert.ok(out.equals(original));
			assert.deepEqual(result, { originalBytes: original.length, storedBytes: original.length, truncated: false });
		}
		const empty = await pumpToBuffer(bufferSource(Buffer.alloc(0)), 1000);
		assert.deepEqual(empty.result, { originalBytes: 0, storedBytes: 0, truncated: false });
	});

	test("keeps the head and the tail, cut at line boundaries, with one marker counted inside the cap", async () => {
		const original = makeLines(20_000);
		for (const cap of [original.length - 1, 100_000, 20_001, 4_096, 1_000]) {
			const { out, result } = await pumpToBuffer(bufferSource(original), cap);
			assert.deepEqual(result, { originalBytes: original.length, storedBytes: out.length, truncated: true });
			const copy = assertCappedCopy(original, out, cap);
			assert.equal(copy.markerAfterNewline, false);
			assert.equal(copy.head.at(-1), 0x0a, "the head ends with a whole line");
			assert.equal(original[original.length - copy.tail.length - 1], 0x0a, "the tail starts with a whole line");
			// About half each: within one line (at most ~300 bytes) of half of the room left by the marker.
			const half = (cap - 200) / 2;
			assert.ok(copy.head.length > half - 400, `head ${copy.head.length} bytes for a cap of ${cap}`);
			assert.ok(copy.tail.length > half - 400, `tail ${copy.tail.length} bytes for a cap of ${cap}`);
			assert.ok(Buffer.from(out.toString("utf8")).equals(out), "the copy is still valid UTF-8");
		}
	});

	test("counts a middle of invalid UTF-8 without newlines exactly, and reads it only once", async () => {
		const middle = Buffer.alloc(3 * 1024 * 1024);
		for (let i = 0; i < middle.length; i++) middle[i] = 0x80 + (i % 0x7f);
		const original = Buffer.concat([Buffer.from("head line\n".repeat(2000)), middle, Buffer.from("\n"), Buffer.from("tail line\n".repeat(2000))]);
		let bytesRead = 0;
		const inner = bufferSource(original);
		const counting: ByteSource = {
			size: inner.size,
			async read(target, position) {
				const read = await inner.read(target, position);
				bytesRead += read;
				return read;
			},
			close: () => inner.close(),
		};
		const cap = 30_000;
		const { out } = await pumpToBuffer(counting, cap);
		const copy = assertCappedCopy(original, out, cap);
		assert.equal(copy.head.toString(), "head line\n".repeat(copy.head.length / 10));
		assert.equal(copy.tail.toString(), "tail line\n".repeat(copy.tail.length / 10));
		assert.equal(copy.leftOutLines, 2000 - copy.head.length / 10 + 1 + 2000 - copy.tail.length / 10);
		assert.ok(bytesRead < original.length + 4 * 65_537 + 16, `read ${bytesRead} bytes of ${original.length}`);
	});

	test("cuts a single giant line without newlines at a UTF-8 character boundary", async () => {
		for (const char of ["é", "€", "😀"]) {
			for (const prefix of ["", "a", "ab", "abc"]) {
				const original = Buffer.from(prefix + char.repeat(5000));
				for (let cap = 1000; cap < 1012; cap++) {
					const { out } = await pumpToBuffer(bufferSource(original), cap);
					const copy = assertCappedCopy(original, out, cap);
					assert.equal(copy.markerAfterNewline, true, "the marker gets a line of its own");
					assert.equal(copy.leftOutLines, 0);
					for (const [name, part] of [
						["head", copy.head],
						["tail", copy.tail],
					] as const) {
						assert.ok(part.length > 0, `${name} is not empty`);
						assert.ok(!part.toString("utf8").includes("\ufffd"), `${name} of ${JSON.stringify(prefix + char)} capped at ${cap} is whole characters`);
					}
				}
			}
		}
	});

	test("keeps the marker inside the cap when its numbers are long", async () => {
		const original = Buffer.from("0123456789abcdef\n".repeat(800_000));
		const cap = 1024 * 1024;
		const { out, result } = await pumpToBuffer(bufferSource(original), cap);
		assert.ok(result.storedBytes <= cap);
		const copy = assertCappedCopy(original, out, cap);
		assert.ok(cap - out.length < 200, `only ${out.length} of ${cap} bytes used`);
		assert.equal(copy.leftOutLines * 17, copy.leftOutBytes);
	});

	test("streams a spill file from disk into the same capped copy as from memory", async (t) => {
		const dir = await createTempDir(t);
		const original = makeLines(30_000, 11);
		const path = join(dir, "spill.log");
		await writeFile(path, original);
		for (const cap of [original.length, 50_000]) {
			const opened = await openSpillFile(path);
			assert.ok(opened.ok);
			const fromFile = await pumpToBuffer(opened.source, cap);
			await opened.source.close();
			const fromMemory = await pumpToBuffer(bufferSource(original), cap);
			assert.ok(fromFile.out.equals(fromMemory.out));
			assert.deepEqual(fromFile.result, fromMemory.result);
		}
	});
});

describe("openSpillFile", () => {
	test("accepts a regular file and reads it at any position", async (t) => {
		const dir = await createTempDir(t);
		const path = join(dir, "pi-bash-0a1b.log");
		await writeFile(path, "hello\nworld\n");
		const opened = await openSpillFile(path);
		assert.ok(opened.ok);
		const { source } = opened;
		assert.equal(source.size, 12);
		const buffer = Buffer.alloc(5);
		assert.equal(await source.read(buffer, 6), 5);
		assert.equal(buffer.toString(), "world");
		assert.equal(await source.read(buffer, 10), 2);
		assert.equal(await source.read(buffer, 12), 0);
		assert.equal(await source.read(buffer, 100), 0);
		await source.close();
	});

	// An open that blocked on the FIFO would never return: the test's timeout turns that into a failure.
	test("refuses a FIFO at once, without blocking on a writer", { timeout: 60_000 }, async (t) => {
		const dir = await createTempDir(t);
		const path = join(dir, "pi-bash-fifo.log");
		execFileSync("mkfifo", [path]);
		const opened = await openSpillFile(path);
		assert.deepEqual(opened, { ok: false, reason: "spill file is not a regular file (a FIFO)" });
	});

	test("refuses a directory and a device", async (t) => {
		const dir = await createTempDir(t);
		assert.deepEqual(await openSpillFile(dir), { ok: false, reason: "spill file is not a regular file (a directory)" });
		assert.deepEqual(await openSpillFile("/dev/zero"), { ok: false, reason: "spill file is not a regular file (a device)" });
	});

	test("refuses a symlink, even to a regular file", async (t) => {
		const dir = await createTempDir(t);
		const target = join(dir, "real.log");
		await writeFile(target, "secret\n");
		const link = join(dir, "pi-bash-link.log");
		await symlink(target, link);
		const opened = await openSpillFile(link);
		assert.equal(opened.ok, false);
		assert.match(opened.ok ? "" : opened.reason, /^spill file ELOOP/);
	});

	test("refuses a missing file with the reason", async (t) => {
		const dir = await createTempDir(t);
		const opened = await openSpillFile(join(dir, "missing.log"));
		assert.equal(opened.ok, false);
		assert.match(opened.ok ? "" : opened.reason, /^spill file ENOENT/);
	});
});

describe("findFailedBashSpillPath", () => {
	const spill = join(tmpdir(), "pi-bash-0123456789abcdef.log");
	const notices = [
		`[Showing lines 1001-3000 of 3000. Full output: ${spill}]`,
		`[Showing lines 2501-3000 of 3000 (50.0KB limit). Full output: ${spill}]`,
		`[Showing last 50.0KB of line 1 (line is 1.2MB). Full output: ${spill}]`,
	];
	const statuses = [
		"Command exited with code 3",
		"Command exited with code 127",
		"Command exited with code -1",
		"Command timed out after 5 seconds",
		"Command timed out after 0.5 seconds",
		"Command aborted",
	];

	test("accepts each of Pi's notices followed by each failure status", () => {
		for (const notice of notices) {
			for (const status of statuses) {
				assert.equal(findFailedBashSpillPath(`line 1\nline 2\n\n${notice}\n\n${status}`), spill, `${notice} / ${status}`);
			}
		}
	});

	test("accepts the notice at the end of a long text, and when no output precedes it", () => {
		assert.equal(findFailedBashSpillPath(`${"x\n".repeat(100_000)}\n${notices[0]}\n\nCommand aborted`), spill);
		assert.equal(findFailedBashSpillPath(`\n\n${notices[2]}\n\nCommand exited with code 1`), spill);
	});

	test("rejects a notice that is not at the very end", () => {
		assert.equal(findFailedBashSpillPath(`out\n\n${notices[0]}\n\nCommand exited with code 3\n`), undefined);
		assert.equal(findFailedBashSpillPath(`out\n\n${notices[0]}\n\nCommand exited with code 3\nmore output`), undefined);
		assert.equal(findFailedBashSpillPath(`out\n\n${notices[0]}\n\nmore output\n\nCommand exited with code 3`), undefined);
		assert.equal(findFailedBashSpillPath(`out\n\n${notices[0]}`), undefined, "a successful command keeps its path in details");
		assert.equal(findFailedBashSpillPath(`out\n\n${notices[0]}\nCommand exited with code 3`), undefined);
		assert.equal(findFailedBashSpillPath(`out\n\n${notices[0]}\n\nCommand exited with code three`), undefined);
	});

	test("rejects paths outside the OS temp directory, other names, relative paths and .. tricks", () => {
		const dir = tmpdir();
		const rejected = [
			"/var/tmp/pi-bash-0123456789abcdef.log",
			"/home/user/pi-bash-0123456789abcdef.log",
			join(dir, "sub", "pi-bash-0123456789abcdef.log"),
			join(dir, "pi-output-0123456789abcdef.log"),
			join(dir, "pi-bash-0123456789abcdeg.log"),
			join(dir, "pi-bash-.log"),
			join(dir, "pi-bash-0123456789ABCDEF.log"),
			join(dir, "pi-bash-0123456789abcdef.log.txt"),
			join(dir, ".pi-bash-0123456789abcdef.log"),
			`${join(dir, "pi-bash-0123456789abcdef.log")} `,
			"pi-bash-0123456789abcdef.log",
			"tmp/pi-bash-0123456789abcdef.log",
			`./pi-bash-0123456789abcdef.log`,
			`${dir}/../${basename(dir)}/pi-bash-0123456789abcdef.log`,
			`${dir}/sub/../pi-bash-0123456789abcdef.log`,
			`${dir}/./pi-bash-0123456789abcdef.log`,
			`${dir}//pi-bash-0123456789abcdef.log`,
			`/${dir}/pi-bash-0123456789abcdef.log`,
			`${dir}/pi-bash-${"a".repeat(65)}.log`,
		];
		for (const path of rejected) {
			const text = `out\n\n[Showing lines 1-2 of 3. Full output: ${path}]\n\nCommand exited with code 1`;
			assert.equal(findFailedBashSpillPath(text), undefined, path);
		}
	});

	test("answers on a huge text without a notice and on a notice with a huge path", () => {
		assert.equal(findFailedBashSpillPath(`[Showing ${"[Showing lines ".repeat(1_000_000)}`), undefined);
		assert.equal(findFailedBashSpillPath(`out\n\n[Showing lines 1-2 of 3. Full output: /tmp/${"a".repeat(100_000)}]\n\nCommand aborted`), undefined);
	});

	test("finds the spill file of Pi's real bash tool when the command fails, times out or is aborted", async (t) => {
		const tool = createBashToolDefinition(process.cwd());
		const cases: Array<{ command: string; timeout?: number; abortAfterMs?: number; status: RegExp }> = [
			{ command: "seq 1 3000; exit 3", status: /Command exited with code 3$/ },
			{ command: "for i in $(seq 1 1000); do printf '%0100d\\n' $i; done; exit 2", status: /Command exited with code 2$/ },
			{ command: "head -c 80000 /dev/zero | tr '\\0' x; exit 1", status: /Command exited with code 1$/ },
			{ command: "seq 1 3000; sleep 10", timeout: 1, status: /Command timed out after 1 seconds$/ },
			{ command: "seq 1 3000; sleep 10", abortAfterMs: 500, status: /Command aborted$/ },
		];
		const forms = new Set<string>();
		for (const { command, timeout, abortAfterMs, status } of cases) {
			const controller = new AbortController();
			const timer = abortAfterMs ? setTimeout(() => controller.abort(), abortAfterMs) : undefined;
			let message = "";
			try {
				await tool.execute("call-1", { command, timeout }, controller.signal, undefined, undefined as never);
				assert.fail(`${command} should have failed`);
			} catch (error) {
				message = (error as Error).message;
			} finally {
				clearTimeout(timer);
			}
			assert.match(message, status);
			const path = findFailedBashSpillPath(message);
			assert.ok(path, `a spill path in: ${message.slice(-300)}`);
			t.after(() => rm(path, { force: true }));
			forms.add(/\[Showing (lines \S+ of \d+(?: \(\S+ limit\))?|last)/.exec(message)?.[1].replace(/[\d-]+/g, "N") ?? "?");
			const opened = await openSpillFile(path);
			assert.ok(opened.ok);
			try {
				assert.equal(await sourceEndsWith(opened.source, outputBeforeNotice(message)), true, "the spill file ends with the output Pi kept");
			} finally {
				await opened.source.close();
			}
			const full = await readFile(path);
			assert.ok(full.length > 0);
		}
		assert.deepEqual([...forms].sort(), ["last", "lines N of N", "lines N of N (N.NKB limit)"]);
	});
});

describe("outputBeforeNotice and sourceEndsWith", () => {
	test("takes the output Pi kept before its notice", () => {
		assert.equal(outputBeforeNotice("a\nb\n\n[Showing lines 1-2 of 9. Full output: /tmp/pi-bash-ab.log]\n\nCommand aborted"), "a\nb");
		assert.equal(outputBeforeNotice("no notice here"), "");
		assert.equal(
			outputBeforeNotice("fake\n\n[Showing lines 1-1 of 1. Full output: /x]\nreal\n\n[Showing lines 1-2 of 9. Full output: /tmp/pi-bash-ab.log]\n\nCommand aborted"),
			"fake\n\n[Showing lines 1-1 of 1. Full output: /x]\nreal",
		);
	});

	test("matches a source's end regardless of trailing newlines, and refuses a different end", async () => {
		const source = bufferSource(Buffer.from(`${"é".repeat(3000)}\nthe end\n\n`));
		assert.equal(await sourceEndsWith(source, "the end"), true);
		assert.equal(await sourceEndsWith(source, `${"é".repeat(200)}\nthe end\n`), true);
		assert.equal(await sourceEndsWith(source, "another end"), false);
		assert.equal(await sourceEndsWith(source, ""), true);
		assert.equal(await sourceEndsWith(bufferSource(Buffer.alloc(0)), "x"), false);
	});

	test("refuses a spill file from another command that ends differently", async (t) => {
		const dir = await createTempDir(t);
		await mkdir(join(dir, "d"));
		const path = join(dir, "d", "other.log");
		await writeFile(path, "secret output of another command\n");
		const opened = await openSpillFile(path);
		assert.ok(opened.ok);
		try {
			assert.equal(await sourceEndsWith(opened.source, "what this command printed"), false);
		} finally {
			await opened.source.close();
		}
	});
});
