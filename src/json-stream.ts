// jsonPath over a stored file without building the document: one pass checks the whole text as
// JSON.parse would and follows the path, measuring only the selected value; a second, short pass
// prints that value as JSON.stringify(value, null, 2) would, up to the answer's room.
// Invariants: answers and errors equal JSON.parse + selectJsonPath + a bounded pretty print of the
// same text (a BOM skipped; repeated keys told apart while maxTrackedKeys suffice); memory is one
// read buffer, one byte per open container, the keys remembered and what the answer holds; nothing
// recurses; the deadline is checked between chunks; at most MAX_JSON_PATH_RUNS evaluations run at
// once in the process (others wait, their clocks not started).

import type { ByteSource } from "./source.js";
import {
	ALL_LEVELS,
	type ContainerKind,
	decodeNumberToken,
	decodeStringToken,
	formatJsonSyntaxError,
	type JsonEventHandler,
	JsonLexer,
	type JsonSyntaxError,
	type JsonToken,
	KIND_ARRAY,
	KIND_OBJECT,
	measureNumberToken,
	NEVER,
	type ParentKind,
	SCALAR_FALSE,
	SCALAR_NULL,
	SCALAR_NUMBER,
	SCALAR_STRING,
	SCALAR_TRUE,
	type ScalarKind,
} from "./json-lexer.js";
import {
	describeArrayOutOfRange,
	describeArrayWithoutKey,
	describeMissingStep,
	describeObjectKeys,
	describeScalar,
	MAX_LISTED_KEYS,
	type PathSegment,
	toArrayIndex,
} from "./json-path.js";
import { keepStart } from "./text.js";

/** Bytes read at a time (one buffer, reused). */
export const DEFAULT_JSON_CHUNK_BYTES = 1024 * 1024;
/** jsonPath evaluations running at once; more wait their turn. */
export const MAX_JSON_PATH_RUNS = 2;
/** Keys remembered at once to tell duplicates apart (beyond it, keys count as distinct). */
export const DEFAULT_MAX_TRACKED_KEYS = 500_000;
/** Objects nested this deep inside the selected value are not checked for duplicate keys. */
const MAX_TRACKED_OBJECT_DEPTH = 10_000;
/** The shortest text one more object member adds when printed: `\n  "": 0,`. */
const MIN_MEMBER_CHARS = 9;
/**
 * Objects of the selected value remembered as needing JSON.parse's key order (16 bytes each); past
 * this, further ones print in the order of the text.
 */
const MAX_REORDERED_OBJECTS = 1_000_000;
/** Keys shown as suggestions for a deeper path. */
const SUGGESTED_KEYS = 5;

export interface JsonValueSummary {
	kind: "array" | "object" | "string" | "number" | "boolean" | "null";
	/** Items of an array, distinct keys of an object, 0 otherwise. */
	size: number;
	/** An object's first keys in Object.keys order (at most 5). */
	keys: string[];
}

export type JsonPathResult =
	| { type: "value"; summary: JsonValueSummary; text: string; totalChars: number }
	/** The path does not exist; `message` starts with "jsonPath: " and says what exists there. */
	| { type: "missing"; message: string }
	/** The text is not JSON; `reason` is JSON.parse's, with the line and column when it names a position. */
	| { type: "notJson"; reason: string }
	/** The time ran out after `offset` of `size` bytes. */
	| { type: "stopped"; elapsedMs: number; offset: number; size: number };

export interface JsonPathOptions {
	/** How many characters of the value to print, once its summary is known. */
	roomFor(summary: JsonValueSummary): number;
	/** Wall-clock limit from the moment the evaluation starts running (not while it waits). */
	timeoutMs: number;
	signal?: AbortSignal;
	/** Default DEFAULT_JSON_CHUNK_BYTES. */
	chunkBytes?: number;
	/** Default DEFAULT_MAX_TRACKED_KEYS. */
	maxTrackedKeys?: number;
	/** Default performance.now. */
	now?: () => number;
}

/**
 * Follows `segments` into the JSON text of `source` (a stored text from store.openText: never opened
 * here by path). The caller closes the source.
 */
export async function evaluateJsonPath(source: ByteSource, segments: readonly PathSegment[], options: JsonPathOptions): Promise<JsonPathResult> {
	const release = await acquireRun(options.signal);
	try {
		return await evaluateSource(source, segments, options);
	} finally {
		release();
	}
}

// ---------------------------------------------------------------------------------------------
// Turns

/**
 * The queue is kept at globalThis[Symbol.for(JSON_PATH_RUNS_KEY)]: Pi loads each extension file in
 * its own module instance (and again on /reload), and the limit is for the whole process.
 */
export const JSON_PATH_RUNS_KEY = "my-pi.pi-overflow.json-path-runs.v1";

