// `npm run ablate`: what each per-tool entry holds up. For every alternative of the default signal
// pattern that names one tool's output (src/signals/pattern.ts, a part's `tool`) and every block form
// only one tool prints (src/signals/forms.ts, `fixtures`), `npm run recall`'s sets are measured again
// with that entry alone taken out (bench/ablate-hook.mjs loads the module with it replaced by a source
// that never matches), and the decisive lines and fully served outputs each set loses or gains are
// printed beside the fixtures that justify the entry. `--all` measures the principles too; `--only=
// <text>` only the entries whose source contains it; `--core` measures every per-tool entry taken
// out at once (the generic core alone) and prints `npm run recall`'s report, misses and all. An entry nothing here moves is redundant with
// the rest; one only its own tuning fixtures move is knowledge no other output here needs; the
// held-out columns (counts only, never lines: do not tune on them) say what an entry is worth beyond
// what it was made for. Not a test.

import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { availableParallelism } from "node:os";
import { fileURLToPath } from "node:url";
import type { SetTotals } from "./recall.js";
import { formatTable } from "./table.js";
import { BLOCK_FORMS, type BlockForm } from "../src/signals/forms.js";
import { alternativesOf, SIGNAL_PATTERN_PARTS, type SignalPatternPart } from "../src/signals/pattern.js";

/** A source that matches no line of any output here, with a prefilter keyword of its own. */
const NEVER = String.raw`\x00pof-ablated\x00`;
const ROOT = fileURLToPath(new URL("..", import.meta.url));
/** The sets whose lines are never looked at while tuning: their columns are counts. */
const HELD_OUT_TITLES = new Set(["unseen held-out", "unseen late", "CI logs held-out"]);

interface Entry {
	/** `P<part>.<alternative>` or `F<form>`, numbered from 1 as `npm run recall` numbers parts. */
	label: string;
	source: string;
	/** The tuning fixtures that justify it; undefined for a principle. */
	fixtures?: readonly string[];
	/** The module edit that takes it out. */
	edit: { file: string; from: string; to: string };
}

/** The edit that takes the alternatives `drop` names (by index) out of a pattern part. */
function withoutAlternatives(part: SignalPatternPart, drop: (index: number) => boolean): Entry["edit"] {
	const rest = alternativesOf(part.source).filter((_, index) => !drop(index));
	return { file: "src/signals/pattern.ts", from: part.source, to: rest.length > 0 ? rest.join("|") : NEVER };
}

/** The edit that takes a block form out. */
function withoutForm(form: BlockForm): Entry["edit"] {
	return { file: "src/signals/forms.ts", from: form.source, to: NEVER };
}

function listEntries(all: boolean, only: string | undefined): Entry[] {
	const entries: Entry[] = [];
	SIGNAL_PATTERN_PARTS.forEach((part, partIndex) => {
		alternativesOf(part.source).forEach((source, index) => {
			const fixtures = part.tool?.[index];
			if (fixtures === undefined && !all) return;
			entries.push({
				label: `P${partIndex + 1}.${index + 1}`,
				source,
				fixtures,
				edit: withoutAlternatives(part, (other) => other === index),
			});
		});
	});
	BLOCK_FORMS.forEach((form, index) => {
		if (form.fixtures === undefined && !all) return;
		entries.push({
			label: `F${index + 1} ${form.kind}`,
			source: form.source,
			fixtures: form.fixtures,
			edit: withoutForm(form),
		});
	});
	return only === undefined ? entries : entries.filter((entry) => entry.source.includes(only));
}

/** `npm run recall` with `args`, its modules loaded through bench/ablate-hook.mjs. */
function recallArgs(args: readonly string[]): string[] {
	return ["--import", "tsx", "--import", "./bench/ablate-register.mjs", "bench/recall.ts", ...args];
}

/** `npm run recall --json` with one entry taken out (none for the baseline). */
function measure(edit: Entry["edit"] | undefined): Promise<SetTotals[]> {
	return new Promise((resolve, reject) => {
		const child = spawn(process.execPath, recallArgs(["--json"]), {
			cwd: ROOT,
			env: { ...process.env, POF_ABLATE: edit === undefined ? "" : JSON.stringify(edit) },
			stdio: ["ignore", "pipe", "pipe"],
		});
		let stdout = "";
		let stderr = "";
		child.stdout.setEncoding("utf8").on("data", (text: string) => (stdout += text));
		child.stderr.setEncoding("utf8").on("data", (text: string) => (stderr += text));
		child.on("error", reject);
		child.on("close", (code) => {
			if (code !== 0) reject(new Error(`recall exited with ${code}: ${stderr.slice(-2000)}`));
			else resolve(JSON.parse(stdout.trim().split("\n").at(-1)!) as SetTotals[]);
		});
	});
}

