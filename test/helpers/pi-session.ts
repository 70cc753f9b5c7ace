// A real Pi session a test drives call by call: createAgentSession with in-memory settings, auth and
// model registry, a session manager of the caller's choice (in memory, or a file in the temp agent
// dir for resume and fork), extensions loaded from files in order, and a scripted faux model whose
// context window the caller chooses. Invariant: every Context the provider is sent is recorded, in
// order, and PI_CODING_AGENT_DIR points at the caller's fresh agent dir until close(), never ~/.pi.

import type { Context, FauxProviderRegistration, FauxResponseStep } from "@mariozechner/pi-ai";
import { registerFauxProvider } from "@mariozechner/pi-ai";
import { rmSync } from "node:fs";
import {
	type AgentSession,
	AuthStorage,
	createAgentSession,
	DefaultResourceLoader,
	type ExtensionUIContext,
	ModelRegistry,
	type SessionStartEvent,
	SessionManager,
	SettingsManager,
} from "@mariozechner/pi-coding-agent";
import { isPiBashSpillPath } from "../../src/intake/pi-bash.js";

export interface PiSessionOptions {
	/** Fresh temporary agent directory for this run. */
	agentDir: string;
	/** Extension files in load order. */
	extensionPaths: string[];
	cwd?: string;
	/** The faux model's context window, in tokens (default 128 000, the faux default). */
	contextWindow?: number;
	/** Default: in memory. */
	sessionManager?: SessionManager;
	/** How the session starts (resume, fork); default Pi's startup. */
	sessionStartEvent?: SessionStartEvent;
	/** Pi settings, e.g. compaction (auto-compaction is off unless given). */
	settings?: Parameters<typeof SettingsManager.inMemory>[0];
	/** A UI for extensions (ctx.hasUI true); default none, as in print mode. */
	uiContext?: ExtensionUIContext;
}

export interface PiSession {
	session: AgentSession;
	faux: FauxProviderRegistration;
	/** Every Context the provider was sent, in order (compaction summaries too). */
	contexts: Context[];
	extensionErrors: Array<{ extensionPath: string; event: string; error: string }>;
	loadErrors: Array<{ path: string; error: string }>;
	/** Queues the model's next replies; each one's Context is recorded before it runs. */
	respond(...steps: FauxResponseStep[]): void;
	/** Disposes the session, unregisters the model and restores PI_CODING_AGENT_DIR. */
	close(): void;
}

/** The text of a message as the provider gets it (text parts joined with "\n"). */
export function messageText(message: Context["messages"][number]): string {
	if (typeof message.content === "string") return message.content;
	return message.content
		.map((part) => (part.type === "text" ? part.text : part.type === "toolCall" ? JSON.stringify(part.arguments) : ""))
		.join("\n");
}

/** Every text the provider was sent in one call, system prompt included. */
export function contextText(context: Context): string {
	return [context.systemPrompt ?? "", ...context.messages.map(messageText)].join("\n");
}

/**
 * Removes the spill files Pi named in a session's messages (a tool's details.fullOutputPath, the
 * notice of a failed command, a `!command`'s fullOutputPath) that pi-overflow kept: a test leaves
 * no temp file behind. Only `<tmpdir>/pi-bash-<hex>.log` names are touched.
 */
function removeSpillFiles(messages: readonly unknown[]): void {
	for (const message of messages) {
		const { details, fullOutputPath, content } = message as {
			details?: { fullOutputPath?: unknown };
			fullOutputPath?: unknown;
			content?: unknown;
		};
		const texts = Array.isArray(content)
			? content.map((part: { text?: unknown }) => (typeof part?.text === "string" ? part.text : "")).join("\n")
			: "";
		const named = [
			details?.fullOutputPath,
			fullOutputPath,
			...[...texts.matchAll(/Full output: ([^\]\n]+)\]/g)].map((match) => match[1]),
		];
		for (const path of named) if (typeof path === "string" && isPiBashSpillPath(path)) rmSync(path, { force: true });
	}
}

export async function openPiSession(options: PiSessionOptions): Promise<PiSession> {
	const previousAgentDir = process.env.PI_CODING_AGENT_DIR;
	process.env.PI_CODING_AGENT_DIR = options.agentDir;
	const faux = registerFauxProvider({
		// The faux provider's own default model, with the window the caller asks for.
		models: [{ id: "faux-1", name: "Faux Model", contextWindow: options.contextWindow ?? 128_000, maxTokens: 16_384 }],
	});
	const restore = () => {
		faux.unregister();
		if (previousAgentDir === undefined) delete process.env.PI_CODING_AGENT_DIR;
		else process.env.PI_CODING_AGENT_DIR = previousAgentDir;
	};
	try {
		const model = faux.getModel();
		const authStorage = AuthStorage.inMemory();
		authStorage.setRuntimeApiKey(model.provider, "faux-key");
		const modelRegistry = ModelRegistry.inMemory(authStorage);
		const settingsManager = SettingsManager.inMemory({ compaction: { enabled: false }, ...options.settings });
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
			sessionManager: options.sessionManager ?? SessionManager.inMemory(),
			resourceLoader,
			...(options.sessionStartEvent ? { sessionStartEvent: options.sessionStartEvent } : {}),
		});
		const extensionErrors: PiSession["extensionErrors"] = [];
		await session.bindExtensions({ uiContext: options.uiContext, onError: (error) => extensionErrors.push(error) });
		const contexts: Context[] = [];
		const record =
			(step: FauxResponseStep): FauxResponseStep =>
			(context, streamOptions, state, requestModel) => {
				// Tools hold functions: the messages are copied, the rest kept as sent.
				contexts.push({ ...context, messages: structuredClone(context.messages) });
				return typeof step === "function" ? step(context, streamOptions, state, requestModel) : step;
			};
		return {
			session,
			faux,
			contexts,
			extensionErrors,
			loadErrors: extensionsResult.errors,
			respond: (...steps) => faux.appendResponses(steps.map(record)),
			close: () => {
				try {
					removeSpillFiles(session.messages);
					session.dispose();
				} finally {
					restore();
				}
			},
		};
	} catch (error) {
		restore();
		throw error;
	}
}
