// Parses a JavaScript regex source (no `u` flag, Annex B syntax, as config compiles it) into nodes
// for src/regex/safety.ts to analyse: character sets, assertions, lookarounds, groups, sequences,
// alternatives, repeats and backreferences. Never throws: what it does not recognise becomes a
// character that can be anything.

import {
	ANY,
	ASCII,
	type CharSet,
	charSet,
	CLASS_ESCAPES,
	CONTROL_ESCAPES,
	DOT,
	NON_ASCII,
	NONE,
	rangeSet,
} from "./charset.js";

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

/** Capturing groups in the source, whether any is named (which makes `\k<name>` a backreference), and how deep groups nest. */
export function scanGroups(source: string): { count: number; named: boolean; depth: number } {
	let count = 0;
	let named = false;
	let depth = 0;
	let open = 0;
	for (let i = 0; i < source.length; i++) {
		const char = source[i];
		if (char === "\\") i++;
		else if (char === "[") {
			for (i++; i < source.length && source[i] !== "]"; i++) if (source[i] === "\\") i++;
		} else if (char === ")") open = Math.max(0, open - 1);
		else if (char === "(") {
			depth = Math.max(depth, ++open);
			if (source[i + 1] !== "?" || (source[i + 2] === "<" && source[i + 3] !== "=" && source[i + 3] !== "!")) {
				count++;
				if (source[i + 1] === "?") named = true;
			}
		}
	}
	return { count, named, depth };
}

/** The parsed nodes of `source`, and its capturing groups by number and name. */
export function parsePattern(source: string): ParsedPattern {
	const parser = new PatternParser(source);
	const items: RegexNode[] = [parser.parseAlternatives()];
	// A stray ")" (the regex would not compile): skip it and read on, so nothing is left unchecked.
	while (parser.at < source.length) {
		parser.at++;
		items.push(parser.parseAlternatives());
	}
	return { root: items.length === 1 ? items[0] : { kind: "seq", items }, groups: parser.groups };
}

/** A recursive-descent reader over one source; `at` is where it is. */
class PatternParser {
	at = 0;
	readonly groups = new Map<number | string, RegexNode>();
	private opened = 0;
	private readonly groupCount: number;
	private readonly named: boolean;

	constructor(private readonly source: string) {
		const { count, named } = scanGroups(source);
		this.groupCount = count;
		this.named = named;
	}

	parseAlternatives(): RegexNode {
		const options = [this.parseSequence()];
		while (this.source[this.at] === "|") {
			this.at++;
			options.push(this.parseSequence());
		}
		return options.length === 1 ? options[0] : { kind: "alt", options };
	}

	private parseSequence(): RegexNode {
		const items: RegexNode[] = [];
		while (this.at < this.source.length && this.source[this.at] !== "|" && this.source[this.at] !== ")") {
			const start = this.at;
			items.push(this.parseQuantifier(this.parseAtom(), start));
		}
		return { kind: "seq", items };
	}

	private parseAtom(): RegexNode {
		const char = this.source[this.at];
		if (char === "(") return this.parseGroup();
		if (char === "[") return { kind: "chars", set: this.parseClass() };
		this.at++;
		if (char === ".") return { kind: "chars", set: DOT };
		if (char === "^" || char === "$") return { kind: "assert", text: char };
		if (char === "\\") return this.parseEscape();
		return { kind: "chars", set: charSet(char.charCodeAt(0)) };
	}

	private parseGroup(): RegexNode {
		const start = this.at;
		let look: { behind: boolean } | undefined;
		let index: number | undefined;
		let name: string | undefined;
		if (this.source.startsWith("(?:", this.at)) this.at += 3;
		else if (this.source.startsWith("(?=", this.at) || this.source.startsWith("(?!", this.at)) {
			look = { behind: false };
			this.at += 3;
		} else if (this.source.startsWith("(?<=", this.at) || this.source.startsWith("(?<!", this.at)) {
			look = { behind: true };
			this.at += 4;
		} else if (this.source.startsWith("(?<", this.at)) {
			const close = this.source.indexOf(">", this.at);
			name = this.source.slice(this.at + 3, close < 0 ? this.source.length : close);
			index = ++this.opened;
			this.at = close < 0 ? this.source.length : close + 1;
		} else {
			index = ++this.opened;
			this.at += this.source[this.at + 1] === "?" ? 2 : 1;
		}
		const body = this.parseAlternatives();
		if (this.source[this.at] === ")") this.at++;
		if (look) return { kind: "look", body, behind: look.behind, text: this.source.slice(start, this.at) };
		const group: RegexNode = { kind: "group", body };
		if (index !== undefined) this.groups.set(index, group);
		if (name !== undefined) this.groups.set(name, group);
		return group;
	}

