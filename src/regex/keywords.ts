// Keywords a configured signal pattern cannot match without: for each way the pattern can match, a
// literal ASCII string the match contains (letters in lower case, matched in either case), found by
// walking the parsed pattern. Invariant: every text the pattern matches contains one of the
// keywords, whatever the flags (`i` only makes the pattern match more of what the keywords catch);
// where no such set is certain, or it is too weak to be worth a prefilter, there is none.

import { ASCII, type CharSet, LINE_TERMINATORS, NONE } from "./charset.js";
import { parsePattern, type RegexNode } from "./parse.js";

/** Shortest keyword worth a prefilter: shorter ones flag so many positions that the regex pass is as fast. */
export const MIN_PREFILTER_KEYWORD_CHARS = 3;
/** Most keywords a prefilter takes from a pattern (the default pattern has about 60). */
export const MAX_PREFILTER_KEYWORDS = 64;
/** Most strings a part of the pattern is followed as exactly (character classes times alternatives). */
const MAX_EXACT_STRINGS = 16;
/** Longest exact string followed (longer ones are as good a keyword as their start). */
const MAX_EXACT_CHARS = 32;
/** Most characters of a class followed one by one (`[xy]` is two strings; `[a-z]` is none). */
const MAX_CLASS_CHARS = 4;

/**
 * What a part of the pattern tells: `exact`, every string it can match (lower case), when they are
 * few; `required`, strings one of which each of its matches contains (none: undefined).
 */
interface Literals {
	exact: string[] | undefined;
	required: string[] | undefined;
}

const EMPTY: Literals = { exact: [""], required: undefined };
const UNKNOWN: Literals = { exact: undefined, required: undefined };

/**
 * The keywords of a signal pattern's source, or undefined when there are none certain or they are
 * too weak (shorter than MIN_PREFILTER_KEYWORD_CHARS, more than MAX_PREFILTER_KEYWORDS). Each is
 * ASCII without line terminators, as buildKeywordAutomaton takes it.
 */
export function findPatternKeywords(source: string): string[] | undefined {
	const parsed = parsePattern(source);
	if ("error" in parsed) return undefined;
	const keywords = requiredOf(describeNode(parsed.root));
	if (keywords === undefined || keywords.length > MAX_PREFILTER_KEYWORDS) return undefined;
	if (keywords.some((keyword) => keyword.length < MIN_PREFILTER_KEYWORD_CHARS)) return undefined;
	return [...new Set(keywords)].sort();
}

/** Strings one of which every match contains: the exact strings when none is empty, else `required`. */
function requiredOf(literals: Literals): string[] | undefined {
	if (literals.exact !== undefined && literals.exact.every((text) => text.length > 0)) return literals.exact;
	return literals.required;
}

function describeNode(node: RegexNode): Literals {
	switch (node.kind) {
		case "chars":
			return describeChars(node.set);
		case "assert":
		case "look":
			// Zero width: a lookahead's text is not part of the match (and a negative one need not be there).
			return EMPTY;
		case "group":
			return describeNode(node.body);
		case "backref":
			return UNKNOWN;
		case "repeat":
			return describeRepeat(node.body, node.min, node.max);
		case "seq":
			return describeSequence(node.items);
		case "alt":
			return describeAlternatives(node.options);
	}
}

/** A character class as strings: its few ASCII characters, folded to lower case; never a line terminator or a non-ASCII character. */
function describeChars(set: CharSet): Literals {
	if ((set & ~ASCII) !== NONE || (set & LINE_TERMINATORS) !== NONE || set === NONE) return UNKNOWN;
	const chars = new Set<string>();
	// The set's bits as binary digits, the lowest last (one BigInt operation, not one per character).
	const bits = set.toString(2);
	for (let code = 0; code < bits.length; code++) {
		if (bits[bits.length - 1 - code] !== "1") continue;
		chars.add(String.fromCharCode(code).toLowerCase());
		if (chars.size > MAX_CLASS_CHARS) return UNKNOWN;
	}
	return { exact: [...chars], required: undefined };
}

function describeRepeat(body: RegexNode, min: number, max: number): Literals {
	const inner = describeNode(body);
	// Optional: nothing is required; `x?` is still followed as exactly "" or x.
	if (min === 0)
		return max === 1 && inner.exact !== undefined ? { exact: [...inner.exact, ""], required: undefined } : UNKNOWN;
	if (min === 1 && max === 1) return inner;
	return { exact: undefined, required: requiredOf(inner) };
}

/**
 * A sequence: runs of exact parts are multiplied out (while few and short); the required strings
 * are the best of each run's strings and each other part's required strings (all must match).
 */
function describeSequence(items: readonly RegexNode[]): Literals {
	const choices: string[][] = [];
	let run: string[] = [""];
	let wholeRun = true;
	for (const item of items) {
		const literals = describeNode(item);
		const product = literals.exact === undefined ? undefined : multiply(run, literals.exact);
		if (product !== undefined) {
			run = product;
			continue;
		}
		wholeRun = false;
		choices.push(run);
		const required = requiredOf(literals);
		if (required !== undefined) choices.push(required);
		run = literals.exact ?? [""];
	}
	choices.push(run);
	const best = pickStrongest(choices.filter((strings) => strings.every((text) => text.length > 0)));
	return { exact: wholeRun ? run : undefined, required: best };
}

/** Every concatenation of a string of `left` and one of `right`, or undefined when too many or too long. */
function multiply(left: readonly string[], right: readonly string[]): string[] | undefined {
	if (left.length * right.length > MAX_EXACT_STRINGS) return undefined;
	const product = new Set<string>();
	for (const head of left) {
		for (const tail of right) {
			if (head.length + tail.length > MAX_EXACT_CHARS) return undefined;
			product.add(head + tail);
		}
	}
	return [...product];
}

/** The choice whose shortest string is longest (up to the prefilter's four-byte fingerprints and a bit), then the one with fewest strings. */
function pickStrongest(choices: readonly string[][]): string[] | undefined {
	const strength = (strings: readonly string[]) => Math.min(6, ...strings.map((text) => text.length));
	let best: string[] | undefined;
	for (const strings of choices) {
		if (
			best === undefined ||
			strength(strings) > strength(best) ||
			(strength(strings) === strength(best) && strings.length < best.length)
		)
			best = strings;
	}
	return best;
}

/** Alternatives: exact when each is (and they stay few); required when each alternative requires something. */
function describeAlternatives(options: readonly RegexNode[]): Literals {
	const described = options.map(describeNode);
	const exact = described.every((literals) => literals.exact !== undefined)
		? [...new Set(described.flatMap((literals) => literals.exact as string[]))]
		: undefined;
	const required: string[] = [];
	for (const literals of described) {
		const strings = requiredOf(literals);
		if (strings === undefined)
			return {
				exact: exact !== undefined && exact.length <= MAX_EXACT_STRINGS ? exact : undefined,
				required: undefined,
			};
		required.push(...strings);
	}
	return {
		exact: exact !== undefined && exact.length <= MAX_EXACT_STRINGS ? exact : undefined,
		required: [...new Set(required)],
	};
}
