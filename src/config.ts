// Configuration: DEFAULT_CONFIG, parseConfig(text) -> { config, problems } (pure, never throws) and
// loadConfig(path), the one file read.
// Invariant: every field of a returned config is valid on its own terms (type, range, a compiling
// signal pattern that cannot match an empty line, maxStoreBytes >= maxEntryBytes). A bad field falls
// back to its default alone and leaves one ConfigProblem naming it, echoing the bad value (shortened)
// and saying what is allowed. Every returned config owns fresh arrays and a fresh RegExp.

import { closeSync, constants as fsConstants, fstatSync, openSync, readSync } from "node:fs";
import { parseTree, getNodeValue, printParseErrorCode, stripComments, type Node, type ParseError } from "jsonc-parser";
import { findBacktrackingRisk } from "./regex-safety.js";
import { DEFAULT_SIGNAL_PATTERN } from "./signals.js";
import { keepStart } from "./text.js";

const MIB_BYTES = 1024 * 1024;
const GIB_BYTES = 1024 * MIB_BYTES;
const TIB_BYTES = 1024 * GIB_BYTES;

/** Default for `thresholdChars`: results longer than this are bounded; also the cap on every answer. */
export const DEFAULT_THRESHOLD_CHARS = 24_000;
/** Default for `headLines`: head lines in the view. */
export const DEFAULT_HEAD_LINES = 60;
/** Default for `tailLines`: tail lines in the view. */
export const DEFAULT_TAIL_LINES = 80;
/** Default for `maxSignalLines`: signal lines in the view. */
export const DEFAULT_MAX_SIGNAL_LINES = 40;
/** Default for `maxLineChars`: longest line shown before clipping. */
export const DEFAULT_MAX_LINE_CHARS = 500;
/** Default for `contextLines`: lines of context before and after each search hit. */
export const DEFAULT_CONTEXT_LINES = 2;
/** Default for `maxResults`: hit lines per search answer. */
export const DEFAULT_MAX_RESULTS = 50;
/** Default for `searchTimeoutMs`: longest a search may run. */
export const DEFAULT_SEARCH_TIMEOUT_MS = 2_000;
/** Default for `maxEntryBytes`: largest stored original (32 MiB). */
export const DEFAULT_MAX_ENTRY_BYTES = 32 * MIB_BYTES;
/** Default for `maxStoreBytes`: store quota (512 MiB). */
export const DEFAULT_MAX_STORE_BYTES = 512 * MIB_BYTES;
/** Default for `retentionDays`: entries older than this are removed. */
export const DEFAULT_RETENTION_DAYS = 7;
/** Default for `maskAfterChars`: a view is masked once this many characters of newer tool output follow it (0 = never). */
export const DEFAULT_MASK_AFTER_CHARS = 40_000;
/** Default for `maskBatchChars`: masking waits until the views it would mask hold this many characters. */
export const DEFAULT_MASK_BATCH_CHARS = 20_000;
/** Default for `contextShare`: the share of the free context window one turn's views may take. */
export const DEFAULT_CONTEXT_SHARE = 0.2;
/** Default for `minViewChars`: the smallest view budget, enough for id, totals, top signals and the last line. */
export const DEFAULT_MIN_VIEW_CHARS = 2_000;
/** Default for `exemptTools`: tools whose results are never touched. */
export const DEFAULT_EXEMPT_TOOLS: readonly string[] = Object.freeze([
	"read",
	"edit",
	"write",
	"overflow_query",
	"ask_user_question",
]);

/** Longest accepted `signalPattern`, in characters. */
export const MAX_SIGNAL_PATTERN_CHARS = 4_000;
/** Largest config file read, in bytes; anything bigger is not a hand-written config. */
export const MAX_CONFIG_FILE_BYTES = MIB_BYTES;
/** Longest echo of a bad value inside a problem message, in characters. */
const MAX_ECHO_CHARS = 40;
/** Most problems spelled out by formatConfigProblems before "and N more". */
const MAX_FORMATTED_PROBLEMS = 10;

