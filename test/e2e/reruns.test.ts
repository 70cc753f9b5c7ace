// Re-runs end to end, through the real Pi runtime and the real bash tool: a scripted session runs a
// real failing test suite (node's own runner, five failing tests among hundreds) six times, fixing
// one test between runs with a one-line edit. Each re-run's view names the fixed test as gone and the
// others as still there; the stale views are stubs in what the model is sent, each saying which run
// superseded it; every id answers, and `since` gives the full comparison.

import assert from "node:assert/strict";
import { join } from "node:path";
import { test } from "node:test";
import { type Context, fauxAssistantMessage, fauxToolCall, type ToolResultMessage } from "@mariozechner/pi-ai";
import { CAPTURE_PATH, INDEX_PATH } from "../helpers/pi.js";
import { messageText, openPiSession } from "../helpers/pi-session.js";
import { FAILING, fixCommand, RUN_SUITE, withoutTestContext, writeFailingProject } from "../helpers/rerun-project.js";
import { recordingUi, type Said } from "../helpers/recording-ui.js";
import { createTempDir } from "../helpers/tmp.js";

const toolUse = (...calls: ReturnType<typeof fauxToolCall>[]) => fauxAssistantMessage(calls, { stopReason: "toolUse" });

function toolResults(context: Context): ToolResultMessage[] {
	return context.messages.filter((message): message is ToolResultMessage => message.role === "toolResult");
}

function viewId(text: string): string | undefined {
	return /^\[pi-overflow id=([0-9a-f]{12})\]/.exec(text)?.[1];
}

test("six runs of a failing suite: each re-run says what is gone, stale views are superseded stubs, every id answers", async (t) => {
	const agentDir = await createTempDir(t);
	const project = join(agentDir, "project");
	writeFailingProject(project);
	const said: Said = [];
	const pi = await openPiSession({
		agentDir,
		cwd: project,
		extensionPaths: [CAPTURE_PATH, INDEX_PATH],
		uiContext: recordingUi(said),
	});
	try {
		// Run, fix, run again … six runs, five fixes; then the model reads every id and one comparison.
		const steps: Parameters<typeof pi.respond> = [];
		for (let run = 0; run < 6; run++) {
			steps.push(toolUse(fauxToolCall("bash", { command: RUN_SUITE })));
			if (run < 5) steps.push(toolUse(fauxToolCall("bash", { command: fixCommand(run) })));
		}
		let finalContext: Context | undefined;
		let ids: string[] = [];
		steps.push((context) => {
			ids = toolResults(context)
				.map((message) => viewId(messageText(message)))
				.filter((id): id is string => id !== undefined);
			return toolUse(...ids.map((id) => fauxToolCall("overflow_query", { id, search: "not ok" })));
		});
		steps.push((context) => {
			finalContext = context;
			return toolUse(fauxToolCall("overflow_query", { id: ids[ids.length - 1], since: ids[0] }));
		});
		steps.push(fauxAssistantMessage("done"));
		pi.respond(...steps);
		await withoutTestContext(() => pi.session.prompt("make the suite pass"));
		assert.deepEqual(pi.extensionErrors, []);

		const runs = pi.session.messages.filter(
			(message): message is ToolResultMessage =>
				message.role === "toolResult" && message.toolName === "bash" && messageText(message).includes(" bash output: "),
		);
		assert.equal(runs.length, 6, "six bounded runs");
		const runIds = runs.map((message) => viewId(messageText(message)) ?? "");
		assert.ok(runIds.every((id) => id !== ""));
		assert.equal(
			runs[0].content.length > 0 && !messageText(runs[0]).includes("re-run"),
			true,
			"the first run is no re-run",
		);
		for (let run = 1; run < 6; run++) {
			const text = messageText(runs[run]);
			const note = text.split("\n").findIndex((line) => line.startsWith("[pi-overflow: re-run"));
			assert.ok(note >= 0 && text.indexOf("[pi-overflow: re-run") < 2000, `run ${run + 1} says what changed up front`);
			const stillFailing = 5 - run;
			assert.match(
				text,
				new RegExp(`\\(id=${runIds[run - 1]}\\): 0 new, \\d+ gone, \\d+ still there`),
				`run ${run + 1}`,
			);
			const gone = text.split("\n").filter((line) => line.startsWith("  gone "));
			assert.ok(gone.length > 0, `run ${run + 1} names what is gone`);
			assert.ok(
				gone.some((line) => line.includes(`${FAILING[run - 1]} adds`)),
				`run ${run + 1} names the fixed test: ${gone.join(" | ")}`,
			);
			for (const name of FAILING.slice(run))
				assert.ok(!gone.some((line) => line.includes(`${name} adds`)), `${name} is not gone`);
			if (stillFailing > 0) assert.match(text, /still there/);
		}

		// What the model was last sent: the five earlier runs are stubs superseded by the next run; the last is whole.
		assert.ok(finalContext);
		const sentRuns = toolResults(finalContext).filter(
			(message) => message.toolName === "bash" && runIds.includes(viewId(messageText(message)) ?? "-"),
		);
		assert.equal(sentRuns.length, 6);
		for (let run = 0; run < 5; run++) {
			const text = messageText(sentRuns[run]);
			assert.match(
				text,
				new RegExp(`superseded by a later run of the same command \\(id=${runIds[run + 1]}\\)`),
				`run ${run + 1} is a stub`,
			);
			assert.ok(text.length <= 1000);
		}
		assert.ok(messageText(sentRuns[5]).includes("[pi-overflow: re-run"), "the last run is shown whole");

		// Every id answers; since gives the whole comparison of the first and the last run.
		const answers = pi.session.messages.filter(
			(message): message is ToolResultMessage => message.role === "toolResult" && message.toolName === "overflow_query",
		);
		assert.equal(answers.length, 7);
		for (const answer of answers) assert.equal(answer.isError, false, messageText(answer));
		const since = messageText(answers[6]);
		assert.match(since, new RegExp(`compared with the earlier run id=${runIds[0]}: 0 new, \\d+ gone`));
		for (const name of FAILING) assert.ok(since.includes(`${name} adds`), `the comparison names ${name}`);

		// The user's side: the listing shows the six runs together, newest first, each with what changed;
		// stats count five re-runs compared, five that showed something fixed.
		await pi.session.prompt("/overflow");
		const listing = said.at(-1)?.message ?? "";
		assert.match(listing, /^6 runs of node --test, newest first:$/m);
		const runLines = listing.split("\n").filter((line) => /^ {2}[0-9a-f]{12} {2}bash /.test(line));
		assert.deepEqual(
			runLines.map((line) => line.slice(2, 14)),
			[...runIds].reverse(),
		);
		assert.match(runLines[0], /just now {2}\d+ gone$/, "the last run: the rest gone, nothing still there");
		for (const line of runLines.slice(1, 5)) assert.match(line, / {2}\d+ gone, \d+ still there$/);
		await pi.session.prompt("/overflow stats");
		assert.match(said.at(-1)?.message ?? "", /^ {2}bash +\d+ +\d+ +\d+ +5 +5$/m);
	} finally {
		pi.close();
	}
});

