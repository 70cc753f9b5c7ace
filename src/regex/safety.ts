// Static checks of a regex source. findBacktrackingRisk guards a configured signalPattern, which runs
// on every line of large results on Pi's main thread, where an exec cannot be interrupted:
// src/signals/finder.ts never runs it on more than PATTERN_WINDOW_CHARS characters at once, and this
// refuses what could still try more than MAX_CHOICES_PER_START ways at one start position, so each exec
// stays short and the scan's budget is checked between execs. Conservative: it may refuse a harmless
// pattern, never accept a form it lists. isByteSafePattern says when a pattern may run on the Latin-1 view of UTF-8 bytes.

/** Longest text a configured signalPattern is run on at once (src/signals/finder.ts cuts longer lines into windows). */
export const PATTERN_WINDOW_CHARS = 2048;
/**
 * Most ways a pattern may try to match at one start position: one unbounded quantifier over a
 * window (`\w+Exception`: time quadratic in the window, linear in the line), times 2.
 */
export const MAX_CHOICES_PER_START = 2 * PATTERN_WINDOW_CHARS;
/** Deepest nesting of groups checked; a deeper pattern is refused. */
const MAX_GROUP_DEPTH = 100;
/** Longest piece of the pattern quoted in a message. */
const MAX_QUOTE_CHARS = 24;

import { type CharSet, LINE_TERMINATORS, NONE } from "./charset.js";
import { type ParsedPattern, parsePattern, type RegexNode, groupDepth } from "./parse.js";

function childrenOf(node: RegexNode): RegexNode[] {
	switch (node.kind) {
		case "look":
		case "group":
		case "repeat":
			return [node.body];
		case "seq":
			return node.items;
		case "alt":
			return node.options;
		default:
			return [];
	}
}

function containsRepeatOrBranch(node: RegexNode): boolean {
	if (node.kind === "repeat" || (node.kind === "alt" && node.options.length > 1)) return true;
	return childrenOf(node).some(containsRepeatOrBranch);
}

/** The node without the non-capturing or capturing groups that only wrap it. */
function unwrap(node: RegexNode): RegexNode {
	let inner = node;
	while (inner.kind === "group" || (inner.kind === "seq" && inner.items.length === 1))
		inner = inner.kind === "group" ? inner.body : inner.items[0];
	return inner;
}

/** Every character the node can consume (lookarounds consume none). */
function charsOf(node: RegexNode, groups: ParsedPattern["groups"], seen = new Set<RegexNode>()): CharSet {
	if (node.kind === "chars") return node.set;
	if (node.kind === "look" || node.kind === "assert") return NONE;
	if (node.kind === "backref") {
		const group = groups.get(node.ref);
		if (!group || seen.has(group)) return NONE;
		seen.add(group);
		return charsOf(group, groups, seen);
	}
	return childrenOf(node).reduce((set, child) => set | charsOf(child, groups, seen), NONE);
}

/** The shortest and longest text the node can consume. */
function lengthsOf(node: RegexNode, groups: ParsedPattern["groups"], seen = new Set<RegexNode>()): [number, number] {
	switch (node.kind) {
		case "chars":
			return [1, 1];
		case "assert":
		case "look":
			return [0, 0];
		case "group":
			return lengthsOf(node.body, groups, seen);
		case "backref": {
			// A group that did not take part matches the empty text.
			const group = groups.get(node.ref);
			if (!group || seen.has(group)) return [0, 0];
			seen.add(group);
			return [0, lengthsOf(group, groups, seen)[1]];
		}
		case "repeat": {
			const [min, max] = lengthsOf(node.body, groups, seen);
			return [min * node.min, max === 0 ? 0 : max * node.max];
		}
		case "seq":
			return node.items.reduce<[number, number]>(
				(sum, item) => {
					const [min, max] = lengthsOf(item, groups, seen);
					return [sum[0] + min, sum[1] + max];
				},
				[0, 0],
			);
		case "alt": {
			const lengths = node.options.map((option) => lengthsOf(option, groups, seen));
			return [Math.min(...lengths.map((length) => length[0])), Math.max(...lengths.map((length) => length[1]))];
		}
	}
}