export interface OverflowConfig {
	/** Results longer than this many characters are bounded; also the cap on every view and answer. Default 24000. */
	thresholdChars: number;
	/** Head lines in the view. Default 60. */
	headLines: number;
	/** Tail lines in the view (the end is always visible). Default 80. */
	tailLines: number;
	/** Signal lines in the view. Default 40. */
	maxSignalLines: number;
	/** Longest line shown before clipping, in characters. Default 500. */
	maxLineChars: number;
	/** Source of the signal regex. Default DEFAULT_SIGNAL_PATTERN from ./signals.js. */
	signalPattern: string;
	/** `signalPattern` compiled case-insensitive (flags "i", never "g": `test` keeps no state). */
	signalRegex: RegExp;
	/** Lines of context before and after each search hit. Default 2. */
	contextLines: number;
	/** Hit lines per search answer. Default 50. */
	maxResults: number;
	/** Longest a search may run, in milliseconds. Default 2000. */
	searchTimeoutMs: number;
	/** Largest stored original, in bytes (head + tail kept beyond it). Default 32 MiB. */
	maxEntryBytes: number;
	/** Store quota, in bytes; always >= maxEntryBytes. Default 512 MiB. */
	maxStoreBytes: number;
	/** Entries older than this many days are removed. Default 7. */
	retentionDays: number;
	/** Tool names whose results are never touched. Default read, edit, write, overflow_query, ask_user_question. */
	exemptTools: string[];
	/** In what the model is sent, a view is masked once this many characters of newer tool output follow it; 0 = never. Default 40000. */
	maskAfterChars: number;
	/** Masking waits until the views due hold at least this many characters, then masks them together. Default 20000. */
	maskBatchChars: number;
	/** One turn's views together take at most this share of the free context window. Default 0.2. */
	contextShare: number;
	/** No view budget is smaller than this (it still holds id, totals, top signals, last line); thresholdChars wins. Default 2000. */
	minViewChars: number;
}

export interface ConfigProblem {
	/** The field the problem is about; "" for the file as a whole. */
	field: string;
	/** One line: names the field, echoes the bad value, says what is allowed and what is used instead. */
	message: string;
}

export interface ConfigResult {
	config: OverflowConfig;
	problems: ConfigProblem[];
}

/** A fresh config holding every default. */
export function createDefaultConfig(): OverflowConfig {
	return {
		thresholdChars: DEFAULT_THRESHOLD_CHARS,
		headLines: DEFAULT_HEAD_LINES,
		tailLines: DEFAULT_TAIL_LINES,
		maxSignalLines: DEFAULT_MAX_SIGNAL_LINES,
		maxLineChars: DEFAULT_MAX_LINE_CHARS,
		signalPattern: DEFAULT_SIGNAL_PATTERN,
		signalRegex: new RegExp(DEFAULT_SIGNAL_PATTERN, "i"),
		contextLines: DEFAULT_CONTEXT_LINES,
		maxResults: DEFAULT_MAX_RESULTS,
		searchTimeoutMs: DEFAULT_SEARCH_TIMEOUT_MS,
		maxEntryBytes: DEFAULT_MAX_ENTRY_BYTES,
		maxStoreBytes: DEFAULT_MAX_STORE_BYTES,
		retentionDays: DEFAULT_RETENTION_DAYS,
		exemptTools: [...DEFAULT_EXEMPT_TOOLS],
		maskAfterChars: DEFAULT_MASK_AFTER_CHARS,
		maskBatchChars: DEFAULT_MASK_BATCH_CHARS,
		contextShare: DEFAULT_CONTEXT_SHARE,
		minViewChars: DEFAULT_MIN_VIEW_CHARS,
	};
}

/** Every default, frozen (its array and regex too). Use createDefaultConfig() for a mutable copy. */
export const DEFAULT_CONFIG: Readonly<OverflowConfig> = freezeConfig(createDefaultConfig());

function freezeConfig(config: OverflowConfig): Readonly<OverflowConfig> {
	Object.freeze(config.exemptTools);
	// A non-global, non-sticky RegExp never writes lastIndex, so a frozen one still tests and matches.
	Object.freeze(config.signalRegex);
	return Object.freeze(config);
}

/** The config fields that hold numbers. */
type NumberField = { [K in keyof OverflowConfig]: OverflowConfig[K] extends number ? K : never }[keyof OverflowConfig];

interface NumberRule {
	field: NumberField;
	integer: boolean;
	min: number;
	max: number;
	/** Human note after the numeric range, e.g. "1 MiB–4 GiB". */
	note?: string;
}

