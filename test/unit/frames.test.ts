// An output keeps its decisive lines when it is one step of a CI job: the outputs of real/ and the
// four tuning sets, put unchanged inside hosted CI services' frames (test/fixtures/ci/frames.ts:
// the runner's preamble, checkout and set-up steps, the failing step, the post-job cleanup; each
// line stamped where the service stamps lines), shows every decisive line at its new number, but the
// few listed in FRAME_KNOWN_MISSES (which it must not show); and a tiny budget still ends the view
// with the job's last line. The held-out sets are measured framed by `npm run frames`, as counts.

import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { DEFAULT_CONFIG } from "../../src/config/config.js";
import { CI_FRAMES, frameLines, frameOutput } from "../fixtures/ci/frames.js";
import { isShownInView, parseViewLines } from "../fixtures/real/fixtures.js";
import { loadTuningFixtures } from "../fixtures/tuning.js";
import { buildDefaultView } from "../fixtures/default-view.js";

/** The tuning outputs but the CI logs (jobs already). */
const FIXTURES = [...loadTuningFixtures()].filter(([key]) => !key.startsWith("ci/")).map(([, fixture]) => fixture);

/**
 * Decisive lines a framed view does not show, by frame and output, at their framed line numbers
 * (of the frames tested here; `npm run frames -- --missed` lists the others').
 */
const FRAME_KNOWN_MISSES: Readonly<Record<string, Readonly<Record<string, readonly number[]>>>> = {
	// The tool's two group lines push the line above the tail's out of it; the report there starts at a group.
	"github-grouped": { "pytest-benchmark-regression": [405] },
};

const dir = mkdtempSync(join(tmpdir(), "pi-overflow-frames-"));
after(() => rmSync(dir, { recursive: true, force: true }));

async function viewOf(text: string, thresholdChars: number) {
	const path = join(dir, "job.log");
	writeFileSync(path, text);
	return buildDefaultView(path, thresholdChars);
}

/**
 * The frames tested here, and which outputs: GitHub's plain frame with every output, its variants
 * with every fourth, GitLab's stamped frame, an install chained before the command, two multiplexers' tagged jobs,
 * a Dockerfile's `RUN` under BuildKit, parallel tasks' interleaved lines and a zip's 300 lines after
 * the output with every other one, a journal's and a pod's prefix before each line with every fourth,
 * 3.3 MB of passing lines before it with every eighth (the unit tier stays fast); GitLab's plain
 * frame, Travis, Jenkins and
 * concurrently's jobs, whose views read as bare or as compose's ones do, in `npm run frames` only.
 */
const TESTED_FRAMES: Readonly<Record<string, (index: number) => boolean>> = {
	github: () => true,
	// GitHub's frame's variants: a quarter each (the plain frame takes every output); the grouped one's
	// quarter holds its known miss.
	"github-always": (index) => index % 4 === 0,
	"github-grouped": (index) => index % 4 === 2,
	"gitlab-stamped": (index) => index % 2 === 0,
	chained: (index) => index % 2 === 1,
	compose: (index) => index % 2 === 0,
	turbo: (index) => index % 2 === 1,
	buildkit: (index) => index % 2 === 1,
	parallel: (index) => index % 2 === 0,
	"zip-after": (index) => index % 2 === 1,
	// 3.3 MB before each output: a few of them.
	"long-suite": (index) => index % 8 === 3,
	journald: (index) => index % 4 === 0,
	kubectl: (index) => index % 4 === 2,
};

describe("an output as the failing step of a CI job", () => {
	for (const frame of CI_FRAMES.filter((candidate) => TESTED_FRAMES[candidate.name] !== undefined)) {
		test(`${frame.name}: tuning outputs keep their decisive lines`, async () => {
			const problems: string[] = [];
			for (const fixture of FIXTURES.filter((_, index) => TESTED_FRAMES[frame.name]!(index))) {
				const framed = frameOutput(frame, fixture);
				const view = await viewOf(framed.text, DEFAULT_CONFIG.thresholdChars);
				assert.ok(view.text.length <= DEFAULT_CONFIG.thresholdChars);
				const shown = parseViewLines(view.text);
				const known = new Set(FRAME_KNOWN_MISSES[frame.name]?.[fixture.name] ?? []);
				for (const line of framed.decisive) {
					const isShown = isShownInView(shown, line.lineNumber, line.shown, DEFAULT_CONFIG.maxLineChars);
					if (isShown === known.has(line.lineNumber))
						problems.push(
							`${fixture.name}:${line.lineNumber} ${isShown ? "shown, but listed as a known miss" : `not shown: ${line.shown.slice(0, 100)}`}`,
						);
				}
			}
			assert.deepEqual(problems, []);
		});
	}

	test("the GitHub frame shows as many odd lines as the bare view, each one the bare view shows: a panic's backtrace", async () => {
		// The job's other steps share a few shapes with the output (a runner's `##[endgroup]`); their lines
		// once counted in the share that says the output is of few shapes, and hid every odd line here.
		// Which odd lines are named may differ: a shape hash reads a line's leading spaces as indentation
		// (at most 16) only at its start, so after a timestamp the backtrace's `at /rustc/…` lines indented
		// 18 and 23 spaces are of two shapes, and line 351 is rare there (bare, a block line of line 345).
		const fixture = FIXTURES.find((candidate) => candidate.name === "rust-thread-panic");
		assert.ok(fixture);
		const frame = CI_FRAMES.find((candidate) => candidate.name === "github")!;
		const rareOf = (text: string) =>
			text
				.split("\n")
				.filter((line) => line.includes("[a rare line"))
				.map((line) => Number(/^ *(\d+)/.exec(line)![1]));
		const bare = (await viewOf(`${fixture.lines.join("\n")}\n`, DEFAULT_CONFIG.thresholdChars)).text;
		const bareRare = rareOf(bare);
		assert.ok(bareRare.length >= 5, bare);
		const framed = frameLines(frame, fixture.lines);
		const framedRare = rareOf((await viewOf(framed.text, DEFAULT_CONFIG.thresholdChars)).text);
		assert.equal(framedRare.length, bareRare.length);
		// Each at its bare number (the frame puts the output after the runner's lines), and an output's line.
		const bareNumberOf = new Map(fixture.lines.map((_, index) => [framed.numberOf(index + 1), index + 1]));
		const shownBare = parseViewLines(bare);
		assert.deepEqual(
			framedRare.filter((lineNumber) => !shownBare.has(bareNumberOf.get(lineNumber) ?? 0)),
			[],
		);
	});

	test("a tiny budget still ends the view with the job's last line", async () => {
		const frame = CI_FRAMES.find((candidate) => candidate.name === "github")!;
		for (const fixture of FIXTURES.filter((_, index) => index % 4 === 0)) {
			const framed = frameOutput(frame, fixture);
			const last = framed.text.split("\n").length - 1;
			for (const thresholdChars of [1000, 3000]) {
				const view = await viewOf(framed.text, thresholdChars);
				assert.ok(view.text.length <= thresholdChars, `${fixture.name} at ${thresholdChars}`);
				assert.ok(parseViewLines(view.text).has(last), `${fixture.name} at ${thresholdChars}: line ${last}`);
			}
		}
	});
});
