// The one scan → view pipeline. A scanned source (a finished scan, the scanner's shape counts and the
// bytes the scan was pushed) becomes a view here and nowhere else: the lines around its signal lines
// are read back from the same bytes (hunks.ts), then the view is built (view.ts). What the view says
// about its result comes from viewContextOf(meta), when the view is first built (the bound stage) and
// when it is built again from the stored copy (overflow_query, `/overflow show`), so both read alike.
// Sources are streamed through reused buffers: memory stays bounded whatever their size.

import { open } from "node:fs/promises";
import type { OverflowConfig } from "../config/config.js";
import {
	type ByteSource,
	bufferSource,
	pumpCapped,
	READ_CHUNK_BYTES,
	readRange,
	readThroughFd,
	recordsSource,
	SlicedScan,
} from "../io/source.js";
import { frameSamples, learnLineReading } from "../lines/frame.js";
import { keepCharsFor } from "../lines/render.js";
import { keepStart } from "../lines/text.js";
import { acquireReadBuffers, releaseReadBuffers } from "../prefilter/keyword-filter.js";
import { TimeSlice } from "../io/time-slice.js";
import { LineScanner, type ScanOptions, type ScanResult } from "../scan/scan.js";
import { describeCapNote } from "../store/gap.js";
import type { EntryGap, EntryMeta, RunRecord } from "../store/index.js";
import { readViewExtras, type ViewExtras } from "./hunks.js";
import { buildView, type ViewContext, type ViewOptions } from "./view.js";

const NEWLINE = 0x0a;
/** Longest source note carried into a view. */
const MAX_NOTE_CHARS = 160;

/** A finished scan of `source`, with the scanner's shape counts (they tell rare lines from routine ones). */
export interface ScannedSource {
	scan: ScanResult;
	/** The bytes the scan was pushed (its offsets point into them); left open. */
	source: ByteSource;
	countShape: (raw: string) => number;
}

/** What a stored entry's metadata says that its view shows; `id` is absent when nothing could be stored. */
export interface ViewMeta
	extends Partial<Pick<EntryMeta, "id">>, Pick<EntryMeta, "toolName" | "sourceNote" | "status"> {
	gap?: Pick<EntryGap, "markerLine" | "firstTailLine">;
	/** A re-run's record: what its view says of the last run of its command. */
	run?: Pick<RunRecord, "rerunOf">;
}

export interface ViewResult {
	/** What the model sees. */
	text: string;
	totalLines: number;
	totalBytes: number;
}

/** The view's lines about its result (id, tool, left-out middle, source note, Pi's verdict), from the entry's metadata. */
export function viewContextOf(meta: ViewMeta, config: Pick<OverflowConfig, "maxEntryBytes">): ViewContext {
	return {
		...(meta.id !== undefined ? { id: meta.id } : {}),
		toolName: meta.toolName,
		...(meta.gap ? { truncatedNote: describeCapNote(meta.gap, config.maxEntryBytes) } : {}),
		...(meta.sourceNote ? { sourceNote: keepStart(meta.sourceNote, MAX_NOTE_CHARS) } : {}),
		// Pi's verdict on a failed command is not part of the output, so the view carries it on its own line.
		...(meta.status ? { statusLine: `[${meta.toolName}: ${meta.status}]` } : {}),
		...(meta.run?.rerunOf ? { rerunLines: meta.run.rerunOf.lines } : {}),
	};
}

/**
 * The scanned source of a scanner that has been pushed all of `source`. With `readsRecords`, an output
 * with no LF and at least one CR is its CR-separated records (scan.ts): its source is then read
 * through recordsSource, so the lines read back are the records the scan numbered.
 */
export async function endScan(scanner: LineScanner, source: ByteSource, readsRecords = true): Promise<ScannedSource> {
	const records = readsRecords ? scanner.records() : undefined;
	// The output's end, shaped a block at a time: Pi's event loop gets turns between them.
	const slice = new TimeSlice();
	while ((records ?? scanner).shapeNextWaiting()) await slice.turn();
	if (records !== undefined)
		return {
			scan: { ...records.end(), separator: "cr" },
			source: recordsSource(source),
			countShape: (raw) => records.countShape(raw),
		};
	return { scan: scanner.end(), source, countShape: (raw) => scanner.countShape(raw) };
}

/**
 * What the view of a scanned source reads back from it: the lines around its signal lines, its rare
 * lines, a JSON outline. It depends on nothing but the scan and these options, so it can be started
 * early, beside other work (the bound stage starts it while the stored copy is committed).
 */
export function readComposeExtras(
	scanned: ScannedSource,
	options: Pick<ViewOptions, "maxSignalLines" | "maxLineChars">,
): Promise<ViewExtras> {
	const { scan, source, countShape } = scanned;
	return readViewExtras(
		source,
		scan,
		// Another instance of a collapsed shape is shown alone: its first line's block stands for its own.
		// A line printed again has a block of its own (a retry's last attempt: collector.ts repeatOf).
		scan.signals.slice(0, options.maxSignalLines).filter((item) => !item.instance || item.repeatOf !== undefined),
		keepCharsFor(options.maxLineChars),
		countShape,
	);
}

