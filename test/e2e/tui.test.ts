// Pi's interactive mode in a real terminal (tmux, 80 columns): a scripted model registered by an
// extension runs a failing bash command with a huge output, asks overflow_query for the stored
// entry, and the user runs /overflow; the screens are read with `tmux capture-pane` and checked as a
// user reads them. Skipped (with the reason) where tmux is not installed; runs wherever it is.

import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, lstatSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { type TestContext, test } from "node:test";
import { CHILD_TIMEOUT_S } from "../helpers/child.js";
import { CAPTURE_PATH, INDEX_PATH, REPO_ROOT } from "../helpers/pi.js";
import { createTempDir } from "../helpers/tmp.js";

const HAS_TMUX = spawnSync("tmux", ["-V"], { encoding: "utf8" }).status === 0;
const COLUMNS = 80;
const POLL_MS = 250;

function tmux(...args: string[]): string {
	return execFileSync("tmux", args, { encoding: "utf8" });
}

/** Pi's spill files in a directory, with their permission bits. */
function spillModes(dir: string): Map<string, number> {
	const modes = new Map<string, number>();
	for (const name of readdirSync(dir)) {
		if (/^pi-bash-[0-9a-f]+\.log$/.test(name)) modes.set(name, lstatSync(join(dir, name)).mode & 0o777);
	}
	return modes;
}

/**
 * Starts Pi's interactive mode in a tmux session `columns` wide with the faux-tui model, its temp
 * directory `tmpDir` (so its spill files are this test's own); waits for the editor.
 */
async function startPi(t: TestContext, agentDir: string, tmpDir: string, columns: number): Promise<string> {
	const session = `pi-overflow-tui-${process.pid}-${++sessions}`;
	const pi = join(REPO_ROOT, "node_modules", ".bin", "pi");
	const faux = join(REPO_ROOT, "test", "fixtures", "ext", "faux-tui.ts");
	const command = [pi, "--no-session", "--provider", "faux-tui", "--model", "faux-1"]
		.concat(["-e", CAPTURE_PATH, "-e", faux, "-e", INDEX_PATH])
		.map((word) => `'${word}'`)
		.join(" ");
	const env = `env PI_CODING_AGENT_DIR='${agentDir}' TMPDIR='${tmpDir}'`;
	tmux("new-session", "-d", "-s", session, "-x", String(columns), "-y", "50", "-c", agentDir, `${env} ${command}`);
	t.after(() => spawnSync("tmux", ["kill-session", "-t", session]));
	await waitForScreen(session, (screen) => /faux-1\s*$/m.test(screen), "Pi's editor and footer");
	return session;
}
let sessions = 0;

/** Runs `!command` (or `!!command`) and waits for Pi's row to say it cut the output; returns the screen. */
async function runUserCommand(session: string, line: string, count: number): Promise<string> {
	tmux("send-keys", "-t", session, line, "Enter");
	return waitForScreen(
		session,
		(screen) => (screen.match(/Output truncated\. Full output: /g) ?? []).length >= count,
		`the row of ${line}`,
	);
}

/** The visible screen and its scrollback, one string per terminal row (trailing blanks dropped). */
function readScreen(session: string): string {
	return tmux("capture-pane", "-p", "-S", "-200", "-t", session)
		.split("\n")
		.map((row) => row.trimEnd())
		.join("\n");
}

/** Polls until `done` holds (at most CHILD_TIMEOUT_S). */
async function waitFor(done: () => boolean, what: string): Promise<void> {
	const deadline = Date.now() + CHILD_TIMEOUT_S * 1000;
	while (!done()) {
		if (Date.now() >= deadline) assert.fail(`waiting for ${what} timed out after ${CHILD_TIMEOUT_S} s`);
		await new Promise((resolve) => setTimeout(resolve, POLL_MS));
	}
}

