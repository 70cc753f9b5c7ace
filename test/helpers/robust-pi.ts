// A stand-in for Pi's ExtensionAPI that records what an extension registers, so the robustness
// suites can drive createOverflowExtension's handlers directly (with an injected store fs and
// clock) without starting a Pi session. Invariant: handlers run exactly as Pi would call them,
// one event and one context, and their return value is handed back untouched.

import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";
import type { ToolResultInput, ToolResultPatch } from "../../src/bound/bound.js";
import { createOverflowExtension, type OverflowExtensionOptions } from "../../src/extension.js";
import type { HousekeepingResult } from "../../src/store/index.js";

type Handler = (event: unknown, ctx: unknown) => unknown;

export interface FakePi {
	api: ExtensionAPI;
	handlers: Map<string, Handler[]>;
	tools: string[];
	notices: string[];
}

export function createFakePi(): FakePi {
	const handlers = new Map<string, Handler[]>();
	const tools: string[] = [];
	const notices: string[] = [];
	const api = {
		on(event: string, handler: Handler) {
			handlers.set(event, [...(handlers.get(event) ?? []), handler]);
		},
		registerTool(tool: { name: string }) {
			tools.push(tool.name);
		},
		registerCommand() {},
	};
	return { api: api as unknown as ExtensionAPI, handlers, tools, notices };
}

/** The context fields the extension reads: the session id and a UI that records notices. */
export function createFakeContext(sessionId: string, notices: string[]): unknown {
	return {
		hasUI: true,
		ui: { notify: (message: string) => notices.push(message) },
		sessionManager: { getSessionId: () => sessionId, getEntries: () => [] },
	};
}

export interface DrivenExtension {
	fake: FakePi;
	/** Runs the registered tool_result handler as Pi would. */
	emitToolResult(event: ToolResultInput): Promise<ToolResultPatch | undefined>;
	/** Runs session_start and waits for the housekeeping it starts in the background. */
	startSession(): Promise<HousekeepingResult>;
}

/** createOverflowExtension wired to a FakePi, for one session id. */
export function driveExtension(
	options: Omit<OverflowExtensionOptions, "onHousekeeping">,
	sessionId: string,
): DrivenExtension {
	const fake = createFakePi();
	let onHousekeeping: (result: HousekeepingResult) => void = () => {};
	createOverflowExtension({ ...options, onHousekeeping: (result) => onHousekeeping(result) })(fake.api);
	const ctx = createFakeContext(sessionId, fake.notices);
	const only = (name: string): Handler => {
		const list = fake.handlers.get(name) ?? [];
		if (list.length !== 1) throw new Error(`expected one ${name} handler, found ${list.length}`);
		return list[0];
	};
	return {
		fake,
		async emitToolResult(event) {
			return (await only("tool_result")(event, ctx)) as ToolResultPatch | undefined;
		},
		async startSession() {
			const done = new Promise<HousekeepingResult>((resolve) => {
				onHousekeeping = resolve;
			});
			await only("session_start")({ type: "session_start" }, ctx);
			return done;
		},
	};
}
