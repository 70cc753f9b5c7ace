// The user's own `!command` output in what the model is sent. Pi adds it to the session as a
// bashExecution message holding its own 50 KB tail and, when it cut the output, the path of a
// world-readable `<tmpdir>/pi-bash-<hex>.log` that Pi's text for the model names. Invariants: such a
// message reaches the model bounded like a tool result (a view with an id, or its text with a recovery
// marker) and never with a spill path; its text is computed once per message and kept, in memory and
// as a custom session entry, so every later call, and a resumed or forked session, sends the same
// bytes and the same id; `!!` messages (excludeFromContext) are never touched, so Pi keeps them out.
// Pi's spill file of every `!` and `!!` command is made private (0600) as soon as the command ends
// (UserSpillGuard) and kept where it is: Pi's screen, and a resumed session's, names that path.

import { createHash } from "node:crypto";
import { type BoundDependencies, boundToolResult, type ToolResultPatch } from "../bound/bound.js";
import { type ContextMessage, type MaskableView, readStubLines, type StubLine } from "./masking.js";
import { isPiBashSpillPath } from "../intake/pi-bash.js";
import type { SpillPrivacy } from "../intake/spill-release.js";
import { formatNote } from "../lines/protocol.js";
import { minSourceBytes, openSpillFile, sourceEndsWith } from "../io/source.js";
import { joinTextParts } from "../intake/stash.js";

/** customType of the session entries that keep each bounded `!command` text. */
export const USER_BASH_ENTRY_TYPE = "pi-overflow/user-bash";
/** The tool name a `!command`'s stored entry and view carry. */
export const USER_BASH_TOOL_NAME = "user_bash";
/** Longest wait for Pi to finish writing a just-finished command's spill file (Pi does not wait for it). */
export const DEFAULT_SPILL_FLUSH_WAIT_MS = 1_000;
/** A command that finished longer ago than this has long been written out: no wait. */
const RECENT_COMMAND_MS = 10_000;
const SPILL_FLUSH_POLL_MS = 20;
/** `!command` start times remembered (from Pi's user_bash event) for the spill file's age check. */
const MAX_TRACKED_STARTS = 64;
/** What the model reads in place of Pi's spill path. */
const SPILL_PATH_STAND_IN = "(Pi's temp file)";

/** What one `!command` message becomes for the model, kept per message. */
export interface UserBashRecord {
	/** keyOfBashMessage: the message's time and a hash of its command. */
	key: string;
	/** The text the model gets in place of the output. */
	output: string;
	/** The stored entry, when the output was bounded and stored. */
	id?: string;
	totalLines?: number;
	totalBytes?: number;
	/** details.overflow.top of the bound stage, when it gives one. */
	top?: StubLine[];
}

export interface UserBashOptions {
	/** Keeps a record in the session (pi.appendEntry); failures are ignored. */
	persist(record: UserBashRecord): void;
	/** Clock in ms since the epoch; default Date.now. */
	now?: () => number;
	/** See DEFAULT_SPILL_FLUSH_WAIT_MS. */
	flushWaitMs?: number;
	/** Called once a `!command` read from Pi's spill file was bounded (spill-release.ts makes the file private). */
	onSpillBounded?(patch: ToolResultPatch, spillPath: string): Promise<unknown>;
}

/** What the bound stage needs for one message; the budget is the message's share of the window. */
export type UserBashBoundDependencies = Omit<BoundDependencies, "stash" | "toolStartedAt"> & { budgetChars: number };

/** The fields of Pi's BashExecutionMessage read here. */
interface BashExecution extends ContextMessage {
	role: "bashExecution";
	command: string;
	output: string;
	timestamp: number;
	truncated?: boolean;
	fullOutputPath?: string;
	excludeFromContext?: boolean;
}

/** The key of a `!command` message: its time and a hash of its command (a session keeps both). */
export function keyOfBashMessage(message: { timestamp: number; command: string }): string {
	return `user-bash:${message.timestamp}:${createHash("sha1").update(message.command, "utf8").digest("hex").slice(0, 16)}`;
}

/** The bounded `!command` texts of one session. */
export class UserBashViews {
	private readonly records = new Map<string, UserBashRecord>();
	/** Messages that fit as they are (decided once, so a later, smaller budget does not change them). */
	private readonly fitting = new Set<string>();
	private readonly pending = new Map<string, Promise<UserBashRecord | undefined>>();
	private readonly starts: Array<{ command: string; at: number }> = [];
	private readonly now: () => number;

	constructor(private readonly options: UserBashOptions) {
		this.now = options.now ?? Date.now;
	}

