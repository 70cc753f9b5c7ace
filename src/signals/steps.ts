// The steps of a CI job's log, as data: the markers CI services print where a step starts and where
// one failed, each with the output it exists for. The scan records them (with the keyword prefilter,
// so a log without them costs nothing); the view outlines the steps and gives each failing step's
// first and last error a place first. Read after a line's timestamp (lines/stamp.ts), and after each
// carriage return in it: a raw log packs several markers into one line, each after a `\r` and an
// erase (`travis_fold:end:install\r\x1b[0Ktravis_time:start:6b9e3f8a\r\x1b[0K$ make check`), and a
// terminal shows what the last one leaves. Pure.

import * as renderModule from "../lines/render.js";
import * as stampModule from "../lines/stamp.js";

// Imported bindings copied into module constants once: under Pi's extension loader (jiti) every
// read of an imported binding goes through an interop Proxy, and stepMarkOf runs on candidate lines.
const { stampLength } = stampModule;
const { ANSI_PATTERN, renderTerminalLine } = renderModule;

/** A marker of a step, with the output it exists for. */
export interface StepMarker {
	/** What the line starts with (after its timestamp). */
	prefix: string;
	kind: "open" | "failed";
	/**
	 * Where a service also groups lines inside a step: the title the runner gives a step's own
	 * group. A group whose title starts otherwise is part of the step before it (a tool's group).
	 */
	stepTitle?: string;
	/** Where the prefix alone does not make a marker: what the line must say from the prefix on (a sticky regex). */
	says?: RegExp;
	why: string;
}

/** The step markers, in the order they are tried. */
export const STEP_MARKERS: readonly StepMarker[] = Object.freeze([
	{
		prefix: "##[group]",
		kind: "open",
		stepTitle: "Run ",
		why: "GitHub Actions' raw logs: `##[group]Run npm test` opens each step; a tool's `::group::` in a step is printed as `##[group]<title>` too",
	},
	{
		prefix: "::group::",
		kind: "open",
		why: "GitHub Actions' workflow command, as a script prints it: `::group::Build`",
	},
	{ prefix: "##[section]", kind: "open", why: "Azure Pipelines: `##[section]Starting: Build`" },
	{ prefix: "travis_fold:start:", kind: "open", why: "Travis CI: `travis_fold:start:install`" },
	{
		prefix: "travis_time:start:",
		kind: "open",
		why: "Travis CI: every command the build runs starts a timer, folded or not (`travis_time:start:6b9e3f8a\\r$ make check`): the script phase's commands are steps of their own",
	},
	{ prefix: "section_start:", kind: "open", why: "GitLab CI: `section_start:1700000000:build_script`" },
	{
		prefix: "##[error]",
		kind: "failed",
		why: "GitHub Actions and Azure Pipelines: `##[error]Process completed with exit code 1.` closes a failed step",
	},
	{
		prefix: 'The command "',
		kind: "failed",
		says: /The command "[^\r\n]{0,500}" exited with [1-9]\d*\./y,
		why: 'Travis CI: `The command "make check" exited with 1.` follows the failed command\'s timer',
	},
]);

/**
 * Lines that close the header a runner prints at a step's start (the command it runs, its shell and
 * environment), after a timestamp or not: what the step printed itself starts after it.
 */
export const STEP_HEADER_CLOSERS: readonly { prefix: string; why: string }[] = Object.freeze([
	{ prefix: "##[endgroup]", why: "GitHub Actions' raw logs: the `Run <command>` group ends before the step's output" },
	{ prefix: "::endgroup::", why: "GitHub Actions' workflow command, as a script prints it" },
]);

/** Does the line (its raw text) close a step's header? */
export function closesStepHeader(line: string): boolean {
	const start = stampLength(line);
	return STEP_HEADER_CLOSERS.some((closer) => line.startsWith(closer.prefix, start));
}

/** Literal keywords of the markers (lower case), added to the default prefilter's. */
export const STEP_KEYWORDS: readonly string[] = Object.freeze(
	STEP_MARKERS.map((marker) => marker.prefix.toLowerCase()),
);

/** First characters of the markers: a line starting with none of them is no marker. */
const FIRST_CHARS = new Set(STEP_MARKERS.map((marker) => marker.prefix.charCodeAt(0)));

/**
 * The step marker a line (its text, with a timestamp or not, with ANSI escapes or not) starts with,
 * or one of its carriage-return segments does: a failed step's marker before any other, else the last
 * opening one.
 */
export function stepMarkOf(line: string): StepMarker | undefined {
	let found: StepMarker | undefined;
	let at = stampLength(line);
	for (let segment = 0; segment < MAX_MARKER_SEGMENTS; segment++) {
		const marker = markerAt(line, skipEscapes(line, at));
		if (marker?.kind === "failed") return marker;
		found = marker ?? found;
		const cr = line.indexOf("\r", at);
		if (cr < 0) break;
		at = cr + 1;
	}
	return found;
}

/**
 * Carriage-return segments of a line looked at for markers, at most: a raw log packs a few into one
 * line (Travis: seven at most), a progress bar thousands that are none.
 */
export const MAX_MARKER_SEGMENTS = 16;

/** The marker at `start` of `line`. */
function markerAt(line: string, start: number): StepMarker | undefined {
	if (!FIRST_CHARS.has(line.charCodeAt(start))) return undefined;
	for (const marker of STEP_MARKERS) {
		if (!line.startsWith(marker.prefix, start)) continue;
		if (marker.says === undefined) return marker;
		marker.says.lastIndex = start;
		if (marker.says.test(line)) return marker;
	}
	return undefined;
}

const ESCAPE = 0x1b;
/** An ANSI escape (lines/render.ts ANSI_PATTERN) at a given position. */
const ESCAPE_AT = new RegExp(ANSI_PATTERN.source, "y");

