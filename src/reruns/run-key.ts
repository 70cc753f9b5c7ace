// Which tool calls are runs of the same command: the same tool with the same arguments. For bash,
// the command text with its surrounding white space trimmed (its timeout is not part of what runs);
// for any other tool, its arguments as canonical JSON (keys sorted at every level). The key is a
// hash, so a stored entry names the command without a second copy of long arguments; the label is
// what the user and the model are shown. Pure.

import { createHash } from "node:crypto";
import { toOneLine } from "../lines/text.js";

/** Longest label kept, in characters. */
export const RUN_LABEL_CHARS = 200;
/** Arguments longer than this (as JSON) make no key: a call that large is not a command one re-runs. */
const MAX_ARGUMENT_CHARS = 1_000_000;

/** A tool call's identity as a run: its key and what it ran. */
export interface RunIdentity {
	key: string;
	label: string;
}

/** The run identity of a call of `toolName` with `input`, or undefined when its arguments cannot be read. */
export function runIdentityOf(toolName: string, input: unknown): RunIdentity | undefined {
	const run = runTextOf(toolName, input);
	return run === undefined ? undefined : identityOfRunText(toolName, run);
}

/** The run identity of a run text (runTextOf): its hash, and a label made of the arguments' start. */
function identityOfRunText(toolName: string, run: string): RunIdentity {
	const key = createHash("sha256").update(run, "utf8").digest("hex").slice(0, 32);
	// The label is made of the start only: a long argument costs its hash, not a pass of toOneLine.
	const start = run.slice(toolName.length + 1, toolName.length + 1 + RUN_LABEL_CHARS * 4);
	return { key, label: toOneLine(toolName === "bash" ? start : `${toolName} ${start}`, RUN_LABEL_CHARS) };
}

/**
 * What makes two calls runs of the same command, as text: the tool's name, a NUL, then bash's trimmed
 * command or any other tool's canonical JSON arguments (what runIdentityOf hashes). Undefined when the
 * arguments cannot be read. Equal texts, equal run keys.
 */
export function runTextOf(toolName: string, input: unknown): string | undefined {
	const text = describeArguments(toolName, input);
	return text === undefined || text.length > MAX_ARGUMENT_CHARS ? undefined : `${toolName}\0${text}`;
}

/** What identifies the call's arguments: bash's trimmed command, any other tool's canonical JSON. */
function describeArguments(toolName: string, input: unknown): string | undefined {
	if (toolName === "bash") {
		const command = (input as { command?: unknown } | undefined)?.command;
		return typeof command === "string" && command.trim() !== "" ? command.trim() : undefined;
	}
	try {
		return canonicalJson(input ?? {}, 0);
	} catch {
		return undefined;
	}
}

/** JSON with object keys sorted at every level; throws on what JSON cannot say or nesting past 64 levels. */
function canonicalJson(value: unknown, depth: number): string {
	if (depth > 64) throw new Error("too deep");
	if (value === null || typeof value === "number" || typeof value === "boolean" || typeof value === "string")
		return JSON.stringify(value);
	if (Array.isArray(value)) return `[${value.map((item) => canonicalJson(item ?? null, depth + 1)).join(",")}]`;
	if (typeof value === "object") {
		const entries = Object.keys(value as object)
			.filter((key) => (value as Record<string, unknown>)[key] !== undefined)
			.sort()
			.map((key) => `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key], depth + 1)}`);
		return `{${entries.join(",")}}`;
	}
	throw new Error(`cannot key a ${typeof value}`);
}

/**
 * Tool calls as runs, remembered by their arguments object (the session keeps one object per call),
 * so the calls of a long session are described once and a reused call id is never confused. Calls
 * are compared by their run text (no hash: a session's calls cost a string each); the identity,
 * with its hash, is made only for a call that is stored.
 */
export class CallIdentities {
	private readonly known = new WeakMap<object, { toolName: string; text: string | undefined }>();

	/** The call's run text (runTextOf), remembered. */
	textOf(toolName: string, input: unknown): string | undefined {
		if (typeof input !== "object" || input === null) return runTextOf(toolName, input);
		const seen = this.known.get(input);
		if (seen !== undefined && seen.toolName === toolName) return seen.text;
		const text = runTextOf(toolName, input);
		this.known.set(input, { toolName, text });
		return text;
	}

	/** The call's run identity, hashed from its remembered run text. */
	of(toolName: string, input: unknown): RunIdentity | undefined {
		const run = this.textOf(toolName, input);
		return run === undefined ? undefined : identityOfRunText(toolName, run);
	}
}
