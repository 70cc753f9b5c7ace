// Tests for src/config/config.ts: every field falls back to its default on its own, problems are visible
// and precise, and the shipped config/pi-overflow.json is exactly the defaults.

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { describe, test } from "node:test";
import { fileURLToPath } from "node:url";

import {
	DEFAULT_CONFIG,
	DEFAULT_EXEMPT_TOOLS,
	DEFAULT_MAX_STORE_BYTES,
	MAX_CONFIG_FILE_BYTES,
	createDefaultConfig,
	formatConfigProblems,
	loadConfig,
	parseConfig,
	type ConfigProblem,
	type OverflowConfig,
} from "../../src/config/config.js";
import { DEFAULT_SIGNAL_PATTERN } from "../../src/signals/pattern.js";

const MIB = 1024 * 1024;
const GIB = 1024 * MIB;
const TIB = 1024 * GIB;
const SHIPPED_CONFIG_PATH = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "config", "pi-overflow.json");

/** Valid values that all differ from the defaults, as raw JSON text. */
const CUSTOM_RAW: Record<string, string> = {
	thresholdChars: "30000",
	headLines: "10",
	tailLines: "20",
	maxSignalLines: "5",
	maxLineChars: "200",
	signalPattern: '"boom"',
	contextLines: "3",
	maxResults: "7",
	searchTimeoutMs: "500",
	maxEntryBytes: String(2 * MIB),
	maxStoreBytes: String(64 * MIB),
	retentionDays: "1.5",
	exemptTools: '["read", "custom_tool"]',
	maskAfterChars: "60000",
	maskBatchChars: "0",
	contextShare: "0.35",
	minViewChars: "3000",
};

const CUSTOM_VALUES: Record<string, unknown> = Object.fromEntries(
	Object.entries(CUSTOM_RAW).map(([field, raw]) => [field, JSON.parse(raw)]),
);

function buildText(fields: Record<string, string>): string {
	return `{\n${Object.entries(fields)
		.map(([field, raw]) => `  ${JSON.stringify(field)}: ${raw}`)
		.join(",\n")}\n}`;
}

function assertIsDefaultConfig(config: OverflowConfig): void {
	assert.deepEqual(config, DEFAULT_CONFIG);
}

function assertOneLine(text: string): void {
	assert.ok(!/[\r\n\u2028\u2029]/.test(text), `expected one line, got ${JSON.stringify(text)}`);
}

function fieldsOf(problems: ConfigProblem[]): string[] {
	return problems.map((problem) => problem.field);
}

function integerBadValues(min: number, max: number): string[] {
	return [
		JSON.stringify(String(min)), // a number written as a string
		String(min - 1),
		String(max + 1),
		String(min + 0.5),
		"null",
		"true",
		"[]",
		"{}",
		"1e999", // parses to Infinity
		"-1e999",
		'"NaN"',
	];
}

/** Bad raw values per field; each must fall back to the default alone. */
const BAD_VALUES: Record<string, string[]> = {
	thresholdChars: integerBadValues(1_000, 10_000_000),
	headLines: integerBadValues(0, 10_000),
	tailLines: integerBadValues(1, 10_000),
	maxSignalLines: integerBadValues(0, 1_000),
	maxLineChars: integerBadValues(80, 100_000),
	contextLines: integerBadValues(0, 50),
	maxResults: integerBadValues(1, 10_000),
	searchTimeoutMs: integerBadValues(100, 60_000),
	maxEntryBytes: integerBadValues(MIB, 4 * GIB),
	// The lower bound of maxStoreBytes is the effective maxEntryBytes (2 MiB in CUSTOM_RAW).
	maxStoreBytes: [
		String(2 * MIB - 1),
		String(MIB),
		String(TIB + 1),
		String(64 * MIB + 0.5),
		'"67108864"',
		"null",
		"false",
		"1e999",
	],
	retentionDays: ['"7"', "0.009", "0", "-1", "3650.5", "null", "true", "[7]", "1e999"],
	signalPattern: [
		'""',
		'"x*"',
		'"a|"',
		'"(?:)"',
		'"^"',
		'"(unclosed"',
		'"[z-a]"',
		"42",
		"null",
		'["error"]',
		JSON.stringify("e".repeat(4001)),
	],
	exemptTools: ['"read"', "null", "{}", "42", "true"],
	maskAfterChars: integerBadValues(0, 100_000_000),
	maskBatchChars: integerBadValues(0, 100_000_000),
	contextShare: ['"0.2"', "0", "0.009", "1.01", "-0.5", "null", "true", "[0.2]", "1e999"],
	minViewChars: integerBadValues(1_000, 100_000),
};

