// A static check for regexes that can backtrack without bound, used on a configured signalPattern
// (which runs on every line of every large result, on Pi's main thread, where a runaway exec cannot
// be interrupted). Pure and conservative: it may refuse a pattern that would have been fine, never
// the other way round for the shapes it knows — a repeated group that itself repeats or branches
// (`(a+)+`, `(a|aa)*`, `(\w+\s?)*`), and three or more unbounded quantifiers in a row (`\s*\s*\s*$`),
// whose cost grows as a power of the line length. The scan's time budget covers what remains.

/** Why the pattern could backtrack catastrophically, or undefined when none of the known shapes occurs. */
export function findBacktrackingRisk(source: string): string | undefined {
	interface Group {
		/** Holds a quantifier (any, `?` included) or an alternation. */
		repeatsOrBranches: boolean;
		/** Unbounded quantifiers in a row at the current position of this group. */
		run: number;
	}
	const stack: Group[] = [{ repeatsOrBranches: false, run: 0 }];
	let i = 0;
	const top = () => stack[stack.length - 1];

	while (i < source.length) {
		const char = source[i];
		let atomEnd = i + 1;
		let groupRisky = false;
		if (char === "\\") {
			atomEnd = i + 2;
			// \1 backreferences and \k<name> are atoms; a following quantifier applies to them.
		} else if (char === "[") {
			let j = i + 1;
			if (source[j] === "^") j++;
			if (source[j] === "]") j++;
			for (; j < source.length && source[j] !== "]"; j++) if (source[j] === "\\") j++;
			atomEnd = j + 1;
		} else if (char === "(") {
			stack.push({ repeatsOrBranches: false, run: 0 });
			i += source.startsWith("(?<=", i) || source.startsWith("(?<!", i) ? 4 : source.startsWith("(?", i) ? (source[i + 2] === "<" ? source.indexOf(">", i) + 1 - i : 3) : 1;
			continue;
		} else if (char === ")") {
			const closed = stack.length > 1 ? stack.pop() : undefined;
			groupRisky = closed?.repeatsOrBranches ?? false;
			// What repeats inside a group also repeats inside every group around it.
			if (groupRisky) top().repeatsOrBranches = true;
			atomEnd = i + 1;
		} else if (char === "|") {
			top().repeatsOrBranches = true;
			top().run = 0;
			i++;
			continue;
		}
		// A quantifier after the atom?
		const quantifier = /^(?:[*+?]|\{(\d+)(,(\d*))?\})\??/.exec(source.slice(atomEnd, atomEnd + 24));
		if (!quantifier) {
			top().run = 0;
			i = atomEnd;
			continue;
		}
		const text = quantifier[0];
		const max = text[0] === "*" || text[0] === "+" ? Infinity : text[0] === "?" ? 1 : quantifier[2] === undefined ? Number(quantifier[1]) : quantifier[3] === "" ? Infinity : Number(quantifier[3]);
		const repeats = max > 1;
		if (repeats && groupRisky) {
			return `a repeated group that itself repeats or branches (${source.slice(Math.max(0, i - 30), atomEnd + text.length)}) can backtrack without bound`;
		}
		top().repeatsOrBranches = true; // even `?` is a branch: `(a?){30}a{30}` is exponential
		if (max === Infinity) {
			top().run++;
			if (top().run >= 3) return "three or more unbounded quantifiers in a row can take time growing as a power of the line length";
		} else {
			top().run = 0;
		}
		i = atomEnd + text.length;
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
