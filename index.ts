// Stage 2 of pi-overflow — load LAST (after every other content extension). Wiring only: the
// configuration comes from config/pi-overflow.json beside this file, the store from Pi's agent
// directory; src/extension.ts does the rest.

import { fileURLToPath } from "node:url";
import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";
import { getAgentDir } from "@mariozechner/pi-coding-agent";
import { createOverflowExtension } from "./src/extension.js";
import { resolveStoreRoot } from "./src/store/index.js";

export default function overflow(pi: ExtensionAPI): void {
	createOverflowExtension({
		configPath: fileURLToPath(new URL("./config/pi-overflow.json", import.meta.url)),
		storeRoot: resolveStoreRoot(getAgentDir()),
	})(pi);
}