describe("DEFAULT_CONFIG", () => {
	test("holds the documented defaults", () => {
		assert.equal(DEFAULT_CONFIG.thresholdChars, 24_000);
		assert.equal(DEFAULT_CONFIG.headLines, 60);
		assert.equal(DEFAULT_CONFIG.tailLines, 80);
		assert.equal(DEFAULT_CONFIG.maxSignalLines, 40);
		assert.equal(DEFAULT_CONFIG.maxLineChars, 500);
		assert.equal(DEFAULT_CONFIG.contextLines, 2);
		assert.equal(DEFAULT_CONFIG.maxResults, 50);
		assert.equal(DEFAULT_CONFIG.searchTimeoutMs, 2_000);
		assert.equal(DEFAULT_CONFIG.maxEntryBytes, 32 * MIB);
		assert.equal(DEFAULT_CONFIG.maxStoreBytes, 512 * MIB);
		assert.equal(DEFAULT_CONFIG.retentionDays, 7);
		assert.deepEqual(DEFAULT_CONFIG.exemptTools, ["read", "edit", "write", "overflow_query", "ask_user_question"]);
		assert.equal(DEFAULT_CONFIG.maskAfterChars, 40_000);
		assert.equal(DEFAULT_CONFIG.maskBatchChars, 20_000);
		assert.equal(DEFAULT_CONFIG.contextShare, 0.2);
		assert.equal(DEFAULT_CONFIG.minViewChars, 2_000);
	});

	test("takes its signal pattern from src/signals/pattern.ts and compiles it case-insensitive", () => {
		assert.equal(DEFAULT_CONFIG.signalPattern, DEFAULT_SIGNAL_PATTERN);
		assert.equal(DEFAULT_CONFIG.signalRegex.source, new RegExp(DEFAULT_SIGNAL_PATTERN, "i").source);
		assert.equal(DEFAULT_CONFIG.signalRegex.flags, "i");
		assert.equal(DEFAULT_CONFIG.signalRegex.test(""), false);
	});

	test("is frozen, its exemptTools and regex too, and the regex still tests lines", () => {
		assert.ok(Object.isFrozen(DEFAULT_CONFIG));
		assert.ok(Object.isFrozen(DEFAULT_CONFIG.exemptTools));
		assert.ok(Object.isFrozen(DEFAULT_CONFIG.signalRegex));
		assert.ok(Object.isFrozen(DEFAULT_EXEMPT_TOOLS));
		assert.throws(() => DEFAULT_CONFIG.exemptTools.push("bash"), TypeError);
		assert.equal(DEFAULT_CONFIG.signalRegex.test("ERROR: something broke"), true);
		assert.equal(DEFAULT_CONFIG.signalRegex.test("ERROR: something broke"), true);
	});

	test("createDefaultConfig returns a fresh mutable copy each time", () => {
		const first = createDefaultConfig();
		const second = createDefaultConfig();
		assert.deepEqual(first, DEFAULT_CONFIG);
		assert.notEqual(first.exemptTools, second.exemptTools);
		assert.notEqual(first.signalRegex, second.signalRegex);
		first.exemptTools.push("bash");
		assert.deepEqual(second.exemptTools, [...DEFAULT_EXEMPT_TOOLS]);
	});
});

