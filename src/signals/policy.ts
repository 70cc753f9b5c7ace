// The signal policy: everything pi-overflow decides about which lines of an output matter, in one
// place. What counts is DEFAULT_SIGNAL_PATTERN (src/signals/pattern.ts, with its reasons per part); here:
// how severe a matching line is (a failure, or only a warning or a log line at a lower level), how
// candidates rank (errors before warnings, rarer shapes before common ones), and which members of a
// JSON object say it is a problem. What a line's shape is and when it is rare: src/signals/shape.ts;
// which lines around a signal belong to it: src/signals/blocks.ts. Pure: strings in, decisions out.

import * as stampModule from "../lines/stamp.js";
import { FAILURE_MARKS } from "./pattern.js";

// Imported bindings copied into module constants once: under Pi's extension loader (jiti) every
// read of an imported binding goes through an interop Proxy.
const { recordLevelOf, unstamped, wrappedLineOf } = stampModule;

/** How much a signal line says about a failure: an error (2), or only a warning / a lower log level (1). */
export type Severity = 1 | 2;
export const SEVERITY_ERROR: Severity = 2;
export const SEVERITY_WARNING: Severity = 1;

/**
 * Words that only warn (a line with them and no failure word is a warning): a warning's own words,
 * a warning sign (`⚠ Compiled with warnings`), and a program saying it carried on past what it
 * reports (`Unknown key 'RestartSecs' in section [Service], ignoring.`).
 */
const WARNING_WORDS = /\b(?:warn(?:ing)?s?|deprecat\w*|notice|hint|note|ignoring|skipping)\b|⚠/i;
/** Words that report a failure. */
const FAILURE_WORDS = new RegExp(
	`err|fail|fatal|panic|exception|abort|fault|denied|killed|assert|traceback|undefined reference|not ok|cannot|unable|refused|timed out|[${FAILURE_MARKS}]`,
	"i",
);
/**
 * A log level near the start of a line (after a timestamp, in brackets, as `level=` or a JSON
 * field, or glog's one-letter form `W1130 12:00:00.000`). The level decides the severity of a log
 * line: `WARN … connection error` is a warning, `ERROR … retrying` an error.
 */
