// The store quota end to end (issue 8, item 6): through the real Pi runtime, with a 2 MiB quota,
// one session's stream of 0.5 MB results. After every result is delivered — observed by the
// scripted model before its next reply — the store is within the quota, other sessions' entries
// went before any of this session's, this session's go oldest first, and the newest answers
// overflow_query.

import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { type Context, fauxAssistantMessage, type FauxResponseStep, fauxToolCall } from "@mariozechner/pi-ai";
import { CAPTURE_PATH, resultText, runPi, TEST_TOOLS_PATH, writeConfiguredIndex } from "../helpers/pi.js";
import { summarizeStore } from "../helpers/robust-common.js";
import { createTempDir } from "../helpers/tmp.js";

const MIB = 1024 * 1024;
const QUOTA_BYTES = 2 * MIB;
const RESULTS = 12;
/** big_log lines of ~67 bytes: about 0.5 MB per result. */
const LINES_PER_RESULT = 7_500;
const NEWEST_MARKER = "ERROR newest result of the stream";

interface StoreSnapshot {
	/** After this many results were delivered. */
	delivered: number;
	ids: Set<string>;
	bytes: number;
	/** Temp files, half entries and other names. */
	stray: string[];
}

function storeDir(agentDir: string): string {
	return join(agentDir, "my-pi", "pi-overflow");
}

function takeSnapshot(dir: string, delivered: number): StoreSnapshot {
	return { delivered, ...summarizeStore(dir) };
}

/** An entry another session left behind, written as the store writes one. */
function writeForeignEntry(dir: string, id: string, createdMs: number, bytes: number): void {
	const text = `${"f".repeat(99)}\n`.repeat(bytes / 100);
	writeFileSync(join(dir, `${id}.txt`), text, { mode: 0o600 });
	const meta = {
		id,
		sessionId: "another-session",
		toolCallId: id,
		toolName: "bash",
		createdAt: new Date(createdMs).toISOString(),
		totalLines: bytes / 100,
		totalBytes: bytes,
		originalBytes: bytes,
		truncated: false,
		source: "current",
	};
	writeFileSync(join(dir, `${id}.json`), JSON.stringify(meta), { mode: 0o600 });
}

/** The ids of the [pi-overflow id=…] lines the model has seen, in order. */
function seenIds(context: Context): string[] {
	const ids: string[] = [];
	for (const message of context.messages) {
		if (message.role !== "toolResult" || message.toolName !== "big_log") continue;
		const text = message.content.map((part) => (part.type === "text" ? part.text : "")).join("\n");
		const id = /\[pi-overflow id=([0-9a-f]{12})/.exec(text)?.[1];
		assert.ok(id, `result ${ids.length + 1} carries an id: ${text.slice(0, 200)}`);
		ids.push(id);
	}
	return ids;
}

test("twelve 0.5 MB results under a 2 MiB quota: after every result the store is within it, other sessions' entries go first, and the newest answers overflow_query", async (t) => {
	const agentDir = await createTempDir(t);
	const dir = storeDir(agentDir);
	mkdirSync(dir, { recursive: true, mode: 0o700 });
	const now = Date.now();
	// Another session's entries: one older than this session, one younger than all of its results
	// (a clock ahead), so "other sessions first" is told apart from "oldest first".
	const otherOld = "0000000000a1";
	const otherYoung = "0000000000a2";
	writeForeignEntry(dir, otherOld, now - 60 * 60 * 1000, 300_000);
	writeForeignEntry(dir, otherYoung, now + 60 * 60 * 1000, 300_000);
	const configured = writeConfiguredIndex(agentDir, JSON.stringify({ maxEntryBytes: MIB, maxStoreBytes: QUOTA_BYTES }));

	const snapshots: StoreSnapshot[] = [];
	let ids: string[] = [];
	const responses: FauxResponseStep[] = [];
	for (let n = 1; n <= RESULTS; n++) {
		const errors = n === RESULTS ? { "3000": NEWEST_MARKER } : {};
		responses.push(() => {
			if (n > 1) snapshots.push(takeSnapshot(dir, n - 1));
			return fauxAssistantMessage([fauxToolCall("big_log", { lines: LINES_PER_RESULT, errors })], {
				stopReason: "toolUse",
			});
		});
	}
	responses.push((context: Context) => {
		snapshots.push(takeSnapshot(dir, RESULTS));
		ids = seenIds(context);
		return fauxAssistantMessage([fauxToolCall("overflow_query", { id: ids[RESULTS - 1], search: "newest result" })], {
			stopReason: "toolUse",
		});
	});
	responses.push(fauxAssistantMessage("done"));

	const run = await runPi({ agentDir, extensionPaths: [CAPTURE_PATH, TEST_TOOLS_PATH, configured], responses });
	assert.deepEqual(run.extensionErrors, []);
	assert.equal(ids.length, RESULTS, "every result was stored and carries its id");
	assert.equal(new Set(ids).size, RESULTS);

	const ordered = ids.map((id, index) => ({ id, index }));
	for (const snapshot of snapshots) {
		const label = `after ${snapshot.delivered} results`;
		assert.deepEqual(snapshot.stray, [], `${label}: no temp file or half entry`);
		assert.ok(
			snapshot.bytes <= QUOTA_BYTES,
			`${label}: the store holds ${snapshot.bytes} bytes, more than the ${QUOTA_BYTES}-byte quota`,
		);
		const written = ordered.slice(0, snapshot.delivered);
		const kept = written.filter(({ id }) => snapshot.ids.has(id));
		assert.ok(snapshot.ids.has(ids[snapshot.delivered - 1]), `${label}: the entry just written is there`);
		// This session's entries go oldest first: what is kept is the newest run of them.
		assert.deepEqual(
			kept,
			written.slice(written.length - kept.length),
			`${label}: this session's oldest entries went first`,
		);
		if (kept.length < written.length) {
			assert.ok(
				!snapshot.ids.has(otherOld) && !snapshot.ids.has(otherYoung),
				`${label}: another session's entries went before this session's`,
			);
		}
	}
	const last = snapshots[snapshots.length - 1];
	assert.ok(!last.ids.has(otherYoung), "the other session's younger entry was evicted too");
	assert.ok(last.ids.size >= 3, `the quota is used, not emptied: ${last.ids.size} entries kept`);

	const answer = run.toolResults.find((result) => result.toolName === "overflow_query");
	assert.ok(answer, "overflow_query was called");
	const text = resultText(answer);
	assert.equal(answer.isError, false, text);
	assert.match(text, new RegExp(`^\\s*3000: ${NEWEST_MARKER}$`, "m"), "the newest entry answers with its own content");
	t.diagnostic(
		`quota e2e: ${snapshots.map((s) => `${s.delivered}:${(s.bytes / 1e6).toFixed(2)}MB/${s.ids.size}`).join(" ")}`,
	);
});
