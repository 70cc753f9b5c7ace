// Masking in what the model is sent: an old view (a result pi-overflow bounded and stored, which
// overflow_query can read back) becomes a stub of at most MAX_STUB_CHARS — id, tool, totals, its
// decisive lines, how to read it back — while the session keeps the full view. Invariants: results
// without a stored id are never touched; a view is masked only after the model has been sent it whole
// in an earlier call, and only by tool output first sent after that call (parallel results of one
// turn never mask each other); a masked id stays masked and its stub never changes; masking
// advances in batches, at most once in MASK_MIN_CALLS_BETWEEN calls, so what was sent before (and the
// provider's prompt cache of it) is rewritten rarely. Pure: messages in, messages out.

import { joinTextParts, measureTextParts } from "../intake/stash.js";
import { formatNumberedLine, lineNumberWidth } from "../lines/numbered.js";
import { formatIdTag, formatMaskedFooter, isOwnLine } from "../lines/protocol.js";
import { plural, toOneLine } from "../lines/text.js";

/** Longest stub, in characters. */
export const MAX_STUB_CHARS = 1_000;
/** Decisive lines a stub shows at most. */
export const MAX_STUB_LINES = 3;
/** Longest decisive line in a stub, in characters. */
export const MAX_STUB_LINE_CHARS = 200;
/** Masking steps are at least this many LLM calls apart: at most 1 call in 4 rewrites earlier context. */
export const MASK_MIN_CALLS_BETWEEN = 4;
/** A stored entry's id (as the store issues them). */
const ENTRY_ID = /^[0-9a-f]{12}$/;
/** Longest tool name repeated in a stub, in characters. */
const MAX_TOOL_NAME_CHARS = 40;

/** A message of Pi's `context` event, as masking reads it (Pi's AgentMessage, structurally). */
export interface ContextMessage {
	role: string;
	[field: string]: unknown;
}

/** One decisive line of a view: its line number in the output (absent when unknown) and its text. */
export interface StubLine {
	line?: number;
	text: string;
}

/** What a stub is made of. */
export interface StubInput {
	id: string;
	toolName: string;
	totalLines: number;
	totalBytes: number;
	/** The decisive lines, in the order shown (at most MAX_STUB_LINES are used). */
	lines: readonly StubLine[];
	/** Set when the view was masked because a later run of the same command was sent: that run's id, when it has one. */
	supersededBy?: { id?: string };
}

/** A view in the messages that can be masked. */
export interface MaskableView extends Omit<StubInput, "lines"> {
	/** The text the session keeps (the full view). */
	text: string;
	/** details.overflow.top, when the view carries it. */
	top?: readonly StubLine[];
}

export interface MaskingOptions {
	/** A view is masked once this many characters of newer tool output follow it; 0 = never. */
	maskAfterChars: number;
	/** A step waits until the views due hold this many characters. */
	maskBatchChars: number;
	/** Lines matching it are decisive when a view carries no `top`. */
	signalRegex: RegExp;
	/**
	 * For each message that a later run of the same command follows (context/superseded.ts), that
	 * run's index: once the later run has been sent, the view is due whatever maskAfterChars says.
	 */
	findSuccessors?: (messages: readonly ContextMessage[], views: readonly number[]) => ReadonlyMap<number, number>;
}

export interface MaskingResult {
	messages: ContextMessage[];
	/** Views shown as stubs in this call. */
	masked: number;
	/** True when this call masked views that earlier calls sent whole (it rewrote earlier context). */
	stepped: boolean;
}

/** The ids masked so far, when the last step was and the call each message was first sent in; one per session. */
export class MaskingState {
	readonly masked = new Set<string>();
	/** Masked views that a later run superseded, and that run's id when it has one. Never changes once set. */
	readonly supersededBy = new Map<string, { id?: string }>();
	private calls = 0;
	private lastStep = Number.NEGATIVE_INFINITY;
	private readonly firstSent = new Map<string, number>();

	/** Counts one call; true when a step is allowed in it. */
	nextCall(): boolean {
		this.calls++;
		return this.calls - this.lastStep >= MASK_MIN_CALLS_BETWEEN;
	}

