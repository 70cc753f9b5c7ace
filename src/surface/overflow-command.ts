// `/overflow`, the user's window on the store: one table of subcommands (list, show, purge, stats,
// help), each a function from the call to one answer written for the user. Invariants: it never throws
// into Pi and works without a UI (print mode writes to stdout); subcommands and ids are read in any
// case; `show` and `purge` agree on which ids are stored; `purge all` asks first where there is a UI,
// defaulting to No, and leaves nothing of the store or its counts behind; `show` of this session's
// result prints exactly the text the model was sent, then where the full output is.

import { writeSync } from "node:fs";
import type { ExtensionAPI, ExtensionCommandContext } from "@mariozechner/pi-coding-agent";
import type { OverflowConfig } from "../config/config.js";
import { QueryError, runQuery } from "../query/index.js";
import { type EntryMeta, isEntryId, type KnownEntry, type OverflowStore, type RunCounts } from "../store/index.js";
import type { RecallTelemetry, TelemetryCounts } from "./telemetry.js";
import { describeError, keepStart, plural, shortenText } from "../lines/text.js";
import { USER_BASH_ENTRY_TYPE, USER_BASH_TOOL_NAME } from "../context/user-bash.js";
import { formatNumberedLine } from "../lines/numbered.js";
import { joinTextParts } from "../intake/stash.js";

/** Columns assumed when the terminal's width is unknown (RPC mode, a pipe). */
const DEFAULT_COLUMNS = 80;
/** Narrowest width the listing clips to, whatever the terminal says. */
const MIN_COLUMNS = 40;
/** Columns Pi's TUI pads a notice with (one on each side). */
const NOTICE_PADDING = 2;
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
	/** The command it was a run of (its stored run record), and what its view said of the last run. */
	run?: { key: string; label: string; change?: string };
}

export interface OverflowCommandDeps {
	config: OverflowConfig;
	store: OverflowStore;
	telemetry: RecallTelemetry;
	now?: () => number;
	/** True when a stored result's view is masked now in what the model is sent (masking.ts). */
	isMasked?: (id: string) => boolean;
	/** The terminal's width in columns, when known; default DEFAULT_COLUMNS. */
	columns?: () => number | undefined;
	/** Ids this process purged (filled by purge): the listing and show say "purged" of them, not "expired". */
	purged?: Set<string>;
}

/** What `/overflow …` answers: the text, and "warning" when the user's command was wrong. */
export interface CommandAnswer {
	text: string;
	level: "info" | "warning";
}

/** One call of a subcommand: its arguments (lower-cased) and what it reads. */
interface CommandCall {
	args: readonly string[];
	ctx: ExtensionCommandContext;
	deps: OverflowCommandDeps;
	now: number;
	/** This session's stored results as the session remembers them, newest first. */
	rows: readonly SessionEntryRow[];
	purged: Set<string>;
}

interface Subcommand {
	/** What the user types after `/overflow` ("" for the listing). */
	name: string;
	/** Lines of `/overflow help`: how it is typed and what it does, one line each. */
	help: ReadonlyArray<readonly [usage: string, summary: string]>;
	/** The words its argument completes to besides this session's ids; undefined when it takes none. */
	keywords?: readonly string[];
	run(call: CommandCall): Promise<CommandAnswer | string>;
}

const SUBCOMMANDS: readonly Subcommand[] = [
	{
		name: "",
		help: [["/overflow", "this session's stored results, newest first"]],
		run: (call) => runList(call),
	},
	{
		name: "show",
		help: [["/overflow show <id>", "what the model was sent, and the full output's path"]],
		keywords: [],
		run: (call) => runShow(call),
	},
	{
		name: "purge",
		help: [
			["/overflow purge <id>", "delete one stored result"],
			["/overflow purge session", "delete this session's stored results"],
			["/overflow purge all", "delete all results and the stats (asks first)"],
		],
		keywords: ["session", "all"],
		run: (call) => runPurge(call),
	},
	{
		name: "stats",
		help: [["/overflow stats", "store size; per tool: bounded, queried, re-runs"]],
		run: (call) => runStats(call),
	},
	{
		name: "help",
		help: [["/overflow help", "this list"]],
		run: async () => formatHelp(),
	},
];

/** Subcommands as they complete, in the order of the table. */
const NAMED_SUBCOMMANDS = SUBCOMMANDS.filter((sub) => sub.name !== "");

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

