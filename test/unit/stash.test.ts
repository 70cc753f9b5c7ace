import assert from "node:assert/strict";
import { test } from "node:test";
import {
	ensureStash,
	findStash,
	joinTextParts,
	STASH_CAPACITY,
	STASH_KEY,
	type Stash,
	stashOriginal,
	takeStashed,
} from "../../src/intake/stash.js";

function freshStash(overrides: Partial<Pick<Stash, "capacity" | "maxTotalChars">> = {}): Stash {
	return {
		version: 1,
		capacity: overrides.capacity ?? STASH_CAPACITY,
		maxTotalChars: overrides.maxTotalChars ?? 1000,
		entries: new Map(),
		totalChars: 0,
	};
}

test("the ring lives under the global Symbol.for key and a second ensureStash reuses it", () => {
	delete (globalThis as Record<symbol, unknown>)[Symbol.for(STASH_KEY)];
	assert.equal(findStash(), undefined);
	const first = ensureStash();
	first.entries.set("keep", { toolCallId: "keep", toolName: "bash", text: "x" });
	const second = ensureStash();
	assert.equal(second, first, "a reload reuses the ring rather than replacing it");
	assert.equal((globalThis as Record<symbol, unknown>)[Symbol.for("my-pi.pi-overflow.stash.v1")], first);
	assert.equal(second.capacity, 64);
});

test("a foreign value under the key is not mistaken for the ring", () => {
	(globalThis as Record<symbol, unknown>)[Symbol.for(STASH_KEY)] = { version: 2 };
	assert.equal(findStash(), undefined);
	const created = ensureStash();
	assert.equal(created.version, 1);
	delete (globalThis as Record<symbol, unknown>)[Symbol.for(STASH_KEY)];
});

test("keeps at most capacity entries, dropping the oldest first", () => {
	const stash = freshStash({ capacity: 64, maxTotalChars: 1_000_000 });
	for (let i = 0; i < 100; i++) stashOriginal(stash, { toolCallId: `call-${i}`, toolName: "bash", text: `text ${i}` });
	assert.equal(stash.entries.size, 64);
	assert.equal(takeStashed(stash, "call-35"), undefined);
	assert.equal(takeStashed(stash, "call-36")?.text, "text 36");
	assert.equal(takeStashed(stash, "call-99")?.text, "text 99");
});

test("keeps the total characters bounded, dropping the oldest entries", () => {
	const stash = freshStash({ maxTotalChars: 100 });
	stashOriginal(stash, { toolCallId: "a", toolName: "t", text: "a".repeat(40) });
	stashOriginal(stash, { toolCallId: "b", toolName: "t", text: "b".repeat(40) });
	stashOriginal(stash, { toolCallId: "c", toolName: "t", text: "c".repeat(40) });
	assert.deepEqual([...stash.entries.keys()], ["b", "c"]);
	assert.equal(stash.totalChars, 80);
});

test("a text larger than the whole budget is kept alone until it is taken", () => {
	const stash = freshStash({ maxTotalChars: 100 });
	stashOriginal(stash, { toolCallId: "a", toolName: "t", text: "a".repeat(40) });
	stashOriginal(stash, { toolCallId: "huge", toolName: "t", text: "h".repeat(500) });
	assert.deepEqual([...stash.entries.keys()], ["huge"]);
	assert.equal(takeStashed(stash, "huge")?.text.length, 500);
	assert.equal(stash.totalChars, 0);
	stashOriginal(stash, { toolCallId: "next", toolName: "t", text: "n" });
	assert.deepEqual([...stash.entries.keys()], ["next"]);
});

test("an original is taken once, and re-stashing the same call replaces it", () => {
	const stash = freshStash();
	stashOriginal(stash, { toolCallId: "a", toolName: "t", text: "first" });
	stashOriginal(stash, { toolCallId: "a", toolName: "t", text: "second!" });
	assert.equal(stash.totalChars, 7);
	assert.equal(takeStashed(stash, "a")?.text, "second!");
	assert.equal(takeStashed(stash, "a"), undefined);
	assert.equal(stash.totalChars, 0);
});

test("joins text parts with a newline and skips images", () => {
	assert.equal(joinTextParts([{ type: "text", text: "a" }, { type: "image" }, { type: "text", text: "b" }]), "a\nb");
	assert.equal(joinTextParts([{ type: "image" }]), "");
});
