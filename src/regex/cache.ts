// The compiled forms of a signal pattern, shared by every scan of the process. V8 compiles a regex
// on its first runs (and again per flag set, and for one- and two-byte strings apart); its own
// cache forgets after a few garbage collections, so the first large result after a quiet spell paid
// 20–40 ms for it. Invariant: one set per (source, flags), built once and kept (the last few);
// every use of a shared regex is synchronous and sets lastIndex first, so scans may interleave.

/** The forms SignalFinder runs: a block pass (gm), a line test (m), windows of a long line (gm). */
export interface SignalRegexes {
	block: RegExp;
	line: RegExp;
	window: RegExp;
}

/** Pattern sets kept (a /reload may bring another signalPattern; old ones are dropped first). */
const MAX_CACHED_PATTERNS = 4;

const cache = new Map<string, SignalRegexes>();

/** How often a set was built (a test hook: the result path must not build one after the prewarm). */
export const regexCacheStats = { builds: 0 };

/** The shared set for a pattern (`flags` without g, m, y). */
export function findSignalRegexes(source: string, flags: string): SignalRegexes {
	const key = `${flags}/${source}`;
	const cached = cache.get(key);
	if (cached !== undefined) return cached;
	regexCacheStats.builds++;
	const built = {
		block: new RegExp(source, `${flags}gm`),
		line: new RegExp(source, `${flags}m`),
		window: new RegExp(source, `${flags}gm`),
	};
	if (cache.size >= MAX_CACHED_PATTERNS) cache.delete(cache.keys().next().value as string);
	cache.set(key, built);
	return built;
}
