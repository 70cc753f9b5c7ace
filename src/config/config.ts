// Configuration: parseConfig(text) -> { config, problems } (pure, never throws), the layering of
// several files field by field (the bundle's config/pi-overflow.json, then the user's
// <agentDir>/my-pi/pi-overflow.json, then a project's .pi/pi-overflow.json: the last that sets a
// field validly wins), and loadConfig / loadLayeredConfig, the only reads. The fields, defaults and
// ranges come from CONFIG_FIELDS (fields.ts).
// Invariant: every field of a returned config is valid on its own terms (type, range, a compiling
// signal pattern that cannot match an empty line, maxStoreBytes >= maxEntryBytes). A bad value is
// ignored alone and leaves one ConfigProblem naming it, echoing it (shortened) and saying what is
// allowed and what is used instead. Every returned config owns fresh arrays and a fresh RegExp.

import { closeSync, constants as fsConstants, fstatSync, openSync, readSync } from "node:fs";
import { getNodeValue, type Node, type ParseError, parseTree, printParseErrorCode, stripComments } from "jsonc-parser";
import {
	CONFIG_FIELD_NAMES,
	CONFIG_FIELDS,
	type ConfigField,
	createDefaultConfig,
	DEFAULT_EXEMPT_TOOLS,
	MAX_SIGNAL_PATTERN_CHARS,
	type NumberField,
	type OverflowConfig,
	suggestFieldName,
} from "./fields.js";
import { findBacktrackingRisk } from "../regex/safety.js";
import { describeError, keepStart, plural } from "../lines/text.js";

export * from "./fields.js";

/** Largest config file read, in bytes; anything bigger is not a hand-written config. */
export const MAX_CONFIG_FILE_BYTES = 1024 * 1024;
/** Longest echo of a bad value inside a problem message, in characters. */
const MAX_ECHO_CHARS = 40;
/** Most problems spelled out by formatConfigProblems before "and N more". */
const MAX_FORMATTED_PROBLEMS = 10;

export interface ConfigProblem {
	/** The field the problem is about; "" for the file as a whole. */
	field: string;
	/** One line: names the field, echoes the bad value, says what is allowed and what is used instead. */
	message: string;
	/** The file it is about, when several were read (loadLayeredConfig). */
	source?: string;
}

export interface ConfigResult {
	config: OverflowConfig;
	problems: ConfigProblem[];
}

/** One config file's fields as written (not yet checked), and the problems of the file itself. */
export interface ConfigLayer {
	/** How problems name the file: its path. */
	source: string;
	values: Map<string, unknown>;
	/** The file as a whole (unreadable, unparsable) and its unknown or repeated fields. */
	problems: ConfigProblem[];
}

/** A checked value: the value to use, and a note when part of it was dropped; or why it is refused. */
type FieldCheck = { value: unknown; regex?: RegExp; note?: string } | { error: string };

/**
 * Parse the JSONC text of one config file. Comments and trailing commas are allowed. Never throws:
 * an unparsable text, or one whose top level is not an object, gives all defaults and one problem;
 * a text that is empty or only comments gives all defaults and no problem.
 */
export function parseConfig(text: string): ConfigResult {
	const layer = parseConfigLayer(text, "");
	for (const problem of layer.problems) if (problem.field === "") problem.message += "; all defaults used";
	return resolveConfigLayers([layer]);
}

/** The fields one file sets, unchecked; never throws. `source` names the file in problems. */
export function parseConfigLayer(text: string, source: string): ConfigLayer {
	const layer: ConfigLayer = { source, values: new Map(), problems: [] };
	const fileProblem = (message: string) => layer.problems.push({ field: "", message, ...(source ? { source } : {}) });
	try {
		const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
		if (stripComments(body).trim() === "") return layer;
		const errors: ParseError[] = [];
		// parseTree rather than parse: parse assigns keys onto plain objects, so a "__proto__" key would
		// silently become the prototype (and leak inherited fields); the tree lists every key as written.
		const root = parseTree(body, errors, { allowTrailingComma: true, disallowComments: false });
		if (errors.length > 0 || root === undefined) {
			const first = errors[0];
			const where =
				first === undefined ? "" : ` (${printParseErrorCode(first.error)} at ${describeOffset(body, first.offset)})`;
			fileProblem(`could not parse the file as JSONC${where}`);
		} else if (root.type !== "object") {
			const found = root.type === "null" ? "null" : `${/^[aeiou]/.test(root.type) ? "an" : "a"} ${root.type}`;
			fileProblem(`expected a JSON object at the top level, found ${found}`);
		} else {
			collectFields(root, layer);
		}
	} catch (error) {
		// The JSONC parser recurses per nesting level: absurdly deep nesting overflows the stack.
		layer.values.clear();
		fileProblem(`could not parse the file (${shortenText(describeError(error), 80)})`);
	}
	return layer;
}

