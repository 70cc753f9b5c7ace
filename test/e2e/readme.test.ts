// The README's install, update and uninstall, as a user follows them: every shell block of its
// sections Install, Update and Uninstall is run as written (bash -e), in a throwaway home and agent
// directory, against a fresh clone. Only what would reach the network is pointed elsewhere: the
// repository's address at a local copy (git's url.<base>.insteadOf) and npm at its cache (offline).
// Pi's own install line is run on its own, against the npm registry (the one npm is configured
// with), into a throwaway prefix; the `pi` it installs must run.

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { assertChildOk, runChild } from "../helpers/child.js";
import { REPO_ROOT } from "../helpers/pi.js";
import { createTempDir } from "../helpers/tmp.js";

/** The address the README clones and installs from. */
const REPOSITORY = "https://github.com/my-pi/pi-overflow";

/** The ```sh blocks of a README section (list items' indentation removed). */
function shellBlocks(readme: string, section: string): string[] {
	const start = readme.indexOf(`\n## ${section}\n`);
	assert.ok(start >= 0, `the README has a section ${section}`);
	const end = readme.indexOf("\n## ", start + 1);
	const text = readme.slice(start, end < 0 ? undefined : end);
	return [...text.matchAll(/^( *)```sh\n([\s\S]*?)^\1```$/gm)].map(([, indent, body]) =>
		body!
			.split("\n")
			.map((line) => line.slice(indent!.length))
			.join("\n")
			.trim(),
	);
}

/** What each block of the README is for, found by what it runs; every block must be one of these. */
const ROLES = {
	installPi: /^npm install -g @mariozechner\/pi-coding-agent$/,
	clone: /git clone .*\n\(cd "\$AGENT_DIR\/pi-overflow" && npm install --omit=dev --omit=peer\)$/,
	project: /> \.pi\/settings\.json$/,
	piInstall: /^pi install git:github\.com\/my-pi\/pi-overflow$/,
	pull: /\(cd "\$AGENT_DIR\/pi-overflow" && git pull && npm install --omit=dev --omit=peer\)$/,
	piUpdate: /^pi update git:github\.com\/my-pi\/pi-overflow$/,
	purge: /^pi -p --no-session "\/overflow purge all"$/,
	piRemove: /^pi remove git:github\.com\/my-pi\/pi-overflow$/,
	removeCheckout: /\nrm -rf "\$AGENT_DIR\/pi-overflow"$/,
	removeData: /\nrm -rf "\$AGENT_DIR\/my-pi\/pi-overflow" "\$AGENT_DIR\/my-pi\/pi-overflow-stats\.json"$/,
} as const;
type Role = keyof typeof ROLES;

function readBlocks(): Record<Role, string> {
	const readme = readFileSync(join(REPO_ROOT, "README.md"), "utf8");
	const blocks = ["Install", "Update", "Uninstall"].flatMap((section) => shellBlocks(readme, section));
	const found: Partial<Record<Role, string>> = {};
	for (const block of blocks) {
		const role = (Object.keys(ROLES) as Role[]).find((name) => ROLES[name].test(block));
		assert.ok(role, `a README shell block this test knows how to run:\n${block}`);
		assert.equal(found[role], undefined, `one README block for ${role}`);
		found[role] = block;
	}
	for (const role of Object.keys(ROLES) as Role[]) assert.ok(found[role], `the README has a block for ${role}`);
	return found as Record<Role, string>;
}

/** Who commits in the test's copy of the repository. */
const GIT_AUTHOR: NodeJS.ProcessEnv = {
	...process.env,
	GIT_AUTHOR_NAME: "test",
	GIT_AUTHOR_EMAIL: "test@example.invalid",
	GIT_COMMITTER_NAME: "test",
	GIT_COMMITTER_EMAIL: "test@example.invalid",
};

function git(cwd: string, ...args: string[]): string {
	return execFileSync("git", args, { cwd, encoding: "utf8", env: GIT_AUTHOR }).trim();
}

