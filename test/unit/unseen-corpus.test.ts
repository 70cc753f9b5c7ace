// The unseen corpus (test/fixtures/unseen/) is well formed: every decisive line is the line at its
// number in its log, every log has a generator and a place in split.json, both halves hold
// outputs, and no toolchain has outputs in both halves. So are the late set and the second, third
// and fourth tuning sets (test/fixtures/unseen-tune2/, unseen-tune3/, unseen-tune4/), whose
// toolchains are in neither the held-out half nor the late set (the third's and fourth's in no
// earlier set at all). It says nothing about what the view keeps of these outputs: `npm run recall`
// measures that, and the held-out half is not tuned on.

import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { loadRealFixtures, type RealFixture } from "../fixtures/real/fixtures.js";
import { loadUnseenFixtures, loadUnseenSplit, UNSEEN_FIXTURES_DIR } from "../fixtures/unseen/fixtures.js";
import { LATE_FIXTURES_DIR, loadLateFixtures } from "../fixtures/unseen-late/fixtures.js";
import { CI_FIXTURES_DIR, loadCiFixtures } from "../fixtures/ci/fixtures.js";
import { loadTune2Fixtures, TUNE2_FIXTURES_DIR } from "../fixtures/unseen-tune2/fixtures.js";
import { loadTune3Fixtures, TUNE3_FIXTURES_DIR } from "../fixtures/unseen-tune3/fixtures.js";
import { loadTune4Fixtures, TUNE4_FIXTURES_DIR } from "../fixtures/unseen-tune4/fixtures.js";

/** An unseen output is well over the default threshold (24 000 chars): at least twice it. */
const MIN_OUTPUT_CHARS = 50_000;
/** A second- or third-tuning-set output is at least 20 KB (their brief: 20–300 KB). */
const MIN_TUNE2_OUTPUT_CHARS = 20_000;

const split = loadUnseenSplit();
const fixtures = loadUnseenFixtures();

/** A fixture's decisive lines are lines of its log, at their numbers, in order; the log is long enough. */
function assertDecisiveLinesInPlace(fixture: RealFixture, minChars: number = MIN_OUTPUT_CHARS): void {
	assert.ok(fixture.decisive.length > 0, "at least one decisive line");
	assert.ok(fixture.text.length >= minChars, `${fixture.text.length} chars`);
	let previous = 0;
	for (const line of fixture.decisive) {
		assert.ok(line.lineNumber > previous, `line ${line.lineNumber} after ${previous}`);
		assert.ok(line.lineNumber <= fixture.lines.length, `line ${line.lineNumber} of ${fixture.lines.length}`);
		assert.equal(fixture.lines[line.lineNumber - 1], line.raw, `${fixture.name}:${line.lineNumber}`);
		previous = line.lineNumber;
	}
}

/** NAME and TOOLCHAIN as each generator of a fixture directory declares them. */
function readGenerators(fixturesDir: string = UNSEEN_FIXTURES_DIR): Map<string, string> {
	const genDir = join(fixturesDir, "gen");
	const declared = new Map<string, string>();
	for (const file of readdirSync(genDir).filter((name) => /^gen-.*\.sh$/.test(name))) {
		const text = readFileSync(join(genDir, file), "utf8");
		const name = /^NAME=([\w.-]+)$/m.exec(text)?.[1];
		const toolchain = /^TOOLCHAIN=([\w.-]+)$/m.exec(text)?.[1];
		assert.ok(name && toolchain, `${file} declares NAME= and TOOLCHAIN=`);
		declared.set(name, toolchain);
	}
	return declared;
}

