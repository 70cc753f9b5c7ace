// What the structure of a JSON output says, for the view: a one-line outline of the document (its
// top-level members, array lengths) and the objects whose members say they are problems
// (signals/policy.ts judges members), each with its jsonPath and its lines in the output. JSON lines
// (one document per line) are read record by record. One streaming pass of the lexer over at most
// JSON_OUTLINE_MAX_BYTES: memory is the open containers and a few kept problems, whatever the size.

import {
	decodeNumberToken,
	decodeStringToken,
	type JsonEventHandler,
	JsonLexer,
	type JsonToken,
	KIND_ARRAY,
	KIND_OBJECT,
	type ContainerKind,
	SCALAR_FALSE,
	SCALAR_NULL,
	SCALAR_NUMBER,
	SCALAR_STRING,
	SCALAR_TRUE,
	type ScalarKind,
} from "../json/index.js";
import { formatPathPrefix, type PathSegment } from "../json/path.js";
import { isJsonRuleKey, JSON_RULE_KEY_BYTES, type JsonMemberValue, judgeJsonMember } from "../signals/policy.js";
import { type ByteSource, READ_CHUNK_BYTES } from "../io/source.js";

/** Largest output whose structure is read (larger ones get no outline: the pass would cost too much). */
export const JSON_OUTLINE_MAX_BYTES = 8 * 1024 * 1024;
/** Problems kept with their places (more are counted). */
export const MAX_JSON_PROBLEMS = 20;
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
}

export interface JsonFindings {
	/** `{summary: {4 keys}, results: [1500 items]}`, or `JSON lines: 5000 records`; absent when the document did not end. */
	outline?: string;
	/** The first MAX_JSON_PROBLEMS problems, in the order their objects end. */
	problems: JsonProblem[];
	/** All problems found. */
	problemCount: number;
}

/** A container being read: where it started, the member or item being read, what it says. */
interface Frame {
	kind: ContainerKind;
	/** Its segment in its parent (undefined for a document's root). */
	segment: PathSegment | undefined;
	key: string | undefined;
	/** Items so far (arrays) or members so far (objects), the one being read included. */
	count: number;
	start: number;
	startLine: number;
	lineStart: number;
	/** The first member that says this object is a problem, and where that member's value lies. */
	reason?: string;
	member?: {
		segment: string;
		start: number;
		startLine: number;
		lineStart: number;
		end: number;
		endLine: number;
		summary: string;
	};
	/** Problems recorded when it opened: an object holding a problem inside is not one itself. */
	problemsBefore: number;
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

/** Bytes of a string value captured for the rules (a level, an outcome, an error message's start). */
const CAPTURE_BYTES = 4096;

class OutlineReader implements JsonEventHandler {
	readonly problems: JsonProblem[] = [];
	problemCount = 0;
	readonly frames: Frame[] = [];
	readonly cursor = new LineCursor();
	/** The root's members, summarised as they end (first document only). */
	readonly members: string[] = [];
	rootSummary = "";
	records = 0;
	jsonLines = false;
	/** A record that is a problem, kept until it is known whether a second record follows. */
	pendingRoot: { frame: Frame; end: number; endLine: number } | undefined;
	buffer: Buffer = Buffer.alloc(0);
	base = 0;
	private pendingKey: string | undefined;

	lexer = new JsonLexer(this, { captureLimit: CAPTURE_BYTES });

	/** A new document starts (the next record of JSON lines): a fresh lexer, no open containers. */
	restart(): void {
		this.lexer = new JsonLexer(this, { captureLimit: CAPTURE_BYTES });
		this.frames.length = 0;
	}

	private at(offset: number): { line: number; lineStart: number } {
		this.cursor.moveTo(this.buffer, this.base, offset);
		return { line: this.cursor.line, lineStart: this.cursor.lineStart };
	}

	onOpen(kind: ContainerKind, level: number, offset: number): void {
		this.countFirstItem(level);
		const parent = this.frames[level - 1];
		const segment = parent === undefined ? undefined : parent.kind === KIND_ARRAY ? parent.count - 1 : parent.key;
		const { line, lineStart } = this.at(offset);
		this.frames.push({
			kind,
			segment,
			key: undefined,
			count: 0,
			start: offset,
			startLine: line,
			lineStart,
			problemsBefore: this.problemCount,
		});
	}

	onClose(kind: ContainerKind, level: number, offset: number, empty: boolean): void {
		const frame = this.frames.pop();
		if (frame === undefined) return;
		const { line } = this.at(offset);
		const parent = this.frames[level - 1];
		if (kind === KIND_OBJECT && frame.reason !== undefined) this.closeProblem(frame, offset + 1, line, level);
		if (parent !== undefined) {
			this.judge(
				parent,
				{ kind: "container", empty },
				frame.start,
				offset + 1,
				frame.startLine,
				frame.lineStart,
				line,
				containerSummary(frame, empty),
			);
		} else {
			this.records++;
			if (this.records === 1)
				this.rootSummary =
					kind === KIND_OBJECT ? summariseMembers(this.members, frame.count) : containerSummary(frame, empty);
		}
	}

