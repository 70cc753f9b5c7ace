// The view of a stored entry, built again from its stored copy for overflow_query (no selector):
// the same first screen the model saw when the result was bounded. Invariant: the output's own line
// numbers and totals — a stored copy that left out the middle is scanned up to its marker line, the
// scan jumps over the left-out lines (taking the signal lines the first scan found there from the
// metadata), and goes on with the tail. Streams the stored text (opened by the caller: store.openText)
// through one reused buffer (a shared read buffer where one is free: keyword-filter.ts).

import type { OverflowConfig } from "../config/config.js";
import { describeCapNote } from "../store/gap.js";
import { acquireReadBuffers, releaseReadBuffers } from "../prefilter/keyword-filter.js";
import { LineScanner } from "../scan/scan.js";
import type { EntryGap, EntryMeta } from "../store/index.js";
import { READ_CHUNK_BYTES, type ByteSource } from "../io/source.js";
import { composeView } from "./view-build.js";

const NEWLINE = 0x0a;

/** The entry's view within `thresholdChars`, from its stored copy `source` (left open). */
export async function buildEntryView(
	meta: EntryMeta,
	source: ByteSource,
	config: OverflowConfig,
	thresholdChars: number,
): Promise<string> {
	const scanner = new LineScanner(config);
	const buffers = acquireReadBuffers(1, READ_CHUNK_BYTES);
	try {
		await scanStoredCopy(source, buffers[0], scanner, meta.gap);
	} finally {
		releaseReadBuffers(buffers);
	}
	const scan = scanner.end();
	return await composeView(
		{ ...scan, totalLines: meta.totalLines, totalBytes: meta.totalBytes },
		source,
		{
			...config,
			thresholdChars,
			id: meta.id,
			toolName: meta.toolName,
			truncatedNote: meta.gap ? describeCapNote(meta.gap, config.maxEntryBytes) : undefined,
			sourceNote: meta.sourceNote,
			statusLine: meta.status ? `[${meta.toolName}: ${meta.status}]` : undefined,
		},
		(raw) => scanner.countShape(raw),
	);
}

/** Pushes the stored copy into the scanner, jumping over the marker line of a left-out middle. */
async function scanStoredCopy(
	source: ByteSource,
	buffer: Buffer,
	scanner: LineScanner,
	gap: EntryGap | undefined,
): Promise<void> {
	// Stored lines before the marker line still to pass; -1 once the marker has been skipped.
	let linesBeforeMarker = gap === undefined ? -1 : gap.markerLine - 1;
	let markerStart = -1;
	for (let position = 0; ;) {
		const bytesRead = await source.read(buffer, position);
		if (bytesRead === 0) break;
		let from = 0;
		while (linesBeforeMarker > 0 && from < bytesRead) {
			const newline = buffer.indexOf(NEWLINE, from);
			if (newline < 0 || newline >= bytesRead) break;
			from = newline + 1;
			linesBeforeMarker--;
		}
		if (linesBeforeMarker !== 0 || gap === undefined) {
			scanner.push(buffer.subarray(0, bytesRead));
		} else {
			if (markerStart < 0) {
				scanner.push(buffer.subarray(0, from));
				markerStart = position + from;
			}
			const markerEnd = buffer.indexOf(NEWLINE, from);
			if (markerEnd >= 0 && markerEnd < bytesRead) {
				const signals = gap.signals.map((signal) => ({
					lineNumber: signal.line,
					text: signal.text,
					count: signal.count,
				}));
				scanner.skipTo(gap.firstTailLine, gap.leftOutBytes, signals, position + markerEnd + 1 - markerStart);
				linesBeforeMarker = -1;
				scanner.push(buffer.subarray(markerEnd + 1, bytesRead));
			}
		}
		position += bytesRead;
	}
}
