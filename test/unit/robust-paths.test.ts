// Permissions and paths: umask 000 and 077; a store directory that is pre-created 0777, owned by
// another user, a symlink, or a file; names in the store that collide with what the store is about
// to create (a temp-file name taken by a file, a symlink or a directory; a directory or symlink
// named <id>.txt or <id>.json); and a spill path (details.fullOutputPath) that is missing, a
// directory, a FIFO, a device, a socket, a symlink, or unreadable. The store never writes through
// a symlink or into another user's directory, never crashes, and the result is always bounded; a
// spill path is never opened in a way that can block (a case that blocked would time out), and the result
// falls back to the stash or the current text and says why in the metadata (sourceNote).

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import {
	chmodSync,
	chownSync,
	lstatSync,
	mkdirSync,
	readdirSync,
	readFileSync,
	readlinkSync,
	symlinkSync,
	utimesSync,
	writeFileSync,
} from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { type TestContext, test } from "node:test";
import {
	type BoundDependencies,
	boundToolResult,
	type ToolResultInput,
	type ToolResultPatch,
} from "../../src/bound/bound.js";
import { createDefaultConfig } from "../../src/config/config.js";
import { createStash, type Stash, stashOriginal } from "../../src/intake/stash.js";
import { runQuery } from "../../src/query/index.js";
import { computeEntryId, type EntryMeta, NODE_STORE_FS, OverflowStore, type StoreFs } from "../../src/store/index.js";
import { numberedLog } from "../fixtures/ext/tools.js";
import { assertChildOk, runChild } from "../helpers/child.js";
import { REPO_ROOT } from "../helpers/paths.js";
import { HELPERS_DIR, listStore } from "../helpers/robust-common.js";
import { createTempDir } from "../helpers/tmp.js";

const SESSION = "robust-paths";
const CALL = "call-paths";
const NOBODY = 65534;
const ORIGINAL = numberedLog(20_000, { 19_990: "error: only in the original" });
/** What Pi's bash shows: the last 30 000 characters, longer than the budget. */
const CURRENT = ORIGINAL.slice(-30_000);
const THRESHOLD = createDefaultConfig().thresholdChars;
const IS_ROOT = process.getuid?.() === 0;
/** Generous: a spill case that blocks never ends; one that does not takes milliseconds. */
const SPILL_CASE_TIMEOUT_MS = 60_000;

function stashWith(text: string | undefined): Stash {
	const stash = createStash();
	if (text !== undefined) stashOriginal(stash, { toolCallId: CALL, toolName: "bash", text });
	return stash;
}

let sessions = 0;

/** Each call is a session of its own: the first result of CALL in it gets computeEntryId(sessionId, CALL). */
function createDeps(root: string, options: { fs?: StoreFs; stash?: Stash } = {}): BoundDependencies {
	const sessionId = `${SESSION}-${++sessions}`;
	return {
		config: createDefaultConfig(),
		store: new OverflowStore({ root, fs: options.fs }),
		sessionId,
		stash: options.stash ?? stashWith(undefined),
	};
}

/** The id of the first result of CALL in the deps' session. */
function firstId(deps: BoundDependencies): string {
	return computeEntryId(deps.sessionId, CALL);
}

function event(details?: unknown, text = CURRENT): ToolResultInput {
	return { toolName: "bash", toolCallId: CALL, content: [{ type: "text", text }], details, isError: false };
}

function textOf(patch: ToolResultPatch | undefined): string {
	assert.ok(patch, "the result was patched");
	const text = patch.content.flatMap((part) => (part.type === "text" ? [part.text] : [])).join("\n");
	assert.ok(text.length <= THRESHOLD, `bounded: ${text.length} characters`);
	return text;
}

function overflowOf(patch: ToolResultPatch | undefined): { id?: string; storeError?: string } {
	return (patch?.details as { overflow: { id?: string; storeError?: string } }).overflow;
}

