// Housekeeping of the store directory, in three steps: survey (list the directory once, lstat the
// files whose age decides, read each complete entry's metadata once), plan (pure: what was found +
// the clock → what to remove), execute (remove it, count what this call removed). Invariants: an
// entry or temp file a writer of this process holds is never removed; whole entries only, the .json
// first; never throws (every problem is a line in `errors`); quota eviction takes other sessions'
// entries first, then the current session's, oldest first, ties by id so every process agrees.

import { describeError } from "../lines/text.js";
import {
	classifyStoreNames,
	DEFAULT_HOUSEKEEPING_CONCURRENCY,
	type EntryPaths,
	type ErrorLog,
	halfExtension,
	isComplete,
	type KnownEntry,
	type LiveEntry,
	runWithConcurrency,
	type StoreDirectory,
} from "./directory.js";
import { readErrorCode } from "./fs.js";
import { isActiveTemp } from "./writer.js";

/** A temp file older than this is stale even when its writer's pid is alive (pids get reused). */
export const DEFAULT_STALE_TEMP_MS = 60 * 60 * 1000;
/** A half entry (.txt without .json or the reverse) younger than this may be a writer between its two links. */
export const DEFAULT_ORPHAN_AGE_MS = 10 * 60 * 1000;

export interface HousekeepingOptions {
	/** Entries whose createdAt is older than this are removed. */
	retentionMs: number;
	/** While all entries together exceed this, whole entries are evicted oldest first. */
	maxStoreBytes: number;
	/** Entries of this session are evicted for quota only after every other session's. */
	currentSessionId?: string;
}

export interface HousekeepingResult {
	removedExpired: number;
	removedForQuota: number;
	removedTemp: number;
	removedOrphans: number;
	/** Bytes (.txt + .json) of the complete entries left. */
	remainingBytes: number;
	/** One line per problem; housekeeping never throws. */
	errors: string[];
}

/** What the survey found: the plan's input. */
export interface StoreSurvey {
	/** Temp files no writer of this process holds: regular files named like ours, with their writer's pid. */
	temps: { path: string; pid: number; mtimeMs: number }[];
	/** The one file present of a half entry (an entry being committed here left out). */
	halves: { path: string; mtimeMs: number }[];
	/** Complete entries with valid metadata (entries being committed here left out). */
	entries: LiveEntry[];
	/** Complete entries whose metadata is not ours (invalid, too large), judged by their .json's age. */
	unreadable: (EntryPaths & { jsonMtimeMs: number; bytes: number })[];
}

/** The world the plan is made in. */
export interface PlanContext {
	now: number;
	/** This process's pid: a temp file of it that no writer holds was abandoned. */
	ownPid: number;
	isProcessAlive(pid: number): boolean;
}

/** What one housekeeping removes, in order, and what it keeps. */
export interface HousekeepingPlan {
	/** Temp files of dead writers, or older than DEFAULT_STALE_TEMP_MS. */
	temps: string[];
	/** Half-entry files older than DEFAULT_ORPHAN_AGE_MS. */
	halves: string[];
	/** Entries older than the retention. */
	expired: EntryPaths[];
	/** Entries with unreadable metadata older than DEFAULT_ORPHAN_AGE_MS: removed like orphans. */
	unreadable: EntryPaths[];
	/** Entries evicted for the quota. */
	evict: LiveEntry[];
	/** Entries left once the plan is carried out. */
	kept: LiveEntry[];
	/** Bytes of the entries before eviction (the evicted included). */
	totalBytes: number;
}

/** The rules a housekeeping applies; a rule left undefined is skipped. */
export interface HousekeepingRules {
	retentionMs?: number;
	maxStoreBytes?: number;
	currentSessionId?: string;
}

/** The usable options as rules, and one line per option that is not usable (its rule is skipped). Pure. */
export function checkHousekeepingOptions(options: HousekeepingOptions): { rules: HousekeepingRules; errors: string[] } {
	const retentionMs = options?.retentionMs;
	const maxStoreBytes = options?.maxStoreBytes;
	const rules: HousekeepingRules = { currentSessionId: options?.currentSessionId };
	const errors: string[] = [];
	if (typeof retentionMs === "number" && retentionMs > 0) rules.retentionMs = retentionMs;
	else errors.push(`retentionMs must be a positive number, got ${String(retentionMs)}; expiry skipped`);
	if (typeof maxStoreBytes === "number" && maxStoreBytes >= 0) rules.maxStoreBytes = maxStoreBytes;
	else errors.push(`maxStoreBytes must be a non-negative number, got ${String(maxStoreBytes)}; quota skipped`);
	return { rules, errors };
}