describe("the unseen corpus", () => {
	test("has at least 24 outputs from at least 20 toolchains", () => {
		assert.ok(fixtures.length >= 24, `${fixtures.length} outputs`);
		assert.ok(new Set(fixtures.map((fixture) => fixture.toolchain)).size >= 20, "toolchains");
	});

	test("shares no output name with test/fixtures/real/", () => {
		const real = new Set(loadRealFixtures().map((fixture) => fixture.name));
		assert.deepEqual(
			fixtures.filter((fixture) => real.has(fixture.name)).map((fixture) => fixture.name),
			[],
		);
	});

	for (const fixture of fixtures) {
		test(`${fixture.name}: its decisive lines are the lines at their numbers, in order`, () =>
			assertDecisiveLinesInPlace(fixture));
	}

	test("every output has a generator, and split.json names each with its generator's toolchain", () => {
		const declared = readGenerators();
		assert.deepEqual(
			[...declared.keys()].sort(),
			fixtures.map((fixture) => fixture.name),
		);
		assert.deepEqual(
			Object.keys(split.fixtures).sort(),
			fixtures.map((fixture) => fixture.name),
		);
		for (const fixture of fixtures) {
			assert.equal(fixture.toolchain, declared.get(fixture.name), `${fixture.name}: toolchain`);
			assert.equal(fixture.set, split.toolchains[fixture.toolchain], `${fixture.name}: its half is its toolchain's`);
		}
	});

	test("both halves hold outputs, and no toolchain is in both", () => {
		const halves = new Map<string, Set<string>>();
		for (const fixture of fixtures) {
			const sets = halves.get(fixture.toolchain) ?? new Set<string>();
			sets.add(fixture.set);
			halves.set(fixture.toolchain, sets);
		}
		assert.deepEqual(
			[...halves].filter(([, sets]) => sets.size > 1).map(([toolchain]) => toolchain),
			[],
		);
		const tuning = fixtures.filter((fixture) => fixture.set === "tuning").length;
		const heldout = fixtures.filter((fixture) => fixture.set === "heldout").length;
		assert.ok(tuning > 0 && heldout > 0, `tuning ${tuning}, heldout ${heldout}`);
		assert.ok(Math.abs(tuning - heldout) <= 2, `tuning ${tuning}, heldout ${heldout}: roughly half each`);
	});
});

describe("the late unseen set", () => {
	const late = loadLateFixtures();
	const known = new Set([...loadRealFixtures(), ...fixtures].map((fixture) => fixture.name));

	test("has 12 outputs of toolchains the unseen corpus does not have, each with its generator", () => {
		assert.equal(late.length, 12);
		const genDir = join(LATE_FIXTURES_DIR, "gen");
		const declared = new Map<string, string>();
		for (const file of readdirSync(genDir).filter((name) => /^gen-.*\.sh$/.test(name))) {
			const text = readFileSync(join(genDir, file), "utf8");
			declared.set(/^NAME=([\w.-]+)$/m.exec(text)?.[1] ?? file, /^TOOLCHAIN=([\w.-]+)$/m.exec(text)?.[1] ?? "");
		}
		for (const fixture of late) {
			assert.ok(!known.has(fixture.name), `${fixture.name} is new`);
			const toolchain = declared.get(fixture.name);
			assert.ok(toolchain, `${fixture.name} has a generator`);
			assert.ok(!(toolchain in split.toolchains), `${fixture.name}: ${toolchain} is not in the unseen corpus`);
		}
	});

	for (const fixture of late) {
		test(`${fixture.name}: its decisive lines are the lines at their numbers, in order`, () =>
			assertDecisiveLinesInPlace(fixture));
	}
});

/**
 * A tuning set made after the unseen corpus (unseen-tune2/, unseen-tune3/, unseen-tune4/): at least minOutputs
 * outputs named unlike any other set's, each with a generator, none of a toolchain the held-out
 * half or the late set has, nor (newToolchainsOf) a toolchain an earlier set already has.
 */