const LOG_LEVEL =
	/^(?:[^\n]{0,48}?(?:^|[\s[|(<"'])(?:level"?[=:] *"?)?)(TRACE|DEBUG|INFO|NOTICE|WARN(?:ING)?|ERROR|ERR|FATAL|SEVERE|CRIT(?:ICAL)?|PANIC|EMERG(?:ENCY)?|trace|debug|info|notice|warn(?:ing)?|error|err|fatal|severe|crit(?:ical)?|panic|emerg(?:ency)?)(?=$|[\s\]|:>)"',])|^([IWEF])\d{4} \d/;
/**
 * A warning's category named before its message, as Python's warnings module and Node print one
 * (`app/db.py:44: DeprecationWarning: …`, `(node:4123) ExperimentalWarning: …`): a level of its own.
 * What the message says after it (`… cannot be performed reliably`) is what the warning is about.
 */
const WARNING_CATEGORY = /(?:^|[\s:(\]])[A-Z][A-Za-z]*Warning: /;
const ERROR_LEVELS = /^(?:error|err|fatal|severe|crit(?:ical)?|panic|emerg(?:ency)?|e|f)$/i;
const WARNING_LEVELS = /^(?:warn(?:ing)?|w)$/i;

/**
 * The severity of a line that matched the signal pattern. A line's own log level decides when it
 * has one; otherwise a warning word without a failure word makes it a warning. `recordLevel`: the
 * level every record of the output carries (lines/frame.ts learnRecordLevel), a supervisor's for
 * each line of its program; a record at that level is read as the line it wraps (`level=info
 * msg="src/a.c:3:5: error: …"` is an error, as the bare line is). A record at another level (an
 * `error` among `info` ones) keeps it.
 */
export function classifySeverity(line: string, recordLevel?: string): Severity {
	if (recordLevel !== undefined && recordLevelOf(line) === recordLevel) {
		const wrapped = wrappedLineOf(line);
		if (wrapped !== undefined) return classifySeverity(wrapped);
	}
	// A log level stands near the start of what the line says, after CI's timestamp (lines/stamp.ts).
	const text = unstamped(line);
	const level = LOG_LEVEL.exec(text);
	if (level) {
		const name = level[1] ?? level[2] ?? "";
		if (ERROR_LEVELS.test(name)) return SEVERITY_ERROR;
		if (WARNING_LEVELS.test(name)) return SEVERITY_WARNING;
		// INFO, DEBUG, TRACE, NOTICE: the level says the program carried on.
		return SEVERITY_WARNING;
	}
	if (WARNING_CATEGORY.test(text)) return SEVERITY_WARNING;
	return WARNING_WORDS.test(text) && !FAILURE_WORDS.test(text) ? SEVERITY_WARNING : SEVERITY_ERROR;
}

// ---------------------------------------------------------------------------------------------
// Ranking

/** A candidate as the ranking sees it. */
export interface RankedCandidate {
	lineNumber: number;
	severity: Severity;
	/** Signal lines of this candidate's shape key (shapeOf) in the whole output. */
	shapeCount: number;
	/** Another line of a shape one line already stands for: ranked after every other candidate. */
	instance?: true;
}

/**
 * The order in which candidates earn a place in the view: errors before warnings; within each,
 * rarer shapes (fewer signal lines of their shape key, shapeCount) before common ones; lines of
 * equally common shapes spread over the output (first and last first, then evenly in between), so
 * the view shows where failures start and end, not only the first ones. Other instances of a shape
 * one line stands for come after all of those, ranked the same way among themselves.
 */
export function rankCandidates<T extends RankedCandidate>(candidates: readonly T[]): T[] {
	if (!candidates.some((candidate) => candidate.instance)) return rankGroups(candidates);
	return [
		...rankGroups(candidates.filter((candidate) => !candidate.instance)),
		...rankGroups(candidates.filter((candidate) => candidate.instance)),
	];
}

/** rankCandidates within one tier: by severity, then shape count, each group spread over the output. */
function rankGroups<T extends RankedCandidate>(candidates: readonly T[]): T[] {
	const groups = new Map<string, T[]>();
	for (const candidate of candidates) {
		const key = `${candidate.severity}:${candidate.shapeCount}`;
		const group = groups.get(key) ?? [];
		group.push(candidate);
		groups.set(key, group);
	}
	const ranked: T[] = [];
	const keys = [...groups.keys()].sort((a, b) => {
		const [severityA, countA] = a.split(":").map(Number);
		const [severityB, countB] = b.split(":").map(Number);
		return severityB - severityA || countA - countB;
	});
	for (const key of keys)
		ranked.push(...spreadOrder((groups.get(key) as T[]).sort((a, b) => a.lineNumber - b.lineNumber)));
	return ranked;
}

/** Items in an order that covers their range early: first, last, middle, then the quarters, and so on. */
export function spreadOrder<T>(items: readonly T[]): T[] {
	if (items.length <= 2) return [...items];
	const order: T[] = [items[0], items[items.length - 1]];
	const taken = new Uint8Array(items.length);
	taken[0] = 1;
	taken[items.length - 1] = 1;
	for (let parts = 2; order.length < items.length; parts *= 2) {
		for (let k = 1; k < parts; k += 2) {
			const index = Math.round((k * (items.length - 1)) / parts);
			if (taken[index]) continue;
			taken[index] = 1;
			order.push(items[index]);
		}
		if (parts > items.length * 2) {
			for (let index = 0; index < items.length; index++) if (!taken[index]) order.push(items[index]);
			break;
		}
	}
	return order;
}

// ---------------------------------------------------------------------------------------------
// Structured output: which members of a JSON object say the object is a problem

/** Members whose presence with a value says something went wrong: `"error": "…"`, `"errors": [ … ]`, `"failures": 2`. */
const JSON_PROBLEM_MEMBERS = new Set([
	"error",
	"errors",
	"err",
	"exception",
	"exceptions",
	"fault",
	"faults",
	"failure",
	"failures",
	"failed",
	"problem",
	"problems",
	"violations",
	"invalid",
	"missing",
	"errorcount",
	"error_count",
	"fatalerrorcount",
	"numfailedtests",
	"numfailedtestsuites",
]);
/** Members naming a level or an outcome (`go test -json`'s `"Action"`): a problem when the value is one of JSON_BAD_OUTCOME. */
const JSON_SEVERITY_MEMBERS = new Set([
	"level",
	"severity",
	"status",
	"state",
	"result",
	"outcome",
	"conclusion",
	"action",
	"loglevel",
	"log_level",
	"levelname",
]);
const JSON_BAD_OUTCOME =
	/^(?:err(?:or|ored)?|fatal|crit(?:ical)?|emerg(?:ency)?|alert|panic|fail(?:ed|ure)?|broken|invalid)$/i;
/** Members whose `false` is a verdict against the object: `"valid": false`, `"ok": false`. */
const JSON_VERDICT_MEMBERS = new Set(["valid", "ok", "success", "succeeded", "passed", "pass"]);
/**
 * Members that name what kind of problem an object is (a linter's rule, a scanner's check, an error
 * code): among a thousand findings of a few kinds, one of a kind of its own is shown first.
 */
const JSON_IDENTITY_MEMBERS = new Set([
	"code",
	"rule",
	"ruleid",
	"rule_id",
	"check",
	"check_id",
	"checkid",
	"test_id",
	"testid",
	"symbol",
	"message_id",
	"messageid",
	"category",
	"type",
]);
/** pino's and bunyan's numeric levels: 50 is error, 60 fatal. */
const JSON_ERROR_LEVEL = 50;
/** Longest member name the rules know (longer keys are not decoded). */
export const JSON_RULE_KEY_BYTES = 20;

/** The value of a JSON member, as far as the rules need it. */
export type JsonMemberValue =
	| { kind: "string"; value: string }
	| { kind: "number"; value: number }
	| { kind: "boolean"; value: boolean }
	| { kind: "null" }
	| { kind: "container"; empty: boolean };

/** Every member name the rules know, for the one lookup of isJsonRuleKey (it runs on every key of a document). */
const JSON_RULE_MEMBERS = new Set([
	...JSON_PROBLEM_MEMBERS,
	...JSON_SEVERITY_MEMBERS,
	...JSON_VERDICT_MEMBERS,
	...JSON_IDENTITY_MEMBERS,
]);

/** Whether the rules judge a member by this name (judgeJsonMember is false for any other). */
export function isJsonRuleKey(key: string): boolean {
	return JSON_RULE_MEMBERS.has(key.toLowerCase());
}

/** What kind of problem the member `key: value` says its object is (`test_id: B602`), if it names one. */
export function jsonIdentityOf(key: string, value: JsonMemberValue): string | undefined {
	if (!JSON_IDENTITY_MEMBERS.has(key.toLowerCase())) return undefined;
	if (value.kind === "string" && value.value.trim() !== "" && value.value !== "?")
		return `${key} ${JSON.stringify(value.value.slice(0, 60))}`;
	if (value.kind === "number" && !Number.isNaN(value.value)) return `${key} ${value.value}`;
	return undefined;
}

/**
 * Whether the member `key: value` says its object is a problem: an error-like member with a value
 * (not null, false, 0, "" or empty), a level or outcome that is an error or a failure (or a numeric
 * log level of 50 and up), a verdict that is false.
 */
export function judgeJsonMember(key: string, value: JsonMemberValue): boolean {
	const name = key.toLowerCase();
	if (JSON_PROBLEM_MEMBERS.has(name)) {
		switch (value.kind) {
			case "string":
				return value.value.trim() !== "";
			case "number":
				return value.value > 0;
			case "boolean":
				return value.value;
			case "container":
				return !value.empty;
			default:
				return false;
		}
	}
	if (JSON_SEVERITY_MEMBERS.has(name)) {
		if (value.kind === "string") return JSON_BAD_OUTCOME.test(value.value.trim());
		return name === "level" && value.kind === "number" && value.value >= JSON_ERROR_LEVEL;
	}
	return JSON_VERDICT_MEMBERS.has(name) && value.kind === "boolean" && !value.value;
}
