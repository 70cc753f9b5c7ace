// The real `pi` command in print mode, as a user runs it: capture.ts, a scripted model registered by
// an extension (no API key), and index.ts, loaded with -e in that order.

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { lstatSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { assertChildOk, runChild, withinChildTimeout } from "../helpers/child.js";
import { CAPTURE_PATH, INDEX_PATH, REPO_ROOT } from "../helpers/pi.js";
import { createTempDir } from "../helpers/tmp.js";

/** The real `pi` command in print mode with both stages and the scripted faux-cli model, in `agentDir`. */
function runPiPrint(agentDir: string, env: NodeJS.ProcessEnv): ReturnType<typeof runChild> {
	const pi = join(REPO_ROOT, "node_modules", ".bin", "pi");
	const faux = join(REPO_ROOT, "test", "fixtures", "ext", "faux-cli.ts");
	const args = ["-p", "--no-session", "--provider", "faux-cli", "--model", "faux-1"];
	return runChild(pi, [...args, "-e", CAPTURE_PATH, "-e", faux, "-e", INDEX_PATH, "go"], {
		cwd: agentDir,
		env: { ...process.env, PI_CODING_AGENT_DIR: agentDir, ...env },
	});
}

test("pi -p with both stages bounds a failing command's huge output and overflow_query reads the stored original", async (t) => {
	const agentDir = await createTempDir(t);
	const run = runPiPrint(agentDir, {});
	assertChildOk(run, "pi -p");
	const lines = run.stdout.trim().split("\n");
	assert.equal(lines.length, 2, run.stdout);
	// Pi's bash threw (exit 4) with its last 2000 lines: the marker names the stored copy, and the
	// line the cut lost follows it with its number in the output.
	const bash =
		/^result 1: (\d+) chars \| first: .* \| decisive: 250001: error: the decisive line \| last: 250001: error: the decisive line \| marker: \[pi-overflow id=([0-9a-f]{12}) lines=300001 bytes=(\d+)\] full output stored/.exec(
			lines[0],
		);
	assert.ok(bash, lines[0]);
	assert.ok(Number(bash[1]) <= 24000);
	const id = bash[2];
	assert.match(
		lines[1],
		new RegExp(`^result 2: \\d+ chars \\| first: \\[pi-overflow id=${id}\\] bash output stored .*: 300001 lines`),
	);
	assert.match(lines[1], /decisive: 250001: error: the decisive line \|/);
	const store = join(agentDir, "my-pi", "pi-overflow");
	assert.deepEqual(readdirSync(store).sort(), [`${id}.json`, `${id}.txt`]);
	assert.equal(lstatSync(join(store, `${id}.txt`)).mode & 0o777, 0o600);
	const stored = readFileSync(join(store, `${id}.txt`), "utf8").split("\n");
	assert.equal(stored[250000], "error: the decisive line");
	assert.equal(Number(bash[3]), Buffer.byteLength(stored.join("\n")));
});

// The real `pi` command in print mode runs a search: Pi loads the extension with its own loader
// (jiti, no tsx in the process), and the search worker (src/query/engine/worker.js and the modules it
// imports) starts from its file next to query/engine/pool.ts and runs as plain JavaScript.

test("pi -p answers a search of the stored original from the search worker", async (t) => {
	const agentDir = await createTempDir(t);
	// NODE_OPTIONS empty: no loader of this test run (tsx) reaches pi or its workers.
	const run = runPiPrint(agentDir, { FAUX_CLI_QUERY: JSON.stringify({ search: "decisive" }), NODE_OPTIONS: "" });
	assertChildOk(run, "pi -p");
	const lines = run.stdout.trim().split("\n");
	assert.equal(lines.length, 2, run.stdout);
	assert.match(
		lines[1]!,
		/^result 2: \d+ chars \| first: \[pi-overflow id=[0-9a-f]{12}\] search \/decisive\/i: 1 hit line in 300001 lines; all shown/,
	);
	assert.match(lines[1]!, /decisive: 250001: error: the decisive line \|/);
});

// Pi's RPC mode runs the user's own commands too (`{"type":"bash"}`, no user_bash event): a client
// that runs one whose output Pi spills and then closes the session leaves no world-readable copy.

test("pi --mode rpc: a user command whose output Pi spilled, then the session ends at once: its spill file is private", async (t) => {
	const agentDir = await createTempDir(t);
	const tmpDir = await createTempDir(t, "pi-overflow-tmp-");
	const pi = join(REPO_ROOT, "node_modules", ".bin", "pi");
	const faux = join(REPO_ROOT, "test", "fixtures", "ext", "faux-cli.ts");
	const args = ["--mode", "rpc", "--no-session", "--provider", "faux-cli", "--model", "faux-1"];
	const child = spawn(pi, [...args, "-e", CAPTURE_PATH, "-e", faux, "-e", INDEX_PATH], {
		cwd: agentDir,
		env: { ...process.env, PI_CODING_AGENT_DIR: agentDir, TMPDIR: tmpDir },
		stdio: ["pipe", "pipe", "pipe"],
	});
	t.after(() => child.kill("SIGKILL"));
	let stdout = "";
	let stderr = "";
	child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
	const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
	const answered = new Promise<Record<string, unknown>>((resolve) => {
		child.stdout.on("data", (chunk: Buffer) => {
			stdout += chunk.toString("utf8");
			for (const line of stdout.split("\n")) {
				if (!line.startsWith("{")) continue;
				const parsed = JSON.parse(line) as Record<string, unknown>;
				if (parsed.type === "response" && parsed.command === "bash") resolve(parsed);
			}
		});
	});
	child.stdin.write(`${JSON.stringify({ type: "bash", command: "seq 1 100000" })}\n`);
	const response = await withinChildTimeout(answered, "Pi's answer to the bash command");
	const data = response.data as { truncated?: boolean; fullOutputPath?: string } | undefined;
	assert.equal(data?.truncated, true, JSON.stringify(response).slice(0, 500));
	const spill = data?.fullOutputPath ?? "";
	assert.ok(spill.startsWith(`${tmpDir}/pi-bash-`), `Pi spilled it to its temp directory: ${spill}`);
	child.stdin.end();
	assert.equal(await withinChildTimeout(exited, "Pi to exit"), 0, stderr.slice(-2000));

	assert.equal(lstatSync(spill).mode & 0o777, 0o600, `${spill} is private`);
	assert.equal(readFileSync(spill, "utf8").split("\n").length, 100001, "the whole output, kept");
});
