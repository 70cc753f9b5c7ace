// `npm run recall`: how many decisive lines of real toolchain outputs survive, and at what size,
// in pi-overflow's bounded view at the default settings — against the baseline measured in the
// same run: Pi's own bash cut (truncateTail: the last 2000 lines or the last 50 KB, whichever is
// hit first, whole lines counted from the end, plus its one-line notice). Five sets, reported
// apart: test/fixtures/real/, the unseen corpus's tuning and held-out halves
// (test/fixtures/unseen/split.json), the second, third and fourth tuning sets
// (test/fixtures/unseen-tune2/, unseen-tune3/, unseen-tune4/) and the late unseen set made after
// tuning ended (test/fixtures/unseen-late/), and the CI logs' tuning and held-out halves
// (test/fixtures/ci/: multi-step jobs printed as hosted CI prints them).
// `--set real|tuning|tune2|tune3|tune4|heldout|late|ci|ciheldout` measures one set; `--json` prints
// only each set's totals, as one JSON line (what `npm run ablate` reads). Not a test.
// The held-out halves and the late set are reported as counts only (never line contents): do not
// tune on them.

import { DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, formatSize } from "@mariozechner/pi-coding-agent";
import { cutLikePi } from "./pi-cut.js";
import { formatTable } from "./table.js";
import { DEFAULT_CONFIG } from "../src/config/config.js";
import { classifySeverity, SEVERITY_ERROR } from "../src/signals/policy.js";
import { countBlockForms } from "../src/signals/forms.js";
import { countPatternEntries, SIGNAL_PATTERN_PARTS } from "../src/signals/pattern.js";
import {
	type DecisiveLine,
	isShownInView,
	loadRealFixtures,
	parseViewLines,
	type RealFixture,
	stripAnsi,
	withoutLineEnd,
} from "../test/fixtures/real/fixtures.js";
import { loadUnseenFixtures } from "../test/fixtures/unseen/fixtures.js";
import { loadLateFixtures } from "../test/fixtures/unseen-late/fixtures.js";
import { loadCiFixtures } from "../test/fixtures/ci/fixtures.js";
import { loadTune2Fixtures } from "../test/fixtures/unseen-tune2/fixtures.js";
import { loadTune3Fixtures } from "../test/fixtures/unseen-tune3/fixtures.js";
import { loadTune4Fixtures } from "../test/fixtures/unseen-tune4/fixtures.js";
import { buildDefaultView } from "../test/fixtures/default-view.js";

/** A shown line within this many lines of a decisive line counts as its context (precision). */
const CONTEXT_RADIUS_LINES = 5;

interface Row {
	name: string;
	lines: number;
	bytes: number;
	decisive: number;
	viewKept: number;
	viewChars: number;
	piKept: number;
	piChars: number;
	/** Non-decisive lines the signal pattern matches. */
	otherMatches: number;
	/** Lines the view shows outside the head and tail sections (its signal lines). */
	signalShown: number;
	/** Of those, the ones that are decisive or within CONTEXT_RADIUS_LINES of a decisive line. */
	signalNear: number;
	/** Decisive lines the view does not show, with the reason. */
	missed: string[];
	/** Per default pattern part (SIGNAL_PATTERN_PARTS order): lines it matches, of those the error-severity ones (not weak warnings), and the decisive ones. */
	partMatches: number[];
	partErrors: number[];
	partDecisive: number[];
}

interface MeasuredSet {
	title: string;
	rows: Row[];
	/** Print which lines were missed (never for the held-out half). */
	showContents: boolean;
}

