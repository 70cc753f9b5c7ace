// `/overflow show <id>` through the real Pi runtime prints exactly what the model was sent for that
// result: a result an earlier layer cut (Pi's 2 000-line tail) shows Pi's text with the recovery
// marker, not a view of the stored original the model never saw; the user's `!command` likewise.

import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { fauxAssistantMessage, fauxToolCall, type ToolResultMessage } from "@mariozechner/pi-ai";
import type { ExtensionUIContext } from "@mariozechner/pi-coding-agent";
import { CAPTURE_PATH, INDEX_PATH, resultText, TEST_TOOLS_PATH } from "../helpers/pi.js";
import { contextText, openPiSession, type PiSession } from "../helpers/pi-session.js";
import { createTempDir } from "../helpers/tmp.js";

const EXTENSIONS = [CAPTURE_PATH, TEST_TOOLS_PATH, INDEX_PATH];

/** A UI that records what extensions notify. */
function recordingUi(said: string[]): ExtensionUIContext {
	const ignore = () => undefined;
	return new Proxy({} as ExtensionUIContext, {
		get(_target, name) {
			if (name === "notify") return (message: string) => said.push(message);
			if (name === "theme") return undefined;
			if (name === "select" || name === "input" || name === "editor" || name === "custom" || name === "confirm")
				return async () => undefined;
			if (name === "onTerminalInput") return () => ignore;
			if (name === "getEditorText") return () => "";
			if (name === "getToolsExpanded") return () => false;
			return ignore;
		},
	});
}

async function runCommand(pi: PiSession, said: string[], args: string): Promise<string> {
	const before = said.length;
	await pi.session.prompt(`/overflow ${args}`);
	const out = said.slice(before);
	assert.equal(out.length, 1, `one answer to /overflow ${args}: ${JSON.stringify(out)}`);
	return out[0]!;
}

/** What show prints after the text: the stored file's path, for an editor or `less`. */
function withPath(shown: string, agentDir: string, id: string): string {
	const lines = shown.split("\n");
	const last = lines.pop()!;
	const path = join(agentDir, "my-pi", "pi-overflow", `${id}.txt`);
	assert.match(last, /^pi-overflow: full output, \d+ lines, [\d.]+ (KiB|MiB): /);
	assert.ok(last.endsWith(`: ${path}`), last);
	assert.ok(existsSync(path), `${path} exists`);
	return lines.join("\n");
}

function idIn(text: string): string {
	const id = /\[pi-overflow id=([0-9a-f]{12})/.exec(text)?.[1];
	assert.ok(id, `an id in ${text.slice(0, 200)}`);
	return id;
}

test("/overflow show prints the text the model got for a result Pi had cut (its tail and the marker), not a view it never saw", async (t) => {
	const agentDir = await createTempDir(t);
	const said: string[] = [];
	const pi = await openPiSession({ agentDir, extensionPaths: EXTENSIONS, uiContext: recordingUi(said) });
	t.after(() => pi.close());
	pi.respond(
		fauxAssistantMessage([fauxToolCall("bash", { command: "seq 1 300000" }, { id: "call-seq" })], {
			stopReason: "toolUse",
		}),
		fauxAssistantMessage("done"),
	);
	await pi.session.prompt("count");
	assert.deepEqual(pi.extensionErrors, []);
	const result = pi.session.messages.find((message): message is ToolResultMessage => message.role === "toolResult");
	assert.ok(result);
	const sent = resultText(result);
	assert.match(sent, /^299999\n300000\n+\[Showing lines \d+-\d+ of 30000/m, "Pi's own tail was kept");
	// What the provider got for the result is the session's text.
	assert.ok(contextText(pi.contexts.at(-1)!).includes(sent), "the model was sent the session's text");

	const shown = await runCommand(pi, said, `show ${idIn(sent)}`);
	assert.equal(withPath(shown, agentDir, idIn(sent)), sent);
});

test("/overflow show prints the text the model got for a `!` command's output", async (t) => {
	const agentDir = await createTempDir(t);
	const said: string[] = [];
	const pi = await openPiSession({ agentDir, extensionPaths: EXTENSIONS, uiContext: recordingUi(said) });
	t.after(() => pi.close());
	await pi.session.executeBash("seq 1 300000");
	pi.respond(fauxAssistantMessage("done"));
	await pi.session.prompt("what did it print?");
	assert.deepEqual(pi.extensionErrors, []);
	const context = contextText(pi.contexts.at(-1)!);
	const id = idIn(context);
	assert.match(context, /\n300000\n/, "Pi's tail reached the model");

	const shown = withPath(await runCommand(pi, said, `show ${id}`), agentDir, id);
	assert.match(shown, /^29\d{4}\n29\d{4}\n/, `Pi's tail, not a head/signal/tail view: ${shown.slice(0, 200)}`);
	assert.ok(context.includes(shown), `what the model got: ${shown.slice(-300)}`);
});

test("/overflow show prints a view masked since as it was first sent, and says it is masked now", async (t) => {
	const agentDir = await createTempDir(t);
	const said: string[] = [];
	const pi = await openPiSession({ agentDir, extensionPaths: EXTENSIONS, uiContext: recordingUi(said) });
	t.after(() => pi.close());
	for (let turn = 1; turn <= 14; turn++)
		pi.respond(
			fauxAssistantMessage(
				[fauxToolCall("big_log", { lines: 20_000, errors: { [7_000 + turn]: `ERROR alpha-${turn}` } })],
				{
					stopReason: "toolUse",
				},
			),
		);
	pi.respond(fauxAssistantMessage("done"));
	await pi.session.prompt("go");
	assert.deepEqual(pi.extensionErrors, []);
	const kept = pi.session.messages.filter((message): message is ToolResultMessage => message.role === "toolResult");
	const lastSent = contextText(pi.contexts.at(-1)!);
	const [oldest, newest] = [resultText(kept[0]!), resultText(kept[13]!)];
	assert.ok(!lastSent.includes(oldest), "the oldest view is masked in what the model is sent now");
	assert.ok(
		pi.contexts.some((context) => contextText(context).includes(oldest)),
		"it was sent whole first",
	);

	const shownOldest = withPath(await runCommand(pi, said, `show ${idIn(oldest)}`), agentDir, idIn(oldest));
	assert.ok(shownOldest.startsWith(`${oldest}\n`), shownOldest.slice(0, 200));
	assert.match(shownOldest.slice(oldest.length + 1), /^pi-overflow: .*masked/);
	assert.equal(shownOldest.split("\n").length, oldest.split("\n").length + 1, "one line more");
	assert.equal(withPath(await runCommand(pi, said, `show ${idIn(newest)}`), agentDir, idIn(newest)), newest);
});
