// `npm run demo`: a real Pi session (SDK, real bash tool, scripted faux model, no API key) on a
// huge build log with one error in the middle. Prints what the model saw and what a follow-up
// overflow_query returned. Uses a fresh temporary agent directory; never touches ~/.pi.

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import {
	type Context,
	fauxAssistantMessage,
	fauxToolCall,
	registerFauxProvider,
	type ToolResultMessage,
} from "@mariozechner/pi-ai";
import {
	AuthStorage,
	createAgentSession,
	DefaultResourceLoader,
	ModelRegistry,
	SessionManager,
	SettingsManager,
} from "@mariozechner/pi-coding-agent";

const root = fileURLToPath(new URL("..", import.meta.url));
const agentDir = mkdtempSync(join(tmpdir(), "pi-overflow-demo-"));
process.env.PI_CODING_AGENT_DIR = agentDir;

// A kernel-style build: 200 000 compile lines, one compiler error at line 123 457, make's verdict at the end.
const BUILD = [
	`awk 'BEGIN { for (i = 1; i <= 200000; i++) {`,
	`  if (i == 123457) print "drivers/net/socket.c:88:12: error: struct sock has no member named sk_flags";`,
	`  else printf "  CC [M]  drivers/module_%06d.o\\n", i } }'`,
	`echo "make[2]: *** [scripts/Makefile.build:243: drivers/net/socket.o] Error 1"`,
	`echo "make: *** [Makefile:1912: drivers] Error 2"`,
	`exit 2`,
].join("\n");

function text(message: ToolResultMessage): string {
	return message.content.map((part) => (part.type === "text" ? part.text : `[${part.type}]`)).join("\n");
}

/** The id in the first [pi-overflow id=…] line the model has seen. */
function overflowId(context: Context): string {
	for (const message of context.messages) {
		if (message.role !== "toolResult") continue;
		const id = /\[pi-overflow id=([0-9a-f]{12})/.exec(text(message))?.[1];
		if (id) return id;
	}
	return "000000000000";
}

const faux = registerFauxProvider();
faux.setResponses([
	fauxAssistantMessage([fauxToolCall("bash", { command: BUILD })], { stopReason: "toolUse" }),
	// The scripted model reads the id from the result it just received and asks for the error's context.
	(context) =>
		fauxAssistantMessage([fauxToolCall("overflow_query", { id: overflowId(context), search: "error" })], {
			stopReason: "toolUse",
		}),
	(context) =>
		fauxAssistantMessage(
			[fauxToolCall("overflow_query", { id: overflowId(context), lines: { start: 123455, end: 123459 } })],
			{ stopReason: "toolUse" },
		),
	fauxAssistantMessage("The build fails at drivers/net/socket.c:88: struct sock has no member sk_flags."),
]);

try {
	const model = faux.getModel();
	const authStorage = AuthStorage.inMemory();
	authStorage.setRuntimeApiKey(model.provider, "demo");
	const settingsManager = SettingsManager.inMemory({ compaction: { enabled: false } });
	const resourceLoader = new DefaultResourceLoader({
		cwd: agentDir,
		agentDir,
		settingsManager,
		additionalExtensionPaths: [join(root, "capture.ts"), join(root, "index.ts")],
	});
	await resourceLoader.reload();
	const { session } = await createAgentSession({
		cwd: agentDir,
		agentDir,
		model,
		authStorage,
		modelRegistry: ModelRegistry.inMemory(authStorage),
		settingsManager,
		sessionManager: SessionManager.inMemory(),
		resourceLoader,
	});
	await session.bindExtensions({ onError: (error) => console.error(`extension error: ${error.error}`) });
	const started = performance.now();
	await session.prompt("Build the kernel and tell me why it fails.");
	const elapsed = performance.now() - started;

	const rule = "─".repeat(100);
	for (const message of session.messages) {
		if (message.role !== "toolResult") continue;
		const shown = text(message);
		console.log(rule);
		console.log(
			`${message.toolName}${message.isError ? " (isError)" : ""} — the model sees ${shown.length} characters:`,
		);
		console.log(rule);
		console.log(shown);
	}
	console.log(rule);
	const answer = session.messages.at(-1);
	if (answer?.role === "assistant")
		console.log(`model: ${answer.content.map((part) => (part.type === "text" ? part.text : "")).join("")}`);
	console.log(
		`\nsession took ${(elapsed / 1000).toFixed(2)} s; the store was ${join(agentDir, "my-pi", "pi-overflow")} (removed now)`,
	);
	session.dispose();
} finally {
	faux.unregister();
	rmSync(agentDir, { recursive: true, force: true });
}
