// The configuration's one field table: for every field its default, kind, allowed range and the
// sentence that documents it. The parser's rules (config.ts), the shipped config/pi-overflow.json
// and the README's table are all checked against CONFIG_FIELDS (test/unit/config-fields.test.ts), so a
// default or a range is written down once. Pure data; DEFAULT_CONFIG is frozen.

import { DEFAULT_SIGNAL_PATTERN } from "../signals/pattern.js";

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
/** Default for `releaseSpillFiles`: Pi's world-readable spill file is removed once its output is stored. */
export const DEFAULT_RELEASE_SPILL_FILES = true;
/** Default for `compareReruns`: a re-run's view says what changed, and the earlier run's view is masked as superseded. */
export const DEFAULT_COMPARE_RERUNS = true;
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
	/** Once an output is stored, Pi's world-readable `<tmpdir>/pi-bash-<hex>.log` of it is removed (a `!`/`!!` command's made private). Default true. */
	releaseSpillFiles: boolean;
	/** Re-runs (the same tool and arguments) are compared with the last run, whose view is then masked as superseded. Default true. */
	compareReruns: boolean;
}

/** A field as a config file writes it (signalRegex is derived from signalPattern). */
export type ConfigFieldName = Exclude<keyof OverflowConfig, "signalRegex">;

interface FieldBase {
	name: ConfigFieldName;
	/** The README's "meaning" cell: one sentence. */
	doc: string;
	/** The README's "default" cell when the value itself is not what a reader wants (32 MiB). */
	defaultText?: string;
}

/** An integer or a number within [min, max]; `minField` raises min to another field's value. */
export interface NumberField extends FieldBase {
	kind: "integer" | "number";
	default: number;
	min: number;
	max: number;
	/** A human note after the range, e.g. "1 MiB–4 GiB". */
	note?: string;
	/** The field whose (already resolved) value is the lower bound instead of `min`. */
	minField?: ConfigFieldName;
}

export interface PatternField extends FieldBase {
	kind: "pattern";
	default: string;
}

export interface ToolsField extends FieldBase {
	kind: "tools";
	default: readonly string[];
}

export interface BooleanField extends FieldBase {
	kind: "boolean";
	default: boolean;
}

export type ConfigField = NumberField | PatternField | ToolsField | BooleanField;

/** Every field, in the order the README and the shipped file list them (and the parser checks them). */
export const CONFIG_FIELDS: readonly ConfigField[] = Object.freeze([
	{
		name: "thresholdChars",
		kind: "integer",
		default: DEFAULT_THRESHOLD_CHARS,
		min: 1_000,
		max: 10_000_000,
		doc: "the most a view (and every query answer) may take; results longer than their budget (at most this) are bounded",
	},
	{
		name: "headLines",
		kind: "integer",
		default: DEFAULT_HEAD_LINES,
		min: 0,
		max: 10_000,
		doc: "head lines in the view",
	},
	{
		name: "tailLines",
		kind: "integer",
		default: DEFAULT_TAIL_LINES,
		min: 1,
		max: 10_000,
		doc: "tail lines in the view",
	},
	{
		name: "maxSignalLines",
		kind: "integer",
		default: DEFAULT_MAX_SIGNAL_LINES,
		min: 0,
		max: 1_000,
		doc: "signal lines in the view",
	},
	{
		name: "maxLineChars",
		kind: "integer",
		default: DEFAULT_MAX_LINE_CHARS,
		min: 80,
		max: 100_000,
		doc: "longest line shown before clipping",
	},
	{
		name: "signalPattern",
		kind: "pattern",
		default: DEFAULT_SIGNAL_PATTERN,
		defaultText: "built in (`src/signals/pattern.ts`)",
		doc: "what counts as a signal line (case-insensitive)",
	},
	{
		name: "contextLines",
		kind: "integer",
		default: DEFAULT_CONTEXT_LINES,
		min: 0,
		max: 50,
		doc: "context around each search hit",
	},
	{
		name: "maxResults",
		kind: "integer",
		default: DEFAULT_MAX_RESULTS,
		min: 1,
		max: 10_000,
		doc: "hit lines per search answer",
	},
	{
		name: "searchTimeoutMs",
		kind: "integer",
		default: DEFAULT_SEARCH_TIMEOUT_MS,
		min: 100,
		max: 60_000,
		doc: "longest a search may run",
	},
	{
		name: "maxEntryBytes",
		kind: "integer",
		default: DEFAULT_MAX_ENTRY_BYTES,
		defaultText: "32 MiB",
		min: MIB_BYTES,
		max: 4 * GIB_BYTES,
		note: "1 MiB–4 GiB",
		doc: "largest stored original (head + tail kept beyond it)",
	},
	{
		name: "maxStoreBytes",
		kind: "integer",
		default: DEFAULT_MAX_STORE_BYTES,
		defaultText: "512 MiB",
		min: MIB_BYTES,
		max: TIB_BYTES,
		minField: "maxEntryBytes",
		note: "at least maxEntryBytes, at most 1 TiB",
		doc: "store quota",
	},
	{
		name: "retentionDays",
		kind: "number",
		default: DEFAULT_RETENTION_DAYS,
		min: 0.01,
		max: 3_650,
		doc: "entries older than this are removed",
	},
	{
		name: "exemptTools",
		kind: "tools",
		default: DEFAULT_EXEMPT_TOOLS,
		defaultText: DEFAULT_EXEMPT_TOOLS.join(", "),
		doc: "never touched",
	},
	{
		name: "maskAfterChars",
		kind: "integer",
		default: DEFAULT_MASK_AFTER_CHARS,
		min: 0,
		max: 100_000_000,
		note: "0 turns masking off",
		doc: "in what the model is sent, a view becomes a stub once this many characters of newer tool output follow it; 0 turns masking off",
	},
	{
		name: "maskBatchChars",
		kind: "integer",
		default: DEFAULT_MASK_BATCH_CHARS,
		min: 0,
		max: 100_000_000,
		doc: "masking waits until the views due hold this many characters, then masks them together (and at most once in 4 calls)",
	},
	{
		name: "contextShare",
		kind: "number",
		default: DEFAULT_CONTEXT_SHARE,
		min: 0.01,
		max: 1,
		doc: "the share of the free context window one turn's views take together",
	},
	{
		name: "minViewChars",
		kind: "integer",
		default: DEFAULT_MIN_VIEW_CHARS,
		min: 1_000,
		max: 100_000,
		doc: "the smallest view budget, however full the window (`thresholdChars` still caps it)",
	},
	{
		name: "releaseSpillFiles",
		kind: "boolean",
		default: DEFAULT_RELEASE_SPILL_FILES,
		doc: "once an output is stored, Pi's world-readable `pi-bash-<hex>.log` of it is removed and the result points to the private copy (the file of a `!`/`!!` command is made private where it is, as soon as it ends); false leaves Pi's files alone",
	},
	{
		name: "compareReruns",
		kind: "boolean",
		default: DEFAULT_COMPARE_RERUNS,
		doc: "a call with the same tool and arguments as an earlier one in the session is a re-run: its view says which signal lines are new, gone and still there, and the earlier run's view is masked as superseded once the re-run was sent; false turns both off",
	},
] satisfies ConfigField[]);