/** The plan for what was found: pure. */
export function planHousekeeping(
	survey: StoreSurvey,
	rules: HousekeepingRules,
	context: PlanContext,
): HousekeepingPlan {
	const { now } = context;
	const { retentionMs, maxStoreBytes } = rules;
	const pidAlive = new Map<number, boolean>();
	const isStale = (temp: StoreSurvey["temps"][number]): boolean => {
		let alive = pidAlive.get(temp.pid);
		if (alive === undefined) {
			// Our own pid: no writer of this process holds the file (the survey checked), so it was abandoned.
			alive = temp.pid !== context.ownPid && context.isProcessAlive(temp.pid);
			pidAlive.set(temp.pid, alive);
		}
		return !alive || now - temp.mtimeMs > DEFAULT_STALE_TEMP_MS;
	};
	const live: LiveEntry[] = [];
	const expired: EntryPaths[] = [];
	for (const entry of survey.entries) {
		if (retentionMs !== undefined && now - entry.createdMs > retentionMs) expired.push(entry);
		else live.push(entry);
	}
	const unreadable: EntryPaths[] = [];
	for (const entry of survey.unreadable) {
		if (now - entry.jsonMtimeMs > DEFAULT_ORPHAN_AGE_MS) unreadable.push(entry);
		else
			live.push({
				id: entry.id,
				txtPath: entry.txtPath,
				jsonPath: entry.jsonPath,
				createdMs: entry.jsonMtimeMs,
				bytes: entry.bytes,
				sessionId: undefined,
			});
	}
	const totalBytes = live.reduce((sum, entry) => sum + entry.bytes, 0);
	const evict =
		maxStoreBytes !== undefined && totalBytes > maxStoreBytes
			? selectVictims(live, totalBytes, maxStoreBytes, rules.currentSessionId)
			: [];
	const evicted = new Set(evict);
	return {
		temps: survey.temps.filter(isStale).map((temp) => temp.path),
		halves: survey.halves.filter((half) => now - half.mtimeMs > DEFAULT_ORPHAN_AGE_MS).map((half) => half.path),
		expired,
		unreadable,
		evict,
		kept: live.filter((entry) => !evicted.has(entry)),
		totalBytes,
	};
}

/**
 * The entries to evict until `totalBytes` is at most `targetBytes`: other sessions' first, then
 * the current session's, oldest first within each (ties by id, so every process agrees). Pure.
 */
export function selectVictims<T extends KnownEntry>(
	entries: readonly T[],
	totalBytes: number,
	targetBytes: number,
	currentSessionId: string | undefined,
): T[] {
	const isCurrent = (entry: KnownEntry) => currentSessionId !== undefined && entry.sessionId === currentSessionId;
	const ordered = [...entries].sort((a, b) => {
		if (isCurrent(a) !== isCurrent(b)) return isCurrent(a) ? 1 : -1;
		if (a.createdMs !== b.createdMs) return a.createdMs - b.createdMs;
		return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
	});
	const victims: T[] = [];
	let planned = totalBytes;
	for (const entry of ordered) {
		if (planned <= targetBytes) break;
		victims.push(entry);
		planned -= entry.bytes;
	}
	return victims;
}

/**
 * Lists the directory once and gathers what the plan needs: the age of temp files and half entries
 * (lstat), each complete entry's metadata (read once), and the age of entries whose metadata is not
 * ours. Entries this process is committing and temp files it is writing are left out right at the
 * listing. Undefined when the directory cannot be listed (reported).
 */
