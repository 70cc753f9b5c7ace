// The user's side end to end: the /overflow command, Pi's spill files, the user's config, the
// warnings at session start, a missing dependency, and the README's load order in Pi's real loader.

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import {
	cpSync,
	existsSync,
	lstatSync,
	mkdirSync,
	readdirSync,
	readFileSync,
	symlinkSync,
	writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { fauxAssistantMessage, fauxToolCall } from "@mariozechner/pi-ai";
import { DefaultResourceLoader, SettingsManager } from "@mariozechner/pi-coding-agent";
import { MISORDERED_CAPTURE_WARNING, MISSING_CAPTURE_WARNING } from "../../src/surface/load-check.js";
import { assertChildOk, runChild } from "../helpers/child.js";
import { openPiSession, type PiSession } from "../helpers/pi-session.js";
import {
	CAPTURE_PATH,
	INDEX_PATH,
	REPO_ROOT,
	resultText,
	TEST_TOOLS_PATH,
	writeConfiguredIndex,
} from "../helpers/pi.js";
import { recordingUi, type Said } from "../helpers/recording-ui.js";
import { createTempDir } from "../helpers/tmp.js";

// End-to-end, the user's side (issue 12) through the real Pi runtime: the /overflow command (list,
// show, purge, stats with recall telemetry; with a UI and without), Pi's spill files released once
// stored, the per-user config layered over the bundle's, the capture.ts warnings at session start,
// and a missing runtime dependency that says what to run.

/** A UI that records what extensions say and answers select() with the option `choose` picks (its index). */
function storeDir(agentDir: string): string {
	return join(agentDir, "my-pi", "pi-overflow");
}

/** Runs `/overflow <args>` and returns what it said. */
async function runCommand(pi: PiSession, said: Said, args: string): Promise<string> {
	const before = said.length;
	await pi.session.prompt(`/overflow ${args}`.trim());
	const out = said.slice(before).filter((item) => item.type !== "confirm");
	assert.equal(out.length, 1, `one answer to /overflow ${args}: ${JSON.stringify(out)}`);
	return out[0]!.message;
}

function idOf(details: unknown): string {
	const id = (details as { overflow?: { id?: unknown } }).overflow?.id;
	assert.equal(typeof id, "string", "the result was stored");
	return id as string;
}

test("/overflow lists this session's results newest first, shows one, purges it, and stats count bounds, queries and re-runs", async (t) => {
	const agentDir = await createTempDir(t);
	const said: Said = [];
	const pi = await openPiSession({
		agentDir,
		extensionPaths: [CAPTURE_PATH, TEST_TOOLS_PATH, INDEX_PATH],
		uiContext: recordingUi(said),
	});
	t.after(() => pi.close());
	const errors = { 5000: "src/net/socket.c:88:12: error: struct sock has no member named sk_flags" };
	pi.respond(
		fauxAssistantMessage([fauxToolCall("big_log", { lines: 9000, errors }, { id: "call-a" })], {
			stopReason: "toolUse",
		}),
		// The same call right after its bounded result: a re-run.
		fauxAssistantMessage([fauxToolCall("big_log", { lines: 9000, errors }, { id: "call-b" })], {
			stopReason: "toolUse",
		}),
		fauxAssistantMessage([fauxToolCall("bash", { command: "seq 1 300000" }, { id: "call-c" })], {
			stopReason: "toolUse",
		}),
		(context) => {
			const first = context.messages.find((message) => message.role === "toolResult");
			return fauxAssistantMessage(
				[fauxToolCall("overflow_query", { id: idOf((first as { details?: unknown }).details), search: "sk_flags" })],
				{ stopReason: "toolUse" },
			);
		},
		fauxAssistantMessage("done"),
	);
	await pi.session.prompt("go");
	const results = pi.session.messages.filter((message) => message.role === "toolResult");
	const [logA, logB, seq] = results.slice(0, 3).map((message) => idOf(message.details));

	const list = await runCommand(pi, said, "");
	const lines = list.split("\n");
	assert.match(lines[0]!, /^pi-overflow: 3 stored results this session, newest first/);
	assert.ok(lines[1]!.startsWith(`${seq}  bash  300000 lines  `), lines[1]);
	assert.ok(list.indexOf(logB!) < list.indexOf(logA!), "newest first");
	// The two runs of one big_log call are listed together, under the newest, with its decisive line.
	assert.match(list, /\n2 runs of big_log \{/);
	assert.match(list, new RegExp(`\n {2}${logB}  big_log  9000 lines  .*  nothing changed\n {2}${logA}  big_log `));
	assert.match(
		list,
		/\n {4}5000: src\/net\/socket\.c:88:12: error: struct sock has no member/,
		"the decisive line under its result",
	);
	for (const line of lines.slice(0, -1)) assert.ok(line.length <= 78, `fits 80 columns: ${line}`);
	assert.equal(lines.at(-1), `Full outputs: ${storeDir(agentDir)}/<id>.txt`);

	const shown = await runCommand(pi, said, `show ${logA}`);
	assert.match(shown, new RegExp(`\\[pi-overflow id=${logA}\\] big_log output`));
	assert.match(shown, /5000: src\/net\/socket\.c:88:12: error/);
	assert.match(
		shown.split("\n").at(-1)!,
		new RegExp(`^pi-overflow: full output, 9000 lines, [\\d.]+ KiB: ${join(storeDir(agentDir), `${logA}.txt`)}$`),
	);
	// Any case: the subcommand and the id as a user may type or copy them.
	assert.equal(await runCommand(pi, said, `SHOW ${logA!.toUpperCase()}`), shown);

	const stats = await runCommand(pi, said, "stats");
	assert.match(
		stats,
		/^pi-overflow store: [\d.]+ (KiB|MiB) of 512 MiB \(\d+%\): 3 entries, 1 session\noldest stored just now; entries are kept 7 days\.\n/,
	);
	assert.match(stats, /\n {2}tool +bounded +queried +re-run +compared +fixed\n/);
	// The second big_log call is a re-run: right after its bounded result, and compared with it (nothing fixed).
	assert.match(stats, /\n {2}big_log +2 +1 +1 +1 +0\n/);
	assert.match(stats, /\n {2}bash +1 +0 +0 +0 +0(\n|$)/);
	for (const line of stats.split("\n")) assert.ok(line.length <= 78, `fits 80 columns: ${line}`);

	const purged = await runCommand(pi, said, `purge ${logA}`);
	assert.equal(purged, `pi-overflow: purged id=${logA}: 1 entry removed.`);
	assert.equal(existsSync(join(storeDir(agentDir), `${logA}.txt`)), false);
	assert.equal(existsSync(join(storeDir(agentDir), `${logA}.json`)), false);
	// The purged result is no row of the listing; a line counts it.
	const after = await runCommand(pi, said, "");
	assert.ok(!after.includes(logA!), after);
	assert.match(after, /\n1 earlier result is no longer stored \(1 purged\)\.\n/);
	// show and purge agree on an id that is not stored, purged here or never stored.
	assert.equal(
		await runCommand(pi, said, `show ${logA}`),
		`pi-overflow: id=${logA} is no longer stored: it was purged.`,
	);
	assert.equal(
		await runCommand(pi, said, `purge ${logA}`),
		`pi-overflow: nothing purged: id=${logA} is no longer stored: it was purged.`,
	);
	const unknown = "no stored result has id=0123456789ab (/overflow lists this session's).";
	assert.equal(await runCommand(pi, said, "show 0123456789AB"), `pi-overflow: ${unknown}`);
	assert.equal(await runCommand(pi, said, "purge 0123456789ab"), `pi-overflow: nothing purged: ${unknown}`);
	assert.match(
		await runCommand(pi, said, "purge nonsense"),
		/^pi-overflow: "nonsense" is not an id: an id is 12 characters/,
	);
	assert.match(await runCommand(pi, said, "show"), /^pi-overflow: \/overflow show needs the id of a stored result/);
	assert.match(
		await runCommand(pi, said, "purge"),
		/^pi-overflow: \/overflow purge needs what to delete: an id, "session"/,
	);
	assert.match(await runCommand(pi, said, "stats now"), /^pi-overflow: \/overflow stats takes nothing after it/);
	assert.match(
		await runCommand(pi, said, "frobnicate"),
		/^pi-overflow: \/overflow has no subcommand "frobnicate"; \/overflow help lists them\.$/,
	);
	for (const mistake of said.slice(-9)) assert.equal(mistake.type, "warning", mistake.message);
	const help = (await runCommand(pi, said, "Help")).split("\n");
	assert.deepEqual(
		help.slice(1).map((line) => /^ {2}(\/overflow(?: \S+)*?) {2,}\S/.exec(line)?.[1]),
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
	for (const line of help) assert.ok(line.length <= 78, `fits 80 columns: ${line}`);

	// The counts are kept beside the store, privately, and hold no command or output.
	const statsPath = join(agentDir, "my-pi", "pi-overflow-stats.json");
	assert.equal(lstatSync(statsPath).mode & 0o777, 0o600);
	assert.doesNotMatch(readFileSync(statsPath, "utf8"), /seq|sk_flags|300000/);
	assert.deepEqual(pi.extensionErrors, []);
});

test("/overflow purge all asks first in the TUI, No first: declined keeps every entry, confirmed removes every session's and the counts", async (t) => {
	const agentDir = await createTempDir(t);
	const said: Said = [];
	let answer = false;
	const other = join(storeDir(agentDir), "aaaaaaaaaaaa");
	const pi = await openPiSession({
		agentDir,
		extensionPaths: [CAPTURE_PATH, TEST_TOOLS_PATH, INDEX_PATH],
		uiContext: recordingUi(said, (options) => (answer ? options.findIndex((option) => option.startsWith("Yes")) : 0)),
	});
	t.after(() => pi.close());
	pi.respond(
		fauxAssistantMessage([fauxToolCall("big_log", { lines: 9000, errors: {} })], { stopReason: "toolUse" }),
		fauxAssistantMessage("done"),
	);
	await pi.session.prompt("go");
	// Another session's entry.
	writeFileSync(`${other}.txt`, "x\n", { mode: 0o600 });
	writeFileSync(
		`${other}.json`,
		JSON.stringify({
			id: "aaaaaaaaaaaa",
			sessionId: "other",
			toolCallId: "t",
			toolName: "bash",
			createdAt: new Date().toISOString(),
			totalLines: 1,
			totalBytes: 2,
			storedBytes: 2,
			storedLines: 1,
			truncated: false,
			source: "current",
		}),
		{ mode: 0o600 },
	);

	assert.match(await runCommand(pi, said, "stats"), /: 2 entries, 2 sessions\n/);
	assert.equal(
		await runCommand(pi, said, "purge session"),
		"pi-overflow: purged this session's stored results: 1 entry removed.",
	);
	assert.equal(await runCommand(pi, said, "purge all"), "pi-overflow: nothing purged.");
	assert.match(
		said.at(-2)!.message,
		/^Delete pi-overflow's 1 stored result of 1 session in .*\[No, keep them \| Yes, delete them\]$/,
	);
	assert.ok(existsSync(`${other}.txt`));
	answer = true;
	assert.equal(
		await runCommand(pi, said, "purge all"),
		"pi-overflow: purged every stored result: 1 entry removed, and the stats' counts.",
	);
	assert.equal(existsSync(`${other}.txt`), false);
	// Nothing of pi-overflow's data is left: no store directory, no counts file.
	assert.deepEqual(readdirSync(join(agentDir, "my-pi")), []);
});

test("/overflow without a UI (pi -p, stdout a pipe) writes every answer to stdout before Pi exits", async (t) => {
	const agentDir = await createTempDir(t);
	const pi = join(REPO_ROOT, "node_modules", ".bin", "pi");
	const commands = ["/overflow", "/overflow stats", "/overflow show", "/overflow purge all"];
	const run = runChild(pi, ["-p", "--no-session", "-e", CAPTURE_PATH, "-e", INDEX_PATH, ...commands], {
		cwd: agentDir,
		env: { ...process.env, PI_CODING_AGENT_DIR: agentDir, NODE_OPTIONS: "" },
	});
	assertChildOk(run, "pi -p");
	const out = run.stdout;
	assert.match(out, /^pi-overflow: nothing stored in this session yet/);
	assert.match(out, /\npi-overflow store: 0 B of 512 MiB/);
	assert.match(out, /\npi-overflow: \/overflow show needs the id of a stored result/);
	assert.match(out, /\npi-overflow: purged every stored result: 0 entries removed, and the stats' counts\.\n$/);
});

test("the argument completions offer the subcommands, then this session's ids (and session/all for purge)", async (t) => {
	const agentDir = await createTempDir(t);
	const pi = await openPiSession({ agentDir, extensionPaths: [CAPTURE_PATH, TEST_TOOLS_PATH, INDEX_PATH] });
	t.after(() => pi.close());
	pi.respond(
		fauxAssistantMessage([fauxToolCall("big_log", { lines: 9000, errors: {} })], { stopReason: "toolUse" }),
		fauxAssistantMessage("done"),
	);
	await pi.session.prompt("go");
	const id = idOf(pi.session.messages.find((message) => message.role === "toolResult")!.details);
	const command = pi.session.extensionRunner!.getCommand("overflow");
	assert.ok(command?.getArgumentCompletions);
	const values = async (prefix: string) =>
		((await command.getArgumentCompletions!(prefix)) ?? []).map((item) => item.value);
	assert.deepEqual(await values(""), ["show ", "purge ", "stats", "help"]);
	assert.deepEqual(await values("sh"), ["show "]);
	assert.deepEqual(await values("SH"), ["show "]);
	assert.deepEqual(await values("show "), [`show ${id}`]);
	assert.deepEqual(await values(`purge ${id.slice(0, 3)}`), [`purge ${id}`]);
	assert.deepEqual(await values("purge "), ["purge session", "purge all", `purge ${id}`]);
});

test("Pi's world-readable spill file is removed once stored, and details.fullOutputPath names the private copy", async (t) => {
	const agentDir = await createTempDir(t);
	// Records the spill file each result names as Pi made it (loaded first, before pi-overflow changes it).
	const recorder = join(agentDir, "record-spills.ts");
	writeFileSync(
		recorder,
		`export default (pi: any) => pi.on("tool_result", (event: any) => { const text = event.content.map((part: any) => part.text ?? "").join("\\n"); const path = event.details?.fullOutputPath ?? /Full output: ([^\\]\\n]+)\\]/.exec(text)?.[1]; if (path) ((globalThis as any).__piOverflowSpills ??= []).push(path); });\n`,
	);
	const pi = await openPiSession({ agentDir, extensionPaths: [recorder, CAPTURE_PATH, INDEX_PATH] });
	t.after(() => pi.close());
	pi.respond(
		fauxAssistantMessage([fauxToolCall("bash", { command: "seq 1 300000" })], { stopReason: "toolUse" }),
		// A failed command: Pi throws, details are lost, its notice names the file in the text.
		fauxAssistantMessage([fauxToolCall("bash", { command: "seq 1 200000; exit 3" })], { stopReason: "toolUse" }),
		fauxAssistantMessage("done"),
	);
	const holder = globalThis as { __piOverflowSpills?: string[] };
	holder.__piOverflowSpills = [];
	await pi.session.prompt("go");
	const spills = holder.__piOverflowSpills;
	const [ok, failed] = pi.session.messages.filter((message) => message.role === "toolResult");
	const okId = idOf(ok!.details);
	const privatePath = join(storeDir(agentDir), `${okId}.txt`);
	assert.equal((ok!.details as { fullOutputPath?: string }).fullOutputPath, privatePath);
	assert.ok(readFileSync(privatePath).equals(execFileSync("seq", ["1", "300000"], { maxBuffer: 64 << 20 })));
	const failedId = idOf(failed!.details);
	const failedText = resultText(failed as Parameters<typeof resultText>[0]);
	assert.ok(
		failedText.includes(`Full output: ${join(storeDir(agentDir), `${failedId}.txt`)}]`),
		"the notice the model keeps names the private copy",
	);
	assert.doesNotMatch(failedText, /pi-bash-[0-9a-f]+\.log/);
	for (const text of [JSON.stringify(ok), JSON.stringify(failed)]) assert.doesNotMatch(text, /pi-bash-[0-9a-f]+\.log/);
	assert.equal(spills.length, 2, "Pi named a spill file for both");
	for (const path of spills) {
		assert.match(path, /\/pi-bash-[0-9a-f]+\.log$/);
		assert.equal(existsSync(path), false, `${path} removed`);
	}
});

test("a `!command`'s spill file is kept, made private (0600), once its output is stored; releaseSpillFiles false leaves Pi's files alone", async (t) => {
	const agentDir = await createTempDir(t);
	const pi = await openPiSession({ agentDir, extensionPaths: [CAPTURE_PATH, INDEX_PATH] });
	t.after(() => pi.close());
	const bash = await pi.session.executeBash("seq 1 250000");
	assert.ok(bash.fullOutputPath && existsSync(bash.fullOutputPath), "Pi spilled the output");
	pi.respond(fauxAssistantMessage("done"));
	await pi.session.prompt("go");
	// Pi's screen and session name the file: it stays, private.
	assert.equal(lstatSync(bash.fullOutputPath).mode & 0o777, 0o600, "private once stored");
	assert.ok(readFileSync(bash.fullOutputPath).equals(execFileSync("seq", ["1", "250000"], { maxBuffer: 64 << 20 })));

	const keepDir = await createTempDir(t);
	const index = writeConfiguredIndex(keepDir, '{ "releaseSpillFiles": false }');
	const kept = await openPiSession({ agentDir: keepDir, extensionPaths: [CAPTURE_PATH, index] });
	t.after(() => kept.close());
	kept.respond(
		fauxAssistantMessage([fauxToolCall("bash", { command: "seq 1 300000" })], { stopReason: "toolUse" }),
		fauxAssistantMessage("done"),
	);
	await kept.session.prompt("go");
	const result = kept.session.messages.find((message) => message.role === "toolResult")!;
	const spill = (result.details as { fullOutputPath: string }).fullOutputPath;
	assert.match(spill, /pi-bash-[0-9a-f]+\.log$/);
	assert.ok(existsSync(spill));
	t.after(() => execFileSync("rm", ["-f", spill]));
});

test("a stored copy that left the middle out keeps Pi's spill file, made private (0600)", async (t) => {
	const agentDir = await createTempDir(t);
	const index = writeConfiguredIndex(agentDir, `{ "maxEntryBytes": ${1024 * 1024} }`);
	const pi = await openPiSession({ agentDir, extensionPaths: [CAPTURE_PATH, index] });
	t.after(() => pi.close());
	pi.respond(
		fauxAssistantMessage([fauxToolCall("bash", { command: "seq 1 300000" })], { stopReason: "toolUse" }),
		fauxAssistantMessage("done"),
	);
	await pi.session.prompt("go");
	const result = pi.session.messages.find((message) => message.role === "toolResult")!;
	const spill = (result.details as { fullOutputPath: string }).fullOutputPath;
	t.after(() => execFileSync("rm", ["-f", spill]));
	assert.match(spill, /pi-bash-[0-9a-f]+\.log$/, "the only whole copy stays where Pi put it");
	assert.equal(lstatSync(spill).mode & 0o777, 0o600);
});

test("the user's my-pi/pi-overflow.json is layered over the bundle's field by field, a bad field warned once naming the file, and /reload applies a change", async (t) => {
	const agentDir = await createTempDir(t);
	const userConfig = join(agentDir, "my-pi", "pi-overflow.json");
	mkdirSync(join(agentDir, "my-pi"), { recursive: true });
	writeFileSync(userConfig, '// mine\n{ "thresholdChars": 5000, "headLines": "many" }\n');
	const said: Said = [];
	const pi = await openPiSession({
		agentDir,
		extensionPaths: [CAPTURE_PATH, TEST_TOOLS_PATH, INDEX_PATH],
		uiContext: recordingUi(said),
	});
	t.after(() => pi.close());
	const warnings = said.filter((item) => item.type === "warning").map((item) => item.message);
	assert.deepEqual(warnings, [
		`pi-overflow: ${userConfig}: ignored headLines ("many"): expected an integer 0–10000, 60 from ${join(REPO_ROOT, "config", "pi-overflow.json")} used`,
	]);
	// 200 lines of about 80 characters: 16 000 characters, under the bundle's 24 000, over the user's 5 000.
	pi.respond(
		fauxAssistantMessage([fauxToolCall("big_log", { lines: 200, errors: {} })], { stopReason: "toolUse" }),
		fauxAssistantMessage("done"),
	);
	await pi.session.prompt("go");
	const bounded = pi.session.messages.filter((message) => message.role === "toolResult").at(-1)!;
	assert.ok(resultText(bounded as Parameters<typeof resultText>[0]).length <= 5000);
	assert.match(
		resultText(bounded as Parameters<typeof resultText>[0]),
		/^\[pi-overflow id=[0-9a-f]{12}\] big_log output: 200 lines/,
	);

	// /reload reads the files again: a new problem is said, the old one not again.
	writeFileSync(userConfig, '{ "thresholdChars": 30000, "headLines": "lots" }\n');
	await pi.session.reload();
	const after = said.filter((item) => item.type === "warning").map((item) => item.message);
	assert.equal(after.length, 2, JSON.stringify(after));
	assert.match(after[1]!, /ignored headLines \("lots"\)/);
	await pi.session.reload();
	assert.equal(said.filter((item) => item.type === "warning").length, 2, "the same problem is not said again");
});

test("at session start, before any result, pi-overflow says whether capture.ts is missing or loads after index.ts", async (t) => {
	const missingSaid: Said = [];
	const missing = await openPiSession({
		agentDir: await createTempDir(t),
		extensionPaths: [INDEX_PATH],
		uiContext: recordingUi(missingSaid),
	});
	t.after(() => missing.close());
	await new Promise((resolve) => setImmediate(resolve));
	assert.deepEqual(missingSaid, [{ message: MISSING_CAPTURE_WARNING, type: "warning" }]);

	const misorderedSaid: Said = [];
	const misordered = await openPiSession({
		agentDir: await createTempDir(t),
		extensionPaths: [INDEX_PATH, CAPTURE_PATH],
		uiContext: recordingUi(misorderedSaid),
	});
	t.after(() => misordered.close());
	await new Promise((resolve) => setImmediate(resolve));
	assert.deepEqual(misorderedSaid, [{ message: MISORDERED_CAPTURE_WARNING, type: "warning" }]);

	const rightSaid: Said = [];
	const right = await openPiSession({
		agentDir: await createTempDir(t),
		extensionPaths: [CAPTURE_PATH, INDEX_PATH],
		uiContext: recordingUi(rightSaid),
	});
	t.after(() => right.close());
	await new Promise((resolve) => setImmediate(resolve));
	assert.deepEqual(rightSaid, []);
});

test("a bundle whose runtime dependencies are not installed fails to load with one line that says what to run", async (t) => {
	const home = await createTempDir(t);
	const bundle = join(home, "pi-overflow");
	for (const name of ["capture.ts", "index.ts", "package.json", "src", "config"])
		cpSync(join(REPO_ROOT, name), join(bundle, name), { recursive: true });
	const load = async () => {
		const settingsManager = SettingsManager.inMemory();
		const loader = new DefaultResourceLoader({
			cwd: home,
			agentDir: join(home, "agent"),
			settingsManager,
			additionalExtensionPaths: [join(bundle, "capture.ts"), join(bundle, "index.ts")],
		});
		await loader.reload();
		return loader.getExtensions();
	};
	const before = await load();
	assert.equal(before.errors.length, 1, JSON.stringify(before.errors));
	const message = before.errors[0]!.error;
	assert.equal(
		message,
		`Failed to load extension: pi-overflow needs the npm package "@eslint-community/regexpp", which is not installed; run: cd ${JSON.stringify(bundle)} && npm install --omit=dev --omit=peer`,
	);
	assert.equal(before.extensions.length, 1, "capture.ts still loads");
	// What `npm install --omit=dev --omit=peer` puts there (linked here: tests do not reach a registry).
	mkdirSync(join(bundle, "node_modules", "@sinclair"), { recursive: true });
	mkdirSync(join(bundle, "node_modules", "@eslint-community"), { recursive: true });
	symlinkSync(
		join(REPO_ROOT, "node_modules", "@eslint-community", "regexpp"),
		join(bundle, "node_modules", "@eslint-community", "regexpp"),
	);
	symlinkSync(join(REPO_ROOT, "node_modules", "jsonc-parser"), join(bundle, "node_modules", "jsonc-parser"));
	symlinkSync(
		join(REPO_ROOT, "node_modules", "@sinclair", "typebox"),
		join(bundle, "node_modules", "@sinclair", "typebox"),
	);
	const after = await load();
	assert.deepEqual(after.errors, []);
	assert.equal(after.extensions.length, 2);
});

// The README's settings.json must really give the order SPEC requires: capture.ts before every
// other extension, index.ts after every other content extension. This loads Pi's real resource
// loader on that exact snippet, with other extensions in every place Pi discovers them.

const EXTENSION = `export default function (pi: any) { pi.on("tool_result", () => undefined); }\n`;

/** The README's "## Install" section. */
function readmeInstall(): string {
	const readme = readFileSync(join(REPO_ROOT, "README.md"), "utf8");
	const start = readme.indexOf("## Install\n");
	assert.ok(start >= 0, "the README has an Install section");
	return readme.slice(start, readme.indexOf("\n## ", start + 1));
}

/** The global settings block under "## Install". */
function readmeSettings(): { extensions: string[]; packages: unknown[] } {
	const blocks = [...readmeInstall().matchAll(/```jsonc\n([\s\S]*?)```/g)];
	assert.equal(blocks.length, 1, "the README has one settings.json block");
	return JSON.parse(blocks[0]![1]!.replace(/^\s*\/\/.*$/gm, "").replace(/,(\s*[}\]])/g, "$1"));
}

/** Runs the README's shell lines that write a project's .pi/settings.json, in `cwd`, as the user would. */
function runProjectSnippet(cwd: string, env: Record<string, string | undefined>): void {
	const block = [...readmeInstall().matchAll(/```sh\n([\s\S]*?)```/g)]
		.map((match) => match[1]!)
		.find((text) => text.includes(".pi/settings.json"));
	assert.ok(block, "the README has a shell snippet for a project's settings");
	assert.doesNotMatch(block, /~\/\.pi\/agent/, "no hard-coded agent directory");
	execFileSync("bash", ["-e", "-c", block], { cwd, env: { ...process.env, ...env } });
}

/** Pi's real resource loader on a home directory laid out as the README says; returns the load order. */
async function loadOrder(home: string, withProjectExtensions: boolean): Promise<string[]> {
	const agentDir = join(home, ".pi", "agent");
	const cwd = join(home, "project");
	mkdirSync(join(agentDir, "extensions"), { recursive: true });
	mkdirSync(join(cwd, ".pi", "extensions"), { recursive: true });
	// The bundle, where the README tells the user to put it.
	symlinkSync(REPO_ROOT, join(agentDir, "pi-overflow"));
	// Other extensions: auto-discovered, listed in settings, and a package.
	writeFileSync(join(agentDir, "extensions", "auto-global.ts"), EXTENSION);
	writeFileSync(join(agentDir, "listed.ts"), EXTENSION);
	const pkg = join(agentDir, "other-package");
	mkdirSync(pkg);
	writeFileSync(join(pkg, "package.json"), JSON.stringify({ name: "other-package", pi: { extensions: ["./ext.ts"] } }));
	writeFileSync(join(pkg, "ext.ts"), EXTENSION);
	const global = readmeSettings();
	// The user's own entries go where the README's comments say.
	global.extensions.push("listed.ts");
	global.packages.splice(global.packages.length - 1, 0, "other-package");
	writeFileSync(join(agentDir, "settings.json"), JSON.stringify(global, null, 2));
	if (withProjectExtensions) {
		writeFileSync(join(cwd, ".pi", "extensions", "auto-project.ts"), EXTENSION);
		// The agent directory named by PI_CODING_AGENT_DIR, not the default: the snippet must follow it.
		runProjectSnippet(cwd, { HOME: join(home, "not-the-agent-home"), PI_CODING_AGENT_DIR: agentDir });
	}
	const previousHome = process.env.HOME;
	process.env.HOME = home;
	try {
		const settingsManager = SettingsManager.create(cwd, agentDir);
		const loader = new DefaultResourceLoader({ cwd, agentDir, settingsManager });
		await loader.reload();
		const result = loader.getExtensions();
		assert.deepEqual(result.errors, []);
		return result.extensions.map((extension) => extension.path.split("/").slice(-2).join("/"));
	} finally {
		process.env.HOME = previousHome;
	}
}

test("the README's settings.json loads capture.ts first and index.ts last, around extensions from every other place", async (t) => {
	const names = await loadOrder(await createTempDir(t), false);
	assert.equal(names[0], "pi-overflow/capture.ts", `load order: ${names.join(", ")}`);
	assert.equal(names.at(-1), "pi-overflow/index.ts", `load order: ${names.join(", ")}`);
	for (const other of ["extensions/auto-global.ts", "agent/listed.ts", "other-package/ext.ts"]) {
		assert.ok(names.includes(other), `${other} loaded (order: ${names.join(", ")})`);
	}
	assert.equal(names.filter((name) => name.startsWith("pi-overflow/")).length, 2);
});

test("with the README's project settings, capture.ts also precedes a project's own extensions", async (t) => {
	const names = await loadOrder(await createTempDir(t), true);
	assert.equal(names[0], "pi-overflow/capture.ts", `load order: ${names.join(", ")}`);
	assert.equal(names.at(-1), "pi-overflow/index.ts", `load order: ${names.join(", ")}`);
	assert.ok(names.includes("extensions/auto-project.ts"));
	assert.equal(names.filter((name) => name === "pi-overflow/capture.ts").length, 1, "loaded once");
});
