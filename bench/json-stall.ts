// The longest event-loop stall and the total time of one JSON tool result through the real Pi runtime,
// with pi-overflow and without it (issue 22, item 1): minified documents of 2 and 8 MB, nested arrays
// 400 000 and 3 million deep. A measurement, not a test: node --import tsx bench/json-stall.ts [label…]

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { fauxAssistantMessage, fauxToolCall } from "@mariozechner/pi-ai";
import { CAPTURE_PATH, INDEX_PATH, REPO_ROOT, resultText, runPi } from "../test/helpers/pi.js";

const JSON_TOOLS_PATH = join(REPO_ROOT, "test", "fixtures", "ext", "json-tools.ts");

const ROWS: Array<{ label: string; params: Record<string, unknown> }> = [
	{ label: "minified 2 MB", params: { records: 12_000, minified: true } },
	{ label: "minified 8 MB", params: { records: 46_000, minified: true } },
	{ label: "nested 800 KB", params: { levels: 400_000 } },
	{ label: "nested 6 MB", params: { levels: 3_000_000 } },
];

async function measure(params: Record<string, unknown>, withOverflow: boolean) {
	const agentDir = mkdtempSync(join(tmpdir(), "json-stall-"));
	const histogram = monitorEventLoopDelay({ resolution: 10 });
	try {
		const started = performance.now();
		histogram.enable();
		const run = await runPi({
			agentDir,
			cwd: agentDir,
			extensionPaths: withOverflow ? [CAPTURE_PATH, INDEX_PATH, JSON_TOOLS_PATH] : [JSON_TOOLS_PATH],
			responses: [
				fauxAssistantMessage([fauxToolCall("json_text", params)], { stopReason: "toolUse" }),
				fauxAssistantMessage("done"),
			],
		});
		// A stall at the very end shows only once the loop turns again.
		await new Promise((resolve) => setTimeout(resolve, 50));
		histogram.disable();
		const total = performance.now() - started;
		const view = resultText(run.toolResults[0]!);
		const outline = /\n {2}json: ([^\n;]*)/.exec(view)?.[1] ?? "-";
		return { stall: histogram.max / 1e6, total, chars: view.length, outline };
	} finally {
		rmSync(agentDir, { recursive: true, force: true });
	}
}

const only = process.argv.slice(2);
console.log("row              | Pi alone: stall, total | pi-overflow: stall, total | view chars | outline");
for (const row of ROWS) {
	if (only.length > 0 && !only.some((label) => row.label.includes(label))) continue;
	const alone = await measure(row.params, false);
	const overflow = await measure(row.params, true);
	const ms = (value: number) => `${Math.round(value)} ms`.padStart(8);
	console.log(
		`${row.label.padEnd(16)} | ${ms(alone.stall)}, ${ms(alone.total)}     | ${ms(overflow.stall)}, ${ms(overflow.total)}        | ${String(overflow.chars).padStart(10)} | ${overflow.outline.slice(0, 60)}`,
	);
}