describe("the shipped config/pi-overflow.json", () => {
	test("parses to exactly DEFAULT_CONFIG with zero problems", () => {
		const { config, problems } = parseConfig(readFileSync(SHIPPED_CONFIG_PATH, "utf8"));
		assert.deepEqual(problems, []);
		assertIsDefaultConfig(config);
	});

	test("loads through loadConfig to exactly DEFAULT_CONFIG with zero problems", () => {
		const { config, problems } = loadConfig(SHIPPED_CONFIG_PATH);
		assert.deepEqual(problems, []);
		assertIsDefaultConfig(config);
	});

	test("documents every field, signalPattern as a comment only", () => {
		const text = readFileSync(SHIPPED_CONFIG_PATH, "utf8");
		for (const field of Object.keys(CUSTOM_RAW)) {
			assert.ok(text.includes(`"${field}"`), `${field} is documented`);
		}
		assert.match(text, /^\s*\/\/\s*"signalPattern":/m);
	});
});

describe("parseConfig with valid values", () => {
	test("honours every valid non-default field", () => {
		const { config, problems } = parseConfig(buildText(CUSTOM_RAW));
		assert.deepEqual(problems, []);
		for (const [field, value] of Object.entries(CUSTOM_VALUES)) {
			assert.deepEqual(config[field as keyof OverflowConfig], value, field);
		}
	});

	test("uses defaults silently for missing fields", () => {
		const { config, problems } = parseConfig('{ "headLines": 5 }');
		assert.deepEqual(problems, []);
		assert.deepEqual(config, { ...createDefaultConfig(), headLines: 5 });
	});

	test("accepts both ends of every range", () => {
		const low = parseConfig(
			'{"thresholdChars":1000,"headLines":0,"tailLines":1,"maxSignalLines":0,"maxLineChars":80,"contextLines":0,' +
				`"maxResults":1,"searchTimeoutMs":100,"maxEntryBytes":${MIB},"maxStoreBytes":${MIB},"retentionDays":0.01,` +
				'"maskAfterChars":0,"maskBatchChars":0,"contextShare":0.01,"minViewChars":1000}',
		);
		assert.deepEqual(low.problems, []);
		assert.equal(low.config.maxStoreBytes, MIB);
		assert.equal(low.config.retentionDays, 0.01);
		const high = parseConfig(
			'{"thresholdChars":10000000,"headLines":10000,"tailLines":10000,"maxSignalLines":1000,"maxLineChars":100000,' +
				`"contextLines":50,"maxResults":10000,"searchTimeoutMs":60000,"maxEntryBytes":${4 * GIB},"maxStoreBytes":${TIB},"retentionDays":3650,` +
				'"maskAfterChars":100000000,"maskBatchChars":100000000,"contextShare":1,"minViewChars":100000}',
		);
		assert.deepEqual(high.problems, []);
		assert.equal(high.config.maxEntryBytes, 4 * GIB);
		assert.equal(high.config.maxStoreBytes, TIB);
	});

	test("accepts integers written with a fraction or exponent that are still whole", () => {
		const { config, problems } = parseConfig('{ "thresholdChars": 24000.0, "headLines": 1e2 }');
		assert.deepEqual(problems, []);
		assert.equal(config.thresholdChars, 24_000);
		assert.equal(config.headLines, 100);
	});

	test("accepts comments and trailing commas", () => {
		const text = `// leading comment
      {
        /* block comment */ "headLines": 12, // trailing comment
        "exemptTools": ["read", "write",],
      }`;
		const { config, problems } = parseConfig(text);
		assert.deepEqual(problems, []);
		assert.equal(config.headLines, 12);
		assert.deepEqual(config.exemptTools, ["read", "write"]);
	});

	test("accepts a leading byte order mark", () => {
		const { config, problems } = parseConfig('\uFEFF{ "tailLines": 9 }');
		assert.deepEqual(problems, []);
		assert.equal(config.tailLines, 9);
	});

	test("treats an empty or comment-only file as all defaults without a problem", () => {
		for (const text of ["", "   \n", '// everything commented out\n/* "headLines": 3 */']) {
			const { config, problems } = parseConfig(text);
			assert.deepEqual(problems, [], JSON.stringify(text));
			assertIsDefaultConfig(config);
		}
	});

	test("honours a custom signalPattern and compiles it case-insensitive", () => {
		const { config, problems } = parseConfig('{ "signalPattern": "\\\\bkaboom\\\\b" }');
		assert.deepEqual(problems, []);
		assert.equal(config.signalPattern, "\\bkaboom\\b");
		assert.equal(config.signalRegex.flags, "i");
		assert.equal(config.signalRegex.test("then KaBoom happened"), true);
		assert.equal(config.signalRegex.test("kaboomerang"), false);
		assert.equal(config.signalRegex.test("ERROR: unrelated"), false);
	});

	test("accepts an empty exemptTools array and removes duplicate names", () => {
		assert.deepEqual(parseConfig('{ "exemptTools": [] }').config.exemptTools, []);
		const { config, problems } = parseConfig('{ "exemptTools": ["read", "read", "bash"] }');
		assert.deepEqual(problems, []);
		assert.deepEqual(config.exemptTools, ["read", "bash"]);
	});

	test("raises maxStoreBytes to a large maxEntryBytes silently when maxStoreBytes is not set", () => {
		const { config, problems } = parseConfig(`{ "maxEntryBytes": ${GIB} }`);
		assert.deepEqual(problems, []);
		assert.equal(config.maxEntryBytes, GIB);
		assert.equal(config.maxStoreBytes, GIB);
	});

	test("returns fresh arrays and regexes that are not shared between results or with DEFAULT_CONFIG", () => {
		const first = parseConfig("{}").config;
		const second = parseConfig("{}").config;
		assert.notEqual(first.exemptTools, DEFAULT_CONFIG.exemptTools);
		assert.notEqual(first.exemptTools, second.exemptTools);
		assert.notEqual(first.signalRegex, second.signalRegex);
		first.exemptTools.push("bash");
		assert.deepEqual(second.exemptTools, [...DEFAULT_EXEMPT_TOOLS]);
		assert.deepEqual(DEFAULT_CONFIG.exemptTools, [...DEFAULT_EXEMPT_TOOLS]);
	});
});