function quote(text: string): string {
	return `\`${text.length > MAX_QUOTE_CHARS ? `${text.slice(0, MAX_QUOTE_CHARS - 1)}…` : text}\``;
}

/** A repeated group that itself repeats or branches, or a repeated backreference: exponential or worse. */
function findNestedRepetition(node: RegexNode): string | undefined {
	if (node.kind === "repeat" && node.max > 1) {
		if (unwrap(node.body).kind === "backref")
			return `a repeated backreference (${quote(node.text)}) can backtrack without bound`;
		if (containsRepeatOrBranch(node.body))
			return `a repeated group that itself repeats or branches (${quote(node.text)}) can backtrack without bound`;
	}
	for (const child of childrenOf(node)) {
		const risk = findNestedRepetition(child);
		if (risk) return risk;
	}
	return undefined;
}

/**
 * Quantifiers met so far that can still trade characters with a later one: a chain of them is
 * tried in `choices` ways at one start position.
 */
interface Chain {
	/** What the chain's last quantifier can match. */
	last: CharSet;
	/** Sets of the atoms that must match since that quantifier (each must share a character with it and the next). */
	between: CharSet[];
	/** Product of the chain's choices (each quantifier's max − min + 1, at most PATTERN_WINDOW_CHARS). */
	choices: number;
	/** No quantifier of the chain can match a line terminator, so an anchored chain starts once per line. */
	withinLine: boolean;
	/** The chain's first quantifier, for the message. */
	first: string;
}

interface ChainAnalysis {
	groups: ParsedPattern["groups"];
	/** The pattern (this top-level alternative) starts with `^`: one start position per line. */
	anchored: boolean;
	/** Largest chain seen (what one lookaround costs each time it runs). */
	maxChoices: number;
	risk?: string;
}

/** Most chains followed at once; beyond it, the ones with the fewest choices are dropped. */
const MAX_CHAINS = 64;

function limitFor(analysis: ChainAnalysis, withinLine: boolean): number {
	return analysis.anchored && withinLine ? MAX_CHOICES_PER_START * PATTERN_WINDOW_CHARS : MAX_CHOICES_PER_START;
}

function describeChoices(choices: number): string {
	return choices >= 1_000_000 ? "millions of" : choices.toLocaleString("en-US");
}

/** Chains past an atom that must match one of `set`: those that share no character with it end. */
function consume(chains: Chain[], set: CharSet): Chain[] {
	return chains
		.filter((chain) => (chain.last & set) !== NONE)
		.map((chain) => (chain.between.includes(set) ? chain : { ...chain, between: [...chain.between, set] }));
}

function mergeChains(chains: Chain[]): Chain[] {
	const byKey = new Map<string, Chain>();
	for (const chain of chains) {
		const key = `${chain.last}|${chain.withinLine}|${chain.between.map(String).sort().join(",")}`;
		const known = byKey.get(key);
		if (!known || known.choices < chain.choices) byKey.set(key, chain);
	}
	const merged = [...byKey.values()];
	return merged.length <= MAX_CHAINS ? merged : merged.sort((a, b) => b.choices - a.choices).slice(0, MAX_CHAINS);
}

