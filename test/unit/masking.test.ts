// Tests for src/context/masking.ts: the stub's content and size, the decisive lines it keeps, and when views
// are masked (old enough, in batches, rarely, never a result pi-overflow did not store).

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { createDefaultConfig } from "../../src/config/config.js";
import {
	buildMaskStub,
	type ContextMessage,
	findDecisiveLines,
	MASK_MIN_CALLS_BETWEEN,
	maskOldViews,
	MaskingState,
	MAX_STUB_CHARS,
	readStubLines,
	readToolResultView,
} from "../../src/context/masking.js";
import { buildViewFromText } from "../../src/view/compose.js";
import { numberedLog, TINY_PNG } from "../fixtures/ext/tools.js";

const CONFIG = createDefaultConfig();
const OPTIONS = { maskAfterChars: 40_000, maskBatchChars: 20_000, signalRegex: CONFIG.signalRegex };
let counter = 0;

/** A bounded tool result as the session keeps it: a view of `chars` characters with details.overflow. */
function viewResult(chars: number, extra: Record<string, unknown> = {}): ContextMessage {
	const id = (counter++).toString(16).padStart(12, "0");
	const text = `[pi-overflow id=${id}] bash output: 9000 lines, 500000 bytes — showing head, 1 signal line, tail\n${"x".repeat(chars)}`;
	return {
		role: "toolResult",
		toolCallId: `call-${id}`,
		toolName: "bash",
		content: [{ type: "text", text }],
		details: {
			overflow: {
				id,
				totalLines: 9000,
				totalBytes: 500_000,
				truncated: false,
				top: [{ line: 77, text: "error: boom" }],
			},
		},
		isError: false,
		timestamp: 0,
		...extra,
	};
}

/** A state in which each of the first `count` messages was sent in a call of its own, in order. */
function sentOneByOne(messages: readonly ContextMessage[], count = messages.length): MaskingState {
	const state = new MaskingState();
	for (let end = 1; end <= count; end++)
		maskOldViews(messages.slice(0, end), state, { ...OPTIONS, maskAfterChars: 0 }, readToolResultView);
	return state;
}

function plainResult(chars: number): ContextMessage {
	return {
		role: "toolResult",
		toolCallId: `p${counter++}`,
		toolName: "read",
		content: [{ type: "text", text: "y".repeat(chars) }],
		isError: false,
		timestamp: 0,
	};
}

function textOf(message: ContextMessage): string {
	return (message.content as Array<{ type: string; text?: string }>)
		.filter((part) => part.type === "text")
		.map((part) => part.text)
		.join("\n");
}

const isStub = (message: ContextMessage) => /^\[pi-overflow id=[0-9a-f]{12}\][^\n]*masked/.test(textOf(message));

describe("buildMaskStub", () => {
	test("keeps the id, tool, totals, decisive lines with their numbers and the hint, within 1 000 characters", () => {
		const stub = buildMaskStub({
			id: "0123456789ab",
			toolName: "bash",
			totalLines: 300_000,
			totalBytes: 1_988_895,
			lines: [
				{ line: 123_457, text: "error: struct sock has no member" },
				{ line: 300_000, text: "make: *** Error 2" },
			],
		});
		assert.ok(stub.startsWith("[pi-overflow id=0123456789ab] bash output: 300000 lines, 1988895 bytes"));
		assert.match(stub, /^123457: error: struct sock has no member$/m);
		assert.match(stub, /^300000: make: \*\*\* Error 2$/m);
		assert.match(stub, /overflow_query with id=0123456789ab/);
		assert.ok(stub.length <= MAX_STUB_CHARS);
	});

	test("stays within 1 000 characters whatever it is given", () => {
		const huge = "z".repeat(50_000);
		const stub = buildMaskStub({
			id: "0123456789ab",
			toolName: huge,
			totalLines: 1,
			totalBytes: 1,
			lines: [1, 2, 3, 4, 5].map((line) => ({ line, text: huge })),
		});
		assert.ok(stub.length <= MAX_STUB_CHARS, `${stub.length}`);
		assert.equal(stub.split("\n").length, 2 + 3, "at most three lines, each clipped");
	});
});

