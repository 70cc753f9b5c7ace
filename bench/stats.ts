// Shared by the benchmarks: the middle value of repeated measurements.

/** The median of `values` (the upper middle one for an even count; 0 for none). */
export function median(values: readonly number[]): number {
	return values.length === 0 ? 0 : [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
}
