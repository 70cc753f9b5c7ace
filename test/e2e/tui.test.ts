// Pi's interactive mode in a real terminal (tmux, 80 columns): a scripted model registered by an
// extension runs a failing bash command with a huge output, asks overflow_query for the stored
// entry, and the user runs /overflow; a view replaces Pi's cut of long lines; a tool whose row shows
// only its text is bounded; the user runs /overflow's subcommands in a row, purges and answers the
// purge-all question. The screens are read with `tmux capture-pane` and checked as a user reads them
// (a path Pi wrapped over rows is read across them). Skipped (with the reason) where tmux is not
// installed; runs wherever it is.

import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type TestContext, test } from "node:test";
import { CHILD_TIMEOUT_S } from "../helpers/child.js";
import { CAPTURE_PATH, INDEX_PATH, REPO_ROOT, TEST_TOOLS_PATH } from "../helpers/pi.js";
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
		.concat(["-e", CAPTURE_PATH, "-e", faux, "-e", TEST_TOOLS_PATH, "-e", INDEX_PATH])
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

/** The rows on screen now, without the scrollback. */
function readVisible(session: string): string {
	return tmux("capture-pane", "-p", "-t", session)
		.split("\n")
		.map((row) => row.trimEnd())
		.join("\n");
}

/**
 * Text as a reader takes it in whatever rows Pi wrapped it into: every space and row break left
 * out, so a long path or notice is found across the rows it was broken into.
 */
function squeeze(text: string): string {
	return text.replace(/\s+/g, "");
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
		const tmpDir = await createTempDir(t, "pi-overflow-tmp-");
		const session = await startPi(t, agentDir, tmpDir, COLUMNS);
		const store = join(agentDir, "my-pi", "pi-overflow");
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
		// Pi threw for the failed command (its details were lost): the row still says where the whole output is.
		assert.ok(squeeze(built).includes(squeeze(`[Full output: ${store}/${id}.txt]`)), `the private copy:\n${built}`);
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
		// The decisive line is clipped with an ellipsis at the terminal's width (Pi pads a notice by one column).
		const decisive = /\n( {3}120000: src\/net\/socket\.c:88:12: error: struct sock has no member named \S*…)\n/.exec(
			listed,
		);
		assert.ok(decisive, `the decisive line, clipped with "…":\n${listed}`);
		assert.equal(decisive[1]!.length, COLUMNS - 1, "it ends at the last column Pi's notice uses");
		assert.match(listed, new RegExp(`\\n ${id}  bash  150000 lines  9\\d\\d KiB  just now\\n`));
		assert.ok(squeeze(listed).includes(squeeze(`Full outputs: ${store}/<id>.txt`)), "where the files are");

		// Pi's spill file of the command is gone: the only copy is the private one.
		assert.deepEqual(readdirSync(store).sort(), [`${id}.json`, `${id}.txt`]);
		assert.deepEqual([...spillModes(tmpDir).keys()], []);
		// /overflow show prints what the model was sent: Pi's 2 000-line tail with the marker (so long
		// that the listing scrolls away), not a view of the stored output the model never saw; then the
		// stored file's path, for an editor or less.
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
		assert.ok(
			// Its last line, right above the editor's border.
			squeeze(shown).includes(`${squeeze(`pi-overflow: full output, 150000 lines, 917 KiB: ${store}/${id}.txt`)}─`),
			`show ends with the stored file's path:\n${shown.slice(-600)}`,
		);
		assert.ok(existsSync(join(store, `${id}.txt`)));
	},
);