/**
 * The config the layers give, lowest first: for each field the value of the last layer that sets
 * it validly, else its default. Every invalid value is one problem; unknown fields follow.
 */
export function resolveConfigLayers(layers: readonly ConfigLayer[]): ConfigResult {
	const config = createDefaultConfig() as unknown as Record<string, unknown>;
	const problems: ConfigProblem[] = [];
	for (const field of CONFIG_FIELDS) {
		const fallback = fallbackValue(field, config);
		let chosen: { value: unknown; regex?: RegExp; layer: ConfigLayer } | undefined;
		const refused: Array<{ layer: ConfigLayer; value: unknown; error: string }> = [];
		for (let index = layers.length - 1; index >= 0; index--) {
			const layer = layers[index]!;
			if (!layer.values.has(field.name)) continue;
			const value = layer.values.get(field.name);
			const checked = checkField(field, value, config);
			if ("error" in checked) {
				refused.push({ layer, value, error: checked.error });
				continue;
			}
			if (checked.note !== undefined) problems.push(withSource({ field: field.name, message: checked.note }, layer));
			if (chosen === undefined) chosen = { value: checked.value, regex: checked.regex, layer };
		}
		config[field.name] = chosen?.value ?? fallback.value;
		if (field.kind === "pattern") config.signalRegex = chosen?.regex ?? new RegExp(field.default, "i");
		const used = chosen === undefined ? fallback.text : describeUsed(chosen.value, chosen.layer, layers);
		for (const item of refused.reverse()) {
			problems.push(
				withSource({ field: field.name, message: describeRefusal(field, item.value, item.error, used) }, item.layer),
			);
		}
	}
	for (const layer of layers) problems.push(...layer.problems.filter((problem) => problem.field !== ""));
	const fileProblems = layers.flatMap((layer) => layer.problems.filter((problem) => problem.field === ""));
	return { config: config as unknown as OverflowConfig, problems: [...fileProblems, ...problems] };
}

/** What a field falls back to when no layer sets it validly; maxStoreBytes rises to maxEntryBytes. */
function fallbackValue(field: ConfigField, config: Record<string, unknown>): { value: unknown; text: string } {
	if (field.kind === "tools")
		return { value: [...field.default], text: `default ${JSON.stringify(DEFAULT_EXEMPT_TOOLS)}` };
	if (field.kind === "pattern") return { value: field.default, text: "the built-in default pattern" };
	if ((field.kind === "integer" || field.kind === "number") && field.minField !== undefined) {
		const floor = config[field.minField] as number;
		if (floor > field.default) return { value: floor, text: `default ${floor} (${field.minField})` };
	}
	return { value: field.default, text: `default ${String(field.default)}` };
}

function describeUsed(value: unknown, layer: ConfigLayer, layers: readonly ConfigLayer[]): string {
	const text = Array.isArray(value) ? JSON.stringify(value) : String(value);
	return layers.length > 1 ? `${shortenText(text, MAX_ECHO_CHARS)} from ${layer.source || "the config"}` : text;
}

function describeRefusal(field: ConfigField, value: unknown, error: string, used: string): string {
	return `ignored ${field.name} (${describeValue(value)}): ${error}, ${used} used`;
}

function withSource(problem: ConfigProblem, layer: ConfigLayer): ConfigProblem {
	return layer.source ? { ...problem, source: layer.source } : problem;
}

// ---------------------------------------------------------------------------------------------
// Field checks

function collectFields(root: Node, layer: ConfigLayer): void {
	for (const property of root.children ?? []) {
		const [keyNode, valueNode] = property.children ?? [];
		if (keyNode === undefined || typeof keyNode.value !== "string") continue;
		const key = keyNode.value;
		const value = valueNode === undefined ? undefined : getNodeValue(valueNode);
		if (!CONFIG_FIELD_NAMES.includes(key)) {
			const hint = suggestFieldName(key);
			const message = `unknown field ${describeValue(key)} ignored${hint === undefined ? "" : ` (did you mean ${hint}?)`}`;
			layer.problems.push(withSource({ field: key, message }, layer));
			continue;
		}
		if (layer.values.has(key)) {
			layer.problems.push(
				withSource({ field: key, message: `field ${key} appears more than once; the last one is used` }, layer),
			);
		}
		layer.values.set(key, value);
	}
}

