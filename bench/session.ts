// The long-session benchmark, in a fresh process: one scripted session through the real Pi runtime
// (4 prompts, 36 tool turns, 27 large results from real bash, test tools and `!` commands, parallel
// calls, overflow_query calls back into old ids), with masking on (the shipped config) or off
// (`{"masking": false}`: maskAfterChars 0). Prints one JSON line: the characters each provider call
// was sent, how many calls rewrote what an earlier call was sent, the largest context, and whether
// every id the model saw answers overflow_query. Run by bench/bench.ts; not a test.

import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
	type Context,
	fauxAssistantMessage,
	type FauxResponseStep,
	fauxToolCall,
	type ToolResultMessage,
} from "@mariozechner/pi-ai";
import { CAPTURE_PATH, INDEX_PATH, TEST_TOOLS_PATH, writeConfiguredIndex } from "../test/helpers/pi.js";
import { messageText, openPiSession } from "../test/helpers/pi-session.js";

const args = JSON.parse(process.argv[2] ?? "{}") as { masking?: boolean; config?: Record<string, unknown> };
const masking = args.masking !== false;
/** A current large model's window, in tokens. */
const CONTEXT_WINDOW = 200_000;
const ID_PATTERN = /\[pi-overflow id=([0-9a-f]{12})/g;

const toolUse = (...calls: ReturnType<typeof fauxToolCall>[]) => fauxAssistantMessage(calls, { stopReason: "toolUse" });

/** A failing build of `lines` lines with one compiler error at `errorAt`, printed by awk (fast). */
function buildCommand(lines: number, errorAt: number, unit: string): string {
	return `seq 1 ${lines} | awk '{ if ($1 == ${errorAt}) print "src/${unit}.c:88:12: error: struct sock has no member named sk_flags"; else print "  CC [M]  drivers/${unit}/module_" $1 ".o" }'; echo "make: *** [Makefile:1912: ${unit}] Error 2"`;
}

/** Every pi-overflow id in one context. */
function idsIn(context: Context): string[] {
	return [
		...new Set(
			context.messages.flatMap((message) => [...messageText(message).matchAll(ID_PATTERN)].map((match) => match[1])),
		),
	];
}

/** The oldest id the model sees: a query back into old output. */
const queryOldest =
	(search: string): FauxResponseStep =>
	(context) => {
		const [oldest] = idsIn(context);
		return oldest
			? toolUse(fauxToolCall("overflow_query", { id: oldest, search }))
			: toolUse(fauxToolCall("small", {}));
	};

/** The tool turns of one prompt (prompt p of 4), mixed: real bash, test tools, parallel calls, queries. */
function turnsOf(p: number): FauxResponseStep[] {
	const at = (n: number) => 1_000 + p * 100 + n;
	return [
		toolUse(fauxToolCall("bash", { command: buildCommand(120_000, 60_000 + p, `net${p}`) })),
		toolUse(fauxToolCall("big_log", { lines: 30_000, errors: { [at(1)]: `ERROR worker ${p} lost its lease` } })),
		toolUse(fauxToolCall("small", {}), fauxToolCall("read", { path: "notes.txt" })),
		toolUse(fauxToolCall("json_doc", { count: 3_000 })),
		toolUse(
			fauxToolCall("big_log", { lines: 20_000, errors: { [at(2)]: `ERROR shard ${p} failed` } }),
			fauxToolCall("bash", { command: `seq 1 ${50_000 + p}` }),
		),
		queryOldest("error|ERROR"),
		toolUse(fauxToolCall("image_log", { lines: 15_000 })),
		toolUse(fauxToolCall("bash", { command: buildCommand(40_000, 20_000 + p, `fs${p}`) })),
		queryOldest("Error 2|lease"),
	];
}

interface CallRecord {
	chars: number;
	rewrote: boolean;
}

/** Characters of one context as sent: system prompt and every message's text. */
function measure(context: Context): { chars: number; parts: string[] } {
	const parts = context.messages.map((message) => `${message.role}:${messageText(message)}`);
	return { chars: (context.systemPrompt ?? "").length + parts.reduce((sum, part) => sum + part.length, 0), parts };
}

async function main(): Promise<void> {
	const agentDir = mkdtempSync(join(tmpdir(), "pi-overflow-bench-session-"));
	const started = performance.now();
	try {
		writeFileSync(join(agentDir, "notes.txt"), `${"a short note the model reads\n".repeat(100)}`);
		// `config` tries other settings (e.g. maskAfterChars) against the shipped ones.
		const config = masking ? args.config : { ...args.config, maskAfterChars: 0 };
		const index = config === undefined ? INDEX_PATH : writeConfiguredIndex(agentDir, JSON.stringify(config));
		const pi = await openPiSession({
			agentDir,
			extensionPaths: [CAPTURE_PATH, TEST_TOOLS_PATH, index],
			contextWindow: CONTEXT_WINDOW,
		});
		const calls: CallRecord[] = [];
		let previous: string[] = [];
		const seen = new Set<string>();
		const observe =
			(step: FauxResponseStep): FauxResponseStep =>
			(context, options, state, model) => {
				const { chars, parts } = measure(context);
				calls.push({ chars, rewrote: previous.some((part, index) => parts[index] !== part) });
				previous = parts;
				for (const id of idsIn(context)) seen.add(id);
				return typeof step === "function" ? step(context, options, state, model) : step;
			};
		let bigResults = 0;
		try {
			for (let p = 1; p <= 4; p++) {
				const bash = await pi.session.executeBash(buildCommand(60_000, 30_000 + p, `user${p}`));
				if (bash.truncated) bigResults++;
				pi.respond(...[...turnsOf(p), fauxAssistantMessage(`prompt ${p} done`)].map(observe));
				await pi.session.prompt(`prompt ${p}`);
			}
			bigResults += pi.session.messages.filter(
				(message) => message.role === "toolResult" && (message.details as { overflow?: unknown } | undefined)?.overflow,
			).length;
			// Every id the model ever saw, read back once (line 1 only: the answers stay small).
			const ids = [...seen];
			pi.respond(
				...[
					toolUse(...ids.map((id) => fauxToolCall("overflow_query", { id, lines: { start: 1, end: 1 } }))),
					fauxAssistantMessage("verified"),
				].map(observe),
			);
			await pi.session.prompt("verify");
			const answers = pi.session.messages
				.slice(-ids.length - 1)
				.filter((message): message is ToolResultMessage => message.role === "toolResult");
			const answered = answers.filter((answer) => answer.toolName === "overflow_query" && !answer.isError).length;
			const toolTurns = pi.session.messages.filter(
				(message) => message.role === "assistant" && message.content.some((part) => part.type === "toolCall"),
			).length;
			const rss = process.resourceUsage().maxRSS * 1024;
			process.stdout.write(
				`${JSON.stringify({
					masking,
					ms: performance.now() - started,
					calls: calls.length,
					toolTurns,
					bigResults,
					totalChars: calls.reduce((sum, call) => sum + call.chars, 0),
					maxChars: Math.max(...calls.map((call) => call.chars)),
					rewrites: calls.filter((call) => call.rewrote).length,
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
