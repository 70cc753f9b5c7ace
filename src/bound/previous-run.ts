// The last run of the same command before a tool call, found in the session's branch: the latest
// earlier call of the same tool with the same arguments (reruns/run-key.ts) whose result is in the
// branch. Its side of a comparison is read from what pi-overflow stored of it (an entry made for
// that very call in this session or one it was forked from, with its run record), or — when its
// output fit and was shown whole — by scanning the text the session kept, Pi's status line aside.
// Invariants: never throws (no comparison is the worst case); reads at most MAX_BRANCH_ENTRIES
// entries back, and a stored entry's metadata only.

import type { OverflowConfig } from "../config/config.js";
import { findPiBashStatus } from "../intake/pi-bash.js";
import { joinTextParts } from "../intake/stash.js";
import { bufferSource } from "../io/source.js";
import type { RunSide } from "../reruns/compare.js";
import type { CallIdentities, RunIdentity } from "../reruns/run-key.js";
import { summarizeScan } from "../reruns/summary.js";
import type { OverflowStore } from "../store/index.js";
import { scanSource } from "../view/compose.js";

/** Entries of the branch looked through, from its end. */
export const MAX_BRANCH_ENTRIES = 5_000;

/** An earlier call's result, as the session kept it. */
export interface EarlierCall {
	toolCallId: string;
	content: ReadonlyArray<{ type: string; text?: unknown }>;
	details: unknown;
	isError: boolean;
}

/**
 * The latest call before `toolCallId` in `branch` (Pi's session entries, root first) with the same
 * tool and run text (reruns/run-key.ts runTextOf), whose result the branch holds.
 */
export function findEarlierCall(
	branch: readonly unknown[],
	toolCallId: string,
	toolName: string,
	runText: string,
	identities: CallIdentities,
): EarlierCall | undefined {
	const results = new Map<string, EarlierCall>();
	const stop = Math.max(0, branch.length - MAX_BRANCH_ENTRIES);
	for (let index = branch.length - 1; index >= stop; index--) {
		const entry = branch[index] as { type?: unknown; message?: Record<string, unknown> };
		const message = entry?.type === "message" ? entry.message : undefined;
		if (message === undefined || message === null) continue;
		if (message.role === "toolResult") {
			const id = message.toolCallId;
			if (
				typeof id === "string" &&
				id !== toolCallId &&
				message.toolName === toolName &&
				Array.isArray(message.content)
			)
				results.set(id, {
					toolCallId: id,
					content: message.content as EarlierCall["content"],
					details: message.details,
					isError: message.isError === true,
				});
			continue;
		}
		if (message.role !== "assistant" || !Array.isArray(message.content) || results.size === 0) continue;
		const parts = message.content as Array<{ type?: unknown; id?: unknown; name?: unknown; arguments?: unknown }>;
		for (let part = parts.length - 1; part >= 0; part--) {
			const call = parts[part];
			if (call?.type !== "toolCall" || typeof call.id !== "string" || call.name !== toolName) continue;
			const result = results.get(call.id);
			if (result === undefined) continue;
			if (identities.textOf(toolName, call.arguments) === runText) return result;
		}
	}
	return undefined;
}

/** What reading an earlier run needs. */
export interface EarlierRunDependencies {
	store: OverflowStore;
	config: OverflowConfig;
	/** This session's id and those it was forked or branched from: a stored entry must be one of theirs. */
	sessionIds: () => Promise<ReadonlySet<string>>;
}

/**
 * The earlier call's side of a comparison: from its stored entry when its result names one (made for
 * that call, in this session's lineage, of the same command), else from the text the session kept
 * when that is the whole output. Undefined when neither can be read.
 */
export async function readEarlierRun(
	call: EarlierCall,
	identity: RunIdentity,
	deps: EarlierRunDependencies,
): Promise<RunSide | undefined> {
	try {
		const overflow = (call.details as { overflow?: { id?: unknown } } | undefined)?.overflow;
		const id = overflow?.id;
		if (typeof id === "string") {
			const meta = await deps.store.readMeta(id);
			if (meta === undefined || meta.toolCallId !== call.toolCallId || meta.run?.key !== identity.key) return undefined;
			if (!(await deps.sessionIds()).has(meta.sessionId)) return undefined;
			return {
				id,
				signals: meta.run.signals,
				...(meta.run.verdict ? { verdict: meta.run.verdict } : {}),
				...(meta.status ? { status: meta.status } : {}),
				totalLines: meta.totalLines,
			};
		}
		// A view that could not be stored is not the whole output; a result left as it was is (with Pi's status line).
		if (overflow !== undefined) return undefined;
		const text = joinTextParts(call.content);
		if (text.length > deps.config.thresholdChars) return undefined;
		const status = call.isError ? findPiBashStatus(text) : undefined;
		const output = status === undefined ? text : text.slice(0, text.length - status.length).trimEnd();
		const scanned = await scanSource(bufferSource(Buffer.from(output, "utf8")), deps.config);
		return {
			...summarizeScan(scanned.scan),
			...(status !== undefined ? { status } : {}),
			totalLines: scanned.scan.totalLines,
		};
	} catch {
		return undefined;
	}
}