interface RunQueue {
	readonly version: 1;
	running: number;
	peak: number;
	readonly waiting: Array<() => void>;
}

function isRunQueue(value: unknown): value is RunQueue {
	if (typeof value !== "object" || value === null) return false;
	const candidate = value as Partial<RunQueue>;
	return candidate.version === 1 && typeof candidate.running === "number" && typeof candidate.peak === "number" && Array.isArray(candidate.waiting);
}

function sharedRunQueue(): RunQueue {
	const global = globalThis as typeof globalThis & { [key: symbol]: unknown };
	const key = Symbol.for(JSON_PATH_RUNS_KEY);
	const existing = global[key];
	if (isRunQueue(existing)) return existing;
	const created: RunQueue = { version: 1, running: 0, peak: 0, waiting: [] };
	global[key] = created;
	return created;
}

/** For tests and benchmarks: evaluations running and waiting now, and the most that ever ran at once. */
export function readJsonPathRuns(): { running: number; waiting: number; peak: number } {
	const queue = sharedRunQueue();
	return { running: queue.running, waiting: queue.waiting.length, peak: queue.peak };
}

async function acquireRun(signal: AbortSignal | undefined): Promise<() => void> {
	signal?.throwIfAborted();
	const queue = sharedRunQueue();
	if (queue.running >= MAX_JSON_PATH_RUNS) {
		await new Promise<void>((resolve, reject) => {
			const onAbort = (): void => {
				const at = queue.waiting.indexOf(start);
				if (at !== -1) queue.waiting.splice(at, 1);
				reject(signal?.reason);
			};
			// The releasing run hands its place over: `running` stays counted for this one.
			const start = (): void => {
				signal?.removeEventListener("abort", onAbort);
				resolve();
			};
			queue.waiting.push(start);
			signal?.addEventListener("abort", onAbort, { once: true });
		});
	} else {
		queue.running++;
	}
	queue.peak = Math.max(queue.peak, queue.running);
	let released = false;
	return () => {
		if (released) return;
		released = true;
		const next = queue.waiting.shift();
		if (next) next();
		else queue.running--;
	};
}

// ---------------------------------------------------------------------------------------------
// Reading

class DeadlinePassed extends Error {
	constructor(readonly offset: number) {
		super("deadline passed");
	}
}

/** The file, one reused buffer, and the clock every chunk is checked against. */
class ChunkReader {
	readonly buffer: Buffer;
	private readonly deadline: number;

	constructor(
		readonly source: ByteSource,
		chunkBytes: number,
		readonly started: number,
		timeoutMs: number,
		readonly now: () => number,
		private readonly signal: AbortSignal | undefined,
	) {
		this.buffer = Buffer.allocUnsafe(chunkBytes);
		this.deadline = started + timeoutMs;
	}

	/** Reads from `position` (at most up to `end`) into the buffer; 0 bytes at the end of the file. */
	async read(position: number, end: number): Promise<number> {
		this.signal?.throwIfAborted();
		if (this.now() > this.deadline) throw new DeadlinePassed(position);
		const length = Math.min(this.buffer.length, end - position);
		if (length <= 0) return 0;
		return this.source.read(this.buffer.subarray(0, length), position);
	}

	/**
	 * Feeds the lexer from `position` to `end` (the end of its input) until it pauses, fails or
	 * finishes; returns where it stopped.
	 */
	async feed(lexer: JsonLexer, position: number, end: number): Promise<number> {
		let at = position;
		while (at < end) {
			const bytes = await this.read(at, end);
			if (bytes === 0) break;
			const stopped = lexer.feed(this.buffer, 0, bytes, at);
			at += stopped;
			if (lexer.error) return at;
			if (lexer.paused) return at;
		}
		lexer.finish(at);
		return at;
	}

	/** Feeds one chunk at most; returns where the lexer stopped (`end` when its input is over). */
	async feedChunk(lexer: JsonLexer, position: number, end: number): Promise<number> {
		const bytes = await this.read(position, end);
		if (bytes === 0) {
			lexer.finish(position);
			return end;
		}
		const at = position + lexer.feed(this.buffer, 0, bytes, position);
		if (at >= end && !lexer.paused) lexer.finish(end);
		return at;
	}
}