/** The names a config file may use. */
export const CONFIG_FIELD_NAMES: readonly string[] = Object.freeze(CONFIG_FIELDS.map((field) => field.name));

/** The known field closest to a mistyped one (case-insensitive, at most 3 edits), if any. */
export function suggestFieldName(key: string): string | undefined {
	if (key.length > 40) return undefined;
	const lower = key.toLowerCase();
	let best: string | undefined;
	let bestDistance = 4;
	for (const field of CONFIG_FIELD_NAMES) {
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

/** What a field allows, as the README's "allowed" cell and the problems' "expected …" say it. */
export function describeAllowed(field: ConfigField): string {
	switch (field.kind) {
		case "integer":
		case "number": {
			if (field.minField !== undefined)
				return `${field.kind === "integer" ? "an integer" : "a number"} (${field.note})`;
			const range = `${field.kind === "integer" ? "an integer" : "a number"} ${field.min}–${field.max}`;
			return field.note === undefined ? range : `${range} (${field.note})`;
		}
		case "pattern":
			return `a non-empty JavaScript regex of at most ${MAX_SIGNAL_PATTERN_CHARS} characters that compiles and does not match an empty line`;
		case "tools":
			return "an array of non-empty tool-name strings";
		case "boolean":
			return "true or false";
	}
}

/** The README's "default" cell. */
export function describeDefault(field: ConfigField): string {
	return field.defaultText ?? String(field.default);
}

/** A fresh config holding every default. */
export function createDefaultConfig(): OverflowConfig {
	const config: Record<string, unknown> = {};
	for (const field of CONFIG_FIELDS) config[field.name] = field.kind === "tools" ? [...field.default] : field.default;
	config.signalRegex = new RegExp(DEFAULT_SIGNAL_PATTERN, "i");
	return config as unknown as OverflowConfig;
}

/** Every default, frozen (its array and regex too). Use createDefaultConfig() for a mutable copy. */
export const DEFAULT_CONFIG: Readonly<OverflowConfig> = freezeConfig(createDefaultConfig());

function freezeConfig(config: OverflowConfig): Readonly<OverflowConfig> {
	Object.freeze(config.exemptTools);
	// A non-global, non-sticky RegExp never writes lastIndex, so a frozen one still tests and matches.
	Object.freeze(config.signalRegex);
	return Object.freeze(config);
}
