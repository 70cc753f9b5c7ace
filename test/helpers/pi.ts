// Runs a real Pi session for end-to-end tests: createAgentSession with in-memory session,
// settings, auth and model registry, the real bash/read tools, extensions loaded from files in
// the given order, and a scripted faux model. Every run uses the caller's fresh agent directory
// (PI_CODING_AGENT_DIR), never ~/.pi.

import type { ToolResultMessage } from "@mariozechner/pi-ai";
import { type FauxResponseStep, registerFauxProvider } from "@mariozechner/pi-ai";
import {
	AuthStorage,
	createAgentSession,
	DefaultResourceLoader,
	ModelRegistry,
	SessionManager,
	SettingsManager,
} from "@mariozechner/pi-coding-agent";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

export const REPO_ROOT = fileURLToPath(new URL("../..", import.meta.url));
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
	const previousAgentDir = process.env.PI_CODING_AGENT_DIR;
	process.env.PI_CODING_AGENT_DIR = options.agentDir;
	const faux = registerFauxProvider();
	try {
		faux.setResponses(options.responses);
		const model = faux.getModel();
		const authStorage = AuthStorage.inMemory();
		authStorage.setRuntimeApiKey(model.provider, "faux-key");
		const modelRegistry = ModelRegistry.inMemory(authStorage);
		const settingsManager = SettingsManager.inMemory({ compaction: { enabled: false } });
		const cwd = options.cwd ?? options.agentDir;
		const resourceLoader = new DefaultResourceLoader({
			cwd,
			agentDir: options.agentDir,
			settingsManager,
			additionalExtensionPaths: options.extensionPaths,
		});
		await resourceLoader.reload();
		const { session, extensionsResult } = await createAgentSession({
			cwd,
			agentDir: options.agentDir,
			model,
			authStorage,
			modelRegistry,
			settingsManager,
			sessionManager: SessionManager.inMemory(),
			resourceLoader,
		});
		const extensionErrors: PiRunResult["extensionErrors"] = [];
		await session.bindExtensions({ onError: (error) => extensionErrors.push(error) });
		try {
			await session.prompt(options.prompt ?? "go");
		} finally {
			session.dispose();
		}
		const toolResults = session.messages.filter((message): message is ToolResultMessage => message.role === "toolResult");
		return { sessionId: session.sessionId, toolResults, extensionErrors, loadErrors: extensionsResult.errors };
	} finally {
		faux.unregister();
		if (previousAgentDir === undefined) delete process.env.PI_CODING_AGENT_DIR;
		else process.env.PI_CODING_AGENT_DIR = previousAgentDir;
	}
}

/** A stage-2 entry file with an injected config, for tests that need non-default settings. */
export function writeConfiguredIndex(dir: string, configText: string): string {
	const path = join(dir, "overflow-configured.ts");
	writeFileSync(
		path,
		[
			`import { getAgentDir } from "@mariozechner/pi-coding-agent";`,
			`import { parseConfig } from ${JSON.stringify(join(REPO_ROOT, "src", "config.ts"))};`,
			`import { createOverflowExtension } from ${JSON.stringify(join(REPO_ROOT, "src", "extension.ts"))};`,
			`import { resolveStoreRoot } from ${JSON.stringify(join(REPO_ROOT, "src", "store", "index.ts"))};`,
			`export default function (pi: any) {`,
			`  createOverflowExtension({ config: parseConfig(${JSON.stringify(configText)}), configPath: "test-config.json", storeRoot: resolveStoreRoot(getAgentDir()) })(pi);`,
			`}`,
		].join("\n"),
	);
	return path;
}
