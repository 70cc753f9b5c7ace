// The tables the benches print: columns padded to their widest cell. Not a test.

/**
 * The header and rows as lines, two spaces between columns: text columns (`leftAligned`, by default
 * the first) padded on the right, figures on the left.
 */
export function formatTable(
	header: readonly string[],
	rows: readonly (readonly string[])[],
	leftAligned: (column: number) => boolean = (column) => column === 0,
): string[] {
	const widths = header.map((title, column) => Math.max(title.length, ...rows.map((cells) => cells[column].length)));
	const format = (cells: readonly string[]): string =>
		cells
			.map((cell, column) => (leftAligned(column) ? cell.padEnd(widths[column]) : cell.padStart(widths[column])))
			.join("  ");
	return [format(header), ...rows.map(format)];
}