	/** Takes the records a session kept (its custom entries); returns their ids. */
	restore(entries: readonly unknown[]): string[] {
		const ids: string[] = [];
		for (const entry of entries) {
			if (!isRecord(entry) || entry.type !== "custom" || entry.customType !== USER_BASH_ENTRY_TYPE) continue;
			const record = parseRecord(entry.data);
			if (record === undefined) continue;
			this.records.set(record.key, record);
			if (record.id !== undefined) ids.push(record.id);
		}
		return ids;
	}

	/** Pi's user_bash event (interactive mode): when the command started, for the spill file's age check. */
	noteStart(command: string, at: number): void {
		this.starts.push({ command, at });
		if (this.starts.length > MAX_TRACKED_STARTS) this.starts.shift();
	}

	/** The view a message carries once transformed, for masking; undefined for anything else. */
	findView(message: ContextMessage): MaskableView | undefined {
		if (!isBashExecution(message)) return undefined;
		const record = this.records.get(keyOfBashMessage(message));
		if (record?.id === undefined || record.totalLines === undefined || record.totalBytes === undefined)
			return undefined;
		return {
			id: record.id,
			toolName: USER_BASH_TOOL_NAME,
			totalLines: record.totalLines,
			totalBytes: record.totalBytes,
			text: record.output,
			...(record.top ? { top: record.top } : {}),
		};
	}

	/**
	 * The message as the model gets it: a `!command` bounded (computed on first sight, then kept), any
	 * other message as it is. Never throws; the spill path never survives.
	 */
	async transform(message: ContextMessage, deps: () => UserBashBoundDependencies): Promise<ContextMessage> {
		if (!isBashExecution(message) || message.excludeFromContext === true) return message;
		const key = keyOfBashMessage(message);
		if (this.fitting.has(key)) return message;
		let record = this.records.get(key);
		if (record === undefined) {
			let computing = this.pending.get(key);
			if (computing === undefined) {
				computing = this.compute(message, key, deps).finally(() => this.pending.delete(key));
				this.pending.set(key, computing);
			}
			record = await computing;
		}
		if (record === undefined) return message;
		const out: ContextMessage = { ...message, output: record.output, truncated: false };
		delete out.fullOutputPath;
		return out;
	}

	private async compute(
		message: BashExecution,
		key: string,
		depsOf: () => UserBashBoundDependencies,
	): Promise<UserBashRecord | undefined> {
		const spillPath =
			message.truncated === true && typeof message.fullOutputPath === "string" ? message.fullOutputPath : undefined;
		let record: UserBashRecord;
		try {
			const deps = depsOf();
			if (spillPath === undefined && message.output.length <= deps.budgetChars) {
				this.fitting.add(key);
				return undefined;
			}
			// The spill file is checked here first, so that a reason it is refused (which may name it)
			// reaches neither the view nor the stored metadata; the bound stage checks it again.
			let path: string | undefined;
			let note: string | undefined;
			if (spillPath !== undefined) {
				// Only Pi's own spill file is read (a user_bash extension may name anything).
				const refused = isPiBashSpillPath(spillPath)
					? await this.checkSpillFile(spillPath, message, deps)
					: "not Pi's own spill file";
				if (refused === undefined) path = spillPath;
				else
					note = formatNote(
						`Pi kept only the end of this output; its full output could not be read (${hideSpillPath(refused, spillPath).slice(0, 160)})`,
					);
			}
			const budgetChars = note === undefined ? deps.budgetChars : Math.max(1, deps.budgetChars - note.length - 1);
			const patch = await boundToolResult(
				{
					toolName: USER_BASH_TOOL_NAME,
					toolCallId: key,
					content: [{ type: "text", text: message.output }],
					details: path === undefined ? undefined : { fullOutputPath: path },
				},
				{ ...deps, budgetChars, stash: undefined, toolStartedAt: this.findStart(message) },
			);
			if (patch !== undefined && path !== undefined) await this.options.onSpillBounded?.(patch, path);
			if (patch === undefined) {
				if (note === undefined) {
					this.fitting.add(key);
					return undefined;
				}
				record = { key, output: `${message.output}\n${note}` };
			} else {
				const overflow = readOverflow(patch.details);
				const text = hideSpillPath(joinTextParts(patch.content), spillPath);
				const output = note === undefined ? text : insertAfterFirstLine(text, note);
				record = overflow?.id === undefined ? { key, output } : { key, output, ...overflow };
			}
		} catch (error) {
			// Never the spill path, never unbounded: the end Pi kept, said so.
			const budget = safeBudget(depsOf);
			const note = formatNote(
				`this output could not be bounded (${hideSpillPath(String(error instanceof Error ? error.message : error), spillPath).slice(0, 200)}); showing its end`,
			);
			record = {
				key,
				output: `${note}\n${message.output.slice(Math.max(0, message.output.length - Math.max(0, budget - note.length - 1)))}`,
			};
		}
		this.records.set(key, record);
		try {
			this.options.persist(record);
		} catch {
			// The session keeps nothing: a resumed session computes the text again.
		}
		return record;
	}

