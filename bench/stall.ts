// `npm run bench:stall [label…]`: the longest event-loop stall and the total time of one oversized
// tool result through the real Pi runtime, with pi-overflow and with Pi alone, on the inputs that
// are hardest on the main thread (SPEC "Third wave", Main thread): minified and deeply nested JSON,
// one giant line, CR-only text, millions of signal lines, NUL bytes, invalid UTF-8. Each run is a
// fresh process (its peak RSS is its own); inputs are generated once into a temp dir, streamed.
// A measurement, not a test: the target is a stall added ≤ 100 ms and a total within 3× of Pi alone.
// `--runs=N` (default 3) measures each row N times, Pi alone and with pi-overflow in turn, and prints
// the medians and the range of the ratio: one run on a shared machine varies by a third.

import { spawnSync } from "node:child_process";
import { closeSync, mkdtempSync, openSync, rmSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { fauxAssistantMessage, fauxToolCall, type ToolResultMessage } from "@mariozechner/pi-ai";
import { CAPTURE_PATH, INDEX_PATH, REPO_ROOT, resultText } from "../test/helpers/pi.js";
import { openPiSession } from "../test/helpers/pi-session.js";
import { median } from "./stats.js";

const MB = 1_000_000;
const JSON_TOOLS_PATH = join(REPO_ROOT, "test", "fixtures", "ext", "json-tools.ts");
const SELF = fileURLToPath(import.meta.url);
/** Wait after the session opens, before the prompt. */
const SETTLE_MS = 1500;

interface StallRow {
	label: string;
	/** The tool call a user would hit: json_text (JSON returned as text) or bash `cat` of a generated file. */
	tool: "json_text" | "bash";
	params?: Record<string, unknown>;
	/** For bash rows: writes the file, chunk by chunk. */
	generate?: (write: (text: string | Buffer) => void) => void;
}

/** Writes `count` lines made by `line(index)`, in blocks. */
function writeLines(write: (text: string) => void, count: number, line: (index: number) => string): void {
	let block = "";
	for (let index = 0; index < count; index++) {
		block += line(index);
		if (block.length > 256 * 1024) {
			write(block);
			block = "";
		}
	}
	if (block) write(block);
}

const ROWS: StallRow[] = [
	{ label: "JSON minified 2 MB", tool: "json_text", params: { records: 12_000, minified: true } },
	{ label: "JSON minified 8 MB", tool: "json_text", params: { records: 46_000, minified: true } },
	{ label: "JSON minified 32 MB", tool: "json_text", params: { records: 184_000, minified: true } },
	{ label: "JSON nested 3 M deep", tool: "json_text", params: { levels: 3_000_000 } },
	{
		label: "one 50 MB line",
		tool: "bash",
		generate: (write) => {
			const piece = "lorem ipsum dolor sit amet error: not really, consectetur adipiscing ".repeat(1000);
			for (let written = 0; written < 50 * MB; written += piece.length) write(piece);
		},
	},
	{
		label: "10 MB CR-only",
		tool: "bash",
		generate: (write) =>
			writeLines(write, 250_000, (index) => `progress ${index} of 250000: building target-${index % 97}\r`),
	},
	{
		label: "2.5 M signal lines",
		tool: "bash",
		generate: (write) => {
			writeLines(write, 1_000, (index) => `step ${index}: compiling module-${index}\n`);
			writeLines(write, 2_500_000, (index) => `ERROR: connection refused host-${index % 1000}:5432\n`);
			write("FATAL: giving up after 2500000 attempts\n");
			writeLines(write, 1_000, (index) => `cleanup ${index}: released handle-${index}\n`);
		},
	},
	{
		// A record per line, each short: every line is read for the line it wraps (shape.ts shapeStart).
		label: "JSON-lines records 20 MB",
		tool: "bash",
		generate: (write) => writeLines(write, 1_000_000, (index) => `{"msg":"job ${index % 7} ok","n":${index}}\n`),
	},
	{
		label: "NUL bytes 10 MB",
		tool: "bash",
		generate: (write) => {
			const line = Buffer.from("record\0\0\0 with\0nul bytes and an error\0 inside\n");
			const block = Buffer.concat(Array.from({ length: 4096 }, () => line));
			for (let written = 0; written < 10 * MB; written += block.length) write(block);
		},
	},
	{
		label: "invalid UTF-8 10 MB",
		tool: "bash",
		generate: (write) => {
			// Lone continuation bytes, truncated sequences, overlongs and surrogates, with words between.
			const line = Buffer.concat([
				Buffer.from("bytes "),
				Buffer.from([0x80, 0xbf, 0xc3, 0x28, 0xe2, 0x82, 0xf0, 0x9f, 0x98, 0xc0, 0xaf, 0xed, 0xa0, 0x80, 0xff]),
				Buffer.from(" failed to decode\n"),
			]);
			const block = Buffer.concat(Array.from({ length: 4096 }, () => line));
			for (let written = 0; written < 10 * MB; written += block.length) write(block);
		},
	},
];

interface Measurement {
	stallMs: number;
	totalMs: number;
	peakRssMb: number;
	viewChars: number;
}

/**
 * One run in this process: the session is opened (extensions loaded) and left to settle first, so
 * what is measured is one tool call through real Pi, and the loop's longest delay meanwhile.
 */
async function measureHere(row: StallRow, withOverflow: boolean, inputPath: string): Promise<Measurement> {
	const agentDir = mkdtempSync(join(tmpdir(), "stall-bench-"));
	const histogram = monitorEventLoopDelay({ resolution: 10 });
	const extensions = row.tool === "json_text" ? [JSON_TOOLS_PATH] : [];
	const pi = await openPiSession({
		agentDir,
		cwd: agentDir,
		extensionPaths: withOverflow ? [CAPTURE_PATH, ...extensions, INDEX_PATH] : extensions,
	});
	try {
		const call =
			row.tool === "json_text"
				? fauxToolCall("json_text", row.params ?? {})
				: fauxToolCall("bash", { command: `cat ${inputPath}` });
		// pi-overflow warms its paths after session start, in steps: let that finish.
		await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
		pi.respond(fauxAssistantMessage([call], { stopReason: "toolUse" }), fauxAssistantMessage("done"));
		const started = performance.now();
		histogram.enable();
		await pi.session.prompt("go");
		const totalMs = performance.now() - started;
		// A stall at the very end shows only once the loop turns again.
		await new Promise((resolve) => setTimeout(resolve, 50));
		histogram.disable();
		const result = pi.session.messages.find((message): message is ToolResultMessage => message.role === "toolResult");
		if (pi.extensionErrors.length > 0) throw new Error(JSON.stringify(pi.extensionErrors));
		return {
			stallMs: histogram.max / 1e6,
			totalMs,
			peakRssMb: process.resourceUsage().maxRSS / 1024,
			viewChars: result ? resultText(result).length : -1,
		};
	} finally {
		pi.close();
		rmSync(agentDir, { recursive: true, force: true });
	}
}

/** Several runs of one row: the longest stall of any (the target is about the worst), the median total and RSS. */
function summarise(runs: readonly Measurement[]): Measurement {
	return {
		stallMs: Math.max(...runs.map((run) => run.stallMs)),
		totalMs: median(runs.map((run) => run.totalMs)),
		peakRssMb: median(runs.map((run) => run.peakRssMb)),
		viewChars: runs[0].viewChars,
	};
}

/** One run in a fresh process. */
function measureInChild(row: StallRow, withOverflow: boolean, inputPath: string): Measurement {
	const child = spawnSync(
		process.execPath,
		["--import", "tsx", SELF, `--child=${row.label}`, withOverflow ? "--with" : "--without", `--input=${inputPath}`],
		{ cwd: REPO_ROOT, encoding: "utf8", maxBuffer: 64 * MB },
	);
	const line = child.stdout.trim().split("\n").pop() ?? "";
	try {
		return JSON.parse(line) as Measurement;
	} catch {
		throw new Error(
			`${row.label}: the run printed no measurement (exit ${child.status}): ${child.stderr.slice(-2000)}`,
		);
	}
}

function generateInput(row: StallRow, dir: string, index: number): string {
	const path = join(dir, `input-${index}.txt`);
	if (row.generate === undefined) return path;
	const fd = openSync(path, "w", 0o600);
	try {
		row.generate((text) => {
			writeSync(fd, typeof text === "string" ? Buffer.from(text, "latin1") : text);
		});
	} finally {
		closeSync(fd);
	}
	return path;
}

const childLabel = process.argv.find((arg) => arg.startsWith("--child="))?.slice("--child=".length);
if (childLabel !== undefined) {
	const row = ROWS.find((candidate) => candidate.label === childLabel);
	if (row === undefined) throw new Error(`no row ${childLabel}`);
	const input = process.argv.find((arg) => arg.startsWith("--input="))?.slice("--input=".length) ?? "";
	const measured = await measureHere(row, process.argv.includes("--with"), input);
	console.log(JSON.stringify(measured));
} else {
	const only = process.argv.slice(2).filter((arg) => !arg.startsWith("--"));
	const runs = Math.max(1, Number(process.argv.find((arg) => arg.startsWith("--runs="))?.slice("--runs=".length) ?? 3));
	const dir = mkdtempSync(join(tmpdir(), "stall-inputs-"));
	const ms = (value: number) => `${Math.round(value)} ms`.padStart(9);
	try {
		console.log(
			`row                  | stall with | stall alone |  added | total with | total alone | ratio | ratios (${runs} runs) | RSS with | RSS alone | view chars`,
		);
		for (const [index, row] of ROWS.entries()) {
			if (only.length > 0 && !only.some((label) => row.label.includes(label))) continue;
			const input = generateInput(row, dir, index);
			const alones: Measurement[] = [];
			const overflows: Measurement[] = [];
			for (let run = 0; run < runs; run++) {
				alones.push(measureInChild(row, false, input));
				overflows.push(measureInChild(row, true, input));
			}
			const alone = summarise(alones);
			const overflow = summarise(overflows);
			// Each run's with-pi-overflow total against the Pi-alone total measured just before it.
			const ratios = overflows.map((measured, run) => measured.totalMs / Math.max(1, alones[run].totalMs));
			rmSync(input, { force: true });
			const ratio = median(ratios);
			console.log(
				[
					row.label.padEnd(20),
					` ${ms(overflow.stallMs)}`,
					`  ${ms(alone.stallMs)}`,
					ms(overflow.stallMs - alone.stallMs)
						.slice(2)
						.padStart(6),
					` ${ms(overflow.totalMs)}`,
					`  ${ms(alone.totalMs)}`,
					` ${ratio.toFixed(1).padStart(4)}`,
					` ${Math.min(...ratios).toFixed(1)}–${Math.max(...ratios).toFixed(1)}`.padEnd(17),
					`${Math.round(overflow.peakRssMb)} MB`.padStart(9),
					`${Math.round(alone.peakRssMb)} MB`.padStart(10),
					String(overflow.viewChars).padStart(11),
				].join(" |"),
			);
		}
	} finally {
		rmSync(dir, { recursive: true, force: true });
	}
}
