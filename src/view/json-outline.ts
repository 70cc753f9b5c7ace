// What the structure of a JSON output says, for the view: a one-line outline of the document (its
// top-level members, array lengths) and the objects whose members say they are problems
// (signals/policy.ts judges members), each with its jsonPath and its lines in the output. JSON lines
// (one document per line) are read record by record. One streaming pass of the lexer over at most
// JSON_OUTLINE_MAX_BYTES: memory is the open containers and a few kept problems, whatever the size.

import * as json from "../json/index.js";
import type { ContainerKind, JsonEventHandler, JsonLexer as Lexer, JsonToken, ScalarKind } from "../json/index.js";
import * as jsonPath from "../json/path.js";
import type { PathSegment } from "../json/path.js";
import * as policy from "../signals/policy.js";
import type { JsonMemberValue } from "../signals/policy.js";
import { type ByteSource, READ_CHUNK_BYTES } from "../io/source.js";
import { TimeSlice, type TimeSliceOptions } from "../io/time-slice.js";

// Copied into module constants once, as json/lexer.ts does: under Pi's extension loader an imported
// binding is read through an interop getter on every use, which cost this pass about a fifth of its
// time per event (a CPU profile of the 8 MB minified row in bench/stall.ts).
const { decodeNumberToken, decodeStringToken, JsonLexer, KIND_ARRAY, KIND_OBJECT } = json;
const { SCALAR_FALSE, SCALAR_NULL, SCALAR_NUMBER, SCALAR_STRING, SCALAR_TRUE } = json;
const { formatPathPrefix } = jsonPath;
const { isJsonRuleKey, JSON_RULE_KEY_BYTES, jsonIdentityOf, judgeJsonMember } = policy;

/** Largest output whose structure is read (larger ones get no outline: the pass would cost too much). */
export const JSON_OUTLINE_MAX_BYTES = 8 * 1024 * 1024;
/**
 * Bytes fed to the lexer between looks at the clock: a few ms at its slowest (≈220 ms/MiB of deeply
 * nested arrays, one frame per container), so the pass yields soon after its slice's time is up.
 */
const OUTLINE_SLICE_BYTES = 16 * 1024;
/** The pass also yields after this many bytes whatever the clock says (a few turns per MiB cost nothing). */
const OUTLINE_TURN_BYTES = 128 * 1024;
/**
 * Levels of containers whose contents are read: containers nested deeper are checked for syntax
 * only. It is the deepest Go's encoding/json accepts (serde_json stops at 128, Python's json at about
 * 1 000), so no document a parser wrote or can read is cut by it; past it, a document nested millions
 * deep costs the lexer's byte loop alone, not an event per container (SPEC "Third wave", Main thread).
 */
export const JSON_OUTLINE_LEVELS = 10_000;
/** Problems kept with their places (more are counted). */
export const MAX_JSON_PROBLEMS = 20;
/** Kinds of problems counted (jsonIdentityOf), at most. */
const MAX_JSON_KINDS = 4096;
/** An object with a problem member that spans more lines than this is shown by that member instead. */
const MAX_PROBLEM_OBJECT_LINES = 200;
/** Top-level members named in the outline, and the outline's length. */
const OUTLINE_MEMBERS = 12;
const OUTLINE_CHARS = 240;
/** Characters of a top-level string shown in the outline. */
const OUTLINE_STRING_CHARS = 24;

/** An object (or a member) that says something went wrong, and where it is. */
export interface JsonProblem {
	/** Its jsonPath in the document (`$.results[812]`); for a JSON-lines record, `$` of that record. */
	path: string;
	/** The member that made it a problem, as JSON (`"valid": false`, `"errors": [3 items]`). */
	reason: string;
	/** 1-based lines of its first and last byte, and the byte offset where its first line starts. */
	startLine: number;
	endLine: number;
	lineStart: number;
	/** Byte offsets of its first byte and just past its last. */
	start: number;
	end: number;
	/** Where the member that made it a problem lies (its first line, last line, and its first line's start). */
	member: { startLine: number; endLine: number; lineStart: number };
	/** Set for a record of a JSON-lines output (its line is its place; jsonPath cannot name it). */
	record?: true;
	/** What kind of problem it is, when a member names it (`test_id "B602"`: policy.ts jsonIdentityOf). */
	identity?: string;
	/** Problems of that kind in the whole document (set when every kind could be counted). */
	identityCount?: number;
}

