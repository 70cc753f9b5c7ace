// Pass 1's path follower: the lexer reports only what the path needs (an object's keys at the
// path's level, an array's wanted item by counting commas), and the selected value's events go to
// a ValueMeasurer. The outcome is the value's place and size, or what exists where the path breaks.

import {
	describeArrayOutOfRange,
	describeArrayWithoutKey,
	describeMissingStep,
	describeObjectKeys,
	describeScalar,
	type PathSegment,
	toArrayIndex,
} from "./path.js";
import { ALL_LEVELS, JsonLexer, NEVER } from "./lexer.js";
import { arrayIndexOfKey, type KeyBudget, KeyTracker } from "./keys.js";
import { measureScalar, type Outcome, scalarKindName, scalarValue, ValueMeasurer } from "./measure.js";
import {
	type ContainerKind,
	decodeStringToken,
	type JsonEventHandler,
	type JsonToken,
	KIND_ARRAY,
	KIND_OBJECT,
	type ParentKind,
	type ScalarKind,
} from "./token.js";

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
export class PathNavigator implements JsonEventHandler {
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
			this.frames.push({
				kind,
				level,
				index: undefined,
				key: String(segment),
				keys: new KeyTracker(this.budget),
				found: false,
				nextOnPath: false,
			});
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
				this.fail(
					level,
					frame.index === undefined
						? describeArrayWithoutKey(items, this.segments[level]!)
						: describeArrayOutOfRange(items),
				);
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
