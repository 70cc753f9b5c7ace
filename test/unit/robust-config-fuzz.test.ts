// Fuzzed configuration (fast-check): random JSON values for every field, random objects, random
// strings and bytes for the whole file, and files that are not files. parseConfig and loadConfig
// never throw; every field of the result is either valid on the documented terms (checked here by
// an independent reading of the SPEC's table) or its default; a field is reported in `problems`
// if and only if it was present and invalid; every problem is one short line that names its field.

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import fc from "fast-check";
import {
	type ConfigResult,
	createDefaultConfig,
	loadConfig,
	MAX_SIGNAL_PATTERN_CHARS,
	type OverflowConfig,
	parseConfig,
} from "../../src/config/config.js";
import { findBacktrackingRisk } from "../../src/regex/safety.js";
import { pickCount } from "../helpers/robust-common.js";
import { createTempDir } from "../helpers/tmp.js";

const MIB = 1024 * 1024;
const GIB = 1024 * MIB;
const TIB = 1024 * GIB;
const RUNS = pickCount(300, 5_000);
const DEFAULTS = createDefaultConfig();

type NumberField =
	| "thresholdChars"
	| "headLines"
	| "tailLines"
	| "maxSignalLines"
	| "maxLineChars"
	| "contextLines"
	| "maxResults"
	| "searchTimeoutMs"
	| "maxEntryBytes"
	| "retentionDays";

/** The SPEC's table, read independently of src/config/config.ts. */
const NUMBER_FIELDS: Record<NumberField, { integer: boolean; min: number; max: number }> = {
	thresholdChars: { integer: true, min: 1_000, max: 10_000_000 },
	headLines: { integer: true, min: 0, max: 10_000 },
	tailLines: { integer: true, min: 1, max: 10_000 },
	maxSignalLines: { integer: true, min: 0, max: 1_000 },
	maxLineChars: { integer: true, min: 80, max: 100_000 },
	contextLines: { integer: true, min: 0, max: 50 },
	maxResults: { integer: true, min: 1, max: 10_000 },
	searchTimeoutMs: { integer: true, min: 100, max: 60_000 },
	maxEntryBytes: { integer: true, min: MIB, max: 4 * GIB },
	retentionDays: { integer: false, min: 0.01, max: 3_650 },
};
const FIELDS = [...Object.keys(NUMBER_FIELDS), "maxStoreBytes", "signalPattern", "exemptTools"] as const;
type Field = (typeof FIELDS)[number];

function isAllowedNumber(value: unknown, rule: { integer: boolean; min: number; max: number }): value is number {
	return (
		typeof value === "number" &&
		Number.isFinite(value) &&
		(!rule.integer || Number.isInteger(value)) &&
		value >= rule.min &&
		value <= rule.max
	);
}

function isValidPattern(value: unknown): value is string {
	if (typeof value !== "string" || value.length === 0 || value.length > MAX_SIGNAL_PATTERN_CHARS) return false;
	try {
		// Documented rule: compiles, does not match an empty line, cannot backtrack catastrophically.
		return !new RegExp(value, "i").test("") && findBacktrackingRisk(value) === undefined;
	} catch {
		return false;
	}
}

function isValidToolName(value: unknown): value is string {
	return typeof value === "string" && value.trim() !== "";
}

/** Whether a present field's value is valid; maxStoreBytes depends on the effective maxEntryBytes. */
function isValidField(field: Field, value: unknown, maxEntryBytes: number): boolean {
	if (field in NUMBER_FIELDS) return isAllowedNumber(value, NUMBER_FIELDS[field as NumberField]);
	if (field === "maxStoreBytes") return isAllowedNumber(value, { integer: true, min: maxEntryBytes, max: TIB });
	if (field === "signalPattern") return isValidPattern(value);
	return Array.isArray(value) && value.every(isValidToolName);
}

