// Stage 2 wiring: the bound tool_result handler (each result within its share of the context
// window; Pi's spill file released once its output is stored), the context handler (the user's
// `!command` output bounded, old views masked in what the model is sent, only views pi-overflow
// itself bounded), the overflow_query tool, the /overflow command, the recall telemetry and the
// session_start housekeeping. Invariants: no handler throws into Pi; housekeeping never delays
// start-up (it runs after session_start has returned); each warning to the user is given once per
// process, at session start.

import type { ContextEvent, ExtensionAPI, ExtensionContext } from "@mariozechner/pi-coding-agent";
import { type BoundDependencies, boundToolResult } from "./bound/bound.js";
import { capViewBudget, computeTurnBudget, SharedBudget, type WindowUsage } from "./bound/budget.js";
import { describeFullOutput } from "./bound/full-output.js";
import {
	type ConfigResult,
	createDefaultConfig,
	formatLayeredProblems,
	loadLayeredConfig,
	type OverflowConfig,
} from "./config/config.js";
import { markSessionStart, MISSING_CAPTURE_WARNING, warnOnce } from "./surface/load-check.js";
import {
	type ContextMessage,
	maskOldViews,
	MaskingState,
	measureContextChars,
	readToolResultView,
} from "./context/masking.js";
import { OwnViews, readSessionLineage } from "./context/own-views.js";
import { findSuccessors } from "./context/superseded.js";
import { findEarlierCall, readEarlierRun } from "./bound/previous-run.js";
import { CallIdentities, type RunIdentity } from "./reruns/run-key.js";
import { prewarmSignalSearch } from "./bound/prewarm.js";
import { disposeSearchWorkers } from "./query/engine/search.js";
import { findStash, measureTextParts } from "./intake/stash.js";
import { OverflowStore, type StoreOptions } from "./store/index.js";
import { listSessionRows, registerOverflowCommand } from "./surface/overflow-command.js";
import { makeSpillFilePrivate, releaseSpillFile } from "./intake/spill-release.js";
import { RecallTelemetry } from "./surface/telemetry.js";
import { QUERY_TOOL_NAME, registerQueryTool } from "./surface/tool.js";
import {
	USER_BASH_ENTRY_TYPE,
	type UserBashBoundDependencies,
	type UserBashRecord,
	UserBashViews,
	UserSpillGuard,
} from "./context/user-bash.js";

const DAY_MS = 24 * 60 * 60 * 1000;

