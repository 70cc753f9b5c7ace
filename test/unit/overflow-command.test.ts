// The /overflow command's pure parts: the listing clipped to the terminal's width with "…", what is
// gone counted in one line instead of rows, help with one line per subcommand, and completions in
// any case.

import assert from "node:assert/strict";
import { test } from "node:test";
import {
	completeArguments,
	describeRunChange,
	formatHelp,
	formatSessionList,
	type SessionEntryRow,
	type SessionListing,
} from "../../src/surface/overflow-command.js";

const NOW = Date.parse("2026-12-01T12:00:00Z");
const DECISIVE = "120000: src/net/socket.c:88:12: error: struct sock has no member named sk_flags in this build";

function listing(stored: SessionEntryRow[], width: number, gone = { purged: 0, other: 0 }): SessionListing {
	return { stored, gone, older: 0, pathPattern: "/agent/my-pi/pi-overflow/<id>.txt", width };
}

const ROW: SessionEntryRow = {
	id: "9fee71138293",
	toolName: "bash",
	totalLines: 150000,
	totalBytes: 938895,
	at: NOW - 5 * 60_000,
	top: DECISIVE,
};

test("the listing clips the decisive line with an ellipsis at the width it is given, and keeps it whole when it fits", () => {
	for (const width of [78, 60, 118]) {
		const lines = formatSessionList(listing([ROW], width), NOW).split("\n");
		assert.equal(lines[1], "9fee71138293  bash  150000 lines  917 KiB  5m ago");
		const decisive = lines[2]!;
		assert.ok(decisive.length <= width, `${decisive.length} <= ${width}`);
		if (DECISIVE.length + 2 > width) {
			assert.equal(decisive.length, width, "it takes the whole width");
			assert.ok(decisive.endsWith("…"), decisive);
			assert.ok(`  ${DECISIVE}`.startsWith(decisive.slice(0, -1)), decisive);
		} else assert.equal(decisive, `  ${DECISIVE}`);
	}
	assert.equal(
		formatSessionList(listing([ROW], 78), NOW)
			.split("\n")
			.at(-1),
		"Full outputs: /agent/my-pi/pi-overflow/<id>.txt",
	);
});

test("results no longer stored are counted in one line, never listed as rows", () => {
	const text = formatSessionList(listing([ROW], 78, { purged: 2, other: 1 }), NOW);
	assert.match(text, /\n3 earlier results are no longer stored \(2 purged, 1 expired or evicted\)\.\n/);
	assert.equal(text.split("\n").filter((line) => /^[0-9a-f]{12} /.test(line)).length, 1);
	assert.equal(
		formatSessionList(listing([], 78, { purged: 1, other: 0 }), NOW),
		"pi-overflow: nothing stored in this session now: 1 earlier result is no longer stored (1 purged).",
	);
	assert.match(formatSessionList(listing([], 78), NOW), /nothing stored in this session yet/);
});

test("help names every subcommand, one line each, within 78 columns", () => {
	const lines = formatHelp().split("\n");
	assert.deepEqual(
		lines.slice(1).map((line) => /^ {2}(\/overflow(?: \S+)*?) {2,}\S/.exec(line)?.[1]),
		[
			"/overflow",
			"/overflow show <id>",
			"/overflow purge <id>",
			"/overflow purge session",
			"/overflow purge all",
			"/overflow stats",
			"/overflow help",
		],
	);
	for (const line of lines) assert.ok(line.length <= 78, line);
});

test("completions read the typed subcommand and id in any case", () => {
	const ids = ["9fee71138293"];
	const values = (prefix: string) => completeArguments(prefix, ids)?.map((item) => item.value) ?? null;
	assert.deepEqual(values("P"), ["purge "]);
	assert.deepEqual(values("PURGE a"), ["purge all"]);
	assert.deepEqual(values("show 9FE"), ["show 9fee71138293"]);
	assert.equal(values("stats "), null);
	assert.equal(values("x"), null);
});

test("runs of one command are listed together under the newest, each with what changed since the run before", () => {
	const run = (id: string, minutes: number, change?: string): SessionEntryRow => ({
		...ROW,
		id,
		totalLines: 2000 + minutes,
		at: NOW - minutes * 60_000,
		run: { key: "k", label: "node --test", ...(change ? { change } : {}) },
	});
	const other = { ...ROW, id: "0123456789ab", at: NOW - 90_000, run: { key: "other", label: "make" } };
	const stored = [
		run("aaaaaaaaaaaa", 0, "1 gone, 2 still there"),
		other,
		run("bbbbbbbbbbbb", 2, "nothing changed"),
		run("cccccccccccc", 3),
	];
	const lines = formatSessionList(listing(stored, 100), NOW).split("\n");
	assert.deepEqual(lines.slice(1, 8), [
		"3 runs of node --test, newest first:",
		"  aaaaaaaaaaaa  bash  2000 lines  917 KiB  just now  1 gone, 2 still there",
		"  bbbbbbbbbbbb  bash  2002 lines  917 KiB  2m ago  nothing changed",
		"  cccccccccccc  bash  2003 lines  917 KiB  3m ago",
		`    ${DECISIVE}`,
		"0123456789ab  bash  150000 lines  917 KiB  1m ago",
		`  ${DECISIVE}`,
	]);
	assert.equal(describeRunChange({ new: 1, gone: 0, still: 4 }), "1 new, 4 still there");
	assert.equal(describeRunChange({ new: 0, gone: 3, still: 0 }), "3 gone");
	assert.equal(describeRunChange({ new: 0, gone: 0, still: 4 }), "nothing changed");
	assert.equal(describeRunChange({ new: 0, gone: 0, still: 0 }), "nothing changed");
	assert.equal(describeRunChange(undefined), undefined);
});