	/** The latest start of the same command at or before the message, when Pi reported one. */
	private findStart(message: BashExecution): number | undefined {
		for (let index = this.starts.length - 1; index >= 0; index--) {
			const start = this.starts[index];
			if (start.command === message.command && start.at <= message.timestamp) return start.at;
		}
		return undefined;
	}

	/**
	 * Why Pi's spill file cannot be used, or undefined when it passes the bound stage's checks and
	 * holds the output Pi kept. Pi ends the file's stream without waiting for it, so for a command
	 * that has just finished the file is read again (bounded) until it ends with that output.
	 */
	private async checkSpillFile(
		path: string,
		message: BashExecution,
		deps: UserBashBoundDependencies,
	): Promise<string | undefined> {
		const checks = { uid: deps.uid ?? process.getuid?.(), notBeforeMs: this.findStart(message) };
		const recent = this.now() - message.timestamp <= RECENT_COMMAND_MS;
		const deadline = this.now() + (this.options.flushWaitMs ?? DEFAULT_SPILL_FLUSH_WAIT_MS);
		for (;;) {
			const opened = await openSpillFile(path, checks);
			if (!opened.ok) return opened.reason;
			const { source } = opened;
			const complete = await (async () =>
				source.size > minSourceBytes(message.output) && (await sourceEndsWith(source, message.output)))().finally(() =>
				source.close(),
			);
			if (complete) return undefined;
			if (!recent || this.now() >= deadline) return "the file does not hold the output Pi kept";
			await new Promise((resolve) => setTimeout(resolve, SPILL_FLUSH_POLL_MS));
		}
	}
}

/** How often a running `!command`'s message is looked for (Pi reports a command's start, not its end). */
const SPILL_WATCH_POLL_MS = 100;
/** Looks a spill file Pi has named may take to appear (Pi opens it without waiting). */
const SPILL_APPEAR_LOOKS = 50;
/** Entries read back from the session's leaf to find a command's message. */
const RECENT_ENTRIES = 64;
/** Spill files remembered as made private (so they are not opened again). */
const MAX_SECURED = 4_096;

/** The part of Pi's ReadonlySessionManager the guard reads. */
export interface SessionEntries {
	getLeafEntry(): unknown;
	getEntry(id: string): unknown;
}

export interface UserSpillGuardOptions {
	/** spill-release.ts's makeSpillFilePrivate. */
	makePrivate(path: string): Promise<SpillPrivacy>;
	/** See SPILL_WATCH_POLL_MS. */
	pollMs?: number;
}

/** The `!`/`!!` command running, whose message (and spill file) is looked for. */
interface Watch {
	command: string;
	at: number;
	session: SessionEntries;
	looks: number;
}

/**
 * Pi's spill files of the user's `!` and `!!` commands, made private as soon as each command ends.
 * Pi's user_bash event (interactive mode) reports a start; Pi then adds the command's message to
 * the session when it ends (or, while the agent runs, when its turn ends), so the session's latest
 * entries are read until that message appears. Pi runs one `!command` at a time: a new start ends
 * the watch of the previous one, after one last look. Never throws.
 */
export class UserSpillGuard {
	private watch?: Watch;
	private timer?: NodeJS.Timeout;
	private readonly secured = new Set<string>();

	constructor(private readonly options: UserSpillGuardOptions) {}

	/** Pi's user_bash event: `command` starts now; its message will be in `session`. */
	noteStart(command: string, at: number, session: SessionEntries): void {
		const previous = this.watch;
		this.watch = { command, at, session, looks: 0 };
		if (previous !== undefined) void this.look(previous);
		this.schedule();
	}

	/** Makes private the spill file of every `!`/`!!` message among `messages` (a resumed session's). */
	async sweep(messages: Iterable<unknown>): Promise<void> {
		for (const message of messages) {
			const path = spillPathOf(message);
			if (path !== undefined) await this.secure(path);
		}
	}

	/** The session is ending: one last look for the running command and the latest entries; no more watching. */
	async close(session: SessionEntries): Promise<void> {
		const watch = this.watch;
		this.stop();
		if (watch !== undefined) await this.look(watch);
		await this.sweep(readRecentMessages(session));
	}