	/** One character class; `this.at` is on its "[". Letters are folded; a negated class is taken to match every non-ASCII character. */
	private parseClass(): CharSet {
		this.at++;
		const negated = this.source[this.at] === "^";
		if (negated) this.at++;
		let set = NONE;
		while (this.at < this.source.length && this.source[this.at] !== "]") {
			const from = this.parseClassAtom();
			if (
				this.source[this.at] === "-" &&
				this.source[this.at + 1] !== "]" &&
				this.at + 1 < this.source.length &&
				from.code !== undefined
			) {
				this.at++;
				const to = this.parseClassAtom();
				set |=
					to.code !== undefined && to.code >= from.code
						? rangeSet(from.code, to.code)
						: from.set | to.set | charSet(45);
			} else {
				set |= from.set;
			}
		}
		this.at++;
		return negated ? (ANY & ~(set & ASCII)) | NON_ASCII : set;
	}

	private parseClassAtom(): { set: CharSet; code?: number } {
		const char = this.source[this.at++];
		if (char !== "\\") return { set: charSet(char.charCodeAt(0)), code: char.charCodeAt(0) };
		const escaped = this.source[this.at] ?? "\\";
		if (escaped === "b") {
			this.at++;
			return { set: charSet(8), code: 8 };
		}
		if (escaped in CLASS_ESCAPES) {
			this.at++;
			return { set: CLASS_ESCAPES[escaped] };
		}
		const code = this.parseCharacterEscape();
		return code === undefined ? { set: ANY } : { set: charSet(code), code };
	}

	/** After a "\": `\b`, a class, a backreference, or one character. */
	private parseEscape(): RegexNode {
		const escaped = this.source[this.at];
		if (escaped === "b" || escaped === "B") {
			this.at++;
			return { kind: "assert", text: `\\${escaped}` };
		}
		if (escaped !== undefined && escaped in CLASS_ESCAPES) {
			this.at++;
			return { kind: "chars", set: CLASS_ESCAPES[escaped] };
		}
		const digits = /^[1-9]\d*/.exec(this.source.slice(this.at, this.at + 10))?.[0];
		if (digits && Number(digits) <= this.groupCount) {
			this.at += digits.length;
			return { kind: "backref", ref: Number(digits), text: `\\${digits}` };
		}
		if (escaped === "k" && this.named && this.source[this.at + 1] === "<") {
			const close = this.source.indexOf(">", this.at);
			const end = close < 0 ? this.source.length : close + 1;
			const text = `\\${this.source.slice(this.at, end)}`;
			const ref = this.source.slice(this.at + 2, end - 1);
			this.at = end;
			return { kind: "backref", ref, text };
		}
		const code = this.parseCharacterEscape();
		return { kind: "chars", set: code === undefined ? ANY : charSet(code) };
	}

	/** The character an escape stands for (`this.at` is after the "\"), or undefined for a legacy octal escape. */
	private parseCharacterEscape(): number | undefined {
		const escaped = this.source[this.at];
		if (escaped === undefined) return 92;
		if (/\d/.test(escaped)) {
			while (/\d/.test(this.source[this.at] ?? "")) this.at++;
			return undefined;
		}
		if (escaped in CONTROL_ESCAPES) {
			this.at++;
			return CONTROL_ESCAPES[escaped];
		}
		const hex = escaped === "x" ? 2 : escaped === "u" ? 4 : 0;
		if (hex > 0 && new RegExp(`^[0-9a-f]{${hex}}`, "i").test(this.source.slice(this.at + 1, this.at + 1 + hex))) {
			this.at += 1 + hex;
			return Number.parseInt(this.source.slice(this.at - hex, this.at), 16);
		}
		if (escaped === "c") {
			// `\cX` is a control character; without a letter after it, "\" stands for itself.
			if (!/[a-z]/i.test(this.source[this.at + 1] ?? "")) return 92;
			this.at += 2;
			return this.source.charCodeAt(this.at - 1) % 32;
		}
		this.at++;
		return escaped.charCodeAt(0);
	}

	private parseQuantifier(atom: RegexNode, start: number): RegexNode {
		const char = this.source[this.at];
		let min: number;
		let max: number;
		if (char === "*" || char === "+" || char === "?") {
			min = char === "+" ? 1 : 0;
			max = char === "?" ? 1 : Infinity;
			this.at++;
		} else {
			const braces = char === "{" ? /^\{(\d+)(,(\d*))?\}/.exec(this.source.slice(this.at, this.at + 40)) : null;
			if (!braces) return atom;
			min = Number(braces[1]);
			max = braces[2] === undefined ? min : braces[3] === "" ? Infinity : Number(braces[3]);
			this.at += braces[0].length;
		}
		if (this.source[this.at] === "?") this.at++;
		return { kind: "repeat", body: atom, min, max, text: this.source.slice(start, this.at) };
	}
}
