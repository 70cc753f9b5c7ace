// Pass 2: the selected value printed as JSON.stringify(value, null, 2) prints it, at most `room`
// characters, read again from the stored text; objects JSON.parse would reorder are printed from
// their members in JSON.parse's order (members.ts). Nothing recurses: an explicit task stack.

import { keepStart } from "../lines/text.js";
import type { ChunkReader } from "./chunk-reader.js";
import { JsonLexer } from "./lexer.js";
import type { SelectedValue } from "./measure.js";
import { collectMembers, type Member } from "./members.js";
import {
	type ContainerKind,
	decodeNumberToken,
	decodeStringToken,
	type JsonEventHandler,
	type JsonToken,
	KIND_ARRAY,
	KIND_OBJECT,
	type ParentKind,
	SCALAR_FALSE,
	SCALAR_NUMBER,
	SCALAR_STRING,
	SCALAR_TRUE,
	type ScalarKind,
} from "./token.js";

/** The shortest text one more object member adds when printed: `\n  "": 0,`. */
const MIN_MEMBER_CHARS = 9;

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

type PrintTask =
	| { type: "range"; lexer: JsonLexer; position: number; end: number; base: number }
	| { type: "object"; members: Member[]; next: number; depth: number };

/** Pass 2: the selected value's pretty text, at most `room` characters of it. */
export async function printValue(reader: ChunkReader, selected: SelectedValue, room: number): Promise<string> {
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
			if (task.lexer.error)
				throw new Error(`jsonPath: the stored text changed while it was read (${task.lexer.error.kind})`);
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
		printer.write(
			`${task.next > 0 ? "," : ""}\n${indent(task.depth + 1)}${member.truncated ? key.slice(0, -1) : key}: `,
		);
		task.next++;
		tasks.push(openRange(member.start, member.end, task.depth + 1));
	}
	return printer.text;
}