test("a re-run is compared with a last run that fit and was left whole, from the text the session kept", async (t) => {
	const agentDir = await createTempDir(t);
	const project = join(agentDir, "project");
	writeFailingProject(project);
	const pi = await openPiSession({ agentDir, cwd: project, extensionPaths: [CAPTURE_PATH, INDEX_PATH] });
	try {
		const show = "cat build.log; test ! -s errors.txt";
		const small =
			"printf 'compiling a.c\\nsrc/a.c:3:1: error: expected semicolon\\n' > build.log; printf x > errors.txt";
		const large =
			"seq 1 20000 | sed 's/^/  CC module_/' > build.log; echo 'src/b.c:9:2: error: unknown type name pid_t' >> build.log";
		pi.respond(
			toolUse(fauxToolCall("bash", { command: small })),
			toolUse(fauxToolCall("bash", { command: show })),
			toolUse(fauxToolCall("bash", { command: large })),
			toolUse(fauxToolCall("bash", { command: show })),
			fauxAssistantMessage("done"),
		);
		await pi.session.prompt("build");
		assert.deepEqual(pi.extensionErrors, []);
		const shows = pi.session.messages.filter(
			(message): message is ToolResultMessage =>
				message.role === "toolResult" &&
				messageText(message).includes("compiling a.c") === false &&
				message.toolName === "bash",
		);
		const first = pi.session.messages.find(
			(message): message is ToolResultMessage =>
				message.role === "toolResult" && messageText(message).includes("compiling a.c"),
		);
		assert.ok(first && !messageText(first).startsWith("[pi-overflow"), "the first run fit and was left whole");
		const rerun = shows.find((message) => messageText(message).startsWith("[pi-overflow id="));
		assert.ok(rerun, "the re-run was bounded");
		const text = messageText(rerun);
		assert.match(
			text,
			/\n\[pi-overflow: re-run: since the last run of this command \(its output fit and was shown whole\): 1 new, 1 gone, 0 still there; exit code 1 again\]\n/,
		);
		assert.match(text, /\n {2}new +20001: src\/b\.c:9:2: error: unknown type name pid_t\n/);
		assert.match(text, /\n {2}gone +2: src\/a\.c:3:1: error: expected semicolon\n/);
	} finally {
		pi.close();
	}
});
