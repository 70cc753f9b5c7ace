// The below-threshold path (issue 13: "below-threshold results still cost ≤ 2 µs and no I/O"):
// turns of small results through capture.ts and stage 2's handlers, as Pi calls them, leave every
// result as it was, take every stashed original, and make no file-system call and no hash (every
// function of node:fs, node:fs/promises and node:crypto's hashes is counted while they run). A
// large result in the same setting is still bounded, and is counted: the counting itself is checked.

import assert from "node:assert/strict";
import crypto from "node:crypto";
import fs from "node:fs";
import { syncBuiltinESMExports } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test, type TestContext } from "node:test";
import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";
import capture from "../../capture.js";
import { createDefaultConfig } from "../../src/config/config.js";
import { createOverflowExtension } from "../../src/extension.js";
import { parsePiBashNotice } from "../../src/intake/pi-bash.js";
import { prewarmSignalSearch } from "../../src/bound/prewarm.js";
import { ensureStash, joinTextParts, measureTextParts } from "../../src/intake/stash.js";
import { createFakePi } from "../helpers/robust-pi.js";
import { createTempDir } from "../helpers/tmp.js";

type Handler = (event: unknown, ctx: unknown) => unknown;

/** The handlers an extension registers, from a stand-in for Pi's ExtensionAPI. */
function recordHandlers(install: (pi: ExtensionAPI) => void): Map<string, Handler[]> {
	const fake = createFakePi();
	install(fake.api);
	return fake.handlers;
}

/** Pi's order: every extension's handlers of an event, capture.ts first; the results returned. */
async function emit(
	chain: Array<Map<string, Handler[]>>,
	name: string,
	event: object,
	ctx: object,
): Promise<unknown[]> {
	const results: unknown[] = [];
	for (const handlers of chain) for (const handler of handlers.get(name) ?? []) results.push(await handler(event, ctx));
	return results;
}

/** The calls this repository's code made to node:fs, node:fs/promises and node:crypto, by name ("fs.openSync"). */
interface Calls {
	names: string[];
}

/**
 * Wraps every function of node:fs, fs.promises and crypto's hash makers with a counter (ESM named
 * imports follow through syncBuiltinESMExports); calls from outside this repository (the test
 * runner) are not counted. Restored when the test ends.
 */
function countBuiltinCalls(t: TestContext): Calls {
	const calls: Calls = { names: [] };
	const root = join(import.meta.dirname, "..", "..");
	const restore: Array<() => void> = [];
	const wrap = (owner: Record<string, unknown>, label: string, key: string) => {
		const original = owner[key];
		if (typeof original !== "function" || /^[A-Z]/.test(key)) return; // classes (ReadStream, Stats…) are left as they are
		owner[key] = function (this: unknown, ...args: unknown[]) {
			const stack = new Error().stack ?? "";
			const ours = stack
				.split("\n")
				.slice(2)
				.some((frame) => frame.includes(root) && !frame.includes("/node_modules/") && !frame.includes("/test/"));
			if (ours) calls.names.push(`${label}.${key}`);
			return (original as (...a: unknown[]) => unknown).apply(this, args);
		};
		restore.push(() => {
			owner[key] = original;
		});
	};
	const fsObject = fs as unknown as Record<string, unknown>;
	for (const key of Object.keys(fsObject)) if (key !== "promises") wrap(fsObject, "fs", key);
	for (const key of Object.keys(fs.promises))
		wrap(fs.promises as unknown as Record<string, unknown>, "fs.promises", key);
	for (const key of ["createHash", "createHmac", "hash", "randomBytes", "randomUUID"])
		wrap(crypto as unknown as Record<string, unknown>, "crypto", key);
	syncBuiltinESMExports();
	t.after(() => {
		for (const undo of restore) undo();
		syncBuiltinESMExports();
	});
	return calls;
}

const LINE = "log line with some words in it\n";
const SPILL = join(tmpdir(), "pi-bash-0123456789abcdef.log");