export interface JsonFindings {
	/** `{summary: {4 keys}, results: [1500 items]}`, or `JSON lines: 5000 records`; absent when the document did not end. */
	outline?: string;
	/**
	 * At most MAX_JSON_PROBLEMS problems: the first ones, and past them the first of each kind not yet
	 * kept (in place of a kept one of a common kind); the rarest kinds first, then in the order their objects end.
	 */
	problems: JsonProblem[];
	/** All problems found (in the levels read). */
	problemCount: number;
	/** Set when the document nests deeper than JSON_OUTLINE_LEVELS: what lies deeper was not read for problems. */
	deeperThan?: number;
}

/** The first member that says an object is a problem, and where that member's value lies. */
interface FrameProblem {
	reason: string;
	member: {
		segment: string;
		start: number;
		startLine: number;
		lineStart: number;
		end: number;
		endLine: number;
		summary: string;
	};
}

/** A container that has just closed: where it started, what it held, what it says. */
interface Frame extends Partial<FrameProblem> {
	/** What kind of problem a member of it names (jsonIdentityOf). */
	identity?: string;
	kind: ContainerKind;
	/** Items (arrays) or members (objects). */
	count: number;
	start: number;
	startLine: number;
	lineStart: number;
	/** Problems recorded when it opened: an object holding a problem inside is not one itself. */
	problemsBefore: number;
}

/** Levels per block of the frame stack. */
const FRAME_BLOCK_SHIFT = 12;
const FRAME_BLOCK_LEVELS = 1 << FRAME_BLOCK_SHIFT;
const FRAME_BLOCK_MASK = FRAME_BLOCK_LEVELS - 1;
// The numbers of a level, in its block's Float64Array.
const F_KIND = 0;
/** Items so far (arrays) or members so far (objects), the one being read included. */
const F_COUNT = 1;
const F_START = 2;
const F_START_LINE = 3;
const F_LINE_START = 4;
const F_PROBLEMS_BEFORE = 5;
const FRAME_FIELDS = 6;

/**
 * The open containers, their numbers in fixed blocks of typed arrays (keys in blocks of strings): a
 * document nested millions deep keeps no object per level (their garbage collection stalled the loop
 * for seconds) and nothing is copied as it deepens. A closing container is handed out as a short-lived Frame.
 */
class FrameStack {
	depth = 0;
	private readonly numbers: Float64Array[] = [];
	/** The member being read, for objects. */
	private readonly keys: Array<Array<string | undefined>> = [];
	/** 1 where the rules know that member's key (isJsonRuleKey), by level. */
	private readonly rules: Uint8Array[] = [];
	/** The open objects that have a problem member, by level (few). */
	readonly problems = new Map<number, FrameProblem>();
	/** The open objects with a member naming a kind of problem (jsonIdentityOf), by level. */
	readonly identities = new Map<number, string>();

	push(kind: ContainerKind, start: number, startLine: number, lineStart: number, problemsBefore: number): void {
		const level = this.depth++;
		const block = level >>> FRAME_BLOCK_SHIFT;
		if (block === this.numbers.length) {
			this.numbers.push(new Float64Array(FRAME_BLOCK_LEVELS * FRAME_FIELDS));
			this.keys.push(new Array<string | undefined>(FRAME_BLOCK_LEVELS).fill(undefined));
			this.rules.push(new Uint8Array(FRAME_BLOCK_LEVELS));
		}
		const numbers = this.numbers[block]!;
		const at = (level & FRAME_BLOCK_MASK) * FRAME_FIELDS;
		numbers[at + F_KIND] = kind;
		numbers[at + F_COUNT] = 0;
		numbers[at + F_START] = start;
		numbers[at + F_START_LINE] = startLine;
		numbers[at + F_LINE_START] = lineStart;
		numbers[at + F_PROBLEMS_BEFORE] = problemsBefore;
		this.keys[block]![level & FRAME_BLOCK_MASK] = undefined;
		this.rules[block]![level & FRAME_BLOCK_MASK] = 0;
	}

