// `npm run transforms`: does the view keep an output's decisive lines when the output is written
// differently but says the same? Every recall output is measured again under transformations that
// leave what is decisive in it unchanged: a prefix a logger, a wrapper or a multiplexer writes
// before each line, the line re-encoded (JSON log records, colour, Windows paths and line ends),
// the lines laid out otherwise (hard-wrapped, run twice by a retry, another job's lines among
// them), and another step's routine lines or errors before, inside or after the output. Its
// decisive lines are looked for at their new numbers, as `npm run frames` does for CI frames. A view
// that keeps a line in one writing and loses it in another depends on the writing, not on what the
// line says: a method to find what a rule overfits, without looking at a held-out output.
//
// Tuning sets (real/, unseen tuning, tuning sets 2–4) are summed, and so are the held-out sets
// (unseen held-out and late), whose counts only are printed. `--only <name,name>` measures those
// transformations, `--missed` lists the tuning misses, `--threshold <chars>` measures at another
// budget, `--shard <i>/<n>` measures every n-th transformation from the i-th (to run two at once on
// two cores), `--in <frame>` puts each transformed output inside a CI frame of `npm run frames`
// (`--in github`: a wrapper's prefix after a runner's preamble). Not a test; every transformation is
// pure and deterministic.

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { measureView, optionOf, RECALL_SETS, thresholdOption } from "./framed-sets.js";
import { formatTable } from "./table.js";
import {
	chunkLine,
	CI_FRAMES,
	type CiFrame,
	contentHash,
	frameOutput,
	inColour,
	interleaved,
	prefixed,
} from "../test/fixtures/ci/frames.js";

type Within = NonNullable<CiFrame["within"]>;

interface Transform {
	name: string;
	/** What it stands for, printed with `--list`. */
	about: string;
	before?: () => string[];
	within?: Within;
	after?: () => string[];
}

const START = Date.UTC(2026, 11, 6, 9, 30, 0);
/** The time of the output's `index`-th line, a few ms after the one before. */
const epochMs = (index: number) => START + index * 37 + ((index * 7919) % 11);
/** `2026-12-06T09:30:00.123Z` */
const iso = (index: number) => new Date(epochMs(index)).toISOString();
/** The same with `digits` fraction digits. */
const isoDigits = (index: number, digits: number) =>
	`${iso(index).slice(0, 23)}${String((index * 7907) % 1_000_000).padStart(6, "0")}`.slice(0, 20 + digits) + "Z";

/** Each line rewritten by `rewrite`, one for one. */
function each(rewrite: (line: string, index: number) => string): Within {
	return (lines) => ({ lines: lines.map(rewrite), at: lines.map((_, index) => index) });
}

/** `extra` lines put before the output's line at `fraction` of its length. */
function inserted(fraction: number, extra: () => string[]): Within {
	return (lines) => {
		const cut = Math.floor(lines.length * fraction);
		const added = extra();
		return {
			lines: [...lines.slice(0, cut), ...added, ...lines.slice(cut)],
			at: lines.map((_, index) => (index < cut ? index : index + added.length)),
		};
	};
}

/** Lines longer than `width` hard-wrapped at it, as a terminal log of fixed width holds them; a decisive line is its first piece. */
function folded(width: number): Within {
	return (lines) => {
		const out: string[] = [];
		const at: number[] = [];
		for (const line of lines) {
			at.push(out.length);
			if (line.length <= width || line.includes("\x1b") || line.includes("\r")) out.push(line);
			else for (let start = 0; start < line.length; start += width) out.push(line.slice(start, start + width));
		}
		return { lines: out, at };
	};
}

/** The command run twice by a retry wrapper; the decisive lines of the `attempt` counted. */
function retried(attempt: "first" | "second"): Within {
	return (lines) => {
		const between = [
			"",
			"Attempt 1 failed. Reason: Child_process exited with error code 2",
			"Retrying in 10 seconds (attempt 2 of 2)...",
			"",
		];
		const second = lines.length + between.length;
		return {
			lines: [...lines, ...between, ...lines],
			at: lines.map((_, index) => (attempt === "first" ? index : second + index)),
		};
	};
}

