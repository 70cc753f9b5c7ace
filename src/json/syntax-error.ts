// A syntax error of the stored text worded as JSON.parse words it, with its line and column: the
// text before the error is decoded again (as Buffer#toString decodes it) through the chunk reader.

import { flattenControls, shortenText } from "../lines/text.js";
import type { ChunkReader } from "./chunk-reader.js";
import { formatJsonSyntaxError } from "./syntax-message.js";
import type { JsonSyntaxError } from "./token.js";

/** Bytes that hold at least 11 UTF-16 units of text after an error (4 bytes per character at most). */
const CONTEXT_BYTES = 64;
/** Texts of at most this many bytes may be short enough for V8 to quote whole. */
const SHORT_SOURCE_BYTES = 80;
/** V8's reason is cut to this length. */
const MAX_REASON_CHARS = 120;

/**
 * JSON.parse's message for the error, and where it is: the text before it is decoded again (as
 * Buffer#toString decodes it) to count UTF-16 units and lines.
 */
export async function describeSyntaxError(
	reader: ChunkReader,
	error: JsonSyntaxError,
	start: number,
	size: number,
): Promise<string> {
	const decoder = new TextDecoder("utf-8", { ignoreBOM: true });
	let position = 0;
	let line = 1;
	let lineStart = 0;
	let before = "";
	for (let at = start; at < error.offset;) {
		const length = Math.min(reader.buffer.length, error.offset - at);
		const bytesRead = await reader.source.read(reader.buffer.subarray(0, length), at);
		if (bytesRead === 0) break;
		at += bytesRead;
		const text = decoder.decode(reader.buffer.subarray(0, bytesRead), { stream: at < error.offset });
		for (let newline = text.indexOf("\n"); newline !== -1; newline = text.indexOf("\n", newline + 1)) {
			line++;
			lineStart = position + newline + 1;
		}
		position += text.length;
		before = (before + text).slice(-10);
	}
	const near = Buffer.alloc(Math.max(CONTEXT_BYTES, SHORT_SOURCE_BYTES));
	const bytesRead = await reader.source.read(
		near.subarray(0, Math.max(0, Math.min(CONTEXT_BYTES, size - error.offset))),
		error.offset,
	);
	const after = near.toString("utf8", 0, bytesRead).slice(0, 11);
	let source = "";
	if (size - start <= SHORT_SOURCE_BYTES) {
		const whole = await reader.source.read(near.subarray(0, size - start), start);
		source = near.toString("utf8", 0, whole);
	}
	const sourceLength = source === "" ? Number.POSITIVE_INFINITY : source.length;
	const message = formatJsonSyntaxError(error.kind, { position, sourceLength, source, before, after });
	// The message quotes the text around the error, newlines included: it stays one line.
	const reason = flattenControls(message);
	const where = message.includes(" at position ") ? ` (line ${line}, column ${position - lineStart + 1})` : "";
	return `${shortenText(reason, MAX_REASON_CHARS)}${where}`;
}