describe("decisive lines", () => {
	test("a view without `top` gives its signal lines and its last line", async () => {
		const log = numberedLog(20_000, {
			4_000: "ERROR first failure",
			9_000: "ERROR middle failure",
			15_000: "ERROR last failure",
		});
		const view = (await buildViewFromText(log, { ...CONFIG, id: "0123456789ab", toolName: "big_log" })).text;
		const lines = findDecisiveLines(view, CONFIG.signalRegex);
		assert.deepEqual(
			lines.map((line) => line.line),
			[4_000, 15_000, 20_000],
		);
		assert.equal(lines[0].text, "ERROR first failure");
	});

	test("a kept text with a recovery marker gives its last matching lines and its last line, unnumbered", () => {
		const text =
			"ok 1\nnot ok 2 - parser fails\nok 3\n# done\n[pi-overflow id=0123456789ab lines=9 bytes=99] full output stored; overflow_query can search or read it";
		assert.deepEqual(findDecisiveLines(text, CONFIG.signalRegex), [
			{ text: "not ok 2 - parser fails" },
			{ text: "# done" },
		]);
	});

	test("readStubLines takes details.overflow.top only when it is well formed", () => {
		assert.deepEqual(readStubLines([{ line: 3, text: "error" }]), [{ line: 3, text: "error" }]);
		assert.equal(readStubLines([{ line: 0, text: "error" }]), undefined);
		assert.equal(readStubLines([{ line: 3 }]), undefined);
		assert.equal(readStubLines("error"), undefined);
		assert.equal(readStubLines([]), undefined);
		assert.equal(readStubLines(Array.from({ length: 9 }, (_, i) => ({ line: i + 1, text: "e" })))?.length, 3);
	});
});