/** The view of a scanned source. `extras`: what readComposeExtras started for the same source and options. */
export async function compose(
	scanned: ScannedSource,
	options: ViewOptions,
	extras?: Promise<ViewExtras>,
): Promise<string> {
	return buildView(scanned.scan, options, await (extras ?? readComposeExtras(scanned, options)));
}

/**
 * `options` with the frame the lines of `source` are written in and the level its records all carry
 * (lines/frame.ts learnLineReading), learned from its samples (frameSamples: read at once) before
 * the scan starts: every line, the first ones too, is read in them.
 */
export async function withLineReading(source: ByteSource, options: ScanOptions): Promise<ScanOptions> {
	const samples = await Promise.all(frameSamples(source.size).map(({ from, to }) => readRange(source, from, to)));
	return {
		...options,
		...learnLineReading(
			samples.map((sample) => sample.toString("utf8")),
			source.size,
		),
	};
}

/** Scans a byte source as a stream: two reused buffers, the next chunk read while one is scanned. */
export async function scanSource(source: ByteSource, options: ScanOptions): Promise<ScannedSource> {
	const scanner = new LineScanner(await withLineReading(source, options));
	// The bound stage's pump without a store.
	await pumpCapped(source, Number.POSITIVE_INFINITY, {
		scan: (chunk) => scanner.push(chunk),
		store: () => {},
		newlinesSeen: () => scanner.newlines,
	});
	return endScan(scanner, source);
}

/**
 * Scans a stored copy (opened by the caller: store.openText) with the output's own line numbers and
 * totals: a copy that left out the middle is scanned up to its marker line, the scan jumps over the
 * left-out lines (taking the signal lines the first scan found there from the metadata) and goes on
 * with the tail. One reused buffer (a shared read buffer where one is free: keyword-filter.ts).
 */
export async function scanStoredCopy(
	meta: Pick<EntryMeta, "gap" | "totalLines" | "totalBytes" | "separator">,
	stored: ByteSource,
	options: ScanOptions,
): Promise<ScannedSource> {
	// Records only as the metadata says: an entry stored before separators were recorded reads as it did.
	const source = meta.separator === "cr" ? recordsSource(stored) : stored;
	// The frame of the lines as first scanned (a CR-separated output's were none: its sample has no LF).
	const scanner = new LineScanner(await withLineReading(stored, options), false);
	const buffers = acquireReadBuffers(1, READ_CHUNK_BYTES);
	try {
		await pushStoredCopy(source, buffers[0], scanner, meta.gap);
	} finally {
		releaseReadBuffers(buffers);
	}
	const scanned = await endScan(scanner, source);
	const scan = { ...scanned.scan, totalLines: meta.totalLines, totalBytes: meta.totalBytes };
	return { ...scanned, scan: meta.separator === "cr" ? { ...scan, separator: "cr" } : scan };
}

/** Builds the view of a byte source (bounded memory). */
export async function buildViewFromSource(source: ByteSource, options: ViewOptions): Promise<ViewResult> {
	const scanned = await scanSource(source, options);
	return {
		text: await compose(scanned, options),
		totalLines: scanned.scan.totalLines,
		totalBytes: scanned.scan.totalBytes,
	};
}

/** Builds the view of a file (bounded memory). */
export async function buildViewFromFile(path: string, options: ViewOptions): Promise<ViewResult> {
	const handle = await open(path, "r");
	let source: ByteSource | undefined;
	try {
		source = readThroughFd(handle, (await handle.stat()).size);
		return await buildViewFromSource(source, options);
	} finally {
		await (source ?? handle).close();
	}
}

/** Builds the view of a text held in memory. */
export async function buildViewFromText(text: string, options: ViewOptions): Promise<ViewResult> {
	return buildViewFromSource(bufferSource(Buffer.from(text, "utf8")), options);
}

/**
 * A stored entry's view within `thresholdChars`, built again from its stored copy `source` (left
 * open): the same view the model was sent when the result was bounded (with that budget).
 */
export async function buildEntryView(
	meta: EntryMeta,
	source: ByteSource,
	config: OverflowConfig,
	thresholdChars: number,
): Promise<string> {
	const scanned = await scanStoredCopy(meta, source, config);
	return await compose(scanned, { ...config, ...viewContextOf(meta, config), thresholdChars });
}

/** Pushes the stored copy into the scanner, jumping over the marker line of a left-out middle. */
async function pushStoredCopy(
	source: ByteSource,
	buffer: Buffer,
	scanner: LineScanner,
	gap: EntryGap | undefined,
): Promise<void> {
	// Stored lines before the marker line still to pass; -1 once the marker has been skipped.
	let linesBeforeMarker = gap === undefined ? -1 : gap.markerLine - 1;
	let markerStart = -1;
	// Sliced: the stored copy of a huge output is scanned again for `/overflow show` while Pi runs.
	const sliced = new SlicedScan((chunk) => scanner.push(chunk));
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
			await sliced.push(buffer.subarray(0, bytesRead));
		} else {
			if (markerStart < 0) {
				await sliced.push(buffer.subarray(0, from));
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
				await sliced.push(buffer.subarray(markerEnd + 1, bytesRead));
			}
		}
		position += bytesRead;
	}
}