const hashedChunk = (n: number) => `[web] ${chunkLine(n)}`;
const transforming = (n: number) => `[web] transforming src/components/Widget${n}.tsx`;

/** A progress bar redrawn with `\r` every 40 lines: a terminal shows its final state. */
const withProgress: Within = (lines) => {
	const out: string[] = [];
	const at: number[] = [];
	lines.forEach((line, index) => {
		if (index % 40 === 39)
			out.push(
				Array.from({ length: 11 }, (_, step) => `[${"#".repeat(step).padEnd(10)}] ${step * 10}%`).join("\r") + " done",
			);
		at.push(out.length);
		out.push(line);
	});
	return { lines: out, at };
};

/** A path-like token (`src/a.ts`, `./lib/x`), not a URL's. */
const PATH_TOKEN = /(?<![\w.:/-])(?:\.{1,2}\/)?[\w.-]+(?:\/[\w.-]+)+/g;

/** `eslint .` with warnings only, before the step that fails. */
function lintWarnings(): string[] {
	const out = ["> eslint .", ""];
	for (let file = 0; file < 60; file++) {
		out.push(`/home/runner/work/widgets/widgets/src/components/Widget${file}.tsx`);
		for (let k = 0; k < 5; k++)
			out.push(
				`  ${10 + k * 7}:${3 + k}  warning  '${["props", "state", "ref", "index", "event"][k]}' is defined but never used  @typescript-eslint/no-unused-vars`,
			);
		out.push("");
	}
	out.push("✖ 300 problems (0 errors, 300 warnings)", "");
	return out;
}

/** A bundler's build: one line per chunk. */
function bundlerLines(count: number): string[] {
	return [
		"vite v5.4.11 building for production...",
		"transforming...",
		`✓ ${count * 4} modules transformed.`,
		"rendering chunks...",
		...Array.from({ length: count }, (_, n) => chunkLine(n)),
		"✓ built in 7.42s",
	];
}

/** `docker pull` without a terminal: each layer's progress on lines of its own. */
function dockerPull(layers: number): string[] {
	const ids = Array.from({ length: layers }, (_, n) => contentHash(n * 31).slice(0, 8) + contentHash(n).slice(0, 4));
	return [
		"20-bookworm: Pulling from library/node",
		...ids.map((id) => `${id}: Pulling fs layer`),
		...ids.map((id) => `${id}: Waiting`),
		...ids.flatMap((id) => [`${id}: Verifying Checksum`, `${id}: Download complete`]),
		...ids.map((id) => `${id}: Pull complete`),
		`Digest: sha256:${contentHash(1)}${contentHash(2)}${contentHash(3)}${contentHash(4)}${contentHash(5)}${contentHash(6)}${contentHash(7)}${contentHash(8)}`,
		"Status: Downloaded newer image for node:20-bookworm",
		"docker.io/library/node:20-bookworm",
	];
}

/** A hosted runner's post-job cleanup: `count` routine lines. */
function cleanup(count: number): string[] {
	const fixed = [
		"Post job cleanup.",
		"[command]/usr/bin/git version",
		"git version 2.47.1",
		"Temporarily overriding HOME='/home/runner/work/_temp/5b1f0c2e' before making global git config changes",
		"Adding repository directory to the temporary git global config as a safe directory",
		"[command]/usr/bin/git config --global --add safe.directory /home/runner/work/widgets/widgets",
		"[command]/usr/bin/git config --local --name-only --get-regexp core\\.sshCommand",
		"[command]/usr/bin/git config --local --name-only --get-regexp http\\.https\\:\\/\\/github\\.com\\/\\.extraheader",
		"http.https://github.com/.extraheader",
		"Cleaning up orphan processes",
	];
	const programs = ["node", "esbuild", "java", "gradle", "sleep"];
	return Array.from({ length: count }, (_, n) =>
		n < fixed.length ? fixed[n] : `Terminate orphan process: pid (${2100 + n * 7}) (${programs[n % programs.length]})`,
	);
}