/** A quantifier (or a backreference of varying length) over `set`: it joins every chain it can trade characters with. */
function stepQuantifier(
	chains: Chain[],
	set: CharSet,
	min: number,
	max: number,
	text: string,
	atEnd: boolean,
	analysis: ChainAnalysis,
): Chain[] {
	// At the very end of the pattern the first (greedy or lazy) try succeeds: nothing to backtrack into.
	const choices = atEnd ? 1 : Math.min(max - min + 1, PATTERN_WINDOW_CHARS);
	const withinLine = (set & LINE_TERMINATORS) === NONE;
	const joined: Chain[] = [{ last: set, between: [], choices, withinLine, first: text }];
	for (const chain of chains) {
		const shared = chain.last & set;
		if (shared === NONE || chain.between.some((between) => (between & shared) === NONE)) continue;
		const product = chain.choices * choices;
		const chainWithinLine = chain.withinLine && withinLine;
		if (product > limitFor(analysis, chainWithinLine)) {
			analysis.risk = `${quote(chain.first)} and ${quote(text)} can split the same characters between them (${describeChoices(product)} ways at one position, at most ${MAX_CHOICES_PER_START.toLocaleString("en-US")}), so the time grows as a power of the line length`;
			return [];
		}
		joined.push({ last: set, between: [], choices: product, withinLine: chainWithinLine, first: chain.first });
	}
	for (const chain of joined) analysis.maxChoices = Math.max(analysis.maxChoices, chain.choices);
	return mergeChains([...(min === 0 ? chains : consume(chains, set)), ...joined]);
}

/** The chains after `node`, given those before it; sets analysis.risk (and returns []) when a chain gets too costly. */
function followChains(node: RegexNode, chains: Chain[], atEnd: boolean, analysis: ChainAnalysis): Chain[] {
	switch (node.kind) {
		case "chars":
			return consume(chains, node.set);
		case "assert":
			return chains;
		case "group":
			return followChains(node.body, chains, atEnd, analysis);
		case "seq": {
			let current = chains;
			for (let i = 0; i < node.items.length && !analysis.risk; i++)
				current = followChains(node.items[i], current, atEnd && i === node.items.length - 1, analysis);
			return analysis.risk ? [] : current;
		}
		case "alt":
			return mergeChains(node.options.flatMap((option) => followChains(option, chains, atEnd, analysis)));
		case "look": {
			// Runs once for each way the chains before it are tried. Lookarounds are atomic, so the end
			// of a lookahead is an end; a lookbehind is matched backwards, so its end is not.
			const inner: ChainAnalysis = { groups: analysis.groups, anchored: analysis.anchored, maxChoices: 1 };
			followChains(node.body, [], !node.behind, inner);
			if (inner.risk) {
				analysis.risk = inner.risk;
				return [];
			}
			for (const chain of chains) {
				const product = chain.choices * inner.maxChoices;
				if (product > limitFor(analysis, chain.withinLine)) {
					analysis.risk = `${quote(chain.first)} runs the lookaround ${quote(node.text)}, which scans the line, at each of its choices (${describeChoices(product)} steps at one position), so the time grows as a power of the line length`;
					return [];
				}
			}
			analysis.maxChoices = Math.max(analysis.maxChoices, inner.maxChoices);
			return chains;
		}
		case "backref": {
			const group = analysis.groups.get(node.ref);
			if (!group) return chains;
			const [min, max] = lengthsOf(node, analysis.groups);
			const set = charsOf(node, analysis.groups);
			if (min === max) return min > 0 ? consume(chains, set) : chains;
			return stepQuantifier(chains, set, min, max, node.text, atEnd, analysis);
		}
		case "repeat": {
			if (node.max === 0) return chains;
			if (lengthsOf(node.body, analysis.groups)[1] === 0) {
				// Zero width however often it repeats (`(?:)+`, `(?=a)*`): it only runs its lookarounds.
				followChains(node.body, chains, false, analysis);
				return analysis.risk ? [] : chains;
			}
			if (containsRepeatOrBranch(node.body)) {
				// At most once (findNestedRepetition refused more): the body's own quantifiers are the chain's.
				const through = followChains(node.body, chains, atEnd, analysis);
				return node.min === 0 ? mergeChains([...chains, ...through]) : through;
			}
			const set = charsOf(node.body, analysis.groups);
			if (node.min === node.max)
				return lengthsOf(node.body, analysis.groups)[0] > 0 && node.min > 0 ? consume(chains, set) : chains;
			return stepQuantifier(chains, set, node.min, node.max, node.text, atEnd, analysis);
		}
	}
}