	/** The call a message was first sent in (this call when it is new, or when it has no key). */
	noteSent(message: ContextMessage): number {
		const key = keyOfMessage(message);
		if (key === undefined) return this.calls;
		const call = this.firstSent.get(key);
		if (call !== undefined) return call;
		this.firstSent.set(key, this.calls);
		return this.calls;
	}

	/** The call being built. */
	get currentCall(): number {
		return this.calls;
	}

	recordStep(ids: Iterable<string>): void {
		for (const id of ids) this.masked.add(id);
		this.lastStep = this.calls;
	}
}

/**
 * The stub of a view: one header line that starts like the view's (`[pi-overflow id=<id>]`), the
 * decisive lines with their line numbers, and the hint to read it back. At most MAX_STUB_CHARS.
 */
export function buildMaskStub(input: StubInput): string {
	const tool = toOneLine(input.toolName, MAX_TOOL_NAME_CHARS);
	const why = input.supersededBy
		? `superseded by a later run of the same command (${input.supersededBy.id !== undefined ? `id=${input.supersededBy.id}` : "shown whole below"}), masked here`
		: "an older view, masked here to save context";
	const header = `${formatIdTag(input.id)} ${tool} output: ${plural(input.totalLines, "line")}, ${input.totalBytes} bytes — ${why}; the full output is stored`;
	const footer = formatMaskedFooter(input.id);
	const width = lineNumberWidth(input.totalLines);
	// A superseded run's decisive lines are stale: shown again, they would look current beside the
	// later run's view (which says what is gone and what is still there).
	const lines = input.supersededBy
		? []
		: input.lines.slice(0, MAX_STUB_LINES).map((line) => formatStubLine(line, width));
	let room = MAX_STUB_CHARS - header.length - footer.length - 2;
	const shown: string[] = [];
	for (const line of lines) {
		if (line.length + 1 > room) break;
		shown.push(line);
		room -= line.length + 1;
	}
	return [header, ...shown, footer].join("\n");
}

/** A decisive line numbered as the view numbers it, or marked as the last line when its number is unknown. */
function formatStubLine(line: StubLine, width: number): string {
	const text = toOneLine(line.text, MAX_STUB_LINE_CHARS);
	return line.line === undefined ? `  (last line shown): ${text}` : formatNumberedLine(line.line, ":", text, width);
}

/** details.overflow.top when it is well formed (1–3 lines, each clipped), else undefined. */
export function readStubLines(value: unknown): StubLine[] | undefined {
	if (!Array.isArray(value) || value.length === 0) return undefined;
	const lines: StubLine[] = [];
	for (const item of value.slice(0, MAX_STUB_LINES)) {
		if (!isRecord(item) || typeof item.text !== "string" || !isLineNumber(item.line)) return undefined;
		lines.push({ line: item.line, text: item.text });
	}
	return lines;
}

/**
 * The decisive lines of a view's text, for a view that carries no `top`: up to two of the lines it
 * shows as key lines under its header, else of its signal lines (the part between the head and the
 * tail; else head or tail lines matching the pattern),
 * then its last numbered line, the output's end. A text with no numbered line (a result that was
 * kept with a recovery marker) gives its last lines that match the pattern, then its last line.
 */
export function findDecisiveLines(text: string, signalRegex: RegExp): StubLine[] {
	const runs: Array<Array<Required<StubLine>>> = [[]];
	const plain: string[] = [];
	const keys: Array<Required<StubLine>> = [];
	for (const raw of text.split("\n")) {
		const key = /^\s*key\s+(\d{1,15}): (.*)$/.exec(raw);
		const numbered = /^\s*(\d{1,15}): (.*)$/.exec(raw);
		if (key) {
			keys.push({ line: Number(key[1]), text: key[2] });
		} else if (numbered) {
			runs[runs.length - 1].push({ line: Number(numbered[1]), text: numbered[2] });
		} else if (/^\s*\.\.\. \d+ more lines like these/.test(raw)) {
			// A folded run inside the head: not a boundary between head, signals and tail.
		} else if (/^\s*\.\.\. /.test(raw)) {
			if (runs[runs.length - 1].length > 0) runs.push([]); // a notice between head, signals and tail
		} else if (raw.trim() !== "" && !isOwnLine(raw)) {
			plain.push(raw);
		}
	}
	const numbered = runs.flat();
	if (numbered.length === 0) return findPlainDecisiveLines(plain, signalRegex);
	const last = numbered[numbered.length - 1];
	// The view's own choice of its most decisive lines, when it shows them under its header.
	if (keys.length > 0) {
		const picked = keys.length <= 2 ? keys : [keys[0], keys[keys.length - 1]];
		return [...picked.filter((line) => line.line !== last.line), last];
	}
	const signalRuns = runs.filter((run) => run.length > 0);
	// [head] … [signals] … [tail]: the middle runs are the signal lines the view chose.
	const chosen =
		signalRuns.length >= 3
			? signalRuns.slice(1, -1).flat()
			: numbered.filter((line) => line !== last && signalRegex.test(line.text));
	const picked = chosen.length <= 2 ? chosen : [chosen[0], chosen[chosen.length - 1]];
	return [...picked.filter((line) => line.line !== last.line), last];
}