/** `actions/upload-artifact` after the failure. */
function uploadArtifact(): string[] {
	return [
		"With the provided path, there will be 37 files uploaded",
		"Artifact name is valid!",
		"Root directory input is valid!",
		"Beginning upload of artifact content to blob storage",
		"Uploaded bytes 412672",
		"Finished uploading artifact content to blob storage!",
		"SHA256 hash of uploaded artifact zip is 5d2c7f0b1e9a4c3d8f6e2a1b0c9d8e7f6a5b4c3d2e1f0a9b8c7d6e5f4a3b2c1d",
		"Finalizing artifact upload",
		"Artifact test-report.zip successfully finalized. Artifact ID 2412345678",
		"Artifact test-report has been successfully uploaded! Final size is 412672 bytes. Artifact ID is 2412345678",
	];
}

/** A coverage uploader that fails after the tests did: errors of its own below the real failure. */
function uploaderErrors(): string[] {
	return [
		"[2026-12-06T09:31:02.412Z] ['info'] Pinging Codecov: https://codecov.io/upload/v4?package=github-action-4.6.0",
		"[2026-12-06T09:31:03.118Z] ['error'] There was an error running the uploader: Error uploading to https://codecov.io: Error: There was an error fetching the storage URL during POST: 429 - {'detail': ErrorDetail(string='Rate limit reached.', code='throttled')}",
		"Error: Codecov: Failed to properly upload report: The process '/home/runner/work/_actions/codecov/codecov-action/v4/dist/codecov' failed with exit code 1",
		...cleanup(10),
	];
}

/** `docker compose down` after the tests ran in its services. */
function composeDown(): string[] {
	return [
		"[+] Running 5/5",
		" ✔ Container widgets-api-1       Removed                                                        0.4s",
		" ✔ Container widgets-worker-1    Removed                                                        0.3s",
		" ✔ Container widgets-redis-1     Removed                                                        0.2s",
		" ✔ Container widgets-postgres-1  Removed                                                        0.5s",
		" ✔ Network widgets_default       Removed                                                        0.1s",
		...cleanup(10),
	];
}

/** An install whose resolver complains (and goes on) before the step runs. */
function installErrors(): string[] {
	return [
		"$ pip install -r requirements-dev.txt",
		"Collecting flake8==6.1.0 (from -r requirements-dev.txt (line 3))",
		"  Downloading flake8-6.1.0-py2.py3-none-any.whl.metadata (3.8 kB)",
		"Installing collected packages: pyflakes, flake8",
		"ERROR: pip's dependency resolver does not currently take into account all the packages that are installed. This behaviour is the source of the following dependency conflicts.",
		"flake8 6.1.0 requires pyflakes<3.2.0,>=3.1.0, but you have pyflakes 3.2.0 which is incompatible.",
		"Successfully installed flake8-6.1.0 pyflakes-3.2.0",
		"$ make check",
	];
}

/** The routine lines of a job's set-up steps. */
function setupLines(count: number): string[] {
	const base = [
		"Run actions/checkout@v4",
		"Syncing repository: example-org/widgets",
		"Getting Git version info",
		"Deleting the contents of '/home/runner/work/widgets/widgets'",
		"Initializing the repository",
		"Fetching the repository",
		"Determining the checkout info",
		"Checking out the ref",
		"Run actions/setup-node@v4",
		"Found in cache @ /opt/hostedtoolcache/node/20.18.1/x64",
	];
	return Array.from({ length: count }, (_, n) => (n < base.length ? base[n] : `Attempting to resolve cache key ${n}`));
}