describe("parseConfig with bad values", () => {
	for (const [field, badValues] of Object.entries(BAD_VALUES)) {
		test(`falls back to the default ${field} for each bad value while honouring the other fields`, () => {
			for (const raw of badValues) {
				const { config, problems } = parseConfig(buildText({ ...CUSTOM_RAW, [field]: raw }));
				const label = `${field} = ${raw.slice(0, 60)}`;
				assert.deepEqual(fieldsOf(problems), [field], label);
				assert.deepEqual(config[field as keyof OverflowConfig], DEFAULT_CONFIG[field as keyof OverflowConfig], label);
				for (const [other, value] of Object.entries(CUSTOM_VALUES)) {
					if (other !== field)
						assert.deepEqual(config[other as keyof OverflowConfig], value, `${label}: ${other} kept`);
				}
				const message = problems[0]!.message;
				assert.ok(message.includes(field), `${label}: message names the field: ${message}`);
				assert.match(message, /default/, `${label}: message says the default is used`);
				assertOneLine(message);
			}
		});
	}

	test("keeps the default regex in step with the default pattern when a pattern is rejected", () => {
		const { config } = parseConfig('{ "signalPattern": "(" }');
		assert.equal(config.signalPattern, DEFAULT_SIGNAL_PATTERN);
		assert.equal(config.signalRegex.source, DEFAULT_CONFIG.signalRegex.source);
	});

	test("says why a signalPattern was rejected", () => {
		assert.match(parseConfig('{ "signalPattern": "(" }').problems[0]!.message, /does not compile/);
		assert.match(parseConfig('{ "signalPattern": "x*" }').problems[0]!.message, /matches an empty line/);
		assert.match(parseConfig('{ "signalPattern": "" }').problems[0]!.message, /non-empty/);
		const long = parseConfig(JSON.stringify({ signalPattern: `${"a".repeat(3000)}(` })).problems[0]!.message;
		assert.ok(long.length < 250, `message stays short: ${long.length} chars`);
	});

	test("echoes the bad value, states the allowed range and the default used", () => {
		const { problems } = parseConfig('{ "thresholdChars": "abc" }');
		assert.equal(
			problems[0]!.message,
			'ignored thresholdChars ("abc"): expected an integer 1000–10000000, default 24000 used',
		);
		const infinity = parseConfig('{ "headLines": 1e999 }').problems[0]!.message;
		assert.match(infinity, /\(Infinity\)/);
		const bytes = parseConfig('{ "maxEntryBytes": 5 }').problems[0]!.message;
		assert.match(bytes, /1 MiB–4 GiB/);
	});

	test("shortens a long bad value in the message", () => {
		const long = "x".repeat(500);
		const { problems } = parseConfig(`{ "thresholdChars": "${long}" }`);
		const message = problems[0]!.message;
		assert.ok(!message.includes(long));
		const echoed = /\((.*?)\)/.exec(message)![1]!;
		assert.ok(echoed.length <= 40, `echo is ${echoed.length} chars`);
		assert.ok(echoed.endsWith("…"));
	});

	test("reports each bad field separately and keeps the good ones", () => {
		const { config, problems } = parseConfig(
			'{ "headLines": -1, "tailLines": 0, "maxResults": 9, "retentionDays": "x" }',
		);
		assert.deepEqual(fieldsOf(problems), ["headLines", "tailLines", "retentionDays"]);
		assert.equal(config.headLines, 60);
		assert.equal(config.tailLines, 80);
		assert.equal(config.maxResults, 9);
		assert.equal(config.retentionDays, 7);
	});

	test("drops non-string and empty exemptTools items, keeps the valid ones and reports them once", () => {
		const { config, problems } = parseConfig('{ "exemptTools": ["read", 42, "", "bash", null, "  ", {"a":1}] }');
		assert.deepEqual(config.exemptTools, ["read", "bash"]);
		assert.deepEqual(fieldsOf(problems), ["exemptTools"]);
		const message = problems[0]!.message;
		assert.match(message, /dropped 5 exemptTools items/);
		assert.match(message, /\[1\] 42/);
		assert.match(message, /2 kept/);
	});

	test("falls back to the default maxStoreBytes when it is below the custom maxEntryBytes", () => {
		const { config, problems } = parseConfig(`{ "maxEntryBytes": ${8 * MIB}, "maxStoreBytes": ${4 * MIB} }`);
		assert.equal(config.maxEntryBytes, 8 * MIB);
		assert.equal(config.maxStoreBytes, DEFAULT_MAX_STORE_BYTES);
		assert.deepEqual(fieldsOf(problems), ["maxStoreBytes"]);
		assert.match(problems[0]!.message, /at least maxEntryBytes/);
	});

	test("falls back to maxEntryBytes when both the given and the default maxStoreBytes are below it", () => {
		const { config, problems } = parseConfig(`{ "maxEntryBytes": ${GIB}, "maxStoreBytes": ${900 * MIB} }`);
		assert.equal(config.maxEntryBytes, GIB);
		assert.equal(config.maxStoreBytes, GIB);
		assert.deepEqual(fieldsOf(problems), ["maxStoreBytes"]);
		assert.match(problems[0]!.message, /\(maxEntryBytes\) used/);
	});

	test("checks maxStoreBytes against the default maxEntryBytes when maxEntryBytes itself is bad", () => {
		const { config, problems } = parseConfig(`{ "maxEntryBytes": "big", "maxStoreBytes": ${16 * MIB} }`);
		assert.equal(config.maxEntryBytes, 32 * MIB);
		assert.equal(config.maxStoreBytes, DEFAULT_MAX_STORE_BYTES);
		assert.deepEqual(fieldsOf(problems), ["maxEntryBytes", "maxStoreBytes"]);
	});
});

