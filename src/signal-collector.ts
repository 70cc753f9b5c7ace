// The signal candidates of one scan, kept in bounded memory: lines that matched the signal pattern,
// grouped by shape (signal-policy.ts shapeOf). A shape keeps its first few distinct lines and its
// latest one, with exact repeat counts, and counts every line of its shape; at most MAX_SHAPES
// shapes are kept — past that, the ones that rank lowest are dropped, evenly over the output — so a
// million distinct error lines cost no more memory than a thousand. Order of arrival is line order.

import type { ScannedLine } from "./render.js";
import { classifySeverity, rankCandidates, type Severity, shapeOf } from "./signal-policy.js";
import { keepEnd, keepStart } from "./text.js";

/** Shapes remembered at once (twice this many before a prune). */
const MAX_SHAPES = 1024;
/** Distinct lines kept per shape, from its first; its latest line is kept too. */
const LINES_PER_SHAPE = 5;
/** A shape with at least this many lines is shown once, with a count of its similar lines. */
export const COLLAPSE_SHAPE_LINES = 7;

/** A signal line the view may show. */
export interface SignalItem extends ScannedLine {
	/** Byte offset of the line's start in the scanned stream (-1 when not known): where its block is read. */
	offset: number;
	/** Lines with exactly this text (shown once, at its first line). */
	count: number;
	severity: Severity;
	/** Signal lines of this line's shape in the whole output. */
	shapeCount: number;
	/** Set when this line stands for the other lines of its shape too: how many lines, and the last one. */
	similar?: { count: number; lastLine: number };
}

interface Shape {
	key: string;
	severity: Severity;
	count: number;
	firstLine: number;
	lastLine: number;
	/** The first distinct lines, then the latest one (index LINES_PER_SHAPE). */
	items: SignalItem[];
	latest: SignalItem | undefined;
}

export class SignalCollector {
	private shapes = new Map<string, Shape>();
	/** Lines added in all (repeats included). */
	matches = 0;

	constructor(private readonly maxLineChars: number) {}

	/** A line that matched the signal pattern, in line order. */
	add(line: ScannedLine, offset: number): void {
		this.matches++;
		const key = shapeOf(line.text);
		let shape = this.shapes.get(key);
		if (shape === undefined) {
			if (this.shapes.size >= 2 * MAX_SHAPES) this.prune();
			shape = { key, severity: classifySeverity(line.text), count: 0, firstLine: line.lineNumber, lastLine: line.lineNumber, items: [], latest: undefined };
			this.shapes.set(key, shape);
		}
		shape.count++;
		shape.lastLine = line.lineNumber;
		const same = shape.items.find((item) => item.text === line.text) ?? (shape.latest?.text === line.text ? shape.latest : undefined);
		if (same !== undefined) {
			same.count++;
			return;
		}
		const item = this.toItem(line, offset, shape.severity);
		if (shape.items.length < LINES_PER_SHAPE) shape.items.push(item);
		else shape.latest = item;
	}

	/**
	 * The lines the view may show (rank them with signal-policy.ts rankCandidates). A common shape
	 * (COLLAPSE_SHAPE_LINES lines or more) gives one line that stands for the others.
	 */
	items(): SignalItem[] {
		const out: SignalItem[] = [];
		for (const shape of this.shapes.values()) {
			const candidates = [...shape.items, ...(shape.latest ? [shape.latest] : [])];
			for (const item of candidates) item.shapeCount = shape.count;
			if (candidates.length === 0) continue;
			if (shape.count >= COLLAPSE_SHAPE_LINES) {
				const first = candidates[0];
				const others = shape.count - first.count;
				out.push(others > 0 ? { ...first, similar: { count: others, lastLine: shape.lastLine } } : first);
			} else {
				out.push(...candidates);
			}
		}
		return out;
	}

	private toItem(line: ScannedLine, offset: number, severity: Severity): SignalItem {
		// The view clips a line at maxLineChars: more need not be kept (totalChars says how long it was).
		const max = this.maxLineChars;
		const text = line.text.length <= max ? line.text : line.keptEnd ? keepEnd(line.text, max) : keepStart(line.text, max);
		return { ...line, text, partial: line.partial || text.length < line.text.length, offset, count: 1, severity, shapeCount: 1 };
	}

	/** Keeps the MAX_SHAPES shapes that rank highest (errors, rare, spread over the output). */
	private prune(): void {
		const ranked = rankCandidates([...this.shapes.values()].map((shape) => ({ shape, lineNumber: shape.firstLine, severity: shape.severity, shapeCount: shape.count })));
		this.shapes = new Map(ranked.slice(0, MAX_SHAPES).map(({ shape }) => [shape.key, shape]));
	}
}