/** Checks one value against its field (and, for a bound like maxStoreBytes', the fields resolved before it). */
function checkField(field: ConfigField, value: unknown, config: Record<string, unknown>): FieldCheck {
	switch (field.kind) {
		case "integer":
		case "number":
			return checkNumber(field, value, config);
		case "pattern": {
			const compiled = compileSignalPattern(value);
			return "regex" in compiled ? { value, regex: compiled.regex } : compiled;
		}
		case "tools":
			return checkTools(value);
		case "boolean":
			return typeof value === "boolean" ? { value } : { error: "expected true or false" };
	}
}

function checkNumber(field: NumberField, value: unknown, config: Record<string, unknown>): FieldCheck {
	const min = field.minField === undefined ? field.min : (config[field.minField] as number);
	const integer = field.kind === "integer";
	const allowed =
		typeof value === "number" &&
		Number.isFinite(value) &&
		(!integer || Number.isInteger(value)) &&
		value >= min &&
		value <= field.max;
	if (allowed) return { value };
	const range = `${integer ? "an integer" : "a number"} ${min}–${field.max}`;
	return { error: field.note === undefined ? `expected ${range}` : `expected ${range} (${field.note})` };
}

/** Compile a candidate signal pattern, or say why it cannot be one. */
function compileSignalPattern(value: unknown): { regex: RegExp } | { error: string } {
	if (typeof value !== "string" || value.length === 0 || value.length > MAX_SIGNAL_PATTERN_CHARS) {
		return { error: `expected a non-empty JavaScript regex of at most ${MAX_SIGNAL_PATTERN_CHARS} characters` };
	}
	let regex: RegExp;
	try {
		regex = new RegExp(value, "i");
	} catch (error) {
		return { error: `does not compile (${describeRegexError(error)})` };
	}
	// A pattern that matches the empty string matches every line, so everything would be a signal.
	if (regex.test("")) return { error: "it matches an empty line, so every line would be a signal" };
	// It runs on every line of every large result, on Pi's main thread: no catastrophic backtracking.
	const risk = findBacktrackingRisk(value);
	if (risk) return { error: `${risk}; rewrite it without nested or stacked quantifiers` };
	return { regex };
}

function checkTools(value: unknown): FieldCheck {
	const allowed = "expected an array of non-empty tool-name strings";
	if (!Array.isArray(value)) return { error: allowed };
	const kept: string[] = [];
	const dropped: string[] = [];
	value.forEach((item: unknown, index: number) => {
		if (typeof item === "string" && item.trim() !== "") {
			if (!kept.includes(item)) kept.push(item);
		} else {
			dropped.push(`[${index}] ${describeValue(item)}`);
		}
	});
	if (dropped.length === 0) return { value: kept };
	const list = dropped.length > 5 ? `${dropped.slice(0, 5).join(", ")}, …` : dropped.join(", ");
	const note = `dropped ${plural(dropped.length, "exemptTools item")} (${list}): ${allowed}, the other ${kept.length} kept`;
	return { value: kept, note };
}

// ---------------------------------------------------------------------------------------------
// Messages

/**
 * One line for stderr or a UI notice, e.g.
 * `pi-overflow: config/pi-overflow.json: ignored thresholdChars ("abc"): expected an integer 1000–10000000, default 24000 used`.
 * Returns "" when there are no problems.
 */
export function formatConfigProblems(problems: readonly ConfigProblem[], path?: string): string {
	if (problems.length === 0) return "";
	const shown = problems.slice(0, MAX_FORMATTED_PROBLEMS).map((problem) => problem.message);
	const hidden = problems.length - shown.length;
	if (hidden > 0) shown.push(`and ${plural(hidden, "more problem")}`);
	const prefix = path === undefined || path === "" ? "pi-overflow: " : `pi-overflow: ${path}: `;
	return toOneLine(prefix + shown.join("; "));
}

/** One line per file with problems (each names its file), in the order the files were read. */
export function formatLayeredProblems(problems: readonly ConfigProblem[], fallbackPath?: string): string[] {
	const bySource = new Map<string, ConfigProblem[]>();
	for (const problem of problems) {
		const source = problem.source ?? fallbackPath ?? "";
		bySource.set(source, [...(bySource.get(source) ?? []), problem]);
	}
	return [...bySource].map(([source, list]) => formatConfigProblems(list, source));
}

