// keepStart and keepEnd: at most `max` UTF-16 units from one end, never half a surrogate pair.

import assert from "node:assert/strict";
import { test } from "node:test";
import { keepEnd, keepStart } from "../../src/lines/text-cut.js";

test("keeps at most max units from the start or the end, an emoji whole or not at all", () => {
	assert.equal(keepStart("abcdef", 3), "abc");
	assert.equal(keepEnd("abcdef", 3), "def");
	assert.equal(keepStart("ab", 5), "ab");
	assert.equal(keepStart("a😀b", 2), "a");
	assert.equal(keepStart("a😀b", 3), "a😀");
	assert.equal(keepEnd("a😀b", 2), "b");
	assert.equal(keepEnd("a😀b", 3), "😀b");
	assert.equal(keepStart("abc", -1), "");
	assert.equal(keepEnd("abc", 0), "");
});