/** Each set, in report order: its title and its fixtures. The held-out half and the late set are reported as counts only. */
const SET_SOURCES = {
	real: { title: "real/", load: () => loadRealFixtures() },
	tuning: { title: "unseen tuning", load: () => loadUnseenFixtures("tuning") },
	tune2: { title: "tuning set 2", load: loadTune2Fixtures },
	tune3: { title: "tuning set 3", load: loadTune3Fixtures },
	tune4: { title: "tuning set 4", load: loadTune4Fixtures },
	heldout: { title: "unseen held-out", load: () => loadUnseenFixtures("heldout") },
	late: { title: "unseen late", load: loadLateFixtures },
	ci: { title: "CI logs tuning", load: () => loadCiFixtures("tuning") },
	ciheldout: { title: "CI logs held-out", load: () => loadCiFixtures("heldout") },
} satisfies Record<string, { title: string; load: () => RealFixture[] }>;
type SetName = keyof typeof SET_SOURCES;
const SETS = Object.keys(SET_SOURCES) as SetName[];

const config = DEFAULT_CONFIG;

/** Why the view left a decisive line out. */
function explainMiss(fixture: RealFixture, line: DecisiveLine, shownText: string | undefined): string {
	if (shownText !== undefined) return `shown differently: ${JSON.stringify(shownText.slice(0, 120))}`;
	if (line.lineNumber <= config.headLines) return "in the head, dropped to fit the budget";
	if (line.lineNumber > fixture.lines.length - config.tailLines) return "in the tail, dropped to fit the budget";
	if (!config.signalRegex.test(stripAnsi(withoutLineEnd(line.raw)))) return "not matched by signalPattern";
	return "a signal line, not chosen (maxSignalLines, spreading or budget)";
}

/**
 * Precision of the shown signal lines: the shown line numbers outside the head section (lines
 * 1..headLines) and the tail section (the last tailLines lines), and how many of them lie within
 * CONTEXT_RADIUS_LINES of a decisive line (a decisive line itself included).
 */
function countSignalPrecision(fixture: RealFixture, shownNumbers: Iterable<number>): { shown: number; near: number } {
	const decisive = fixture.decisive.map((line) => line.lineNumber);
	const tailStart = fixture.lines.length - config.tailLines;
	let shown = 0;
	let near = 0;
	for (const number of shownNumbers) {
		if (number <= config.headLines || number > tailStart) continue;
		shown++;
		if (decisive.some((line) => Math.abs(line - number) <= CONTEXT_RADIUS_LINES)) near++;
	}
	return { shown, near };
}

async function measure(fixture: RealFixture): Promise<Row> {
	const view = await buildDefaultView(fixture.path);
	const shown = parseViewLines(view.text);
	const missed: string[] = [];
	for (const line of fixture.decisive) {
		if (isShownInView(shown, line.lineNumber, line.shown, config.maxLineChars)) continue;
		missed.push(
			`${fixture.name}:${line.lineNumber}: ${line.shown.slice(0, 120)} — ${explainMiss(fixture, line, shown.get(line.lineNumber))}`,
		);
	}
	const pi = cutLikePi(fixture.text);
	const decisive = new Set(fixture.decisive.map((line) => line.lineNumber));
	let otherMatches = 0;
	const partMatches = PART_REGEXES.map(() => 0);
	const partErrors = PART_REGEXES.map(() => 0);
	const partDecisive = PART_REGEXES.map(() => 0);
	fixture.lines.forEach((raw, index) => {
		const text = stripAnsi(withoutLineEnd(raw));
		const isDecisive = decisive.has(index + 1);
		if (!isDecisive && config.signalRegex.test(text)) otherMatches++;
		PART_REGEXES.forEach((regex, part) => {
			if (!regex.test(text)) return;
			partMatches[part]!++;
			if (classifySeverity(text) === SEVERITY_ERROR) partErrors[part]!++;
			if (isDecisive) partDecisive[part]!++;
		});
	});
	const precision = countSignalPrecision(fixture, shown.keys());
	return {
		name: fixture.name,
		lines: fixture.lines.length,
		bytes: Buffer.byteLength(fixture.text),
		decisive: fixture.decisive.length,
		viewKept: fixture.decisive.length - missed.length,
		viewChars: view.text.length,
		piKept: fixture.decisive.filter((line) => line.lineNumber >= pi.firstKeptLine).length,
		piChars: pi.chars,
		otherMatches,
		signalShown: precision.shown,
		signalNear: precision.near,
		missed,
		partMatches,
		partErrors,
		partDecisive,
	};
}

