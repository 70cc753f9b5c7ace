// Runs a real Pi session for end-to-end tests: createAgentSession with in-memory session,
// settings, auth and model registry, the real bash/read tools, extensions loaded from files in
// the given order, and a scripted faux model. Every run uses the caller's fresh agent directory
// (PI_CODING_AGENT_DIR), never ~/.pi.

import type { FauxResponseStep, ToolResultMessage } from "@mariozechner/pi-ai";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { REPO_ROOT } from "./paths.js";
import { openPiSession } from "./pi-session.js";

export { REPO_ROOT };
export const CAPTURE_PATH = join(REPO_ROOT, "capture.ts");
export const INDEX_PATH = join(REPO_ROOT, "index.ts");
export const TEST_TOOLS_PATH = join(REPO_ROOT, "test", "fixtures", "ext", "tools.ts");
export const CUTTER_PATH = join(REPO_ROOT, "test", "fixtures", "ext", "cutter.ts");

export interface PiRunOptions {
	/** Fresh temporary agent directory for this run. */
	agentDir: string;
	/** Extension files in load order. */
	extensionPaths: string[];
	/** The scripted model's replies; a function step sees the context so far. */
	responses: FauxResponseStep[];
	cwd?: string;
	prompt?: string;
}

export interface PiRunResult {
	sessionId: string;
	toolResults: ToolResultMessage[];
	extensionErrors: Array<{ extensionPath: string; event: string; error: string }>;
	loadErrors: Array<{ path: string; error: string }>;
}

/** The text parts of a tool result message joined with "\n". */
export function resultText(message: ToolResultMessage): string {
	return message.content
		.filter((part): part is { type: "text"; text: string } => part.type === "text")
		.map((part) => part.text)
		.join("\n");
}

export async function runPi(options: PiRunOptions): Promise<PiRunResult> {
	const pi = await openPiSession({
		agentDir: options.agentDir,
		extensionPaths: options.extensionPaths,
		cwd: options.cwd,
	});
	try {
		pi.respond(...options.responses);
		await pi.session.prompt(options.prompt ?? "go");
	} finally {
		pi.close();
	}
	const toolResults = pi.session.messages.filter(
		(message): message is ToolResultMessage => message.role === "toolResult",
	);
	return {
		sessionId: pi.session.sessionId,
		toolResults,
		extensionErrors: pi.extensionErrors,
		loadErrors: pi.loadErrors,
	};
}

export interface SharedPi {
	/** Prompts once with the given replies; the result holds only this run's tool results. */
	run(responses: FauxResponseStep[], prompt?: string): Promise<PiRunResult>;
	close(): void;
}

/**
 * One Pi session that several tests take turns on, for tests with the same extensions and config
 * whose assertions are independent: each run sees only the tool results it caused.
 */
export async function openSharedPi(options: Omit<PiRunOptions, "responses" | "prompt">): Promise<SharedPi> {
	const pi = await openPiSession({
		agentDir: options.agentDir,
		extensionPaths: options.extensionPaths,
		cwd: options.cwd,
	});
	return {
		async run(responses, prompt = "go") {
			const before = pi.session.messages.length;
			pi.respond(...responses);
			await pi.session.prompt(prompt);
			const toolResults = pi.session.messages
				.slice(before)
				.filter((message): message is ToolResultMessage => message.role === "toolResult");
			return {
				sessionId: pi.session.sessionId,
				toolResults,
				extensionErrors: pi.extensionErrors,
				loadErrors: pi.loadErrors,
			};
		},
		close: () => pi.close(),
	};
}

/** A stage-2 entry file with an injected config, for tests that need non-default settings. */
export function writeConfiguredIndex(
	dir: string,
	configText: string,
	options: { frozenScanClock?: boolean; racingScanClock?: boolean } = {},
): string {
	// A frozen scan clock: the signal search's time budget never runs out, whatever the machine's load.
	// A racing one: each reading is a second after the last, as on a machine where every step of the
	// search takes a second, so a budget that applies runs out at once, whatever the machine.
	const clock = options.frozenScanClock
		? ", scanClock: () => 0"
		: options.racingScanClock
			? ", scanClock: ((t) => () => (t += 1000))(0)"
			: "";
	const path = join(dir, "overflow-configured.ts");
	writeFileSync(
		path,
		[
			`import { getAgentDir } from "@mariozechner/pi-coding-agent";`,
			`import { parseConfig } from ${JSON.stringify(join(REPO_ROOT, "src", "config", "config.ts"))};`,
			`import { createOverflowExtension } from ${JSON.stringify(join(REPO_ROOT, "src", "extension.ts"))};`,
			`import { resolveStoreRoot } from ${JSON.stringify(join(REPO_ROOT, "src", "store", "index.ts"))};`,
			`export default function (pi: any) {`,
			`  createOverflowExtension({ config: parseConfig(${JSON.stringify(configText)}), configPath: "test-config.json", storeRoot: resolveStoreRoot(getAgentDir())${clock} })(pi);`,
			`}`,
		].join("\n"),
	);
	return path;
}
