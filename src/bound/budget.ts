// How many characters a view may take. Invariants: one assistant turn's views together take at most
// `contextShare` of the context window still free (≈ DEFAULT_CHARS_PER_TOKEN characters per token),
// shared among the turn's tool calls; each view's budget is never more than `thresholdChars` and
// never less than `minViewChars` (thresholdChars wins), so the id, the totals, the top signal lines
// and the last line always fit. Pure: numbers in, numbers out; the window comes from the caller.

/** Characters per token where the tokenizer is unknown. */
export const DEFAULT_CHARS_PER_TOKEN = 4;

/** What Pi says of the context window (ctx.getContextUsage()). */
export interface WindowUsage {
	/** The model's context window, in tokens (0 or less: unknown). */
	contextWindow: number;
	/** Tokens in use, or null when Pi does not know (right after a compaction). */
	tokens: number | null;
}

export interface BudgetOptions {
	thresholdChars: number;
	minViewChars: number;
	contextShare: number;
}

/**
 * The characters one turn's views may take together: contextShare × the free window. Tokens in use
 * that Pi does not know are estimated from `sentChars` (what was last sent, in characters); with no
 * window at all the budget is unlimited (each view is then capped by thresholdChars alone).
 */
export function computeTurnBudget(usage: WindowUsage | undefined, options: BudgetOptions, sentChars = 0): number {
	if (usage === undefined || !(usage.contextWindow > 0)) return Number.POSITIVE_INFINITY;
	const usedTokens = usage.tokens ?? sentChars / DEFAULT_CHARS_PER_TOKEN;
	const freeTokens = Math.max(0, usage.contextWindow - usedTokens);
	return Math.floor(options.contextShare * freeTokens * DEFAULT_CHARS_PER_TOKEN);
}

/** One view's budget from its share: at most thresholdChars, at least minViewChars (thresholdChars wins). */
export function capViewBudget(shareChars: number, options: BudgetOptions): number {
	const floor = Math.min(options.minViewChars, options.thresholdChars);
	return Math.min(options.thresholdChars, Math.max(floor, Math.floor(shareChars)));
}

/**
 * The budget one assistant turn's tool results share. A result draws an equal part of what is left
 * among the calls that have not drawn yet (parallel results drawing at once get the same part), and
 * gives back what its text did not use, so a small result leaves room to the big ones after it.
 */
export class SharedBudget {
	private remaining: number;
	private readonly pending: Set<string>;
	private readonly reserved = new Map<string, number>();

	constructor(totalChars: number, toolCallIds: Iterable<string>) {
		this.remaining = Math.max(0, totalChars);
		this.pending = new Set(toolCallIds);
	}

	/** The share of one of this turn's calls, in characters (before capViewBudget); undefined for another call. */
	draw(toolCallId: string): number | undefined {
		if (!this.pending.has(toolCallId)) return undefined;
		this.pending.delete(toolCallId);
		if (this.remaining === Number.POSITIVE_INFINITY) return this.remaining; // no window known: nothing to share
		const share = Math.floor(this.remaining / (this.pending.size + 1));
		this.remaining -= share;
		this.reserved.set(toolCallId, share);
		return share;
	}

	/** The call's result takes `usedChars`: what its share did not use goes back to the others. */
	settle(toolCallId: string, usedChars: number): void {
		const share = this.reserved.get(toolCallId);
		if (share === undefined) return;
		this.reserved.delete(toolCallId);
		this.remaining += Math.max(0, share - usedChars);
	}
}
