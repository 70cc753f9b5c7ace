// `npm run view-digest`: a digest of every view pi-overflow builds for every corpus output, to show
// that a change leaves them byte-identical (refactors) or to see which ones it moved. Three paths
// per output: the view built from the file (what `npm run recall` measures), the bound stage's view
// (what the model is sent: boundToolResult on a bash result over a fresh store), and the entry view
// built again from the stored copy (overflow_query with no selector, `/overflow show`). Prints one
// sha256 per set and path, then one over all; `--each` prints one per output. Not a test.

import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { boundToolResult } from "../src/bound/bound.js";
import { DEFAULT_CONFIG } from "../src/config/config.js";
import { createStash } from "../src/intake/stash.js";
import { OverflowStore } from "../src/store/index.js";
import { buildEntryView } from "../src/view/compose.js";
import { loadRealFixtures, type RealFixture } from "../test/fixtures/real/fixtures.js";
import { loadUnseenFixtures } from "../test/fixtures/unseen/fixtures.js";
import { loadLateFixtures } from "../test/fixtures/unseen-late/fixtures.js";
import { loadCiFixtures } from "../test/fixtures/ci/fixtures.js";
import { loadTune2Fixtures } from "../test/fixtures/unseen-tune2/fixtures.js";
import { loadTune3Fixtures } from "../test/fixtures/unseen-tune3/fixtures.js";
import { loadTune4Fixtures } from "../test/fixtures/unseen-tune4/fixtures.js";
import { buildDefaultView } from "../test/fixtures/default-view.js";

const SETS: Array<[string, () => RealFixture[]]> = [
	["real", () => loadRealFixtures()],
	["tuning", () => loadUnseenFixtures("tuning")],
	["tune2", loadTune2Fixtures],
	["tune3", loadTune3Fixtures],
	["tune4", loadTune4Fixtures],
	["heldout", () => loadUnseenFixtures("heldout")],
	["late", loadLateFixtures],
	["ci", () => loadCiFixtures("tuning")],
	["ciheldout", () => loadCiFixtures("heldout")],
];
const PATHS = ["file", "bound", "entry"] as const;
const each = process.argv.includes("--each");
const config = DEFAULT_CONFIG;
const root = mkdtempSync(join(tmpdir(), "pi-overflow-digest-"));
const store = new OverflowStore({ root: join(root, "store") });
const all = createHash("sha256");
let outputs = 0;

function sha(text: string): string {
	return createHash("sha256").update(text).digest("hex").slice(0, 16);
}

try {
	for (const [name, load] of SETS) {
		const perPath = PATHS.map(() => createHash("sha256"));
		const fixtures = load();
		for (const fixture of fixtures) {
			const file = (await buildDefaultView(fixture.path)).text;
			const toolCallId = `${name}-${fixture.name}`;
			const text = readFileSync(fixture.path, "utf8");
			const patch = await boundToolResult(
				{ toolName: "bash", toolCallId, content: [{ type: "text", text }], details: undefined, isError: false },
				{ config, store, stash: createStash(), sessionId: "digest", now: () => Date.parse("2026-12-01T00:00:00Z") },
			);
			const bound = patch
				? patch.content.map((part) => (part.type === "text" ? part.text : `[${part.type}]`)).join("\n")
				: "(left as it is)";
			let entry = "(no entry)";
			const id = (patch?.details as { overflow?: { id?: string } } | undefined)?.overflow?.id;
			if (id !== undefined) {
				const meta = await store.readMeta(id);
				if (meta) {
					const stored = await store.openText(id);
					try {
						entry = await buildEntryView(meta, stored, config, config.thresholdChars);
					} finally {
						await stored.close();
					}
				}
			}
			const views = [file, bound, entry];
			views.forEach((view, index) => perPath[index].update(view).update("\0"));
			views.forEach((view) => all.update(view).update("\0"));
			outputs++;
			if (each) console.log(`${name}/${fixture.name}: ${views.map(sha).join(" ")}`);
		}
		console.log(
			`${name.padEnd(8)} ${String(fixtures.length).padStart(3)} outputs  ${PATHS.map((path, index) => `${path} ${perPath[index].digest("hex").slice(0, 16)}`).join("  ")}`,
		);
	}
	console.log(`all      ${String(outputs).padStart(3)} outputs  ${all.digest("hex")}`);
} finally {
	rmSync(root, { recursive: true, force: true });
}