function modeOf(path: string): number {
	return lstatSync(path).mode & 0o777;
}

/** The result says nothing was stored and why, and shows no id. */
function assertNotStored(patch: ToolResultPatch | undefined, reason: RegExp): void {
	const text = textOf(patch);
	assert.match(text, /full output could not be stored/);
	assert.doesNotMatch(text, /id=[0-9a-f]{12}/);
	assert.match(overflowOf(patch).storeError ?? "", reason);
	assert.match(text, /19990: error: only in the original/, "the view is still built from the best original");
}

async function withUmask<T>(mask: number, run: () => Promise<T>): Promise<T> {
	const previous = process.umask(mask);
	try {
		return await run();
	} finally {
		process.umask(previous);
	}
}

// ---- permissions of what the store creates ----

for (const mask of [0o000, 0o077]) {
	test(`under umask ${mask.toString(8).padStart(3, "0")} the store creates my-pi and its directory 0700 and its files 0600`, async (t) => {
		const agentDir = await createTempDir(t);
		const root = join(agentDir, "my-pi", "pi-overflow");
		const deps = createDeps(root);
		const patch = await withUmask(mask, () => boundToolResult(event(), deps));
		const { id } = overflowOf(patch);
		assert.equal(id, firstId(deps));
		assert.equal(modeOf(join(agentDir, "my-pi")), 0o700);
		assert.equal(modeOf(root), 0o700);
		assert.equal(modeOf(join(root, `${id}.txt`)), 0o600);
		assert.equal(modeOf(join(root, `${id}.json`)), 0o600);
		assert.deepEqual(listStore(root).temps, []);
	});
}

test("a store directory pre-created 0777 is tightened to 0700 before anything is written in it", async (t) => {
	const root = join(await createTempDir(t), "pi-overflow");
	mkdirSync(root);
	chmodSync(root, 0o777);
	const deps = createDeps(root);
	const patch = await boundToolResult(event(), deps);
	assert.equal(overflowOf(patch).id, firstId(deps));
	assert.equal(modeOf(root), 0o700);
});

test(
	"a store directory owned by another user is refused with EPERM: nothing is written in it, its mode is untouched, the result is bounded and says so",
	{ skip: !IS_ROOT && "needs root to chown" },
	async (t) => {
		const root = join(await createTempDir(t), "pi-overflow");
		mkdirSync(root, { mode: 0o755 });
		chmodSync(root, 0o755);
		chownSync(root, NOBODY, NOBODY);
		const patch = await boundToolResult(event(undefined, ORIGINAL), createDeps(root));
		assertNotStored(patch, /EPERM.*another user/);
		assert.deepEqual(readdirSync(root), []);
		assert.equal(modeOf(root), 0o755, "another user's directory is not chmodded");
		assert.equal(lstatSync(root).uid, NOBODY);
	},
);

test(
	"a store directory owned by another user (mode 0777) is neither read nor cleaned: every reader says why",
	{ skip: !IS_ROOT && "needs root to chown" },
	async (t) => {
		const root = join(await createTempDir(t), "pi-overflow");
		const deps = createDeps(root);
		const id = overflowOf(await boundToolResult(event(undefined, ORIGINAL), deps)).id as string;
		assert.equal(id, firstId(deps));
		const half = join(root, "0123456789ab.txt");
		writeFileSync(half, "half an entry\n");
		const past = new Date(Date.now() - 24 * 60 * 60 * 1000);
		utimesSync(half, past, past);
		for (const name of readdirSync(root)) chownSync(join(root, name), NOBODY, NOBODY);
		chownSync(root, NOBODY, NOBODY);
		chmodSync(root, 0o777);
		const before = readdirSync(root).sort();
		const store = new OverflowStore({ root });
		const reason = `store directory ${root} belongs to another user (uid ${NOBODY})`;
		assert.equal(await store.refusal(), reason);
		assert.equal(await store.readMeta(id), undefined);
		await assert.rejects(store.openText(id), { code: "EPERM", message: reason });
		const kept = await store.housekeep({ retentionMs: 1, maxStoreBytes: 1, currentSessionId: "other" });
		assert.deepEqual(kept.errors, [`${reason}; housekeeping skipped`]);
		assert.deepEqual(await store.listEntries(), { entries: [], errors: [`${reason}; listing skipped`] });
		assert.deepEqual(await store.removeEntries([id]), { removed: 0, errors: [`${reason}; nothing removed`] });
		await assert.rejects(runQuery({ id }, { config: deps.config, store }), {
			message: `overflow_query: ${reason}; not read.`,
		});
		assert.deepEqual(readdirSync(root).sort(), before, "nothing removed");
		assert.equal(modeOf(root), 0o777, "another user's directory is not chmodded");
	},
);