async function evaluateSource(source: ByteSource, segments: readonly PathSegment[], options: JsonPathOptions): Promise<JsonPathResult> {
	const now = options.now ?? (() => performance.now());
	const reader = new ChunkReader(source, options.chunkBytes ?? DEFAULT_JSON_CHUNK_BYTES, now(), options.timeoutMs, now, options.signal);
	const { size } = source;
	const start = await skipByteOrderMark(reader, size);
	try {
		const navigator = new PathNavigator(segments, options.maxTrackedKeys ?? DEFAULT_MAX_TRACKED_KEYS);
		await reader.feed(navigator.lexer, start, size);
		const error = navigator.lexer.error;
		if (error) return { type: "notJson", reason: await describeSyntaxError(reader, error, start, size) };
		const outcome = navigator.outcome;
		// A complete value always leaves an outcome: the root is on every path.
		if (outcome === null) throw new Error("jsonPath: the document ended without an answer");
		if (outcome.type === "missing") return outcome;
		const room = Math.max(0, options.roomFor(outcome.summary));
		const text = await printValue(reader, outcome, room);
		return { type: "value", summary: outcome.summary, text, totalChars: outcome.totalChars };
	} catch (error) {
		if (error instanceof DeadlinePassed) return { type: "stopped", elapsedMs: now() - reader.started, offset: error.offset, size };
		throw error;
	}
}

async function skipByteOrderMark(reader: ChunkReader, size: number): Promise<number> {
	if (size < 3) return 0;
	const head = Buffer.alloc(3);
	const bytesRead = await reader.source.read(head, 0);
	return bytesRead === 3 && head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf ? 3 : 0;
}

// ---------------------------------------------------------------------------------------------
// Keys

/** The integer an object key names as an array index (ordered first by Object.keys), or -1. */
function arrayIndexOfKey(key: string): number {
	const length = key.length;
	if (length === 0 || length > 10) return -1;
	const first = key.charCodeAt(0);
	if (first === 0x30) return length === 1 ? 0 : -1;
	for (let at = 0; at < length; at++) {
		const code = key.charCodeAt(at);
		if (code < 0x30 || code > 0x39) return -1;
	}
	const value = Number(key);
	return value < 4294967295 ? value : -1;
}

/** Shared by all trackers of one evaluation: how many more keys may be remembered. */
interface KeyBudget {
	remaining: number;
}

/**
 * The distinct keys of one object, each with a number (a printed member's length), and its first
 * MAX_LISTED_KEYS keys in Object.keys order: array-index keys ascending, then the others as they came.
 */
class KeyTracker {
	count = 0;
	private readonly values = new Map<string, number>();
	private readonly indexKeys: number[] = [];
	private readonly namedKeys: string[] = [];

	constructor(private readonly budget: KeyBudget) {}

	reset(): void {
		if (this.count === 0) return;
		this.budget.remaining += this.values.size;
		this.values.clear();
		this.count = 0;
		this.indexKeys.length = 0;
		this.namedKeys.length = 0;
	}

	/** The number kept for `key`, or undefined when it is new (or could not be remembered). */
	get(key: string): number | undefined {
		return this.values.get(key);
	}

	/** Records one occurrence of a key; false when it was seen before. `truncated` keys count as new. */
	add(key: string, index: number, truncated: boolean): boolean {
		if (!truncated && this.values.has(key)) return false;
		this.count++;
		if (!truncated && this.budget.remaining > 0) {
			this.budget.remaining--;
			this.values.set(key, 0);
		}
		if (index >= 0) {
			const keys = this.indexKeys;
			if (keys.length < MAX_LISTED_KEYS || index < keys[keys.length - 1]!) {
				let at = keys.length;
				while (at > 0 && keys[at - 1]! > index) at--;
				if (keys[at - 1] !== index) {
					keys.splice(at, 0, index);
					if (keys.length > MAX_LISTED_KEYS) keys.pop();
				}
			}
		} else if (this.namedKeys.length < MAX_LISTED_KEYS) {
			this.namedKeys.push(key);
		}
		return true;
	}

	set(key: string, value: number): void {
		if (this.values.has(key)) this.values.set(key, value);
	}

	/** The first `count` keys in Object.keys order. */
	list(count: number = MAX_LISTED_KEYS): string[] {
		return [...this.indexKeys.map(String), ...this.namedKeys].slice(0, count);
	}
}

// ---------------------------------------------------------------------------------------------
// Pass 1: follow the path, measure the selected value

interface SelectedValue {
	type: "value";
	summary: JsonValueSummary;
	start: number;
	end: number;
	/** JSON.stringify(value, null, 2).length. */
	totalChars: number;
	/** Objects of the value whose keys JSON.parse would reorder or merge: sorted starts, and their ends. */
	reorderedStarts: number[];
	reorderedEnds: number[];
}

type Outcome = SelectedValue | { type: "missing"; message: string };

interface PathFrame {
	kind: ContainerKind;
	/** Its lexer level: the number of frames before it. */
	level: number;
	/** Arrays: the wanted index (undefined when the segment is not one); objects: the wanted key. */
	index: number | undefined;
	key: string;
	/** Objects: their keys, for the error that lists them. */
	keys: KeyTracker | null;
	/** The wanted member or item occurred. */
	found: boolean;
	/** The next value at this frame's member level is on the path. */
	nextOnPath: boolean;
}

