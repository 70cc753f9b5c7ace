// `node --import tsx bench/libraries.ts`: the hand-written regex parser and streaming JSON kit side by
// side with the libraries for the same jobs (@eslint-community/regexpp; @streamparser/json and
// stream-json), on the same inputs: time, peak memory, answers and error messages. Each timed run is
// a child process of its own, so its peak RSS is its own; a child that loads nothing is the baseline.
// Results and the decision: docs/libraries.md. `--quick`: a 19 MB document instead of 153 MB;
// `--only regex|json`: one job; `--case <text>`: the JSON inputs whose name has the text.
// Not a test: it prints tables, it asserts nothing.

import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
	createReadStream,
	createWriteStream,
	mkdtempSync,
	readdirSync,
	readFileSync,
	rmSync,
	statSync,
	writeFileSync,
} from "node:fs";
import { open } from "node:fs/promises";
import { tmpdir } from "node:os";
import { pathToFileURL } from "node:url";
import { join } from "node:path";
import { once } from "node:events";
import { RegExpValidator } from "@eslint-community/regexpp";
import { JSONParser } from "@streamparser/json";
import { parser as streamJsonParser } from "stream-json";
import { pick } from "stream-json/filters/pick.js";
import { streamValues } from "stream-json/streamers/stream-values.js";
import { evaluateJsonPath } from "../src/json/evaluate.js";
import { type PathSegment, selectJsonPath } from "../src/json/path.js";
import { findPatternKeywords } from "../src/regex/keywords.js";
import { type ParsedPattern, parsePattern } from "../src/regex/parse.js";
import { findBacktrackingRisk } from "../src/regex/safety.js";
import { DEFAULT_SIGNAL_PATTERN, SIGNAL_PATTERN_PARTS } from "../src/signals/pattern.js";
import { createRandom } from "../test/helpers/random.js";

const QUICK = process.argv.includes("--quick");
/** `--only regex` or `--only json`: one job. */
const ONLY = process.argv.includes("--only") ? process.argv[process.argv.indexOf("--only") + 1] : undefined;
/** `--case <text>`: only the JSON inputs whose name contains the text. */
const CASE = process.argv.includes("--case") ? process.argv[process.argv.indexOf("--case") + 1] : undefined;
const BIG_ITEMS = QUICK ? 125_000 : 1_000_000;
const DEEP_LEVELS = 100_000;
const REGEX_ROUNDS = 20;
const FUZZ_PATTERNS = 20_000;
const PRINT_ROOM_CHARS = 10_000_000;

// ---------------------------------------------------------------------------------------------
// Regex: the hand-written parser (read from git, as it was before regexpp replaced it) and
// src/regex/parse.ts (regexpp's AST mapped to the same nodes)

/** The last commit with the hand-written src/regex/parse.ts. */
const HANDWRITTEN_PARSER_COMMIT = "3ad366a";

type ParseFunction = (source: string) => ParsedPattern | { error: string };

interface RegexModules {
	parsePattern: ParseFunction;
	findBacktrackingRisk(source: string): string | undefined;
	findPatternKeywords(source: string): string[] | undefined;
}

const REGEX_MODULES = ["charset", "parse", "safety", "keywords"];

/** The regex modules as they were with the hand-written parser, written to `dir` from git. */
async function loadHandwrittenModules(dir: string): Promise<RegexModules> {
	for (const name of REGEX_MODULES) {
		const source = execFileSync("git", ["show", `${HANDWRITTEN_PARSER_COMMIT}:src/regex/${name}.ts`], {
			encoding: "utf8",
		});
		writeFileSync(join(dir, `${name}.ts`), source);
	}
	const load = async (name: string) => (await import(pathToFileURL(join(dir, `${name}.ts`)).href)) as RegexModules;
	return { ...(await load("parse")), ...(await load("safety")), ...(await load("keywords")) };
}

const adoptedModules: RegexModules = { parsePattern, findBacktrackingRisk, findPatternKeywords };

const regexppValidator = new RegExpValidator({ ecmaVersion: 2025 });

