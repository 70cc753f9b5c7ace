// Which tool results are pi-overflow's own views, the only ones masking may hide. A result's
// details.overflow is never believed on its word (a tool, or a bridge copying remote JSON into its
// details, can name any id): a view is own when pi-overflow bounded it in this process (its record,
// kept as the tool_result handler returns), or, for a result from before a resume or fork, when the
// stored entry the details name was made for that same tool call in this session or one it was
// forked or branched from (the entry's metadata: toolCallId, sessionId). Invariants: a verdict is
// reached once per (id, tool call) and never changes; no check throws.

import { constants } from "node:fs";
import { open } from "node:fs/promises";
import type { ContextMessage } from "./masking.js";

/** The metadata an own-view check reads of a stored entry. */
export interface OwnerMeta {
	sessionId: string;
	toolCallId: string;
}

/** Parent session files followed at most, from a session to the one it was forked or branched from. */
const MAX_LINEAGE_DEPTH = 16;
/** Bytes of a session file read for its header line. */
const MAX_HEADER_BYTES = 64 * 1024;

export class OwnViews {
	/** (id, toolCallId) → own or not. */
	private readonly verdicts = new Map<string, boolean>();

	constructor(private readonly readMeta: (id: string) => Promise<OwnerMeta | undefined>) {}

	/** pi-overflow bounded this tool call's result under this id. */
	noteBounded(id: string, toolCallId: string): void {
		this.verdicts.set(keyOf(id, toolCallId), true);
	}

	/** True only for a result whose view pi-overflow is known to have bounded (after check()). */
	isOwn(message: ContextMessage): boolean {
		const claim = readClaim(message);
		return claim !== undefined && this.verdicts.get(keyOf(claim.id, claim.toolCallId)) === true;
	}

	/**
	 * Reaches a verdict for every result in `messages` whose details name an id not judged yet: own
	 * when its stored entry names the same tool call and one of `sessionIds()` (asked at most once).
	 */
	async check(messages: readonly ContextMessage[], sessionIds: () => Promise<ReadonlySet<string>>): Promise<void> {
		const pending = new Map<string, { id: string; toolCallId: string }>();
		for (const message of messages) {
			const claim = readClaim(message);
			if (claim === undefined) continue;
			const key = keyOf(claim.id, claim.toolCallId);
			if (!this.verdicts.has(key)) pending.set(key, claim);
		}
		if (pending.size === 0) return;
		let sessions: ReadonlySet<string>;
		try {
			sessions = await sessionIds();
		} catch {
			sessions = new Set();
		}
		await Promise.all(
			[...pending].map(async ([key, claim]) => {
				const meta = await this.readMeta(claim.id).catch(() => undefined);
				const own = meta !== undefined && meta.toolCallId === claim.toolCallId && sessions.has(meta.sessionId);
				this.verdicts.set(key, own);
			}),
		);
	}
}

/** The id a tool result's details name and its tool call, when both are strings. */
function readClaim(message: ContextMessage): { id: string; toolCallId: string } | undefined {
	if (message.role !== "toolResult" || typeof message.toolCallId !== "string") return undefined;
	const details = message.details as { overflow?: { id?: unknown } } | undefined;
	const id = typeof details === "object" && details !== null ? details.overflow?.id : undefined;
	return typeof id === "string" ? { id, toolCallId: message.toolCallId } : undefined;
}

function keyOf(id: string, toolCallId: string): string {
	return `${id}\0${toolCallId}`;
}

/**
 * A session's id and the ids of the sessions it was forked or branched from, following each
 * session file's header (`parentSession`). A file that cannot be read ends the chain. Never throws.
 */
export async function readSessionLineage(sessionId: string, parentFile: string | undefined): Promise<Set<string>> {
	const ids = new Set([sessionId]);
	let file = parentFile;
	for (let depth = 0; depth < MAX_LINEAGE_DEPTH && typeof file === "string" && file !== ""; depth++) {
		const header = await readSessionHeader(file);
		if (header === undefined || ids.has(header.id)) break;
		ids.add(header.id);
		file = header.parentSession;
	}
	return ids;
}

/** The header line of a session file: `{"type":"session","id":…,"parentSession":…}`. */
async function readSessionHeader(file: string): Promise<{ id: string; parentSession?: string } | undefined> {
	try {
		// Non-blocking: a FIFO named as a parent session never holds a thread.
		const handle = await open(file, constants.O_RDONLY | constants.O_NONBLOCK);
		try {
			const buffer = Buffer.alloc(MAX_HEADER_BYTES);
			const { bytesRead } = await handle.read(buffer, 0, MAX_HEADER_BYTES, 0);
			const text = buffer.subarray(0, bytesRead).toString("utf8");
			const end = text.indexOf("\n");
			const header = JSON.parse(end === -1 ? text : text.slice(0, end)) as Record<string, unknown>;
			if (header.type !== "session" || typeof header.id !== "string") return undefined;
			return {
				id: header.id,
				...(typeof header.parentSession === "string" ? { parentSession: header.parentSession } : {}),
			};
		} finally {
			await handle.close();
		}
	} catch {
		return undefined;
	}
}