function findPlainDecisiveLines(lines: readonly string[], signalRegex: RegExp): StubLine[] {
	if (lines.length === 0) return [];
	const last = lines[lines.length - 1];
	const signals = lines
		.slice(0, -1)
		.filter((line) => signalRegex.test(line))
		.slice(-2);
	return [...signals, last].map((text) => ({ text }));
}

/** What identifies a tool-output message across calls: a tool result's call id, a `!command`'s time and text. */
function keyOfMessage(message: ContextMessage): string | undefined {
	if (message.role === "toolResult" && typeof message.toolCallId === "string") return `t\0${message.toolCallId}`;
	if (message.role === "bashExecution") return `b\0${String(message.timestamp)}\0${String(message.command)}`;
	return undefined;
}

/**
 * The messages with every view old enough shown as its stub. A view is due once it was sent whole in
 * an earlier call and maskAfterChars of tool output first sent after that call follow it; due views are masked together when they hold maskBatchChars and the
 * last step is MASK_MIN_CALLS_BETWEEN calls back. Already-masked views stay masked.
 */
export function maskOldViews(
	messages: readonly ContextMessage[],
	state: MaskingState,
	options: MaskingOptions,
	findView: (message: ContextMessage) => MaskableView | undefined,
): MaskingResult {
	const stepAllowed = state.nextCall();
	const sentIn = messages.map((message) => state.noteSent(message));
	if (options.maskAfterChars <= 0 && options.findSuccessors === undefined)
		return { messages: [...messages], masked: 0, stepped: false };
	const views: Array<{ index: number; view: MaskableView }> = [];
	messages.forEach((message, index) => {
		const view = findView(message);
		if (view !== undefined) views.push({ index, view });
	});
	// Only views not masked yet can be superseded (a masked one keeps its stub).
	const open = views.filter(({ view }) => !state.masked.has(view.id)).map(({ index }) => index);
	const successors =
		options.findSuccessors !== undefined && open.length > 0
			? options.findSuccessors(messages, open)
			: new Map<number, number>();
	// Tool output after a view, as the session keeps it (so it never shrinks as views are masked),
	// counting only messages first sent in a later call than the view.
	const newerThan = (index: number): number => {
		let chars = 0;
		for (let later = index + 1; later < messages.length && chars < options.maskAfterChars; later++)
			if (sentIn[later] > sentIn[index]) chars += measureToolOutput(messages[later]);
		return chars;
	};
	// A later run of the same command that the model has been sent (in an earlier call than this one).
	const supersededAt = (index: number): number | undefined => {
		const next = successors.get(index);
		return next !== undefined && sentIn[next] < state.currentCall ? next : undefined;
	};
	const due = views.filter(
		({ index, view }) =>
			!state.masked.has(view.id) &&
			sentIn[index] < state.currentCall &&
			(supersededAt(index) !== undefined || (options.maskAfterChars > 0 && newerThan(index) >= options.maskAfterChars)),
	);
	const dueChars = due.reduce((sum, { view }) => sum + view.text.length, 0);
	// A superseded view is worth a step on its own: the model would otherwise read a stale run as current.
	const stepped =
		stepAllowed &&
		due.length > 0 &&
		(dueChars >= options.maskBatchChars || due.some(({ index }) => supersededAt(index) !== undefined));
	if (stepped) {
		for (const { index, view } of due) {
			const next = supersededAt(index);
			if (next === undefined) continue;
			const id = findView(messages[next])?.id;
			state.supersededBy.set(view.id, id !== undefined ? { id } : {});
		}
		state.recordStep(due.map(({ view }) => view.id));
	}

	const out = [...messages];
	let masked = 0;
	for (const { index, view } of views) {
		if (!state.masked.has(view.id)) continue;
		const lines = view.top ?? findDecisiveLines(view.text, options.signalRegex);
		const supersededBy = state.supersededBy.get(view.id);
		out[index] = replaceViewText(
			messages[index],
			buildMaskStub({ ...view, lines, ...(supersededBy ? { supersededBy } : {}) }),
		);
		masked++;
	}
	return { messages: out, masked, stepped };
}

