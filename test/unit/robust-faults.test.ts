// Full disk and I/O faults: ENOSPC, EACCES and EIO injected at every step of storing an entry
// (mkdir, lstat, chmod, open, fchmod, write — first, middle, partial —, fsync, close, unlink,
// rename; for the text and for the metadata file), through boundToolResult and through the
// extension's tool_result handler. Each time the model still gets a bounded result that says the
// output could not be kept and why, no partial or temp file is left, and the next result is
// stored. Housekeeping with failing readdir/unlink/lstat/reads never throws. One test fills a
// real 4 MB tmpfs when this machine allows mounting one.

import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import {
	type BoundDependencies,
	boundToolResult,
	type ToolResultInput,
	type ToolResultPatch,
} from "../../src/bound/bound.js";
import { createDefaultConfig, type OverflowConfig } from "../../src/config/config.js";
import { createStash, ensureStash, type Stash, stashOriginal } from "../../src/intake/stash.js";
import { computeEntryId, NODE_STORE_FS, OverflowStore, type StoreFs } from "../../src/store/index.js";
import { numberedLog } from "../fixtures/ext/tools.js";
import { buildEntryMeta, listStore } from "../helpers/robust-common.js";
import { createFaultyFs, ENTRY_FAULT_STEPS, FAULT_CODES, type FaultStep } from "../helpers/faulty-fs.js";
import { driveExtension } from "../helpers/robust-pi.js";
import { createTempDir } from "../helpers/tmp.js";

const SESSION = "robust-faults";
const NOW = Date.parse("2026-11-29T12:00:00Z");
const DAY_MS = 24 * 60 * 60 * 1000;
const DECISIVE = "error: the decisive line near the end";
/** ~1.6 MB: two 1 MiB chunks, so a fault in the middle of an entry lands mid-entry. */
const BIG_OUTPUT = numberedLog(24000, { 23990: DECISIVE });

type Scenario = "replace" | "spill" | "cut";
const SCENARIOS: readonly Scenario[] = ["replace", "spill", "cut"];

function textOf(patch: ToolResultPatch | undefined): string {
	assert.ok(patch, "the result was patched");
	return patch.content.flatMap((part) => (part.type === "text" ? [part.text] : [])).join("\n");
}

function overflowOf(patch: ToolResultPatch | undefined): {
	id?: string;
	storeError?: string;
	totalBytes: number;
	totalLines: number;
} {
	const details = patch?.details as
		{ overflow?: { id?: string; storeError?: string; totalBytes: number; totalLines: number } } | undefined;
	assert.ok(details?.overflow, "details.overflow is set");
	return details.overflow;
}

interface ScenarioInput {
	event: ToolResultInput;
	/** What must end up stored when the store works. */
	original: Buffer;
	stash: Stash;
}

/** The three ways a large result reaches stage 2: too long itself, cut by Pi's bash with a spill file, cut by an earlier layer. */
function buildScenario(scenario: Scenario, dir: string, toolCallId: string, config: OverflowConfig): ScenarioInput {
	const stash = createStash();
	const original = Buffer.from(BIG_OUTPUT);
	if (scenario === "replace") {
		return {
			event: { toolName: "bash", toolCallId, content: [{ type: "text", text: BIG_OUTPUT }], isError: false },
			original,
			stash,
		};
	}
	if (scenario === "spill") {
		const spill = join(dir, `${toolCallId}.log`);
		writeFileSync(spill, original);
		const event: ToolResultInput = {
			toolName: "bash",
			toolCallId,
			// Pi's bash keeps the last 50 KB: longer than the budget, so the view replaces it.
			content: [{ type: "text", text: BIG_OUTPUT.slice(-50_000) }],
			details: { fullOutputPath: spill, truncation: { truncated: true } },
			isError: false,
		};
		return { event, original, stash };
	}
	stashOriginal(stash, { toolCallId, toolName: "web_fetch", text: BIG_OUTPUT });
	return {
		event: { toolName: "web_fetch", toolCallId, content: [{ type: "text", text: cutTextFor(config) }], isError: false },
		original,
		stash,
	};
}

/** What an earlier layer kept: short enough that the text plus one marker line still fits. */
function cutTextFor(config: OverflowConfig): string {
	return BIG_OUTPUT.slice(0, Math.min(8_000, config.thresholdChars / 2));
}

