// Tests for src/intake/pi-bash.ts: Pi's bash notice and status line read from the end of a result's text,
// and the only spill path taken from text (<os tmpdir>/pi-bash-<hex>.log).

import assert from "node:assert/strict";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { describe, test } from "node:test";
import { findPiBashStatus, isPiBashSpillPath, parsePiBashNotice } from "../../src/intake/pi-bash.js";

const spill = join(tmpdir(), "pi-bash-0123456789abcdef.log");
const notices: Array<[string, number]> = [
	[`[Showing lines 1001-3000 of 3000. Full output: ${spill}]`, 3000],
	[`[Showing lines 2501-3000 of 3000 (50.0KB limit). Full output: ${spill}]`, 3000],
	[`[Showing last 50.0KB of line 1 (line is 1.2MB). Full output: ${spill}]`, 1],
];
const statuses = [
	"Command exited with code 3",
	"Command exited with code 127",
	"Command exited with code -1",
	"Command timed out after 5 seconds",
	"Command timed out after 0.5 seconds",
	"Command aborted",
];

describe("parsePiBashNotice", () => {
	test("reads each of Pi's notices, on success and followed by each failure status", () => {
		for (const [notice, totalLines] of notices) {
			assert.deepEqual(parsePiBashNotice(`line 1\nline 2\n\n${notice}`), {
				path: spill,
				totalLines,
				kept: "line 1\nline 2",
			});
			for (const status of statuses) {
				assert.deepEqual(
					parsePiBashNotice(`line 1\nline 2\n\n${notice}\n\n${status}`),
					{ path: spill, totalLines, kept: "line 1\nline 2", status },
					`${notice} / ${status}`,
				);
			}
		}
	});

	test("finds the notice at the end of a long text, and reads an empty kept output", () => {
		assert.equal(
			parsePiBashNotice(`${"x\n".repeat(100_000)}\n${notices[0][0]}\n\nCommand aborted`)?.kept,
			`${"x\n".repeat(99_999)}x`,
		);
		assert.equal(parsePiBashNotice(`\n\n${notices[1][0]}\n\nCommand exited with code 1`)?.kept, "");
		assert.equal(
			parsePiBashNotice(`(no output)\n\n${notices[1][0]}`)?.kept,
			"",
			"Pi's placeholder on success is no output",
		);
	});

	test("refuses a notice that is not at the very end", () => {
		const notice = notices[0][0];
		assert.equal(parsePiBashNotice(`out\n\n${notice}\n\nCommand exited with code 3\n`), undefined);
		assert.equal(parsePiBashNotice(`out\n\n${notice}\n\nCommand exited with code 3\nmore output`), undefined);
		assert.equal(parsePiBashNotice(`out\n\n${notice}\n\nmore output\n\nCommand exited with code 3`), undefined);
		assert.equal(parsePiBashNotice(`out\n\n${notice}\nCommand exited with code 3`), undefined);
		assert.equal(parsePiBashNotice(`out\n\n${notice}\n\nCommand exited with code three`), undefined);
		assert.equal(parsePiBashNotice(`out\n${notice}`), undefined);
	});

	test("answers on a huge text without a notice and on a notice with a huge path", () => {
		assert.equal(parsePiBashNotice(`[Showing ${"[Showing lines ".repeat(1_000_000)}`), undefined);
		assert.equal(
			parsePiBashNotice(`out\n\n[Showing lines 1-2 of 3. Full output: /tmp/${"a".repeat(100_000)}]\n\nCommand aborted`),
			undefined,
		);
	});
});

describe("isPiBashSpillPath", () => {
	test("accepts Pi's own name in the OS temp directory", () => {
		assert.equal(isPiBashSpillPath(spill), true);
	});

	test("refuses paths outside the OS temp directory, other names, relative paths and .. tricks", () => {
		const dir = tmpdir();
		const refused = [
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
			"./pi-bash-0123456789abcdef.log",
			`${dir}/../${basename(dir)}/pi-bash-0123456789abcdef.log`,
			`${dir}/sub/../pi-bash-0123456789abcdef.log`,
			`${dir}/./pi-bash-0123456789abcdef.log`,
			`${dir}//pi-bash-0123456789abcdef.log`,
			`/${dir}/pi-bash-0123456789abcdef.log`,
			`${dir}/pi-bash-${"a".repeat(65)}.log`,
		];
		for (const path of refused) assert.equal(isPiBashSpillPath(path), false, path);
	});
});

describe("findPiBashStatus", () => {
	test("reads the status line that ends a failed result, and nothing else", () => {
		for (const status of statuses) assert.equal(findPiBashStatus(`out\n\n${status}`), status);
		assert.equal(findPiBashStatus("Command exited with code 3"), "Command exited with code 3");
		assert.equal(findPiBashStatus("out\n\nCommand exited with code 3\nmore"), undefined);
		assert.equal(findPiBashStatus("out"), undefined);
	});
});
