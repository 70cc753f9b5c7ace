// Stage 2 of pi-overflow — load LAST (after every other content extension). Wiring only: the
// configuration is the bundle's config/pi-overflow.json with the user's
// <agentDir>/my-pi/pi-overflow.json layered over it, the store is in Pi's agent directory;
// src/extension.ts does the rest. A runtime dependency that is not installed (`pi install` of a
// local path runs no npm install) fails with one line that says what to run, not a stack.

import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";
import { getAgentDir } from "@mariozechner/pi-coding-agent";

export default async function overflow(pi: ExtensionAPI): Promise<void> {
	let extension: typeof import("./src/extension.js");
	let store: typeof import("./src/store/index.js");
	try {
		// One after the other: Pi's loader (jiti) evaluates a module's imports asynchronously, and two
		// graphs imported at once can each see a module the other is still evaluating, with its exports
		// not yet set (a constant read at load time is then undefined).
		extension = await import("./src/extension.js");
		store = await import("./src/store/index.js");
	} catch (error) {
		throw describeMissingDependency(error) ?? error;
	}
	const agentDir = getAgentDir();
	extension.createOverflowExtension({
		configPath: fileURLToPath(new URL("./config/pi-overflow.json", import.meta.url)),
		userConfigPath: join(agentDir, "my-pi", "pi-overflow.json"),
		storeRoot: store.resolveStoreRoot(agentDir),
	})(pi);
}

/** A clear error for a package the bundle needs that is not installed; undefined for anything else. */
function describeMissingDependency(error: unknown): Error | undefined {
	const code = (error as { code?: unknown } | undefined)?.code;
	const message = error instanceof Error ? error.message : String(error);
	const name = /Cannot find (?:module|package) '([^']+)'/.exec(message)?.[1];
	if (
		(code !== "MODULE_NOT_FOUND" && code !== "ERR_MODULE_NOT_FOUND") ||
		name === undefined ||
		name.startsWith(".") ||
		name.startsWith("/")
	) {
		return undefined;
	}
	const bundle = dirname(fileURLToPath(import.meta.url));
	return new Error(
		`pi-overflow needs the npm package "${name}", which is not installed; run: cd ${JSON.stringify(bundle)} && npm install --omit=dev --omit=peer`,
	);
}