	/** The open container at `level`'s field; NaN past the open ones. */
	field(level: number, field: number): number {
		if (level < 0 || level >= this.depth) return Number.NaN;
		return this.numbers[level >>> FRAME_BLOCK_SHIFT]![(level & FRAME_BLOCK_MASK) * FRAME_FIELDS + field]!;
	}

	setCount(level: number, count: number): void {
		this.numbers[level >>> FRAME_BLOCK_SHIFT]![(level & FRAME_BLOCK_MASK) * FRAME_FIELDS + F_COUNT] = count;
	}

	key(level: number): string | undefined {
		if (level < 0 || level >= this.depth) return undefined;
		return this.keys[level >>> FRAME_BLOCK_SHIFT]![level & FRAME_BLOCK_MASK];
	}

	/** The member being read at `level` is `key`; `rule`: the rules know it (isJsonRuleKey). */
	setKey(level: number, key: string, rule: boolean): void {
		this.keys[level >>> FRAME_BLOCK_SHIFT]![level & FRAME_BLOCK_MASK] = key;
		this.rules[level >>> FRAME_BLOCK_SHIFT]![level & FRAME_BLOCK_MASK] = rule ? 1 : 0;
	}

	/** Whether the rules know the key of the member being read at `level`. */
	isRuleKey(level: number): boolean {
		return this.rules[level >>> FRAME_BLOCK_SHIFT]![level & FRAME_BLOCK_MASK] === 1;
	}

	/** The segment of the container at `level` in its parent: the parent's item or member being read. */
	segmentOf(level: number): PathSegment | undefined {
		const parent = level - 1;
		if (parent < 0 || parent >= this.depth) return undefined;
		return this.field(parent, F_KIND) === KIND_ARRAY ? this.field(parent, F_COUNT) - 1 : this.key(parent);
	}

	pop(): Frame {
		const level = this.depth - 1;
		const problem = this.problems.size > 0 ? this.problems.get(level) : undefined;
		if (problem !== undefined) this.problems.delete(level);
		const identity = this.identities.size > 0 ? this.identities.get(level) : undefined;
		if (identity !== undefined) this.identities.delete(level);
		const frame: Frame = {
			kind: this.field(level, F_KIND) as ContainerKind,
			count: this.field(level, F_COUNT),
			start: this.field(level, F_START),
			startLine: this.field(level, F_START_LINE),
			lineStart: this.field(level, F_LINE_START),
			problemsBefore: this.field(level, F_PROBLEMS_BEFORE),
			reason: problem?.reason,
			member: problem?.member,
			identity,
		};
		this.depth = level;
		return frame;
	}

	clear(): void {
		this.depth = 0;
		this.problems.clear();
		this.identities.clear();
	}
}

/**
 * Where the lexer is in lines: the line of `offset` and where that line starts. The next newline at or
 * after `offset` in the current buffer is remembered, so each byte is searched once, not once per move
 * (a minified document has no newline: a search on every container to the buffer's end was quadratic).
 */
export class LineCursor {
	offset = 0;
	line = 1;
	lineStart = 0;
	/** Bytes searched for newlines so far: at most each byte of each buffer once. */
	scanned = 0;
	private buffer: Buffer | undefined;
	private base = 0;
	/** Absolute offset of the first newline at or after `offset` in `buffer`, -1 for none; undefined: not searched. */
	private next: number | undefined;

	/** Moves to `offset`, counting the newlines of `buffer` (whose byte 0 is at `base`) on the way. */
	moveTo(buffer: Buffer, base: number, offset: number): void {
		if (buffer !== this.buffer || base !== this.base) {
			this.buffer = buffer;
			this.base = base;
			this.next = undefined;
		}
		const to = Math.min(offset, base + buffer.length);
		for (;;) {
			if (this.next === undefined) {
				const from = Math.max(this.offset, base) - base;
				const newline = from < buffer.length ? buffer.indexOf(0x0a, from) : -1;
				if (from < buffer.length) this.scanned += (newline < 0 ? buffer.length : newline + 1) - from;
				this.next = newline < 0 ? -1 : base + newline;
			}
			if (this.next < 0 || this.next >= to) break;
			this.line++;
			this.lineStart = this.next + 1;
			this.offset = this.next + 1;
			this.next = undefined;
		}
		if (offset > this.offset) this.offset = offset;
	}
}