function describeTuningSet(
	title: string,
	set: RealFixture[],
	dir: string,
	minOutputs: number,
	earlier: RealFixture[],
	newToolchainsOf: string[] = [],
): void {
	describe(title, () => {
		const late = loadLateFixtures();
		const known = new Set([...loadRealFixtures(), ...fixtures, ...late, ...earlier].map((fixture) => fixture.name));

		test(`has at least ${minOutputs} outputs, none named like an output of the other sets`, () => {
			assert.ok(set.length >= minOutputs, `${set.length} outputs`);
			assert.deepEqual(
				set.filter((fixture) => known.has(fixture.name)).map((fixture) => fixture.name),
				[],
			);
		});

		test("every output has a generator, and no toolchain is in the held-out half or the late set", () => {
			const declared = readGenerators(dir);
			assert.deepEqual(
				[...declared.keys()].sort(),
				set.map((fixture) => fixture.name),
			);
			const heldout = Object.entries(split.toolchains)
				.filter(([, half]) => half === "heldout")
				.map(([toolchain]) => toolchain);
			const lateToolchains = [...readGenerators(LATE_FIXTURES_DIR).values()];
			const forbidden = new Set([...heldout, ...lateToolchains]);
			assert.ok(forbidden.size >= 20, `${forbidden.size} forbidden toolchains read`);
			assert.deepEqual(
				[...declared]
					.filter(([, toolchain]) => forbidden.has(toolchain))
					.map(([name, toolchain]) => `${name}: ${toolchain}`),
				[],
			);
			if (newToolchainsOf.length > 0) {
				const older = new Set([
					...Object.keys(split.toolchains),
					...lateToolchains,
					...newToolchainsOf.flatMap((other) => [...readGenerators(other).values()]),
				]);
				assert.deepEqual(
					[...declared]
						.filter(([, toolchain]) => older.has(toolchain))
						.map(([name, toolchain]) => `${name}: ${toolchain}`),
					[],
				);
			}
		});

		for (const fixture of set) {
			test(`${fixture.name}: its decisive lines are the lines at their numbers, in order`, () =>
				assertDecisiveLinesInPlace(fixture, MIN_TUNE2_OUTPUT_CHARS));
		}
	});
}

describeTuningSet("the second tuning set", loadTune2Fixtures(), TUNE2_FIXTURES_DIR, 8, []);
describeTuningSet("the third tuning set", loadTune3Fixtures(), TUNE3_FIXTURES_DIR, 12, loadTune2Fixtures(), [
	TUNE2_FIXTURES_DIR,
]);
describeTuningSet(
	"the fourth tuning set",
	loadTune4Fixtures(),
	TUNE4_FIXTURES_DIR,
	12,
	[...loadTune2Fixtures(), ...loadTune3Fixtures()],
	[TUNE2_FIXTURES_DIR, TUNE3_FIXTURES_DIR],
);

describe("the CI log set", () => {
	const ci = loadCiFixtures();
	const ciSplit = loadUnseenSplit(CI_FIXTURES_DIR);
	/** A timestamped line as ci-runner.sh prints one: ISO 8601 UTC, seven fractional digits. */
	const STAMPED = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{7}Z /;

	test("has at least 10 jobs of 10 toolchains, each with its generator and its half in split.json", () => {
		assert.ok(ci.length >= 10, `${ci.length} jobs`);
		assert.ok(new Set(ci.map((fixture) => fixture.toolchain)).size >= 10, "toolchains");
		const declared = readGenerators(CI_FIXTURES_DIR);
		assert.deepEqual(
			[...declared.keys()].sort(),
			ci.map((fixture) => fixture.name),
		);
		for (const fixture of ci) {
			assert.equal(fixture.toolchain, declared.get(fixture.name), `${fixture.name}: toolchain`);
			assert.equal(fixture.set, ciSplit.toolchains[fixture.toolchain], `${fixture.name}: its half is its toolchain's`);
		}
		const tuning = ci.filter((fixture) => fixture.set === "tuning").length;
		assert.ok(tuning > 0 && ci.length - tuning > 0, `tuning ${tuning} of ${ci.length}`);
	});

	test("is printed as hosted CI prints a job: steps in groups, every line timestamped, a failing step closed", () => {
		for (const fixture of ci) {
			assert.ok(
				fixture.lines.every((line) => STAMPED.test(line)),
				`${fixture.name}: every line is timestamped`,
			);
			const steps = fixture.lines.filter((line) => line.includes(" ##[group]Run ")).length;
			assert.ok(steps >= 2, `${fixture.name}: ${steps} steps`);
			assert.match(fixture.lines.at(-1) ?? "", / ##\[error\]Process completed with exit code \d+\.$/, fixture.name);
		}
	});

	for (const fixture of ci) {
		test(`${fixture.name}: its decisive lines are the lines at their numbers, in order`, () =>
			assertDecisiveLinesInPlace(fixture, 20_000));
	}
});
