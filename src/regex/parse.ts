// A JavaScript regex source (no `u` flag, Annex B syntax, as config compiles it) as the nodes that
// safety.ts and keywords.ts analyse: character sets, assertions, lookarounds, groups, sequences,
// alternatives, repeats and backreferences. regexpp (the parser ESLint uses) reads the source; this
// module only maps its AST to those nodes. Never throws: a source regexpp refuses (V8 refuses it too,
// in every case measured) gives its reason instead.

import { type AST, RegExpParser } from "@eslint-community/regexpp";
import { ANY, ASCII, type CharSet, CLASS_ESCAPES, charSet, DOT, NON_ASCII, NONE, rangeSet } from "./charset.js";

export type RegexNode =
	| { kind: "chars"; set: CharSet }
	/** `^`, `$`, `\b`, `\B`: zero width. */
	| { kind: "assert"; text: string }
	| { kind: "look"; body: RegexNode; behind: boolean; text: string }
	| { kind: "group"; body: RegexNode }
	| { kind: "seq"; items: RegexNode[] }
	| { kind: "alt"; options: RegexNode[] }
	| { kind: "repeat"; body: RegexNode; min: number; max: number; text: string }
	| { kind: "backref"; ref: number | string; text: string };

export interface ParsedPattern {
	root: RegexNode;
	/** Capturing groups by number and by name. */
	groups: Map<number | string, RegexNode>;
}

/** How deep groups nest in the source (checked before parsing: the parser and the analysis recurse). */
export function groupDepth(source: string): number {
	let depth = 0;
	let open = 0;
	for (let i = 0; i < source.length; i++) {
		const char = source[i];
		if (char === "\\") i++;
		else if (char === "[") {
			for (i++; i < source.length && source[i] !== "]"; i++) if (source[i] === "\\") i++;
		} else if (char === ")") open = Math.max(0, open - 1);
		else if (char === "(") depth = Math.max(depth, ++open);
	}
	return depth;
}

const parser = new RegExpParser({ ecmaVersion: 2025 });

/** `\d \D \w \W \s \S` or `.` (no `\p` without the `u` flag). */
function escapeSet(node: AST.CharacterSet): CharSet {
	return node.kind === "any" ? DOT : (CLASS_ESCAPES[node.raw[1]!] ?? ANY);
}

/** A character class; a negated class is taken to match every non-ASCII character. */
function classSet(node: AST.CharacterClass): CharSet {
	let set = NONE;
	for (const element of node.elements) {
		if (element.type === "Character") set |= charSet(element.value);
		else if (element.type === "CharacterSet") set |= escapeSet(element);
		else if (element.type === "CharacterClassRange") set |= rangeSet(element.min.value, element.max.value);
		else set |= ANY;
	}
	return node.negate ? (ANY & ~(set & ASCII)) | NON_ASCII : set;
}

/** The nodes of `source` and its capturing groups by number and name, or why it is not a regex. */
export function parsePattern(source: string): ParsedPattern | { error: string } {
	let pattern: AST.Pattern;
	try {
		pattern = parser.parsePattern(source, 0, source.length, { unicode: false, unicodeSets: false });
	} catch (error) {
		return { error: error instanceof Error ? error.message : String(error) };
	}
	const groups = new Map<number | string, RegexNode>();
	let opened = 0;
	const alternatives = (options: AST.Alternative[]): RegexNode => {
		const nodes = options.map((option): RegexNode => ({ kind: "seq", items: option.elements.map(element) }));
		return nodes.length === 1 ? nodes[0]! : { kind: "alt", options: nodes };
	};
	const element = (node: AST.Element): RegexNode => {
		switch (node.type) {
			case "Character":
				return { kind: "chars", set: charSet(node.value) };
			case "CharacterSet":
				return { kind: "chars", set: escapeSet(node) };
			case "CharacterClass":
				return { kind: "chars", set: classSet(node) };
			case "ExpressionCharacterClass":
				return { kind: "chars", set: ANY };
			case "Assertion":
				if (node.kind === "lookahead" || node.kind === "lookbehind")
					return {
						kind: "look",
						body: alternatives(node.alternatives),
						behind: node.kind === "lookbehind",
						text: node.raw,
					};
				return { kind: "assert", text: node.raw };
			case "Group":
				return { kind: "group", body: alternatives(node.alternatives) };
			case "CapturingGroup": {
				// Numbered in the order they open, as V8 numbers them.
				const index = ++opened;
				const group: RegexNode = { kind: "group", body: alternatives(node.alternatives) };
				groups.set(index, group);
				if (node.name !== null) groups.set(node.name, group);
				return group;
			}
			case "Quantifier":
				return { kind: "repeat", body: element(node.element), min: node.min, max: node.max, text: node.raw };
			case "Backreference":
				return { kind: "backref", ref: node.ref, text: node.raw };
		}
	};
	return { root: alternatives(pattern.alternatives), groups };
}
