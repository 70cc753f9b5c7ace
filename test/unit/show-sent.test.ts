// findSentText: what `/overflow show` prints for a result of this session is the text the session
// keeps for it (a tool result's text parts, or a `!command` record's output), found by its id.

import assert from "node:assert/strict";
import { test } from "node:test";
import { USER_BASH_ENTRY_TYPE } from "../../src/context/user-bash.js";
import { findSentText } from "../../src/surface/overflow-command.js";

const toolResult = (id: string, content: unknown[]) => ({
	type: "message",
	message: { role: "toolResult", toolName: "bash", content, details: { overflow: { id } } },
});

test("findSentText returns a tool result's text parts joined, a `!command` record's output, or undefined", () => {
	const entries = [
		{ type: "message", message: { role: "user", content: "aaaaaaaaaaaa" } },
		toolResult("aaaaaaaaaaaa", [
			{ type: "text", text: "tail\n[pi-overflow id=aaaaaaaaaaaa lines=3 bytes=9] full output stored" },
			{ type: "image", data: "", mimeType: "image/png" },
			{ type: "text", text: "second part" },
		]),
		{
			type: "custom",
			customType: USER_BASH_ENTRY_TYPE,
			data: { key: "k", output: "the !command text", id: "bbbbbbbbbbbb" },
		},
		{ type: "custom", customType: "someone-else", data: { id: "cccccccccccc", output: "not ours" } },
	];
	assert.equal(
		findSentText(entries, "aaaaaaaaaaaa"),
		"tail\n[pi-overflow id=aaaaaaaaaaaa lines=3 bytes=9] full output stored\nsecond part",
	);
	assert.equal(findSentText(entries, "bbbbbbbbbbbb"), "the !command text");
	assert.equal(findSentText(entries, "cccccccccccc"), undefined);
	assert.equal(findSentText(entries, "dddddddddddd"), undefined);
});