test("the README's install, update and uninstall commands, run as written against a fresh clone, install, update and leave nothing but the user's config", async (t) => {
	const blocks = readBlocks();
	// Pi itself: the README names the package whose `pi` the tests run.
	const pi = JSON.parse(
		readFileSync(join(REPO_ROOT, "node_modules", "@mariozechner", "pi-coding-agent", "package.json"), "utf8"),
	) as { name: string; bin?: Record<string, string> };
	assert.equal(`npm install -g ${pi.name}`, blocks.installPi);
	assert.ok(pi.bin?.pi, "the package installs a `pi` command");

	const home = await createTempDir(t);
	const origin = join(home, "origin");
	git(home, "clone", "--quiet", REPO_ROOT, origin);
	// The repository as it is now, uncommitted changes included: what these tests are testing.
	const files = execFileSync("git", ["ls-files", "-z", "--cached", "--others", "--exclude-standard"], {
		cwd: REPO_ROOT,
		encoding: "utf8",
	});
	for (const file of files.split("\0").filter((name) => name !== "" && existsSync(join(REPO_ROOT, name))))
		cpSync(join(REPO_ROOT, file), join(origin, file));
	git(origin, "add", "--all");
	execFileSync("git", ["commit", "--quiet", "--allow-empty", "-m", "the working tree"], {
		cwd: origin,
		env: GIT_AUTHOR,
	});
	const npmCache = execFileSync("npm", ["config", "get", "cache"], { encoding: "utf8" }).trim();
	const env: NodeJS.ProcessEnv = {
		...process.env,
		HOME: home,
		PATH: `${join(REPO_ROOT, "node_modules", ".bin")}:${process.env.PATH ?? ""}`,
		PI_CODING_AGENT_DIR: join(home, ".pi", "agent"),
		GIT_CONFIG_COUNT: "1",
		GIT_CONFIG_KEY_0: `url.${origin}.insteadOf`,
		GIT_CONFIG_VALUE_0: REPOSITORY,
		npm_config_cache: npmCache,
		npm_config_offline: "true",
		npm_config_audit: "false",
		npm_config_fund: "false",
		npm_config_update_notifier: "false",
		NODE_OPTIONS: "",
	};
	const agentDir = env.PI_CODING_AGENT_DIR!;
	const run = (block: string, cwd: string, extra: NodeJS.ProcessEnv = {}) => {
		const child = runChild("bash", ["-e", "-c", block], { cwd, env: { ...env, ...extra } });
		assertChildOk(child, block);
		return child.stdout;
	};
	const commit = (file: string) => {
		writeFileSync(join(origin, file), "a change upstream\n");
		git(origin, "add", file);
		git(origin, "commit", "--quiet", "-m", `add ${file}`);
		return git(origin, "rev-parse", "HEAD");
	};

	// Install: the checkout in the agent directory, its runtime packages, the settings the README shows.
	mkdirSync(agentDir, { recursive: true });
	run(blocks.clone, home);
	const checkout = join(agentDir, "pi-overflow");
	assert.equal(git(checkout, "rev-parse", "HEAD"), git(origin, "rev-parse", "HEAD"));
	const installed = readdirSync(join(checkout, "node_modules")).filter((name) => !name.startsWith("."));
	assert.deepEqual(installed.sort(), ["@eslint-community", "@sinclair", "jsonc-parser"], "runtime packages only");
	writeFileSync(
		join(agentDir, "settings.json"),
		JSON.stringify({ extensions: ["pi-overflow/capture.ts"], packages: ["pi-overflow/index.ts"] }),
	);
	mkdirSync(join(agentDir, "my-pi"));
	writeFileSync(join(agentDir, "my-pi", "pi-overflow.json"), '{ "retentionDays": 3 }\n');
	const project = join(home, "project");
	mkdirSync(project);
	run(blocks.project, project);
	assert.deepEqual(JSON.parse(readFileSync(join(project, ".pi", "settings.json"), "utf8")), {
		extensions: [join(checkout, "capture.ts")],
	});
	// Pi loads it from there: a huge output is bounded and stored in the agent directory.
	const faux = join(REPO_ROOT, "test", "fixtures", "ext", "faux-cli.ts");
	const bounded = run(`pi -p --no-session --provider faux-cli --model faux-1 -e '${faux}' go`, project);
	assert.match(bounded, /marker: \[pi-overflow id=[0-9a-f]{12} lines=300001/);
	const store = join(agentDir, "my-pi", "pi-overflow");
	assert.equal(readdirSync(store).filter((name) => name.endsWith(".txt")).length, 1);

	// Update: the checkout pulls a new commit.
	const updated = commit("UPDATED-1");
	run(blocks.pull, home);
	assert.equal(git(checkout, "rev-parse", "HEAD"), updated);

	// The other install: pi install, then pi update, in an agent directory of its own.
	const other = { PI_CODING_AGENT_DIR: join(home, "installed-agent") };
	run(blocks.piInstall, home, other);
	const gitInstall = join(home, "installed-agent", "git", "github.com", "my-pi", "pi-overflow");
	assert.equal(git(gitInstall, "rev-parse", "HEAD"), updated);
	assert.ok(existsSync(join(gitInstall, "node_modules", "jsonc-parser")), "pi install ran npm install");
	const settingsOf = (dir: string) =>
		JSON.parse(readFileSync(join(dir, "settings.json"), "utf8")) as { packages?: unknown[] };
	assert.deepEqual(settingsOf(join(home, "installed-agent")).packages, ["git:github.com/my-pi/pi-overflow"]);
	const later = commit("UPDATED-2");
	run(blocks.piUpdate, home, other);
	assert.equal(git(gitInstall, "rev-parse", "HEAD"), later);
	// That install stores results too; removed before its data (uninstall step 1 skipped), they are deleted by hand.
	// Outside the project, whose settings name the checkout's capture.ts: this install stands alone.
	run(`pi -p --no-session --provider faux-cli --model faux-1 -e '${faux}' go`, home, other);
	const installedStore = join(home, "installed-agent", "my-pi", "pi-overflow");
	assert.ok(existsSync(installedStore));
	run(blocks.piRemove, home, other);
	assert.equal(existsSync(gitInstall), false, "pi remove deleted the clone");
	assert.ok(!(settingsOf(join(home, "installed-agent")).packages ?? []).includes("git:github.com/my-pi/pi-overflow"));
	run(blocks.removeData, home, other);
	assert.deepEqual(readdirSync(join(home, "installed-agent", "my-pi")), []);

	// Uninstall, step 1 while pi-overflow is loaded: nothing of it is left but the user's config.
	const purged = run(blocks.purge, project);
	assert.match(purged, /^pi-overflow: purged every stored result: 1 entry removed, and the stats' counts\.$/m);
	assert.deepEqual(readdirSync(join(agentDir, "my-pi")), ["pi-overflow.json"]);
	run(blocks.removeCheckout, home);
	assert.equal(existsSync(checkout), false);
});

test("the README's line that installs Pi, run as written (into a throwaway prefix, from the registry), gives a `pi` that runs", async (t) => {
	const blocks = readBlocks();
	const prefix = await createTempDir(t);
	// npm_config_prefix points `-g` at the throwaway directory; the registry is the one npm is configured with.
	const child = runChild("bash", ["-e", "-c", blocks.installPi], {
		cwd: prefix,
		env: {
			...process.env,
			npm_config_prefix: prefix,
			npm_config_audit: "false",
			npm_config_fund: "false",
			npm_config_update_notifier: "false",
			NODE_OPTIONS: "",
		},
	});
	assertChildOk(child, `${blocks.installPi} (needs the npm registry)`);
	// Pi prints its version on stderr.
	const pi = runChild(join(prefix, "bin", "pi"), ["--version"], { env: { ...process.env, NODE_OPTIONS: "" } });
	assertChildOk(pi, "pi --version");
	assert.match(`${pi.stdout}${pi.stderr}`.trim(), /^\d+\.\d+\.\d+$/m, `pi --version: ${pi.stdout}${pi.stderr}`);
});