/** A parse as text, groups sorted by key, to compare two parsers' answers. */
function describeParse(parsed: ParsedPattern | { error: string }): string {
	if ("error" in parsed) return JSON.stringify(parsed);
	const replacer = (_key: string, value: unknown) => (typeof value === "bigint" ? value.toString(16) : value);
	const groups = [...parsed.groups].map(([key, node]) => [String(key), JSON.stringify(node, replacer)]).sort();
	return JSON.stringify([JSON.stringify(parsed.root, replacer), groups]);
}

/** String literals of the regex tests (plain and String.raw), the signal pattern and its parts. */
function collectTestPatterns(): string[] {
	const patterns = new Set<string>([DEFAULT_SIGNAL_PATTERN, ...SIGNAL_PATTERN_PARTS.map((part) => part.source)]);
	for (const file of [
		"test/unit/regex-safety.test.ts",
		"test/unit/regex-keywords.test.ts",
		"test/unit/config.test.ts",
	]) {
		const text = readFileSync(file, "utf8");
		for (const [literal] of text.matchAll(/"(?:[^"\\\n]|\\.)*"/g)) patterns.add(JSON.parse(literal) as string);
		for (const [, raw] of text.matchAll(/String\.raw`([^`]*)`/g)) patterns.add(raw!);
	}
	return [...patterns];
}

const FUZZ_TOKENS = [
	"a", "b", "x", "error", "fail", "-", "\\d", "\\w", "\\s", "\\S", "\\W", ".", "[a-z]", "[^a]", "[\\w-]", "[\\0-\\x1f]",
	"[]", "[^]", "[a-\\d]", "(", ")", "(?:", "(?=", "(?!", "(?<=", "(?<!", "(?<n>", "(?<m>", "|", "*", "+", "?", "{2}",
	"{1,3}", "{2,}", "*?", "+?", "^", "$", "\\b", "\\B", "\\1", "\\2", "\\k<n>", "\\k", "\\0", "\\12", "\\8", "\\x41",
	"\\u0041", "\\u{41}", "\\cA", "\\c", "\\c1", "[\\c1]", "{", "}", "]", "\\", "\\-", "\\/", "\\p{L}", "\u00e9", "\u2028",
]; // prettier-ignore

/** Random sequences of regex tokens, valid and not (seeded: the same every run). */
function fuzzPatterns(count: number): string[] {
	const random = createRandom(21);
	const patterns: string[] = [];
	for (let i = 0; i < count; i++) {
		let pattern = "";
		const length = 1 + Math.floor(random() * 12);
		for (let j = 0; j < length; j++) pattern += FUZZ_TOKENS[Math.floor(random() * FUZZ_TOKENS.length)];
		patterns.push(pattern);
	}
	return patterns;
}

function compilesInV8(source: string): string | undefined {
	try {
		new RegExp(source, "i");
		return undefined;
	} catch (error) {
		return (error as Error).message;
	}
}

interface RegexInputs {
	valid: string[];
	invalid: Array<{ source: string; v8Message: string }>;
	tests: number;
}

function regexInputs(): RegexInputs {
	const tests = collectTestPatterns().filter((source) => compilesInV8(source) === undefined);
	const valid = [...tests];
	const invalid: RegexInputs["invalid"] = [];
	for (const source of fuzzPatterns(FUZZ_PATTERNS)) {
		const v8Message = compilesInV8(source);
		if (v8Message === undefined) valid.push(source);
		else invalid.push({ source, v8Message });
	}
	return { valid, invalid, tests: tests.length };
}

async function runRegexChild(candidate: string): Promise<unknown> {
	const { valid } = regexInputs();
	const dir = mkdtempSync(join(tmpdir(), "pi-overflow-regex-"));
	try {
		const modules = candidate === "regexpp" ? adoptedModules : await loadHandwrittenModules(dir);
		let started = performance.now();
		for (let round = 0; round < REGEX_ROUNDS; round++) for (const source of valid) modules.parsePattern(source);
		const parseMs = performance.now() - started;
		started = performance.now();
		for (const source of valid) {
			modules.findBacktrackingRisk(source);
			modules.findPatternKeywords(source);
		}
		const analysisMs = performance.now() - started;
		return {
			parseUs: (parseMs * 1000) / (REGEX_ROUNDS * valid.length),
			analysisUs: (analysisMs * 1000) / valid.length,
		};
	} finally {
		rmSync(dir, { recursive: true, force: true });
	}
}

/** Why a valid pattern parses differently: the two known cases, else "other". */
function differenceOf(source: string): string {
	if (/\[[^\]]*\\c[0-9_]/.test(source))
		return "`\\c` + digit or `_` in a class (a control character; hand-written: three characters)";
	if (/\\[0-9]/.test(source)) return "legacy octal escape `\\0`, `\\12`, `\\8` (exact; hand-written: any character)";
	return "other";
}

async function compareRegexAnswers(): Promise<Record<string, unknown>> {
	const { valid, invalid, tests } = regexInputs();
	const dir = mkdtempSync(join(tmpdir(), "pi-overflow-regex-"));
	const handwritten = await loadHandwrittenModules(dir);
	let sameTree = 0;
	let sameRisk = 0;
	let sameKeywords = 0;
	let refused = 0;
	const differences = new Map<string, number>();
	const examples: string[] = [];
	for (const source of valid) {
		const adopted = parsePattern(source);
		if ("error" in adopted) {
			refused++;
			if (examples.length < 6) examples.push(`refused ${JSON.stringify(source)}: ${adopted.error}`);
		} else if (describeParse(adopted) === describeParse(handwritten.parsePattern(source))) sameTree++;
		else {
			const why = differenceOf(source);
			differences.set(why, (differences.get(why) ?? 0) + 1);
			if (why === "other" && examples.length < 6) examples.push(`differs ${JSON.stringify(source)}`);
		}
		if (findBacktrackingRisk(source) === handwritten.findBacktrackingRisk(source)) sameRisk++;
		else if (examples.length < 6)
			examples.push(
				`risk of ${JSON.stringify(source)}: ${findBacktrackingRisk(source)} | hand-written: ${handwritten.findBacktrackingRisk(source)}`,
			);
		if (JSON.stringify(findPatternKeywords(source)) === JSON.stringify(handwritten.findPatternKeywords(source)))
			sameKeywords++;
		else if (examples.length < 6) examples.push(`keywords of ${JSON.stringify(source)} differ`);
	}
	rmSync(dir, { recursive: true, force: true });
	let sameMessage = 0;
	let accepted = 0;
	const messageExamples: string[] = [];
	for (const { source, v8Message } of invalid) {
		try {
			regexppValidator.validatePattern(source, 0, source.length, { unicode: false, unicodeSets: false });
			accepted++;
		} catch (error) {
			// regexpp is not told the flags: V8 writes `/…/i:`, regexpp `/…/:`.
			const message = (error as Error).message;
			if (message === v8Message.replace(/\/i: /, "/: ")) sameMessage++;
			else if (messageExamples.length < 3) messageExamples.push(`${message}  |  V8: ${v8Message}`);
		}
	}
	return {
		tests,
		valid: valid.length,
		sameTree,
		sameRisk,
		sameKeywords,
		refused,
		differences,
		examples,
		invalid: invalid.length,
		accepted,
		sameMessage,
		messageExamples,
	};
}

// ---------------------------------------------------------------------------------------------
// JSON: jsonPath over a file read as a stream, the selected value printed as JSON.stringify(v, null, 2)

interface JsonCase {
	name: string;
	file: string;
	segments: PathSegment[];
}

/** What a candidate answers: the printed value, "missing", or the error message. */
interface JsonAnswer {
	kind: "value" | "missing" | "error" | "cannot ask";
	text: string;
}

type JsonCandidate = (file: string, segments: PathSegment[]) => Promise<JsonAnswer>;

async function answerWithOurs(file: string, segments: PathSegment[]): Promise<JsonAnswer> {
	const handle = await open(file, "r");
	const { size } = await handle.stat();
	try {
		const result = await evaluateJsonPath(
			{
				size,
				read: async (target, position) =>
					(await handle.read(target, 0, Math.max(0, Math.min(target.length, size - position)), position)).bytesRead,
				close: () => handle.close(),
			},
			segments,
			{ roomFor: () => PRINT_ROOM_CHARS, timeoutMs: 600_000 },
		);
		if (result.type === "value") return { kind: "value", text: result.text };
		if (result.type === "missing") return { kind: "missing", text: result.message };
		if (result.type === "notJson") return { kind: "error", text: result.reason };
		return { kind: "error", text: "stopped" };
	} finally {
		await handle.close();
	}
}

/** The whole-text reference: JSON.parse, select, JSON.stringify (what the tests compare ours with). */
async function answerWithJsonParse(file: string, segments: PathSegment[]): Promise<JsonAnswer> {
	let text = readFileSync(file, "utf8");
	if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
	let root: unknown;
	try {
		root = JSON.parse(text);
	} catch (error) {
		return { kind: "error", text: (error as Error).message };
	}
	const selected = selectJsonPath(root, segments);
	if ("error" in selected) return { kind: "missing", text: selected.error };
	return lastValue([selected.value]);
}

/** The last value the path selects (JSON.parse keeps the last of repeated keys). */
function lastValue(values: unknown[]): JsonAnswer {
	if (values.length === 0) return { kind: "missing", text: "(no value, no message)" };
	try {
		return { kind: "value", text: JSON.stringify(values[values.length - 1], null, 2) };
	} catch (error) {
		return { kind: "error", text: `JSON.stringify threw ${(error as Error).name}: ${(error as Error).message}` };
	}
}

async function answerWithStreamparser(file: string, segments: PathSegment[]): Promise<JsonAnswer> {
	// Its paths are `$.a.0.b`; a key with a "." or a "*" cannot be asked for.
	if (segments.some((segment) => typeof segment === "string" && /[.*]/.test(segment)))
		return { kind: "cannot ask", text: "" };
	const parser = new JSONParser({ paths: [["$", ...segments].join(".")], keepStack: false });
	const values: unknown[] = [];
	let failure: string | undefined;
	parser.onValue = ({ value }) => values.push(value);
	parser.onError = (error) => (failure ??= error.message);
	for await (const chunk of createReadStream(file)) {
		if (failure !== undefined || parser.isEnded) break;
		try {
			parser.write(chunk as Buffer);
		} catch (error) {
			failure ??= (error as Error).message;
		}
	}
	if (failure === undefined && !parser.isEnded) {
		try {
			parser.end();
		} catch (error) {
			failure = (error as Error).message;
		}
	}
	// It stops at the end of the first value: text after it is not checked.
	return failure !== undefined ? { kind: "error", text: failure } : lastValue(values);
}

async function answerWithStreamJson(file: string, segments: PathSegment[]): Promise<JsonAnswer> {
	const values: unknown[] = [];
	const input = createReadStream(file);
	const tokens = input.pipe(streamJsonParser.asStream());
	const picked = tokens.pipe(
		pick.asStream({
			filter: (stack: readonly (string | number | null)[]) =>
				stack.length === segments.length && segments.every((segment, i) => stack[i] === segment),
		}),
	);
	const assembled = picked.pipe(streamValues.asStream());
	assembled.on("data", ({ value }: { value: unknown }) => values.push(value));
	try {
		await Promise.race([
			once(assembled, "end"),
			...[input, tokens, picked, assembled].map((stream) =>
				once(stream, "error").then(([error]) => Promise.reject(error)),
			),
		]);
	} catch (error) {
		input.destroy();
		return { kind: "error", text: (error as Error).message };
	}
	return lastValue(values);
}

const JSON_CANDIDATES: Record<string, JsonCandidate> = {
	ours: answerWithOurs,
	"@streamparser/json": answerWithStreamparser,
	"stream-json": answerWithStreamJson,
	"JSON.parse (whole text)": answerWithJsonParse,
};

/** The documents the json tests choose (keys, numbers, repeated keys, errors), and the corpora's JSON outputs. */
function smallJsonCases(dir: string): JsonCase[] {
	const chosen: Array<[string, string, PathSegment[]]> = [
		["short array", '{"a": [1, 2], "b": [1, 2, 3, 4, 5, 6, 7], "c": [[0], [1, 2, 3, 4, 5, 6]]}', ["c", 1]],
		["missing index", '{"a": [1, 2], "b": [1, 2, 3, 4, 5, 6, 7]}', ["a", 5]],
		[
			"escaped keys",
			'{"ключ": {"名前": "unicode"}, "a\\"b": 1, "\\u0061": 2, "key.with.dots": 3, "tab\\tkey": 5}',
			["key.with.dots"],
		],
		["unicode key", '{"ключ": {"名前": "unicode", "😀": "emoji"}}', ["ключ"]],
		["__proto__ key", '{"__proto__": {"polluted": true}, "constructor": {"prototype": 1}}', []],
		["numbers", '{"n": 1e400, "m": -0, "big": 123456789012345678901, "f": 1.50, "t": true, "z": null}', []],
		["repeated keys", '{"b": 1, "10": "ten", "a": {"x": 1}, "2": "two", "a": {"y": 2}, "b": [3]}', []],
		["repeated key selected", '{"b": 1, "a": {"x": 1}, "a": {"y": 2}}', ["a"]],
		["trailing notice", '{"a": 1}\n[pi notice]', ["a"]],
		["tab in string", '{"a": "tab\there"}', ["a"]],
		["bad escape", '{"a": "\\x"}', ["a"]],
		["leading zero", '{"a": 01}', ["a"]],
		["cut document", '{"a": [1, 2, {"b": ', ["a"]],
		["trailing comma", '{"a": [1, 2,]}', ["a"]],
	];
	const cases: JsonCase[] = chosen.map(([name, text, segments], i) => {
		const file = join(dir, `chosen-${i}.json`);
		writeFileSync(file, text);
		return { name: `chosen: ${name}`, file, segments };
	});
	for (const file of corpusJsonFiles())
		cases.push({ name: `corpus: ${file.split("/").slice(-2).join("/")}`, file, segments: [] });
	return cases;
}

/** Corpus outputs that open like a JSON document (JSON-lines logs included: JSON.parse refuses those). */
function corpusJsonFiles(): string[] {
	const files: string[] = [];
	const walk = (dir: string) => {
		for (const entry of readdirSync(dir, { withFileTypes: true })) {
			const path = join(dir, entry.name);
			if (entry.isDirectory()) walk(path);
			else if (/\.(log|json)$/.test(entry.name) && /^\s*[[{]/.test(readFileSync(path, "utf8").slice(0, 200)))
				files.push(path);
		}
	};
	walk("test/fixtures");
	return files.sort();
}

/** Writes the large documents: minified records, the same cut by a syntax error near the end, deep nesting. */
async function writeLargeCases(dir: string): Promise<JsonCase[]> {
	const big = join(dir, "big-minified.json");
	const broken = join(dir, "big-broken.json");
	for (const [file, flaw] of [
		[big, ""],
		[broken, ","],
	] as const) {
		const out = createWriteStream(file);
		const write = async (text: string) => {
			if (!out.write(text)) await once(out, "drain");
		};
		await write('{"meta":{"tool":"bench","items":' + BIG_ITEMS + '},"items":[');
		let batch = "";
		for (let i = 0; i < BIG_ITEMS; i++) {
			batch += `${i === 0 ? "" : ","}{"id":${i},"name":"item-${i}","tags":["alpha","beta\\u00e9"],"score":${i / 7},"ok":${i % 2 === 0},"nested":{"path":"/srv/app/module-${i % 97}.ts","line":${i % 1000}}}`;
			if (batch.length > 1 << 20) {
				await write(batch);
				batch = "";
			}
		}
		await write(`${batch}]${flaw},"last":{"status":"done","errors":0}}`);
		out.end();
		await once(out, "finish");
	}
	const deepArrays = join(dir, "deep-arrays.json");
	writeFileSync(deepArrays, `${"[".repeat(DEEP_LEVELS)}1${"]".repeat(DEEP_LEVELS)}`);
	const deepObjects = join(dir, "deep-objects.json");
	writeFileSync(deepObjects, `${'{"a":'.repeat(DEEP_LEVELS)}1${"}".repeat(DEEP_LEVELS)}`);
	const mb = (file: string) => `${Math.round(statSync(file).size / 1e6)} MB`;
	return [
		{ name: `minified ${mb(big)}, items[${BIG_ITEMS - 1}]`, file: big, segments: ["items", BIG_ITEMS - 1] },
		{ name: `minified ${mb(broken)}, error near the end`, file: broken, segments: ["last"] },
		{ name: `${DEEP_LEVELS} nested arrays, [0][0][0]`, file: deepArrays, segments: [0, 0, 0] },
		{ name: `${DEEP_LEVELS} nested objects, a.a.a`, file: deepObjects, segments: ["a", "a", "a"] },
	];
}

async function runJsonChild(candidate: string, file: string, segments: PathSegment[]): Promise<unknown> {
	const started = performance.now();
	let answer: JsonAnswer;
	try {
		answer = await JSON_CANDIDATES[candidate]!(file, segments);
	} catch (error) {
		answer = { kind: "error", text: `threw ${(error as Error).name}: ${(error as Error).message}` };
	}
	return { ms: performance.now() - started, answer };
}

// ---------------------------------------------------------------------------------------------
// The parent: run each candidate in a child, print the tables

interface ChildResult {
	maxRssMb: number;
	result: Record<string, unknown>;
}

function runChild(args: string[]): ChildResult {
	const output = execFileSync(process.execPath, ["--import", "tsx", "bench/libraries.ts", "--child", ...args], {
		encoding: "utf8",
		maxBuffer: 256 * 1024 * 1024,
	});
	return JSON.parse(output) as ChildResult;
}

/** Equal answers; ours adds the line and column to JSON.parse's reason and shows control characters as spaces. */
function compareWithReference(answer: JsonAnswer, reference: JsonAnswer): string {
	if (answer.kind === "cannot ask") return "cannot ask";
	if (reference.kind === "error" && /threw|stack/.test(reference.text)) return "no reference";
	if (answer.kind === reference.kind && answer.text === reference.text) return "yes";
	const reason = reference.text.replace(/[\u0000-\u001f\u007f\u2028\u2029]/g, " ");
	if (
		answer.kind === "error" &&
		reference.kind === "error" &&
		answer.text.replace(/ \(line \d+, column \d+\)$/, "") === reason
	)
		return answer.text === reason ? "yes" : "yes (+ line, column)";
	return "NO";
}

const digest = (text: string) => createHash("sha256").update(text).digest("hex").slice(0, 12);
const cell = (text: string, width: number) =>
	text.length > width ? `${text.slice(0, width - 1)}…` : text.padEnd(width);

async function main(): Promise<void> {
	const baseline = runChild(["none"]).maxRssMb;
	console.log(
		`Node ${process.versions.node}; a child that loads this file and nothing else peaks at ${baseline} MB RSS.\n`,
	);

	if (ONLY !== "json") await compareRegexParsers();
	if (ONLY !== "regex") await compareJsonReaders();
}

async function compareRegexParsers(): Promise<void> {
	console.log(`## Regex parser: the tests' patterns, the signal pattern and fuzzed ones\n`);
	const answers = await compareRegexAnswers();
	const valid = answers.valid as number;
	console.log(
		"| candidate | parse, per pattern | parse + safety + keywords | peak RSS | same parse tree | same safety verdict and message | same keywords | refuses a pattern V8 accepts |",
	);
	console.log("|---|---|---|---|---|---|---|---|");
	for (const [candidate, name] of [
		["handwritten", `hand-written (${HANDWRITTEN_PARSER_COMMIT}, 261 lines)`],
		["regexpp", `regexpp ${regexppVersion()} + adapter (src/regex/parse.ts)`],
	]) {
		const { maxRssMb, result } = runChild(["regex", candidate!]);
		const columns =
			candidate === "handwritten"
				? ["—", "—", "—", "never (reads anything)"]
				: [
						`${answers.sameTree} of ${valid}`,
						`${answers.sameRisk} of ${valid}`,
						`${answers.sameKeywords} of ${valid}`,
						`${answers.refused}`,
					];
		console.log(
			`| ${name} | ${(result.parseUs as number).toFixed(1)} µs | ${(result.analysisUs as number).toFixed(1)} µs | ${maxRssMb} MB | ${columns.join(" | ")} |`,
		);
	}
	console.log(
		`\n${answers.tests} test and signal patterns, ${valid - (answers.tests as number)} valid fuzzed ones (parsed ${REGEX_ROUNDS} times each).`,
	);
	for (const [why, count] of answers.differences as Map<string, number>)
		console.log(`Trees differ: ${count} × ${why}.`);
	console.log(
		`${answers.invalid} fuzzed patterns V8 refuses: regexpp accepts ${answers.accepted}; its message is V8's (flags aside) for ${answers.sameMessage}. ` +
			"The hand-written parser never validates: config compiles with V8 first and shows V8's message.",
	);
	for (const line of [...(answers.examples as string[]), ...(answers.messageExamples as string[])])
		console.log(`  ${line}`);
}

