import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import type { ContextMessage } from "../../src/context/masking.js";
import { type OwnerMeta, OwnViews, readSessionLineage } from "../../src/context/own-views.js";
import { createTempDir } from "../helpers/tmp.js";

function result(id: string, toolCallId: string): ContextMessage {
	return {
		role: "toolResult",
		toolCallId,
		toolName: "bridge",
		content: [{ type: "text", text: "x" }],
		details: { overflow: { id, totalLines: 1, totalBytes: 1 } },
	};
}

const STORE: Record<string, OwnerMeta> = {
	aaaaaaaaaaaa: { sessionId: "s-parent", toolCallId: "call-a" },
	bbbbbbbbbbbb: { sessionId: "s-other", toolCallId: "call-b" },
};

describe("OwnViews", () => {
	test("a result is own when pi-overflow bounded it here, never on its details alone", async () => {
		const reads: string[] = [];
		const own = new OwnViews(async (id) => {
			reads.push(id);
			return STORE[id];
		});
		own.noteBounded("cccccccccccc", "call-c");
		const bounded = result("cccccccccccc", "call-c");
		const foreign = result("cccccccccccc", "call-x"); // another call naming the same id
		await own.check([bounded, foreign], async () => new Set(["s-now"]));
		assert.equal(own.isOwn(bounded), true);
		assert.equal(own.isOwn(foreign), false, "details naming another result's id");
		assert.deepEqual(reads, ["cccccccccccc"], "the foreign claim is checked against the store");
	});

	test("after a resume or fork: own when the stored entry names the same tool call and a session of the lineage", async () => {
		const own = new OwnViews(async (id) => STORE[id]);
		const forked = result("aaaaaaaaaaaa", "call-a");
		const wrongCall = result("aaaaaaaaaaaa", "call-z");
		const otherSession = result("bbbbbbbbbbbb", "call-b");
		const unknown = result("dddddddddddd", "call-d");
		let lineageReads = 0;
		const lineage = async () => {
			lineageReads++;
			return new Set(["s-now", "s-parent"]);
		};
		await own.check([forked, wrongCall, otherSession, unknown], lineage);
		await own.check([forked, wrongCall, otherSession, unknown], lineage);
		assert.deepEqual(
			[forked, wrongCall, otherSession, unknown].map((message) => own.isOwn(message)),
			[true, false, false, false],
		);
		assert.equal(lineageReads, 1, "verdicts are kept");
		assert.equal(own.isOwn({ role: "toolResult", toolCallId: "call-a", details: {} }), false);
	});

	test("a failing store or lineage read gives no verdict of own, and never throws", async () => {
		const own = new OwnViews(async () => {
			throw new Error("EIO");
		});
		const message = result("aaaaaaaaaaaa", "call-a");
		await own.check([message], async () => {
			throw new Error("EACCES");
		});
		assert.equal(own.isOwn(message), false);
	});
});

describe("readSessionLineage", () => {
	test("follows parentSession headers; a missing or bad file, or a loop, ends the chain", async (t) => {
		const dir = await createTempDir(t);
		const header = (id: string, parent?: string) =>
			`${JSON.stringify({ type: "session", id, ...(parent ? { parentSession: parent } : {}) })}\n{"type":"message"}\n`;
		const root = join(dir, "root.jsonl");
		const middle = join(dir, "middle.jsonl");
		const loop = join(dir, "loop.jsonl");
		writeFileSync(root, header("s-root", join(dir, "missing.jsonl")));
		writeFileSync(middle, header("s-middle", root));
		writeFileSync(loop, header("s-loop", loop));
		writeFileSync(join(dir, "bad.jsonl"), "not json\n");
		assert.deepEqual([...(await readSessionLineage("s-now", middle))], ["s-now", "s-middle", "s-root"]);
		assert.deepEqual([...(await readSessionLineage("s-now", loop))], ["s-now", "s-loop"]);
		assert.deepEqual([...(await readSessionLineage("s-now", join(dir, "bad.jsonl")))], ["s-now"]);
		assert.deepEqual([...(await readSessionLineage("s-now", undefined))], ["s-now"]);
	});
});
