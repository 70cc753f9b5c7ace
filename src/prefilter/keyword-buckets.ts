// The SIMD prefilter's fingerprint tables (src/prefilter/wasm/keyword-filter.wat): each keyword's first four
// bytes as low- and high-nibble sets, placed in 16 buckets so that the buckets propose as few
// positions of ordinary tool output as they can (greedy placement by expected proposal rate, then a
// few passes moving single keywords). Pure: keywords in, tables out; a bucket never loses a keyword,
// so every keyword position is proposed whatever the placement.

/**
 * Keyword bytes fingerprinted, and buckets (two groups of eight), as src/prefilter/wasm/keyword-filter.wat expects.
 * The module looks up only the low nibble of the fourth byte; placing keywords as if it looked up
 * the high one too proposed half as many positions of the bench log, and 10% more of the real fixtures.
 */
const FINGERPRINT_BYTES = 4;
const BUCKETS = 16;
const TABLE_BYTES = 256;
/** Rounds of moving single keywords between buckets after the greedy placement. */
const MAX_IMPROVING_PASSES = 4;

/**
 * How often a byte is expected in tool output, for choosing buckets: spaces and lower-case letters
 * are common, control bytes rare. Only the ratios matter.
 */
function expectedByteWeight(byte: number): number {
	if (byte === 0x20) return 10;
	if (byte >= 0x61 && byte <= 0x7a) return 4;
	if (byte >= 0x30 && byte <= 0x39) return 2;
	if (byte >= 0x41 && byte <= 0x5a) return 1;
	if (byte > 0x20 && byte < 0x7f) return 0.5;
	if (byte === 0x09 || byte === 0x0a) return 1;
	return byte >= 0x80 ? 1 : 0.01;
}

/** WEIGHTS[high * 16 + low]: the expected share of the byte (high << 4 | low). */
const WEIGHTS = (() => {
	const weights = new Float64Array(256);
	let sum = 0;
	for (let byte = 0; byte < 256; byte++) sum += weights[byte] = expectedByteWeight(byte);
	for (let byte = 0; byte < 256; byte++) weights[byte] /= sum;
	return weights;
})();

/** Low- and high-nibble sets (16-bit masks) of the bytes allowed at each fingerprint offset. */
type Fingerprint = Array<{ low: number; high: number }>;

/** The bytes a keyword allows at offsets 0..3: its byte (both cases for an ASCII letter), any byte past its end. */
function fingerprintOf(keyword: string): Fingerprint {
	const print: Fingerprint = [];
	for (let k = 0; k < FINGERPRINT_BYTES; k++) {
		if (k >= keyword.length) {
			print.push({ low: 0xffff, high: 0xffff });
			continue;
		}
		const code = keyword.charCodeAt(k);
		const lower = code >= 0x41 && code <= 0x5a ? code + 0x20 : code;
		let high = 1 << (lower >> 4);
		if (lower >= 0x61 && lower <= 0x7a) high |= 1 << ((lower - 0x20) >> 4);
		print.push({ low: 1 << (lower & 15), high });
	}
	return print;
}

/** Expected share of positions a bucket with this fingerprint union proposes. */
/** SHARES[high * 512 + half * 256 + mask]: the share of the bytes with that high nibble and a low nibble in `mask` (bits of half 0: 0–7, of half 1: 8–15). */
const SHARES = (() => {
	const shares = new Float64Array(16 * 512);
	for (let high = 0; high < 16; high++) {
		for (let half = 0; half < 2; half++) {
			for (let mask = 0; mask < 256; mask++) {
				let share = 0;
				for (let bit = 0; bit < 8; bit++) if (mask & (1 << bit)) share += WEIGHTS[high * 16 + half * 8 + bit];
				shares[high * 512 + half * 256 + mask] = share;
			}
		}
	}
	return shares;
})();

/**
 * Expected share of positions a bucket proposes: the union of its fingerprints (all of `prints`
 * but the one at `skip`, plus `extra`), each offset taken as independent. 0 for an empty bucket.
 */
