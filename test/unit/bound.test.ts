import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { boundToolResult, type BoundDependencies, decideBound, type ToolResultInput } from "../../src/bound/bound.js";
import { createDefaultConfig, type OverflowConfig } from "../../src/config/config.js";
import { createStash, type Stash, stashOriginal } from "../../src/intake/stash.js";
import { OverflowStore, type StoreFs } from "../../src/store/index.js";
import { buildEntryView } from "../../src/view/compose.js";
import { numberedLog } from "../fixtures/ext/tools.js";
import { type InjectedFs, injectFaults } from "../helpers/faulty-fs.js";
import { createTempDir } from "../helpers/tmp.js";

const SESSION = "session-1";

function textEvent(text: string, overrides: Partial<ToolResultInput> = {}): ToolResultInput {
	return {
		toolName: "bash",
		toolCallId: "call-1",
		content: [{ type: "text", text }],
		details: undefined,
		isError: false,
		...overrides,
	};
}

async function deps(
	t: Parameters<typeof createTempDir>[0],
	options: { fs?: StoreFs; config?: Partial<OverflowConfig>; stash?: Stash } = {},
): Promise<BoundDependencies & { root: string }> {
	const root = join(await createTempDir(t), "my-pi", "pi-overflow");
	const config = { ...createDefaultConfig(), ...options.config };
	return {
		root,
		config,
		store: new OverflowStore({ root, fs: options.fs }),
		sessionId: SESSION,
		stash: options.stash ?? createStash(),
		now: () => Date.parse("2026-11-29T12:00:00Z"),
	};
}

/** A file system that fails the named operation with the given code while `armed` is true. */
function faultyFs(operation: "write" | "sync" | "link" | "open" | "mkdir" | "readdir", code: string): InjectedFs {
	return injectFaults({ [operation]: () => code, label: operation });
}

function textOf(patch: { content: Array<{ type: string; text?: string }> } | undefined): string {
	assert.ok(patch, "the result was patched");
	return patch.content
		.filter((part) => part.type === "text")
		.map((part) => part.text)
		.join("\n");
}

test("a small result costs nothing: no patch and no file-system call", async (t) => {
	const fs = faultyFs("open", "EIO");
	const d = await deps(t, { fs });
	assert.equal(await boundToolResult(textEvent("x".repeat(1000)), d), undefined);
	assert.equal(fs.calls, 0);
	assert.equal(existsSync(d.root), false);
});

test("exempt tools and nested calls are left untouched and nothing is stored", async (t) => {
	const d = await deps(t);
	const big = numberedLog(10000, {});
	assert.equal(await boundToolResult(textEvent(big, { toolName: "read" }), d), undefined);
	assert.equal(await boundToolResult(textEvent(big, { toolName: "overflow_query" }), d), undefined);
	assert.equal(await boundToolResult(textEvent(big, { parentToolCallId: "outer-call" }), d), undefined);
	assert.equal(existsSync(d.root), false);
});

test("a long result is replaced by a bounded view; details are merged and other parts kept in order", async (t) => {
	const d = await deps(t);
	const big = numberedLog(10000, { 5000: "ERROR: disk quota exceeded" });
	const event = textEvent(big, {
		content: [
			{ type: "image", data: "AAAA", mimeType: "image/png" },
			{ type: "text", text: big },
			{ type: "image", data: "BBBB", mimeType: "image/png" },
		],
		details: { exitCode: 0, nested: { a: 1 } },
		isError: true,
	});
	const patch = await boundToolResult(event, d);
	assert.ok(patch);
	assert.deepEqual(
		patch.content.map((part) => part.type),
		["image", "text", "image"],
	);
	assert.equal((patch.content[2] as { data: string }).data, "BBBB");
	const view = textOf(patch);
	assert.ok(view.length <= d.config.thresholdChars);
	assert.match(view, /\n  5000: ERROR: disk quota exceeded\n/);
	const details = patch.details as {
		exitCode: number;
		nested: unknown;
		overflow: { id: string; totalLines: number; totalBytes: number; truncated: boolean; top?: unknown };
	};
	assert.equal(details.exitCode, 0);
	assert.deepEqual(details.nested, { a: 1 });
	assert.deepEqual(details.overflow, {
		id: details.overflow.id,
		totalLines: 10000,
		totalBytes: Buffer.byteLength(big),
		truncated: false,
		top: [{ line: 5000, text: "ERROR: disk quota exceeded" }],
	});
	assert.equal("isError" in patch, false, "isError is left as it was");
	assert.equal(readFileSync(join(d.root, `${details.overflow.id}.txt`), "utf8"), big);
});

