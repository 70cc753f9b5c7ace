// Tests for src/config/fields.ts: the one field table is what the parser enforces, what the shipped
// config/pi-overflow.json holds and documents, and what the README's configuration table says; the
// README's Layout lists every module; and the layering of several files (config.ts) field by field.

import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, test } from "node:test";
import {
	CONFIG_FIELDS,
	type ConfigField,
	describeAllowed,
	describeDefault,
	DEFAULT_CONFIG,
	parseConfig,
	parseConfigLayer,
	resolveConfigLayers,
} from "../../src/config/config.js";
import { REPO_ROOT } from "../helpers/paths.js";

const SHIPPED = readFileSync(join(REPO_ROOT, "config", "pi-overflow.json"), "utf8");
const README = readFileSync(join(REPO_ROOT, "README.md"), "utf8");

/** The comment lines right above a field in the shipped file, joined. */
function commentAbove(field: string): string {
	const lines = SHIPPED.split("\n");
	const at = lines.findIndex((line) => new RegExp(`^\\s*(//\\s*)?"${field}":`).test(line));
	assert.ok(at >= 0, `${field} is in the shipped file`);
	const comments: string[] = [];
	for (let index = at - 1; index >= 0 && /^\s*\/\//.test(lines[index]!); index--)
		comments.unshift(lines[index]!.replace(/^\s*\/\/\s?/, ""));
	return comments.join(" ");
}

function readmeRow(field: ConfigField): string {
	return `| \`${field.name}\` | ${describeDefault(field)} | ${describeAllowed(field)} | ${field.doc} |`;
}

describe("the field table", () => {
	test("the shipped file sets every field to its default (signalPattern commented out) and states its range", () => {
		const { config, problems } = parseConfig(SHIPPED);
		assert.deepEqual(problems, []);
		for (const field of CONFIG_FIELDS) {
			assert.deepEqual(config[field.name], DEFAULT_CONFIG[field.name], field.name);
			const comment = commentAbove(field.name);
			if (field.kind === "pattern") {
				assert.match(SHIPPED, /^\s*\/\/\s*"signalPattern":/m);
				assert.doesNotMatch(SHIPPED, /^\s*"signalPattern":/m);
			} else {
				assert.ok(
					SHIPPED.includes(`"${field.name}": ${JSON.stringify(field.default).replace(/,/g, ", ")}`),
					`${field.name} written with its default`,
				);
			}
			if ((field.kind === "integer" || field.kind === "number") && field.minField === undefined) {
				assert.ok(
					comment.includes(`${field.min} – ${field.max}`) || comment.includes(`${field.min} (`),
					`${field.name}: the comment states ${field.min} – ${field.max}: ${comment}`,
				);
				assert.match(comment, field.kind === "integer" ? /Integer/ : /Number/, field.name);
			}
			if (field.kind === "boolean") assert.match(comment, /true or false/, field.name);
		}
	});

	test("the README's configuration table is the field table, row for row", () => {
		const start = README.indexOf("| field | default | allowed | meaning |");
		assert.ok(start >= 0, "the README has the table");
		const lines = README.slice(start).split("\n").slice(2);
		const rows = lines.slice(
			0,
			lines.findIndex((line) => !line.startsWith("|")),
		);
		assert.deepEqual(rows, CONFIG_FIELDS.map(readmeRow));
	});

	test("the parser enforces each number field's range from the table, both ends in and one step out", () => {
		for (const field of CONFIG_FIELDS) {
			if ((field.kind !== "integer" && field.kind !== "number") || field.minField !== undefined) continue;
			const step = field.kind === "integer" ? 1 : 0.001;
			for (const [value, ok] of [
				[field.min, true],
				[field.max, true],
				[field.min - step, false],
				[field.max + step, false],
			] as const) {
				const { config, problems } = parseConfig(JSON.stringify({ [field.name]: value }));
				assert.equal(problems.length === 0, ok, `${field.name} = ${value}`);
				assert.equal(config[field.name], ok ? value : field.default, `${field.name} = ${value}`);
			}
		}
	});
});

describe("layering config files", () => {
	const layer = (text: string, source: string) => parseConfigLayer(text, source);

	test("a later file wins field by field; fields it does not set keep the earlier file's value", () => {
		const { config, problems } = resolveConfigLayers([
			layer('{ "headLines": 10, "tailLines": 20 }', "bundle"),
			layer('{ "tailLines": 30 }', "user"),
		]);
		assert.deepEqual(problems, []);
		assert.equal(config.headLines, 10);
		assert.equal(config.tailLines, 30);
		assert.equal(config.maxSignalLines, DEFAULT_CONFIG.maxSignalLines);
	});

	test("a bad value in the later file falls back to the earlier file's, and the problem names the later file", () => {
		const { config, problems } = resolveConfigLayers([
			layer('{ "headLines": 10 }', "bundle.json"),
			layer('{ "headLines": -1, "colour": 1 }', "user.json"),
		]);
		assert.equal(config.headLines, 10);
		assert.deepEqual(
			problems.map((problem) => [problem.source, problem.field]),
			[
				["user.json", "headLines"],
				["user.json", "colour"],
			],
		);
		assert.match(
			problems[0]!.message,
			/ignored headLines \(-1\): expected an integer 0–10000, 10 from bundle\.json used/,
		);
	});

	test("maxStoreBytes is checked against the maxEntryBytes the layers give together", () => {
		const mib = 1024 * 1024;
		const { config, problems } = resolveConfigLayers([
			layer(`{ "maxStoreBytes": ${64 * mib} }`, "bundle"),
			layer(`{ "maxEntryBytes": ${128 * mib} }`, "user"),
		]);
		assert.equal(config.maxEntryBytes, 128 * mib);
		assert.equal(config.maxStoreBytes, DEFAULT_CONFIG.maxStoreBytes);
		assert.deepEqual(
			problems.map((problem) => [problem.source, problem.field]),
			[["bundle", "maxStoreBytes"]],
		);
	});

	test("a later file that does not parse is ignored as a whole, the earlier one still applies", () => {
		const user = layer("{ not json", "user.json");
		const { config, problems } = resolveConfigLayers([layer('{ "headLines": 10 }', "bundle.json"), user]);
		assert.equal(config.headLines, 10);
		assert.equal(problems.length, 1);
		assert.equal(problems[0]!.source, "user.json");
		assert.match(problems[0]!.message, /could not parse the file as JSONC/);
	});
});

test("the README's Layout names every module in src/", () => {
	const start = README.indexOf("## Layout");
	const block = README.slice(start, README.indexOf("```\n", README.indexOf("```", start) + 3));
	const globs = [...block.matchAll(/[\w-]+\*[\w.]*/g)].map(
		(match) => new RegExp(`^${match[0].replace(/\./g, "\\.").replace(/\*/g, "[\\w-]+")}$`),
	);
	const missing: string[] = [];
	const walk = (dir: string) => {
		for (const entry of readdirSync(dir, { withFileTypes: true })) {
			const path = join(dir, entry.name);
			if (entry.isDirectory()) walk(path);
			else if (/\.(ts|js)$/.test(entry.name)) {
				const named =
					block.includes(entry.name) ||
					block.includes(entry.name.replace(/\.(ts|js)$/, "")) ||
					globs.some((glob) => glob.test(entry.name));
				if (!named) missing.push(relative(REPO_ROOT, path));
			}
		}
	};
	walk(join(REPO_ROOT, "src"));
	assert.deepEqual(missing, []);
});
