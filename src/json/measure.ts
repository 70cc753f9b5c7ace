// Pass 1's measure of the selected value: JSON.stringify(value, null, 2).length counted from the
// lexer's events as JSON.parse would build the value (a repeated key keeps its last member), and
// the objects whose members JSON.parse would reorder or merge, for the printer. Memory: one frame
// per open object (up to MAX_TRACKED_OBJECT_DEPTH) and the keys they remember.

import {
	type ContainerKind,
	decodeNumberToken,
	decodeStringToken,
	type JsonEventHandler,
	type JsonToken,
	KIND_ARRAY,
	KIND_OBJECT,
	measureNumberToken,
	type ParentKind,
	SCALAR_FALSE,
	SCALAR_NULL,
	SCALAR_NUMBER,
	SCALAR_STRING,
	SCALAR_TRUE,
	type ScalarKind,
} from "./token.js";
import { arrayIndexOfKey, type KeyBudget, KeyTracker } from "./keys.js";

/** Objects nested this deep inside the selected value are not checked for duplicate keys. */
const MAX_TRACKED_OBJECT_DEPTH = 10_000;
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

export interface SelectedValue {
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

export type Outcome = SelectedValue | { type: "missing"; message: string };

export function scalarKindName(kind: ScalarKind): JsonValueSummary["kind"] {
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

export function scalarValue(kind: ScalarKind, token: JsonToken): unknown {
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
export function measureScalar(kind: ScalarKind, token: JsonToken): number {
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
export class ValueMeasurer implements JsonEventHandler {
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
		if (kind === KIND_OBJECT && this.objectDepth <= MAX_TRACKED_OBJECT_DEPTH)
			this.endMember(this.frames[this.objectDepth - 1]!);
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
			frame = {
				start: 0,
				depth: 0,
				keys: new KeyTracker(this.budget),
				memberStart: 0,
				memberKey: "",
				memberReplaces: undefined,
				sawNamedKey: false,
				lastIndex: -1,
				reordered: false,
			};
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
