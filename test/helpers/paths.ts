// Where the repository is, for tests that need a path in it without loading Pi (helpers/pi.ts loads
// @mariozechner/pi-coding-agent, seconds of start-up a unit test should not pay).

import { fileURLToPath } from "node:url";

export const REPO_ROOT = fileURLToPath(new URL("../..", import.meta.url));
