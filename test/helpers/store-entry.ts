// Writes a complete store entry for tests: the text through an EntryWriter (in 4 MiB pieces), then
// metadata whose totals are the writer's own counts, as the bound stage commits them.

import type { EntryMeta, OverflowStore } from "../../src/store/index.js";

export async function writeStoreEntry(
	store: OverflowStore,
	id: string,
	text: string | Buffer,
	toolName = "bash",
): Promise<EntryMeta> {
	const writer = await store.beginEntry(id);
	const bytes = typeof text === "string" ? Buffer.from(text, "utf8") : text;
	for (let offset = 0; offset < bytes.length; offset += 4 * 1024 * 1024)
		await writer.write(bytes.subarray(offset, offset + 4 * 1024 * 1024));
	const meta: EntryMeta = {
		id,
		sessionId: "session-1",
		toolCallId: `call-${id}`,
		toolName,
		createdAt: "2025-01-01T00:00:00.000Z",
		totalLines: writer.linesWritten,
		totalBytes: writer.bytesWritten,
		storedLines: writer.linesWritten,
		storedBytes: writer.bytesWritten,
		truncated: false,
		source: "current",
	};
	await writer.commit(meta);
	return meta;
}