export async function surveyStore(dir: StoreDirectory, log: ErrorLog): Promise<StoreSurvey | undefined> {
	const dirents = await dir.list("housekeeping", log);
	if (dirents === undefined) return undefined;
	const { temps, halves } = classifyStoreNames(dirents, dir.prefix);
	const ownTemps = temps.filter((temp) => !isActiveTemp(temp.path));
	const complete: EntryPaths[] = [];
	const halfPaths: string[] = [];
	for (const [id, has] of halves) {
		if (dir.isCommitting(id)) continue;
		if (isComplete(has)) complete.push(dir.pathsOf(id));
		else halfPaths.push(`${dir.prefix}${id}.${halfExtension(has)}`);
	}
	const survey: StoreSurvey = { temps: [], halves: [], entries: [], unreadable: [] };
	await runWithConcurrency(ownTemps, DEFAULT_HOUSEKEEPING_CONCURRENCY, async (temp) => {
		const stats = await dir.lstatRegularFile(temp.path, log);
		if (stats !== undefined) survey.temps.push({ ...temp, mtimeMs: stats.mtimeMs });
	});
	await runWithConcurrency(halfPaths, DEFAULT_HOUSEKEEPING_CONCURRENCY, async (path) => {
		const stats = await dir.lstatRegularFile(path, log);
		if (stats !== undefined) survey.halves.push({ path, mtimeMs: stats.mtimeMs });
	});
	const invalid = await dir.readEntryMetas(complete, log, (entry, known) =>
		survey.entries.push({ ...entry, ...known }),
	);
	await runWithConcurrency(invalid, DEFAULT_HOUSEKEEPING_CONCURRENCY, async (entry) => {
		const [txtStats, jsonStats] = await Promise.all([
			dir.lstatRegularFile(entry.txtPath, log),
			dir.lstatRegularFile(entry.jsonPath, log),
		]);
		if (jsonStats !== undefined)
			survey.unreadable.push({
				...entry,
				jsonMtimeMs: jsonStats.mtimeMs,
				bytes: (txtStats?.size ?? 0) + jsonStats.size,
			});
	});
	return survey;
}

/** Carries the plan out; counts only what this call removed (a concurrent housekeeper's removals are not counted twice). */
export async function executeHousekeeping(
	dir: StoreDirectory,
	plan: HousekeepingPlan,
	result: HousekeepingResult,
): Promise<void> {
	const each = <T>(items: readonly T[], task: (item: T) => Promise<void>) =>
		runWithConcurrency(items, DEFAULT_HOUSEKEEPING_CONCURRENCY, task);
	await each(plan.temps, async (path) => {
		if (await dir.removeFile(path, result)) result.removedTemp++;
	});
	await each(plan.halves, async (path) => {
		if (await dir.removeFile(path, result)) result.removedOrphans++;
	});
	await each(plan.expired, async (entry) => {
		if (await dir.removeEntry(entry, result)) result.removedExpired++;
	});
	await each(plan.unreadable, async (entry) => {
		if (await dir.removeEntry(entry, result)) result.removedOrphans++;
	});
	let remainingBytes = plan.totalBytes;
	await each(plan.evict, async (entry) => {
		if (await dir.removeEntry(entry, result)) {
			result.removedForQuota++;
			remainingBytes -= entry.bytes;
		}
	});
	result.remainingBytes = remainingBytes;
}

/** Survey, plan, execute; never throws. Returns the entries left (undefined when the directory could not be listed). */
export async function runHousekeeping(
	dir: StoreDirectory,
	options: HousekeepingOptions,
	now: number,
	result: HousekeepingResult,
): Promise<LiveEntry[] | undefined> {
	try {
		const { rules, errors } = checkHousekeepingOptions(options);
		result.errors.push(...errors);
		const survey = await surveyStore(dir, result);
		if (survey === undefined) return undefined;
		const plan = planHousekeeping(survey, rules, { now, ownPid: process.pid, isProcessAlive });
		await executeHousekeeping(dir, plan, result);
		return plan.kept;
	} catch (error) {
		result.errors.push(`housekeeping stopped: ${describeError(error)}`);
		return undefined;
	}
}

/** `process.kill(pid, 0)`: ESRCH means gone; EPERM means alive but someone else's. */
function isProcessAlive(pid: number): boolean {
	if (!Number.isSafeInteger(pid) || pid < 1) return false;
	if (pid === process.pid) return true;
	try {
		process.kill(pid, 0);
		return true;
	} catch (error) {
		return readErrorCode(error) === "EPERM";
	}
}