/** Keys remembered by KeyCache, and the longest (in bytes, as written: escapes and all). */
const KEY_CACHE_SLOTS = 512;
const KEY_CACHE_MAX_BYTES = 48;

/**
 * Keys by their bytes: the objects of an array of records repeat one set of keys, and a key met again
 * is compared byte by byte with the one its slot holds instead of being decoded (and judged) again.
 * A slot holds the last key whose length and ends fall in it. The same bytes are the same key.
 */
class KeyCache {
	/** Whether the rules know the last key decoded (isJsonRuleKey). */
	rule = false;
	private readonly bytes = Buffer.alloc(KEY_CACHE_SLOTS * KEY_CACHE_MAX_BYTES);
	private readonly lengths = new Int32Array(KEY_CACHE_SLOTS).fill(-1);
	private readonly texts: string[] = new Array<string>(KEY_CACHE_SLOTS).fill("");
	private readonly rules = new Uint8Array(KEY_CACHE_SLOTS);

	decode(token: JsonToken): string {
		const { bytes, from, to } = token;
		const length = to - from;
		if (token.truncated || length > KEY_CACHE_MAX_BYTES) return this.decodeAfresh(token);
		const slot =
			length === 0
				? 0
				: (length * 31 + bytes[from]! * 7 + bytes[to - 1]! * 13 + bytes[from + (length >> 1)]!) & (KEY_CACHE_SLOTS - 1);
		const base = slot * KEY_CACHE_MAX_BYTES;
		if (this.lengths[slot] === length) {
			const cached = this.bytes;
			let same = true;
			for (let i = 0; i < length; i++) {
				if (cached[base + i] !== bytes[from + i]) {
					same = false;
					break;
				}
			}
			if (same) {
				this.rule = this.rules[slot] === 1;
				return this.texts[slot]!;
			}
		}
		const key = this.decodeAfresh(token);
		bytes.copy(this.bytes, base, from, to);
		this.lengths[slot] = length;
		this.texts[slot] = key;
		this.rules[slot] = this.rule ? 1 : 0;
		return key;
	}

	private decodeAfresh(token: JsonToken): string {
		const key = decodeStringToken(token);
		this.rule = token.to - token.from <= JSON_RULE_KEY_BYTES && isJsonRuleKey(key);
		return key;
	}
}

/** Bytes of a string value captured for the rules (a level, an outcome, an error message's start). */
const CAPTURE_BYTES = 4096;

class OutlineReader implements JsonEventHandler {
	readonly problems: JsonProblem[] = [];
	problemCount = 0;
	readonly frames = new FrameStack();
	readonly cursor = new LineCursor();
	/** The root's members, summarised as they end (first document only). */
	readonly members: string[] = [];
	rootSummary = "";
	records = 0;
	jsonLines = false;
	/** A record that is a problem, kept until it is known whether a second record follows. */
	pendingRoot: { frame: Frame; end: number; endLine: number } | undefined;
	/** A container at JSON_OUTLINE_LEVELS held something: levels below it were not read. */
	deeper = false;
	buffer: Buffer = Buffer.alloc(0);
	base = 0;
	/** The member being read has a key the rules know. */
	private pendingRule = false;
	private readonly keys = new KeyCache();

	lexer = outlineLexer(this);

	/** A new document starts (the next record of JSON lines): a fresh lexer, no open containers. */
	restart(): void {
		this.lexer = outlineLexer(this);
		this.frames.clear();
	}

	/** Moves the line cursor to `offset` (its line and line start are then the cursor's). */
	private at(offset: number): void {
		this.cursor.moveTo(this.buffer, this.base, offset);
	}

	onOpen(kind: ContainerKind, level: number, offset: number): void {
		this.countFirstItem(level);
		this.at(offset);
		this.frames.push(kind, offset, this.cursor.line, this.cursor.lineStart, this.problemCount);
	}