/** What the listing shows: the stored rows, and what is known of the session's results that are gone. */
export interface SessionListing {
	/** This session's results still stored, newest first (at most MAX_LISTED). */
	stored: readonly SessionEntryRow[];
	/** Results of this session no longer stored: purged by the user, and the rest (expired or evicted). */
	gone: { purged: number; other: number };
	/** Rows not looked at (beyond MAX_LISTED stored ones). */
	older: number;
	/** `<root>/<id>.txt`: where each full output is. */
	pathPattern: string;
	/** Characters a line may take (the terminal's width less the notice's padding). */
	width: number;
}

/** The listing: a header, per result one line of facts and, indented, its decisive line; then what is gone, and where the files are. */
export function formatSessionList(listing: SessionListing, now: number): string {
	const { stored, gone, older, width } = listing;
	const goneCount = gone.purged + gone.other;
	if (stored.length === 0) {
		const none = "pi-overflow: nothing stored in this session";
		if (goneCount === 0) return `${none} yet (results that fit are left as they are).`;
		return `${none} now: ${describeGone(gone)}.`;
	}
	const lines = [
		`pi-overflow: ${plural(stored.length + older, "stored result")} this session, newest first (show <id>):`,
	];
	const fact = (row: SessionEntryRow) =>
		`${row.id}  ${row.toolName}  ${plural(row.totalLines, "line")}  ${formatBytes(row.totalBytes)}  ${formatAge(now - row.at)}`;
	const decisive = (row: SessionEntryRow, indent: string) => {
		if (row.top !== undefined)
			lines.push(`${indent}${shortenText(row.top.replace(/\s+/g, " "), width - indent.length)}`);
	};
	// Runs of one command are listed together, under the newest (where it stands), each with what changed.
	const runs = groupRuns(stored);
	const listed = new Set<string>();
	for (const row of stored) {
		if (listed.has(row.id)) continue;
		const group = row.run === undefined ? [row] : (runs.get(row.run.key) ?? [row]);
		for (const member of group) listed.add(member.id);
		if (group.length === 1) {
			lines.push(shortenText(fact(row), width));
			decisive(row, "  ");
			continue;
		}
		lines.push(shortenText(`${group.length} runs of ${row.run?.label ?? row.toolName}, newest first:`, width));
		for (const member of group) {
			const change = member.run?.change === undefined ? "" : `  ${member.run.change}`;
			lines.push(`  ${shortenText(`${fact(member)}${change}`, width - 2)}`);
		}
		decisive(row, "    ");
	}
	if (older > 0) lines.push(`… and ${older} older`);
	if (goneCount > 0) lines.push(`${capitalize(describeGone(gone))}.`);
	lines.push(`Full outputs: ${listing.pathPattern}`);
	return lines.join("\n");
}

/** Characters of a tool's name in the stats' table. */
const STATS_TOOL_CHARS = 18;

/** The rows of each command run more than once, newest first, by run key. */
function groupRuns(rows: readonly SessionEntryRow[]): Map<string, SessionEntryRow[]> {
	const groups = new Map<string, SessionEntryRow[]>();
	for (const row of rows) {
		if (row.run === undefined) continue;
		const group = groups.get(row.run.key);
		if (group === undefined) groups.set(row.run.key, [row]);
		else group.push(row);
	}
	return groups;
}

/**
 * What a re-run's view said of the last run, in a few words for a listing line: its non-zero counts
 * ("3 gone, 6 still there") or "nothing changed".
 */
export function describeRunChange(counts: RunCounts | undefined): string | undefined {
	if (counts === undefined) return undefined;
	const parts = (
		[
			[counts.new, "new"],
			[counts.gone, "gone"],
			[counts.still, "still there"],
		] as const
	)
		.filter(([count]) => count !== 0)
		.map(([count, what]) => `${count} ${what}`);
	return counts.new === 0 && counts.gone === 0 ? "nothing changed" : parts.join(", ");
}

/** "2 earlier results are no longer stored (1 purged, 1 expired)". */
function describeGone(gone: SessionListing["gone"]): string {
	const count = gone.purged + gone.other;
	const reasons = [
		...(gone.purged > 0 ? [`${gone.purged} purged`] : []),
		...(gone.other > 0 ? [`${gone.other} expired or evicted`] : []),
	];
	return `${count === 1 ? "1 earlier result is" : `${count} earlier results are`} no longer stored (${reasons.join(", ")})`;
}

