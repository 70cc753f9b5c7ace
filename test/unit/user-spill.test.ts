// Pi's spill files of the user's `!`/`!!` commands: makeSpillFilePrivate (0600 in place, only Pi's
// own regular file of this user, no symlink followed, no FIFO opened) and UserSpillGuard (finds a
// command's message in the session once it ends, and again when the session closes).

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { chmodSync, lstatSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type TestContext, test } from "node:test";
import { type SessionEntries, UserSpillGuard } from "../../src/context/user-bash.js";
import { makeSpillFilePrivate, type SpillPrivacy } from "../../src/intake/spill-release.js";
import { createTempDir } from "../helpers/tmp.js";

/** A fresh directory as the OS temp directory for this test (Pi's spill files live there). */
async function useTempDir(t: TestContext): Promise<string> {
	const dir = await createTempDir(t);
	const previous = process.env.TMPDIR;
	process.env.TMPDIR = dir;
	t.after(() => {
		if (previous === undefined) delete process.env.TMPDIR;
		else process.env.TMPDIR = previous;
	});
	return dir;
}

function modeOf(path: string): number {
	return lstatSync(path).mode & 0o777;
}

test("makeSpillFilePrivate makes Pi's own spill file 0600 where it is, and nothing else", async (t) => {
	const dir = await useTempDir(t);
	const spill = join(dir, "pi-bash-0123456789abcdef.log");
	writeFileSync(spill, "one\ntwo\n");
	chmodSync(spill, 0o644);
	assert.equal(await makeSpillFilePrivate(spill), "private");
	assert.equal(modeOf(spill), 0o600);
	assert.equal(await makeSpillFilePrivate(spill), "private", "already private");

	assert.equal(await makeSpillFilePrivate(join(dir, "pi-bash-00ff.log")), "missing");

	const other = join(dir, "notes.log");
	writeFileSync(other, "x");
	chmodSync(other, 0o644);
	assert.equal(await makeSpillFilePrivate(other), "refused", "not named as Pi names its files");
	assert.equal(modeOf(other), 0o644);

	const link = join(dir, "pi-bash-aaaa.log");
	symlinkSync(other, link);
	assert.equal(await makeSpillFilePrivate(link), "refused", "a symlink is not followed");
	assert.equal(modeOf(other), 0o644);

	const fifo = join(dir, "pi-bash-bbbb.log");
	execFileSync("mkfifo", [fifo]);
	assert.equal(await makeSpillFilePrivate(fifo), "refused", "a FIFO is refused without blocking");

	assert.equal(await makeSpillFilePrivate(spill, 12345 === process.getuid?.() ? 54321 : 12345), "refused");
});

/** A session of message entries, newest last, read as Pi's ReadonlySessionManager is. */
function fakeSession(): SessionEntries & { add(message: Record<string, unknown>): void } {
	const entries: Array<{ id: string; parentId: string | null; type: string; message: unknown }> = [];
	return {
		add(message) {
			entries.push({ id: String(entries.length), parentId: entries.at(-1)?.id ?? null, type: "message", message });
		},
		getLeafEntry: () => entries.at(-1),
		getEntry: (id) => entries.find((entry) => entry.id === id),
	};
}

function bashMessage(command: string, fullOutputPath: string | undefined, extra: object = {}): Record<string, unknown> {
	return {
		role: "bashExecution",
		command,
		output: "tail",
		truncated: fullOutputPath !== undefined,
		fullOutputPath,
		timestamp: Date.now(),
		...extra,
	};
}

test("UserSpillGuard makes a `!`/`!!` command's spill file private once its message appears, waiting for the file", async (t) => {
	// The guard's timer does not keep a process alive: this test does, while it waits.
	const alive = setInterval(() => {}, 1_000);
	t.after(() => clearInterval(alive));
	const calls: string[] = [];
	let appeared = false;
	let secured!: () => void;
	const done = new Promise<void>((resolve) => (secured = resolve));
	const guard = new UserSpillGuard({
		pollMs: 1,
		async makePrivate(path): Promise<SpillPrivacy> {
			calls.push(path);
			if (!appeared) return "missing";
			secured();
			return "private";
		},
	});
	const session = fakeSession();
	session.add({ role: "user", content: "hi", timestamp: Date.now() });
	const path = join(tmpdir(), "pi-bash-1234abcd.log");
	guard.noteStart("seq 1 100000", Date.now(), session);
	await new Promise((resolve) => setTimeout(resolve, 20));
	assert.deepEqual(calls, [], "nothing to do while the command runs");
	session.add(bashMessage("seq 1 100000", path, { excludeFromContext: true }));
	while (calls.length < 2) await new Promise((resolve) => setTimeout(resolve, 2));
	appeared = true;
	await done;
	assert.ok(calls.every((call) => call === path));
	const count = calls.length;
	await new Promise((resolve) => setTimeout(resolve, 20));
	assert.equal(calls.length, count, "the watch ended");
});

test("UserSpillGuard.close looks once more at the latest messages; a command without a spill file ends its watch", async () => {
	const calls: string[] = [];
	const guard = new UserSpillGuard({
		pollMs: 60_000,
		makePrivate: async (path) => {
			calls.push(path);
			return "private";
		},
	});
	const session = fakeSession();
	session.add(bashMessage("echo small", undefined));
	const path = join(tmpdir(), "pi-bash-feed.log");
	guard.noteStart("seq 1 100000", Date.now() - 1, session);
	session.add(bashMessage("seq 1 100000", path));
	await guard.close(session);
	assert.deepEqual(calls, [path], "once: a path made private is not opened again");
	await guard.sweep([bashMessage("seq 1 100000", path), bashMessage("x", "/etc/passwd"), { role: "user" }]);
	assert.deepEqual(calls, [path], "only Pi's spill names, each once");
});