/**
 * Why the pattern could backtrack beyond the bound the scan relies on, or undefined. Refused:
 * - a repeated group that itself repeats or branches (`(a+)+`, `(a|aa)*`, `(\w+\s?)*`): exponential;
 * - a repeated backreference (`(a+)\1*b`);
 * - quantifiers that can split the same characters between them, whose choices at one start
 *   position multiply beyond MAX_CHOICES_PER_START: two unbounded ones (`a+a+b`, `\s*\s*$`), also
 *   when only zero-width atoms (`\b`, `\B`, `^`, `$`, lookarounds, `(?:)`), optional atoms (`x?`,
 *   `x*`, `x{0,n}`) or atoms both could match (`.*a.*b`) stand between them (`a+(?:)a+b`,
 *   `a+\Ba+b`, `a+b?a+c`), a large count counted like an unbounded one (`a{1,30000}a{1,30000}b`),
 *   a backreference of varying length (`(a+)\1b`), a lookaround that scans run at each choice
 *   (`\w+(?=.*x)`). Time quadratic in the line, cubic or worse.
 * Allowed: one unbounded quantifier per run (`\w+Exception`: the scan's windows bound it), a
 * quantifier at the very end (`error.*`), and two on one line after a leading `^` when neither can
 * match a line terminator (`^.*error.*timeout`: one start per line).
 */
export function findBacktrackingRisk(source: string): string | undefined {
	// The parser and the analysis recurse once per level; no real pattern nests this deep.
	if (groupDepth(source) > MAX_GROUP_DEPTH)
		return `groups nested more than ${MAX_GROUP_DEPTH} deep are too deep to check`;
	const parsed = parsePattern(source);
	if ("error" in parsed) return `its syntax cannot be checked (${parsed.error})`;
	const { root, groups } = parsed;
	const nested = findNestedRepetition(root);
	if (nested) return nested;
	const options = root.kind === "alt" ? root.options : [root];
	for (const option of options) {
		const first = option.kind === "seq" ? option.items[0] : option;
		const analysis: ChainAnalysis = { groups, anchored: first?.kind === "assert" && first.text === "^", maxChoices: 1 };
		followChains(option, [], true, analysis);
		if (analysis.risk) return analysis.risk;
	}
	return undefined;
}

/**
 * True when the pattern finds the same lines in UTF-8 text viewed as Latin-1 (one character per
 * byte) as in the decoded text: its source is ASCII and nothing in it can match a non-ASCII
 * character — no `.`, no negated class, no `\s \S \W \D`, no `\p`, `\u` or `\x80`-and-above. Then
 * every character a match consumes is ASCII, ASCII bytes are the same in both views, and the bytes
 * of a multi-byte character (all ≥ 0x80) can match nothing; case-insensitive matching without the
 * `u` flag never folds a non-ASCII character to an ASCII one. Conservative: `false` only costs speed.
 */
export function isByteSafePattern(source: string): boolean {
	for (let i = 0; i < source.length; i++) if (source.charCodeAt(i) > 0x7f) return false;
	let inClass = false;
	for (let i = 0; i < source.length; i++) {
		const char = source[i];
		if (char === "\\") {
			const next = source[i + 1] ?? "";
			if ("sSWDpPu".includes(next)) return false;
			if (next === "x" && /^[89a-f]/i.test(source[i + 2] ?? "")) return false;
			if (next === "c") return false;
			i++;
			continue;
		}
		if (inClass) {
			if (char === "]") inClass = false;
			continue;
		}
		if (char === "[") {
			if (source[i + 1] === "^") return false;
			inClass = true;
			if (source[i + 1] === "]") i++;
			continue;
		}
		if (char === ".") return false;
	}
	return true;
}