// Validated in this order; maxStoreBytes is handled after them because its lower bound is the
// effective maxEntryBytes.
const NUMBER_RULES: readonly NumberRule[] = [
	{ field: "thresholdChars", integer: true, min: 1_000, max: 10_000_000 },
	{ field: "headLines", integer: true, min: 0, max: 10_000 },
	{ field: "tailLines", integer: true, min: 1, max: 10_000 },
	{ field: "maxSignalLines", integer: true, min: 0, max: 1_000 },
	{ field: "maxLineChars", integer: true, min: 80, max: 100_000 },
	{ field: "contextLines", integer: true, min: 0, max: 50 },
	{ field: "maxResults", integer: true, min: 1, max: 10_000 },
	{ field: "searchTimeoutMs", integer: true, min: 100, max: 60_000 },
	{ field: "maxEntryBytes", integer: true, min: MIB_BYTES, max: 4 * GIB_BYTES, note: "1 MiB–4 GiB" },
	{ field: "retentionDays", integer: false, min: 0.01, max: 3_650 },
	{ field: "maskAfterChars", integer: true, min: 0, max: 100_000_000, note: "0 turns masking off" },
	{ field: "maskBatchChars", integer: true, min: 0, max: 100_000_000 },
	{ field: "contextShare", integer: false, min: 0.01, max: 1 },
	{ field: "minViewChars", integer: true, min: 1_000, max: 100_000 },
];

const KNOWN_FIELDS: readonly string[] = Object.keys(createDefaultConfig()).filter((name) => name !== "signalRegex");

/**
 * Parse the JSONC text of config/pi-overflow.json. Comments and trailing commas are allowed.
 * Never throws: an unparsable text, or one whose top level is not an object, gives all defaults
 * and one problem; a text that is empty or only comments gives all defaults and no problem.
 */
export function parseConfig(text: string): ConfigResult {
	try {
		return parseConfigText(text);
	} catch (error) {
		// The JSONC parser recurses per nesting level: absurdly deep nesting overflows the stack.
		return {
			config: createDefaultConfig(),
			problems: [{ field: "", message: `could not parse the file (${shortenText(describeError(error), 80)}); all defaults used` }],
		};
	}
}

function parseConfigText(text: string): ConfigResult {
	const config = createDefaultConfig();
	const problems: ConfigProblem[] = [];
	const source = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;

	if (stripComments(source).trim() === "") return { config, problems };

	const errors: ParseError[] = [];
	// parseTree rather than parse: parse assigns keys onto plain objects, so a "__proto__" key would
	// silently become the prototype (and leak inherited fields); the tree lists every key as written.
	const root = parseTree(source, errors, { allowTrailingComma: true, disallowComments: false });
	if (errors.length > 0 || root === undefined) {
		const first = errors[0];
		const where = first === undefined ? "" : ` (${printParseErrorCode(first.error)} at ${describeOffset(source, first.offset)})`;
		problems.push({ field: "", message: `could not parse the file as JSONC${where}; all defaults used` });
		return { config, problems };
	}
	if (root.type !== "object") {
		const found = root.type === "null" ? "null" : `${articleFor(root.type)} ${root.type}`;
		problems.push({ field: "", message: `expected a JSON object at the top level, found ${found}; all defaults used` });
		return { config, problems };
	}

	// Field problems first (they change behaviour), then unknown or repeated fields.
	const fieldNotes: ConfigProblem[] = [];
	const values = collectFields(root, fieldNotes);

	for (const rule of NUMBER_RULES) {
		if (!values.has(rule.field)) continue;
		const value = values.get(rule.field);
		if (isNumberAllowed(value, rule.integer, rule.min, rule.max)) {
			config[rule.field] = value as number;
		} else {
			const allowed = describeRange(rule.integer, rule.min, rule.max, rule.note);
			problems.push(ignoredProblem(rule.field, value, allowed, String(config[rule.field])));
		}
	}

	applyMaxStoreBytes(config, values, problems);
	applySignalPattern(config, values, problems);
	applyExemptTools(config, values, problems);
	problems.push(...fieldNotes);

	return { config, problems };
}

/**
 * Read and parse the config file at `path`: the one file read of the configuration.
 * A missing file gives all defaults and no problem; an unreadable one (a directory, a FIFO,
 * permissions, larger than MAX_CONFIG_FILE_BYTES) gives all defaults and one problem.
 */
