// Stage 2 wiring: the bound tool_result handler, the overflow_query tool and the session_start
// housekeeping. Invariants: the handler never throws into Pi; housekeeping never delays start-up
// (it runs after session_start has returned); each warning to the user is given once per process.

import type { ExtensionAPI, ExtensionContext } from "@mariozechner/pi-coding-agent";
import { boundToolResult } from "./bound.js";
import { type ConfigResult, createDefaultConfig, formatConfigProblems, loadConfig, type OverflowConfig } from "./config.js";
import { disposeSearchWorkers } from "./search.js";
import { findStash } from "./stash.js";
import { OverflowStore, type StoreOptions } from "./store/index.js";
import { registerQueryTool } from "./tool.js";

const DAY_MS = 24 * 60 * 60 * 1000;
const WARNED_KEY = Symbol.for("my-pi.pi-overflow.warned.v1");

export interface OverflowExtensionOptions {
	/** config/pi-overflow.json of the bundle. */
	configPath?: string;
	/** A parsed config, instead of reading configPath (tests). */
	config?: ConfigResult;
	/** `<agentDir>/my-pi/pi-overflow`. */
	storeRoot: string;
	/** Injected file system for the store (fault tests). */
	storeFs?: StoreOptions["fs"];
	now?: () => number;
	/** Called when background housekeeping ends (tests and benchmarks wait on it). */
	onHousekeeping?: (result: Awaited<ReturnType<OverflowStore["housekeep"]>>) => void;
}

/** Warnings shown once per process, whichever module instance (after /reload) asks. */
function warnOnce(ctx: ExtensionContext | undefined, message: string): void {
	const holder = globalThis as typeof globalThis & { [WARNED_KEY]?: Set<string> };
	holder[WARNED_KEY] ??= new Set();
	if (holder[WARNED_KEY].has(message)) return;
	holder[WARNED_KEY].add(message);
	if (ctx?.hasUI) ctx.ui.notify(message, "warning");
	else process.stderr.write(`${message}\n`);
}

/** Tool calls whose start time is remembered at once (a call whose result never comes is forgotten). */
const MAX_TRACKED_TOOL_CALLS = 1024;

/** The pi-overflow ids of the tool results already in a session (details.overflow.id). */
function findShownIds(entries: readonly unknown[]): string[] {
	const ids: string[] = [];
	for (const entry of entries) {
		const message = (entry as { type?: unknown; message?: { role?: unknown; details?: unknown } }).message;
		if ((entry as { type?: unknown }).type !== "message" || message?.role !== "toolResult") continue;
		const overflow = (message.details as { overflow?: { id?: unknown } } | undefined)?.overflow;
		if (typeof overflow?.id === "string") ids.push(overflow.id);
	}
	return ids;
}

export const MISSING_CAPTURE_WARNING =
	"pi-overflow: capture.ts is not loaded before the other extensions, so results an earlier extension cut cannot be recovered from memory; load capture.ts first and index.ts last (see the README).";

export function createOverflowExtension(options: OverflowExtensionOptions): (pi: ExtensionAPI) => void {
	return (pi: ExtensionAPI) => {
		const loaded: ConfigResult =
			options.config ?? (options.configPath ? loadConfig(options.configPath) : { config: createDefaultConfig(), problems: [] });
		const config: OverflowConfig = loaded.config;
		const store = new OverflowStore({ root: options.storeRoot, fs: options.storeFs, now: options.now, maxStoreBytes: config.maxStoreBytes });
		const configWarning = formatConfigProblems(loaded.problems, options.configPath);
		let startupWarned = false;

		// When each tool call started: a spill file it names must have been written since.
		const toolStarts = new Map<string, number>();

		pi.on("session_start", (_event, ctx) => {
			if (configWarning) warnOnce(ctx, configWarning);
			startupWarned = true;
			const sessionId = ctx.sessionManager.getSessionId();
			// A resumed session's ids are never issued again, even when their entries expired.
			if (typeof ctx.sessionManager.getEntries === "function") store.rememberEntryIds(findShownIds(ctx.sessionManager.getEntries()));
			// After session_start returns: start-up never waits for the store.
			setImmediate(() => {
				store
					.housekeep({ retentionMs: config.retentionDays * DAY_MS, maxStoreBytes: config.maxStoreBytes, currentSessionId: sessionId })
					.then((result) => options.onHousekeeping?.(result))
					.catch(() => {});
			});
		});

		pi.on("tool_call", (event) => {
			// The earliest start wins when a provider reuses a toolCallId: the bound stays safe.
			if (!toolStarts.has(event.toolCallId)) toolStarts.set(event.toolCallId, (options.now ?? Date.now)());
			if (toolStarts.size > MAX_TRACKED_TOOL_CALLS) toolStarts.delete(toolStarts.keys().next().value as string);
			return undefined;
		});

		pi.on("tool_result", async (event, ctx) => {
			try {
				if (!startupWarned && configWarning) {
					warnOnce(ctx, configWarning);
					startupWarned = true;
				}
				const stash = findStash();
				if (!stash || (!stash.entries.has(event.toolCallId) && !config.exemptTools.includes(event.toolName))) {
					warnOnce(ctx, MISSING_CAPTURE_WARNING);
				}
				const toolStartedAt = toolStarts.get(event.toolCallId);
				toolStarts.delete(event.toolCallId);
				const patch = await boundToolResult(event, {
					config,
					store,
					sessionId: ctx.sessionManager.getSessionId(),
					stash,
					now: options.now,
					toolStartedAt,
				});
				if (!patch) return undefined;
				return { content: patch.content, details: patch.details };
			} catch {
				return undefined; // boundToolResult does not throw; this guards the wiring itself
			}
		});

		// A search still running fails at once instead of waiting for its deadline.
		pi.on("session_shutdown", () => disposeSearchWorkers());

		registerQueryTool(pi, { config, store });
	};
}