test("a symlink in place of the store directory is never followed: nothing lands in its target, the result says why", async (t) => {
	const dir = await createTempDir(t);
	const target = join(dir, "elsewhere");
	mkdirSync(target, { mode: 0o700 });
	const root = join(dir, "pi-overflow");
	symlinkSync(target, root);
	const patch = await boundToolResult(event(undefined, ORIGINAL), createDeps(root));
	assertNotStored(patch, /ELOOP.*symbolic link/);
	assert.deepEqual(readdirSync(target), []);
	assert.equal(readlinkSync(root), target, "the symlink is left as it was");
});

test("a regular file in place of the store directory is refused with ENOTDIR and left intact", async (t) => {
	const root = join(await createTempDir(t), "pi-overflow");
	writeFileSync(root, "not a directory");
	const patch = await boundToolResult(event(undefined, ORIGINAL), createDeps(root));
	assertNotStored(patch, /ENOTDIR/);
	assert.equal(readFileSync(root, "utf8"), "not a directory");
});

// ---- names in the store that collide with what the store creates ----

for (const kind of ["file", "symlink", "directory"] as const) {
	test(`a ${kind} already at the temp-file name the store picks makes the write fail cleanly, never through it, and leaves it alone`, async (t) => {
		const dir = await createTempDir(t);
		const root = join(dir, "pi-overflow");
		const outside = join(dir, "outside.txt");
		writeFileSync(outside, "must stay untouched");
		let planted: string | undefined;
		// The temp name is random: the collision is planted at the exact path, just before the store opens it.
		const fs: StoreFs = {
			...NODE_STORE_FS,
			async open(path, flags, mode) {
				if (planted === undefined) {
					planted = path;
					if (kind === "file") writeFileSync(path, "someone else's");
					else if (kind === "symlink") symlinkSync(outside, path);
					else mkdirSync(path);
				}
				return NODE_STORE_FS.open(path, flags, mode);
			},
		};
		const patch = await boundToolResult(event(undefined, ORIGINAL), createDeps(root, { fs }));
		assertNotStored(patch, /EEXIST/);
		assert.ok(planted);
		assert.match(planted, /\/\.[0-9a-f]{12}\.\d+\.[0-9a-f]+\.tmp$/);
		assert.equal(readFileSync(outside, "utf8"), "must stay untouched");
		const stats = lstatSync(planted);
		assert.ok(
			kind === "file" ? stats.isFile() : kind === "symlink" ? stats.isSymbolicLink() : stats.isDirectory(),
			"the planted entry is left alone",
		);
		assert.deepEqual(listStore(root).complete, []);
		// The next result, with no collision, is stored.
		const next = await boundToolResult(
			{ ...event(undefined, ORIGINAL), toolCallId: "call-next" },
			createDeps(root, { fs }),
		);
		assert.ok(overflowOf(next).id);
	});
}