	onClose(kind: ContainerKind, level: number, offset: number, empty: boolean): void {
		if (this.frames.depth === 0) return;
		const frame = this.frames.pop();
		// The containers at the last level read are opened and closed, their contents not read.
		const opaque = level >= JSON_OUTLINE_LEVELS;
		if (opaque && !empty) this.deeper = true;
		this.at(offset);
		const line = this.cursor.line;
		if (kind === KIND_OBJECT && frame.reason !== undefined) this.closeProblem(frame, offset + 1, line, level);
		if (level >= 1 && level - 1 < this.frames.depth) {
			// Only a member is judged or summarised: an item of an array is neither.
			const at = level - 1;
			if (this.frames.field(at, F_KIND) !== KIND_OBJECT) return;
			const rule = this.frames.isRuleKey(at);
			if (!this.wantsMember(at, rule)) return;
			this.judge(
				at,
				rule,
				{ kind: "container", empty },
				frame.start,
				offset + 1,
				frame.startLine,
				frame.lineStart,
				line,
				containerSummary(frame, empty, opaque),
			);
		} else {
			this.records++;
			if (this.records === 1)
				this.rootSummary =
					kind === KIND_OBJECT ? summariseMembers(this.members, frame.count) : containerSummary(frame, empty, opaque);
		}
	}

	onKey(level: number, token: JsonToken): void {
		const at = level - 1;
		if (at < 0 || at >= this.frames.depth) return;
		this.frames.setCount(at, this.frames.field(at, F_COUNT) + 1);
		const key = this.keys.decode(token);
		this.pendingRule = this.keys.rule;
		this.frames.setKey(at, key, this.pendingRule);
		// Values are captured only where the rules read them, and for the outline of the root's members.
		this.lexer.detail = level === 1 || this.pendingRule;
	}

	onScalar(kind: ScalarKind, level: number, token: JsonToken): void {
		this.countFirstItem(level);
		const at = level - 1;
		if (at < 0 || at >= this.frames.depth) return;
		this.lexer.detail = false;
		if (this.frames.field(at, F_KIND) === KIND_ARRAY) return;
		const rule = this.pendingRule;
		if (!this.wantsMember(at, rule)) return;
		const value = scalarValue(kind, token, level === 1 || rule);
		this.at(token.end);
		const { line, lineStart } = this.cursor;
		this.judge(at, rule, value, token.start, token.end, line, lineStart, line, scalarSummary(kind, value));
	}

	onComma(level: number, kind: ContainerKind): void {
		const at = level - 1;
		if (at >= 0 && at < this.frames.depth && kind === KIND_ARRAY)
			this.frames.setCount(at, this.frames.field(at, F_COUNT) + 1);
	}

	/** An array's first item starts: counted when the array is not empty. */
	private countFirstItem(level: number): void {
		const at = level - 1;
		const frames = this.frames;
		if (frames.field(at, F_KIND) === KIND_ARRAY && frames.field(at, F_COUNT) === 0) frames.setCount(at, 1);
	}

	/**
	 * Whether a member of the object at `at` is looked at when it ends: one whose key the rules know
	 * (`rule`), or a root member the outline names. Most members are neither and cost nothing more.
	 */
	private wantsMember(at: number, rule: boolean): boolean {
		return rule || (at === 0 && this.records === 0 && this.members.length < OUTLINE_MEMBERS);
	}

	/** A member of the open container at index `at` ended: judge it (`rule`), and summarise the root's members for the outline. */
	private judge(
		at: number,
		rule: boolean,
		value: JsonMemberValue,
		start: number,
		end: number,
		startLine: number,
		lineStart: number,
		endLine: number,
		summary: string,
	): void {
		const frames = this.frames;
		const key = frames.key(at);
		if (frames.field(at, F_KIND) !== KIND_OBJECT || key === undefined) return;
		if (at === 0 && this.records === 0 && this.members.length < OUTLINE_MEMBERS)
			this.members.push(`${JSON.stringify(key)}: ${summary}`);
		if (!rule) return;
		if (!frames.identities.has(at)) {
			const identity = jsonIdentityOf(key, value);
			if (identity !== undefined) frames.identities.set(at, identity);
		}
		if (frames.problems.has(at) || !judgeJsonMember(key, value)) return;
		frames.problems.set(at, {
			reason: `${JSON.stringify(key)}: ${summary}`,
			member: { segment: key, start, startLine, lineStart, end, endLine, summary },
		});
	}

