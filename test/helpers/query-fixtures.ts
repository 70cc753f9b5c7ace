// Shared by the overflow_query tests (one file per module of src/query/): entries written through
// a store in a fresh temp directory, a query that checks every answer is within thresholdChars,
// a failure that must be a short QueryError, and the numbered lines of an answer.

import assert from "node:assert/strict";
import type { TestContext } from "node:test";
import { createDefaultConfig, type OverflowConfig } from "../../src/config/config.js";
import {
	QueryError,
	runQuery,
	type QueryAnswer,
	type QueryDependencies,
	type QueryParams,
} from "../../src/query/index.js";
import { type EntryMeta, OverflowStore } from "../../src/store/index.js";
import { writeStoreEntry } from "./store-entry.js";
import { createTempDir } from "./tmp.js";

export const SEQ_LINES = 300_000;
export const SEQ_TEXT = `${Array.from({ length: SEQ_LINES }, (_, index) => String(index + 1)).join("\n")}\n`;

let idCounter = 0;
export function nextId(): string {
	idCounter += 1;
	return idCounter.toString(16).padStart(12, "0");
}

export function storeEntry(store: OverflowStore, text: string | Buffer, toolName = "bash"): Promise<EntryMeta> {
	return writeStoreEntry(store, nextId(), text, toolName);
}

export async function createDeps(t: TestContext, overrides: Partial<OverflowConfig> = {}): Promise<QueryDependencies> {
	const root = await createTempDir(t);
	const config = { ...createDefaultConfig(), ...overrides };
	return { config, store: new OverflowStore({ root }) };
}

export async function query(deps: QueryDependencies, params: QueryParams): Promise<QueryAnswer> {
	const answer = await runQuery(params, deps);
	assert.ok(
		answer.text.length <= deps.config.thresholdChars,
		`answer of ${answer.text.length} chars exceeds thresholdChars ${deps.config.thresholdChars}`,
	);
	return answer;
}

export async function queryError(deps: QueryDependencies, params: QueryParams): Promise<string> {
	try {
		await runQuery(params, deps);
	} catch (error) {
		assert.ok(error instanceof QueryError, `expected a QueryError, got ${String(error)}`);
		assert.ok(!error.message.includes("\n    at "), "no stack in the message");
		assert.ok(error.message.length <= 600, `message too long: ${error.message.length}`);
		return error.message;
	}
	assert.fail("expected the query to fail");
}

/** Numbered lines of an answer as [number, separator, text]. */
export function numberedLines(text: string): Array<[number, string, string]> {
	const out: Array<[number, string, string]> = [];
	for (const line of text.split("\n")) {
		const match = /^ *(\d+)([:-]) (.*)$/.exec(line);
		if (match) out.push([Number(match[1]), match[2]!, match[3]!]);
	}
	return out;
}