/** Characters of tool output a message carries: a tool result's text, a `!command`'s output. */
export function measureToolOutput(message: ContextMessage): number {
	if (message.role === "toolResult") return measureText(message.content);
	if (message.role === "bashExecution" && message.excludeFromContext !== true && typeof message.output === "string")
		return message.output.length;
	return 0;
}

/**
 * The view a tool result carries: its stored id (details.overflow.id), totals and text. Results
 * without a stored id (not bounded, or the store failed) are not views to mask.
 */
export function readToolResultView(message: ContextMessage): MaskableView | undefined {
	if (message.role !== "toolResult" || !isRecord(message.details)) return undefined;
	const overflow = message.details.overflow;
	if (!isRecord(overflow) || typeof overflow.id !== "string" || !ENTRY_ID.test(overflow.id)) return undefined;
	if (!isCount(overflow.totalLines) || !isCount(overflow.totalBytes)) return undefined;
	const top = readStubLines(overflow.top);
	return {
		id: overflow.id,
		toolName: typeof message.toolName === "string" ? message.toolName : "tool",
		totalLines: overflow.totalLines,
		totalBytes: overflow.totalBytes,
		text: joinText(message.content),
		...(top ? { top } : {}),
	};
}

/** The message with its view text replaced by `text`: a tool result's text parts (images kept), a `!command`'s output. */
function replaceViewText(message: ContextMessage, text: string): ContextMessage {
	if (message.role === "bashExecution") return { ...message, output: text };
	const parts = Array.isArray(message.content) ? (message.content as unknown[]) : [];
	const others = parts.filter((part) => !(isRecord(part) && part.type === "text"));
	return { ...message, content: [{ type: "text", text }, ...others] };
}

/** The length of joinText(content), without joining anything. */
function measureText(content: unknown): number {
	if (typeof content === "string") return content.length;
	return Array.isArray(content)
		? measureTextParts(content.filter(isRecord) as Array<{ type: string; text?: unknown }>)
		: 0;
}

function joinText(content: unknown): string {
	if (typeof content === "string") return content;
	return Array.isArray(content)
		? joinTextParts(content.filter(isRecord) as Array<{ type: string; text?: unknown }>)
		: "";
}

function isRecord(value: unknown): value is Record<string, unknown> {
	return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isCount(value: unknown): value is number {
	return typeof value === "number" && Number.isSafeInteger(value) && value >= 0;
}

function isLineNumber(value: unknown): value is number {
	return isCount(value) && value >= 1;
}

/** Characters of text in messages (what the provider is sent, roughly): the tokens in use when Pi does not know them. */
export function measureContextChars(messages: readonly ContextMessage[]): number {
	let chars = 0;
	for (const message of messages) {
		if (message.role === "bashExecution") chars += measureToolOutput(message) + String(message.command ?? "").length;
		else if (message.role === "compactionSummary" || message.role === "branchSummary")
			chars += String(message.summary ?? "").length;
		else if (Array.isArray(message.content)) {
			for (const part of message.content) {
				if (!isRecord(part)) continue;
				if (typeof part.text === "string") chars += part.text.length;
				else if (typeof part.thinking === "string") chars += part.thinking.length;
				else if (part.type === "toolCall") chars += JSON.stringify(part.arguments ?? {}).length;
			}
		} else chars += measureText(message.content);
	}
	return chars;
}