	onKey(level: number, token: JsonToken): void {
		const frame = this.frames[level - 1];
		if (frame === undefined) return;
		frame.count++;
		const key = decodeStringToken(token);
		frame.key = key;
		// Values are captured only where the rules read them, and for the outline of the root's members.
		this.lexer.detail = level === 1 || (token.to - token.from <= JSON_RULE_KEY_BYTES && isJsonRuleKey(key));
		this.pendingKey = key;
	}

	onScalar(kind: ScalarKind, level: number, token: JsonToken): void {
		this.countFirstItem(level);
		const frame = this.frames[level - 1];
		if (frame === undefined) return;
		this.lexer.detail = false;
		if (frame.kind === KIND_ARRAY) return;
		const value = scalarValue(
			kind,
			token,
			level === 1 || (this.pendingKey !== undefined && isJsonRuleKey(this.pendingKey)),
		);
		const { line, lineStart } = this.at(token.end);
		this.judge(frame, value, token.start, token.end, line, lineStart, line, scalarSummary(kind, value));
	}

	onComma(level: number, kind: ContainerKind): void {
		const frame = this.frames[level - 1];
		if (frame !== undefined && kind === KIND_ARRAY) frame.count++;
	}

	/** An array's first item starts: counted when the array is not empty. */
	private countFirstItem(level: number): void {
		const frame = this.frames[level - 1];
		if (frame !== undefined && frame.kind === KIND_ARRAY && frame.count === 0) frame.count = 1;
	}

	/** A member of `frame` ended: judge it, and summarise the root's members for the outline. */
	private judge(
		frame: Frame,
		value: JsonMemberValue,
		start: number,
		end: number,
		startLine: number,
		lineStart: number,
		endLine: number,
		summary: string,
	): void {
		if (frame.kind !== KIND_OBJECT || frame.key === undefined) return;
		const key = frame.key;
		if (this.frames[0] === frame && this.records === 0 && this.members.length < OUTLINE_MEMBERS)
			this.members.push(`${JSON.stringify(key)}: ${summary}`);
		if (frame.reason !== undefined || !judgeJsonMember(key, value)) return;
		frame.reason = `${JSON.stringify(key)}: ${summary}`;
		frame.member = { segment: key, start, startLine, lineStart, end, endLine, summary };
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
		this.record({ path: this.pathOf(level, frame.segment), ...this.placeOf(frame, end, endLine) });
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
			this.record({ path: "$", ...this.placeOf(frame, end, endLine), record: true });
		} else if (endLine === frame.startLine || frame.member === undefined) {
			this.record({ path: "$", ...this.placeOf(frame, end, endLine) });
		} else {
			this.recordMember(frame, 0);
		}
	}

	private recordMember(frame: Frame, level: number): void {
		const member = frame.member;
		if (member === undefined) return;
		const path = `${this.pathOf(level, frame.segment)}${formatPathPrefix([member.segment]).slice(1)}`;
		const place = { startLine: member.startLine, endLine: member.endLine, lineStart: member.lineStart };
		this.record({ path, reason: frame.reason ?? "", ...place, start: member.start, end: member.end, member: place });
	}

	private record(problem: JsonProblem): void {
		this.problemCount++;
		if (this.problems.length < MAX_JSON_PROBLEMS) this.problems.push(problem);
	}

	/** The jsonPath of the container at `level` whose own segment is `segment` (its parents are still open). */
	private pathOf(level: number, segment: PathSegment | undefined): string {
		const segments: PathSegment[] = [];
		for (let index = 1; index < level; index++) {
			const own = this.frames[index]?.segment;
			if (own !== undefined) segments.push(own);
		}
		if (segment !== undefined && level > 0) segments.push(segment);
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

function containerSummary(frame: Frame, empty: boolean): string {
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
): Promise<JsonFindings | undefined> {
	if (source.size === 0 || source.size > maxBytes || !(await mayStartJson(source))) return undefined;
	const buffer = Buffer.allocUnsafe(Math.min(READ_CHUNK_BYTES, source.size));
	const reader = new OutlineReader();
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
		for (;;) {
			reader.lexer.feed(reader.buffer, from, read, position);
			const error = reader.lexer.error;
			if (error === null) break;
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
		}
		reader.cursor.moveTo(reader.buffer, position, position + read);
		position += read;
	}
	reader.lexer.finish(source.size);
	reader.settleRoot(false);
	return finish(reader, reader.lexer.error === null);
}

function finish(reader: OutlineReader, complete: boolean): JsonFindings | undefined {
	let outline: string | undefined;
	if (reader.jsonLines) outline = `JSON lines: ${reader.records}${complete ? "" : "+"} records`;
	else if (complete && reader.records === 1) outline = reader.rootSummary;
	if (outline === undefined && reader.problemCount === 0) return undefined;
	// Records of JSON lines are known as such only once a second one starts.
	const problems = reader.jsonLines
		? reader.problems.map((problem) => ({ ...problem, record: true as const }))
		: reader.problems;
	return { ...(outline !== undefined ? { outline } : {}), problems, problemCount: reader.problemCount };
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
