// `npm run recall`: how many decisive lines of the real toolchain outputs (test/fixtures/real/)
// survive, and at what size, in pi-overflow's bounded view at the default settings — against the
// baseline measured in the same run: Pi's own bash cut (truncateTail: the last 2000 lines or the
// last 50 KB, whichever is hit first, whole lines counted from the end, plus its one-line notice).
// Also how many non-decisive lines the signal pattern matches (its precision). Not a test.

import { DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, formatSize, truncateTail } from "@mariozechner/pi-coding-agent";
import { DEFAULT_CONFIG } from "../src/config.js";
import { buildViewFromFile } from "../src/view.js";
import { type DecisiveLine, isShownInView, loadRealFixtures, parseViewLines, type RealFixture, stripAnsi, withoutLineEnd } from "../test/fixtures/real/fixtures.js";

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
	/** Decisive lines the view does not show, with the reason. */
	missed: string[];
}

const config = DEFAULT_CONFIG;

/** Pi's bash cut of the whole output: which 1-based lines it keeps, and the text the model gets. */
function cutLikePi(fixture: RealFixture): { firstKeptLine: number; chars: number } {
	const cut = truncateTail(fixture.text, { maxLines: DEFAULT_MAX_LINES, maxBytes: DEFAULT_MAX_BYTES });
	// truncateTail splits on "\n", so a final newline is one more (empty) line at the end.
	const splitLines = fixture.text.split("\n").length;
	const firstKeptLine = splitLines - cut.outputLines + 1 + (cut.lastLinePartial ? 1 : 0);
	const startLine = cut.totalLines - cut.outputLines + 1;
	const notice = cut.truncated
		? `\n\n[Showing lines ${startLine}-${cut.totalLines} of ${cut.totalLines}${cut.truncatedBy === "bytes" ? ` (${formatSize(DEFAULT_MAX_BYTES)} limit)` : ""}. Full output: /tmp/pi-bash-0123456789abcdef.log]`
		: "";
	return { firstKeptLine, chars: cut.content.length + notice.length };
}

/** Why the view left a decisive line out. */
function explainMiss(fixture: RealFixture, line: DecisiveLine, shownText: string | undefined): string {
	if (shownText !== undefined) return `shown differently: ${JSON.stringify(shownText.slice(0, 120))}`;
	if (line.lineNumber <= config.headLines) return "in the head, dropped to fit the budget";
	if (line.lineNumber > fixture.lines.length - config.tailLines) return "in the tail, dropped to fit the budget";
	if (!config.signalRegex.test(stripAnsi(withoutLineEnd(line.raw)))) return "not matched by signalPattern";
	return "a signal line, not chosen (maxSignalLines, spreading or budget)";
}

async function measure(fixture: RealFixture): Promise<Row> {
	const view = await buildViewFromFile(fixture.path, {
		thresholdChars: config.thresholdChars,
		headLines: config.headLines,
		tailLines: config.tailLines,
		maxSignalLines: config.maxSignalLines,
		maxLineChars: config.maxLineChars,
		signalRegex: config.signalRegex,
		id: "0123456789ab",
		toolName: "bash",
	});
	const shown = parseViewLines(view.text);
	const missed: string[] = [];
	for (const line of fixture.decisive) {
		if (isShownInView(shown, line.lineNumber, line.shown, config.maxLineChars)) continue;
		missed.push(`${fixture.name}:${line.lineNumber}: ${line.shown.slice(0, 120)} — ${explainMiss(fixture, line, shown.get(line.lineNumber))}`);
	}
	const pi = cutLikePi(fixture);
	const decisive = new Set(fixture.decisive.map((line) => line.lineNumber));
	let otherMatches = 0;
	fixture.lines.forEach((raw, index) => {
		if (!decisive.has(index + 1) && config.signalRegex.test(stripAnsi(withoutLineEnd(raw)))) otherMatches++;
	});
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
		missed,
	};
}

function percent(part: number, whole: number): string {
	return whole === 0 ? "-" : `${Math.round((100 * part) / whole)}%`;
}

const rows: Row[] = [];
for (const fixture of loadRealFixtures()) rows.push(await measure(fixture));

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
	missed: [],
};
for (const row of rows) {
	for (const key of ["lines", "bytes", "decisive", "viewKept", "viewChars", "piKept", "piChars", "otherMatches"] as const) total[key] += row[key];
	total.missed.push(...row.missed);
}

const header = ["fixture", "lines", "bytes", "decisive", "view kept", "view chars", "pi-cut kept", "pi-cut chars", "other matches"];
const table = [...rows, total].map((row) => [
	row.name,
	String(row.lines),
	String(row.bytes),
	String(row.decisive),
	`${row.viewKept} (${percent(row.viewKept, row.decisive)})`,
	String(row.viewChars),
	`${row.piKept} (${percent(row.piKept, row.decisive)})`,
	String(row.piChars),
	String(row.otherMatches),
]);
const widths = header.map((title, column) => Math.max(title.length, ...table.map((cells) => cells[column].length)));
const format = (cells: string[]): string => cells.map((cell, column) => (column === 0 ? cell.padEnd(widths[column]) : cell.padStart(widths[column]))).join("  ");

console.log(`recall on ${rows.length} real toolchain outputs — pi-overflow's view (thresholdChars ${config.thresholdChars}, head ${config.headLines}, tail ${config.tailLines}, signals ${config.maxSignalLines}) vs Pi's bash cut (last ${DEFAULT_MAX_LINES} lines / ${formatSize(DEFAULT_MAX_BYTES)})`);
console.log(format(header));
for (const cells of table) console.log(format(cells));
console.log(
	`decisive lines kept: view ${percent(total.viewKept, total.decisive)} in ${total.viewChars} chars, Pi's cut ${percent(total.piKept, total.decisive)} in ${total.piChars} chars (view/Pi size ${(total.viewChars / total.piChars).toFixed(2)})`,
);
console.log("other matches: non-decisive lines the signal pattern matches (compiler warnings are weak signals the view shows last)");
if (total.missed.length === 0) console.log("the view shows every decisive line");
else for (const line of total.missed) console.log(`MISSED ${line}`);