test("a directory named <id>.txt or <id>.json is left intact with its contents, and the entry takes the next id", async (t) => {
	for (const suffix of ["txt", "json"]) {
		const root = join(await createTempDir(t), "pi-overflow");
		const deps = createDeps(root);
		const taken = firstId(deps);
		mkdirSync(join(root, `${taken}.${suffix}`), { recursive: true });
		writeFileSync(join(root, `${taken}.${suffix}`, "inside"), "keep me");
		chmodSync(root, 0o700);
		const patch = await boundToolResult(event(undefined, ORIGINAL), deps);
		const { id } = overflowOf(patch);
		assert.equal(id, computeEntryId(deps.sessionId, CALL, 1), "an id that names a file is never used");
		assert.equal(readFileSync(join(root, `${id}.txt`), "utf8"), ORIGINAL);
		assert.equal(readFileSync(join(root, `${taken}.${suffix}`, "inside"), "utf8"), "keep me");
		assert.deepEqual(listStore(root).temps, [], `${suffix}: no temp file`);
		const housekeeping = await new OverflowStore({ root }).housekeep({ retentionMs: 1, maxStoreBytes: 0 });
		assert.deepEqual(housekeeping.errors, []);
		assert.equal(
			readFileSync(join(root, `${taken}.${suffix}`, "inside"), "utf8"),
			"keep me",
			"housekeeping never touches a directory",
		);
	}
});

test("symlinks named <id>.txt and <id>.json pointing outside are never written through nor replaced: the entry takes the next id", async (t) => {
	const dir = await createTempDir(t);
	const root = join(dir, "pi-overflow");
	mkdirSync(root, { mode: 0o700 });
	const deps = createDeps(root);
	const taken = firstId(deps);
	const outsideText = join(dir, "outside-text");
	const outsideMeta = join(dir, "outside-meta");
	writeFileSync(outsideText, "outside text");
	writeFileSync(outsideMeta, "outside meta");
	symlinkSync(outsideText, join(root, `${taken}.txt`));
	symlinkSync(outsideMeta, join(root, `${taken}.json`));
	const patch = await boundToolResult(event(undefined, ORIGINAL), deps);
	const { id } = overflowOf(patch);
	assert.equal(id, computeEntryId(deps.sessionId, CALL, 1));
	assert.equal(readFileSync(outsideText, "utf8"), "outside text");
	assert.equal(readFileSync(outsideMeta, "utf8"), "outside meta");
	assert.ok(
		lstatSync(join(root, `${taken}.txt`)).isSymbolicLink() && lstatSync(join(root, `${taken}.json`)).isSymbolicLink(),
	);
	assert.equal(readFileSync(join(root, `${id}.txt`), "utf8"), ORIGINAL);
});

// ---- spill paths that are not a readable regular file ----

interface SpillCase {
	name: string;
	/** Creates the path in `dir` (cleanups registered on `t`); returns it. */
	make(dir: string, t: TestContext): Promise<string> | string;
	note: RegExp;
}

const SPILL_CASES: SpillCase[] = [
	{ name: "missing", make: (dir) => join(dir, "pi-bash-missing.log"), note: /ENOENT/ },
	{
		name: "a directory",
		make: (dir) => {
			mkdirSync(join(dir, "pi-bash-dir.log"));
			return join(dir, "pi-bash-dir.log");
		},
		note: /not a regular file \(a directory\)|EISDIR/,
	},
	{
		name: "a FIFO with no writer",
		make: (dir) => {
			execFileSync("mkfifo", [join(dir, "pi-bash-fifo.log")]);
			return join(dir, "pi-bash-fifo.log");
		},
		note: /FIFO/,
	},
	{ name: "a device (/dev/zero)", make: () => "/dev/zero", note: /device/ },
	{
		name: "a symlink to a regular file",
		make: (dir) => {
			writeFileSync(join(dir, "real.log"), ORIGINAL);
			symlinkSync(join(dir, "real.log"), join(dir, "pi-bash-link.log"));
			return join(dir, "pi-bash-link.log");
		},
		note: /ELOOP/,
	},
	{
		name: "a Unix socket",
		make: async (dir, t) => {
			const path = join(dir, "pi-bash-socket.log");
			const server = createServer();
			await new Promise<void>((resolve) => server.listen(path, resolve));
			t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
			return path;
		},
		note: /ENXIO|socket|not a regular file/,
	},
	{ name: "a relative path", make: () => "pi-bash-relative.log", note: /not absolute/ },
	{
		name: "a path through a file",
		make: (dir) => {
			writeFileSync(join(dir, "plain"), "x");
			return join(dir, "plain", "pi-bash.log");
		},
		note: /ENOTDIR/,
	},
];