describe("parseConfig with unknown or repeated fields", () => {
	test("reports an unknown field, suggests the closest one, and honours the rest", () => {
		const { config, problems } = parseConfig('{ "tresholdChars": 5000, "headLines": 3 }');
		assert.deepEqual(fieldsOf(problems), ["tresholdChars"]);
		assert.match(problems[0]!.message, /unknown field "tresholdChars" ignored \(did you mean thresholdChars\?\)/);
		assert.equal(config.thresholdChars, 24_000);
		assert.equal(config.headLines, 3);
	});

	test("reports an unknown field without a suggestion when nothing is close", () => {
		const { problems } = parseConfig('{ "colour": "blue" }');
		assert.equal(problems[0]!.message, 'unknown field "colour" ignored');
	});

	test("does not accept signalRegex as a field", () => {
		const { config, problems } = parseConfig('{ "signalRegex": "x" }');
		assert.deepEqual(fieldsOf(problems), ["signalRegex"]);
		assertIsDefaultConfig(config);
	});

	test("reports a __proto__ key as unknown and never lets it supply fields", () => {
		const { config, problems } = parseConfig('{ "__proto__": { "thresholdChars": 5000, "exemptTools": [] } }');
		assert.deepEqual(fieldsOf(problems), ["__proto__"]);
		assertIsDefaultConfig(config);
		assert.equal(Object.getPrototypeOf(config), Object.prototype);
	});

	test("uses the last of a repeated field and says so", () => {
		const { config, problems } = parseConfig('{ "headLines": 3, "headLines": 4 }');
		assert.equal(config.headLines, 4);
		assert.deepEqual(fieldsOf(problems), ["headLines"]);
		assert.match(problems[0]!.message, /more than once/);
	});
});

