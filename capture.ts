// Stage 1 of pi-overflow — load FIRST. Stashes the untouched text of every tool result, keyed by
// toolCallId, in the global ring that stage 2 (index.ts) reads. It never returns anything, so it
// never modifies a result; no disk I/O, no hashing, O(1) per result. At session start it tells the
// user when it loads after index.ts.

import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";
import { markSessionStart, MISORDERED_CAPTURE_WARNING, warnOnce } from "./src/surface/load-check.js";
import { ensureStash, joinTextParts, stashOriginal } from "./src/intake/stash.js";

export default function capture(pi: ExtensionAPI): void {
	const stash = ensureStash();
	pi.on("session_start", (event, ctx) => {
		if (markSessionStart("capture", event).has("index")) warnOnce(ctx, MISORDERED_CAPTURE_WARNING);
	});
	pi.on("tool_result", (event) => {
		// The event object itself is the key stage 2 looks up first: Pi hands it to every handler of this result.
		stashOriginal(
			stash,
			{ toolCallId: event.toolCallId, toolName: event.toolName, text: joinTextParts(event.content) },
			event,
		);
	});
}
