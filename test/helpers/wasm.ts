// Builds src/wasm/keyword-filter.wasm from its .wat source with wabt (a dev dependency): the test
// compares the result with the committed file, and `npm run build:wasm` writes it. The same source
// always gives the same bytes (no debug names, canonical LEBs).

import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import wabt from "wabt";

export const KEYWORD_FILTER_WAT = fileURLToPath(new URL("../../src/wasm/keyword-filter.wat", import.meta.url));
export const KEYWORD_FILTER_WASM = fileURLToPath(new URL("../../src/wasm/keyword-filter.wasm", import.meta.url));

/** The module compiled from the committed .wat source. */
export async function compileKeywordFilter(): Promise<Uint8Array> {
	const toolkit = await wabt();
	const module = toolkit.parseWat("keyword-filter.wat", readFileSync(KEYWORD_FILTER_WAT, "utf8"), { simd: true });
	try {
		module.validate();
		return module.toBinary({ log: false, canonicalize_lebs: true, write_debug_names: false }).buffer;
	} finally {
		module.destroy();
	}
}

if (process.argv.includes("--write")) {
	const bytes = await compileKeywordFilter();
	writeFileSync(KEYWORD_FILTER_WASM, bytes);
	process.stdout.write(`wrote ${KEYWORD_FILTER_WASM} (${bytes.length} bytes)\n`);
}
