// One shard of a test tier (run.ts): imports each test file it is given, in turn, so that their tests
// run in this one process. A file that fails to load is a failed test of its own, named after it.

import { test } from "node:test";
import { pathToFileURL } from "node:url";

for (const file of process.argv.slice(2)) {
	try {
		await import(pathToFileURL(file).href);
	} catch (error) {
		test(`load ${file}`, () => {
			throw error;
		});
	}
}