	private closeProblem(frame: Frame, end: number, endLine: number, level: number): void {
		// An object holding a more precise problem inside is not reported itself.
		if (this.problemCount > frame.problemsBefore) return;
		if (level === 0) {
			this.pendingRoot = { frame, end, endLine };
			return;
		}
		if (endLine - frame.startLine + 1 > MAX_PROBLEM_OBJECT_LINES && frame.member !== undefined) {
			this.recordMember(frame, level);
			return;
		}
		// Past the kept problems only the count grows, unless it is of a kind not kept yet: a path costs
		// a walk over every open level.
		if (!this.keeps(frame.identity)) {
			this.count(frame.identity);
			return;
		}
		this.record({ path: this.pathOf(level), ...this.placeOf(frame, end, endLine) }, frame.identity);
	}

	/** Problems of each kind so far (at most MAX_JSON_KINDS kinds; past them kindsComplete is false). */
	private readonly kinds = new Map<string, number>();
	kindsComplete = true;

	/** One more problem, of `identity`'s kind. */
	private count(identity: string | undefined): void {
		this.problemCount++;
		if (identity === undefined) return;
		const count = this.kinds.get(identity);
		if (count !== undefined) this.kinds.set(identity, count + 1);
		else if (this.kinds.size < MAX_JSON_KINDS) this.kinds.set(identity, 1);
		else this.kindsComplete = false;
	}

	/**
	 * Is a problem of `identity`'s kind kept: while there is room, or when no problem of its kind is
	 * (then in place of the last kept problem of the most common kind, when that kind has more than one).
	 */
	private keeps(identity: string | undefined): boolean {
		if (this.problems.length < MAX_JSON_PROBLEMS) return true;
		return identity !== undefined && !this.kinds.has(identity) && this.evictCommon();
	}

	/** Drops the last kept problem of the most common kind, when it has more than one; whether one was dropped. */
	private evictCommon(): boolean {
		let victim = -1;
		let most = 1;
		for (let index = 0; index < this.problems.length; index++) {
			const identity = this.problems[index].identity;
			const count = identity === undefined ? 0 : (this.kinds.get(identity) ?? 0);
			if (count >= most && count > 1) {
				most = count;
				victim = index;
			}
		}
		if (victim < 0) return false;
		this.problems.splice(victim, 1);
		return true;
	}

	/** A problem object's place, and its problem member's. */
	private placeOf(frame: Frame, end: number, endLine: number): Omit<JsonProblem, "path"> {
		const member = frame.member;
		const memberPlace =
			member === undefined
				? { startLine: frame.startLine, endLine, lineStart: frame.lineStart }
				: { startLine: member.startLine, endLine: member.endLine, lineStart: member.lineStart };
		return {
			reason: frame.reason ?? "",
			startLine: frame.startLine,
			endLine,
			lineStart: frame.lineStart,
			start: frame.start,
			end,
			member: memberPlace,
		};
	}

	/** A problem root: a record of JSON lines is shown whole; a document's root by its problem member. */
	settleRoot(anotherFollows: boolean): void {
		const pending = this.pendingRoot;
		this.pendingRoot = undefined;
		if (pending === undefined) return;
		const { frame, end, endLine } = pending;
		if (anotherFollows || this.jsonLines) {
			if (this.keeps(frame.identity))
				this.record({ path: "$", ...this.placeOf(frame, end, endLine), record: true }, frame.identity);
			else this.count(frame.identity);
		} else if (endLine === frame.startLine || frame.member === undefined) {
			this.record({ path: "$", ...this.placeOf(frame, end, endLine) }, frame.identity);
		} else {
			this.recordMember(frame, 0);
		}
	}

	private recordMember(frame: Frame, level: number): void {
		const member = frame.member;
		if (member === undefined) return;
		if (!this.keeps(frame.identity)) {
			this.count(frame.identity);
			return;
		}
		const path = `${this.pathOf(level)}${formatPathPrefix([member.segment]).slice(1)}`;
		const place = { startLine: member.startLine, endLine: member.endLine, lineStart: member.lineStart };
		this.record(
			{ path, reason: frame.reason ?? "", ...place, start: member.start, end: member.end, member: place },
			frame.identity,
		);
	}

