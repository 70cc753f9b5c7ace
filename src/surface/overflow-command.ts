// `/overflow`, the user's window on the store: list this session's stored results, show one, purge
// one, this session's or all, and the store's stats with the recall telemetry. Invariants: it never
// throws into Pi and works without a UI (print mode writes to stdout; RPC mode has a UI); `purge all`
// asks first where there is a UI; it reads only metadata and session entries, except `show` of an
// id from another session, which rebuilds the stored output's view (overflow_query with no selector).
// `show` of this session's result prints exactly the text the model was sent, as the session keeps it.

import type { ExtensionAPI, ExtensionCommandContext } from "@mariozechner/pi-coding-agent";
import type { OverflowConfig } from "../config/config.js";
import { QueryError, runQuery } from "../query/index.js";
import type { KnownEntry, OverflowStore } from "../store/index.js";
import type { RecallTelemetry, TelemetryCounts } from "./telemetry.js";
import { describeError, keepStart, plural } from "../lines/text.js";
import { USER_BASH_ENTRY_TYPE, USER_BASH_TOOL_NAME } from "../context/user-bash.js";
import { formatNumberedLine } from "../lines/numbered.js";
import { joinTextParts } from "../intake/stash.js";

const SUBCOMMANDS = ["show", "purge", "stats"] as const;
/** Widest line the listing writes (Pi's TUI at 80 columns, less its padding). */
const LIST_WIDTH = 76;
/** Rows listed at most; the rest are counted. */
const MAX_LISTED = 50;
const MINUTE_MS = 60_000;

/** One stored result of this session, as the session remembers it. */
export interface SessionEntryRow {
	id: string;
	toolName: string;
	totalLines: number;
	totalBytes: number;
	/** Epoch ms of the result. */
	at: number;
	/** The most decisive line, numbered, when the result had one. */
	top?: string;
}

export interface OverflowCommandDeps {
	config: OverflowConfig;
	store: OverflowStore;
	telemetry: RecallTelemetry;
	now?: () => number;
	/** True when a stored result's view is masked now in what the model is sent (masking.ts). */
	isMasked?: (id: string) => boolean;
}

/** This session's stored results, newest first, from its entries (tool results and `!command` records). */
export function listSessionRows(entries: readonly unknown[]): SessionEntryRow[] {
	const rows: SessionEntryRow[] = [];
	for (const entry of entries) {
		const row = readToolResultRow(entry) ?? readUserBashRow(entry);
		if (row !== undefined && !rows.some((known) => known.id === row.id)) rows.push(row);
	}
	return rows.sort((a, b) => b.at - a.at);
}

function readToolResultRow(entry: unknown): SessionEntryRow | undefined {
	const message = (entry as { type?: unknown; message?: Record<string, unknown> }).message;
	if ((entry as { type?: unknown }).type !== "message" || message?.role !== "toolResult") return undefined;
	const overflow = (message.details as { overflow?: Record<string, unknown> } | undefined)?.overflow;
	return readRow(overflow, String(message.toolName), Number(message.timestamp));
}

function readUserBashRow(entry: unknown): SessionEntryRow | undefined {
	const { type, customType, data, timestamp } = entry as {
		type?: unknown;
		customType?: unknown;
		data?: Record<string, unknown>;
		timestamp?: unknown;
	};
	if (type !== "custom" || customType !== USER_BASH_ENTRY_TYPE) return undefined;
	return readRow(data, USER_BASH_TOOL_NAME, Date.parse(String(timestamp)));
}

function readRow(
	overflow: Record<string, unknown> | undefined,
	toolName: string,
	at: number,
): SessionEntryRow | undefined {
	if (
		typeof overflow?.id !== "string" ||
		typeof overflow.totalLines !== "number" ||
		typeof overflow.totalBytes !== "number"
	)
		return undefined;
	const first = Array.isArray(overflow.top)
		? (overflow.top[0] as { line?: unknown; text?: unknown } | undefined)
		: undefined;
	const top =
		typeof first?.line === "number" && typeof first.text === "string"
			? formatNumberedLine(first.line, ":", first.text.trim(), 0)
			: undefined;
	return {
		id: overflow.id,
		toolName,
		totalLines: overflow.totalLines,
		totalBytes: overflow.totalBytes,
		at: Number.isFinite(at) ? at : 0,
		...(top ? { top } : {}),
	};
}

/** The listing: a header, then per result one line of facts and, indented, its decisive line. */
export function formatSessionList(
	rows: readonly SessionEntryRow[],
	existing: ReadonlySet<string>,
	now: number,
): string {
	if (rows.length === 0)
		return "pi-overflow: nothing stored in this session yet (results that fit are left as they are).";
	const lines = [`pi-overflow: ${plural(rows.length, "stored result")} this session, newest first (show <id>):`];
	for (const row of rows.slice(0, MAX_LISTED)) {
		const gone = existing.has(row.id) ? "" : "  (purged or expired)";
		lines.push(
			`${row.id}  ${row.toolName}  ${plural(row.totalLines, "line")}  ${formatBytes(row.totalBytes)}  ${formatAge(now - row.at)}${gone}`,
		);
		if (row.top !== undefined) lines.push(`  ${keepStart(row.top.replace(/\s+/g, " "), LIST_WIDTH - 3)}`);
	}
	if (rows.length > MAX_LISTED) lines.push(`… and ${rows.length - MAX_LISTED} older`);
	return lines.join("\n");
}