/**
 * Pass 1. Frame i is the container the first i segments lead to. The lexer reports an object
 * frame's keys and values; of an array frame only the wanted item (it counts the commas itself).
 */
class PathNavigator implements JsonEventHandler {
	readonly lexer: JsonLexer;
	outcome: Outcome | null = null;
	private readonly frames: PathFrame[] = [];
	private readonly budget: KeyBudget;

	constructor(
		private readonly segments: readonly PathSegment[],
		maxTrackedKeys: number,
	) {
		this.budget = { remaining: maxTrackedKeys };
		this.lexer = new JsonLexer(this, { detail: true });
		this.lexer.maxEventLevel = 0;
	}

	onOpen(kind: ContainerKind, level: number, offset: number, parent: ParentKind): void {
		if (!this.takeOnPath()) return;
		this.outcome = null;
		const lexer = this.lexer;
		if (level === this.segments.length) {
			// The selected container: its events go to a measurer until it closes.
			const measurer = new ValueMeasurer(level, kind, offset, this.budget, (selected) => {
				this.outcome = selected;
				lexer.handler = this;
				this.resumeFrame();
			});
			measurer.onOpen(kind, level, offset, parent);
			lexer.handler = measurer;
			lexer.maxEventLevel = ALL_LEVELS;
			lexer.detail = true;
			return;
		}
		const segment = this.segments[level]!;
		if (kind === KIND_OBJECT) {
			this.frames.push({ kind, level, index: undefined, key: String(segment), keys: new KeyTracker(this.budget), found: false, nextOnPath: false });
			lexer.maxEventLevel = level + 1;
			lexer.detail = false;
			return;
		}
		const index = toArrayIndex(segment);
		this.frames.push({ kind, level, index, key: "", keys: null, found: false, nextOnPath: index === 0 });
		if (index === 0) {
			lexer.maxEventLevel = level + 1;
			lexer.detail = true;
		} else {
			// Only the comma before the wanted item is reported; the others are counted.
			lexer.maxEventLevel = level;
			lexer.watchCommas(level + 1, index ?? NEVER);
		}
	}

	onClose(_kind: ContainerKind, level: number, _offset: number, empty: boolean): void {
		const frame = this.frames[this.frames.length - 1];
		if (frame === undefined || level !== frame.level) return; // a container beside the path
		this.frames.pop();
		if (!frame.found) {
			if (frame.kind === KIND_OBJECT) {
				this.fail(level, describeObjectKeys(frame.keys!.count, frame.keys!.list()));
			} else {
				const items = empty ? 0 : this.lexer.watchedCommas + 1;
				this.fail(level, frame.index === undefined ? describeArrayWithoutKey(items, this.segments[level]!) : describeArrayOutOfRange(items));
			}
		}
		frame.keys?.reset();
		// Its comma count must not wake the navigator for a later array at the same level.
		if (frame.kind === KIND_ARRAY) this.lexer.watchCommas(-1, NEVER);
		this.resumeFrame();
	}

	onKey(level: number, token: JsonToken): void {
		const frame = this.frames[level - 1]!;
		const key = decodeStringToken(token);
		frame.keys!.add(key, arrayIndexOfKey(key), token.truncated);
		frame.nextOnPath = !token.truncated && key === frame.key;
		if (frame.nextOnPath) frame.found = true;
		this.lexer.detail = frame.nextOnPath;
	}

	onComma(level: number, kind: ContainerKind): void {
		const frame = this.frames[level - 1]!;
		if (kind === KIND_OBJECT) {
			this.lexer.detail = false;
			return;
		}
		// The watched comma: the wanted item follows.
		frame.nextOnPath = true;
		this.lexer.maxEventLevel = level;
		this.lexer.detail = true;
	}

	onScalar(kind: ScalarKind, level: number, token: JsonToken): void {
		if (!this.takeOnPath()) return;
		if (level === this.segments.length) {
			this.outcome = {
				type: "value",
				summary: { kind: scalarKindName(kind), size: 0, keys: [] },
				start: token.start,
				end: token.end,
				totalChars: measureScalar(kind, token),
				reorderedStarts: [],
				reorderedEnds: [],
			};
		} else {
			this.outcome = null;
			this.fail(level, describeScalar(scalarValue(kind, token)));
		}
		this.resumeFrame();
	}

	/** Whether the value starting now is on the path (the root always is). */
	private takeOnPath(): boolean {
		const frame = this.frames[this.frames.length - 1];
		if (frame === undefined) return true;
		const onPath = frame.nextOnPath;
		frame.nextOnPath = false;
		if (onPath) frame.found = true;
		return onPath;
	}

	/** After a value on the path: report what the innermost frame still needs. */
	private resumeFrame(): void {
		const frame = this.frames[this.frames.length - 1];
		const lexer = this.lexer;
		lexer.detail = false;
		if (frame === undefined) lexer.maxEventLevel = 0;
		// An object may repeat its key (the last one counts); an array needs only its close.
		else lexer.maxEventLevel = frame.kind === KIND_OBJECT ? frame.level + 1 : frame.level;
	}

