// The members of one object in JSON.parse's order (array-index keys ascending, then the others in
// order of first occurrence; a repeated key's last value), for printing an object JSON.parse would
// reorder: at most `limit` of them, each a key and the byte range of its value.

import type { ChunkReader } from "./chunk-reader.js";
import { arrayIndexOfKey } from "./keys.js";
import { JsonLexer } from "./lexer.js";
import {
	type ContainerKind,
	decodeStringToken,
	type JsonEventHandler,
	type JsonToken,
	type ScalarKind,
} from "./token.js";

export interface Member {
	key: string;
	truncated: boolean;
	start: number;
	end: number;
}

/**
 * The members of one object in JSON.parse's order (array-index keys ascending, then the others in
 * order of first occurrence; a repeated key's last value), at most `limit` of them.
 */
export class MemberCollector implements JsonEventHandler {
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

export async function collectMembers(
	reader: ChunkReader,
	start: number,
	end: number,
	limit: number,
	captureLimit: number,
): Promise<Member[]> {
	const collector = new MemberCollector(limit);
	const lexer = new JsonLexer(collector, { captureLimit });
	lexer.maxEventLevel = 1;
	await reader.feed(lexer, start, end);
	return collector.members;
}
