// Every count a view states is true of the whole output (issue 22 item 10): for every output of the
// corpora the recall and digest benches use, the view is built as `npm run recall` builds it, and each
// note it prints is checked against the original text, counting lines by the same shape definitions
// the view uses (signals/shape.ts: shapeOf for signal lines, hashShape for rare and repeated lines).

import assert from "node:assert/strict";
import { test } from "node:test";
import { DEFAULT_CONFIG } from "../../src/config/config.js";
import { keepCharsFor, renderLine, stripAnsi } from "../../src/lines/render.js";
import { frameLengthAt, frameSamples, type LineFrame, learnLineReading } from "../../src/lines/frame.js";
import { stampLength, wrappedLineOf } from "../../src/lines/stamp.js";
import { hashShape, shapeOf, shapeStart, shapeWindowOf } from "../../src/signals/shape.js";
import { loadRealFixtures, type RealFixture, withoutLineEnd } from "../fixtures/real/fixtures.js";
import { loadUnseenFixtures } from "../fixtures/unseen/fixtures.js";
import { loadLateFixtures } from "../fixtures/unseen-late/fixtures.js";
import { loadCiFixtures } from "../fixtures/ci/fixtures.js";
import { loadTune2Fixtures } from "../fixtures/unseen-tune2/fixtures.js";
import { loadTune3Fixtures } from "../fixtures/unseen-tune3/fixtures.js";
import { loadTune4Fixtures } from "../fixtures/unseen-tune4/fixtures.js";
import { buildDefaultView } from "../fixtures/default-view.js";

const config = DEFAULT_CONFIG;
const keepChars = keepCharsFor(config.maxLineChars);

/** A shown line with a note: `  123: text  [note]` (a key line too). */
const NOTED_LINE = /^ *(?:key +)?(\d+)[:-] .*? {2}\[([^\]\n]*)\]$/;

/** Counts over the whole output, made once per output and shape definition as asked. */
class Truth {
	private readonly lines: string[];
	private signalShapes: Map<string, number[]> | undefined;
	private hashes: Map<number, { count: number; first: number; last: number }> | undefined;
	/** The skeleton bytes each line's shape hash reads: past the frame of the output's first 64 lines (its timestamp, its learned frame). */
	private readonly shapeWindow: number;
	/** The frame its lines are written in, learned from its first bytes as the scan learns it (lines/frame.ts): signal lines are read past it. */
	private readonly frame: LineFrame | undefined;
	constructor(readonly fixture: RealFixture) {
		this.lines = fixture.lines.map(withoutLineEnd);
		const bytes = Buffer.from(fixture.text, "utf8");
		this.frame = learnLineReading(
			frameSamples(bytes.length).map(({ from, to }) => bytes.subarray(from, to).toString("utf8")),
			bytes.length,
		).frame;
		this.shapeWindow = shapeWindowOf(this.lines.slice(0, 64), this.frame);
	}

	line(lineNumber: number): string {
		return this.lines[lineNumber - 1];
	}

	/** The default pattern matches the line, its text after a timestamp and frame, or the line a JSON-lines record wraps. */
	isSignal(text: string): boolean {
		const shown = stripAnsi(text);
		let stamp = stampLength(shown);
		if (this.frame !== undefined) stamp += frameLengthAt(this.frame, shown, stamp);
		const wrapped = wrappedLineOf(shown);
		return (
			config.signalRegex.test(shown) ||
			(stamp > 0 && config.signalRegex.test(shown.slice(stamp))) ||
			(wrapped !== undefined && config.signalRegex.test(wrapped))
		);
	}

	/** The signal lines of the output of this signal line's shape (the collector's shape key). */
	signalLinesOfShape(lineNumber: number): number[] {
		this.signalShapes ??= this.groupSignalLines();
		return this.signalShapes.get(this.signalKey(lineNumber)) ?? [];
	}

	/** Lines of the output with this line's shape hash (the shape counter's): how many, the first and the last. */
	linesOfHash(lineNumber: number): { count: number; first: number; last: number } {
		if (this.hashes === undefined) {
			this.hashes = new Map();
			for (let n = 1; n <= this.lines.length; n++) {
				const hash = this.hashOf(n);
				const seen = this.hashes.get(hash);
				if (seen) {
					seen.count++;
					seen.last = n;
				} else this.hashes.set(hash, { count: 1, first: n, last: n });
			}
		}
		return this.hashes.get(this.hashOf(lineNumber)) ?? { count: 0, first: 0, last: 0 };
	}

	/** Lines of the output with exactly this line's text, as the view renders it. */
	linesWithText(lineNumber: number): number {
		const text = this.rendered(lineNumber);
		let count = 0;
		for (let n = 1; n <= this.lines.length; n++) if (this.rendered(n) === text) count++;
		return count;
	}

	signalMatches(): number {
		return this.lines.filter((line) => this.isSignal(line)).length;
	}

	private rendered(lineNumber: number): string {
		return renderLine(lineNumber, this.line(lineNumber), keepChars).text;
	}

	private signalKey(lineNumber: number): string {
		return shapeOf(this.rendered(lineNumber));
	}

