// Tests for src/lines/protocol.ts: the strings pi-overflow shows the model about itself — the id tag,
// notes, notices, footers and the recovery marker — and isOwnLine, which tells them from an
// output's own lines (masking relies on it).

import assert from "node:assert/strict";
import { test } from "node:test";
import {
	formatIdTag,
	formatMaskedFooter,
	formatNote,
	formatNotice,
	formatQueryFooter,
	formatRecoveryMarker,
	ID_TAG_EXAMPLE,
	isOwnLine,
	NOTHING_STORED_NOTE,
	QUERY_TOOL_NAME,
} from "../../src/lines/protocol.js";

const ID = "0123456789ab";

test("every line of ours is told apart from the output's lines", () => {
	const ours = [
		formatIdTag(ID),
		formatNote("something"),
		formatNotice("something"),
		formatQueryFooter(ID),
		formatMaskedFooter(ID),
		formatRecoveryMarker(ID, 10, 100),
		NOTHING_STORED_NOTE,
	];
	for (const line of ours) assert.ok(isOwnLine(line), line);
	for (const line of ["error: build failed", "  12: [pi-overflow id=x] quoted in the output", "[use this flag]", ""]) {
		assert.ok(!isOwnLine(line), line);
	}
});

test("the id tag reads as the tool's description says, and every footer names the tool and the id", () => {
	assert.equal(formatIdTag(ID), `[pi-overflow id=${ID}]`);
	assert.equal(ID_TAG_EXAMPLE, "[pi-overflow id=…]");
	assert.equal(QUERY_TOOL_NAME, "overflow_query");
	for (const footer of [formatQueryFooter(ID), formatMaskedFooter(ID)]) {
		assert.match(
			footer,
			new RegExp(
				`^\\[use ${QUERY_TOOL_NAME} with id=${ID}\\b.*search \\(regex\\), lines \\{start,end\\}, jsonPath\\]$`,
			),
		);
	}
	assert.equal(
		formatRecoveryMarker(ID, 3, 42),
		`[pi-overflow id=${ID} lines=3 bytes=42] full output stored; overflow_query can search or read it`,
	);
	assert.equal(formatNote("x"), "[pi-overflow: x]");
	assert.equal(formatNotice("x"), "[pi-overflow] x");
});