	private record(problem: JsonProblem, identity: string | undefined): void {
		this.count(identity);
		if (this.problems.length < MAX_JSON_PROBLEMS)
			this.problems.push(identity === undefined ? problem : { ...problem, identity });
	}

	/** The kept problems, the rarest kinds first (a kind's count, when every kind was counted), then in order. */
	sortedProblems(): JsonProblem[] {
		if (!this.kindsComplete) return this.problems;
		const withCounts = this.problems.map((problem) =>
			problem.identity === undefined ? problem : { ...problem, identityCount: this.kinds.get(problem.identity) ?? 0 },
		);
		const rank = (problem: JsonProblem) => problem.identityCount ?? Number.POSITIVE_INFINITY;
		return withCounts
			.map((problem, index) => ({ problem, index }))
			.sort((a, b) => rank(a.problem) - rank(b.problem) || a.index - b.index)
			.map(({ problem }) => problem);
	}

	/** The jsonPath of the container at `level` that just closed (its parents are still open). */
	private pathOf(level: number): string {
		const segments: PathSegment[] = [];
		for (let index = 1; index <= level; index++) {
			const own = this.frames.segmentOf(index);
			if (own !== undefined) segments.push(own);
		}
		return formatPathPrefix(segments);
	}
}

function scalarValue(kind: ScalarKind, token: JsonToken, captured: boolean): JsonMemberValue {
	switch (kind) {
		case SCALAR_STRING:
			return { kind: "string", value: captured ? decodeStringToken(token) : "?" };
		case SCALAR_NUMBER:
			return { kind: "number", value: captured ? decodeNumberToken(token) : Number.NaN };
		case SCALAR_TRUE:
			return { kind: "boolean", value: true };
		case SCALAR_FALSE:
			return { kind: "boolean", value: false };
		default:
			return { kind: "null" };
	}
}

function scalarSummary(kind: ScalarKind, value: JsonMemberValue): string {
	if (kind === SCALAR_STRING) {
		const text = value.kind === "string" && value.value !== "?" ? value.value : "…";
		return JSON.stringify(text.length > OUTLINE_STRING_CHARS ? `${text.slice(0, OUTLINE_STRING_CHARS)}…` : text);
	}
	if (kind === SCALAR_NUMBER)
		return value.kind === "number" && !Number.isNaN(value.value) ? String(value.value) : "number";
	if (kind === SCALAR_NULL) return "null";
	return kind === SCALAR_TRUE ? "true" : "false";
}

/** `{"a": 1, "b": [3 items], …}`: the root's members while they fit in OUTLINE_CHARS. */
function summariseMembers(members: readonly string[], total: number): string {
	let shown = 0;
	let length = 2;
	while (shown < members.length && length + members[shown].length + 2 <= OUTLINE_CHARS - 3)
		length += members[shown++].length + 2;
	return `{${members.slice(0, shown).join(", ")}${shown < total ? `${shown > 0 ? ", " : ""}…` : ""}}`;
}

/** `[3 items]`, `{2 keys}`; `[…]` for a container whose contents were not read (`opaque`). */
function containerSummary(frame: Frame, empty: boolean, opaque: boolean): string {
	if (opaque && !empty) return frame.kind === KIND_ARRAY ? "[…]" : "{…}";
	const count = empty ? 0 : frame.count;
	return frame.kind === KIND_ARRAY
		? `[${count} ${count === 1 ? "item" : "items"}]`
		: `{${count} ${count === 1 ? "key" : "keys"}}`;
}

/**
 * Reads the structure of `source` when it is a JSON document or JSON lines of at most
 * JSON_OUTLINE_MAX_BYTES; undefined when it does not start like one (or is larger).
 */
