// The re-run benchmark, in a fresh process: one scripted session through the real Pi runtime in
// which the model fixes a real failing test suite (test/helpers/rerun-project.ts: node's test
// runner, five failing tests among 400) — run the suite, fix one test with a one-line edit, run it
// again (as test/e2e/reruns.test.ts does; with `{"reads": true}` the model also reads the test file
// before each fix) — six runs in all, then reads every id back. With compareReruns on
// (the shipped config) or off (`{"compareReruns": false}`). Prints one JSON line: the characters
// of tool output and in all each provider call was sent, how many calls rewrote what an earlier
// call was sent, and whether every id answers. Run by bench/bench.ts (--only=reruns); not a test.

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
	type Context,
	fauxAssistantMessage,
	type FauxResponseStep,
	fauxToolCall,
	type ToolResultMessage,
} from "@mariozechner/pi-ai";
import { CAPTURE_PATH, INDEX_PATH, writeConfiguredIndex } from "../test/helpers/pi.js";
import { messageText, openPiSession } from "../test/helpers/pi-session.js";
import { fixCommand, RUN_SUITE, withoutTestContext, writeFailingProject } from "../test/helpers/rerun-project.js";

const args = JSON.parse(process.argv[2] ?? "{}") as { compareReruns?: boolean; reads?: boolean };
const compareReruns = args.compareReruns !== false;
/** The model reads the test file before each fix (three calls per fix instead of two). */
const readsBetweenRuns = args.reads === true;
const CONTEXT_WINDOW = 200_000;
const RUNS = 6;
const ID_PATTERN = /\[pi-overflow id=([0-9a-f]{12})/g;

const toolUse = (...calls: ReturnType<typeof fauxToolCall>[]) => fauxAssistantMessage(calls, { stopReason: "toolUse" });

interface CallRecord {
	toolChars: number;
	chars: number;
	rewrote: boolean;
}

async function main(): Promise<void> {
	const agentDir = mkdtempSync(join(tmpdir(), "pi-overflow-bench-reruns-"));
	const started = performance.now();
	try {
		const project = join(agentDir, "project");
		writeFailingProject(project);
		const index = compareReruns ? INDEX_PATH : writeConfiguredIndex(agentDir, JSON.stringify({ compareReruns: false }));
		const pi = await openPiSession({
			agentDir,
			cwd: project,
			extensionPaths: [CAPTURE_PATH, index],
			contextWindow: CONTEXT_WINDOW,
		});
		const calls: CallRecord[] = [];
		let previous: string[] = [];
		const seen = new Set<string>();
		const observe =
			(step: FauxResponseStep): FauxResponseStep =>
			(context: Context, options, state, model) => {
				const parts = context.messages.map((message) => `${message.role}:${messageText(message)}`);
				const toolChars = context.messages
					.filter((message): message is ToolResultMessage => message.role === "toolResult")
					.reduce((sum, message) => sum + messageText(message).length, 0);
				calls.push({
					toolChars,
					chars: (context.systemPrompt ?? "").length + parts.reduce((sum, part) => sum + part.length, 0),
					rewrote: previous.some((part, position) => parts[position] !== part),
				});
				previous = parts;
				for (const message of context.messages)
					for (const match of messageText(message).matchAll(ID_PATTERN)) seen.add(match[1]);
				return typeof step === "function" ? step(context, options, state, model) : step;
			};
		try {
			const steps: FauxResponseStep[] = [];
			for (let run = 0; run < RUNS; run++) {
				steps.push(toolUse(fauxToolCall("bash", { command: RUN_SUITE })));
				if (run === RUNS - 1) break;
				if (readsBetweenRuns) steps.push(toolUse(fauxToolCall("read", { path: "suite.test.mjs", limit: 12 })));
				steps.push(toolUse(fauxToolCall("bash", { command: fixCommand(run) })));
			}
			steps.push(fauxAssistantMessage("the suite passes"));
			pi.respond(...steps.map(observe));
			await withoutTestContext(() => pi.session.prompt("make the suite pass"));
			const ids = [...seen];
			pi.respond(
				...[
					toolUse(...ids.map((id) => fauxToolCall("overflow_query", { id, lines: { start: 1, end: 1 } }))),
					fauxAssistantMessage("verified"),
				].map(observe),
			);
			await pi.session.prompt("verify");
			const answered = pi.session.messages.filter(
				(message) => message.role === "toolResult" && message.toolName === "overflow_query" && !message.isError,
			).length;
			const rss = process.resourceUsage().maxRSS * 1024;
			process.stdout.write(
				`${JSON.stringify({
					compareReruns,
					reads: readsBetweenRuns,
					ms: performance.now() - started,
					calls: calls.length,
					toolChars: calls.reduce((sum, call) => sum + call.toolChars, 0),
					totalChars: calls.reduce((sum, call) => sum + call.chars, 0),
					rewrites: calls.filter((call) => call.rewrote).length,
					perCall: process.env.RERUN_BENCH_DETAIL
						? calls.map((call) => `${call.toolChars}${call.rewrote ? "*" : ""}`)
						: undefined,
					ids: ids.length,
					answered,
					extensionErrors: pi.extensionErrors.length,
					rssPeakMiB: Math.round((rss / 1024 / 1024) * 10) / 10,
				})}\n`,
			);
		} finally {
			pi.close();
		}
	} finally {
		rmSync(agentDir, { recursive: true, force: true });
	}
}

main().catch((error: unknown) => {
	process.stdout.write(`${JSON.stringify({ error: error instanceof Error ? error.stack : String(error) })}\n`);
	process.exitCode = 1;
});