function capitalize(text: string): string {
	return text.charAt(0).toUpperCase() + text.slice(1);
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
		`Per tool since ${counts.since.slice(0, 10)}: results bounded; queried by the model;`,
		"re-run right after a bounded result (a sign the view missed something);",
		"compared: re-runs of one command compared with the run before;",
		"fixed: of those, how many showed signal lines gone (something fixed):",
	];
	const tools = Object.entries(counts.tools).sort((a, b) => b[1].bounded - a[1].bounded);
	if (tools.length === 0) lines.push("  nothing bounded yet");
	else lines.push(`  ${"tool".padEnd(STATS_TOOL_CHARS)}  bounded  queried  re-run  compared  fixed`);
	for (const [tool, count] of tools) {
		const cells = [
			[count.bounded, 9],
			[count.queried, 9],
			[count.reruns, 8],
			[count.compared, 10],
			[count.fixed, 7],
		] as const;
		lines.push(
			`  ${keepStart(tool, STATS_TOOL_CHARS).padEnd(STATS_TOOL_CHARS)}${cells.map(([n, w]) => String(n).padStart(w)).join("")}`,
		);
	}
	return lines.join("\n");
}

/** `/overflow help`: every subcommand, one line each. */
export function formatHelp(): string {
	const rows = SUBCOMMANDS.flatMap((sub) => sub.help);
	const width = Math.max(...rows.map(([usage]) => usage.length));
	return [
		"pi-overflow: /overflow subcommands (in any case; <id> as /overflow lists it):",
		...rows.map(([usage, summary]) => `  ${usage.padEnd(width)}  ${summary}`),
	].join("\n");
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

/** Argument completions for a prefix (any case): the subcommands, then ids (and session/all for purge). */
export function completeArguments(
	prefix: string,
	ids: readonly string[],
): Array<{ value: string; label: string; description?: string }> | null {
	const [typed = "", rest = ""] = prefix.trimStart().split(/\s+/, 2);
	const sub = typed.toLowerCase();
	if (!/\s/.test(prefix.trimStart())) {
		const items = NAMED_SUBCOMMANDS.filter(({ name }) => name.startsWith(sub)).map(({ name, keywords }) => ({
			value: keywords === undefined ? name : `${name} `,
			label: name,
		}));
		return items.length > 0 ? items : null;
	}
	const keywords = NAMED_SUBCOMMANDS.find(({ name }) => name === sub)?.keywords;
	if (keywords === undefined) return null;
	const items = [...keywords, ...ids]
		.filter((choice) => choice.startsWith(rest.toLowerCase()))
		.map((choice) => ({ value: `${sub} ${choice}`, label: choice }));
	return items.length > 0 ? items : null;
}

export function registerOverflowCommand(
	pi: ExtensionAPI,
	deps: OverflowCommandDeps,
	sessionIds: () => readonly string[],
): void {
	const withState = { ...deps, purged: deps.purged ?? new Set<string>() };
	pi.registerCommand("overflow", {
		description: "pi-overflow: this session's stored results; show <id>, purge <id>|session|all, stats, help",
		getArgumentCompletions: (prefix) => completeArguments(prefix, sessionIds()),
		handler: async (args, ctx) => {
			try {
				const answer = await runOverflowCommand(args, ctx, withState);
				say(ctx, answer.text, answer.level);
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
): Promise<CommandAnswer> {
	const [typed = "", ...rest] = args
		.trim()
		.split(/\s+/)
		.filter((word) => word !== "");
	const name = typed.toLowerCase();
	const sub = SUBCOMMANDS.find((candidate) => candidate.name === (name === "list" ? "" : name));
	if (sub === undefined)
		return mistake(`/overflow has no subcommand ${JSON.stringify(keepStart(typed, 40))}; /overflow help lists them.`);
	const call: CommandCall = {
		args: rest.map((word) => word.toLowerCase()),
		ctx,
		deps,
		now: (deps.now ?? Date.now)(),
		rows: listSessionRows(ctx.sessionManager.getEntries()),
		purged: deps.purged ?? new Set(),
	};
	if (sub.keywords === undefined && call.args.length > 0)
		return mistake(
			`${usageOf(sub.name)} takes nothing after it; got ${JSON.stringify(keepStart(rest.join(" "), 40))}.`,
		);
	const answer = await sub.run(call);
	return typeof answer === "string" ? { text: answer, level: "info" } : answer;
}

function mistake(text: string): CommandAnswer {
	return { text: `pi-overflow: ${text}`, level: "warning" };
}

function usageOf(name: string): string {
	return name === "" ? "/overflow" : `/overflow ${name}`;
}

/** The listing: this session's rows still stored (each checked in the store), what is gone, and where the files are. */
async function runList(call: CommandCall): Promise<string> {
	const { deps, rows, purged } = call;
	const stored: SessionEntryRow[] = [];
	const gone = { purged: 0, other: 0 };
	let looked = 0;
	for (const row of rows) {
		if (stored.length === MAX_LISTED) break;
		looked++;
		const meta = await deps.store.readMeta(row.id);
		if (meta !== undefined) stored.push(withRun(row, meta));
		else if (purged.has(row.id)) gone.purged++;
		else gone.other++;
	}
	const listing: SessionListing = {
		stored,
		gone,
		older: rows.length - looked,
		pathPattern: `${deps.store.root}/<id>.txt`,
		width: readWidth(deps),
	};
	return formatSessionList(listing, call.now) + (await describeRefusal(deps));
}

/** The row with the command it was a run of, from its stored run record. */
function withRun(row: SessionEntryRow, meta: EntryMeta): SessionEntryRow {
	if (meta.run === undefined) return row;
	const change = describeRunChange(meta.run.rerunOf?.counts);
	return { ...row, run: { key: meta.run.key, label: meta.run.label, ...(change !== undefined ? { change } : {}) } };
}

/** Characters a notice's line may take: the terminal's columns less Pi's padding. */
function readWidth(deps: OverflowCommandDeps): number {
	const columns = deps.columns?.();
	const usable = typeof columns === "number" && Number.isFinite(columns) ? Math.floor(columns) : DEFAULT_COLUMNS;
	return Math.max(MIN_COLUMNS, usable) - NOTICE_PADDING;
}

/**
 * `show <id>`: the text the model was sent for a stored result of this session, as the session keeps
 * it (a view, or the tool's own cut text with the recovery marker), said so when masked since; for
 * another session's id, the stored output's view; then the stored file's path. An id that is not
 * stored says why, in the words `purge` uses.
 */
async function runShow(call: CommandCall): Promise<CommandAnswer | string> {
	const { args, ctx, deps } = call;
	if (args.length === 0)
		return mistake("/overflow show needs the id of a stored result: /overflow show <id> (/overflow lists them).");
	if (args.length > 1) return mistake(`/overflow show takes one id; got ${JSON.stringify(args.join(" "))}.`);
	const id = args[0]!;
	if (!isEntryId(id)) return notAnId(id);
	const meta = await deps.store.readMeta(id);
	if (meta === undefined) return mistake(`${describeMissing(id, call)}.${await describeRefusal(deps)}`);
	const sent = findSentText(ctx.sessionManager.getEntries(), id);
	const where = describeStoredFile(meta, deps.store.textPath(id));
	if (sent !== undefined) {
		if (deps.isMasked?.(id) !== true) return `${sent}\n${where}`;
		return `${sent}\npi-overflow: the model was sent the text above; it now gets a short stub of it instead (masked as an older view).\n${where}`;
	}
	try {
		const view = (await runQuery({ id }, { config: deps.config, store: deps.store })).text;
		return `pi-overflow: id=${id} is not a result of this session; its stored output:\n${view}\n${where}`;
	} catch (error) {
		if (error instanceof QueryError) return mistake(error.message.replace(/^overflow_query: /, ""));
		throw error;
	}
}

/** `pi-overflow: full output, 150000 lines, 917 KiB: <path>` (for an editor or `less`). */
function describeStoredFile(meta: EntryMeta, path: string): string {
	const cut = meta.truncated ? ", its middle left out (maxEntryBytes)" : "";
	return `pi-overflow: full output, ${plural(meta.totalLines, "line")}, ${formatBytes(meta.totalBytes)}${cut}: ${path}`;
}

/** Why `id` is not in the store: purged here, gone from this session (purged or expired), or never this store's. */
function describeMissing(id: string, call: CommandCall): string {
	if (call.purged.has(id)) return `id=${id} is no longer stored: it was purged`;
	if (call.rows.some((row) => row.id === id))
		return `id=${id} is no longer stored: it was purged or expired (entries are kept ${call.deps.config.retentionDays} days)`;
	return `no stored result has id=${id} (/overflow lists this session's)`;
}

function notAnId(word: string): CommandAnswer {
	return mistake(`${JSON.stringify(keepStart(word, 40))} is not an id: an id is 12 characters 0-9 and a-f.`);
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

async function runStats(call: CommandCall): Promise<string> {
	const { deps } = call;
	const { entries } = await deps.store.listEntries();
	return formatStats(entries, deps.config, deps.telemetry.read(), call.now) + (await describeRefusal(deps));
}

/** `purge <id>`, `purge session`, `purge all`. */
async function runPurge(call: CommandCall): Promise<CommandAnswer | string> {
	const { args } = call;
	if (args.length === 0)
		return mistake(
			'/overflow purge needs what to delete: an id, "session" (this session\'s results) or "all" (every session\'s).',
		);
	if (args.length > 1)
		return mistake(`/overflow purge takes one id, "session" or "all"; got ${JSON.stringify(args.join(" "))}.`);
	const target = args[0]!;
	if (target === "all") return purgeAll(call);
	if (target === "session") return purgeSession(call);
	if (!isEntryId(target)) return notAnId(target);
	return purgeOne(target, call);
}

async function purgeOne(id: string, call: CommandCall): Promise<CommandAnswer | string> {
	const { deps } = call;
	// The same test as show: an id show calls unknown is not "purged".
	if ((await deps.store.readMeta(id)) === undefined)
		return mistake(`nothing purged: ${describeMissing(id, call)}.${await describeRefusal(deps)}`);
	const { removed, errors } = await deps.store.removeEntries([id]);
	if (removed > 0) call.purged.add(id);
	return `pi-overflow: purged id=${id}: ${countEntries(removed)} removed${describeProblems(errors)}.`;
}

async function purgeSession(call: CommandCall): Promise<string> {
	const { ctx, deps, rows } = call;
	const { entries, errors: listErrors } = await deps.store.listEntries();
	if (listErrors.length > 0 && entries.length === 0) return `pi-overflow: cannot list the store: ${listErrors[0]}`;
	const sessionId = ctx.sessionManager.getSessionId();
	const ids = entries.filter((entry) => entry.sessionId === sessionId).map((entry) => entry.id);
	// This session's results are known by the session even when another process stored them.
	for (const row of rows) if (!ids.includes(row.id)) ids.push(row.id);
	const { removed, errors } = await deps.store.removeEntries(ids);
	for (const id of ids) if ((await deps.store.readMeta(id)) === undefined) call.purged.add(id);
	if (removed === 0 && errors.length === 0) return "pi-overflow: nothing purged: this session has no stored results.";
	return `pi-overflow: purged this session's stored results: ${countEntries(removed)} removed${describeProblems(errors)}.`;
}

/** Every entry of every session, the store directory and the stats' counts: nothing of pi-overflow's data is left. */
async function purgeAll(call: CommandCall): Promise<CommandAnswer | string> {
	const { ctx, deps, rows } = call;
	const refused = await deps.store.refusal();
	if (refused !== undefined) return `pi-overflow: ${refused}; nothing purged.`;
	const { entries } = await deps.store.listEntries();
	if (ctx.hasUI) {
		const sessions = new Set(entries.map((entry) => entry.sessionId ?? "")).size;
		const keep = "No, keep them";
		const choice = await ctx.ui.select(
			`Delete pi-overflow's ${plural(entries.length, "stored result")} of ${plural(sessions, "session")} in ${deps.store.root}, and the counts /overflow stats shows? overflow_query can no longer read them.`,
			[keep, "Yes, delete them"],
		);
		if (choice === undefined || choice === keep) return "pi-overflow: nothing purged.";
	}
	const { removed, kept, errors } = await deps.store.removeAll();
	const statsProblem = deps.telemetry.clear();
	for (const row of rows) call.purged.add(row.id);
	for (const entry of entries) call.purged.add(entry.id);
	const problems = statsProblem === undefined ? errors : [...errors, statsProblem];
	const left =
		kept === undefined ? "" : `; ${kept} is kept: it holds files pi-overflow did not write or is still writing`;
	return `pi-overflow: purged every stored result: ${countEntries(removed)} removed, and the stats' counts${left}${describeProblems(problems)}.`;
}

function describeProblems(errors: readonly string[]): string {
	return errors.length > 0 ? `; ${plural(errors.length, "problem")}: ${errors[0]}` : "";
}

function say(ctx: ExtensionCommandContext, text: string, type: "info" | "warning" | "error" = "info"): void {
	if (ctx.hasUI) ctx.ui.notify(text, type);
	else writeOut(`${text}\n`);
}

/**
 * Writes to stdout at once: print mode exits right after the command, and a write to a pipe that
 * is still queued then is lost (`pi -p "/overflow stats" | less`).
 */
function writeOut(text: string): void {
	try {
		writeSync(process.stdout.fd, text);
	} catch {
		process.stdout.write(text); // a non-blocking stdout that is full: queued instead
	}
}
