// Every reader of a stored text — overflow_query's overview, its lines answer (with the sparse line
// index), its search (the worker) and its jsonPath (the streaming evaluator) — reads the one file store.openText opened: faults injected
// into the store's file system reach them all, a text replaced after the open is not read, something
// other than a regular file is refused without blocking, a vanished text reads as expired, and no
// descriptor is left open.

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { mkdir, rename, rm, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { after, test, type TestContext } from "node:test";

import { createDefaultConfig } from "../../src/config/config.js";
import { type QueryDependencies, QueryError, type QueryParams, runQuery } from "../../src/query/index.js";
import { disposeSearchWorkers } from "../../src/query/engine/search.js";
import { type EntryMeta, NODE_STORE_FS, OverflowStore, type StoreFs } from "../../src/store/index.js";
import { injectFaults } from "../helpers/faulty-fs.js";
import { writeStoreEntry } from "../helpers/store-entry.js";
import { createTempDir } from "../helpers/tmp.js";

after(() => disposeSearchWorkers());

const ID = "0000000000a1";
/** A JSON array of 5000 strings, one a line (so every reader, jsonPath included, can answer from it). */
const TEXT = `[\n${Array.from({ length: 5000 }, (_, index) => JSON.stringify(`line ${index + 1}${index === 2500 ? " error: original-needle" : ""}`)).join(",\n")}\n]\n`;

/** One selector of each kind that reads the stored text. */
function readersOf(id: string): { name: string; params: QueryParams }[] {
	return [
		{ name: "overview", params: { id } },
		{ name: "lines", params: { id, lines: { start: 2490, end: 2510 } } },
		{ name: "search", params: { id, search: "needle" } },
		{ name: "jsonPath", params: { id, jsonPath: "$[2500]" } },
	];
}

async function createDeps(
	t: TestContext,
	fs?: StoreFs,
): Promise<{ deps: QueryDependencies; meta: EntryMeta; root: string }> {
	const root = join(await createTempDir(t), "store");
	const meta = await writeStoreEntry(new OverflowStore({ root }), ID, TEXT);
	// A small stride: the lines answer builds its sparse index through the opened text too.
	return {
		deps: { config: createDefaultConfig(), store: new OverflowStore({ root, fs }), lineIndexStride: 64 },
		meta,
		root,
	};
}

async function queryFailure(deps: QueryDependencies, params: QueryParams): Promise<Error & { code?: string }> {
	try {
		await runQuery(params, deps);
	} catch (error) {
		return error as Error & { code?: string };
	}
	assert.fail(`expected ${JSON.stringify(params)} to fail`);
}

test("a failing open of the stored text reaches every reader with its code", async (t) => {
	const opened: string[] = [];
	const fs = injectFaults({ openRead: (path) => (opened.push(path), "EIO") });
	const { deps, root } = await createDeps(t, fs);
	for (const { name, params } of readersOf(ID)) {
		const error = await queryFailure(deps, params);
		assert.equal(error.code, "EIO", name);
	}
	assert.deepEqual(
		opened,
		Array(4).fill(join(root, `${ID}.txt`)),
		"each reader opened the text through the store's file system, once",
	);
});

test("a failing read of the stored text reaches the overview, the lines answer and jsonPath with its code", async (t) => {
	const { deps } = await createDeps(t, injectFaults({ read: () => "EIO" }));
	for (const { name, params } of readersOf(ID).filter((reader) => reader.name !== "search")) {
		assert.equal((await queryFailure(deps, params)).code, "EIO", name);
	}
});

test("every reader reads the text openText opened, even when the file is replaced right after the open", async (t) => {
	let root = "";
	const fs: StoreFs = {
		...NODE_STORE_FS,
		async openRead(path, flags) {
			const handle = await NODE_STORE_FS.openRead(path, flags);
			// Another file takes the name once the text is open: a reader that opened it again by path would read this.
			const replacement = join(root, "replacement.tmp");
			await writeFile(replacement, TEXT.replace(/original-needle/g, "replaced-text!!"));
			await rename(replacement, path);
			return handle;
		},
	};
	for (const { name, params } of readersOf(ID)) {
		// A fresh store for each reader: the text it opens is the original.
		const created = await createDeps(t, fs);
		root = created.root;
		const answer = await runQuery(params, created.deps);
		assert.match(answer.text, /original-needle/, name);
		assert.doesNotMatch(answer.text, /replaced-text/, name);
	}
});

// An open that blocked on the FIFO would never return: the test's timeout turns that into a failure.
test(
	"a symlink, a FIFO or a directory in place of the text is refused by every reader, without blocking",
	{ timeout: 60_000 },
	async (t) => {
		const { deps, root } = await createDeps(t);
		const textPath = join(root, `${ID}.txt`);
		const outside = join(root, "..", "outside.txt");
		await writeFile(outside, TEXT);
		const replacements: [string, () => Promise<void>][] = [
			["a symlink", () => symlink(outside, textPath)],
			["a FIFO", async () => void execFileSync("mkfifo", [textPath])],
			["a directory", () => mkdir(textPath)],
		];
		for (const [what, replace] of replacements) {
			await rm(textPath, { recursive: true, force: true });
			await replace();
			for (const { name, params } of readersOf(ID)) {
				const error = await queryFailure(deps, params);
				assert.ok(error instanceof QueryError, `${what}, ${name}: ${String(error)}`);
				assert.match(
					error.message,
					new RegExp(`the stored output of id=${ID} is not a regular file; re-run the command`),
					`${what}, ${name}`,
				);
			}
		}
	},
);

test("a text that vanished reads as expired for every reader", async (t) => {
	const { deps, root } = await createDeps(t);
	await rm(join(root, `${ID}.txt`));
	for (const { name, params } of readersOf(ID)) {
		const error = await queryFailure(deps, params);
		assert.ok(error instanceof QueryError, name);
		assert.match(error.message, /no stored output with id=0000000000a1; it is unknown or expired/, name);
	}
});

test(
	"every reader closes what it opened, whether it answered or failed",
	{ skip: !hasProcFd() && "needs /proc/self/fd" },
	async (t) => {
		const { deps } = await createDeps(t);
		const failing = {
			...deps,
			store: new OverflowStore({ root: deps.store.root, fs: injectFaults({ read: () => "EIO" }) }),
		};
		await runQuery({ id: ID, search: "needle" }, deps); // the first search starts a worker (its own descriptors)
		const before = countOpenFds();
		for (let round = 0; round < 20; round++) {
			for (const { params } of readersOf(ID)) {
				await runQuery(params, deps);
				await runQuery(params, failing).catch(() => undefined);
			}
			await runQuery({ id: ID, lines: { start: 1 } }, { ...deps, config: { ...deps.config, thresholdChars: 1000 } });
		}
		assert.equal(countOpenFds(), before);
	},
);

function hasProcFd(): boolean {
	try {
		return readdirSync("/proc/self/fd").length > 0;
	} catch {
		return false;
	}
}

function countOpenFds(): number {
	return readdirSync("/proc/self/fd").length;
}
