// Outputs with a benchmark table and a failing case below it, for the subject-line tests (unit and
// end to end): the row that names the failing case is the subject line of its signal.

/** A benchmark table row: one shape for every case (the names differ only in their number). */
export function tableRow(n: number): string {
	return `test_bench_case_${String(n).padStart(3, "0")} (NOW)   ${(1000 + ((n * 37) % 500)).toFixed(4)} (${(1 + (n % 9) / 10).toFixed(2)})   ${(30 + (n % 11)).toFixed(4)}   ${200 + n}`;
}

/** `count` routine lines, numbered from `from`. */
export function routine(count: number, from: number): string[] {
	return Array.from(
		{ length: count },
		(_, i) => `worker ${(from + i) % 4}: batch ${from + i} posted, ${1000 + i} cents`,
	);
}

/**
 * An output with a benchmark table (100 rows of one shape) at line `tableAt`, the signal that names
 * case `failing` `gap` lines below its row, and routine lines before and after (`after` of them).
 */
export function benchmarkOutput(
	tableAt: number,
	failing: number,
	gap: number,
	after: number,
): { lines: string[]; row: number; signal: number } {
	const lines = routine(tableAt - 1, 0);
	for (let n = 0; n < 100; n++) lines.push(tableRow(n));
	const row = tableAt + failing;
	// The signal sits `gap` lines below the failing row: the rows after it are the noise in between.
	while (lines.length < row + gap - 1) lines.push(lines.length < tableAt + 99 ? "" : "-".repeat(60));
	lines.splice(
		row + gap - 1,
		0,
		`FAILED test_bench_case_${String(failing).padStart(3, "0")} - Field 'mean' has failed PercentageRegressionCheck: 16498.7 > 400.0`,
	);
	lines.push(...routine(after, 5000));
	return { lines, row, signal: row + gap };
}