function percent(part: number, whole: number): string {
	return whole === 0 ? "-" : `${Math.round((100 * part) / whole)}%`;
}

function sumRows(rows: Row[]): Row {
	const total: Row = {
		name: "TOTAL",
		lines: 0,
		bytes: 0,
		decisive: 0,
		viewKept: 0,
		viewChars: 0,
		piKept: 0,
		piChars: 0,
		otherMatches: 0,
		signalShown: 0,
		signalNear: 0,
		missed: [],
		partMatches: [],
		partErrors: [],
		partDecisive: [],
	};
	for (const row of rows) {
		for (const key of [
			"lines",
			"bytes",
			"decisive",
			"viewKept",
			"viewChars",
			"piKept",
			"piChars",
			"otherMatches",
			"signalShown",
			"signalNear",
		] as const)
			total[key] += row[key];
		total.missed.push(...row.missed);
	}
	return total;
}

/** Each default pattern part on its own, to count what it matches. */
const PART_REGEXES = SIGNAL_PATTERN_PARTS.map((part) => new RegExp(part.source, "i"));
/** A part that matches more than this share of one output's lines is a precision bug to look at. */
const FLOOD_SHARE = 0.05;

/** How many lines each pattern part matched over a set, how many were decisive, and its largest share of one output. */
function printPatternParts(set: MeasuredSet): void {
	console.log(
		`pattern parts (each on its own; a line can match several; "errors" are the matched lines of error severity, the rest weak warnings shown last; "largest share": the errors' largest share of one output's lines, flagged above ${FLOOD_SHARE * 100}%):`,
	);
	const table = SIGNAL_PATTERN_PARTS.map((part, index) => {
		let matched = 0;
		let errors = 0;
		let decisive = 0;
		let largest = 0;
		for (const row of set.rows) {
			matched += row.partMatches[index]!;
			errors += row.partErrors[index]!;
			decisive += row.partDecisive[index]!;
			largest = Math.max(largest, row.lines === 0 ? 0 : row.partErrors[index]! / row.lines);
		}
		const label = part.source.length > 48 ? `${part.source.slice(0, 47)}…` : part.source;
		return [
			`${index + 1}. ${label}`,
			String(matched),
			String(errors),
			String(decisive),
			`${(100 * largest).toFixed(1)}%${largest > FLOOD_SHARE ? " !" : ""}`,
		];
	});
	for (const line of formatTable(["part", "lines matched", "errors", "decisive", "largest share"], table))
		console.log(`  ${line}`);
}

function printSet(set: MeasuredSet): void {
	const total = sumRows(set.rows);
	console.log(`\n== ${set.title}: ${set.rows.length} outputs ==`);
	const header = [
		"fixture",
		"lines",
		"bytes",
		"decisive",
		"view kept",
		"view chars",
		"signal shown",
		"near decisive",
		"pi-cut kept",
		"pi-cut chars",
		"other matches",
	];
	const table = [...set.rows, total].map((row) => [
		row.name,
		String(row.lines),
		String(row.bytes),
		String(row.decisive),
		`${row.viewKept} (${percent(row.viewKept, row.decisive)})`,
		String(row.viewChars),
		String(row.signalShown),
		`${row.signalNear} (${percent(row.signalNear, row.signalShown)})`,
		`${row.piKept} (${percent(row.piKept, row.decisive)})`,
		String(row.piChars),
		String(row.otherMatches),
	]);
	for (const line of formatTable(header, table)) console.log(line);
	printPatternParts(set);
	if (!set.showContents) {
		console.log(
			`(${set.title}: counts only; ${total.decisive - total.viewKept} decisive lines missed — do not look at them while tuning)`,
		);
		return;
	}
	if (total.missed.length === 0) console.log("the view shows every decisive line");
	else for (const line of total.missed) console.log(`MISSED ${line}`);
}