export async function readJsonFindings(
	source: ByteSource,
	maxBytes = JSON_OUTLINE_MAX_BYTES,
	sliceOptions?: TimeSliceOptions,
): Promise<JsonFindings | undefined> {
	if (source.size === 0 || source.size > maxBytes || !(await mayStartJson(source))) return undefined;
	const buffer = Buffer.allocUnsafe(Math.min(READ_CHUNK_BYTES, source.size));
	const reader = new OutlineReader();
	const slice = new TimeSlice({ turnBytes: OUTLINE_TURN_BYTES, ...sliceOptions });
	let started = false;
	for (let position = 0; position < source.size;) {
		const read = await source.read(buffer, position);
		if (read <= 0) break;
		let from = 0;
		if (!started) {
			while (from < read && isSpace(buffer[from]!)) from++;
			if (from === read) {
				position += read;
				continue;
			}
			if (buffer[from] !== 0x7b && buffer[from] !== 0x5b) return undefined;
			started = true;
		}
		reader.buffer = buffer.subarray(0, read);
		reader.base = position;
		while (from < read) {
			// A slice at a time, with a turn for the event loop when the pass has run its time.
			const to = Math.min(read, from + OUTLINE_SLICE_BYTES);
			reader.lexer.feed(reader.buffer, from, to, position);
			const error = reader.lexer.error;
			if (error === null) {
				await slice.passed(to - from);
				from = to;
				continue;
			}
			// Another document after the first: JSON lines, when it starts a line with an object or array.
			const at = error.offset - position;
			const next = buffer[at];
			reader.cursor.moveTo(reader.buffer, position, error.offset);
			const lineStart = reader.cursor.lineStart;
			const startsLine = lineStart > 0 && isBlankBetween(buffer, Math.max(lineStart, position) - position, at);
			if (error.kind !== "nonWhitespaceAfter" || !startsLine || (next !== 0x7b && next !== 0x5b)) {
				reader.settleRoot(false);
				return finish(reader, false);
			}
			reader.jsonLines = true;
			reader.settleRoot(true);
			reader.restart();
			from = at;
			await slice.turn();
		}
		reader.cursor.moveTo(reader.buffer, position, position + read);
		position += read;
	}
	reader.lexer.finish(source.size);
	reader.settleRoot(false);
	return finish(reader, reader.lexer.error === null);
}

function outlineLexer(reader: OutlineReader): Lexer {
	const lexer = new JsonLexer(reader, { captureLimit: CAPTURE_BYTES });
	lexer.maxEventLevel = JSON_OUTLINE_LEVELS;
	return lexer;
}

function finish(reader: OutlineReader, complete: boolean): JsonFindings | undefined {
	let outline: string | undefined;
	if (reader.jsonLines) outline = `JSON lines: ${reader.records}${complete ? "" : "+"} records`;
	else if (complete && reader.records === 1) outline = reader.rootSummary;
	if (outline === undefined && reader.problemCount === 0) return undefined;
	// Records of JSON lines are known as such only once a second one starts.
	const sorted = reader.sortedProblems();
	const problems = reader.jsonLines ? sorted.map((problem) => ({ ...problem, record: true as const })) : sorted;
	return {
		...(outline !== undefined ? { outline } : {}),
		problems,
		problemCount: reader.problemCount,
		...(reader.deeper ? { deeperThan: JSON_OUTLINE_LEVELS } : {}),
	};
}

/** Bytes looked at for a first character that is not whitespace before a chunk buffer is taken. */
const JSON_PROBE_BYTES = 4096;

/**
 * False when the first character of `source` that is not JSON whitespace, within its first
 * JSON_PROBE_BYTES, is no `{` or `[`: most outputs are not JSON, and this costs a 4 KiB read, not a chunk's.
 */
async function mayStartJson(source: ByteSource): Promise<boolean> {
	const probe = Buffer.allocUnsafe(Math.min(JSON_PROBE_BYTES, source.size));
	const read = await source.read(probe, 0);
	for (let at = 0; at < read; at++) if (!isSpace(probe[at]!)) return probe[at] === 0x7b || probe[at] === 0x5b;
	return true;
}

function isSpace(byte: number): boolean {
	return byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09;
}

function isBlankBetween(buffer: Buffer, from: number, to: number): boolean {
	for (let index = from; index < to; index++) if (!isSpace(buffer[index]!)) return false;
	return true;
}