	private hashOf(lineNumber: number): number {
		const bytes = Buffer.from(this.line(lineNumber), "utf8");
		return hashShape(bytes, shapeStart(bytes, 0, bytes.length), bytes.length, this.shapeWindow);
	}

	private groupSignalLines(): Map<string, number[]> {
		const groups = new Map<string, number[]>();
		for (let n = 1; n <= this.lines.length; n++) {
			if (!this.isSignal(this.line(n))) continue;
			const key = this.signalKey(n);
			const group = groups.get(key);
			if (group) group.push(n);
			else groups.set(key, [n]);
		}
		return groups;
	}
}

/** What is wrong with the note at `lineNumber` (undefined when it is true of the whole output). */
function checkNote(truth: Truth, lineNumber: number, note: string): string | undefined {
	// The line's own text, not a note.
	if (withoutLineEnd(truth.line(lineNumber)).endsWith(`[${note}]`)) return undefined;
	let match: RegExpExecArray | null;
	if (
		(match = /^(at least )?×(\d+) (signal )?lines of this shape(?:, the last (?:found )?at line (\d+))?$/.exec(note))
	) {
		const stated = Number(match[2]);
		const atLeast = match[1] !== undefined;
		// Signal lines of its shape (the collector's key), or lines of its shape hash (the shape counter's).
		let actual: number;
		let last: number;
		if (match[3] !== undefined) {
			const lines = truth.signalLinesOfShape(lineNumber);
			actual = lines.length;
			last = lines[lines.length - 1];
		} else {
			({ count: actual, last } = truth.linesOfHash(lineNumber));
		}
		if (atLeast ? actual < stated : actual !== stated) return `states ${note}, the output has ${actual}`;
		if (match[4] !== undefined && !atLeast && Number(match[4]) !== last)
			return `states ${note}, the last is at line ${last}`;
		return undefined;
	}
	if ((match = /^a rare line(?:: its shape appears (once|(\d+) times)(, in a row to line (\d+))?)?$/.exec(note))) {
		if (match[1] === undefined) return undefined;
		const stated = match[1] === "once" ? 1 : Number(match[2]);
		const { count: actual, first, last } = truth.linesOfHash(lineNumber);
		if (actual !== stated) return `states ${note}, the output has ${actual} lines of its shape`;
		// In a row: the stated number of lines, from this one to the stated last, and no other.
		if (match[3] !== undefined && (first !== lineNumber || last !== Number(match[4]) || last - first + 1 !== actual))
			return `states ${note}, its lines run from line ${first} to line ${last}`;
		return undefined;
	}
	if ((match = /^(at least )?×(\d+)$/.exec(note))) {
		const stated = Number(match[2]);
		const actual = truth.linesWithText(lineNumber);
		const atLeast = match[1] !== undefined;
		return (atLeast ? actual >= stated : actual === stated)
			? undefined
			: `states ${note}, the output has ${actual} such lines`;
	}
	// A line printed again: the line it names came before, with exactly its text.
	if ((match = /^the same as line (\d+)$/.exec(note))) {
		const first = Number(match[1]);
		return first < lineNumber && truth.line(first) === truth.line(lineNumber)
			? undefined
			: `states ${note}, line ${first} is another`;
	}
	// Not a count: a JSON problem's path or record.
	if (/^(?:\$|JSON-lines record\b)/.test(note)) return undefined;
	return `an unknown note: ${note}`;
}

const SETS: Array<[string, () => RealFixture[]]> = [
	["real", () => loadRealFixtures()],
	["tuning", () => loadUnseenFixtures("tuning")],
	["tune2", loadTune2Fixtures],
	["tune3", loadTune3Fixtures],
	["tune4", loadTune4Fixtures],
	["heldout", () => loadUnseenFixtures("heldout")],
	["late", loadLateFixtures],
	["ci", () => loadCiFixtures("tuning")],
	["ciheldout", () => loadCiFixtures("heldout")],
];

test("every count a view states of a corpus output is true of the whole output", async () => {
	const wrong: string[] = [];
	let notes = 0;
	let outputs = 0;
	for (const [set, load] of SETS) {
		for (const fixture of load()) {
			outputs++;
			const view = await buildDefaultView(fixture.path);
			const truth = new Truth(fixture);
			for (const row of view.text.split("\n")) {
				const noted = NOTED_LINE.exec(row);
				if (noted) {
					notes++;
					const problem = checkNote(truth, Number(noted[1]), noted[2]);
					if (problem) wrong.push(`${set}/${fixture.name} line ${noted[1]}: ${problem}`);
				}
				const matched = /the signal pattern matched (\d+) lines? in all/.exec(row);
				if (matched) {
					notes++;
					const actual = truth.signalMatches();
					if (actual !== Number(matched[1]))
						wrong.push(`${set}/${fixture.name}: states ${matched[0]}, the output has ${actual}`);
				}
			}
		}
	}
	assert.equal(outputs, 141, "every corpus output");
	assert.ok(notes > 100, `notes checked: ${notes}`);
	assert.deepEqual(wrong, []);
});