const TRANSFORMS: readonly Transform[] = [
	// A prefix before each line.
	{ name: "indent2", about: "two spaces before each line", within: each((line) => `  ${line}`) },
	{ name: "indentTab", about: "a tab before each line", within: each((line) => `\t${line}`) },
	{ name: "pid", about: "a process tag", within: prefixed(() => "[pid 4123] ") },
	{ name: "tags", about: "a job tag in brackets", within: prefixed(() => "[check] ") },
	{ name: "heroku", about: "a remote builder's `remote: `", within: prefixed(() => "remote: ") },
	{ name: "yarnBerry", about: "yarn berry's build-step prefix", within: prefixed(() => "➤ YN0000: │ ") },
	{ name: "pnpm", about: "pnpm's recursive-run tag", within: prefixed(() => "packages/api test: ") },
	{ name: "lerna", about: "lerna's package tag", within: prefixed(() => "@acme/api: ") },
	{ name: "catN", about: "`cat -n`'s numbers", within: prefixed((index) => `${String(index + 1).padStart(6)}\t`) },
	{ name: "stampIso", about: "an ISO time", within: prefixed((index) => `${iso(index)} `) },
	{ name: "stampClock", about: "a bracketed clock", within: prefixed((index) => `[${iso(index).slice(11, 23)}] `) },
	{ name: "stampEpoch", about: "epoch seconds", within: prefixed((index) => `${(epochMs(index) / 1000).toFixed(3)} `) },
	{
		name: "rubyLogger",
		about: "Ruby's Logger at INFO",
		within: prefixed((index) => `I, [${isoDigits(index, 6).slice(0, 26)} #4123]  INFO -- : `),
	},
	{
		name: "pythonLogging",
		about: "Python's logging at INFO",
		within: prefixed(
			(index) => `${iso(index).slice(0, 10)} ${iso(index).slice(11, 19)},${iso(index).slice(20, 23)} INFO runner: `,
		),
	},
	{
		name: "teamcity",
		about: "TeamCity's build log",
		within: prefixed((index) => `[${iso(index).slice(11, 19)}] :\t [Step 2/3] `),
	},
	{
		name: "buildkite",
		about: "Buildkite's time escape",
		within: prefixed((index) => `\x1b_bk;t=${epochMs(index)}\x07`),
	},
	{
		name: "ghRunLog",
		about: "`gh run view --log`: job, step and time",
		within: prefixed((index) => `check\tRun make check\t${isoDigits(index, 7)} `),
	},
	// The line re-encoded.
	{
		name: "dockerJson",
		about: "docker's json-file log records",
		within: each((line, index) => JSON.stringify({ log: `${line}\n`, stream: "stdout", time: isoDigits(index, 9) })),
	},
	{
		name: "logfmt",
		about: "a supervisor's logfmt records",
		within: each((line, index) => `time="${iso(index)}" level=info msg=${JSON.stringify(line)}`),
	},
	{ name: "colourWords", about: "failure words, warnings and locations in colour", within: inColour },
	{
		name: "winPaths",
		about: "backslashes in paths",
		within: each((line) => line.replace(PATH_TOKEN, (path) => path.replaceAll("/", "\\"))),
	},
	{ name: "crlf", about: "Windows line ends", within: each((line) => `${line}\r`) },
	// The lines laid out otherwise.
	{ name: "fold100", about: "hard-wrapped at 100 columns", within: folded(100) },
	{ name: "fold80", about: "hard-wrapped at 80 columns", within: folded(80) },
	// A line printed again is shown once, at its first number, with a count: the second run's lines
	// at their own numbers are the strict reading.
	{ name: "retry", about: "run twice by a retry wrapper, the first run's lines", within: retried("first") },
	{ name: "retryStrict", about: "run twice, the second run's lines", within: retried("second") },
	{ name: "interleave", about: "another job's hashed chunk lines among them", within: interleaved(hashedChunk, 1) },
	{ name: "interleave8", about: "… in runs of 8", within: interleaved(hashedChunk, 8) },
	{ name: "interleaveNoHash", about: "another job's lines without hashes", within: interleaved(transforming, 1) },
	{ name: "crProgress", about: "a progress bar redrawn with CR every 40 lines", within: withProgress },
	// Another step's lines before, inside or after.
	{ name: "lintBefore", about: "300 lint warnings before", before: lintWarnings },
	{ name: "bundlerBefore", about: "300 bundler lines before", before: () => bundlerLines(300) },
	{ name: "dockerPull6", about: "a pull of 6 layers before", before: () => dockerPull(6) },
	{ name: "beforeErr", about: "an install's resolver errors before", before: installErrors },
	{ name: "viteMid", about: "200 bundler lines in the middle", within: inserted(0.5, () => bundlerLines(200)) },
	{ name: "dockerMid", about: "a pull of 12 layers in the middle", within: inserted(0.5, () => dockerPull(12)) },
	{ name: "vite30", about: "30 bundler lines after", after: () => bundlerLines(30) },
	{ name: "uploadAfter", about: "an artifact upload after", after: uploadArtifact },
	{ name: "after10", about: "10 cleanup lines after", after: () => cleanup(10) },
	{ name: "after25", about: "25 cleanup lines after", after: () => cleanup(25) },
	{ name: "after50", about: "50 cleanup lines after", after: () => cleanup(50) },
	{ name: "afterErr", about: "a coverage uploader's errors after", after: uploaderErrors },
	{ name: "afterCompose", about: "`docker compose down` after", after: composeDown },
	{
		name: "before20after10",
		about: "20 set-up lines before, 10 cleanup after",
		before: () => setupLines(20),
		after: () => cleanup(10),
	},
];

