// The search oracle: what grep -n -i -C would show for a text, with the engine's windows and
// clipping, computed line by line the simplest way; random texts that stress it (empty and long
// lines, \r, multi-byte characters and surrogate pairs); and what the worker's modules need to run
// in the main thread of a test (a request, a byte source in memory).

import { isByteSafePattern } from "../../src/regex/safety.js";
import type { SearchLine, SearchWorkerRequest } from "../../src/query/engine/protocol.js";
import type { ByteSource } from "../../src/query/engine/run.js";

/** The options the oracle follows (a subset of SearchOptions and of the worker's request). */
export interface SearchReferenceOptions {
	pattern: string;
	contextLines: number;
	maxResults: number;
	maxLineChars: number;
}

/** Lines as the store counts them: split on \n, \r before it dropped, no line after a final \n. */
export function splitLines(text: string): string[] {
	if (text === "") return [];
	const lines = text.split("\n");
	if (text.endsWith("\n")) lines.pop();
	return lines.map((line) => (line.endsWith("\r") ? line.slice(0, -1) : line));
}

/** What grep -n -i -C would show, with the engine's windows and clipping: the oracle. */
export function searchReference(
	text: string,
	options: SearchReferenceOptions,
): { lines: SearchLine[]; totalHits: number } {
	const lines = splitLines(text);
	const regex = new RegExp(options.pattern, "i");
	const hits: number[] = [];
	lines.forEach((line, index) => {
		if (regex.test(line)) hits.push(index);
	});
	const collected = hits.slice(0, options.maxResults);
	const limit = hits[options.maxResults] ?? lines.length;
	const shown = new Set<number>();
	for (const hit of collected) {
		for (
			let index = Math.max(0, hit - options.contextLines);
			index <= Math.min(lines.length - 1, hit + options.contextLines);
			index++
		) {
			if (index < limit) shown.add(index);
		}
	}
	const hitSet = new Set(collected);
	const max = options.maxLineChars;
	const out = [...shown]
		.sort((a, b) => a - b)
		.map((index): SearchLine => {
			const line = lines[index]!;
			if (!hitSet.has(index)) {
				let end = Math.min(line.length, max);
				if (end < line.length && /[\ud800-\udbff]/.test(line[end - 1]!)) end -= 1;
				return {
					lineNumber: index + 1,
					text: line.slice(0, end),
					hit: false,
					cutBefore: 0,
					cutAfter: line.length - end,
					matchStart: -1,
					matchLength: 0,
				};
			}
			const match = regex.exec(line)!;
			let start = 0;
			let end = line.length;
			if (line.length > max) {
				start = match[0].length >= max ? match.index : match.index - Math.floor((max - match[0].length) / 2);
				start = Math.max(0, Math.min(start, line.length - max));
				end = start + max;
				if (start > 0 && /[\udc00-\udfff]/.test(line[start]!)) start += 1;
				if (end < line.length && /[\ud800-\udbff]/.test(line[end - 1]!)) end -= 1;
			}
			return {
				lineNumber: index + 1,
				text: line.slice(start, end),
				hit: true,
				cutBefore: start,
				cutAfter: line.length - end,
				matchStart: match.index - start,
				matchLength: Math.max(0, Math.min(match[0].length, end - match.index)),
			};
		});
	return { lines: out, totalHits: hits.length };
}

export function randomText(random: () => number, lineCount: number): string {
	const alphabet = ["a", "b", "a", "b", "x", " ", "é", "😀", "\r", "A", "B"];
	const lines: string[] = [];
	for (let index = 0; index < lineCount; index++) {
		const roll = random();
		const length = roll < 0.1 ? 0 : roll < 0.95 ? Math.floor(random() * 30) : 300 + Math.floor(random() * 1500);
		let line = "";
		for (let k = 0; k < length; k++) line += alphabet[Math.floor(random() * alphabet.length)];
		if (random() < 0.1) line += "\r";
		lines.push(line);
	}
	return lines.join("\n") + (random() < 0.5 ? "\n" : "");
}

/** A worker request with the test defaults (latin1 when the pattern is byte-safe, as searchFile sets it). */
export function createSearchRequest(
	overrides: Partial<SearchWorkerRequest> & { pattern: string },
): SearchWorkerRequest {
	return {
		type: "search",
		id: 1,
		path: "(in memory)",
		contextLines: 2,
		maxResults: 50,
		maxLineChars: 500,
		budgetChars: 1_000_000_000,
		timeoutMs: 60_000,
		chunkBytes: 4096,
		giantLineBytes: 1 << 20,
		latin1: isByteSafePattern(overrides.pattern),
		...overrides,
	};
}

/** A byte source over `bytes` in memory; `reads` counts its reads and `closed` says whether it was closed. */
export function createMemorySource(bytes: Buffer): ByteSource & { reads: number; closed: boolean } {
	const source = {
		reads: 0,
		closed: false,
		read(buffer: Buffer, offset: number, length: number, position: number): number {
			source.reads += 1;
			if (source.closed) throw new Error("read after close");
			return bytes.copy(buffer, offset, Math.min(position, bytes.length), Math.min(position + length, bytes.length));
		},
		close(): void {
			source.closed = true;
		},
	};
	return source;
}