function regexppVersion(): string {
	return (
		JSON.parse(readFileSync("node_modules/@eslint-community/regexpp/package.json", "utf8")) as { version: string }
	).version;
}

async function compareJsonReaders(): Promise<void> {
	const dir = mkdtempSync(join(tmpdir(), "pi-overflow-libraries-"));
	try {
		const small = smallJsonCases(dir).filter((jsonCase) => CASE === undefined || jsonCase.name.includes(CASE));
		const large = CASE === undefined || small.length === 0 ? await writeLargeCases(dir) : [];
		const cases = [...small, ...large.filter((jsonCase) => CASE === undefined || jsonCase.name.includes(CASE))];
		console.log("\n## jsonPath over a file read as a stream, the value printed as JSON.stringify(value, null, 2)\n");
		console.log("| input | candidate | time | peak RSS | answer | same as JSON.parse? |");
		console.log("|---|---|---|---|---|---|");
		for (const jsonCase of cases) {
			const runs = Object.keys(JSON_CANDIDATES).map((candidate) => ({
				candidate,
				...runChild(["json", candidate, jsonCase.file, JSON.stringify(jsonCase.segments)]),
			}));
			const reference = runs[runs.length - 1]!.result.answer as JsonAnswer;
			for (const { candidate, maxRssMb, result } of runs) {
				const answer = result.answer as JsonAnswer;
				const same = compareWithReference(answer, reference);
				const shown =
					answer.kind === "value"
						? `value ${digest(answer.text)} (${answer.text.length} chars)`
						: `${answer.kind}: ${answer.text}`;
				console.log(
					`| ${jsonCase.name} | ${candidate} | ${(result.ms as number).toFixed(0)} ms | ${maxRssMb} MB | ${cell(shown.replace(/\|/g, "\\|").replace(/\n/g, " "), 90)} | ${same} |`,
				);
			}
		}
	} finally {
		rmSync(dir, { recursive: true, force: true });
	}
}

async function child(args: string[]): Promise<void> {
	const [job, candidate, file, segments] = args;
	let result: unknown = {};
	if (job === "regex") result = await runRegexChild(candidate!);
	else if (job === "json") result = await runJsonChild(candidate!, file!, JSON.parse(segments!) as PathSegment[]);
	const maxRssMb = Math.round(process.resourceUsage().maxRSS / 1024);
	process.stdout.write(JSON.stringify({ maxRssMb, result }));
}

const childAt = process.argv.indexOf("--child");
if (childAt >= 0) await child(process.argv.slice(childAt + 1));
else await main();
