// Tests for src/bound/budget.ts: a turn's budget is a share of the free window, one view's budget stays
// between the floor and thresholdChars, and the calls of one turn share their budget.

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { capViewBudget, computeTurnBudget, DEFAULT_CHARS_PER_TOKEN, SharedBudget } from "../../src/bound/budget.js";

const OPTIONS = { thresholdChars: 24_000, minViewChars: 2_000, contextShare: 0.2 };

describe("computeTurnBudget", () => {
	test("takes contextShare of the free window at four characters per token", () => {
		assert.equal(DEFAULT_CHARS_PER_TOKEN, 4);
		assert.equal(computeTurnBudget({ contextWindow: 8_000, tokens: 3_000 }, OPTIONS), 0.2 * 5_000 * 4);
		assert.equal(computeTurnBudget({ contextWindow: 200_000, tokens: 0 }, OPTIONS), 160_000);
	});

	test("estimates the tokens in use from what was last sent when Pi does not know them", () => {
		assert.equal(
			computeTurnBudget({ contextWindow: 10_000, tokens: null }, OPTIONS, 20_000),
			0.2 * (10_000 - 5_000) * 4,
		);
		assert.equal(computeTurnBudget({ contextWindow: 10_000, tokens: null }, OPTIONS), 0.2 * 10_000 * 4);
	});

	test("is zero when the window is full and unlimited when there is no window", () => {
		assert.equal(computeTurnBudget({ contextWindow: 8_000, tokens: 9_000 }, OPTIONS), 0);
		assert.equal(computeTurnBudget(undefined, OPTIONS), Number.POSITIVE_INFINITY);
		assert.equal(computeTurnBudget({ contextWindow: 0, tokens: 10 }, OPTIONS), Number.POSITIVE_INFINITY);
	});
});

describe("capViewBudget", () => {
	test("never exceeds thresholdChars and never goes below the floor", () => {
		assert.equal(capViewBudget(Number.POSITIVE_INFINITY, OPTIONS), 24_000);
		assert.equal(capViewBudget(100_000, OPTIONS), 24_000);
		assert.equal(capViewBudget(5_600.7, OPTIONS), 5_600);
		assert.equal(capViewBudget(0, OPTIONS), 2_000);
	});

	test("lets thresholdChars win over a floor above it", () => {
		assert.equal(capViewBudget(0, { ...OPTIONS, thresholdChars: 1_500 }), 1_500);
	});
});

describe("SharedBudget", () => {
	test("gives parallel calls that draw at once the same part", () => {
		const shared = new SharedBudget(30_000, ["a", "b", "c"]);
		assert.deepEqual(
			["a", "b", "c"].map((id) => shared.draw(id)),
			[10_000, 10_000, 10_000],
		);
	});

	test("gives what a small result did not use to the calls after it", () => {
		const shared = new SharedBudget(30_000, ["small", "b", "c"]);
		assert.equal(shared.draw("small"), 10_000);
		shared.settle("small", 1_000);
		assert.equal(shared.draw("b"), 14_500);
		shared.settle("b", 14_500);
		assert.equal(shared.draw("c"), 14_500);
	});

	test("knows only its own calls, each once", () => {
		const shared = new SharedBudget(9_000, ["a"]);
		assert.equal(shared.draw("other"), undefined);
		assert.equal(shared.draw("a"), 9_000);
		assert.equal(shared.draw("a"), undefined);
	});

	test("stays unlimited without a window", () => {
		const shared = new SharedBudget(Number.POSITIVE_INFINITY, ["a", "b"]);
		assert.equal(shared.draw("a"), Number.POSITIVE_INFINITY);
		shared.settle("a", 5);
		assert.equal(shared.draw("b"), Number.POSITIVE_INFINITY);
	});
});
