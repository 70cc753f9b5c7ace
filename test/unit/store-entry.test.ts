// Tests of src/store/entry.ts: ids, the store root, line counting and the metadata schema. Pure:
// no disk, no clock.

import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { test } from "node:test";

import { computeEntryId, countTextLines, isEntryId, parseEntryMeta, resolveStoreRoot } from "../../src/store/index.js";
import { buildMeta } from "../helpers/store-fixtures.js";

test("computes the entry id as the first 12 hex characters of sha1(sessionId NUL toolCallId)", () => {
	const expected = createHash("sha1").update("session-a\0call_1").digest("hex").slice(0, 12);
	assert.equal(computeEntryId("session-a", "call_1"), expected);
	assert.match(expected, /^[0-9a-f]{12}$/);
	assert.notEqual(computeEntryId("ab", "c"), computeEntryId("a", "bc"), "the NUL separator keeps the two parts apart");
});

test("accepts as an id only 12 lowercase hex characters", () => {
	assert.equal(isEntryId("0123456789ab"), true);
	for (const bad of [
		"0123456789AB",
		"0123456789a",
		"0123456789abc",
		"../../etc/passwd",
		"0123456789a/",
		"",
		123,
		null,
		undefined,
	]) {
		assert.equal(isEntryId(bad), false, `rejects ${String(bad)}`);
	}
});

test("resolves the store root to <agentDir>/my-pi/pi-overflow", () => {
	assert.equal(resolveStoreRoot("/home/u/.pi/agent"), "/home/u/.pi/agent/my-pi/pi-overflow");
});

test("counts lines like wc -l plus a last line without a final newline", () => {
	assert.equal(countTextLines(Buffer.from("")), 0);
	assert.equal(countTextLines(Buffer.from("a")), 1);
	assert.equal(countTextLines(Buffer.from("a\n")), 1);
	assert.equal(countTextLines(Buffer.from("a\r\nb")), 2);
	assert.equal(countTextLines(Buffer.from("\n\n")), 2);
});

test("parses valid metadata to a clean copy and drops unknown fields", () => {
	const meta = buildMeta("0123456789ab", Buffer.from("a\nb\n"), { status: "Command exited with code 2" });
	assert.deepEqual(parseEntryMeta({ ...meta, extra: "not ours" }), meta);
	assert.deepEqual(parseEntryMeta(JSON.parse(JSON.stringify(meta))), meta);
});

test("keeps the separator of a CR-separated output's records", () => {
	const meta = { ...buildMeta("0123456789ab", Buffer.from("a\rb\r")), totalLines: 2, separator: "cr" as const };
	assert.deepEqual(parseEntryMeta(JSON.parse(JSON.stringify(meta))), meta);
});

test("reads metadata written before the stored copy had its own counts as describing the stored copy", () => {
	const { storedBytes: _bytes, storedLines: _lines, ...legacy } = buildMeta("0123456789ab", Buffer.from("a\nb\n"));
	assert.deepEqual(parseEntryMeta(legacy), { ...legacy, storedBytes: 4, storedLines: 2 });
});

test("rejects metadata with a bad id, field, source or gap", () => {
	const meta = buildMeta("0123456789ab", Buffer.from("a\nb\n"));
	const gap = { markerLine: 2, firstTailLine: 9, leftOutBytes: 100, signals: [{ line: 5, text: "error", count: 1 }] };
	for (const bad of [
		null,
		[],
		"text",
		{ ...meta, id: "../../etc/pass" },
		{ ...meta, totalLines: -1 },
		{ ...meta, storedBytes: 1.5 },
		{ ...meta, createdAt: "yesterday" },
		{ ...meta, source: "disk" },
		{ ...meta, status: 2 },
		{ ...meta, truncated: true },
		{ ...meta, gap },
		{ ...meta, truncated: true, totalLines: 20, gap: { ...gap, markerLine: 3 } },
		{ ...meta, truncated: true, totalLines: 20, gap: { ...gap, signals: [{ line: 5, text: 5, count: 1 }] } },
		{ ...meta, separator: "lf" },
	]) {
		assert.equal(parseEntryMeta(bad), undefined, JSON.stringify(bad));
	}
	assert.ok(
		parseEntryMeta({ ...meta, truncated: true, totalLines: 20, gap }) !== undefined,
		"a truncated entry with a gap in range is valid",
	);
	assert.ok(
		parseEntryMeta({ ...meta, separator: "cr", truncated: true, totalLines: 20, gap }) !== undefined,
		"so is one of CR-separated records",
	);
});