	private fail(index: number, whatIsThere: string): void {
		this.outcome = { type: "missing", message: describeMissingStep(this.segments, index, whatIsThere) };
	}
}

function scalarKindName(kind: ScalarKind): JsonValueSummary["kind"] {
	switch (kind) {
		case SCALAR_STRING:
			return "string";
		case SCALAR_NUMBER:
			return "number";
		case SCALAR_NULL:
			return "null";
		default:
			return "boolean";
	}
}

function scalarValue(kind: ScalarKind, token: JsonToken): unknown {
	switch (kind) {
		case SCALAR_STRING:
			return decodeStringToken(token);
		case SCALAR_NUMBER:
			return decodeNumberToken(token);
		case SCALAR_TRUE:
			return true;
		case SCALAR_FALSE:
			return false;
		default:
			return null;
	}
}

/** JSON.stringify's length of a scalar token (a string's needs the lexer's detail on). */
function measureScalar(kind: ScalarKind, token: JsonToken): number {
	switch (kind) {
		case SCALAR_STRING:
			return token.chars;
		case SCALAR_NUMBER:
			return measureNumberToken(token);
		case SCALAR_FALSE:
			return 5;
		default:
			return 4;
	}
}

interface MeasureFrame {
	start: number;
	/** Level relative to the selected value (0: the value itself). */
	depth: number;
	keys: KeyTracker;
	/** `total` when the current member's key came. */
	memberStart: number;
	memberKey: string;
	/** The current member's key occurred before: the length its earlier member added. */
	memberReplaces: number | undefined;
	sawNamedKey: boolean;
	lastIndex: number;
	reordered: boolean;
}

/**
 * Counts JSON.stringify(value, null, 2).length of the selected container from its tokens, as
 * JSON.parse would build it: a repeated key keeps one member (the last value). Notes the objects
 * whose members JSON.parse would reorder (array-index keys first, ascending) or merge. It receives
 * the lexer's events directly and hands back with `done` when the container closes.
 */
class ValueMeasurer implements JsonEventHandler {
	total = 0;
	private items = 0;
	private objectDepth = 0;
	/** Per open object (up to MAX_TRACKED_OBJECT_DEPTH): its start, and whether its frame is set up (at its first key). */
	private readonly objectStarts = new Float64Array(MAX_TRACKED_OBJECT_DEPTH + 1);
	private readonly frameReady = new Uint8Array(MAX_TRACKED_OBJECT_DEPTH + 1);
	private readonly frames: MeasureFrame[] = [];
	private top: MeasureFrame | null = null;
	private readonly reorderedStarts: number[] = [];
	private readonly reorderedEnds: number[] = [];

	constructor(
		/** The lexer level of the selected value. */
		private readonly level: number,
		private readonly kind: ContainerKind,
		private readonly start: number,
		private readonly budget: KeyBudget,
		private readonly done: (selected: SelectedValue) => void,
	) {}

	onOpen(kind: ContainerKind, level: number, offset: number, parent: ParentKind): void {
		const depth = level - this.level;
		if (depth > 0 && parent === KIND_ARRAY) {
			if (depth === 1) this.items++;
			this.total += 2 + 2 * depth;
		} else {
			this.total += 1;
		}
		if (kind !== KIND_OBJECT) return;
		const objectDepth = ++this.objectDepth;
		if (objectDepth > MAX_TRACKED_OBJECT_DEPTH) return;
		this.objectStarts[objectDepth] = offset;
		this.frameReady[objectDepth] = 0;
	}

	onClose(kind: ContainerKind, level: number, offset: number, empty: boolean): void {
		const depth = level - this.level;
		if (kind === KIND_OBJECT) {
			const objectDepth = this.objectDepth--;
			if (objectDepth <= MAX_TRACKED_OBJECT_DEPTH && this.frameReady[objectDepth] === 1) {
				const frame = this.frames[objectDepth - 1]!;
				this.endMember(frame);
				if (frame.reordered && this.reorderedStarts.length < MAX_REORDERED_OBJECTS) {
					this.reorderedStarts.push(frame.start);
					this.reorderedEnds.push(offset + 1);
				}
				if (depth > 0) frame.keys.reset();
			}
		}
		this.total += empty ? 1 : 2 + 2 * depth;
		if (depth === 0) this.done(this.finish(offset + 1));
	}