if (process.argv.includes("--list")) {
	for (const transform of TRANSFORMS) console.log(`${transform.name.padEnd(18)} ${transform.about}`);
	process.exit(0);
}
const threshold = thresholdOption();
const inName = optionOf("--in");
const inCi = inName === undefined ? undefined : CI_FRAMES.find((frame) => frame.name === inName);
if (inName !== undefined && inCi === undefined)
	throw new Error(`no CI frame named ${inName} (npm run frames names them)`);
const only = optionOf("--only")?.split(",");
const shard = optionOf("--shard")?.split("/").map(Number) ?? [0, 1];
const chosen = TRANSFORMS.filter(
	(transform, index) =>
		(only === undefined || only.includes(transform.name)) && index % shard[1] === shard[0] % shard[1],
);
if (only !== undefined && chosen.length === 0) throw new Error(`no transformation named ${only.join(", ")}`);

const dir = mkdtempSync(join(tmpdir(), "pi-overflow-transforms-"));
const sets = RECALL_SETS.map((set) => ({ ...set, fixtures: set.load() }));
const rows: string[][] = [];
for (const transform of [undefined, ...chosen]) {
	const frame: CiFrame = {
		name: transform?.name ?? "bare",
		before: (command) => [...(inCi?.before(command) ?? []), ...(transform?.before?.() ?? [])],
		after: (command) => [...(transform?.after?.() ?? []), ...(inCi?.after(command) ?? [])],
		within: transform?.within,
		...(inCi?.stamp !== undefined ? { stamp: inCi.stamp } : {}),
		...(inCi?.bom !== undefined ? { bom: inCi.bom } : {}),
	};
	const totals = [false, true].map(() => ({ decisive: 0, kept: 0, served: 0, outputs: 0, chars: 0 }));
	for (const set of sets)
		for (const fixture of set.fixtures) {
			const framed = frameOutput(frame, fixture);
			const result = await measureView(dir, fixture.name, framed.text, framed.decisive, threshold);
			const total = totals[set.heldOut ? 1 : 0];
			total.decisive += result.decisive;
			total.kept += result.kept;
			total.served += result.served ? 1 : 0;
			total.outputs += 1;
			total.chars += result.chars;
			if (!set.heldOut && process.argv.includes("--missed"))
				for (const line of result.missed) console.log(`MISSED [${frame.name}] ${line}`);
		}
	rows.push([
		frame.name,
		...totals.flatMap((total) => [
			`${total.kept}/${total.decisive}`,
			`${total.served}/${total.outputs}`,
			String(Math.round(total.chars / total.outputs)),
		]),
	]);
}
rmSync(dir, { recursive: true, force: true });
console.log(`budget: ${threshold} chars${inCi === undefined ? "" : `, each output inside the ${inCi.name} CI frame`}`);
const header = ["transformation", "tuning kept", "served", "mean chars", "held-out kept", "served", "mean chars"];
for (const line of formatTable(header, rows)) console.log(line);