/** Below the default threshold, every shape the fast exit must see through (none names a longer original). */
function smallResults(): Array<Record<string, unknown>> {
	const result = (toolName: string, content: unknown[], extra: Record<string, unknown> = {}) => ({
		type: "tool_result",
		toolName,
		input: { command: `${toolName} ${content.length}` },
		content,
		details: undefined,
		isError: false,
		...extra,
	});
	return [
		...Array.from({ length: 8 }, (_, i) =>
			result("bash", [{ type: "text", text: LINE.repeat(Math.floor((1024 + i * 2_500) / LINE.length)) }]),
		),
		result("bash", [{ type: "text", text: `[${"1, ".repeat(3_000)}1]` }]), // ends with "]": the notice pattern runs, and finds nothing
		result("bash", [{ type: "text", text: `${LINE.repeat(50)}\n\nCommand exited with code 1` }], { isError: true }),
		result(
			"bash",
			[
				{
					type: "text",
					text: `${LINE.repeat(50)}[Showing lines 1-2 of 3. Full output: ${SPILL}]\n\nCommand exited with code 2`,
				},
			],
			{ isError: true },
		), // not Pi's notice: no blank line before it
		result("bash", [{ type: "text", text: `\n\n[Showing lines 1-2 of 3. Full output: ${SPILL}]\nmore output` }]),
		result("bash", [{ type: "text", text: "" }]),
		result("bash", []),
		result("grep", [
			{ type: "text", text: LINE.repeat(200) },
			{ type: "image", data: "aGVsbG8=", mimeType: "image/png" },
			{ type: "text", text: LINE.repeat(300) },
		]),
		result("find", [{ type: "text", text: LINE.repeat(100) }], {
			details: { truncation: { truncated: false }, note: "kept" },
		}),
		result("find", [{ type: "text", text: LINE.repeat(100) }], { details: "a string" }),
		result("read", [{ type: "text", text: LINE.repeat(400) }], { details: { truncation: undefined } }),
		result("bash", [{ type: "text", text: LINE.repeat(100) }], { parentToolCallId: "outer" }),
		result("bash", [{ type: "text", text: "x".repeat(23_999) }]), // one short of the threshold (24 000)
	];
}

