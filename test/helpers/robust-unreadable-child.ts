// Child process of test/unit/robust-paths.test.ts, started as root, that runs as an unprivileged user
// (root reads every file, so an unreadable spill file can only be tested from another uid). Usage:
// node --import tsx robust-unreadable-child.ts <uid> <storeRoot> <spillPath> <stash|current>
// Every module is loaded first, as root (the repository may sit in root's private directory, which
// the other user cannot reach); then the process drops to <uid> (no groups) and bounds one result
// whose details name the spill file, and prints one JSON line: the view, the overflow details, the
// stored metadata and how long it took — or { unreachable } when <uid> cannot use the store's parent.

import { accessSync, constants } from "node:fs";
import { dirname } from "node:path";
import { boundToolResult } from "../../src/bound/bound.js";
import { createDefaultConfig } from "../../src/config/config.js";
import { createStash, stashOriginal } from "../../src/intake/stash.js";
import { OverflowStore } from "../../src/store/index.js";
import { numberedLog } from "../fixtures/ext/tools.js";

const [uidText, root, spillPath, fallback] = process.argv.slice(2);
const uid = Number(uidText);
process.setgroups?.([]);
process.setgid?.(uid);
process.setuid?.(uid);
try {
	accessSync(dirname(root), constants.W_OK | constants.X_OK);
} catch (error) {
	process.stdout.write(
		`${JSON.stringify({ unreachable: `uid ${uid} cannot use ${dirname(root)}: ${(error as NodeJS.ErrnoException).code}` })}\n`,
	);
	process.exit(0);
}
const original = numberedLog(20_000, { 19_990: "error: only in the original" });
const current = original.slice(-30_000);
const stash = createStash();
if (fallback === "stash") stashOriginal(stash, { toolCallId: "call-unreadable", toolName: "bash", text: original });
const store = new OverflowStore({ root });
const started = performance.now();
const patch = await boundToolResult(
	{
		toolName: "bash",
		toolCallId: "call-unreadable",
		content: [{ type: "text", text: current }],
		details: { fullOutputPath: spillPath },
	},
	{ config: createDefaultConfig(), store, sessionId: "robust-paths", stash },
);
const ms = performance.now() - started;
const overflow = (patch?.details as { overflow?: { id?: string } } | undefined)?.overflow;
const meta = overflow?.id ? await store.readMeta(overflow.id) : undefined;
const text = patch?.content.flatMap((part) => (part.type === "text" ? [part.text] : [])).join("\n");
process.stdout.write(`${JSON.stringify({ uid: process.getuid?.(), text, overflow, meta, ms })}\n`);