export interface OverflowExtensionOptions {
	/** config/pi-overflow.json of the bundle. */
	configPath?: string;
	/** The user's overrides, `<agentDir>/my-pi/pi-overflow.json`, layered field by field over configPath. */
	userConfigPath?: string;
	/** A parsed config, instead of reading configPath (tests). */
	config?: ConfigResult;
	/** `<agentDir>/my-pi/pi-overflow`. */
	storeRoot: string;
	/** Injected file system for the store (fault tests). */
	storeFs?: StoreOptions["fs"];
	now?: () => number;
	/** The clock the signal search's time budget is measured with; default performance.now (tests freeze it). */
	scanClock?: () => number;
	/** Called when background housekeeping ends (tests and benchmarks wait on it). */
	onHousekeeping?: (result: Awaited<ReturnType<OverflowStore["housekeep"]>>) => void;
	/** Called after each context event with what masking did (benchmarks count the rewrites). */
	onContext?: (report: { masked: number; stepped: boolean; chars: number }) => void;
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

function readOverflowId(details: unknown): string | undefined {
	const id = (details as { overflow?: { id?: unknown } } | undefined)?.overflow?.id;
	return typeof id === "string" ? id : undefined;
}

/** What Pi says of the context window, when the host provides it. */
function readWindowUsage(ctx: ExtensionContext): WindowUsage | undefined {
	if (typeof ctx.getContextUsage !== "function") return undefined;
	const usage = ctx.getContextUsage();
	return usage === undefined ? undefined : { contextWindow: usage.contextWindow, tokens: usage.tokens };
}

/** The ids of an assistant message's tool calls that pi-overflow may bound (not exempt). */
function listBoundedCalls(message: unknown, exemptTools: readonly string[]): string[] {
	const { role, content } = message as { role?: unknown; content?: unknown };
	if (role !== "assistant" || !Array.isArray(content)) return [];
	const ids: string[] = [];
	for (const part of content as Array<{ type?: unknown; id?: unknown; name?: unknown }>) {
		if (part?.type === "toolCall" && typeof part.id === "string" && !exemptTools.includes(String(part.name)))
			ids.push(part.id);
	}
	return ids;
}

export { MISSING_CAPTURE_WARNING } from "./surface/load-check.js";

/** The config files read, lowest first; none when the options give a parsed config. */
function loadOptionsConfig(options: OverflowExtensionOptions): ConfigResult {
	if (options.config) return options.config;
	const paths = [options.configPath, options.userConfigPath].filter(
		(path): path is string => typeof path === "string" && path !== "",
	);
	return paths.length > 0 ? loadLayeredConfig(paths) : { config: createDefaultConfig(), problems: [] };
}

/** At session start: says once whether capture.ts is missing (capture.ts itself says when it loads after index.ts). */
function checkCaptureLoaded(event: object, ctx: ExtensionContext): void {
	const seen = markSessionStart("index", event);
	if (seen.has("capture")) return;
	const decide = () => {
		// capture.ts marks the same event when it loads after index.ts (and warns itself).
		if (!markSessionStart("index", event).has("capture")) warnOnce(ctx, MISSING_CAPTURE_WARNING);
	};
	if (!findStash()) decide();
	else setImmediate(decide); // a stash from before a /reload: wait for the handlers after this one
}

/** What the handlers of one loaded extension share. */
interface OverflowRuntime {
	options: OverflowExtensionOptions;
	config: OverflowConfig;
	store: OverflowStore;
	telemetry: RecallTelemetry;
	userBash: UserBashViews;
	/** Makes the spill files of `!`/`!!` commands private when they end; absent with releaseSpillFiles false. */
	userSpills?: UserSpillGuard;
	masking: MaskingState;
	/** Which results' views are pi-overflow's own (the only ones masking may hide). */
	ownViews: OwnViews;
	/** This session's id and the ids of the sessions it was forked or branched from, once read. */
	lineage?: { sessionId: string; ids: Promise<Set<string>> };
	configWarnings: string[];
	startupWarned: boolean;
	/** The session's entries, for /overflow's completions (which get no context). */
	sessionEntries?: () => readonly unknown[];
	/** When each tool call started: a spill file it names must have been written since. */
	toolStarts: Map<string, number>;
	/** The budget the tool calls of the latest assistant turn share. */
	turnBudget?: SharedBudget;
	/** Characters last sent to the model: the tokens in use when Pi does not know them. */
	sentChars: number;
	/** Tool calls as runs of a command (re-runs are compared and superseded). */
	identities: CallIdentities;
}

export function createOverflowExtension(options: OverflowExtensionOptions): (pi: ExtensionAPI) => void {
	return (pi: ExtensionAPI) => {
		const loaded = loadOptionsConfig(options);
		const config: OverflowConfig = loaded.config;
		const store = new OverflowStore({
			root: options.storeRoot,
			fs: options.storeFs,
			now: options.now,
			maxStoreBytes: config.maxStoreBytes,
		});
		const runtime: OverflowRuntime = {
			options,
			config,
			store,
			telemetry: new RecallTelemetry({ root: store.root, now: options.now }),
			userBash: new UserBashViews({
				persist: (record: UserBashRecord) => pi.appendEntry(USER_BASH_ENTRY_TYPE, record),
				now: options.now,
				// Kept, made private: Pi's screen names the file (a tool result's names the private copy).
				onSpillBounded: config.releaseSpillFiles ? (_patch, spillPath) => makeSpillFilePrivate(spillPath) : undefined,
			}),
			userSpills: config.releaseSpillFiles
				? new UserSpillGuard({ makePrivate: (path) => makeSpillFilePrivate(path) })
				: undefined,
			masking: new MaskingState(),
			ownViews: new OwnViews((id) => store.readMeta(id)),
			configWarnings: formatLayeredProblems(loaded.problems, options.configPath),
			startupWarned: false,
			toolStarts: new Map(),
			sentChars: 0,
			identities: new CallIdentities(),
		};
		onSessionStart(pi, runtime);
		onToolResults(pi, runtime);
		onContext(pi, runtime);
		// A search still running fails at once instead of waiting for its deadline.
		pi.on("session_shutdown", async (_event, ctx) => {
			disposeSearchWorkers();
			// A `!`/`!!` command that ended just before: its spill file is private before Pi exits.
			await runtime.userSpills?.close(ctx.sessionManager);
		});
		registerQueryTool(pi, { config, store });
		const isMasked = (id: string) => runtime.masking.masked.has(id);
		// The listing clips its lines to the terminal Pi draws on (undefined over RPC or a pipe).
		const columns = () => (process.stdout.isTTY ? process.stdout.columns : undefined);
		registerOverflowCommand(
			pi,
			{ config, store, telemetry: runtime.telemetry, now: options.now, isMasked, columns },
			() => listSessionRows(runtime.sessionEntries?.() ?? []).map((row) => row.id),
		);
	};
}

/** The view budget the window leaves a result now. */
function windowBudget(runtime: OverflowRuntime, ctx: ExtensionContext): number {
	return computeTurnBudget(readWindowUsage(ctx), runtime.config, runtime.sentChars);
}

/** Config warnings, once, at the first chance to show them. */
function warnConfigOnce(runtime: OverflowRuntime, ctx: ExtensionContext): void {
	if (runtime.startupWarned) return;
	for (const warning of runtime.configWarnings) warnOnce(ctx, warning);
	runtime.startupWarned = true;
}

/** Warnings, ids already issued, the prewarm and housekeeping (the last two after it returns). */
function onSessionStart(pi: ExtensionAPI, runtime: OverflowRuntime): void {
	const { config, store } = runtime;
	pi.on("session_start", (event, ctx) => {
		warnConfigOnce(runtime, ctx);
		checkCaptureLoaded(event, ctx);
		const sessionId = ctx.sessionManager.getSessionId();
		// A resumed session's ids are never issued again, even when their entries expired.
		if (typeof ctx.sessionManager.getEntries === "function") {
			const entries = ctx.sessionManager.getEntries();
			store.rememberEntryIds(findShownIds(entries));
			// The `!command` texts this session already showed: the same bytes and ids again.
			store.rememberEntryIds(runtime.userBash.restore(entries));
			// Spill files of `!`/`!!` commands a resumed session names, left world-readable by an earlier run.
			const messages = entries.map((entry) => (entry as { message?: unknown }).message);
			setImmediate(() => void runtime.userSpills?.sweep(messages));
			runtime.sessionEntries = () => ctx.sessionManager.getEntries();
		}
		// After session_start returns: the first large result finds the signal search compiled.
		setImmediate(() => void prewarmSignalSearch(config.signalRegex));
		// After session_start returns: start-up never waits for the store.
		setImmediate(() => {
			store
				.housekeep({
					retentionMs: config.retentionDays * DAY_MS,
					maxStoreBytes: config.maxStoreBytes,
					currentSessionId: sessionId,
				})
				.then((result) => runtime.options.onHousekeeping?.(result))
				.catch(() => {});
		});
	});
}

/** The spill file the bound stage read a result's stored copy from, once it says so. */
interface SpillUse {
	path?: string;
}

/** The bound stage's onSpillUsed for one result (an unnamed function: no per-result naming cost). */
function recordSpillUse(use: SpillUse): (path: string) => void {
	return (path) => {
		use.path = path;
	};
}

/** Tool calls are timed and counted, results bounded, and each assistant turn's calls share a budget. */
function onToolResults(pi: ExtensionAPI, runtime: OverflowRuntime): void {
	const { config, store, telemetry, toolStarts, options } = runtime;
	pi.on("tool_call", (event) => {
		telemetry.noteToolCall(event.toolName, event.input);
		if (event.toolName === QUERY_TOOL_NAME) noteQuery(runtime, event.input);
		// The earliest start wins when a provider reuses a toolCallId: the bound stays safe.
		if (!toolStarts.has(event.toolCallId)) toolStarts.set(event.toolCallId, (options.now ?? Date.now)());
		if (toolStarts.size > MAX_TRACKED_TOOL_CALLS) toolStarts.delete(toolStarts.keys().next().value as string);
		return undefined;
	});

	pi.on("tool_result", async (event, ctx) => {
		try {
			warnConfigOnce(runtime, ctx);
			const toolStartedAt = toolStarts.get(event.toolCallId);
			toolStarts.delete(event.toolCallId);
			const turn = runtime.turnBudget;
			const share = turn?.draw(event.toolCallId) ?? windowBudget(runtime, ctx);
			const spillUse: SpillUse = {};
			const patch = await boundToolResult(event, {
				config,
				store,
				sessionId: ctx.sessionManager.getSessionId(),
				stash: findStash(),
				now: options.now,
				scanClock: options.scanClock,
				toolStartedAt,
				budgetChars: capViewBudget(share, config),
				onSpillUsed: recordSpillUse(spillUse),
				...runOf(runtime, event, ctx),
			});
			turn?.settle(event.toolCallId, measureTextParts(patch?.content ?? event.content));
			if (!patch) return undefined;
			const boundedId = readOverflowId(patch.details);
			if (boundedId !== undefined) runtime.ownViews.noteBounded(boundedId, event.toolCallId);
			telemetry.noteBounded(event.toolName, event.input, boundedId);
			const usedSpill = spillUse.path;
			const budget = capViewBudget(share, config);
			const released =
				config.releaseSpillFiles && usedSpill !== undefined
					? await releaseSpillFile(patch, usedSpill, store, budget)
					: { patch, release: "none" as const };
			// Pi's row names the whole output and tells of the view, not of Pi's own cut.
			const shown = describeFullOutput(released.patch, {
				textPath: (id) => store.textPath(id),
				keptSpillPath: released.release === "made-private" ? usedSpill : undefined,
				budgetChars: budget,
			});
			return { content: shown.content, details: shown.details };
		} catch {
			return undefined; // boundToolResult does not throw; this guards the wiring itself
		}
	});

	// Each assistant turn's tool calls share one budget, taken from the window as the turn ends.
	pi.on("message_end", (event, ctx) => {
		try {
			if ((event.message as { role?: unknown }).role === "assistant") telemetry.noteTurnEnd();
			const calls = listBoundedCalls(event.message, config.exemptTools);
			runtime.turnBudget = calls.length > 0 ? new SharedBudget(windowBudget(runtime, ctx), calls) : undefined;
		} catch {
			runtime.turnBudget = undefined; // each result then takes its budget from the window alone
		}
		return undefined;
	});
}

/**
 * The call as a run of its command, for the bound stage: its identity and a reader of the last run
 * of the same command in the session's branch (read only when a view is made). None when
 * compareReruns is off, the tool is exempt, or its arguments make no key.
 */
function runOf(
	runtime: OverflowRuntime,
	event: { toolCallId: string; toolName: string; input: unknown },
	ctx: ExtensionContext,
): Pick<BoundDependencies, "run" | "onRerun"> {
	const { config, store, telemetry } = runtime;
	if (!config.compareReruns || config.exemptTools.includes(event.toolName)) return {};
	// Hashed only when a view is made: a result left as it is costs nothing.
	const identify = () => runtime.identities.of(event.toolName, event.input);
	const readEarlier = async (identity: RunIdentity) => {
		if (typeof ctx.sessionManager.getBranch !== "function") return undefined;
		const runText = runtime.identities.textOf(event.toolName, event.input);
		if (runText === undefined) return undefined;
		const call = findEarlierCall(
			ctx.sessionManager.getBranch(),
			event.toolCallId,
			event.toolName,
			runText,
			runtime.identities,
		);
		if (call === undefined) return undefined;
		return readEarlierRun(call, identity, { store, config, sessionIds: () => readLineage(runtime, ctx) });
	};
	return {
		run: { identify, readEarlier },
		onRerun: (comparison) => telemetry.noteRerun(event.toolName, comparison),
	};
}

/** overflow_query on an id: counted for the tool whose result it was. */
function noteQuery(runtime: OverflowRuntime, input: unknown): void {
	const id = (input as { id?: unknown } | undefined)?.id;
	if (typeof id !== "string") return;
	if (runtime.telemetry.findTool(id) !== undefined) runtime.telemetry.noteQuery(id);
	else void runtime.store.readMeta(id).then((meta) => meta && runtime.telemetry.noteQuery(id, meta.toolName));
}

/** The current session's id and those of the sessions it was forked or branched from (read once per session). */
function readLineage(runtime: OverflowRuntime, ctx: ExtensionContext): Promise<Set<string>> {
	const sessionId = ctx.sessionManager.getSessionId();
	if (runtime.lineage?.sessionId !== sessionId) {
		const header = typeof ctx.sessionManager.getHeader === "function" ? ctx.sessionManager.getHeader() : null;
		runtime.lineage = { sessionId, ids: readSessionLineage(sessionId, header?.parentSession) };
	}
	return runtime.lineage.ids;
}

/** What the model is sent and what the summariser reads: `!command` output bounded, old views masked. */
function onContext(pi: ExtensionAPI, runtime: OverflowRuntime): void {
	const { config, store, userBash, options } = runtime;
	const now = options.now ?? Date.now;
	const userBashDependencies = (ctx: ExtensionContext) => (): UserBashBoundDependencies => ({
		config,
		store,
		sessionId: ctx.sessionManager.getSessionId(),
		now: options.now,
		budgetChars: capViewBudget(windowBudget(runtime, ctx), config),
	});

	// Pi's interactive mode reports a `!command` before it runs: its spill file must be written since,
	// and (`!!` too) is made private once the command ends.
	pi.on("user_bash", (event, ctx) => {
		if (!event.excludeFromContext) userBash.noteStart(event.command, now());
		// Pi stamps the command's message with the real clock.
		runtime.userSpills?.noteStart(event.command, Date.now(), ctx.sessionManager);
		return undefined;
	});

	// What the model is sent: `!command` output bounded (once per message), old views masked.
	pi.on("context", async (event, ctx) => {
		try {
			const deps = userBashDependencies(ctx);
			const messages: ContextMessage[] = [];
			for (const message of event.messages as unknown as ContextMessage[])
				messages.push(await userBash.transform(message, deps));
			// Only pi-overflow's own views are masked, never a result on the word of its details.
			await runtime.ownViews.check(messages, () => readLineage(runtime, ctx));
			const maskingOptions = config.compareReruns
				? {
						...config,
						findSuccessors: (list: readonly ContextMessage[], views: readonly number[]) =>
							findSuccessors(list, views, runtime.identities),
					}
				: config;
			const result = maskOldViews(messages, runtime.masking, maskingOptions, (message) =>
				message.role === "toolResult"
					? runtime.ownViews.isOwn(message)
						? readToolResultView(message)
						: undefined
					: userBash.findView(message),
			);
			runtime.sentChars = measureContextChars(result.messages);
			options.onContext?.({ masked: result.masked, stepped: result.stepped, chars: runtime.sentChars });
			return { messages: result.messages as unknown as ContextEvent["messages"] };
		} catch {
			return undefined;
		}
	});

	// Pi's compaction summariser reads the messages it summarises as they are: `!command` output bounded too.
	pi.on("session_before_compact", async (event, ctx) => {
		try {
			const deps = userBashDependencies(ctx);
			const { preparation } = event;
			for (const list of [preparation.messagesToSummarize, preparation.turnPrefixMessages]) {
				for (let index = 0; index < list.length; index++) {
					list[index] = (await userBash.transform(
						list[index] as unknown as ContextMessage,
						deps,
					)) as unknown as (typeof list)[number];
				}
			}
		} catch {
			// The compaction goes on with the messages as they were.
		}
		return undefined;
	});
}