/** Every field of a config is valid on the documented terms, whatever the input was. */
function assertConfigValid(config: OverflowConfig): void {
	for (const [field, rule] of Object.entries(NUMBER_FIELDS)) {
		assert.ok(
			isAllowedNumber(config[field as NumberField], rule),
			`${field} = ${config[field as NumberField]} is within its range`,
		);
	}
	assert.ok(
		isAllowedNumber(config.maxStoreBytes, { integer: true, min: config.maxEntryBytes, max: TIB }),
		"maxStoreBytes >= maxEntryBytes",
	);
	assert.ok(isValidPattern(config.signalPattern), "signalPattern compiles and does not match an empty line");
	assert.ok(
		config.signalRegex instanceof RegExp && config.signalRegex.source === new RegExp(config.signalPattern, "i").source,
	);
	assert.equal(config.signalRegex.flags, "i", "case-insensitive, never global (test() keeps no state)");
	assert.ok(
		Array.isArray(config.exemptTools) && config.exemptTools.every(isValidToolName),
		"exemptTools are tool names",
	);
	assert.equal(new Set(config.exemptTools).size, config.exemptTools.length, "no duplicate exempt tool");
}

function assertProblemsAreShortLines(result: ConfigResult): void {
	for (const problem of result.problems) {
		assert.ok(!/[\n\r\u2028\u2029]/.test(problem.message), `one line: ${JSON.stringify(problem.message)}`);
		assert.ok(problem.message.length <= 400, `short: ${problem.message.length} characters`);
		if (problem.field !== "")
			assert.ok(
				problem.message.includes(problem.field) || problem.message.includes(JSON.stringify(problem.field).slice(0, 20)),
				`names ${problem.field}`,
			);
	}
}

function parseSafely(text: string): ConfigResult {
	let result: ConfigResult | undefined;
	assert.doesNotThrow(() => {
		result = parseConfig(text);
	});
	return result as ConfigResult;
}

// ---- arbitraries ----

/** Numbers around every documented bound, plus the awkward ones. */
const interestingNumber = fc.oneof(
	fc.constantFrom(
		0,
		-0,
		-1,
		1,
		0.5,
		0.01,
		0.009,
		79,
		80,
		99,
		100,
		999,
		1000,
		1001,
		10_000,
		10_001,
		50,
		51,
		1000.5,
		MIB - 1,
		MIB,
		MIB + 1,
		4 * GIB,
		4 * GIB + 1,
		512 * MIB,
		TIB,
		TIB + 1,
		3650,
		3650.0001,
		1e21,
		-1e21,
		2 ** 53,
		2 ** 53 + 2,
		Number.MAX_VALUE,
		Number.MIN_VALUE,
		1e-300,
	),
	fc.integer({ min: -1_000_000, max: 20_000_000 }),
	fc.double({ noNaN: true, noDefaultInfinity: true }),
	fc.double({ min: 0, max: 4000, noNaN: true }),
);

const interestingString = fc.oneof(
	fc.string(),
	fc.constantFrom(
		"",
		" ",
		"24000",
		"1e3",
		"true",
		"error|fail",
		"(a+)+$",
		"^",
		"$",
		"a*",
		"[",
		"(?<n>x)\\k<n>",
		"\\",
		"a{2,1}",
		"(?i)error",
		"x".repeat(MAX_SIGNAL_PATTERN_CHARS),
		"x".repeat(MAX_SIGNAL_PATTERN_CHARS + 1),
		"\u0000",
		"read",
		"bash",
	),
	fc.stringMatching(/^[a-z|()*+?\\[\]^$.{}0-9-]{1,30}$/),
);