export function loadConfig(path: string): ConfigResult {
	let text: string;
	try {
		text = readConfigText(path);
	} catch (error) {
		const code = errorCode(error);
		if (code === "ENOENT") return { config: createDefaultConfig(), problems: [] };
		const reason = error instanceof ConfigReadError ? error.message : code ?? describeError(error);
		return {
			config: createDefaultConfig(),
			problems: [{ field: "", message: `could not read the file (${reason}); all defaults used` }],
		};
	}
	return parseConfig(text);
}

/**
 * One line for stderr or a UI notice, e.g.
 * `pi-overflow: config/pi-overflow.json: ignored thresholdChars ("abc"): expected an integer 1000–10000000, default 24000 used`.
 * Returns "" when there are no problems.
 */
export function formatConfigProblems(problems: readonly ConfigProblem[], path?: string): string {
	if (problems.length === 0) return "";
	const shown = problems.slice(0, MAX_FORMATTED_PROBLEMS).map((problem) => problem.message);
	const hidden = problems.length - shown.length;
	if (hidden > 0) shown.push(`and ${hidden} more problem${hidden === 1 ? "" : "s"}`);
	const prefix = path === undefined || path === "" ? "pi-overflow: " : `pi-overflow: ${path}: `;
	return toOneLine(prefix + shown.join("; "));
}

// ---------------------------------------------------------------------------------------------
// Field checks

function collectFields(root: Node, problems: ConfigProblem[]): Map<string, unknown> {
	const values = new Map<string, unknown>();
	for (const property of root.children ?? []) {
		const [keyNode, valueNode] = property.children ?? [];
		if (keyNode === undefined || typeof keyNode.value !== "string") continue;
		const key = keyNode.value;
		const value = valueNode === undefined ? undefined : getNodeValue(valueNode);
		if (!KNOWN_FIELDS.includes(key)) {
			const hint = suggestField(key);
			problems.push({
				field: key,
				message: `unknown field ${describeValue(key)} ignored${hint === undefined ? "" : ` (did you mean ${hint}?)`}`,
			});
			continue;
		}
		if (values.has(key)) {
			problems.push({ field: key, message: `field ${key} appears more than once; the last one is used` });
		}
		values.set(key, value);
	}
	return values;
}

function applyMaxStoreBytes(config: OverflowConfig, values: Map<string, unknown>, problems: ConfigProblem[]): void {
	const min = config.maxEntryBytes;
	const max = TIB_BYTES;
	// The store must hold at least one full entry; when a large maxEntryBytes exceeds the default
	// quota, the quota rises to it (silently when the user did not set maxStoreBytes).
	const fallback = Math.max(DEFAULT_MAX_STORE_BYTES, min);
	config.maxStoreBytes = fallback;
	if (!values.has("maxStoreBytes")) return;
	const value = values.get("maxStoreBytes");
	if (isNumberAllowed(value, true, min, max)) {
		config.maxStoreBytes = value as number;
		return;
	}
	const allowed = describeRange(true, min, max, "at least maxEntryBytes, at most 1 TiB");
	const used = fallback === DEFAULT_MAX_STORE_BYTES ? String(fallback) : `${fallback} (maxEntryBytes)`;
	problems.push(ignoredProblem("maxStoreBytes", value, allowed, used));
}

function applySignalPattern(config: OverflowConfig, values: Map<string, unknown>, problems: ConfigProblem[]): void {
	if (!values.has("signalPattern")) return;
	const value = values.get("signalPattern");
	const checked = compileSignalPattern(value);
	if ("regex" in checked) {
		config.signalPattern = value as string;
		config.signalRegex = checked.regex;
		return;
	}
	problems.push({
		field: "signalPattern",
		message: `ignored signalPattern (${describeValue(value)}): ${checked.error}, the built-in default pattern used`,
	});
}

