// The stash: a ring of untouched tool-result texts, keyed by toolCallId, shared between the two
// stages through globalThis[Symbol.for(STASH_KEY)] — Pi loads each extension file in its own module
// instance, so module identity cannot be relied on, only the global key. Pi hands every handler of
// one result the same event object, so each text is also found by that object: results that share
// a toolCallId (providers reuse ids, or send none) never take each other's text. Invariants: at most
// STASH_CAPACITY entries and STASH_MAX_TOTAL_CHARS characters in the ring (oldest dropped first),
// O(1) per operation, no copying or hashing of the text, and checks are structural (no instanceof).

/** The global key under which both stages find the ring. */
export const STASH_KEY = "my-pi.pi-overflow.stash.v1";
/** Entries kept before the oldest is dropped. */
export const STASH_CAPACITY = 64;
/** Characters kept in all entries together (about 128 MiB of UTF-16 at worst). */
export const STASH_MAX_TOTAL_CHARS = 64 * 1024 * 1024;

export interface StashEntry {
	toolCallId: string;
	toolName: string;
	/** The untouched text parts of the result, joined with "\n". */
	text: string;
	/** Stashed with its event object: only that event takes it (see takeStashed). */
	keyed?: true;
}

export interface Stash {
	readonly version: 1;
	readonly capacity: number;
	readonly maxTotalChars: number;
	/** Insertion-ordered: the first key is the oldest entry. */
	readonly entries: Map<string, StashEntry>;
	totalChars: number;
	/** The same entries by the event object Pi passed (added by newer stage-1 code; may be absent). */
	byEvent?: WeakMap<object, StashEntry>;
}

type GlobalWithStash = typeof globalThis & { [key: symbol]: unknown };
/** Symbol.for(STASH_KEY), looked up once (every load of this module gets the same symbol). */
const STASH_SYMBOL = Symbol.for(STASH_KEY);

function isStash(value: unknown): value is Stash {
	if (typeof value !== "object" || value === null) return false;
	const candidate = value as Partial<Stash>;
	return (
		candidate.version === 1 &&
		typeof candidate.capacity === "number" &&
		typeof candidate.maxTotalChars === "number" &&
		typeof candidate.totalChars === "number" &&
		typeof candidate.entries === "object" &&
		candidate.entries !== null &&
		typeof (candidate.entries as Map<string, StashEntry>).get === "function"
	);
}

/** The shared ring, or undefined when capture.ts has not created it (it is not loaded). */
export function findStash(): Stash | undefined {
	const value = (globalThis as GlobalWithStash)[STASH_SYMBOL];
	return isStash(value) ? value : undefined;
}

/** An empty ring with the default capacity and character budget, not shared (ensureStash shares one). */
export function createStash(): Stash {
	return {
		version: 1,
		capacity: STASH_CAPACITY,
		maxTotalChars: STASH_MAX_TOTAL_CHARS,
		entries: new Map(),
		totalChars: 0,
	};
}

/** The shared ring, created on first use; a reload of capture.ts reuses the existing one. */
export function ensureStash(): Stash {
	const existing = findStash();
	if (existing) return existing;
	const stash = createStash();
	(globalThis as GlobalWithStash)[STASH_SYMBOL] = stash;
	return stash;
}

function dropOldest(stash: Stash): void {
	const oldest = stash.entries.keys().next();
	if (oldest.done) return;
	const entry = stash.entries.get(oldest.value);
	stash.entries.delete(oldest.value);
	if (entry) stash.totalChars -= entry.text.length;
}

/**
 * Remembers one original. A text larger than the whole character budget evicts every other
 * entry and is kept alone: stage 2 takes it within the same tool_result chain, and dropping it
 * would lose the only uncut copy when a layer between the stages shortens it.
 */
export function stashOriginal(stash: Stash, entry: StashEntry, event?: object): void {
	if (event !== undefined) {
		entry.keyed = true;
		(stash.byEvent ??= new WeakMap()).set(event, entry);
	}
	const previous = stash.entries.get(entry.toolCallId);
	if (previous) {
		stash.entries.delete(entry.toolCallId);
		stash.totalChars -= previous.text.length;
	}
	while (
		stash.entries.size > 0 &&
		(stash.entries.size >= stash.capacity || stash.totalChars + entry.text.length > stash.maxTotalChars)
	) {
		dropOldest(stash);
	}
	stash.entries.set(entry.toolCallId, entry);
	stash.totalChars += entry.text.length;
}

/**
 * Removes and returns the original stashed for a result (each original is used once): the one
 * stashed for this very event object, else the latest for its toolCallId unless that one was
 * stashed for another event object (a result that shares the toolCallId).
 */
export function takeStashed(stash: Stash, toolCallId: string, event?: object): StashEntry | undefined {
	const own = event === undefined ? undefined : stash.byEvent?.get(event);
	if (own !== undefined) {
		stash.byEvent?.delete(event as object);
		if (stash.entries.get(toolCallId) === own) removeEntry(stash, toolCallId, own);
		return own;
	}
	const entry = stash.entries.get(toolCallId);
	if (entry === undefined || entry.keyed) return undefined;
	removeEntry(stash, toolCallId, entry);
	return entry;
}

function removeEntry(stash: Stash, toolCallId: string, entry: StashEntry): void {
	stash.entries.delete(toolCallId);
	stash.totalChars -= entry.text.length;
}

/** The text parts of a tool result joined with "\n", as both stages measure it. */
export function joinTextParts(content: ReadonlyArray<{ type: string; text?: unknown }>): string {
	let joined: string | undefined;
	for (const part of content) {
		if (part.type !== "text" || typeof part.text !== "string") continue;
		joined = joined === undefined ? part.text : `${joined}\n${part.text}`;
	}
	return joined ?? "";
}

/** The length of joinTextParts(content), without joining anything. */
export function measureTextParts(content: ReadonlyArray<{ type: string; text?: unknown }>): number {
	let chars = 0;
	let parts = 0;
	for (const part of content) {
		if (part.type !== "text" || typeof part.text !== "string") continue;
		chars += part.text.length;
		parts++;
	}
	return parts === 0 ? 0 : chars + parts - 1;
}
