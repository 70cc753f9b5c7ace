// Fresh temporary directories for tests: one mkdtemp per test, removed after it.
// Invariant: every directory handed out lives under the OS temp directory and is deleted (with
// everything in it) when the test that asked for it ends, pass or fail.

import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestContext } from "node:test";

/** Prefix of every test directory, so a leftover is easy to recognise. */
export const DEFAULT_TEMP_PREFIX = "pi-overflow-test-";

/** Creates a fresh directory for this test and removes it when the test ends. */
export async function createTempDir(t: TestContext, prefix: string = DEFAULT_TEMP_PREFIX): Promise<string> {
	const dir = await mkdtemp(join(tmpdir(), prefix));
	t.after(() => rm(dir, { recursive: true, force: true }));
	return dir;
}
