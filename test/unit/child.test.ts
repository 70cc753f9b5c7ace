// The child helper: a child that fails says how in words, a killed one by its signal, and one past the
// budget "timed out after N s"; a wait for a child's word ends the same way.

import assert from "node:assert/strict";
import { test } from "node:test";
import { CHILD_TIMEOUT_S, childFailure, runChild } from "../helpers/child.js";

test("a child that exits 0 is no failure; one that exits 3 or is killed says so in words", () => {
	const ok = runChild(process.execPath, ["-e", "process.stdout.write('hi')"]);
	assert.equal(childFailure(ok, "the probe"), undefined);
	assert.equal(ok.stdout, "hi");
	const failed = runChild(process.execPath, ["-e", "process.stderr.write('bad'); process.exit(3)"]);
	assert.equal(childFailure(failed, "the probe"), "the probe exited with status 3\nbad");
	const killed = runChild(process.execPath, ["-e", "process.kill(process.pid, 'SIGTERM')"]);
	assert.equal(childFailure(killed, "the probe"), "the probe was killed by SIGTERM\n");
});

test("a child killed for its budget says it timed out after the budget, not its exit status", () => {
	const run = { status: null, signal: "SIGKILL" as const, stdout: "", stderr: "still loading", timedOut: true };
	assert.equal(childFailure(run, "pi -p"), `pi -p timed out after ${CHILD_TIMEOUT_S} s\nstill loading`);
	assert.ok(CHILD_TIMEOUT_S >= 300, "the budget is far above any run on a loaded machine");
});