for (const spillCase of SPILL_CASES) {
	for (const fallback of ["stash", "current"] as const) {
		// A blocking open (a FIFO without a writer) would never return: the test's timeout turns that into a failure.
		test(
			`a spill path that is ${spillCase.name} never blocks and falls back to the ${fallback} text, saying why in the metadata`,
			{ timeout: SPILL_CASE_TIMEOUT_MS },
			async (t) => {
				const dir = await createTempDir(t);
				const root = join(dir, "store");
				const path = await spillCase.make(dir, t);
				const patch = await boundToolResult(
					event({ fullOutputPath: path }),
					createDeps(root, { stash: stashWith(fallback === "stash" ? ORIGINAL : undefined) }),
				);
				textOf(patch);
				const { id } = overflowOf(patch);
				assert.ok(id, "stored from the fallback");
				const meta = (await new OverflowStore({ root }).readMeta(id)) as EntryMeta;
				assert.equal(meta.source, fallback);
				assert.match(meta.sourceNote ?? "", spillCase.note);
				assert.equal(readFileSync(join(root, `${id}.txt`), "utf8"), fallback === "stash" ? ORIGINAL : CURRENT);
			},
		);
	}
}

/**
 * Runs the unreadable-spill child, which loads its code as root and then drops to uid 65534 itself:
 * the repository may sit in root's private directory (a fresh clone in a 0700 temp dir), where
 * another user could not even load tsx. `unreachable` says why that user cannot use the store's parent.
 */
function runAsNobody(args: string[]): { text: string; meta: EntryMeta; ms: number; uid: number; unreachable?: string } {
	const child = runChild(
		process.execPath,
		["--import", "tsx", join(HELPERS_DIR, "robust-unreadable-child.ts"), String(NOBODY), ...args],
		{ cwd: REPO_ROOT },
	);
	assertChildOk(child, "the unreadable-spill child");
	return JSON.parse(child.stdout.trim().split("\n").at(-1) as string);
}

function canRunAsNobody(): boolean {
	return IS_ROOT && process.platform === "linux";
}

test(
	"an unreadable spill file (mode 000, read by an unprivileged user) falls back to the stash or the current text, saying EACCES",
	{ skip: !canRunAsNobody() && "needs root on Linux to run a child as another user (root reads every file)" },
	async (t) => {
		const dir = await createTempDir(t);
		chmodSync(dir, 0o755);
		const spill = join(dir, "pi-bash-unreadable.log");
		writeFileSync(spill, ORIGINAL);
		chmodSync(spill, 0o000);
		for (const fallback of ["stash", "current"] as const) {
			const storeParent = join(dir, `store-${fallback}`);
			mkdirSync(storeParent);
			chownSync(storeParent, NOBODY, NOBODY);
			const result = runAsNobody([join(storeParent, "pi-overflow"), spill, fallback]);
			if (result.unreachable !== undefined) {
				t.skip(`the temporary directory is not reachable by another user (${result.unreachable})`);
				return;
			}
			assert.equal(result.uid, NOBODY);
			assert.ok(result.text.length <= THRESHOLD);
			assert.equal(result.meta.source, fallback);
			assert.match(result.meta.sourceNote ?? "", /EACCES/);
		}
	},
);