/** Each entry's totals, measured a few at a time. */
async function measureAll(entries: readonly Entry[]): Promise<SetTotals[][]> {
	const results: SetTotals[][] = new Array(entries.length);
	let next = 0;
	const worker = async (): Promise<void> => {
		while (next < entries.length) {
			const index = next++;
			results[index] = await measure(entries[index].edit);
			process.stderr.write(`\r${entries.length - next} entries left `);
		}
	};
	await Promise.all(Array.from({ length: Math.max(1, Math.min(4, availableParallelism())) }, worker));
	process.stderr.write("\n");
	return results;
}

/** A set's change against the baseline: lost (or gained) decisive lines and fully served outputs. */
function change(base: SetTotals, without: SetTotals): string {
	const lines = without.kept - base.kept;
	const served = without.served - base.served;
	if (lines === 0 && served === 0) return "·";
	const signed = (value: number): string => (value > 0 ? `+${value}` : String(value));
	return `${signed(lines)}/${signed(served)}`;
}

/**
 * Every per-tool entry taken out at once, as one edit per pattern part and per form: what the
 * generic core alone keeps. A tuning output then stands where an output of a toolchain no entry
 * names stands, so the lines it loses are what a principle should find.
 */
function coreEdits(): Entry["edit"][] {
	return [
		...SIGNAL_PATTERN_PARTS.filter((part) => part.tool !== undefined).map((part) =>
			withoutAlternatives(part, (index) => part.tool?.[index] !== undefined),
		),
		...BLOCK_FORMS.filter((form) => form.fixtures !== undefined).map(withoutForm),
	];
}

const argv = process.argv.slice(2);
if (argv.includes("--core")) {
	// `npm run recall` as it prints, with the lines the tuning sets miss, under the generic core alone.
	console.log("ablate --core — every per-tool pattern alternative and block form taken out at once");
	const child = spawn(process.execPath, recallArgs(argv.filter((arg) => arg !== "--core")), {
		cwd: ROOT,
		env: { ...process.env, POF_ABLATE: JSON.stringify(coreEdits()) },
		stdio: ["ignore", "pipe", "inherit"],
	});
	// Its closing counts of the pattern's and the forms' entries would count the edited modules: left out.
	const counts = /^(?:default signal pattern|block forms \(src\/signals\/forms\.ts\)):/;
	createInterface({ input: child.stdout }).on("line", (line) => {
		if (!counts.test(line)) console.log(line);
	});
	child.on("close", (code) => process.exit(code ?? 1));
} else await ablateEach(argv);

async function ablateEach(argv: readonly string[]): Promise<void> {
	const only = argv.find((arg) => arg.startsWith("--only="))?.slice("--only=".length);
	const entries = listEntries(argv.includes("--all"), only);
	const baseline = await measure(undefined);
	const measured = await measureAll(entries);

	const header = ["entry", "source", ...baseline.map((set) => set.title), "justified by"];
	const rows = entries.map((entry, index) => [
		entry.label,
		entry.source.length > 40 ? `${entry.source.slice(0, 39)}…` : entry.source,
		...baseline.map((set, setIndex) => change(set, measured[index][setIndex])),
		entry.fixtures === undefined
			? "(principle)"
			: entry.fixtures.length === 0
				? "(documented format)"
				: entry.fixtures.join(" "),
	]);
	console.log(
		"ablate — each entry taken out alone: decisive lines / fully served outputs gained (+) or lost (-) per set against the baseline (· none)",
	);
	console.log(
		`baseline: ${baseline.map((set) => `${set.title} ${set.kept}/${set.decisive} ${set.served}/${set.outputs}`).join("; ")}`,
	);
	// The entry, its source and its fixtures are text; the sets' changes are figures.
	for (const line of formatTable(header, rows, (column) => column < 2 || column === header.length - 1))
		console.log(line);

	const heldOut = baseline.map((set) => HELD_OUT_TITLES.has(set.title));
	const moves = (index: number, held: boolean): boolean =>
		baseline.some((set, setIndex) => heldOut[setIndex] === held && change(set, measured[index][setIndex]) !== "·");
	const idle = entries.filter((_, index) => !moves(index, false) && !moves(index, true));
	const tuningOnly = entries.filter((_, index) => moves(index, false) && !moves(index, true));
	const heldOutMoved = entries.filter((_, index) => moves(index, true));
	console.log(
		`\n${entries.length} entries: ${idle.length} move no set (${idle.map((entry) => entry.label).join(" ") || "none"}); ${tuningOnly.length} move tuning sets only; ${heldOutMoved.length} move a held-out set (${heldOutMoved.map((entry) => entry.label).join(" ") || "none"})`,
	);
}