describe("parseConfig with unparsable text", () => {
	const unparsable = [
		'{ "headLines": }',
		"{",
		'{ "headLines": 3 ',
		"not json at all",
		'{ "headLines": NaN }',
		"{ headLines: 3 }",
		'{ "headLines": 3 } trailing',
		"[1, 2, 3]",
		"42",
		"null",
		'"a string"',
		"true",
	];
	for (const text of unparsable) {
		test(`gives all defaults and exactly one problem for ${JSON.stringify(text)}`, () => {
			const { config, problems } = parseConfig(text);
			assertIsDefaultConfig(config);
			assert.equal(problems.length, 1);
			assert.equal(problems[0]!.field, "");
			assert.match(problems[0]!.message, /all defaults used/);
			assertOneLine(problems[0]!.message);
		});
	}

	test("gives all defaults and one problem instead of throwing on absurdly deep nesting", () => {
		const depth = 100_000;
		const { config, problems } = parseConfig(`{ "exemptTools": ${"[".repeat(depth)}${"]".repeat(depth)} }`);
		assertIsDefaultConfig(config);
		assert.equal(problems.length, 1);
		assert.match(problems[0]!.message, /all defaults used/);
	});

	test("names the line and column of a syntax error", () => {
		const { problems } = parseConfig('{\n  "headLines": 3,\n  "tailLines": ?\n}');
		assert.match(problems[0]!.message, /line 3, column 16/);
	});

	test("names what it found when the top level is not an object", () => {
		assert.match(parseConfig("[1]").problems[0]!.message, /found an array/);
		assert.match(parseConfig("null").problems[0]!.message, /found null/);
	});
});

