// A small real project whose test suite fails, for re-run tests and the re-run benchmark: node's
// own test runner, hundreds of passing tests and one failing test per name in FAILING, each fixed
// by a one-line edit that keeps the file's lines where they are.

import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export const FAILING = ["alpha", "beta", "gamma", "delta", "epsilon"] as const;
/** The command that runs the suite (the same text every time: a re-run). */
export const RUN_SUITE = "node --test";

/** Writes the project into `dir`: `passing` passing tests and the failing ones. */
export function writeFailingProject(dir: string, passing = 400): void {
	mkdirSync(dir, { recursive: true });
	writeFileSync(join(dir, "package.json"), '{ "type": "module" }\n');
	const expectations = FAILING.map((name, index) => `const ${name} = ${index * 2 + 3};`);
	const tests = FAILING.map(
		(name, index) => `test("${name} adds", () => assert.equal(${index} + ${index + 2}, ${name}));`,
	);
	writeFileSync(
		join(dir, "suite.test.mjs"),
		[
			'import { test } from "node:test";',
			'import assert from "node:assert/strict";',
			...expectations,
			`for (let i = 0; i < ${passing}; i++) test(\`passes \${i}\`, () => {});`,
			...tests,
			"",
		].join("\n"),
	);
}

/** The bash command that fixes the failing test FAILING[index]: its expectation becomes right. */
export function fixCommand(index: number): string {
	const name = FAILING[index];
	return `sed -i 's/^const ${name} = .*;$/const ${name} = ${index + index + 2};/' suite.test.mjs`;
}

/**
 * Runs `body` with NODE_TEST_CONTEXT unset: a suite run by the bash tool must not think it runs
 * inside the test file's own runner (it would skip its files).
 */
export async function withoutTestContext<T>(body: () => Promise<T>): Promise<T> {
	const saved = process.env.NODE_TEST_CONTEXT;
	delete process.env.NODE_TEST_CONTEXT;
	try {
		return await body();
	} finally {
		if (saved !== undefined) process.env.NODE_TEST_CONTEXT = saved;
	}
}
