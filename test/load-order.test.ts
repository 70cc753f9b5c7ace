// The README's settings.json must really give the order SPEC requires: capture.ts before every
// other extension, index.ts after every other content extension. This loads Pi's real resource
// loader on that exact snippet, with other extensions in every place Pi discovers them.

import assert from "node:assert/strict";
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { DefaultResourceLoader, SettingsManager } from "@mariozechner/pi-coding-agent";
import { REPO_ROOT } from "./helpers/pi.js";
import { createTempDir } from "./helpers/tmp.js";

const EXTENSION = `export default function (pi: any) { pi.on("tool_result", () => undefined); }\n`;

/** The JSON blocks under "## Install into Pi" in the README: global settings, then project settings. */
function readmeSettings(): Array<{ extensions: string[]; packages: unknown[] }> {
	const readme = readFileSync(join(REPO_ROOT, "README.md"), "utf8");
	const start = readme.indexOf("## Install into Pi");
	const section = readme.slice(start, readme.indexOf("\n## ", start + 1));
	const blocks = [...section.matchAll(/```jsonc\n([\s\S]*?)```/g)];
	assert.equal(blocks.length, 2, "the README has a global and a project settings block");
	return blocks.map((block) => JSON.parse(block[1].replace(/^\s*\/\/.*$/gm, "").replace(/,(\s*[}\]])/g, "$1")));
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
	const [global, project] = readmeSettings();
	// The user's own entries go where the README's comments say.
	global.extensions.push("listed.ts");
	global.packages.splice(global.packages.length - 1, 0, "other-package");
	writeFileSync(join(agentDir, "settings.json"), JSON.stringify(global, null, 2));
	if (withProjectExtensions) {
		writeFileSync(join(cwd, ".pi", "extensions", "auto-project.ts"), EXTENSION);
		writeFileSync(join(cwd, ".pi", "settings.json"), JSON.stringify(project, null, 2));
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