describe("formatConfigProblems", () => {
	test("returns an empty string when there are no problems", () => {
		assert.equal(formatConfigProblems([]), "");
	});

	test("puts every problem on one line, prefixed with pi-overflow and the path", () => {
		const { problems } = parseConfig(
			'{ "thresholdChars": "abc", "headLines": -5, "typo": 1, "signalPattern": "line\\nbreak(" }',
		);
		assert.equal(problems.length, 4);
		const line = formatConfigProblems(problems, "config/pi-overflow.json");
		assertOneLine(line);
		assert.ok(line.startsWith('pi-overflow: config/pi-overflow.json: ignored thresholdChars ("abc")'), line);
		for (const field of ["thresholdChars", "headLines", "typo", "signalPattern"])
			assert.ok(line.includes(field), field);
	});

	test("omits the path when none is given", () => {
		const line = formatConfigProblems(parseConfig('{ "headLines": -5 }').problems);
		assert.ok(line.startsWith("pi-overflow: ignored headLines (-5)"), line);
	});

	test("keeps one line even when the path or a message holds line breaks", () => {
		const line = formatConfigProblems([{ field: "x", message: "first\nsecond\r\nthird" }], "/tmp/odd\ndir/c.json");
		assertOneLine(line);
	});

	test("summarises beyond ten problems as a count", () => {
		const fields = Array.from({ length: 14 }, (_, index) => `"unknown${index}": 1`).join(", ");
		const line = formatConfigProblems(parseConfig(`{ ${fields} }`).problems, "c.json");
		assert.match(line, /and 4 more problems$/);
		assertOneLine(line);
	});
});

describe("loadConfig", () => {
	function makeTempDir(): string {
		return mkdtempSync(join(tmpdir(), "pi-overflow-config-"));
	}

	test("gives all defaults and no problem when the file is missing", () => {
		const dir = makeTempDir();
		try {
			const { config, problems } = loadConfig(join(dir, "missing.json"));
			assert.deepEqual(problems, []);
			assertIsDefaultConfig(config);
		} finally {
			rmSync(dir, { recursive: true, force: true });
		}
	});

	test("reads and honours a config file", () => {
		const dir = makeTempDir();
		try {
			const path = join(dir, "pi-overflow.json");
			writeFileSync(path, '// mine\n{ "headLines": 7, "exemptTools": ["bash"], }\n');
			const { config, problems } = loadConfig(path);
			assert.deepEqual(problems, []);
			assert.equal(config.headLines, 7);
			assert.deepEqual(config.exemptTools, ["bash"]);
		} finally {
			rmSync(dir, { recursive: true, force: true });
		}
	});

	test("gives all defaults and one problem when the path is a directory", () => {
		const dir = makeTempDir();
		try {
			const path = join(dir, "pi-overflow.json");
			mkdirSync(path);
			const { config, problems } = loadConfig(path);
			assertIsDefaultConfig(config);
			assert.equal(problems.length, 1);
			assert.match(problems[0]!.message, /could not read the file \(not a regular file\); all defaults used/);
		} finally {
			rmSync(dir, { recursive: true, force: true });
		}
	});

	test("refuses a FIFO without blocking", () => {
		const dir = makeTempDir();
		try {
			const path = join(dir, "pi-overflow.json");
			try {
				execFileSync("mkfifo", [path]);
			} catch {
				return; // no mkfifo on this platform
			}
			const { config, problems } = loadConfig(path);
			assertIsDefaultConfig(config);
			assert.equal(problems.length, 1);
			assert.match(problems[0]!.message, /not a regular file/);
		} finally {
			rmSync(dir, { recursive: true, force: true });
		}
	});

	test("refuses a file larger than MAX_CONFIG_FILE_BYTES", () => {
		const dir = makeTempDir();
		try {
			const path = join(dir, "pi-overflow.json");
			writeFileSync(path, `{}${" ".repeat(MAX_CONFIG_FILE_BYTES)}`);
			const { config, problems } = loadConfig(path);
			assertIsDefaultConfig(config);
			assert.equal(problems.length, 1);
			assert.match(problems[0]!.message, /at most 1048576 are read/);
		} finally {
			rmSync(dir, { recursive: true, force: true });
		}
	});

	test("reports an unparsable file once and uses all defaults", () => {
		const dir = makeTempDir();
		try {
			const path = join(dir, "pi-overflow.json");
			writeFileSync(path, "{ oops");
			const { config, problems } = loadConfig(path);
			assertIsDefaultConfig(config);
			assert.equal(problems.length, 1);
		} finally {
			rmSync(dir, { recursive: true, force: true });
		}
	});
});
