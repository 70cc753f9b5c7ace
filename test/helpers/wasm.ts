// Builds src/prefilter/wasm/keyword-filter.wasm and its relaxed-SIMD twin from the one .wat source with wabt
// (a dev dependency): the tests compare the results with the committed files, and `npm run
// build:wasm` writes them. The twin is the same module with each `i8x16.swizzle` as
// `i8x16.relaxed_swizzle` (every index it gets is a nibble, 0–15, where both give the same lanes).
// The same source always gives the same bytes (no debug names, canonical LEBs).

import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import wabt from "wabt";

export const KEYWORD_FILTER_WAT = fileURLToPath(
	new URL("../../src/prefilter/wasm/keyword-filter.wat", import.meta.url),
);
export const KEYWORD_FILTER_WASM = fileURLToPath(
	new URL("../../src/prefilter/wasm/keyword-filter.wasm", import.meta.url),
);
export const KEYWORD_FILTER_RELAXED_WASM = fileURLToPath(
	new URL("../../src/prefilter/wasm/keyword-filter-relaxed.wasm", import.meta.url),
);

/** The module compiled from the committed .wat source; `relaxed`: its relaxed-SIMD twin. */
export async function compileKeywordFilter(relaxed = false): Promise<Uint8Array> {
	const toolkit = await wabt();
	const source = readFileSync(KEYWORD_FILTER_WAT, "utf8");
	const text = relaxed ? source.replaceAll("i8x16.swizzle", "i8x16.relaxed_swizzle") : source;
	const module = toolkit.parseWat("keyword-filter.wat", text, { simd: true, relaxed_simd: relaxed });
	try {
		module.validate();
		return module.toBinary({ log: false, canonicalize_lebs: true, write_debug_names: false }).buffer;
	} finally {
		module.destroy();
	}
}

if (process.argv.includes("--write")) {
	for (const [path, relaxed] of [
		[KEYWORD_FILTER_WASM, false],
		[KEYWORD_FILTER_RELAXED_WASM, true],
	] as const) {
		const bytes = await compileKeywordFilter(relaxed);
		writeFileSync(path, bytes);
		process.stdout.write(`wrote ${path} (${bytes.length} bytes)\n`);
	}
}
