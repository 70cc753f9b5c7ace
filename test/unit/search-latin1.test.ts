// Byte-safe patterns are searched over the Latin-1 view of each chunk (no decoding) and only the
// shown lines are decoded: the answer must be exactly what the decoding path gives.

import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, test } from "node:test";
import fc from "fast-check";
import { isByteSafePattern } from "../../src/regex/safety.js";
import { disposeSearchWorkers, searchFile } from "../../src/query/engine/search.js";
import { createTempDir } from "../helpers/tmp.js";

after(() => disposeSearchWorkers());

const OPTIONS = {
	contextLines: 2,
	maxResults: 50,
	maxLineChars: 500,
	timeoutMs: 5000,
	budgetChars: 20000,
	chunkBytes: 4096,
};

test("a byte-safe search over multi-byte text gives the same lines as the decoding path", async (t) => {
	const dir = await createTempDir(t);
	const pieces = [
		"error",
		"ERROR: ",
		"fail",
		"ok",
		"é",
		"日本語",
		"🚀",
		"\u2028",
		"\u00a0",
		" ",
		"x",
		"\r",
		"panicked at",
		"1 failed",
	];
	const safe = ["error", "^error", "fail(?:ed)?$", "\\bok\\b", "panicked|failed", "[a-z]+ed\\b", "e\\w+r"];
	await fc.assert(
		fc.asyncProperty(
			fc.array(fc.array(fc.constantFrom(...pieces), { maxLength: 6 }), { minLength: 1, maxLength: 300 }),
			fc.constantFrom(...safe),
			async (lines, pattern) => {
				assert.ok(isByteSafePattern(pattern));
				const path = join(dir, "entry.txt");
				writeFileSync(path, `${lines.map((parts) => parts.join("")).join("\n")}\n`);
				// The same pattern made unsafe by an empty alternative that contains a `.`: same matches.
				const fast = await searchFile(path, { ...OPTIONS, pattern });
				const exact = await searchFile(path, { ...OPTIONS, pattern: `(?:${pattern})(?:|.{0})` });
				assert.ok(!isByteSafePattern(`(?:${pattern})(?:|.{0})`));
				const shape = (result: typeof fast) => ({
					hits: result.totalHits,
					lines: result.lines.map((line) => [
						line.lineNumber,
						line.hit,
						line.text,
						line.cutBefore,
						line.cutAfter,
						line.matchStart,
						line.matchLength,
					]),
				});
				assert.deepEqual(shape(fast), shape(exact), pattern);
			},
		),
		{ numRuns: 150 },
	);
});