	onKey(level: number, token: JsonToken): void {
		const depth = level - this.level;
		const before = this.total;
		this.total += 3 + 2 * depth + token.chars;
		const objectDepth = this.objectDepth;
		if (objectDepth > MAX_TRACKED_OBJECT_DEPTH) return;
		const frame = this.frameAt(objectDepth, depth - 1);
		const key = decodeStringToken(token);
		const index = arrayIndexOfKey(key);
		frame.memberStart = before;
		frame.memberKey = key;
		frame.memberReplaces = undefined;
		if (!frame.keys.add(key, index, token.truncated)) {
			frame.memberReplaces = frame.keys.get(key);
			frame.reordered = true;
		} else if (index >= 0) {
			if (frame.sawNamedKey || index < frame.lastIndex) frame.reordered = true;
			frame.lastIndex = index;
		} else {
			frame.sawNamedKey = true;
		}
	}

	onComma(_level: number, kind: ContainerKind): void {
		if (kind === KIND_OBJECT && this.objectDepth <= MAX_TRACKED_OBJECT_DEPTH) this.endMember(this.frames[this.objectDepth - 1]!);
		this.total += 1;
	}

	onScalar(kind: ScalarKind, level: number, token: JsonToken, parent: ParentKind): void {
		const depth = level - this.level;
		if (depth > 0 && parent === KIND_ARRAY) {
			if (depth === 1) this.items++;
			this.total += 1 + 2 * depth;
		}
		this.total += measureScalar(kind, token);
	}

	private finish(end: number): SelectedValue {
		// Objects close inner first: order them by start for the printer's binary search.
		const starts = this.reorderedStarts;
		const ends = this.reorderedEnds;
		const order = Array.from(starts.keys()).sort((a, b) => starts[a]! - starts[b]!);
		const top = this.top;
		const summary: JsonValueSummary =
			this.kind === KIND_ARRAY
				? { kind: "array", size: this.items, keys: [] }
				: { kind: "object", size: top?.keys.count ?? 0, keys: top?.keys.list(SUGGESTED_KEYS) ?? [] };
		top?.keys.reset();
		return {
			type: "value",
			summary,
			start: this.start,
			end,
			totalChars: this.total,
			reorderedStarts: order.map((at) => starts[at]!),
			reorderedEnds: order.map((at) => ends[at]!),
		};
	}

	/** The frame of the open object `objectDepth` (1-based), set up at its first key. */
	private frameAt(objectDepth: number, depth: number): MeasureFrame {
		let frame = this.frames[objectDepth - 1];
		if (frame === undefined) {
			frame = { start: 0, depth: 0, keys: new KeyTracker(this.budget), memberStart: 0, memberKey: "", memberReplaces: undefined, sawNamedKey: false, lastIndex: -1, reordered: false };
			this.frames.push(frame);
		}
		if (this.frameReady[objectDepth] === 0) {
			this.frameReady[objectDepth] = 1;
			frame.start = this.objectStarts[objectDepth]!;
			frame.depth = depth;
			frame.sawNamedKey = false;
			frame.lastIndex = -1;
			frame.reordered = false;
			if (depth === 0) this.top = frame;
		}
		return frame;
	}

	/** A member ends (at its comma or its object's close): a repeated key replaces its earlier member. */
	private endMember(frame: MeasureFrame): void {
		const length = this.total - frame.memberStart;
		if (frame.memberReplaces !== undefined) this.total -= frame.memberReplaces + 1;
		frame.keys.set(frame.memberKey, length);
	}
}

// ---------------------------------------------------------------------------------------------
// Pass 2: print the selected value

const INDENTS: string[] = [""];

function indent(depth: number): string {
	while (INDENTS.length <= depth) INDENTS.push(`${INDENTS[INDENTS.length - 1]}  `);
	return INDENTS[depth]!;
}

/** A string token as JSON.stringify prints its value; a cut token without its closing quote. */
function formatStringToken(token: JsonToken): string {
	const printed = JSON.stringify(decodeStringToken(token));
	return token.truncated ? printed.slice(0, -1) : printed;
}

function formatScalar(kind: ScalarKind, token: JsonToken): string {
	switch (kind) {
		case SCALAR_STRING:
			return formatStringToken(token);
		case SCALAR_NUMBER:
			return JSON.stringify(decodeNumberToken(token));
		case SCALAR_TRUE:
			return "true";
		case SCALAR_FALSE:
			return "false";
		default:
			return "null";
	}
}

/** Collects printed text up to `room` characters (never splitting a surrogate pair), then stops its lexer. */
class BoundedPrinter implements JsonEventHandler {
	full = false;
	/** A reordered object the current lexer skipped: its start and level, for the caller to print. */
	skippedObject = -1;
	skippedDepth = 0;
	/** Level of the current range's value inside the selected value. */
	base = 0;
	lexer: JsonLexer | null = null;
	private readonly parts: string[] = [];
	private kept = 0;

	constructor(
		readonly room: number,
		private readonly selected: SelectedValue,
	) {
		if (room <= 0) this.full = true;
	}

	get text(): string {
		return this.parts.join("");
	}

