// Child process of test/e2e/robust-crash.test.ts: writes entries through OverflowStore in an endless
// loop until the parent kills it with SIGKILL. Usage: node --import tsx robust-crash-child.ts <root> <session>
// Prints `ready` once loaded and starts writing when a line arrives on stdin (so the parent can
// start it while it still checks the previous run). Entry n has toolCallId `call-<n>`; its content
// is derived from its id (robust-common.ts), so the parent verifies every file byte for byte.
// Prints `committed <id>` after each commit returns (synchronous writes: a line printed is a
// commit that happened).

import { writeSync } from "node:fs";
import { computeEntryId, OverflowStore } from "../../src/store/index.js";
import { buildEntryMeta, CRASH_PROFILE, entrySizeFor, generateEntryContent, writeEntry } from "./robust-common.js";

const [root, sessionId] = process.argv.slice(2);
if (!root || !sessionId) {
	process.stderr.write("usage: robust-crash-child.ts <root> <session>\n");
	process.exit(2);
}

const store = new OverflowStore({ root });
// Chunk sizes vary so kills land between and inside writes of different sizes.
const CHUNK_BYTES = [4096, 65536, 1024 * 1024];

writeSync(1, "ready\n");
// Without a parent (its stdin closed before "go"), there is nothing to do.
process.stdin.once("end", () => process.exit(0));
await new Promise<void>((resolve) => process.stdin.once("data", () => resolve()));
for (let n = 0; ; n++) {
	const toolCallId = `call-${n}`;
	const id = computeEntryId(sessionId, toolCallId);
	const content = generateEntryContent(id, entrySizeFor(id, CRASH_PROFILE));
	await writeEntry(
		store,
		buildEntryMeta(id, content, sessionId, toolCallId, Date.now()),
		content,
		CHUNK_BYTES[n % CHUNK_BYTES.length],
	);
	writeSync(1, `committed ${id}\n`);
}