/** Store size against the quota, entries, sessions, the oldest entry, and the telemetry per tool. */
export function formatStats(
	entries: readonly KnownEntry[],
	config: OverflowConfig,
	counts: TelemetryCounts,
	now: number,
): string {
	const bytes = entries.reduce((sum, entry) => sum + entry.bytes, 0);
	const sessions = new Set(entries.map((entry) => entry.sessionId ?? "")).size;
	const oldest = entries.reduce((min, entry) => Math.min(min, entry.createdMs), Number.POSITIVE_INFINITY);
	const share = config.maxStoreBytes > 0 ? Math.round((bytes / config.maxStoreBytes) * 100) : 0;
	const lines = [
		`pi-overflow store: ${formatBytes(bytes)} of ${formatBytes(config.maxStoreBytes)} (${share}%): ${countEntries(entries.length)}, ${plural(sessions, "session")}`,
		`${entries.length > 0 ? `oldest stored ${formatAge(now - oldest)}; ` : ""}entries are kept ${config.retentionDays} days.`,
		`Per tool since ${counts.since.slice(0, 10)}: results bounded, queried by the model, and`,
		"re-run right after a bounded result (a sign the view missed something):",
	];
	const tools = Object.entries(counts.tools).sort((a, b) => b[1].bounded - a[1].bounded);
	if (tools.length === 0) lines.push("  nothing bounded yet");
	for (const [tool, count] of tools) {
		lines.push(
			`  ${keepStart(tool, 24).padEnd(24)} ${String(count.bounded).padStart(6)} bounded ${String(count.queried).padStart(6)} queried ${String(count.reruns).padStart(5)} re-run`,
		);
	}
	return lines.join("\n");
}

function countEntries(count: number): string {
	return count === 1 ? "1 entry" : `${count} entries`;
}

export function formatBytes(bytes: number): string {
	if (bytes < 1024) return `${bytes} B`;
	const units = ["KiB", "MiB", "GiB", "TiB"];
	let value = bytes / 1024;
	let unit = 0;
	while (value >= 1024 && unit < units.length - 1) {
		value /= 1024;
		unit++;
	}
	return `${value < 10 ? value.toFixed(1) : Math.round(value)} ${units[unit]}`;
}

export function formatAge(ms: number): string {
	const minutes = Math.max(0, Math.floor(ms / MINUTE_MS));
	if (minutes < 1) return "just now";
	if (minutes < 60) return `${minutes}m ago`;
	if (minutes < 48 * 60) return `${Math.floor(minutes / 60)}h ago`;
	return `${Math.floor(minutes / (24 * 60))}d ago`;
}

/** Argument completions for a prefix: the subcommands, then ids (and session/all for purge). */
export function completeArguments(
	prefix: string,
	ids: readonly string[],
): Array<{ value: string; label: string; description?: string }> | null {
	const [sub, rest = ""] = prefix.trimStart().split(/\s+/, 2);
	const hasSpace = /\s/.test(prefix.trimStart());
	if (!hasSpace) {
		const items = SUBCOMMANDS.filter((name) => name.startsWith(sub ?? "")).map((name) => ({
			value: name === "stats" ? name : `${name} `,
			label: name,
		}));
		return items.length > 0 ? items : null;
	}
	if (sub !== "show" && sub !== "purge") return null;
	const choices = sub === "purge" ? ["session", "all", ...ids] : [...ids];
	const items = choices
		.filter((choice) => choice.startsWith(rest))
		.map((choice) => ({ value: `${sub} ${choice}`, label: choice }));
	return items.length > 0 ? items : null;
}

export function registerOverflowCommand(
	pi: ExtensionAPI,
	deps: OverflowCommandDeps,
	sessionIds: () => readonly string[],
): void {
	pi.registerCommand("overflow", {
		description: "pi-overflow: list this session's stored results; show <id>, purge <id>|session|all, stats",
		getArgumentCompletions: (prefix) => completeArguments(prefix, sessionIds()),
		handler: async (args, ctx) => {
			try {
				say(ctx, await runOverflowCommand(args, ctx, deps));
			} catch (error) {
				say(ctx, `pi-overflow: /overflow failed: ${describeError(error)}`, "error");
			}
		},
	});
}