	/** How many more members an object could print before the room is used up. */
	get memberLimit(): number {
		return Math.floor((this.room - this.kept) / MIN_MEMBER_CHARS) + 2;
	}

	write(piece: string): void {
		if (this.full) return;
		const room = this.room - this.kept;
		if (piece.length < room) {
			this.parts.push(piece);
			this.kept += piece.length;
			return;
		}
		this.parts.push(keepStart(piece, room));
		this.kept = this.room;
		this.full = true;
		this.lexer?.pause();
	}

	onOpen(kind: ContainerKind, level: number, offset: number, parent: ParentKind): void {
		const depth = this.base + level;
		if (level > 0 && parent === KIND_ARRAY) this.write(`\n${indent(depth)}`);
		if (kind === KIND_OBJECT && this.isReordered(offset)) {
			this.skippedObject = offset;
			this.skippedDepth = depth;
			this.lexer!.skipOpenedContainer();
			return;
		}
		this.write(kind === KIND_ARRAY ? "[" : "{");
	}

	onClose(kind: ContainerKind, level: number, _offset: number, empty: boolean): void {
		const close = kind === KIND_ARRAY ? "]" : "}";
		this.write(empty ? close : `\n${indent(this.base + level)}${close}`);
	}

	onKey(level: number, token: JsonToken): void {
		this.write(`\n${indent(this.base + level)}${formatStringToken(token)}: `);
	}

	onComma(): void {
		this.write(",");
	}

	onScalar(kind: ScalarKind, level: number, token: JsonToken, parent: ParentKind): void {
		if (level > 0 && parent === KIND_ARRAY) this.write(`\n${indent(this.base + level)}`);
		this.write(formatScalar(kind, token));
	}

	/** The end of a reordered object that starts at `offset`, or -1. */
	reorderedEnd(offset: number): number {
		const starts = this.selected.reorderedStarts;
		let low = 0;
		let high = starts.length - 1;
		while (low <= high) {
			const middle = (low + high) >> 1;
			const start = starts[middle]!;
			if (start === offset) return this.selected.reorderedEnds[middle]!;
			if (start < offset) low = middle + 1;
			else high = middle - 1;
		}
		return -1;
	}

	private isReordered(offset: number): boolean {
		return this.reorderedEnd(offset) !== -1;
	}
}

interface Member {
	key: string;
	truncated: boolean;
	start: number;
	end: number;
}

/**
 * The members of one object in JSON.parse's order (array-index keys ascending, then the others in
 * order of first occurrence; a repeated key's last value), at most `limit` of them.
 */
class MemberCollector implements JsonEventHandler {
	private key = "";
	private truncated = false;
	private valueStart = 0;
	private readonly indexed: Array<Member & { index: number }> = [];
	private readonly named: Member[] = [];
	private readonly namedByKey = new Map<string, Member>();

	constructor(private readonly limit: number) {}

	get members(): Member[] {
		return [...this.indexed, ...this.named].slice(0, this.limit);
	}

	onOpen(_kind: ContainerKind, level: number, offset: number): void {
		if (level === 1) this.valueStart = offset;
	}

	onClose(_kind: ContainerKind, level: number, offset: number): void {
		if (level === 1) this.add(this.valueStart, offset + 1);
	}

	onKey(_level: number, token: JsonToken): void {
		this.key = decodeStringToken(token);
		this.truncated = token.truncated;
	}

	onComma(): void {}

	onScalar(_kind: ScalarKind, level: number, token: JsonToken): void {
		if (level === 1) this.add(token.start, token.end);
	}

	private add(start: number, end: number): void {
		const { key, truncated } = this;
		const index = truncated ? -1 : arrayIndexOfKey(key);
		if (index >= 0) {
			const indexed = this.indexed;
			let at = indexed.length;
			while (at > 0 && indexed[at - 1]!.index > index) at--;
			const before = indexed[at - 1];
			if (before?.index === index) {
				before.start = start;
				before.end = end;
			} else if (at < this.limit) {
				indexed.splice(at, 0, { key, truncated, start, end, index });
				if (indexed.length > this.limit) indexed.pop();
			}
			return;
		}
		const seen = truncated ? undefined : this.namedByKey.get(key);
		if (seen) {
			seen.start = start;
			seen.end = end;
		} else if (this.named.length < this.limit) {
			const member = { key, truncated, start, end };
			this.named.push(member);
			if (!truncated) this.namedByKey.set(key, member);
		}
	}
}

type PrintTask =
	| { type: "range"; lexer: JsonLexer; position: number; end: number; base: number }
	| { type: "object"; members: Member[]; next: number; depth: number };