/** The position after the ANSI escapes (`\x1b[0K`, `\x1b[31;1m`) at `at`. */
function skipEscapes(line: string, at: number): number {
	// Most lines the prefilter offers start with no escape: no regex run for them.
	if (line.charCodeAt(at) !== ESCAPE) return at;
	for (ESCAPE_AT.lastIndex = at; ESCAPE_AT.test(line);) at = ESCAPE_AT.lastIndex;
	return at;
}

/** A step marker the scan met. */
export interface StepMark {
	lineNumber: number;
	/** Byte offset of the line's start in what the scan was pushed (-1 when not known). */
	offset: number;
	kind: StepMarker["kind"];
	/** The line after its timestamp and marker, clipped to STEP_TITLE_CHARS. */
	title: string;
	/** Set on a group inside a step (a title other than its marker's stepTitle): it opens no step of its own. */
	within?: true;
}

/** Longest title kept of a marker line. */
export const STEP_TITLE_CHARS = 120;
/** Marks kept, at most: the latest ones (a job's failing steps are near its end). */
export const MAX_STEP_MARKS = 512;

/** The marks of one scan, in line order, in bounded memory: the latest MAX_STEP_MARKS, and how many went before them. */
export class StepLog {
	private marks: StepMark[] = [];
	/** Marks dropped from the start. */
	dropped = 0;

	add(lineNumber: number, offset: number, line: string, marker: StepMarker): void {
		// The marker may stand in a later carriage-return segment of the line.
		const at = line.indexOf(marker.prefix, stampLength(line));
		// A marker told by what it says keeps its prefix: it is part of the sentence.
		const from = at < 0 ? line.length : marker.says !== undefined ? at : at + marker.prefix.length;
		// What a terminal shows of the rest: its last draw after the markers' line erases (`$ make check`),
		// of its last few draws (a progress bar's thousands of earlier ones change nothing a title shows).
		let start = line.length;
		for (let draws = 0; draws < MAX_MARKER_SEGMENTS && start > from; draws++) start = line.lastIndexOf("\r", start - 1);
		const title = renderTerminalLine(line.slice(Math.max(from, start + 1)))
			.slice(0, STEP_TITLE_CHARS)
			.trim();
		const within = marker.kind === "open" && marker.stepTitle !== undefined && !title.startsWith(marker.stepTitle);
		this.marks.push(
			within
				? { lineNumber, offset, kind: marker.kind, title, within }
				: { lineNumber, offset, kind: marker.kind, title },
		);
		if (this.marks.length >= 2 * MAX_STEP_MARKS) {
			this.dropped += this.marks.length - MAX_STEP_MARKS;
			this.marks = this.marks.slice(this.marks.length - MAX_STEP_MARKS);
		}
	}

	result(): StepMarks {
		const kept = this.marks.slice(Math.max(0, this.marks.length - MAX_STEP_MARKS));
		return { marks: kept, dropped: this.dropped + this.marks.length - kept.length };
	}
}

export interface StepMarks {
	marks: StepMark[];
	/** Marks before these that were not kept. */
	dropped: number;
}

/** A step of a CI job's log: its lines, its title, and the marker that says it failed. */
export interface Section {
	start: number;
	end: number;
	title: string;
	failed?: StepMark;
}

/**
 * The steps the marks delimit: each opening mark to the line before the next one (the last to
 * `totalLines`); a group inside a step (StepMark.within) is part of the step it follows.
 */
export function sectionsOf(steps: StepMarks, totalLines: number): Section[] {
	const sections: Section[] = [];
	let inStep = false;
	for (const mark of steps.marks) {
		if (mark.kind === "open" && mark.within === true && inStep) continue;
		if (mark.kind === "open") {
			inStep = mark.within !== true;
			const last = sections[sections.length - 1];
			if (last !== undefined) last.end = mark.lineNumber - 1;
			sections.push({ start: mark.lineNumber, end: totalLines, title: mark.title });
		} else if (sections.length > 0) {
			sections[sections.length - 1].failed ??= mark;
		}
	}
	return sections;
}

/**
 * Where a line lies in a job some of whose steps failed: 0 in a failed step, 1 outside every step,
 * 2 in a step that passed (what a passed step printed rarely explains a failure). Every line is 0
 * when no step failed. `sections` in line order.
 */
export function stepStanding(sections: readonly Section[]): (lineNumber: number) => number {
	if (!sections.some((section) => section.failed !== undefined)) return () => 0;
	return (lineNumber) => {
		let low = 0;
		let high = sections.length - 1;
		while (low <= high) {
			const middle = (low + high) >> 1;
			const section = sections[middle];
			if (lineNumber < section.start) high = middle - 1;
			else if (lineNumber > section.end) low = middle + 1;
			else return section.failed !== undefined ? 0 : 2;
		}
		return 1;
	};
}

/** A step that failed: its last verdict, and the mark that opened it. */
export interface FailedStep {
	verdict: StepMark;
	opener: StepMark;
}

/** The last step that failed (the step that failed the job). */
export function lastFailedStep(steps: StepMarks): FailedStep | undefined {
	const marks = steps.marks;
	let failed = marks.length - 1;
	while (failed >= 0 && marks[failed].kind !== "failed") failed--;
	// The step's own opening mark (sectionsOf: a group inside a step is part of it); the nearest group when no step opened one.
	let group: StepMark | undefined;
	for (let opener = failed - 1; opener >= 0; opener--) {
		if (marks[opener].kind !== "open") continue;
		if (marks[opener].within !== true) return { verdict: marks[failed], opener: marks[opener] };
		group ??= marks[opener];
	}
	return group === undefined ? undefined : { verdict: marks[failed], opener: group };
}