function createDeps(root: string, fs: StoreFs, stash: Stash, config: OverflowConfig): BoundDependencies {
	return { config, store: new OverflowStore({ root, fs, now: () => NOW }), sessionId: SESSION, stash, now: () => NOW };
}

/** The model is told, within the budget, that nothing was kept and why; no id is shown. */
function assertSaysNotStored(
	patch: ToolResultPatch | undefined,
	scenario: Scenario,
	code: string,
	config: OverflowConfig,
	cutText: string,
): void {
	const text = textOf(patch);
	assert.ok(text.length <= config.thresholdChars, `bounded: ${text.length} > ${config.thresholdChars}`);
	assert.doesNotMatch(text, /id=[0-9a-f]{12}/, "no id that would not resolve");
	assert.equal(overflowOf(patch).id, undefined);
	assert.match(overflowOf(patch).storeError ?? "", new RegExp(code), "details say why");
	if (scenario === "cut") {
		assert.ok(text.startsWith(cutText), "the earlier layer's text is kept");
		// The marker right under the kept text, then what the cut left out (numbered), within the budget.
		const below = text.slice(cutText.length + 1).split("\n");
		assert.match(
			below[0],
			new RegExp(`^\\[pi-overflow\\] an earlier layer cut this output .*could not be stored.*${code}`),
		);
		assert.ok(
			below.slice(1).every((line) => /^\[what the cut left out|^\s*\d+: /.test(line)),
			below.slice(1).join("\n").slice(0, 300),
		);
		if (config.thresholdChars >= 2000) assert.match(text, /\n 24000: /, "the output's last line, which the cut lost");
	} else {
		assert.match(text, new RegExp(`full output could not be stored \\(${code}`));
		assert.ok(
			text.includes(`23990: ${DECISIVE}`) || config.thresholdChars < 2000,
			"the view is still built from the whole original",
		);
		assert.match(text, /24000: /, "the last line is visible");
	}
}

function assertNothingLeft(root: string): void {
	const listing = listStore(root);
	assert.deepEqual(
		listing,
		{ complete: [], textOnly: [], metaOnly: [], temps: [], other: [] },
		"no partial, unpaired or temp file",
	);
}

function assertStored(root: string, patch: ToolResultPatch | undefined, original: Buffer): void {
	const { id } = overflowOf(patch);
	assert.ok(id, "the next result is stored");
	assert.ok(readFileSync(join(root, `${id}.txt`)).equals(original), "stored byte for byte");
	const listing = listStore(root);
	assert.deepEqual(listing.complete, [id]);
	assert.deepEqual([listing.textOnly, listing.metaOnly, listing.temps], [[], [], []]);
}

let caseIndex = 0;
for (const step of ENTRY_FAULT_STEPS) {
	for (const code of FAULT_CODES) {
		// Alternate the smallest allowed budget with the default, so the failure note must fit a tight view too.
		const thresholdChars = caseIndex++ % 3 === 2 ? 1_000 : 24_000;
		test(`${code} on ${step} (thresholdChars ${thresholdChars}): bounded, says the output could not be kept, leaves nothing, and the next result is stored`, async (t) => {
			const dir = await createTempDir(t);
			const config = { ...createDefaultConfig(), thresholdChars };
			for (const scenario of SCENARIOS) {
				const root = join(dir, scenario, "my-pi", "pi-overflow");
				mkdirSync(join(dir, scenario));
				const fs = createFaultyFs(step, code);
				const failing = buildScenario(scenario, join(dir, scenario), "call-failing", config);
				const patch = await boundToolResult(failing.event, createDeps(root, fs, failing.stash, config));
				assert.ok(fs.fired > 0, `${scenario}: the fault fired`);
				assertSaysNotStored(patch, scenario, code, config, cutTextFor(config));
				assertNothingLeft(root);

				fs.disarm();
				const next = buildScenario(scenario, join(dir, scenario), "call-next", config);
				const stored = await boundToolResult(next.event, createDeps(root, fs, next.stash, config));
				assert.ok(textOf(stored).length <= thresholdChars);
				assertStored(root, stored, next.original);
			}
		});
	}
}

for (const [index, step] of ENTRY_FAULT_STEPS.entries()) {
	const code = FAULT_CODES[index % FAULT_CODES.length];
	test(`through the extension's tool_result handler, ${code} on ${step} gives a bounded result that says why, and the next result is stored`, async (t) => {
		const dir = await createTempDir(t);
		const root = join(dir, "agent", "my-pi", "pi-overflow");
		const fs = createFaultyFs(step, code);
		const config = createDefaultConfig();
		const extension = driveExtension(
			{ config: { config, problems: [] }, storeRoot: root, storeFs: fs, now: () => NOW },
			SESSION,
		);
		const stash = ensureStash();
		const emit = async (toolCallId: string) => {
			stashOriginal(stash, { toolCallId, toolName: "bash", text: BIG_OUTPUT });
			return extension.emitToolResult({
				toolName: "bash",
				toolCallId,
				content: [{ type: "text", text: BIG_OUTPUT }],
				isError: false,
			});
		};
		const patch = await emit(`ext-${step}-${code}-failing`);
		assertSaysNotStored(patch, "replace", code, config, "");
		assertNothingLeft(root);
		fs.disarm();
		const next = await emit(`ext-${step}-${code}-next`);
		assertStored(root, next, Buffer.from(BIG_OUTPUT));
		assert.deepEqual(extension.fake.notices, [], "no warning: capture's stash was there");
	});
}

test("a disk that fails every write of an entry and also every cleanup unlink leaves no temp file once it recovers: the next housekeeping removes it", async (t) => {
	const dir = await createTempDir(t);
	const root = join(dir, "store");
	const writeFails = createFaultyFs("write-middle", "ENOSPC");
	const unlinkFails = createFaultyFs("unlink", "EIO", writeFails);
	const deps = createDeps(root, unlinkFails, createStash(), createDefaultConfig());
	const patch = await boundToolResult(
		{ toolName: "bash", toolCallId: "call-1", content: [{ type: "text", text: BIG_OUTPUT }] },
		deps,
	);
	assert.match(textOf(patch), /could not be stored \(ENOSPC/);
	const leftover = listStore(root).temps;
	assert.equal(leftover.length, 1, "the temp file could not be removed while unlink failed");
	writeFails.disarm();
	unlinkFails.disarm();
	// Same process, same pid, seconds later: the temp file belongs to no writer any more.
	const store = new OverflowStore({ root, now: () => Date.now() });
	const result = await store.housekeep({ retentionMs: 7 * DAY_MS, maxStoreBytes: 1e9 });
	assert.deepEqual(result.errors, []);
	assert.equal(result.removedTemp, 1, "this process's abandoned temp file is stale at once");
	assertNothingLeft(root);
});

/** A store with something for every housekeeping rule: expired, over quota, a dead writer's temp file, an old orphan, a fresh entry. */
function seedStore(root: string): { expired: string[]; fresh: string[] } {
	mkdirSync(root, { recursive: true, mode: 0o700 });
	const write = (id: string, content: Buffer, createdMs: number, sessionId = "other") => {
		writeFileSync(join(root, `${id}.txt`), content, { mode: 0o600 });
		writeFileSync(join(root, `${id}.json`), JSON.stringify(buildEntryMeta(id, content, sessionId, id, createdMs)), {
			mode: 0o600,
		});
	};
	const expired: string[] = [];
	for (let i = 0; i < 5; i++) {
		const id = computeEntryId("old", `call-${i}`);
		write(id, Buffer.from(`expired ${i}\n`), NOW - 30 * DAY_MS);
		expired.push(id);
	}
	const fresh: string[] = [];
	for (let i = 0; i < 5; i++) {
		const id = computeEntryId("other", `call-${i}`);
		write(id, Buffer.alloc(100_000, 0x61), NOW - (10 - i) * 60_000);
		fresh.push(id);
	}
	const deadPid = spawnSync(process.execPath, ["-e", ""]).pid;
	writeFileSync(join(root, `.${"a".repeat(12)}.${deadPid}.abcdef.tmp`), "partial");
	const orphan = join(root, `${"b".repeat(12)}.txt`);
	writeFileSync(orphan, "orphan\n");
	utimesSync(orphan, new Date(NOW - DAY_MS), new Date(NOW - DAY_MS));
	return { expired, fresh };
}

for (const step of ["readdir", "unlink", "lstat", "read-meta-files"] as const satisfies readonly FaultStep[]) {
	for (const code of FAULT_CODES) {
		test(`housekeeping with ${code} on every ${step} never throws, reports the problem, and cleans up once the fault is gone`, async (t) => {
			const root = join(await createTempDir(t), "store");
			const seeded = seedStore(root);
			const fs = createFaultyFs(step, code);
			const store = new OverflowStore({ root, fs, now: () => NOW });
			const options = { retentionMs: 7 * DAY_MS, maxStoreBytes: 350_000, currentSessionId: "mine" };
			const failed = await store.housekeep(options);
			assert.ok(failed.errors.length > 0, "the fault is reported");
			for (const error of failed.errors)
				assert.ok(error.length < 1000 && !error.includes("\n    at "), `short, no stack: ${error}`);
			// Through session_start too: the handler returns at once and the background pass never rejects.
			const extension = driveExtension(
				{ config: { config: createDefaultConfig(), problems: [] }, storeRoot: root, storeFs: fs, now: () => NOW },
				"mine",
			);
			const viaSession = await extension.startSession();
			assert.ok(viaSession.errors.length > 0);

			fs.disarm();
			const recovered = await store.housekeep(options);
			assert.deepEqual(recovered.errors, []);
			const listing = listStore(root);
			assert.deepEqual([listing.temps, listing.textOnly, listing.metaOnly], [[], [], []], "temp file and orphan gone");
			const bytes = listing.complete.reduce(
				(sum, id) => sum + readFileSync(join(root, `${id}.txt`)).length + readFileSync(join(root, `${id}.json`)).length,
				0,
			);
			assert.ok(bytes <= options.maxStoreBytes, "within quota");
			assert.ok(
				listing.complete.every((id) => !seeded.expired.includes(id)),
				"expired entries gone",
			);
			assert.deepEqual(
				listing.complete,
				seeded.fresh.slice(2).sort(),
				"the two oldest fresh entries evicted for quota, the newest kept",
			);
		});
	}
}

test("housekeeping with a file system whose calls throw synchronously never throws", async (t) => {
	const root = join(await createTempDir(t), "store");
	seedStore(root);
	const explode = () => {
		throw Object.assign(new Error("EIO: synchronous failure"), { code: "EIO" });
	};
	for (const method of ["readdir", "lstat", "unlink", "readSmallTextFiles"] as const) {
		const fs: StoreFs = { ...NODE_STORE_FS, [method]: explode };
		const result = await new OverflowStore({ root, fs, now: () => NOW }).housekeep({
			retentionMs: 7 * DAY_MS,
			maxStoreBytes: 350_000,
		});
		assert.ok(result.errors.length > 0, `${method}: reported`);
	}
});

/** Mounts a tmpfs of `sizeBytes` at `dir`; false when this machine does not allow it (not root, no CAP_SYS_ADMIN). */
function tryMountTmpfs(dir: string, sizeBytes: number): boolean {
	if (process.platform !== "linux" || process.getuid?.() !== 0) return false;
	const mounted = spawnSync("mount", ["-t", "tmpfs", "-o", `size=${sizeBytes},mode=0755`, "tmpfs", dir], {
		stdio: "ignore",
	});
	return mounted.status === 0;
}

test("a really full disk (a 4 MB tmpfs): a 10 MB output is bounded, says ENOSPC, leaves nothing, and a smaller next output is stored", async (t) => {
	const dir = await createTempDir(t);
	const mountPoint = join(dir, "small-disk");
	mkdirSync(mountPoint);
	if (!tryMountTmpfs(mountPoint, 4 * 1024 * 1024)) {
		t.skip("mounting a tmpfs is not allowed here");
		return;
	}
	// Unmounted here rather than in t.after: the temp directory's removal was registered first.
	try {
		const root = join(mountPoint, "agent", "my-pi", "pi-overflow");
		const config = createDefaultConfig();
		const huge = numberedLog(150_000, { 149_990: DECISIVE });
		const deps = createDeps(root, NODE_STORE_FS, createStash(), config);
		const patch = await boundToolResult(
			{ toolName: "bash", toolCallId: "call-huge", content: [{ type: "text", text: huge }] },
			deps,
		);
		const text = textOf(patch);
		assert.ok(text.length <= config.thresholdChars);
		assert.match(text, /full output could not be stored \(ENOSPC/);
		assert.match(text, new RegExp(`149990: ${DECISIVE}`));
		assertNothingLeft(root);
		assert.deepEqual(readdirSync(root), [], "the disk holds nothing of the failed entry");

		const patchNext = await boundToolResult(
			{ toolName: "bash", toolCallId: "call-next", content: [{ type: "text", text: BIG_OUTPUT }] },
			deps,
		);
		assertStored(root, patchNext, Buffer.from(BIG_OUTPUT));
	} finally {
		execFileSync("umount", [mountPoint]);
	}
});