test("the same input gives the same view twice, under a new id for the second result of a reused toolCallId", async (t) => {
	const d = await deps(t);
	const big = numberedLog(30000, { 100: "panic: boom", 20000: "error: again" });
	const first = await boundToolResult(textEvent(big), d);
	const second = await boundToolResult(textEvent(big), d);
	const firstId = (first?.details as { overflow: { id: string } }).overflow.id;
	const secondId = (second?.details as { overflow: { id: string } }).overflow.id;
	assert.notEqual(firstId, secondId);
	assert.equal(textOf(first).replaceAll(firstId, "ID"), textOf(second).replaceAll(secondId, "ID"));
});

test("a non-object details value is kept as it is", async (t) => {
	const d = await deps(t);
	const patch = await boundToolResult(textEvent(numberedLog(10000, {}), { details: "opaque" }), d);
	assert.equal(patch?.details, "opaque");
});

test("a result that still fits but whose stashed original was longer gets the marker line", async (t) => {
	const stash = createStash();
	const original = numberedLog(10000, {});
	stashOriginal(stash, { toolCallId: "call-1", toolName: "web", text: original });
	const d = await deps(t, { stash });
	const patch = await boundToolResult(textEvent(original.slice(0, 5000), { toolName: "web" }), d);
	const text = textOf(patch);
	assert.ok(text.startsWith(original.slice(0, 5000)));
	assert.match(
		text,
		/\n\[pi-overflow id=[0-9a-f]{12} lines=10000 bytes=\d+\] full output stored; overflow_query can search or read it\n/,
	);
	// Below the marker, what the cut lost: here the original's last line.
	assert.match(text, /\n\[what the cut left out, with the output's line numbers:\]\n 10000: .*processed batch 10000/);
	assert.equal(stash.entries.size, 0, "the stashed original was taken");
});

test("a result that fits only without the marker line is replaced by the view", async (t) => {
	const stash = createStash();
	const original = numberedLog(10000, {});
	stashOriginal(stash, { toolCallId: "call-1", toolName: "web", text: original });
	const d = await deps(t, { stash });
	const cut = original.slice(0, d.config.thresholdChars - 10);
	const text = textOf(await boundToolResult(textEvent(cut, { toolName: "web" }), d));
	assert.ok(text.length <= d.config.thresholdChars);
	assert.match(text, /^\[pi-overflow id=[0-9a-f]{12}\] web output: 10000 lines/);
});

for (const [operation, code] of [
	["write", "ENOSPC"],
	["sync", "EIO"],
	["link", "EACCES"],
	["open", "EACCES"],
	["mkdir", "EACCES"],
] as const) {
	test(`${code} on ${operation}: the result is still bounded, says why nothing was stored, leaves no file, and the next result is stored`, async (t) => {
		const fs = faultyFs(operation, code);
		const d = await deps(t, { fs });
		const big = numberedLog(20000, { 15000: "ERROR: the one line that matters" });
		const patch = await boundToolResult(textEvent(big), d);
		const view = textOf(patch);
		assert.ok(view.length <= d.config.thresholdChars);
		assert.match(view, new RegExp(`full output could not be stored \\(${code}`));
		assert.doesNotMatch(view, /id=[0-9a-f]{12}/);
		assert.match(view, /15000: ERROR: the one line that matters/);
		assert.match((patch?.details as { overflow: { storeError: string } }).overflow.storeError, new RegExp(code));
		if (existsSync(d.root)) assert.deepEqual(readdirSync(d.root), [], "no partial or temp file");
		fs.armed = false;
		const next = await boundToolResult(textEvent(big, { toolCallId: "call-2" }), d);
		const id = (next?.details as { overflow: { id: string } }).overflow.id;
		assert.equal(readFileSync(join(d.root, `${id}.txt`), "utf8"), big);
	});
}

test("when an earlier layer cut the result and the store fails, the text is kept and the line under it says the full output could not be stored", async (t) => {
	const stash = createStash();
	const original = numberedLog(10000, {});
	stashOriginal(stash, { toolCallId: "call-1", toolName: "web", text: original });
	const d = await deps(t, { stash, fs: faultyFs("write", "ENOSPC") });
	const text = textOf(await boundToolResult(textEvent(original.slice(0, 5000), { toolName: "web" }), d));
	assert.ok(text.startsWith(original.slice(0, 5000)));
	const marker = text.slice(5001).split("\n")[0];
	assert.match(marker, /^\[pi-overflow\] an earlier layer cut this output .* could not be stored: ENOSPC/);
});

test("a spill file larger than maxEntryBytes is stored as head + marker + tail within the cap", async (t) => {
	const d = await deps(t, { config: { maxEntryBytes: 1024 * 1024 } });
	const spill = join(await createTempDir(t), "spill.log");
	const full = numberedLog(100000, { 3: "ERROR at the start", 99999: "FATAL at the end" });
	writeFileSync(spill, full);
	const patch = await boundToolResult(textEvent(full.slice(-50000), { details: { fullOutputPath: spill } }), d);
	const overflow = (
		patch?.details as { overflow: { id: string; truncated: boolean; totalBytes: number; totalLines: number } }
	).overflow;
	assert.equal(overflow.truncated, true);
	const stored = readFileSync(join(d.root, `${overflow.id}.txt`), "utf8");
	assert.ok(Buffer.byteLength(stored) <= 1024 * 1024);
	assert.equal(overflow.totalBytes, Buffer.byteLength(full), "the output's own total, not the stored copy's");
	assert.equal(overflow.totalLines, 100000);
	assert.ok(stored.startsWith(full.slice(0, 1000)));
	assert.ok(stored.endsWith(full.slice(-1000)));
	assert.equal(stored.match(/^\[pi-overflow: lines \d+-\d+ \(\d+ bytes\) left out of the stored copy/gm)?.length, 1);
	const view = textOf(patch);
	assert.match(view, /the stored copy leaves out lines \d+–\d+/);
	assert.match(view, / 99999: FATAL at the end/, "true line numbers in the tail");
	const meta = JSON.parse(readFileSync(join(d.root, `${overflow.id}.json`), "utf8"));
	assert.equal(meta.truncated, true);
	assert.equal(meta.totalBytes, Buffer.byteLength(full));
	assert.equal(meta.storedBytes, Buffer.byteLength(stored));
});

// An open that blocked on the FIFO would never return: the test's timeout turns that into a failure.
test(
	"a spill path that is a FIFO is never opened for reading: the stashed original is used and the reason recorded",
	{ timeout: 60_000 },
	async (t) => {
		const stash = createStash();
		const original = numberedLog(10000, {});
		stashOriginal(stash, { toolCallId: "call-1", toolName: "bash", text: original });
		const d = await deps(t, { stash });
		const fifo = join(await createTempDir(t), "fifo");
		execFileSync("mkfifo", [fifo]);
		const patch = await boundToolResult(textEvent(original.slice(-30000), { details: { fullOutputPath: fifo } }), d);
		const id = (patch?.details as { overflow: { id: string } }).overflow.id;
		const meta = JSON.parse(readFileSync(join(d.root, `${id}.json`), "utf8"));
		assert.equal(meta.source, "stash");
		assert.match(meta.sourceNote, /FIFO/);
	},
);

test("a failed bash result that merely prints Pi's notice cannot make pi-overflow store another command's spill file", async (t) => {
	const d = await deps(t);
	const foreign = join(tmpdir(), `pi-bash-${"ab".repeat(8)}.log`);
	writeFileSync(foreign, "secret output of another command\n".repeat(20000));
	t.after(() => execFileSync("rm", ["-f", foreign]));
	const text = `${numberedLog(2000, {})}\n\n[Showing lines 1-2000 of 90000. Full output: ${foreign}]\n\nCommand exited with code 1`;
	const patch = await boundToolResult(textEvent(text, { isError: true }), d);
	const id = (patch?.details as { overflow: { id: string } }).overflow.id;
	assert.doesNotMatch(readFileSync(join(d.root, `${id}.txt`), "utf8"), /secret output/);
	const meta = JSON.parse(readFileSync(join(d.root, `${id}.json`), "utf8"));
	assert.equal(meta.source, "current");
	assert.match(meta.sourceNote, /does not end with the output the tool showed/);
});

test("a failed bash result bounded from its spill file still tells the model the exit status", async (t) => {
	const d = await deps(t);
	const spill = join(await createTempDir(t), "spill.log");
	const full = numberedLog(50000, { 25000: "error: the build broke here" });
	writeFileSync(spill, full);
	const current = `${full.slice(-30000)}\n\nCommand exited with code 2`;
	const view = textOf(
		await boundToolResult(textEvent(current, { isError: true, details: { fullOutputPath: spill } }), d),
	);
	assert.ok(view.length <= d.config.thresholdChars);
	const lines = view.split("\n");
	assert.equal(lines.at(-2), "[bash: Command exited with code 2]");
	assert.match(lines.at(-1) ?? "", /^\[use overflow_query with id=/);
	assert.match(view, /25000: error: the build broke here/);
});

test("the view built again from the stored copy is the view the model was sent, notes and verdict included", async (t) => {
	const d = await deps(t, { config: { maxEntryBytes: 1024 * 1024 } });
	// A spill file whose stored copy leaves out the middle, under Pi's verdict on the command.
	const spill = join(await createTempDir(t), "spill.log");
	const full = numberedLog(100000, {
		3: "ERROR at the start",
		50000: "error: the middle broke",
		99999: "FATAL at the end",
	});
	writeFileSync(spill, full);
	const capped = textEvent(`${full.slice(-50000)}\n\nCommand exited with code 2`, {
		isError: true,
		details: { fullOutputPath: spill },
	});
	// A notice naming a file that is not this command's output: the view says why it was not used.
	const foreign = join(tmpdir(), `pi-bash-${"cd".repeat(8)}.log`);
	writeFileSync(foreign, "another command's output\n".repeat(20000));
	t.after(() => execFileSync("rm", ["-f", foreign]));
	const noted = textEvent(
		`${numberedLog(2000, {})}\n\n[Showing lines 1-2000 of 90000. Full output: ${foreign}]\n\nCommand exited with code 1`,
		{ isError: true, toolCallId: "call-2" },
	);
	for (const event of [capped, noted]) {
		const patch = await boundToolResult(event, d);
		const id = (patch?.details as { overflow: { id: string } }).overflow.id;
		const meta = await d.store.readMeta(id);
		assert.ok(meta);
		const stored = await d.store.openText(id);
		try {
			assert.equal(await buildEntryView(meta, stored, d.config, d.config.thresholdChars), textOf(patch));
		} finally {
			await stored.close();
		}
	}
});

test("decideBound: a text over its budget is bounded; one that fits is left, or marked when a longer original exists and the marker fits", () => {
	assert.equal(decideBound({ currentChars: 101, budgetChars: 100, longer: false }), "bound");
	assert.equal(decideBound({ currentChars: 100, budgetChars: 100, longer: false }), "leave");
	assert.equal(decideBound({ currentChars: 100, budgetChars: 100, longer: false, markerChars: 10 }), "leave");
	assert.equal(decideBound({ currentChars: 50, budgetChars: 100, longer: true }), "mark");
	assert.equal(decideBound({ currentChars: 50, budgetChars: 100, longer: true, markerChars: 49 }), "mark");
	assert.equal(decideBound({ currentChars: 50, budgetChars: 100, longer: true, markerChars: 50 }), "bound");
});