/** A set's totals, as `--json` prints them. */
export interface SetTotals {
	title: string;
	outputs: number;
	decisive: number;
	kept: number;
	served: number;
	meanChars: number;
}

function totalsOf(set: MeasuredSet): SetTotals {
	const total = sumRows(set.rows);
	return {
		title: set.title,
		outputs: set.rows.length,
		decisive: total.decisive,
		kept: total.viewKept,
		served: set.rows.filter((row) => row.viewKept === row.decisive).length,
		meanChars: set.rows.length === 0 ? 0 : Math.round(total.viewChars / set.rows.length),
	};
}

/** A set's row of the summary: its totals, then precision and Pi's own cut. */
function summarise(set: MeasuredSet): string[] {
	const total = sumRows(set.rows);
	const { outputs, decisive, kept, served, meanChars } = totalsOf(set);
	return [
		set.title,
		String(outputs),
		`${kept}/${decisive} (${percent(kept, decisive)})`,
		`${served}/${outputs} (${percent(served, outputs)})`,
		String(meanChars),
		`${total.signalNear}/${total.signalShown} (${percent(total.signalNear, total.signalShown)})`,
		`${total.piKept}/${decisive} (${percent(total.piKept, decisive)})`,
		String(outputs === 0 ? 0 : Math.round(total.piChars / outputs)),
	];
}

function parseSets(argv: string[]): SetName[] {
	const index = argv.indexOf("--set");
	if (index < 0) return [...SETS];
	const value = argv[index + 1];
	if (!SETS.includes(value as SetName))
		throw new Error(`--set must be one of ${SETS.join(", ")}; got ${JSON.stringify(value ?? null)}`);
	return [value as SetName];
}

async function measureSet(name: SetName): Promise<MeasuredSet> {
	const rows: Row[] = [];
	for (const fixture of SET_SOURCES[name].load()) rows.push(await measure(fixture));
	return {
		title: SET_SOURCES[name].title,
		rows,
		showContents: name !== "heldout" && name !== "late" && name !== "ciheldout",
	};
}

const measured: MeasuredSet[] = [];
for (const name of parseSets(process.argv.slice(2))) measured.push(await measureSet(name));

if (process.argv.includes("--json")) {
	console.log(JSON.stringify(measured.map(totalsOf)));
	process.exit(0);
}

console.log(
	`recall — pi-overflow's view (thresholdChars ${config.thresholdChars}, head ${config.headLines}, tail ${config.tailLines}, signals ${config.maxSignalLines}) vs Pi's bash cut (last ${DEFAULT_MAX_LINES} lines / ${formatSize(DEFAULT_MAX_BYTES)})`,
);
console.log(
	`precision: of the lines the view shows outside its head (lines 1-${config.headLines}) and tail (the last ${config.tailLines} lines), the share that are decisive or within ${CONTEXT_RADIUS_LINES} lines of a decisive line`,
);
console.log(
	"other matches: non-decisive lines the signal pattern matches (compiler warnings are weak signals the view shows last)",
);
for (const set of measured) printSet(set);

console.log("\n== summary ==");
const summaryHeader = [
	"set",
	"outputs",
	"decisive kept",
	"fully served",
	"mean view chars",
	"precision",
	"pi-cut kept",
	"pi-cut mean chars",
];
for (const line of formatTable(summaryHeader, measured.map(summarise))) console.log(line);
const entries = countPatternEntries();
const forms = countBlockForms();
console.log(
	`default signal pattern: ${entries.principle + entries.tool} alternatives, ${entries.principle} principles, ${entries.tool} naming one tool's output (SIGNAL_PATTERN_PARTS' \`tool\`; ${entries.tool - entries.withoutFixture} with a tuning fixture, ${entries.withoutFixture} on a documented format alone)`,
);
console.log(
	`block forms (src/signals/forms.ts): ${forms.principle + forms.tool}, ${forms.principle} principles, ${forms.tool} naming one tool's output (${forms.tool - forms.withoutFixture} with a tuning fixture, ${forms.withoutFixture} on a documented format alone)`,
);
