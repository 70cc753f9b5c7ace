// Every string pi-overflow shows the model about itself, in one place: the id tag that opens a view
// and every answer (`[pi-overflow id=<id>]`), its notes (`[pi-overflow: …]`) and notices
// (`[pi-overflow] …`), the footers that say how to read on, the recovery marker under a result an
// earlier layer cut, and how tool texts name the tag. Pure. Invariant: each of our own lines starts
// with one of OWN_LINE_PREFIXES, so isOwnLine tells them from the output's lines.

/** The tool that reads a stored output back. */
export const QUERY_TOOL_NAME = "overflow_query";

const TAG = "pi-overflow";

/** How tool descriptions and errors name the tag the model finds an id in. */
export const ID_TAG_EXAMPLE = `[${TAG} id=…]`;
export const ID_TAG_PLACEHOLDER = `[${TAG} id=<id>]`;

/** Our lines start with one of these (headers, notes, notices, footers); an output's lines are told apart by it. */
export const OWN_LINE_PREFIXES: readonly string[] = [`[${TAG}`, `[use ${QUERY_TOOL_NAME}`];

/** `[pi-overflow id=<id>]`: opens a view, a masked stub and every overflow_query answer. */
export function formatIdTag(id: string): string {
	return `[${TAG} id=${id}]`;
}

/** A note inside a view, an answer or a stored copy: `[pi-overflow: <text>]`. */
export function formatNote(text: string): string {
	return `[${TAG}: ${text}]`;
}

/** A notice that stands where a view could not be built or stored: `[pi-overflow] <text>`. */
export function formatNotice(text: string): string {
	return `[${TAG}] ${text}`;
}

/** Appended when an earlier layer cut a result that still fits. */
export function formatRecoveryMarker(id: string, totalLines: number, totalBytes: number): string {
	return `[${TAG} id=${id} lines=${totalLines} bytes=${totalBytes}] full output stored; ${QUERY_TOOL_NAME} can search or read it`;
}

/** Under a bounded result whose row shows only its text (every tool's but bash's): where the full output is. */
export function formatFullOutputNote(path: string): string {
	return formatNote(`full output: ${path}`);
}

/** The view's last line: how to read the stored output. */
export function formatQueryFooter(id: string): string {
	return `[use ${QUERY_TOOL_NAME} with id=${id}: search (regex), lines {start,end}, jsonPath]`;
}

/** A masked stub's last line: the view itself is not shown again. */
export function formatMaskedFooter(id: string): string {
	return `[use ${QUERY_TOOL_NAME} with id=${id} to read it back: no selector shows the view again; search (regex), lines {start,end}, jsonPath]`;
}

/** The view's last line when nothing could be stored. */
export const NOTHING_STORED_NOTE = formatNote(
	`nothing was stored, so ${QUERY_TOOL_NAME} cannot read more of this output`,
);

/** A line of ours (header, note, notice, footer), not one of the output's. */
export function isOwnLine(raw: string): boolean {
	return OWN_LINE_PREFIXES.some((prefix) => raw.startsWith(prefix));
}
