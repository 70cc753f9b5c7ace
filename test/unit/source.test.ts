// Tests for src/io/source.ts: the capped copy of an original (head + marker + tail, counted inside the
// cap, cut at line and character boundaries), opening a spill file safely (never blocking, never
// following a symlink), and recognising Pi's own notice on a failed bash result.

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdir, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, test } from "node:test";
import { createBashToolDefinition } from "@mariozechner/pi-coding-agent";
import { parsePiBashNotice } from "../../src/intake/pi-bash.js";
import {
	type ByteSource,
	bufferSource,
	minSourceBytes,
	openSpillFile,
	type PumpResult,
	pumpCapped,
	SCAN_SLICE_BYTES,
	SCAN_TURN_BYTES,
	sourceEndsWith,
} from "../../src/io/source.js";
import { createTempDir } from "../helpers/tmp.js";

const MARKER_LINE =
	/^\[pi-overflow: (?:lines (\d+)-(\d+)|part of line (\d+)) \((\d+) bytes\) left out of the stored copy; the output was (\d+) bytes, more than maxEntryBytes=(\d+)\]$/;

/** Pumps into a buffer (the stored copy) and a second one (what the scan saw), counting newlines as a scanner would. */
async function pumpToBuffer(
	source: ByteSource,
	maxEntryBytes: number,
): Promise<{ out: Buffer; scanned: Buffer; result: PumpResult }> {
	const chunks: Buffer[] = [];
	const scanned: Buffer[] = [];
	let newlines = 0;
	// The pump reuses its buffer once the sinks return: keep copies.
	const result = await pumpCapped(source, maxEntryBytes, {
		scan(chunk) {
			scanned.push(Buffer.from(chunk));
			newlines += countNewlines(chunk);
		},
		store(chunk) {
			chunks.push(Buffer.from(chunk));
		},
		newlinesSeen: () => newlines,
	});
	return { out: Buffer.concat(chunks), scanned: Buffer.concat(scanned), result };
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
	// The output's own line numbers: the first line left out (in part) and the last.
	// The output's own numbers of the lines left out whole (a line the cut goes through is kept in part).
	const firstLeftOut = countNewlines(head) + (markerAfterNewline ? 2 : 1);
	const lastLeftOut = countNewlines(original.subarray(0, original.length - tail.length));
	if (marker[1] !== undefined) {
		assert.equal(Number(marker[1]), firstLeftOut, "the marker names the first line left out");
		assert.equal(Number(marker[2]), lastLeftOut, "the marker names the last line left out");
	} else {
		assert.equal(Number(marker[3]), firstLeftOut - 1);
		assert.ok(lastLeftOut < firstLeftOut, "no line was left out whole");
	}
	assert.equal(Number(marker[4]), leftOut.length, "the marker counts the bytes left out");
	assert.equal(Number(marker[5]), original.length);
	assert.equal(Number(marker[6]), maxEntryBytes);
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
	test("hands the scan slices and gives the event loop turns while it scans, whatever the clock says", async () => {
		// Issue 22, item 4: a MiB of short signal lines took the scan 250–470 ms in one push. Counted in turns,
		// not time: a macrotask loop counts the loop's turns, and each slice the scan gets records the count.
		const original = makeLines(60_000);
		assert.ok(original.length > 8 * SCAN_TURN_BYTES);
		let loopTurns = 0;
		let running = true;
		const tick = () => {
			loopTurns++;
			if (running) setImmediate(tick);
		};
		setImmediate(tick);
		const seen: number[] = [];
		const scanned: Buffer[] = [];
		try {
			await pumpCapped(bufferSource(original), Number.POSITIVE_INFINITY, {
				scan(chunk) {
					assert.ok(chunk.length <= SCAN_SLICE_BYTES, `a slice of ${chunk.length} bytes`);
					scanned.push(Buffer.from(chunk));
					seen.push(loopTurns);
				},
				store() {},
				newlinesSeen: () => 0,
			});
		} finally {
			running = false;
		}
		assert.ok(Buffer.concat(scanned).equals(original), "every byte, in order");
		const turnsSeen = new Set(seen).size;
		assert.ok(
			turnsSeen >= Math.floor(original.length / SCAN_TURN_BYTES),
			`the loop turned ${turnsSeen} times over ${original.length} bytes`,
		);
	});

	test("copies an original at or below the cap byte for byte", async () => {
		const original = Buffer.concat([makeLines(2000), Buffer.from([0xff, 0xfe, 0x00, 0xc3])]);
		for (const cap of [original.length, original.length + 1, original.length * 10]) {
			const { out, scanned, result } = await pumpToBuffer(bufferSource(original), cap);
			assert.ok(out.equals(original));
			assert.ok(scanned.equals(original));
			assert.deepEqual(result, { originalBytes: original.length, storedBytes: original.length });
		}
		const empty = await pumpToBuffer(bufferSource(Buffer.alloc(0)), 1000);
		assert.deepEqual(empty.result, { originalBytes: 0, storedBytes: 0 });
	});

	test("keeps the head and the tail, cut at line boundaries, with one marker counted inside the cap", async () => {
		const original = makeLines(20_000);
		for (const cap of [original.length - 1, 100_000, 20_001, 4_096, 1_000]) {
			const { out, scanned, result } = await pumpToBuffer(bufferSource(original), cap);
			assert.ok(scanned.equals(original), "the scan sees every byte, the middle too");
			const copy = assertCappedCopy(original, out, cap);
			const headLines = countNewlines(copy.head);
			assert.deepEqual(result, {
				originalBytes: original.length,
				storedBytes: out.length,
				gap: {
					markerLine: headLines + 1,
					firstTailLine: headLines + copy.leftOutLines + 1,
					leftOutBytes: copy.leftOutBytes,
				},
			});
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
		const original = Buffer.concat([
			Buffer.from("head line\n".repeat(2000)),
			middle,
			Buffer.from("\n"),
			Buffer.from("tail line\n".repeat(2000)),
		]);
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
		assert.ok(
			bytesRead < original.length + 4 * 65_537 + 16,
			`read ${bytesRead} bytes of ${original.length}: the middle only once`,
		);
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
						assert.ok(
							!part.toString("utf8").includes("\ufffd"),
							`${name} of ${JSON.stringify(prefix + char)} capped at ${cap} is whole characters`,
						);
					}
				}
			}
		}
	});

	test("cuts CR-separated records at CRs, and numbers the marker among the records when no LF follows", async () => {
		const records = (from: number, count: number) =>
			Array.from({ length: count }, (_, index) => `record ${from + index} copied\r`).join("");
		for (const tail of ["", "last words\n"]) {
			const original = Buffer.from(records(1, 20_000) + tail);
			let newlines = 0;
			let crs = 0;
			let sawLf = false;
			const stored: Buffer[] = [];
			// Halves longer than the 64 KiB a cut searches: the LF at the very end is out of its reach.
			const result = await pumpCapped(bufferSource(original), 300_000, {
				scan(chunk) {
					newlines += countNewlines(chunk);
					sawLf ||= chunk.includes(0x0a);
					for (const byte of chunk) if (byte === 0x0d) crs++;
				},
				store(chunk) {
					stored.push(Buffer.from(chunk));
				},
				newlinesSeen: () => newlines,
				recordsSeen: () => (sawLf ? undefined : crs),
			});
			const out = Buffer.concat(stored).toString("latin1");
			const markerAt = out.indexOf("[pi-overflow: ");
			// In LF lines (an LF in the tail) the head ends inside line 1: the marker gets a line of its own.
			const head = out.slice(0, markerAt - (tail === "" ? 0 : 1));
			assert.equal(out[markerAt - 1] === "\n", tail !== "");
			assert.ok(head.endsWith("copied\r"), "the head ends with a whole record");
			const headRecords = head.split("\r").length - 1;
			const afterMarker = out.slice(out.indexOf("\n", markerAt) + 1);
			assert.match(afterMarker, /^record \d+ copied\r/, "the tail starts with a whole record");
			const firstTail = Number(/^record (\d+)/.exec(afterMarker)![1]);
			const marker = out.slice(markerAt, out.indexOf("\n", markerAt));
			if (tail === "") {
				assert.deepEqual(result.recordGap, {
					markerLine: headRecords + 1,
					firstTailLine: firstTail,
					leftOutBytes: original.length - head.length - afterMarker.length,
				});
				assert.equal(MARKER_LINE.exec(marker)?.[1], String(headRecords + 1), marker);
				assert.equal(MARKER_LINE.exec(marker)?.[2], String(firstTail - 1), marker);
			} else {
				assert.equal(result.recordGap, undefined, "an LF in the tail: not records");
				assert.equal(result.gap?.markerLine, 2, "numbered in LF lines: the head is part of line 1");
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
		assert.deepEqual(await openSpillFile("/dev/zero"), {
			ok: false,
			reason: "spill file is not a regular file (a device)",
		});
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

describe("sourceEndsWith and minSourceBytes", () => {
	test("matches a source's exact end, decoded as Pi decodes it, and refuses a different end", async () => {
		const source = bufferSource(Buffer.from(`${"é".repeat(3000)}\nthe end\n`));
		assert.equal(await sourceEndsWith(source, "the end\n"), true);
		assert.equal(await sourceEndsWith(source, `${"é".repeat(200)}\nthe end\n`), true);
		assert.equal(
			await sourceEndsWith(source, "the end"),
			true,
			"trailing newlines aside: a tool may show the last line without the file's final newline",
		);
		assert.equal(await sourceEndsWith(source, "the end\n\n"), true);
		assert.equal(await sourceEndsWith(bufferSource(Buffer.from(`the end${"\n".repeat(10_000)}`)), "the end"), true);
		assert.equal(await sourceEndsWith(source, "he en"), false, "still the whole end, not a part of it");
		assert.equal(await sourceEndsWith(bufferSource(Buffer.from("\n\n\n")), "x\n"), false);
		assert.equal(await sourceEndsWith(source, "another end\n"), false);
		assert.equal(await sourceEndsWith(source, ""), true);
		assert.equal(await sourceEndsWith(bufferSource(Buffer.alloc(0)), "x"), false);
	});

	test("compares invalid UTF-8 as Pi shows it: one U+FFFD per invalid sequence", async () => {
		const raw = Buffer.concat([Buffer.from("ok\n"), Buffer.alloc(40_000, 0xff), Buffer.from("\nend")]);
		const shown = new TextDecoder().decode(raw).slice(-20_000);
		assert.equal(await sourceEndsWith(bufferSource(raw), shown), true);
		assert.ok(
			raw.length > minSourceBytes(shown),
			"40 KB of invalid bytes are longer than their 20 000 shown characters could be",
		);
		assert.ok(Buffer.byteLength(shown) > raw.length, "while their UTF-8 re-encoding is longer than the original");
	});

	test("refuses a spill file from another command that ends differently", async (t) => {
		const dir = await createTempDir(t);
		await mkdir(join(dir, "d"));
		const path = join(dir, "d", "other.log");
		await writeFile(path, "secret output of another command\n");
		const opened = await openSpillFile(path);
		assert.ok(opened.ok);
		try {
			assert.equal(await sourceEndsWith(opened.source, "what this command printed\n"), false);
		} finally {
			await opened.source.close();
		}
	});

	test("agrees with Pi's real bash tool when the command fails, times out or is aborted", async (t) => {
		const tool = createBashToolDefinition(process.cwd());
		const cases: Array<{ command: string; timeout?: number; abortAfterMs?: number; status: RegExp }> = [
			{ command: "seq 1 3000; exit 3", status: /Command exited with code 3$/ },
			{
				command: "for i in $(seq 1 1000); do printf '%0100d\\n' $i; done; exit 2",
				status: /Command exited with code 2$/,
			},
			{ command: "head -c 80000 /dev/zero | tr '\\0' x; exit 1", status: /Command exited with code 1$/ },
			{ command: "head -c 80000 /dev/zero | tr '\\0' x; echo; exit 1", status: /Command exited with code 1$/ },
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
			const notice = parsePiBashNotice(message);
			assert.ok(notice, `Pi's notice in: ${message.slice(-300)}`);
			t.after(() => rm(notice.path, { force: true }));
			forms.add(
				/\[Showing (lines \S+ of \d+(?: \(\S+ limit\))?|last)/.exec(message)?.[1].replace(/[\d-]+/g, "N") ?? "?",
			);
			const opened = await openSpillFile(notice.path, { uid: process.getuid?.(), notBeforeMs: Date.now() - 60_000 });
			assert.ok(opened.ok, opened.ok ? "" : opened.reason);
			try {
				assert.equal(
					await sourceEndsWith(opened.source, notice.kept),
					true,
					"the spill file ends with exactly the output Pi kept",
				);
			} finally {
				await opened.source.close();
			}
			const full = await readFile(notice.path);
			assert.equal(countNewlines(full) + 1, notice.totalLines, "Pi's line count is the file's newlines + 1");
		}
		assert.deepEqual([...forms].sort(), ["last", "lines N of N", "lines N of N (N.NKB limit)"]);
	});
});
