// Context economy end to end, through the real Pi runtime: what the scripted provider is sent is
// asserted on directly. Old views are masked to stubs that still answer overflow_query, a small
// window gets small views, parallel results share one budget, the user's `!command` output is
// bounded without Pi's temp path, `!!` output stays out, and after compaction, resume and fork every
// id the model still sees answers.

import assert from "node:assert/strict";
import { rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { type Context, fauxAssistantMessage, fauxToolCall, type ToolResultMessage } from "@mariozechner/pi-ai";
import { SessionManager } from "@mariozechner/pi-coding-agent";
import { MAX_STUB_CHARS } from "../../src/context/masking.js";
import { CAPTURE_PATH, INDEX_PATH, TEST_TOOLS_PATH, writeConfiguredIndex } from "../helpers/pi.js";
import { contextText, messageText, openPiSession, type PiSession } from "../helpers/pi-session.js";
import { createTempDir } from "../helpers/tmp.js";

const EXTENSIONS = [CAPTURE_PATH, TEST_TOOLS_PATH, INDEX_PATH];
const ID_PATTERN = /\[pi-overflow id=([0-9a-f]{12})/g;

const toolUse = (...calls: ReturnType<typeof fauxToolCall>[]) => fauxAssistantMessage(calls, { stopReason: "toolUse" });
const bigLog = (errorLine: number, text: string, lines = 20_000) =>
	fauxToolCall("big_log", { lines, errors: { [errorLine]: text } });

function toolResults(context: Context): ToolResultMessage[] {
	return context.messages.filter((message): message is ToolResultMessage => message.role === "toolResult");
}

/** Every pi-overflow id in what the provider was sent, in order of first appearance. */
function idsSeen(context: Context): string[] {
	return [...new Set([...contextText(context).matchAll(ID_PATTERN)].map((match) => match[1]))];
}

/** The overflow_query answers of the last prompt, by the id each asked for. */
function queryAnswers(pi: PiSession): Map<string, ToolResultMessage> {
	const answers = new Map<string, ToolResultMessage>();
	const messages = pi.session.messages;
	for (const message of messages) {
		if (message.role !== "assistant") continue;
		for (const part of message.content) {
			if (part.type !== "toolCall" || part.name !== "overflow_query") continue;
			const result = messages.find((m): m is ToolResultMessage => m.role === "toolResult" && m.toolCallId === part.id);
			if (result) answers.set(String(part.arguments.id), result);
		}
	}
	return answers;
}

/** The id of the bounded `!command` view in a context, if any. */
function findBashViewId(context: Context): string | undefined {
	for (const message of context.messages) {
		const match = /\[pi-overflow id=([0-9a-f]{12})\] user_bash output/.exec(messageText(message));
		if (match) return match[1];
	}
	return undefined;
}

/** One prompt in which the model queries every id it sees; asserts that each answers. */
async function promptQueryingEveryId(pi: PiSession, prompt: string): Promise<{ seen: string[]; bashViewId?: string }> {
	let seen: string[] = [];
	let bashViewId: string | undefined;
	pi.respond((context) => {
		seen = idsSeen(context);
		bashViewId = findBashViewId(context);
		return toolUse(...seen.map((id) => fauxToolCall("overflow_query", { id, search: "." })));
	}, fauxAssistantMessage("done"));
	await pi.session.prompt(prompt);
	assertEveryIdAnswers(pi, seen);
	return { seen, bashViewId };
}

function assertEveryIdAnswers(pi: PiSession, ids: readonly string[]): void {
	const answers = queryAnswers(pi);
	assert.ok(ids.length > 0, "the model sees ids");
	for (const id of ids) {
		const answer = answers.get(id);
		assert.ok(answer, `id ${id} was queried`);
		assert.equal(answer.isError, false, `id ${id} answers: ${messageText(answer)}`);
	}
}

/** A shell command printing `lines` numbered lines with one error line in the middle. */
function noisyCommand(lines: number, errorAt: number, error: string): string {
	return `for i in $(seq 1 ${errorAt - 1}); do echo "compiling unit $i of the project"; done; echo ${JSON.stringify(error)}; for i in $(seq ${errorAt + 1} ${lines}); do echo "compiling unit $i of the project"; done`;
}

test("after many big results the oldest view is a stub with its id and decisive line; the newest is whole and the session keeps every view", async (t) => {
	const agentDir = await createTempDir(t);
	const pi = await openPiSession({ agentDir, extensionPaths: EXTENSIONS });
	t.after(() => pi.close());
	for (let turn = 1; turn <= 14; turn++) pi.respond(toolUse(bigLog(7_000 + turn, `ERROR alpha-${turn} failed`)));
	pi.respond(fauxAssistantMessage("done"));
	await pi.session.prompt("go");
	assert.deepEqual(pi.extensionErrors, []);

	const last = pi.contexts.at(-1) as Context;
	const sent = toolResults(last);
	assert.equal(sent.length, 14);
	const kept = pi.session.messages.filter((message): message is ToolResultMessage => message.role === "toolResult");
	const oldest = messageText(sent[0]);
	const id = /^\[pi-overflow id=([0-9a-f]{12})\]/.exec(oldest)?.[1];
	assert.ok(id, `the stub starts with the id: ${oldest.slice(0, 80)}`);
	assert.ok(oldest.length <= MAX_STUB_CHARS, `stub of ${oldest.length} chars`);
	assert.match(oldest, /masked/);
	assert.match(oldest, /^\s*7001: .*ERROR alpha-1 failed/m, "the decisive line with its number");
	assert.match(oldest, /20000 lines/, "the totals");
	assert.match(oldest, /overflow_query/, "how to read it back");
	// The newest view is sent whole, exactly as the session keeps it.
	assert.equal(messageText(sent[13]), messageText(kept[13]));
	assert.match(messageText(sent[13]), /ERROR alpha-14 failed/);
	// The session still holds the full view of the oldest.
	const fullOldest = messageText(kept[0]);
	assert.ok(fullOldest.length > MAX_STUB_CHARS * 3, "the session keeps the full view");
	assert.ok(fullOldest.startsWith(`[pi-overflow id=${id}]`));
	assert.equal((kept[0].details as { overflow: { id: string } }).overflow.id, id);
});

test("a masked id still answers overflow_query with the line its stub names", async (t) => {
	const agentDir = await createTempDir(t);
	const pi = await openPiSession({ agentDir, extensionPaths: EXTENSIONS });
	t.after(() => pi.close());
	// Views of several thousand characters: the first is due once 40 000 characters of newer ones follow it.
	for (let turn = 1; turn <= 14; turn++) pi.respond(toolUse(bigLog(5_000 + turn, `ERROR beta-${turn} failed`)));
	let maskedId = "";
	pi.respond((context) => {
		const stub = messageText(toolResults(context)[0]);
		maskedId = /^\[pi-overflow id=([0-9a-f]{12})\][^\n]*masked/.exec(stub)?.[1] ?? "";
		assert.ok(maskedId, `the first view is masked by now: ${stub.slice(0, 120)}`);
		return toolUse(fauxToolCall("overflow_query", { id: maskedId, search: "beta-1 failed" }));
	});
	pi.respond(fauxAssistantMessage("done"));
	await pi.session.prompt("go");
	const answer = queryAnswers(pi).get(maskedId) as ToolResultMessage;
	assert.equal(answer.isError, false, messageText(answer));
	assert.match(messageText(answer), /^\s*5001: .*ERROR beta-1 failed/m);
});

test("an 8 000-token model gets a view within its share that still shows the last line and the signal line", async (t) => {
	const agentDir = await createTempDir(t);
	const window = 8_000;
	const pi = await openPiSession({ agentDir, extensionPaths: EXTENSIONS, contextWindow: window });
	t.after(() => pi.close());
	pi.respond(toolUse(bigLog(10_000, "ERROR gamma failed in the middle", 20_000)), fauxAssistantMessage("done"));
	await pi.session.prompt("go");
	const view = messageText(toolResults(pi.contexts.at(-1) as Context)[0]);
	assert.ok(view.length <= 0.2 * window * 4, `a view of ${view.length} chars is within 20% of the window`);
	assert.ok(view.length < 24_000);
	assert.match(view, /^\[pi-overflow id=[0-9a-f]{12}\] big_log output: 20000 lines/);
	assert.match(view, /^\s*10000: ERROR gamma failed in the middle$/m, "the signal line");
	assert.match(view, /^\s*20000: .*processed batch 20000 /m, "the last line");
});

test("three parallel big results share one budget", async (t) => {
	const window = 30_000;
	const firstTurn = async (...calls: ReturnType<typeof fauxToolCall>[]): Promise<string[]> => {
		const agentDir = await createTempDir(t);
		// Long heads and tails, so that a view fills whatever budget it gets.
		const index = writeConfiguredIndex(agentDir, '{ "headLines": 400, "tailLines": 600 }');
		const pi = await openPiSession({
			agentDir,
			extensionPaths: [CAPTURE_PATH, TEST_TOOLS_PATH, index],
			contextWindow: window,
		});
		try {
			pi.respond(toolUse(...calls), fauxAssistantMessage("done"));
			await pi.session.prompt("go");
			assert.deepEqual(pi.extensionErrors, []);
			return toolResults(pi.contexts.at(-1) as Context).map(messageText);
		} finally {
			pi.close();
		}
	};
	const lines = 100_000;
	const parallel = await firstTurn(
		bigLog(3_000, "ERROR one failed", lines),
		bigLog(4_000, "ERROR two failed", lines),
		bigLog(5_000, "ERROR three failed", lines),
	);
	const [alone] = await firstTurn(bigLog(6_000, "ERROR alone failed", lines));
	// Alone, a result takes its turn's whole share of the window (less than thresholdChars here).
	assert.ok(alone.length < 24_000 && alone.length > 10_000, `alone: ${alone.length} chars`);
	const total = parallel.reduce((sum, view) => sum + view.length, 0);
	assert.ok(
		total <= alone.length + 100,
		`three views of ${parallel.map((view) => view.length).join(" + ")} chars share what one takes alone (${alone.length})`,
	);
	["one", "two", "three"].forEach((name, index) => {
		assert.ok(parallel[index].length > alone.length / 4, "each gets its part");
		assert.match(parallel[index], new RegExp(`ERROR ${name} failed`));
		assert.match(parallel[index], new RegExp(`^\\s*${lines}: `, "m"), "each keeps its last line");
	});
});

test("a `!` command's huge output reaches the model bounded, its middle error numbered, with an id and no temp path", async (t) => {
	const agentDir = await createTempDir(t);
	const pi = await openPiSession({ agentDir, extensionPaths: EXTENSIONS });
	t.after(() => pi.close());
	const result = await pi.session.executeBash(noisyCommand(120_000, 60_001, "error: the middle of the build broke"));
	assert.equal(result.truncated, true, "Pi cut it");
	assert.ok(result.fullOutputPath?.startsWith(tmpdir()), "Pi spilled it to its temp file");
	let bashText = "";
	pi.respond((context) => {
		const user = context.messages.find(
			(message) => message.role === "user" && messageText(message).startsWith("Ran `"),
		);
		bashText = user ? messageText(user) : "";
		const id = /\[pi-overflow id=([0-9a-f]{12})\]/.exec(bashText)?.[1] ?? "0123456789ab";
		return toolUse(fauxToolCall("overflow_query", { id, lines: { start: 60_000, end: 60_002 } }));
	});
	pi.respond(fauxAssistantMessage("done"));
	await pi.session.prompt("what broke?");
	assert.deepEqual(pi.extensionErrors, []);

	assert.match(bashText, /\[pi-overflow id=[0-9a-f]{12}\] user_bash output: 120000 lines/);
	assert.match(
		bashText,
		/^\s*60001: error: the middle of the build broke$/m,
		"the middle error with its true line number",
	);
	assert.match(bashText, /^\s*120000: compiling unit 120000 of the project$/m, "the last line");
	assert.ok(bashText.length <= 24_000 + 500, `bounded: ${bashText.length} chars`);
	assert.ok(!bashText.includes(result.fullOutputPath as string), "no temp path");
	assert.doesNotMatch(bashText, /pi-bash-[0-9a-f]+\.log|Output truncated/);
	const [answer] = queryAnswers(pi).values();
	assert.equal(answer.isError, false, messageText(answer));
	assert.match(messageText(answer), /^\s*60001: error: the middle of the build broke$/m);
	// The session keeps Pi's own message.
	const kept = pi.session.messages.find((message) => message.role === "bashExecution");
	assert.ok(kept && kept.role === "bashExecution" && kept.fullOutputPath === result.fullOutputPath);
});

test("a `!` command whose temp file is gone reaches the model as Pi's tail, said so, and neither the view nor the stored entry names the file", async (t) => {
	const agentDir = await createTempDir(t);
	const pi = await openPiSession({ agentDir, extensionPaths: EXTENSIONS });
	t.after(() => pi.close());
	const result = await pi.session.executeBash(noisyCommand(120_000, 60_001, "error: lost in the middle"));
	const path = result.fullOutputPath as string;
	rmSync(path);
	let bashText = "";
	pi.respond((context) => {
		const user = context.messages.find(
			(message) => message.role === "user" && messageText(message).startsWith("Ran `"),
		);
		bashText = user ? messageText(user) : "";
		const id = /\[pi-overflow id=([0-9a-f]{12})\]/.exec(bashText)?.[1] ?? "0123456789ab";
		return toolUse(fauxToolCall("overflow_query", { id }));
	}, fauxAssistantMessage("done"));
	await pi.session.prompt("what broke?");
	assert.match(
		bashText,
		/^\[pi-overflow id=[0-9a-f]{12}\] user_bash output: \d+ lines.*\n\[pi-overflow: Pi kept only the end of this output; its full output could not be read \(.*ENOENT/m,
	);
	assert.match(bashText, /^\s*\d+: compiling unit 120000 of the project$/m, "Pi's tail, its last line");
	assert.ok(bashText.length <= 24_000 + 500);
	const [answer] = queryAnswers(pi).values();
	assert.equal(answer.isError, false, messageText(answer));
	for (const text of [bashText, messageText(answer)]) {
		assert.ok(!text.includes(path), "no temp path");
		assert.doesNotMatch(text, /pi-bash-[0-9a-f]+\.log/);
	}
});

test("`!!` output never reaches the model, however large", async (t) => {
	const agentDir = await createTempDir(t);
	const pi = await openPiSession({ agentDir, extensionPaths: EXTENSIONS });
	t.after(() => pi.close());
	await pi.session.executeBash("echo secret-small-output-7731", undefined, { excludeFromContext: true });
	await pi.session.executeBash(noisyCommand(60_000, 30_000, "error: secret-huge-output-7732"), undefined, {
		excludeFromContext: true,
	});
	pi.respond(fauxAssistantMessage("done"));
	await pi.session.prompt("hello");
	const text = contextText(pi.contexts.at(-1) as Context);
	assert.doesNotMatch(text, /secret-(small|huge)-output/);
	assert.doesNotMatch(text, /compiling unit/);
	assert.equal(
		pi.session.messages.filter((message) => message.role === "bashExecution").length,
		2,
		"the session keeps them",
	);
});

test("after compaction every id the model still sees answers, and the summariser got the `!` view, not the temp path", async (t) => {
	const agentDir = await createTempDir(t);
	const pi = await openPiSession({
		agentDir,
		extensionPaths: EXTENSIONS,
		settings: { compaction: { enabled: false, keepRecentTokens: 4_000 } },
	});
	t.after(() => pi.close());
	const bash = await pi.session.executeBash(noisyCommand(80_000, 40_000, "error: compaction-era failure"));
	for (let turn = 1; turn <= 5; turn++) pi.respond(toolUse(bigLog(2_000 + turn, `ERROR delta-${turn} failed`)));
	pi.respond(fauxAssistantMessage("done"));
	await pi.session.prompt("go");

	// The summariser keeps every id it reads, as the view's first 2 000 characters ask it to. The
	// kept part starts inside the one long turn, so Pi asks for two summaries (history, turn prefix).
	let summariserInput = "";
	const summarise = (context: Context) => {
		const input = contextText(context);
		summariserInput += input;
		const ids = [...new Set([...input.matchAll(ID_PATTERN)].map((match) => match[1]))];
		return fauxAssistantMessage(
			`## Goal\nFix the build.\n\n## Critical Context\n${ids.map((id) => `- [pi-overflow id=${id}] stored output`).join("\n")}`,
		);
	};
	pi.respond(summarise, summarise);
	await pi.session.compact();
	assert.match(summariserInput, /user_bash output: 80000 lines/);
	assert.ok(!summariserInput.includes(bash.fullOutputPath as string), "no temp path reaches the summariser");
	assert.match(summariserInput, /40000: error: compaction-era failure/);

	const { seen } = await promptQueryingEveryId(pi, "continue");
	assert.ok(seen.length >= 6, `the model still sees ${seen.length} ids`);
	assert.deepEqual(pi.extensionErrors, []);
});

test("after resume and after fork every id the model sees answers, and the `!` view keeps its id", async (t) => {
	const agentDir = await createTempDir(t);
	const sessionDir = join(agentDir, "sessions");
	const first = await openPiSession({
		agentDir,
		extensionPaths: EXTENSIONS,
		sessionManager: SessionManager.create(agentDir, sessionDir),
	});
	const sessionFile = first.session.sessionFile as string;
	let firstIds: string[] = [];
	try {
		await first.session.executeBash(noisyCommand(50_000, 25_000, "error: resumed failure"));
		for (let turn = 1; turn <= 5; turn++) first.respond(toolUse(bigLog(1_000 + turn, `ERROR epsilon-${turn} failed`)));
		first.respond((context) => {
			firstIds = idsSeen(context);
			return fauxAssistantMessage("done");
		});
		await first.session.prompt("go");
	} finally {
		first.close();
	}
	const original = findBashViewId(first.contexts.at(-1) as Context);
	assert.ok(original, "the first session showed a bounded `!` view");
	assert.equal(firstIds.length, 6);

	const reopen = (file: string, reason: "resume" | "fork") =>
		openPiSession({
			agentDir,
			extensionPaths: EXTENSIONS,
			sessionManager: SessionManager.open(file, sessionDir),
			sessionStartEvent: { type: "session_start", reason, previousSessionFile: sessionFile },
		});
	const resumed = await reopen(sessionFile, "resume");
	try {
		const { seen, bashViewId } = await promptQueryingEveryId(resumed, "again");
		assert.deepEqual(new Set(seen), new Set(firstIds));
		assert.equal(bashViewId, original, "the same `!` view and id after resume");
	} finally {
		resumed.close();
	}

	const source = SessionManager.open(sessionFile, sessionDir);
	const forked = await reopen(source.createBranchedSession(source.getLeafId() as string) as string, "fork");
	t.after(() => forked.close());
	assert.notEqual(forked.session.sessionId, first.session.sessionId, "a fork is a new session");
	const { seen, bashViewId } = await promptQueryingEveryId(forked, "forked");
	assert.deepEqual(new Set(seen), new Set(firstIds));
	assert.equal(bashViewId, original, "the same `!` view and id after fork");
	// The fork's tool views from the first session are still pi-overflow's own: newer output masks them.
	for (let turn = 1; turn <= 6; turn++) forked.respond(toolUse(bigLog(4_000 + turn, `ERROR zeta-${turn} failed`)));
	forked.respond(fauxAssistantMessage("done"));
	await forked.session.prompt("more");
	const stubbed = idsSeen(forked.contexts.at(-1) as Context).filter((id) =>
		new RegExp(`\\[pi-overflow id=${id}\\][^\\n]*masked`).test(contextText(forked.contexts.at(-1) as Context)),
	);
	assert.ok(
		firstIds.some((id) => id !== original && stubbed.includes(id)),
		`a first-session big_log view is masked after fork: ${stubbed.join(", ")}`,
	);
});

test("parallel results of one turn do not mask each other before the model has seen them, nor does a `read` beside them", async (t) => {
	/** The tool results sent on the call right after one turn of `calls`, and as the session keeps them. */
	const afterOneTurn = async (...calls: ReturnType<typeof fauxToolCall>[]) => {
		const agentDir = await createTempDir(t);
		const file = join(agentDir, "fifty-kb.txt");
		writeFileSync(file, "plain text line of a file that is read whole\n".repeat(1_140));
		// Long heads and tails and a wide window: each of three parallel views fills its ≈ 24 K characters.
		const index = writeConfiguredIndex(agentDir, '{ "headLines": 400, "tailLines": 600 }');
		const pi = await openPiSession({
			agentDir,
			extensionPaths: [CAPTURE_PATH, TEST_TOOLS_PATH, index],
			contextWindow: 1_000_000,
		});
		try {
			pi.respond(toolUse(...calls.map((call) => (call.name === "read" ? fauxToolCall("read", { path: file }) : call))));
			pi.respond(fauxAssistantMessage("done"));
			await pi.session.prompt("go");
			assert.deepEqual(pi.extensionErrors, []);
			const kept = pi.session.messages.filter((message): message is ToolResultMessage => message.role === "toolResult");
			return { sent: toolResults(pi.contexts.at(-1) as Context).map(messageText), kept: kept.map(messageText) };
		} finally {
			pi.close();
		}
	};
	const parallel = await afterOneTurn(
		bigLog(3_000, "ERROR par-one failed", 100_000),
		bigLog(4_000, "ERROR par-two failed", 100_000),
		bigLog(5_000, "ERROR par-three failed", 100_000),
	);
	assert.equal(parallel.sent.length, 3);
	assert.ok(
		parallel.kept.every((text) => text.length > 20_000),
		`the parallel views are 20 K+ each: ${parallel.kept.map((text) => text.length)}`,
	);
	parallel.sent.forEach((text, index) => {
		assert.doesNotMatch(
			text,
			/masked/,
			`view ${index + 1} is sent whole on the call after its turn (${text.length} chars)`,
		);
		assert.equal(text, parallel.kept[index]);
	});
	const beside = await afterOneTurn(bigLog(6_000, "ERROR beside-read failed", 100_000), fauxToolCall("read", {}));
	assert.ok(beside.kept[1].length > 40_000, `the read sent ${beside.kept[1].length} characters`);
	assert.doesNotMatch(
		beside.sent[0],
		/masked/,
		`the view beside the read is sent whole (${beside.sent[0].length} chars)`,
	);
	assert.equal(beside.sent[0], beside.kept[0]);
});

test("a result whose own details name a stored id is never masked, and only what pi-overflow bounded is", async (t) => {
	const agentDir = await createTempDir(t);
	const pi = await openPiSession({ agentDir, extensionPaths: EXTENSIONS });
	t.after(() => pi.close());
	let otherId = "";
	pi.respond(toolUse(bigLog(2_000, "ERROR first-stored failed")));
	pi.respond((context) => {
		otherId = idsSeen(context)[0];
		const details = { overflow: { id: otherId, totalLines: 20_000, totalBytes: 1_300_000 } };
		return toolUse(fauxToolCall("bridge_details", { chars: 21_042, details }));
	});
	for (let turn = 1; turn <= 8; turn++) pi.respond(toolUse(bigLog(3_000 + turn, `ERROR later-${turn} failed`)));
	pi.respond(fauxAssistantMessage("done"));
	await pi.session.prompt("go");
	assert.deepEqual(pi.extensionErrors, []);
	assert.match(otherId, /^[0-9a-f]{12}$/);
	const last = toolResults(pi.contexts.at(-1) as Context);
	for (const context of pi.contexts) {
		const bridge = toolResults(context).find((message) => message.toolName === "bridge_details");
		if (!bridge) continue;
		const text = messageText(bridge);
		assert.equal(text.length, 21_042, `the bridge's own result is sent as it is: ${text.slice(0, 160)}`);
		assert.doesNotMatch(text, /pi-overflow|masked/);
	}
	// pi-overflow's own views are still masked.
	assert.match(messageText(last[0]), new RegExp(`^\\[pi-overflow id=${otherId}\\][^\\n]*masked`));
});