test("turns of below-threshold results are left as they are, take their stashed originals, and make no file-system call and no hash", async (t) => {
	const dir = await createTempDir(t);
	const config = createDefaultConfig();
	assert.equal(config.thresholdChars, 24_000, "the last small result sits one short of this");
	let housekept: () => void = () => {};
	const housekeeping = new Promise<void>((resolve) => {
		housekept = resolve;
	});
	const chain = [
		recordHandlers(capture),
		recordHandlers(
			createOverflowExtension({
				config: { config, problems: [] },
				storeRoot: join(dir, "store"),
				onHousekeeping: () => housekept(),
			}),
		),
	];
	const ctx = {
		hasUI: false,
		sessionManager: { getSessionId: () => "small-session", getEntries: () => [] },
		getContextUsage: () => ({ contextWindow: 2_000_000, tokens: 100_000, percent: 5 }),
	};
	await emit(chain, "session_start", { type: "session_start", reason: "startup" }, ctx);
	// Start-up's own I/O (housekeeping, the prewarm's read of the .wasm) ends before the counting starts.
	await housekeeping;
	await prewarmSignalSearch(config.signalRegex);
	const stash = ensureStash();
	const calls = countBuiltinCalls(t);

	const results = smallResults();
	let call = 0;
	for (let turn = 0; turn < 3; turn++) {
		// The same calls each turn: a re-run after a turn that bounded nothing is not compared (no hash).
		const ids = results.map(() => `turn${turn}-call${call++}`);
		const assistant = {
			role: "assistant",
			content: results.map((r, i) => ({ type: "toolCall", id: ids[i], name: r.toolName, arguments: r.input })),
		};
		await emit(chain, "message_end", { type: "message_end", message: assistant }, ctx);
		for (let i = 0; i < results.length; i++)
			await emit(
				chain,
				"tool_call",
				{ type: "tool_call", toolName: results[i].toolName, toolCallId: ids[i], input: results[i].input },
				ctx,
			);
		for (let i = 0; i < results.length; i++) {
			const event = { ...results[i], toolCallId: ids[i] };
			const before = structuredClone(event);
			const returned = await emit(chain, "tool_result", event, ctx);
			assert.deepEqual(returned, [undefined, undefined], `result ${i} of turn ${turn} is left as it is`);
			assert.deepEqual(event, before, `result ${i} of turn ${turn}: the event is not touched`);
			assert.equal(stash.entries.size, 0, `result ${i} of turn ${turn}: its stashed original was taken`);
			assert.equal(stash.totalChars, 0);
		}
		await emit(
			chain,
			"message_end",
			{ type: "message_end", message: { role: "assistant", content: [{ type: "text", text: "done" }] } },
			ctx,
		);
	}
	assert.deepEqual(calls.names.slice(), [], "no file-system call and no hash on the below-threshold path");

	// The same setting bounds a large result, and the counting sees what that costs.
	const bigId = "turn3-big";
	await emit(
		chain,
		"message_end",
		{
			type: "message_end",
			message: {
				role: "assistant",
				content: [{ type: "toolCall", id: bigId, name: "bash", arguments: { command: "big" } }],
			},
		},
		ctx,
	);
	await emit(
		chain,
		"tool_call",
		{ type: "tool_call", toolName: "bash", toolCallId: bigId, input: { command: "big" } },
		ctx,
	);
	const big = {
		type: "tool_result",
		toolName: "bash",
		toolCallId: bigId,
		input: { command: "big" },
		content: [{ type: "text", text: LINE.repeat(1_000) }],
		details: undefined,
		isError: false,
	};
	const [, patch] = await emit(chain, "tool_result", big, ctx);
	assert.match(
		String((patch as { details?: { overflow?: { id?: unknown } } } | undefined)?.details?.overflow?.id),
		/^[0-9a-f]{12,}$/,
		"a large result is still bounded and stored",
	);
	assert.ok(
		calls.names.some((name) => name.startsWith("fs")),
		`the store's writes are counted: ${calls.names.join(", ")}`,
	);
	assert.ok(calls.names.includes("crypto.createHash"), "telemetry's hash of a bounded call is counted");
});

test("measureTextParts is the length of joinTextParts, without joining", () => {
	const contents: Array<Array<{ type: string; text?: unknown }>> = [
		[],
		[{ type: "text", text: "" }],
		[{ type: "text", text: "abc" }],
		[{ type: "text", text: "abc" }, { type: "image" }, { type: "text", text: "" }, { type: "text", text: "de\nf" }],
		[{ type: "image" }, { type: "text", text: 42 }, { type: "text", text: "😀" }],
		[{ type: "text" }, { type: "text", text: "x".repeat(5_000) }, { type: "text", text: "y" }],
	];
	for (const content of contents)
		assert.equal(measureTextParts(content), joinTextParts(content).length, JSON.stringify(content).slice(0, 80));
});

test("Pi's notice is read whatever the text ends with: the quick look at the end never hides one", () => {
	const notice = `[Showing lines 1-2 of 3. Full output: ${SPILL}]`;
	for (const status of [
		"",
		"Command exited with code 0",
		"Command exited with code -9",
		"Command timed out after 12345678901234567890 seconds",
		"Command aborted",
	]) {
		const text = `out\n\n${notice}${status === "" ? "" : `\n\n${status}`}`;
		assert.equal(parsePiBashNotice(text)?.path, SPILL, JSON.stringify(status));
		assert.equal(parsePiBashNotice(`${text}\n`), undefined, `${JSON.stringify(status)} then a newline`);
	}
	assert.equal(parsePiBashNotice(`${notice}]`), undefined);
});
