// A log line's own text starts after its timestamp (src/lines/stamp.ts): the signal pattern's
// "at the start of a line" and the block rules' indentation are read there.

import assert from "node:assert/strict";
import { test } from "node:test";
import { DEFAULT_CONFIG } from "../../src/config/config.js";
import { stampLength, unstamped } from "../../src/lines/stamp.js";
import { scanText } from "../../src/scan/scan.js";
import { continuesBlock, indentOf, isBlockMessage, isSectionHeader } from "../../src/signals/blocks.js";

test("recognises the timestamps of hosted CI and of loggers, and nothing else", () => {
	const stamped: [string, string][] = [
		["2026-12-02T10:18:20.9133560Z ", "E   assert 1 == 2"],
		["2024-05-01 12:00:00,123 ", "ERROR x"],
		["2024-05-01T12:00:00+02:00 ", "  left: 1"],
		["[10:18:20] ", "FAILED tests/a.py::b"],
		["10:18:20.5 ", "x"],
	];
	for (const [stamp, text] of stamped) {
		assert.equal(stampLength(stamp + text), stamp.length, stamp);
		assert.equal(unstamped(stamp + text), text);
	}
	// GitLab's runner, stamping lines (FF_TIMESTAMPS): its stream column follows the time.
	assert.equal(
		unstamped("2026-12-06T09:30:02.756845Z 00O     |   (7) first ‘free’ here"),
		"    |   (7) first ‘free’ here",
	);
	assert.equal(unstamped("2026-12-06T09:30:02.756845Z 01E+ followed by more"), "followed by more");
	// A program's own log line in a CI job: its timestamp after CI's.
	assert.equal(
		unstamped("2026-12-06T09:30:04.4796252Z 2026-12-01 03:10:03,591 INFO gave up: ledger-sync entered FATAL state"),
		"INFO gave up: ledger-sync entered FATAL state",
	);
	assert.equal(unstamped("[2026-12-06T09:30:02.788Z] [10:18:20] FAILED a"), "FAILED a");
	// A raw log's first line, after the file's byte-order mark.
	assert.equal(unstamped("\ufeff2026-12-02T10:18:20.9133560Z ##[group]Run npm ci"), "##[group]Run npm ci");
	// `gh run view --log`: the job and the step in columns before the timestamp.
	const columns = "build\tRun npm test\t2026-12-02T10:18:20.9133560Z ";
	assert.equal(stampLength(`${columns}FAIL src/a.test.js`), columns.length);
	assert.equal(unstamped(`${columns}  left: 1`), "  left: 1");
	for (const text of [
		"name\tsize\tdate",
		"a\tb\tc\td\t10:18:20 too many columns",
		"2 |     let x = 3;",
		"[ RUN      ] Suite.Case",
		"12:30 is lunch",
		"2026-12-02 release notes",
		"00O not a stamp",
		"",
		"x",
	])
		assert.equal(stampLength(text), 0, text);
});

test("a failure word at the start of a timestamped line is a signal, as it is without the timestamp", () => {
	const lines = Array.from({ length: 400 }, (_, i) => `2026-12-02T10:18:20.${String(i).padStart(7, "0")}Z ok ${i}`);
	lines[199] = "2026-12-02T10:18:20.9133560Z E   assert 580 == 460";
	lines[249] = "2026-12-02T10:18:20.9133560Z FAIL src/cart.test.js";
	const scan = scanText(`${lines.join("\n")}\n`, { ...DEFAULT_CONFIG, headLines: 10, tailLines: 10 });
	assert.deepEqual(
		scan.signals.map((item) => item.lineNumber).sort((a, b) => a - b),
		[200, 250],
	);
});

test("a timestamped line's indentation and continuation forms are read after its timestamp", () => {
	const at = (text: string) => `2026-12-02T10:18:20.9133560Z ${text}`;
	assert.equal(indentOf(at("error[E0308]: mismatched types")), 0);
	assert.equal(indentOf(at("    expected `u32`, found `i64`")), 4);
	assert.equal(indentOf(at("")), -1, "a bare timestamp is a blank line");
	// Routine lines continue a block only in a known continuation form: `  --> file:line` is one.
	assert.ok(continuesBlock(0, at("  --> src/balance.rs:262:9"), "routine"));
	assert.ok(!continuesBlock(0, at("step 7 done"), "routine"));
	assert.ok(isSectionHeader(at("_____ test_refund _____")));
	assert.ok(isBlockMessage(at('  "message": "boom"')));
});