/** Polls the screen until `done` holds, then returns it; fails with the last screen. */
async function waitForScreen(session: string, done: (screen: string) => boolean, what: string): Promise<string> {
	// Start-up tries to download fd and ripgrep, which fails offline: a screen may be slow, never hung.
	const deadline = Date.now() + CHILD_TIMEOUT_S * 1000;
	let screen = "";
	while (Date.now() < deadline) {
		screen = readScreen(session);
		if (done(screen)) return screen;
		await new Promise((resolve) => setTimeout(resolve, POLL_MS));
	}
	assert.fail(`waiting for ${what} timed out after ${CHILD_TIMEOUT_S} s; the screen was:\n${screen}`);
}

test(
	"in Pi's TUI at 80 columns the bounded bash row, the overflow_query row and /overflow tell the user what happened",
	{ skip: HAS_TMUX ? false : "tmux is not installed" },
	async (t) => {
		const agentDir = await createTempDir(t);
		const session = `pi-overflow-tui-${process.pid}`;
		const pi = join(REPO_ROOT, "node_modules", ".bin", "pi");
		const faux = join(REPO_ROOT, "test", "fixtures", "ext", "faux-tui.ts");
		const command = [
			pi,
			"--no-session",
			"--provider",
			"faux-tui",
			"--model",
			"faux-1",
			"-e",
			CAPTURE_PATH,
			"-e",
			faux,
			"-e",
			INDEX_PATH,
		]
			.map((word) => `'${word}'`)
			.join(" ");
		tmux(
			"new-session",
			"-d",
			"-s",
			session,
			"-x",
			String(COLUMNS),
			"-y",
			"50",
			"-c",
			agentDir,
			`env PI_CODING_AGENT_DIR='${agentDir}' ${command}`,
		);
		t.after(() => spawnSync("tmux", ["kill-session", "-t", session]));

		await waitForScreen(session, (screen) => /faux-1\s*$/m.test(screen), "Pi's editor and footer");
		tmux("send-keys", "-t", session, "build", "Enter");
		const built = await waitForScreen(
			session,
			(screen) => screen.includes("done: the build failed"),
			"the model's answer",
		);

		// The collapsed bash row shows the end of the text: the stored entry's id and totals, and the
		// decisive line Pi's cut left out, with its line number.
		const id = /\[pi-overflow id=([0-9a-f]{12}) lines=150000 bytes=\d+\] full output stored;/.exec(built)?.[1];
		assert.ok(id, `the bash row names the stored entry:\n${built}`);
		assert.match(built, /\n 120000: src\/net\/socket\.c:88:12: error: struct sock has no member named\n/);
		// The overflow_query row says what the entry is, not just "overview".
		assert.match(
			built,
			new RegExp(`overflow_query ${id} overview\\n overview: bash output stored [^\\n]*: 150000 lines`),
		);
		for (const row of built.split("\n")) assert.ok(row.length <= COLUMNS, `row fits ${COLUMNS} columns: ${row}`);
		assert.doesNotMatch(built, /\b1 lines\b/);

		tmux("send-keys", "-t", session, "/overflow", "Enter");
		const listed = await waitForScreen(
			session,
			(screen) => screen.includes("stored result this session"),
			"the /overflow listing",
		);
		assert.match(
			listed,
			new RegExp(
				`\\n ${id}  bash  150000 lines  9\\d\\d KiB  just now\\n   120000: src/net/socket\\.c:88:12: error: struct sock has no member named sk`,
			),
		);

		// Pi's spill file of the command is gone: the only copy is the private one.
		const store = join(agentDir, "my-pi", "pi-overflow");
		assert.deepEqual(readdirSync(store).sort(), [`${id}.json`, `${id}.txt`]);
		// /overflow show prints what the model was sent: Pi's 2 000-line tail with the marker (so long
		// that the listing scrolls away), not a view of the stored output the model never saw.
		tmux("send-keys", "-t", session, `/overflow show ${id}`, "Enter");
		const shown = await waitForScreen(
			session,
			(screen) =>
				!screen.includes("stored result this session") &&
				screen.includes(`Command exited with code 2\n [pi-overflow id=${id} lines=150000`),
			"the /overflow show text",
		);
		assert.match(shown, /\n 149999\n 150000\n/);
		assert.match(shown, /\n 120000: src\/net\/socket\.c:88:12: error: struct sock has no member named\n/);
		assert.doesNotMatch(shown, /\[use overflow_query with id=/);
	},
);

test(
	"`!` and `!!` commands whose output Pi spilled, then quitting at once: no world-readable spill file is left",
	{ skip: HAS_TMUX ? false : "tmux is not installed" },
	async (t) => {
		const agentDir = await createTempDir(t);
		const tmpDir = await createTempDir(t, "pi-overflow-tmp-");
		const session = await startPi(t, agentDir, tmpDir, 200);
		await runUserCommand(session, "!seq 1 100000", 1);
		await runUserCommand(session, "!!seq 1 100001", 2);
		tmux("send-keys", "-t", session, "/quit", "Enter");
		await waitFor(() => spawnSync("tmux", ["has-session", "-t", session]).status !== 0, "Pi to exit");

		const modes = spillModes(tmpDir);
		assert.equal(modes.size, 2, `Pi spilled both outputs: ${[...modes.keys()].join(", ")}`);
		for (const [name, mode] of modes) assert.equal(mode, 0o600, `${name} is private (mode ${mode.toString(8)})`);
	},
);

test(
	"a `!!` command whose output Pi spilled: its spill file turns private while Pi waits, with no next message",
	{ skip: HAS_TMUX ? false : "tmux is not installed" },
	async (t) => {
		const agentDir = await createTempDir(t);
		const tmpDir = await createTempDir(t, "pi-overflow-tmp-");
		const session = await startPi(t, agentDir, tmpDir, 200);
		const ran = await runUserCommand(session, "!!seq 1 100000", 1);
		const shown = /Output truncated\. Full output: (\S+)/.exec(ran)?.[1] ?? "";
		assert.ok(shown.startsWith(`${tmpDir}/pi-bash-`), `Pi's row names its spill file:\n${ran}`);
		// Pi sits idle at its editor: nothing but the command's end can have made it private.
		await waitFor(() => (lstatSync(shown).mode & 0o777) === 0o600, `${shown} to be private`);
		assert.equal(readFileSync(shown, "utf8").split("\n").length, 100001, "the whole output, where the row says");
		assert.ok(spawnSync("tmux", ["has-session", "-t", session]).status === 0, "Pi still runs");
	},
);

test(
	"after a `!` command's output is stored, the path Pi's row shows exists and is private",
	{ skip: HAS_TMUX ? false : "tmux is not installed" },
	async (t) => {
		const agentDir = await createTempDir(t);
		const tmpDir = await createTempDir(t, "pi-overflow-tmp-");
		const session = await startPi(t, agentDir, tmpDir, 200);
		const ran = await runUserCommand(session, "!seq 1 100000", 1);
		const shownBefore = /Output truncated\. Full output: (\S+)/.exec(ran)?.[1];
		assert.ok(shownBefore, `Pi's row names the full output:\n${ran}`);

		// The next message sends the output to the model: pi-overflow stores it.
		tmux("send-keys", "-t", session, "ping", "Enter");
		const answered = await waitForScreen(session, (screen) => /^ ?pong$/m.test(screen), "the model's answer");
		assert.match(answered, /^ ?\$ seq 1 100000$/m);
		const shown = [...answered.matchAll(/Output truncated\. Full output: (\S+)/g)].map((match) => match[1]);
		assert.deepEqual(shown, [shownBefore], "the row still names that path");
		const store = join(agentDir, "my-pi", "pi-overflow");
		assert.equal(readdirSync(store).filter((name) => name.endsWith(".txt")).length, 1, "the output is stored");
		for (const path of shown) {
			assert.ok(existsSync(path), `${path} exists`);
			assert.equal(lstatSync(path).mode & 0o777, 0o600, `${path} is private`);
		}
	},
);