describe("maskOldViews", () => {
	test("masks a view once 40 000 characters of newer tool output follow it, and keeps images", () => {
		const old = viewResult(20_000, {
			content: [
				{ type: "image", data: TINY_PNG, mimeType: "image/png" },
				{ type: "text", text: "[pi-overflow id=aaaaaaaaaaaa] x\nview" },
			],
			details: { overflow: { id: "aaaaaaaaaaaa", totalLines: 5, totalBytes: 50 } },
		});
		const messages = [viewResult(25_000), old, viewResult(20_000), plainResult(21_000)];
		const result = maskOldViews(messages, sentOneByOne(messages), OPTIONS, readToolResultView);
		assert.equal(result.stepped, true);
		assert.ok(isStub(result.messages[0]), "61 000 newer characters: masked");
		assert.ok(isStub(result.messages[1]), "41 000 newer characters: masked");
		assert.equal(
			(result.messages[1].content as Array<{ type: string }>).filter((part) => part.type === "image").length,
			1,
			"the image stays",
		);
		assert.equal(result.messages[2], messages[2], "21 000 newer characters: whole");
		assert.equal(result.messages[3], messages[3]);
		assert.match(textOf(result.messages[0]), /^\s*77: error: boom$/m, "the top line from details");
	});

	test("masks a `!command` view in its output, and never a `!!` message", () => {
		const bash = (output: string, extra: Record<string, unknown> = {}): ContextMessage => ({
			role: "bashExecution",
			command: "make",
			output,
			exitCode: 2,
			cancelled: false,
			truncated: false,
			timestamp: 1,
			...extra,
		});
		const view = bash("[pi-overflow id=bbbbbbbbbbbb] user_bash output: 9 lines, 99 bytes\n     9: make: *** Error 2");
		const hidden = bash("z".repeat(90_000), { excludeFromContext: true, timestamp: 2 });
		const messages = [view, hidden, plainResult(30_000)];
		const findView = (message: ContextMessage) =>
			message === view
				? { id: "bbbbbbbbbbbb", toolName: "user_bash", totalLines: 9, totalBytes: 99, text: String(message.output) }
				: readToolResultView(message);
		assert.equal(
			maskOldViews(messages, sentOneByOne(messages), { ...OPTIONS, maskBatchChars: 0 }, findView).masked,
			0,
			"`!!` output is not tool output the model saw",
		);
		const more = [...messages, plainResult(10_000)];
		const result = maskOldViews(more, sentOneByOne(more), { ...OPTIONS, maskBatchChars: 0 }, findView);
		assert.match(
			String(result.messages[0].output),
			/^\[pi-overflow id=bbbbbbbbbbbb\] user_bash output: 9 lines, 99 bytes — an older view, masked/,
		);
		assert.match(String(result.messages[0].output), /^\s*9: make: \*\*\* Error 2$/m);
		assert.equal(result.messages[1], hidden);
	});

	test("never touches results pi-overflow did not store", () => {
		const failedStore = viewResult(30_000, {
			details: { overflow: { totalLines: 9, totalBytes: 9, truncated: false, storeError: "EACCES" } },
		});
		const messages = [
			plainResult(30_000),
			failedStore,
			{ role: "user", content: "z".repeat(30_000), timestamp: 0 },
			plainResult(60_000),
		];
		const result = maskOldViews(messages, new MaskingState(), { ...OPTIONS, maskBatchChars: 0 }, readToolResultView);
		assert.deepEqual(result.messages, messages);
		assert.equal(result.masked, 0);
	});

	test("waits until the views due hold maskBatchChars", () => {
		const messages = [viewResult(10_000), viewResult(10_000), plainResult(45_000)];
		const state = sentOneByOne(messages, 2);
		assert.equal(
			maskOldViews([messages[0], messages[2]], state, OPTIONS, readToolResultView).masked,
			0,
			"10 000 due: not yet",
		);
		const later = maskOldViews(messages, state, OPTIONS, readToolResultView);
		assert.equal(later.masked, 2, "20 000 due: both at once");
	});

	test("never masks a view before the model was sent it whole, nor by output sent in the same call", () => {
		const state = new MaskingState();
		const parallel = [viewResult(24_000), viewResult(24_000), viewResult(24_000), plainResult(50_000)];
		const first = maskOldViews(parallel, state, OPTIONS, readToolResultView);
		assert.equal(first.masked, 0, "one turn's results are all new in this call");
		const second = maskOldViews(parallel, state, OPTIONS, readToolResultView);
		assert.equal(second.masked, 0, "no output came after the call that sent them");
		const later = [...parallel, plainResult(40_000)];
		const third = maskOldViews(later, state, OPTIONS, readToolResultView);
		assert.equal(third.masked, 3, "40 000 characters first sent after the views were: all three due");
	});

	test("is off at maskAfterChars 0", () => {
		const messages = [viewResult(50_000), plainResult(500_000)];
		assert.equal(
			maskOldViews(messages, new MaskingState(), { ...OPTIONS, maskAfterChars: 0 }, readToolResultView).masked,
			0,
		);
	});

	test("over a long session at most one call in four rewrites earlier context, and a stub never changes", () => {
		const state = new MaskingState();
		const messages: ContextMessage[] = [];
		const stubs = new Map<string, string>();
		let steps = 0;
		let calls = 0;
		for (let turn = 0; turn < 200; turn++) {
			messages.push(turn % 3 === 0 ? plainResult(3_000) : viewResult(5_000 + ((turn * 7919) % 19_000)));
			const result = maskOldViews(messages, state, { ...OPTIONS, maskBatchChars: 0 }, readToolResultView);
			calls++;
			if (result.stepped) steps++;
			result.messages.forEach((message, index) => {
				if (!isStub(message)) return;
				const key = String(messages[index].toolCallId);
				assert.equal(stubs.get(key) ?? textOf(message), textOf(message), "a stub never changes");
				stubs.set(key, textOf(message));
			});
			// Once masked, always masked.
			for (const key of stubs.keys())
				assert.ok(result.messages.some((message) => message.toolCallId === key && isStub(message)));
		}
		assert.ok(steps > 0 && steps <= Math.ceil(calls / MASK_MIN_CALLS_BETWEEN), `${steps} steps in ${calls} calls`);
		assert.ok(stubs.size > 100, `${stubs.size} views masked`);
	});
});
