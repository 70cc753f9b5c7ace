// The README's settings.json must really give the order SPEC requires: capture.ts before every
// other extension, index.ts after every other content extension. This loads Pi's real resource
// loader on that exact snippet, with other extensions in every place Pi discovers them.

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { DefaultResourceLoader, SettingsManager } from "@mariozechner/pi-coding-agent";
import { REPO_ROOT } from "../helpers/pi.js";
import { createTempDir } from "../helpers/tmp.js";

const EXTENSION = `export default function (pi: any) { pi.on("tool_result", () => undefined); }\n`;

/** The README's "## Install" section. */
function readmeInstall(): string {
	const readme = readFileSync(join(REPO_ROOT, "README.md"), "utf8");
	const start = readme.indexOf("## Install\n");
	assert.ok(start >= 0, "the README has an Install section");
	return readme.slice(start, readme.indexOf("\n## ", start + 1));
}

/** The global settings block under "## Install". */
function readmeSettings(): { extensions: string[]; packages: unknown[] } {
	const blocks = [...readmeInstall().matchAll(/```jsonc\n([\s\S]*?)```/g)];
	assert.equal(blocks.length, 1, "the README has one settings.json block");
	return JSON.parse(blocks[0]![1]!.replace(/^\s*\/\/.*$/gm, "").replace(/,(\s*[}\]])/g, "$1"));
}

/** Runs the README's shell lines that write a project's .pi/settings.json, in `cwd`, as the user would. */
function runProjectSnippet(cwd: string, env: Record<string, string | undefined>): void {
	const block = [...readmeInstall().matchAll(/```sh\n([\s\S]*?)```/g)]
		.map((match) => match[1]!)
		.find((text) => text.includes(".pi/settings.json"));
	assert.ok(block, "the README has a shell snippet for a project's settings");
	assert.doesNotMatch(block, /~\/\.pi\/agent/, "no hard-coded agent directory");
	execFileSync("bash", ["-e", "-c", block], { cwd, env: { ...process.env, ...env } });
}

/** Pi's real resource loader on a home directory laid out as the README says; returns the load order. */
async function loadOrder(home: string, withProjectExtensions: boolean): Promise<string[]> {
	const agentDir = join(home, ".pi", "agent");
	const cwd = join(home, "project");
	mkdirSync(join(agentDir, "extensions"), { recursive: true });
	mkdirSync(join(cwd, ".pi", "extensions"), { recursive: true });
	// The bundle, where the README tells the user to put it.
	symlinkSync(REPO_ROOT, join(agentDir, "pi-overflow"));
	// Other extensions: auto-discovered, listed in settings, and a package.
	writeFileSync(join(agentDir, "extensions", "auto-global.ts"), EXTENSION);
	writeFileSync(join(agentDir, "listed.ts"), EXTENSION);
	const pkg = join(agentDir, "other-package");
	mkdirSync(pkg);
	writeFileSync(join(pkg, "package.json"), JSON.stringify({ name: "other-package", pi: { extensions: ["./ext.ts"] } }));
	writeFileSync(join(pkg, "ext.ts"), EXTENSION);
	const global = readmeSettings();
	// The user's own entries go where the README's comments say.
	global.extensions.push("listed.ts");
	global.packages.splice(global.packages.length - 1, 0, "other-package");
	writeFileSync(join(agentDir, "settings.json"), JSON.stringify(global, null, 2));
	if (withProjectExtensions) {
		writeFileSync(join(cwd, ".pi", "extensions", "auto-project.ts"), EXTENSION);
		// The agent directory named by PI_CODING_AGENT_DIR, not the default: the snippet must follow it.
		runProjectSnippet(cwd, { HOME: join(home, "not-the-agent-home"), PI_CODING_AGENT_DIR: agentDir });
	}
	const previousHome = process.env.HOME;
	process.env.HOME = home;
	try {
		const settingsManager = SettingsManager.create(cwd, agentDir);
		const loader = new DefaultResourceLoader({ cwd, agentDir, settingsManager });
		await loader.reload();
		const result = loader.getExtensions();
		assert.deepEqual(result.errors, []);
		return result.extensions.map((extension) => extension.path.split("/").slice(-2).join("/"));
	} finally {
		process.env.HOME = previousHome;
	}
}

test("the README's settings.json loads capture.ts first and index.ts last, around extensions from every other place", async (t) => {
	const names = await loadOrder(await createTempDir(t), false);
	assert.equal(names[0], "pi-overflow/capture.ts", `load order: ${names.join(", ")}`);
	assert.equal(names.at(-1), "pi-overflow/index.ts", `load order: ${names.join(", ")}`);
	for (const other of ["extensions/auto-global.ts", "agent/listed.ts", "other-package/ext.ts"]) {
		assert.ok(names.includes(other), `${other} loaded (order: ${names.join(", ")})`);
	}
	assert.equal(names.filter((name) => name.startsWith("pi-overflow/")).length, 2);
});

test("with the README's project settings, capture.ts also precedes a project's own extensions", async (t) => {
	const names = await loadOrder(await createTempDir(t), true);
	assert.equal(names[0], "pi-overflow/capture.ts", `load order: ${names.join(", ")}`);
	assert.equal(names.at(-1), "pi-overflow/index.ts", `load order: ${names.join(", ")}`);
	assert.ok(names.includes("extensions/auto-project.ts"));
	assert.equal(names.filter((name) => name === "pi-overflow/capture.ts").length, 1, "loaded once");
});