/** Pass 2: the selected value's pretty text, at most `room` characters of it. */
async function printValue(reader: ChunkReader, selected: SelectedValue, room: number): Promise<string> {
	const printer = new BoundedPrinter(room, selected);
	// Enough bytes of one string to fill the room: an escape takes at most 6 bytes per character.
	const captureLimit = room * 6 + 16;
	const openRange = (start: number, end: number, base: number): PrintTask => ({
		type: "range",
		lexer: new JsonLexer(printer, { detail: true, captureLimit }),
		position: start,
		end,
		base,
	});
	const tasks: PrintTask[] = [openRange(selected.start, selected.end, 0)];
	while (tasks.length > 0 && !printer.full) {
		const task = tasks[tasks.length - 1]!;
		if (task.type === "range") {
			if (task.position >= task.end) {
				tasks.pop();
				continue;
			}
			printer.lexer = task.lexer;
			printer.base = task.base;
			task.position = await reader.feedChunk(task.lexer, task.position, task.end);
			if (task.lexer.error) throw new Error(`jsonPath: the stored text changed while it was read (${task.lexer.error.kind})`);
			if (printer.skippedObject >= 0) {
				const start = printer.skippedObject;
				const end = printer.reorderedEnd(start);
				printer.skippedObject = -1;
				task.position = end;
				const members = await collectMembers(reader, start, end, printer.memberLimit, captureLimit);
				printer.write("{");
				tasks.push({ type: "object", members, next: 0, depth: printer.skippedDepth });
			}
			continue;
		}
		const member = task.members[task.next];
		if (member === undefined) {
			printer.write(`\n${indent(task.depth)}}`);
			tasks.pop();
			continue;
		}
		const key = JSON.stringify(member.key);
		printer.write(`${task.next > 0 ? "," : ""}\n${indent(task.depth + 1)}${member.truncated ? key.slice(0, -1) : key}: `);
		task.next++;
		tasks.push(openRange(member.start, member.end, task.depth + 1));
	}
	return printer.text;
}

async function collectMembers(reader: ChunkReader, start: number, end: number, limit: number, captureLimit: number): Promise<Member[]> {
	const collector = new MemberCollector(limit);
	const lexer = new JsonLexer(collector, { captureLimit });
	lexer.maxEventLevel = 1;
	await reader.feed(lexer, start, end);
	return collector.members;
}

// ---------------------------------------------------------------------------------------------
// Syntax errors

/** Bytes that hold at least 11 UTF-16 units of text after an error (4 bytes per character at most). */
const CONTEXT_BYTES = 64;
/** Texts of at most this many bytes may be short enough for V8 to quote whole. */
const SHORT_SOURCE_BYTES = 80;
/** V8's reason is cut to this length. */
const MAX_REASON_CHARS = 120;

/**
 * JSON.parse's message for the error, and where it is: the text before it is decoded again (as
 * Buffer#toString decodes it) to count UTF-16 units and lines.
 */
async function describeSyntaxError(reader: ChunkReader, error: JsonSyntaxError, start: number, size: number): Promise<string> {
	const decoder = new TextDecoder("utf-8", { ignoreBOM: true });
	let position = 0;
	let line = 1;
	let lineStart = 0;
	let before = "";
	for (let at = start; at < error.offset; ) {
		const length = Math.min(reader.buffer.length, error.offset - at);
		const bytesRead = await reader.source.read(reader.buffer.subarray(0, length), at);
		if (bytesRead === 0) break;
		at += bytesRead;
		const text = decoder.decode(reader.buffer.subarray(0, bytesRead), { stream: at < error.offset });
		for (let newline = text.indexOf("\n"); newline !== -1; newline = text.indexOf("\n", newline + 1)) {
			line++;
			lineStart = position + newline + 1;
		}
		position += text.length;
		before = (before + text).slice(-10);
	}
	const near = Buffer.alloc(Math.max(CONTEXT_BYTES, SHORT_SOURCE_BYTES));
	const bytesRead = await reader.source.read(near.subarray(0, Math.max(0, Math.min(CONTEXT_BYTES, size - error.offset))), error.offset);
	const after = near.toString("utf8", 0, bytesRead).slice(0, 11);
	let source = "";
	if (size - start <= SHORT_SOURCE_BYTES) {
		const whole = await reader.source.read(near.subarray(0, size - start), start);
		source = near.toString("utf8", 0, whole);
	}
	const sourceLength = source === "" ? Number.POSITIVE_INFINITY : source.length;
	const message = formatJsonSyntaxError(error.kind, { position, sourceLength, source, before, after });
	// The message quotes the text around the error, newlines included: it stays one line.
	const reason = message.replace(/[\u0000-\u001f\u007f\u2028\u2029]/g, " ");
	const where = message.includes(" at position ") ? ` (line ${line}, column ${position - lineStart + 1})` : "";
	return `${reason.length > MAX_REASON_CHARS ? `${keepStart(reason, MAX_REASON_CHARS - 1)}…` : reason}${where}`;
}