function proposalRate(prints: readonly Fingerprint[], skip = -1, extra?: Fingerprint): number {
	if (prints.length - (skip >= 0 ? 1 : 0) + (extra ? 1 : 0) === 0) return 0;
	let rate = 1;
	for (let k = 0; k < FINGERPRINT_BYTES; k++) {
		let low = extra ? extra[k].low : 0;
		let high = extra ? extra[k].high : 0;
		for (let i = 0; i < prints.length; i++) {
			if (i === skip) continue;
			low |= prints[i][k].low;
			high |= prints[i][k].high;
		}
		let share = 0;
		for (let h = 0; h < 16; h++)
			if (high & (1 << h)) share += SHARES[h * 512 + (low & 255)] + SHARES[h * 512 + 256 + (low >> 8)];
		rate *= share;
	}
	return rate;
}

function unite(a: Fingerprint, b: Fingerprint): Fingerprint {
	return a.map((part, k) => ({ low: part.low | b[k].low, high: part.high | b[k].high }));
}

/**
 * The module's nibble tables: keywords spread over 16 buckets so that the expected share of proposed
 * positions stays small (greedily, least selective keywords first, each where it adds least; then
 * single keywords moved between buckets while that lowers the total).
 * Keywords holding "\n" never match (findKeywordLines resets at each newline), so they are left out.
 */
export function buildFingerprintTables(keywords: readonly string[]): Uint8Array {
	const prints = [...new Set(keywords.filter((keyword) => keyword.length > 0 && !keyword.includes("\n")))]
		.map(fingerprintOf)
		.map((print) => ({ print, rate: proposalRate([print]) }))
		.sort((a, b) => b.rate - a.rate);
	const members: Fingerprint[][] = Array.from({ length: BUCKETS }, () => []);
	const rates = members.map(() => 0);
	// Greedy: least selective first, each where it adds least.
	for (const { print } of prints) {
		let best = 0;
		let bestCost = Infinity;
		members.forEach((bucket, index) => {
			const cost = proposalRate(bucket, -1, print) - rates[index];
			if (cost < bestCost) {
				best = index;
				bestCost = cost;
			}
		});
		members[best].push(print);
		rates[best] = proposalRate(members[best]);
	}
	// Then single moves between buckets while they lower the total.
	for (let pass = 0; pass < MAX_IMPROVING_PASSES; pass++) {
		let moved = false;
		for (let from = 0; from < BUCKETS; from++) {
			for (let i = members[from].length - 1; i >= 0; i--) {
				const print = members[from][i];
				const rateWithout = proposalRate(members[from], i);
				let best = from;
				let bestGain = 1e-12;
				let bestRate = 0;
				for (let to = 0; to < BUCKETS; to++) {
					if (to === from) continue;
					const rateWith = proposalRate(members[to], -1, print);
					const gain = rates[from] + rates[to] - rateWithout - rateWith;
					if (gain > bestGain) {
						best = to;
						bestGain = gain;
						bestRate = rateWith;
					}
				}
				if (best === from) continue;
				members[from].splice(i, 1);
				rates[from] = rateWithout;
				members[best].push(print);
				rates[best] = bestRate;
				moved = true;
			}
		}
		if (!moved) break;
	}
	const empty: Fingerprint = Array.from({ length: FINGERPRINT_BYTES }, () => ({ low: 0, high: 0 }));
	const buckets = members.map((bucket) => ({ print: bucket.reduce(unite, empty), used: bucket.length > 0 }));
	const tables = new Uint8Array(TABLE_BYTES);
	buckets.forEach((bucket, index) => {
		if (!bucket.used) return;
		const group = index >> 3;
		const bit = 1 << (index & 7);
		bucket.print.forEach(({ low, high }, k) => {
			const at = group * 128 + k * 32;
			for (let n = 0; n < 16; n++) {
				if (low & (1 << n)) tables[at + n] |= bit;
				if (high & (1 << n)) tables[at + 16 + n] |= bit;
			}
		});
	});
	return tables;
}