/** Compile a candidate signal pattern, or say why it cannot be one. */
function compileSignalPattern(value: unknown): { regex: RegExp } | { error: string } {
	const allowed = `expected a non-empty JavaScript regex of at most ${MAX_SIGNAL_PATTERN_CHARS} characters`;
	if (typeof value !== "string" || value.length === 0 || value.length > MAX_SIGNAL_PATTERN_CHARS) {
		return { error: allowed };
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

function applyExemptTools(config: OverflowConfig, values: Map<string, unknown>, problems: ConfigProblem[]): void {
	if (!values.has("exemptTools")) return;
	const value = values.get("exemptTools");
	const allowed = "expected an array of non-empty tool-name strings";
	if (!Array.isArray(value)) {
		problems.push(ignoredProblem("exemptTools", value, allowed, JSON.stringify(DEFAULT_EXEMPT_TOOLS)));
		return;
	}
	const kept: string[] = [];
	const dropped: string[] = [];
	value.forEach((item: unknown, index: number) => {
		if (typeof item === "string" && item.trim() !== "") {
			if (!kept.includes(item)) kept.push(item);
		} else {
			dropped.push(`[${index}] ${describeValue(item)}`);
		}
	});
	config.exemptTools = kept;
	if (dropped.length > 0) {
		const list = dropped.length > 5 ? `${dropped.slice(0, 5).join(", ")}, …` : dropped.join(", ");
		problems.push({
			field: "exemptTools",
			message: `dropped ${dropped.length} exemptTools item${dropped.length === 1 ? "" : "s"} (${list}): ${allowed}, the other ${kept.length} kept`,
		});
	}
}

function isNumberAllowed(value: unknown, integer: boolean, min: number, max: number): boolean {
	if (typeof value !== "number" || !Number.isFinite(value)) return false;
	if (integer && !Number.isInteger(value)) return false;
	return value >= min && value <= max;
}

// ---------------------------------------------------------------------------------------------
// Messages

function ignoredProblem(field: string, value: unknown, allowed: string, used: string): ConfigProblem {
	return { field, message: `ignored ${field} (${describeValue(value)}): ${allowed}, default ${used} used` };
}

function describeRange(integer: boolean, min: number, max: number, note?: string): string {
	const range = `${integer ? "an integer" : "a number"} ${min}–${max}`;
	return note === undefined ? `expected ${range}` : `expected ${range} (${note})`;
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

function articleFor(word: string): string {
	return /^[aeiou]/.test(word) ? "an" : "a";
}

/** The known field closest to a mistyped one (case-insensitive, at most 3 edits), if any. */
function suggestField(key: string): string | undefined {
	if (key.length > 40) return undefined;
	const lower = key.toLowerCase();
	let best: string | undefined;
	let bestDistance = 4;
	for (const field of KNOWN_FIELDS) {
		const distance = measureEditDistance(lower, field.toLowerCase());
		if (distance < bestDistance) {
			best = field;
			bestDistance = distance;
		}
	}
	return best;
}

function measureEditDistance(a: string, b: string): number {
	let previous = Array.from({ length: b.length + 1 }, (_, index) => index);
	for (let i = 1; i <= a.length; i++) {
		const current = [i];
		for (let j = 1; j <= b.length; j++) {
			const substitution = previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1);
			current.push(Math.min(previous[j]! + 1, current[j - 1]! + 1, substitution));
		}
		previous = current;
	}
	return previous[b.length]!;
}

function toOneLine(text: string): string {
	return text.replace(/[\u0000-\u001f\u007f\u2028\u2029]+/g, " ");
}

// ---------------------------------------------------------------------------------------------
// The one read

class ConfigReadError extends Error {}

function readConfigText(path: string): string {
	// O_NONBLOCK so a FIFO in place of the file cannot block start-up; fstat on the open descriptor
	// then refuses anything that is not a regular file, without a check-then-open race.
	const flags = fsConstants.O_RDONLY | (fsConstants.O_NONBLOCK ?? 0);
	const fd = openSync(path, flags);
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
	if (typeof error === "object" && error !== null && "code" in error) {
		const code = (error as { code: unknown }).code;
		if (typeof code === "string") return code;
	}
	return undefined;
}

/** V8 says "Invalid regular expression: /<pattern>/i: <reason>"; keep the reason, not the echo. */
function describeRegexError(error: unknown): string {
	const message = describeError(error);
	const reason = message.startsWith("Invalid regular expression:") ? message.slice(message.lastIndexOf(": ") + 2) : message;
	return shortenText(reason, 80);
}

function describeError(error: unknown): string {
	return error instanceof Error ? error.message : String(error);
}
