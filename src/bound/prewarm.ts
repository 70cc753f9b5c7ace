// The warm-up after session_start: what the first large result would otherwise compile on its path
// (the WebAssembly module, the keyword finder, the signal regexes) and the scan's and the view's hot
// paths run until V8 optimizes them. It sits above the scan and the view it warms, so neither imports
// it. Background work in steps (setImmediate between them); never rejects.

import { createDefaultConfig } from "../config/config.js";
import {
	acquireReadBuffers,
	compileDefaultModule,
	countNewlines,
	releaseReadBuffers,
} from "../prefilter/keyword-filter.js";
import { scanBytes, scanText } from "../scan/scan.js";
import { prepareDefaultSignalFinder, SIGNAL_WINDOW_CHARS } from "../signals/finder.js";
import { defaultSignalPrefilterKeywords } from "../signals/pattern.js";
import { buildViewFromText } from "../view/compose.js";
import { JSON_OUTLINE_LEVELS, readJsonFindings } from "../view/json-outline.js";
import { bufferSource } from "../io/source.js";

/**
 * Lines that take every path of a scan: ASCII, Latin-1 and CJK text (V8 compiles a regex for one-
 * and two-byte strings apart), signal lines, an ANSI escape, a line longer than a window.
 */
const PREWARM_LINES = [
	"  CC [M]  drivers/gpu/drm/module_1.o",
	"src/net/socket.c:88:12: error: 'struct sock' has no member named 'sk_flags'",
	"  ✓ übersetzt Zeichenkette 7 — 日本語のテスト 3",
	"FAIL src/parser.test.ts > parses nested arrays (12 ms)",
	"\x1b[31merror\x1b[0m: café failed",
	"thread 'main' panicked at 'index out of bounds', src/main.rs:14:5",
	"x".repeat(SIGNAL_WINDOW_CHARS + 10),
];

/** Lines of the larger prewarm text (PREWARM_STEPS scans of it): enough for V8 to optimize the scan's loops. */
const PREWARM_TEXT_LINES = 4000;
const PREWARM_STEPS = 4;
/** Views built of it after those scans. */
const PREWARM_VIEW_STEPS = 1;

/**
 * A log-like text of PREWARM_TEXT_LINES lines (numbers vary, every tenth line one of PREWARM_LINES):
 * what makes V8 optimize the scan's hot paths (the block scan, the shape and keyword passes, the
 * candidate tests and the signal collector) and tier up the WebAssembly functions.
 */
function buildPrewarmText(): string {
	const lines: string[] = [];
	for (let i = 0; i < PREWARM_TEXT_LINES; i++) {
		if (i % 3 !== 2) {
			lines.push(
				`[${String(i).padStart(8, "0")}] INFO worker-${i % 8}: processed batch ${i} (${(i * 37) % 1000} items)`,
			);
		} else if (i % 9 === 2) {
			lines.push(PREWARM_LINES[((i / 9) % (PREWARM_LINES.length - 1)) | 0]);
		} else {
			// Signal lines that differ in more than digits, as a real output's do: new shapes, new texts.
			const name = PREWARM_NAMES[i % PREWARM_NAMES.length] + PREWARM_NAMES[(i >> 3) % PREWARM_NAMES.length];
			lines.push(
				i % 2 === 0
					? `src/${name}.ts:${i}:7 - error TS2345: '${name}' is not assignable`
					: `FAILED tests/test_${name}.py::test_${name}_${i % 13} - AssertionError: ${i} != ${i + 1}`,
			);
		}
	}
	return `${lines.join("\n")}\n`;
}

/** Runs of the JSON outline over the prewarm's JSON (a minified array of records, then a deep nest). */
const PREWARM_JSON_STEPS = 2;

/**
 * JSON that takes the outline's paths: records with a problem member among them (minified, one line),
 * and arrays nested past JSON_OUTLINE_LEVELS (the lexer's loops for levels it does not report).
 */
function buildPrewarmJson(): Buffer[] {
	const records = Array.from({ length: 2000 }, (_, i) =>
		JSON.stringify({ id: i, name: `item-${i}`, ok: i % 97 !== 5, tags: ["a", "b"], owner: { login: `u${i % 7}` } }),
	);
	const levels = 2 * JSON_OUTLINE_LEVELS;
	return [
		Buffer.from(`{"kind":"records","items":[${records.join(",")}],"summary":{"errors":1}}`),
		Buffer.from(`${"[".repeat(levels)}"bottom"${"]".repeat(levels)}`),
	];
}

/** Words the prewarm's signal lines are made of. */
const PREWARM_NAMES = [
	"parser",
	"lexer",
	"cache",
	"queue",
	"socket",
	"config",
	"router",
	"store",
	"index",
	"worker",
	"client",
];

/**
 * Compiles what the first large result would otherwise compile on its path: the WebAssembly
 * module (off the main thread), the keyword finder and the newline counter (its instances), and
 * the signal pattern's regexes (a scan of a few lines, twice, so V8 compiles them to machine
 * code); then scans a larger text a few times, so that V8 optimizes the scan's JavaScript and
 * WebAssembly hot paths, and builds its view twice (the hunks and the view's rows); a first result
 * of a few MB would otherwise spend much of its time in unoptimized code. Runs in steps between
 * other work; call it after session_start has returned.
 * Never rejects.
 */
export async function prewarmSignalSearch(signalRegex: RegExp): Promise<void> {
	const yieldToOthers = () => new Promise<void>((resolve) => setImmediate(resolve));
	try {
		await compileDefaultModule();
		await yieldToOthers();
		// The default pattern's prefilter keywords, derived from its parts, in a step of their own.
		defaultSignalPrefilterKeywords();
		await yieldToOthers();
		prepareDefaultSignalFinder();
		countNewlines(Buffer.from("\n"), 0, 1);
		const text = `${[...PREWARM_LINES, ...PREWARM_LINES].join("\n")}\n`;
		for (let run = 0; run < 2; run++) {
			await yieldToOthers();
			scanText(text, { headLines: 1, tailLines: 1, maxSignalLines: 8, maxLineChars: 200, signalRegex });
		}
		const largerText = buildPrewarmText();
		const larger = Buffer.from(largerText, "utf8");
		const options = { headLines: 60, tailLines: 80, maxSignalLines: 40, maxLineChars: 500, signalRegex };
		for (let run = 0; run < PREWARM_STEPS; run++) {
			await yieldToOthers();
			// Half the runs in a shared read buffer, as a pump's chunks are (the passes run in place there).
			const buffers = run % 2 === 0 ? acquireReadBuffers(1, larger.length) : [];
			try {
				if (buffers.length > 0) larger.copy(buffers[0]);
				scanBytes(buffers[0] ?? larger, options);
			} finally {
				releaseReadBuffers(buffers);
			}
		}
		// The view's own paths (hunks read back, context chosen, rows rendered), on the same text.
		for (let run = 0; run < PREWARM_VIEW_STEPS; run++) {
			await yieldToOthers();
			await buildViewFromText(largerText, {
				...createDefaultConfig(),
				signalRegex,
				id: "000000000000",
				toolName: "bash",
			});
		}
		// The JSON outline's lexer and reader, which a JSON result runs before its view.
		const jsonTexts = buildPrewarmJson();
		for (let run = 0; run < PREWARM_JSON_STEPS; run++) {
			for (const json of jsonTexts) {
				await yieldToOthers();
				await readJsonFindings(bufferSource(json));
			}
		}
	} catch {
		// Only a head start: a result compiles what is missing itself.
	}
}
