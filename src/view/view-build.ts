// A view built from bytes: scan them, read the lines around the chosen signal lines back from the
// same bytes (hunks.ts), compose (view.ts). For a file (the recall measurements, the overview of a
// stored entry) and for a text held in memory (when nothing could be stored). Files are streamed
// through two reused buffers; memory stays bounded whatever their size.

import { open } from "node:fs/promises";
import { readViewExtras, type ViewExtras } from "./hunks.js";
import { keepCharsFor } from "../lines/render.js";
import { LineScanner, type ScanResult } from "../scan/scan.js";
import { type ByteSource, bufferSource, pumpCapped, readThroughFd } from "../io/source.js";
import { buildView, type ViewOptions } from "./view.js";

export interface ViewResult {
	/** What the model sees. */
	text: string;
	totalLines: number;
	totalBytes: number;
}

/**
 * What a view of a finished scan reads back from `source` (the bytes the scan was pushed, whose
 * offsets it recorded): the lines around its signal lines, its rare lines, a JSON outline. It
 * depends on nothing but the scan and these options, so it can be started early, beside other work.
 */
export function readComposeExtras(
	scan: ScanResult,
	source: ByteSource,
	options: Pick<ViewOptions, "maxSignalLines" | "maxLineChars">,
	countShape?: (raw: string) => number,
): Promise<ViewExtras> {
	return readViewExtras(
		source,
		scan,
		scan.signals.slice(0, options.maxSignalLines),
		keepCharsFor(options.maxLineChars),
		countShape,
	);
}

/**
 * The view of a finished scan of `source`; `countShape` is the scanner's, which tells rare lines
 * from routine ones. `extras`: what readComposeExtras started for the same scan, source and options.
 */
export async function composeView(
	scan: ScanResult,
	source: ByteSource,
	options: ViewOptions,
	countShape?: (raw: string) => number,
	extras?: Promise<ViewExtras>,
): Promise<string> {
	return buildView(scan, options, await (extras ?? readComposeExtras(scan, source, options, countShape)));
}

/** Scans a byte source as a stream (the next chunk read while one is scanned) and builds its view. */
export async function buildViewFromSource(source: ByteSource, options: ViewOptions): Promise<ViewResult> {
	const scanner = new LineScanner(options);
	// The bound stage's pump without a store: two reused buffers, the next read in flight during each scan.
	await pumpCapped(source, Number.POSITIVE_INFINITY, {
		scan: (chunk) => scanner.push(chunk),
		store: () => {},
		newlinesSeen: () => scanner.newlines,
	});
	const scan = scanner.end();
	return {
		text: await composeView(scan, source, options, (raw) => scanner.countShape(raw)),
		totalLines: scan.totalLines,
		totalBytes: scan.totalBytes,
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