/** The value as written in JSON (numbers as JS prints them, so Infinity stays visible), shortened. */
function describeValue(value: unknown): string {
	let text: string;
	if (typeof value === "number" || value === undefined) {
		text = String(value);
	} else {
		try {
			text = JSON.stringify(value) ?? String(value);
		} catch {
			text = String(value);
		}
	}
	return shortenText(text, MAX_ECHO_CHARS);
}

function shortenText(text: string, maxChars: number): string {
	return text.length <= maxChars ? text : `${keepStart(text, maxChars - 1)}…`;
}

function describeOffset(text: string, offset: number): string {
	let line = 1;
	let lineStart = 0;
	for (let index = 0; index < offset && index < text.length; index++) {
		if (text.charCodeAt(index) === 10) {
			line += 1;
			lineStart = index + 1;
		}
	}
	return `line ${line}, column ${offset - lineStart + 1}`;
}

function toOneLine(text: string): string {
	return text.replace(/[\u0000-\u001f\u007f\u2028\u2029]+/g, " ");
}

/** V8 says "Invalid regular expression: /<pattern>/i: <reason>"; keep the reason, not the echo. */
function describeRegexError(error: unknown): string {
	const message = error instanceof Error ? error.message : String(error);
	const reason = message.startsWith("Invalid regular expression:")
		? message.slice(message.lastIndexOf(": ") + 2)
		: message;
	return shortenText(reason, 80);
}

// ---------------------------------------------------------------------------------------------
// The reads

/**
 * Read and parse one config file. A missing file gives all defaults and no problem; an unreadable
 * one (a directory, a FIFO, permissions, larger than MAX_CONFIG_FILE_BYTES) gives all defaults and
 * one problem.
 */
export function loadConfig(path: string): ConfigResult {
	const layer = loadConfigLayer(path, "");
	for (const problem of layer.problems) if (problem.field === "") problem.message += "; all defaults used";
	return resolveConfigLayers([layer]);
}

/**
 * Read the config files, lowest first (the bundle's, the user's, a project's), and layer them field
 * by field: a missing file is skipped silently; a file that cannot be read or parsed is ignored as a
 * whole with one problem; every problem names its file.
 */
export function loadLayeredConfig(paths: readonly string[]): ConfigResult {
	const layers = paths.map((path) => loadConfigLayer(path, path));
	for (const layer of layers) {
		for (const problem of layer.problems) if (problem.field === "") problem.message += "; the file is ignored";
	}
	return resolveConfigLayers(layers);
}

function loadConfigLayer(path: string, source: string): ConfigLayer {
	try {
		return parseConfigLayer(readConfigText(path), source);
	} catch (error) {
		const layer: ConfigLayer = { source, values: new Map(), problems: [] };
		const code = errorCode(error);
		if (code === "ENOENT") return layer;
		const reason = error instanceof ConfigReadError ? error.message : (code ?? describeError(error));
		layer.problems.push({ field: "", message: `could not read the file (${reason})`, ...(source ? { source } : {}) });
		return layer;
	}
}

class ConfigReadError extends Error {}

function readConfigText(path: string): string {
	// O_NONBLOCK so a FIFO in place of the file cannot block start-up; fstat on the open descriptor
	// then refuses anything that is not a regular file, without a check-then-open race.
	const fd = openSync(path, fsConstants.O_RDONLY | (fsConstants.O_NONBLOCK ?? 0));
	try {
		const stats = fstatSync(fd);
		if (!stats.isFile()) throw new ConfigReadError("not a regular file");
		if (stats.size > MAX_CONFIG_FILE_BYTES) {
			throw new ConfigReadError(`${stats.size} bytes; at most ${MAX_CONFIG_FILE_BYTES} are read`);
		}
		const buffer = Buffer.alloc(stats.size);
		let filled = 0;
		while (filled < buffer.length) {
			const count = readSync(fd, buffer, filled, buffer.length - filled, filled);
			if (count === 0) break;
			filled += count;
		}
		return buffer.subarray(0, filled).toString("utf8");
	} finally {
		closeSync(fd);
	}
}

function errorCode(error: unknown): string | undefined {
	const code = typeof error === "object" && error !== null ? (error as { code?: unknown }).code : undefined;
	return typeof code === "string" ? code : undefined;
}