/** What `/overflow <args>` answers. */
export async function runOverflowCommand(
	args: string,
	ctx: ExtensionCommandContext,
	deps: OverflowCommandDeps,
): Promise<string> {
	const [sub = "", target = "", ...extra] = args
		.trim()
		.split(/\s+/)
		.filter((word) => word !== "");
	const now = (deps.now ?? Date.now)();
	const rows = listSessionRows(ctx.sessionManager.getEntries());
	if (sub === "" || sub === "list") {
		const existing = new Set<string>();
		for (const row of rows.slice(0, MAX_LISTED))
			if ((await deps.store.readMeta(row.id)) !== undefined) existing.add(row.id);
		return formatSessionList(rows, existing, now) + (await describeRefusal(deps));
	}
	if (sub === "show" && extra.length === 0 && target !== "") return await show(target, ctx, deps);
	if (sub === "purge" && extra.length === 0 && target !== "") return await purge(target, ctx, deps, rows);
	if (sub === "stats" && target === "") {
		const { entries } = await deps.store.listEntries();
		return formatStats(entries, deps.config, deps.telemetry.read(), now) + (await describeRefusal(deps));
	}
	return `pi-overflow: unknown /overflow ${keepStart(args.trim(), 40)}; use /overflow, /overflow show <id>, /overflow purge <id>|session|all, /overflow stats`;
}

/**
 * `show <id>`: the text the model was sent for a stored result of this session, as the session keeps
 * it (a view, or the tool's own cut text with the recovery marker), said so when masked since; for
 * another session's id, the stored output's view. A purged or unreadable entry says why.
 */
async function show(id: string, ctx: ExtensionCommandContext, deps: OverflowCommandDeps): Promise<string> {
	const sent = findSentText(ctx.sessionManager.getEntries(), id);
	if (sent !== undefined && (await deps.store.readMeta(id)) !== undefined) {
		if (deps.isMasked?.(id) !== true) return sent;
		return `${sent}\npi-overflow: the model was sent the text above; it now gets a short stub of it instead (masked as an older view).`;
	}
	try {
		const view = (await runQuery({ id }, { config: deps.config, store: deps.store })).text;
		return sent === undefined
			? `pi-overflow: id=${id} is not a result of this session; its stored output:\n${view}`
			: view;
	} catch (error) {
		if (error instanceof QueryError) return error.message.replace(/^overflow_query: /, "pi-overflow: ");
		throw error;
	}
}

/** The text the model was sent for stored result `id`: a tool result's text parts, or a `!command` record's output. */
export function findSentText(entries: readonly unknown[], id: string): string | undefined {
	for (const entry of entries) {
		const { type, message, customType, data } = entry as {
			type?: unknown;
			message?: { role?: unknown; content?: unknown; details?: { overflow?: { id?: unknown } } };
			customType?: unknown;
			data?: { id?: unknown; output?: unknown };
		};
		if (type === "message" && message?.role === "toolResult" && message.details?.overflow?.id === id) {
			if (Array.isArray(message.content)) return joinTextParts(message.content as Array<{ type: string }>);
		}
		if (type === "custom" && customType === USER_BASH_ENTRY_TYPE && data?.id === id && typeof data.output === "string")
			return data.output;
	}
	return undefined;
}

/** One line saying why the store was not read (another user's, not a directory), after a newline; else "". */
async function describeRefusal(deps: OverflowCommandDeps): Promise<string> {
	const refused = await deps.store.refusal();
	return refused === undefined ? "" : `\npi-overflow: ${refused}; not read.`;
}

async function purge(
	target: string,
	ctx: ExtensionCommandContext,
	deps: OverflowCommandDeps,
	rows: readonly SessionEntryRow[],
): Promise<string> {
	let ids: string[];
	let what: string;
	if (target === "all" || target === "session") {
		const { entries, errors } = await deps.store.listEntries();
		if (errors.length > 0 && entries.length === 0) return `pi-overflow: cannot list the store: ${errors[0]}`;
		const sessionId = ctx.sessionManager.getSessionId();
		const chosen = target === "all" ? entries : entries.filter((entry) => entry.sessionId === sessionId);
		ids = chosen.map((entry) => entry.id);
		// This session's results are known by the session even when another process stored them.
		if (target === "session") for (const row of rows) if (!ids.includes(row.id)) ids.push(row.id);
		what = target === "all" ? "every stored result" : "this session's stored results";
		if (target === "all" && ctx.hasUI && ids.length > 0) {
			const ok = await ctx.ui.confirm(
				"Purge pi-overflow's store?",
				`Delete ${plural(ids.length, "stored result")} of every session from ${deps.store.root}? overflow_query can no longer read them.`,
			);
			if (!ok) return "pi-overflow: nothing purged.";
		}
	} else if (/^[0-9a-f]{12}$/.test(target)) {
		ids = [target];
		what = `id=${target}`;
	} else {
		return `pi-overflow: purge takes an id (12 hex characters), "session" or "all", got ${JSON.stringify(keepStart(target, 40))}`;
	}
	const { removed, errors } = await deps.store.removeEntries(ids);
	const problems = errors.length > 0 ? `; ${plural(errors.length, "problem")}: ${errors[0]}` : "";
	return `pi-overflow: purged ${what}: ${countEntries(removed)} removed${problems}.`;
}

function say(ctx: ExtensionCommandContext, text: string, type: "info" | "error" = "info"): void {
	if (ctx.hasUI) ctx.ui.notify(text, type);
	else process.stdout.write(`${text}\n`);
}
