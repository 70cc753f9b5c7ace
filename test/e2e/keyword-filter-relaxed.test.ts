// The relaxed-SIMD build of the keyword prefilter (src/prefilter/wasm/keyword-filter-relaxed.wasm) runs
// wherever the runtime validates it (Node 22 on). On a runtime that validates it by default, every
// test of test/unit/keyword-filter.test.ts already runs on it; on one that needs V8's flag (Node 20),
// this file runs that whole test file again in a child process with the flag (end-to-end tier: a
// whole suite in a child is no unit test's cost), so the equivalence
// with the automaton (real fixtures, block and window edges, fuzzed texts) is checked on both builds.

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { test } from "node:test";
import { childFailure, runChild } from "../helpers/child.js";
import { KEYWORD_FILTER_RELAXED_WASM } from "../helpers/wasm.js";

const RELAXED_BY_DEFAULT = WebAssembly.validate(readFileSync(KEYWORD_FILTER_RELAXED_WASM));
const RELAXED_FLAG = "--experimental-wasm-relaxed-simd";

/** True when this node knows V8's relaxed-SIMD flag (it may be gone once the feature ships). */
function knowsRelaxedFlag(): boolean {
	return spawnSync(process.execPath, [RELAXED_FLAG, "-e", "0"], { encoding: "utf8" }).status === 0;
}

test(
	"the prefilter's equivalence suite passes on the relaxed-SIMD build too",
	{
		skip: RELAXED_BY_DEFAULT
			? "relaxed SIMD is on by default here: keyword-filter.test.ts runs on that build"
			: !knowsRelaxedFlag()
				? "this node has neither relaxed SIMD nor its flag"
				: false,
	},
	() => {
		const suite = fileURLToPath(new URL("../unit/keyword-filter.test.ts", import.meta.url));
		// Without the runner's own variable, which would make the child report in the runner's wire format.
		const { NODE_TEST_CONTEXT: _, ...env } = process.env;
		const run = runChild(process.execPath, [RELAXED_FLAG, "--import", "tsx", "--test", "--test-reporter=tap", suite], {
			env: { ...env, PI_OVERFLOW_EXPECT_RELAXED: "1" },
		});
		const summary = /^# pass (\d+)\n# fail (\d+)/m.exec(run.stdout);
		assert.equal(childFailure(run, "the relaxed-SIMD suite"), undefined, run.stdout.slice(-4000));
		assert.ok(summary, run.stdout.slice(-2000));
		assert.ok(Number(summary[1]) >= 15, `${summary[1]} tests passed`);
		assert.equal(Number(summary[2]), 0);
	},
);