const anyJsonValue = fc.oneof(
	{ weight: 3, arbitrary: interestingNumber },
	{ weight: 2, arbitrary: interestingString },
	{ weight: 1, arbitrary: fc.constantFrom(null, true, false) },
	{
		weight: 1,
		arbitrary: fc.array(
			fc.oneof(interestingString, interestingNumber, fc.constant(null), fc.constantFrom("read", "bash", " ", "")),
			{ maxLength: 8 },
		),
	},
	{ weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
);

/** A random subset of the known fields with random values, plus a few unknown or hostile keys. */
const configObject = fc.record(
	{
		fields: fc.dictionary(fc.constantFrom(...FIELDS), anyJsonValue, { maxKeys: FIELDS.length }),
		unknown: fc.dictionary(
			fc.oneof(
				fc.constantFrom("__proto__", "constructor", "toString", "hasOwnProperty", "thresholdchars", "exempt_tools", ""),
				fc.string({ maxLength: 12 }),
			),
			anyJsonValue,
			{ maxKeys: 3 },
		),
	},
	{ requiredKeys: ["fields", "unknown"] },
);

test(`random JSON values for every field (${RUNS} runs): never a throw, each field valid or default, a field reported iff present and invalid`, () => {
	fc.assert(
		fc.property(configObject, ({ fields, unknown }) => {
			const known = new Set<string>(FIELDS);
			const extra = Object.entries(unknown).filter(([key]) => !known.has(key));
			// Written as JSON text by hand so "__proto__" stays an ordinary key, as it would in a file.
			const members = [...Object.entries(fields), ...extra].map(
				([key, value]) => `${JSON.stringify(key)}: ${JSON.stringify(value)}`,
			);
			const text = `{${members.join(",\n")}}`;
			const result = parseSafely(text);
			assertConfigValid(result.config);
			assertProblemsAreShortLines(result);
			// field "" means the file as a whole, except for an unknown key spelled "" (reported under its own name).
			const hasEmptyKey = extra.some(([key]) => key === "");
			assert.equal(
				result.problems.filter((problem) => problem.field === "").length,
				hasEmptyKey ? 1 : 0,
				"the file as a whole parses",
			);

			// What the file said, after a JSON round trip (NaN and Infinity become null).
			const written = JSON.parse(JSON.stringify(fields)) as Record<string, unknown>;
			const entryValue = written.maxEntryBytes;
			const maxEntryBytes =
				"maxEntryBytes" in written && isValidField("maxEntryBytes", entryValue, 0)
					? (entryValue as number)
					: DEFAULTS.maxEntryBytes;
			const expectedReported = new Set<string>(extra.map(([key]) => key));
			for (const field of FIELDS) {
				const present = field in written;
				const value = written[field];
				const valid = present && isValidField(field, value, maxEntryBytes);
				if (present && !valid) expectedReported.add(field);
				const actual = result.config[field as keyof OverflowConfig];
				if (field === "exemptTools") {
					const expected = Array.isArray(value) ? [...new Set(value.filter(isValidToolName))] : DEFAULTS.exemptTools;
					assert.deepEqual(
						actual,
						present ? expected : DEFAULTS.exemptTools,
						"exemptTools: the valid names, deduplicated, or the default",
					);
				} else if (field === "maxStoreBytes") {
					assert.equal(
						actual,
						valid ? value : Math.max(DEFAULTS.maxStoreBytes, maxEntryBytes),
						"maxStoreBytes or its default (at least maxEntryBytes)",
					);
				} else {
					assert.equal(
						actual,
						valid ? value : DEFAULTS[field as keyof OverflowConfig],
						`${field}: the value or its default`,
					);
				}
			}
			const reported = new Set(result.problems.map((problem) => problem.field));
			assert.deepEqual(
				[...reported].sort(),
				[...expectedReported].sort(),
				"reported fields = present and invalid fields (+ unknown keys)",
			);
		}),
		{ numRuns: RUNS },
	);
});

/** A valid config text, then damaged: characters inserted, removed or replaced anywhere. */
const damagedConfigText = fc
	.tuple(
		fc.constantFrom(
			'{ "thresholdChars": 30000, "headLines": 10, // comment\n "signalPattern": "error|fail", "exemptTools": ["read", "bash"], }',
			'/* all */ { "maxEntryBytes": 2097152, "maxStoreBytes": 4194304, "retentionDays": 0.5 }',
			'\ufeff{"tailLines": 5}',
			"",
		),
		fc.array(fc.tuple(fc.nat(), fc.nat({ max: 5 }), fc.string({ maxLength: 4 })), { maxLength: 6 }),
	)
	.map(([text, edits]) => {
		let out = text;
		for (const [at, remove, insert] of edits) {
			const position = out.length === 0 ? 0 : at % (out.length + 1);
			out = out.slice(0, position) + insert + out.slice(position + remove);
		}
		return out;
	});

const hostileText = fc.constantFrom(
	"[".repeat(100_000),
	'{"a":'.repeat(50_000),
	`{"thresholdChars": ${"9".repeat(400)}}`,
	'{"__proto__": {"thresholdChars": 5}, "constructor": {"prototype": {"x": 1}}}',
	'{"thresholdChars": 5000, "thresholdChars": "x"}',
	"null",
	"[]",
	'"a string"',
	"42",
	"/* unterminated",
	'{"signalPattern": "(a+)+$"}',
	"\u0000\u0001\u0002",
	'{"exemptTools": [' + '"x",'.repeat(10_000) + '"y"]}',
);

const wholeFile = fc.oneof(
	fc.string({ unit: "binary", maxLength: 300 }),
	fc.uint8Array({ maxLength: 300 }).map((bytes) => Buffer.from(bytes).toString("utf8")),
	fc.uint8Array({ maxLength: 300 }).map((bytes) => Buffer.from(bytes).toString("latin1")),
	fc.json({ maxDepth: 4 }),
	damagedConfigText,
	hostileText,
);

test(`random strings, bytes and damaged files as the whole config (${RUNS} runs): never a throw, every field valid`, () => {
	fc.assert(
		fc.property(wholeFile, (text) => {
			const result = parseSafely(text);
			assertConfigValid(result.config);
			assertProblemsAreShortLines(result);
		}),
		{ numRuns: RUNS },
	);
});

test("random bytes in a real config file, and a directory, a FIFO or an oversized file in its place, load as defaults or valid values", async (t) => {
	const dir = await createTempDir(t);
	const path = join(dir, "pi-overflow.json");
	fc.assert(
		fc.property(
			fc.oneof(
				fc.uint8Array({ maxLength: 400 }),
				wholeFile.map((text) => new Uint8Array(Buffer.from(text, "utf8"))),
			),
			(bytes) => {
				writeFileSync(path, bytes);
				let result: ConfigResult | undefined;
				assert.doesNotThrow(() => {
					result = loadConfig(path);
				});
				assertConfigValid((result as ConfigResult).config);
			},
		),
		{ numRuns: pickCount(100, 1_000) },
	);

	const directory = join(dir, "a-directory.json");
	mkdirSync(directory);
	const fifo = join(dir, "a-fifo.json");
	execFileSync("mkfifo", [fifo]);
	const oversized = join(dir, "oversized.json");
	writeFileSync(oversized, `{"headLines": 5, "pad": "${"x".repeat(2 * MIB)}"}`);
	for (const special of [directory, fifo, oversized]) {
		// Never blocks: an open that waited for a FIFO writer would never return.
		const result = loadConfig(special);
		assert.deepEqual(
			{ ...result.config, signalRegex: String(result.config.signalRegex) },
			{ ...DEFAULTS, signalRegex: String(DEFAULTS.signalRegex) },
		);
		assert.equal(result.problems.length, 1, "one problem says why the file was not read");
		assert.equal(result.problems[0].field, "");
	}
	assert.deepEqual(loadConfig(join(dir, "missing.json")).problems, [], "a missing file is all defaults, silently");
});
