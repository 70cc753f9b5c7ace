// The real `pi` command in print mode runs a search: Pi loads the extension with its own loader
// (jiti, no tsx in the process), and the search worker (src/query/engine/worker.js and the modules it
// imports) starts from its file next to search-pool.ts and runs as plain JavaScript.

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { test } from "node:test";
import { CAPTURE_PATH, INDEX_PATH, REPO_ROOT } from "../helpers/pi.js";
import { createTempDir } from "../helpers/tmp.js";

test("pi -p answers a search of the stored original from the search worker", async (t) => {
	const agentDir = await createTempDir(t);
	const pi = join(REPO_ROOT, "node_modules", ".bin", "pi");
	const faux = join(REPO_ROOT, "test", "fixtures", "ext", "faux-cli.ts");
	const run = spawnSync(
		pi,
		[
			"-p",
			"--no-session",
			"--provider",
			"faux-cli",
			"--model",
			"faux-1",
			"-e",
			CAPTURE_PATH,
			"-e",
			faux,
			"-e",
			INDEX_PATH,
			"go",
		],
		{
			cwd: agentDir,
			// NODE_OPTIONS empty: no loader of this test run (tsx) reaches pi or its workers.
			env: {
				...process.env,
				PI_CODING_AGENT_DIR: agentDir,
				FAUX_CLI_QUERY: JSON.stringify({ search: "decisive" }),
				NODE_OPTIONS: "",
			},
			encoding: "utf8",
			timeout: 60_000,
		},
	);
	assert.equal(run.status, 0, run.stderr);
	const lines = run.stdout.trim().split("\n");
	assert.equal(lines.length, 2, run.stdout);
	assert.match(
		lines[1]!,
		/^result 2: \d+ chars \| first: \[pi-overflow id=[0-9a-f]{12}\] search \/decisive\/i: 1 hit line in 300001 lines; all shown/,
	);
	assert.match(lines[1]!, /decisive: 250001: error: the decisive line \|/);
});