test(
	"a bounded result's row says where its full output is and gives one set of numbers: a view in place of Pi's cut, and a tool whose row shows only its text",
	{ skip: HAS_TMUX ? false : "tmux is not installed" },
	async (t) => {
		const agentDir = await createTempDir(t);
		const tmpDir = await createTempDir(t, "pi-overflow-tmp-");
		const session = await startPi(t, agentDir, tmpDir, COLUMNS);
		const store = join(agentDir, "my-pi", "pi-overflow");
		tmux("send-keys", "-t", session, "wide", "Enter");
		const wide = await waitForScreen(session, (screen) => /^ ok$/m.test(screen), "the model's answer");
		// Pi cut the output at 50 KB (507 lines); the view that replaced Pi's text shows the output's own
		// lines of its 5000, and Pi's row now counts those, not Pi's cut.
		const box = /\[Fulloutput:(.+?\.txt)\.Truncated:showing(\d+)of5000lines\]/.exec(squeeze(wide));
		assert.ok(box, `the bash row's Full output and Truncated line:\n${wide.slice(-1500)}`);
		const id = /\[useoverflow_querywithid=([0-9a-f]{12})/.exec(squeeze(wide))?.[1];
		assert.equal(box[1], `${store}/${id}.txt`, "the private copy");
		assert.ok(existsSync(box[1]!));
		assert.ok(Number(box[2]) > 0 && Number(box[2]) < 507, `lines the view shows: ${box[2]}`);
		assert.doesNotMatch(wide, /50\.0KB|507 lines/);

		// big_log's row shows only its text: the view ends with where the full output is.
		tmux("send-keys", "-t", session, "log", "Enter");
		const logged = await waitForScreen(
			session,
			(screen) => (screen.match(/^ ok$/gm) ?? []).length >= 2,
			"the model's second answer",
		);
		const logId = /\[pi-overflow id=([0-9a-f]{12})\] big_log output: 9000 lines/.exec(logged)?.[1];
		assert.ok(logId, `the big_log row opens with the view's header:\n${logged.slice(-1500)}`);
		assert.ok(
			squeeze(logged).includes(squeeze(`jsonPath] [pi-overflow: full output: ${store}/${logId}.txt] ok`)),
			`the big_log row ends with its full output's path:\n${logged.slice(-600)}`,
		);
		assert.ok(existsSync(join(store, `${logId}.txt`)));
	},
);

test(
	"/overflow subcommands in a row at 80 columns: help lists each on one line, missing arguments and unknown ids are said plainly, in any case, and stay on screen",
	{ skip: HAS_TMUX ? false : "tmux is not installed" },
	async (t) => {
		const agentDir = await createTempDir(t);
		const tmpDir = await createTempDir(t, "pi-overflow-tmp-");
		const session = await startPi(t, agentDir, tmpDir, COLUMNS);
		tmux("send-keys", "-t", session, "log", "Enter");
		const logged = await waitForScreen(session, (screen) => /^ ok$/m.test(screen), "the model's answer");
		const id = /\[pi-overflow id=([0-9a-f]{12})\] big_log output/.exec(logged)?.[1] ?? "";

		const run = (line: string, shows: string) => (
			tmux("send-keys", "-t", session, line, "Enter"),
			waitForScreen(session, (screen) => squeeze(screen).includes(squeeze(shows)), `the answer to ${line}`)
		);
		const help = await run("/overflow HELP", "/overflow subcommands");
		const usages = ["", " show <id>", " purge <id>", " purge session", " purge all", " stats", " help"];
		for (const usage of usages) {
			const row = new RegExp(`^ {3}/overflow${usage.replace(/[<>]/g, "\\$&")} +\\S.*$`, "m").exec(help)?.[0];
			assert.ok(row, `help has a line for /overflow${usage}:\n${help.slice(-900)}`);
			assert.ok(row.length <= COLUMNS - 1, `one line: ${row}`);
		}
		await run("/overflow show", "Warning: pi-overflow: /overflow show needs the id of a stored result");
		await run("/overflow Purge", "Warning: pi-overflow: /overflow purge needs what to delete: an id,");
		const unknown = "no stored result has id=0123456789ab";
		await run("/overflow purge 0123456789ab", `Warning: pi-overflow: nothing purged: ${unknown}`);
		const answers = await run("/overflow show 0123456789AB", `Warning: pi-overflow: ${unknown}`);
		assert.doesNotMatch(answers, /0 entries removed|Re-run the command/);
		// Warnings are not replaced by the next answer: each is still on screen, in order.
		const order = ["show needs", "purge needs", `nothing purged: ${unknown}`, `pi-overflow: ${unknown}`];
		const at = order.map((text) => squeeze(answers).lastIndexOf(squeeze(text)));
		assert.deepEqual(
			[...at].sort((a, b) => a - b),
			at,
			`in order on screen: ${at.join(", ")}`,
		);
		assert.ok(!at.includes(-1));
		// An id in upper case, as a user may copy it.
		await run(`/overflow SHOW ${id.toUpperCase()}`, `pi-overflow: full output, 9000 lines`);
	},
);

test(
	"/overflow purge session, then the listing, then purge all (No first, the default; then Yes): nothing of pi-overflow is left but the user's config",
	{ skip: HAS_TMUX ? false : "tmux is not installed" },
	async (t) => {
		const agentDir = await createTempDir(t);
		const tmpDir = await createTempDir(t, "pi-overflow-tmp-");
		mkdirSync(join(agentDir, "my-pi"));
		writeFileSync(join(agentDir, "my-pi", "pi-overflow.json"), '{ "retentionDays": 7 }\n');
		const before = readdirSync(agentDir).sort();
		const session = await startPi(t, agentDir, tmpDir, COLUMNS);
		const store = join(agentDir, "my-pi", "pi-overflow");
		const run = (line: string, shows: (screen: string) => boolean) => (
			tmux("send-keys", "-t", session, ...(line === "" ? [] : [line]), "Enter"),
			waitForScreen(session, shows, `the answer to ${line || "Enter"}`)
		);
		const selectorShown = () => waitFor(() => readVisible(session).includes("→ No, keep them"), "the question");
		await run("log", (screen) => /^ ok$/m.test(screen));
		await run("/overflow purge session", (screen) => screen.includes("purged this session's stored results: 1 entry"));
		const listed = await run("/overflow", (screen) => screen.includes("nothing stored in this session now"));
		assert.ok(
			squeeze(listed).includes(
				squeeze("pi-overflow: nothing stored in this session now: 1 earlier result is no longer stored (1 purged)."),
			),
			listed.slice(-600),
		);
		assert.doesNotMatch(listed, /purged or expired/);

		await run("log", (screen) => (screen.match(/^ ok$/gm) ?? []).length >= 2);
		tmux("send-keys", "-t", session, "/overflow purge all", "Enter");
		await selectorShown();
		assert.match(
			readVisible(session),
			/^ → No, keep them\n {3}Yes, delete them$/m,
			"No is chosen until the user moves",
		);
		await run("", (screen) => screen.includes("pi-overflow: nothing purged."));
		assert.equal(readdirSync(store).filter((name) => name.endsWith(".txt")).length, 1, "No kept the entry");
		tmux("send-keys", "-t", session, "/overflow purge all", "Enter");
		await selectorShown();
		tmux("send-keys", "-t", session, "Down");
		await run("", (screen) => screen.includes("pi-overflow: purged every stored result: 1 entry removed"));

		// What is left of pi-overflow: the user's own config, in my-pi/.
		assert.deepEqual(readdirSync(join(agentDir, "my-pi")), ["pi-overflow.json"]);
		const added = readdirSync(agentDir).filter((name) => !before.includes(name));
		for (const name of added) assert.doesNotMatch(name, /overflow/, `${name} is Pi's own`);
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