	private stop(): void {
		this.watch = undefined;
		if (this.timer !== undefined) clearTimeout(this.timer);
		this.timer = undefined;
	}

	private schedule(): void {
		if (this.timer !== undefined) return;
		this.timer = setTimeout(() => {
			this.timer = undefined;
			const watch = this.watch;
			if (watch === undefined) return;
			void this.look(watch).then((done) => {
				if (this.watch !== watch) return;
				if (done) this.watch = undefined;
				else this.schedule();
			});
		}, this.options.pollMs ?? SPILL_WATCH_POLL_MS);
		this.timer.unref?.();
	}

	/** One look for the watched command's message; true once there is nothing more to wait for. */
	private async look(watch: Watch): Promise<boolean> {
		try {
			const message = readRecentMessages(watch.session).find(
				(candidate) =>
					isBashExecution(candidate as ContextMessage) &&
					(candidate as BashExecution).command === watch.command &&
					(candidate as BashExecution).timestamp >= watch.at,
			);
			if (message === undefined) return false;
			const path = spillPathOf(message);
			if (path === undefined) return true;
			const privacy = await this.secure(path);
			return privacy !== "missing" || ++watch.looks >= SPILL_APPEAR_LOOKS;
		} catch {
			// A session that is gone (replaced, reloaded) has nothing more to show.
			return true;
		}
	}

	private async secure(path: string): Promise<SpillPrivacy> {
		if (this.secured.has(path)) return "private";
		const privacy = await this.options.makePrivate(path).catch((): SpillPrivacy => "refused");
		if (privacy !== "missing") {
			this.secured.add(path);
			if (this.secured.size > MAX_SECURED) this.secured.delete(this.secured.values().next().value as string);
		}
		return privacy;
	}
}

/** The messages of the session's latest entries, newest first. */
function readRecentMessages(session: SessionEntries): unknown[] {
	const messages: unknown[] = [];
	let entry = session.getLeafEntry();
	for (let count = 0; count < RECENT_ENTRIES && isRecord(entry); count++) {
		if (entry.type === "message" && isRecord(entry.message)) messages.push(entry.message);
		entry = typeof entry.parentId === "string" ? session.getEntry(entry.parentId) : undefined;
	}
	return messages;
}

/** The spill file Pi named for a `!`/`!!` message, when it cut the output. */
function spillPathOf(message: unknown): string | undefined {
	if (!isRecord(message) || message.role !== "bashExecution") return undefined;
	const path = message.fullOutputPath;
	return typeof path === "string" && isPiBashSpillPath(path) ? path : undefined;
}

function isBashExecution(message: ContextMessage): message is BashExecution {
	return (
		message.role === "bashExecution" &&
		typeof message.command === "string" &&
		typeof message.output === "string" &&
		typeof message.timestamp === "number"
	);
}

/** The note as the view's second line (under its header), so it is read with the header. */
function insertAfterFirstLine(text: string, note: string): string {
	const end = text.indexOf("\n");
	return end < 0 ? `${text}\n${note}` : `${text.slice(0, end)}\n${note}${text.slice(end)}`;
}

function hideSpillPath(text: string, path: string | undefined): string {
	return path === undefined || path === "" ? text : text.split(path).join(SPILL_PATH_STAND_IN);
}

function safeBudget(depsOf: () => UserBashBoundDependencies): number {
	try {
		return depsOf().budgetChars;
	} catch {
		return 2_000;
	}
}

/** details.overflow of a bound result, as a record keeps it. */
function readOverflow(details: unknown): Pick<UserBashRecord, "id" | "totalLines" | "totalBytes" | "top"> | undefined {
	if (!isRecord(details) || !isRecord(details.overflow)) return undefined;
	const { id, totalLines, totalBytes, top } = details.overflow;
	if (typeof id !== "string" || !isCount(totalLines) || !isCount(totalBytes)) return undefined;
	const lines = readStubLines(top);
	return { id, totalLines, totalBytes, ...(lines ? { top: lines } : {}) };
}

/** A record read back from a session entry (written by this module, but a session file is editable). */
function parseRecord(value: unknown): UserBashRecord | undefined {
	if (!isRecord(value) || typeof value.key !== "string" || typeof value.output !== "string") return undefined;
	const record: UserBashRecord = { key: value.key, output: value.output };
	const overflow = readOverflow({ overflow: value });
	return overflow !== undefined && /^[0-9a-f]{12}$/.test(overflow.id ?? "") ? { ...record, ...overflow } : record;
}

function isRecord(value: unknown): value is Record<string, unknown> {
	return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isCount(value: unknown): value is number {
	return typeof value === "number" && Number.isSafeInteger(value) && value >= 0;
}
