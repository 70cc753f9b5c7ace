// The floor plan of src/ holds: folders are the pipeline's stages in STAGE_ORDER (highest first), a
// file imports only from its own folder or a folder below it, and no import cycle exists between
// files. Imports are read from the sources (static, re-exports and dynamic import() alike), so a
// new module needs no registration here — only a new folder does (STAGE_ORDER).

import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

const SRC = fileURLToPath(new URL("../../src/", import.meta.url));

/** The stages, highest first: a file may import its own stage and any stage after it in this list. */
export const STAGE_ORDER = [
	"extension.ts",
	"surface",
	"context",
	"bound",
	"intake",
	"query",
	"reruns",
	"view",
	"scan",
	"config",
	"signals",
	"store",
	"json",
	"io",
	"prefilter",
	"regex",
	"lines",
] as const;

const IMPORT = /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)(["'])(\.{1,2}\/[^"']+)\1/g;

function listSources(dir: string): string[] {
	return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
		const path = join(dir, entry.name);
		if (entry.isDirectory()) return listSources(path);
		return /\.(ts|js)$/.test(entry.name) && !entry.name.endsWith(".d.ts") ? [path] : [];
	});
}

/** The source file an import specifier names (".js" may stand for ".ts"). */
function resolveImport(from: string, specifier: string, known: ReadonlySet<string>): string {
	const target = resolve(dirname(from), specifier);
	if (known.has(target)) return target;
	const asTs = target.replace(/\.js$/, ".ts");
	if (known.has(asTs)) return asTs;
	throw new Error(`${relative(SRC, from)} imports ${specifier}, which is no source file under src/`);
}

function stageOf(file: string): string {
	const path = relative(SRC, file);
	return path.includes("/") ? path.slice(0, path.indexOf("/")) : path;
}

/** Every file's imports of other src/ files. */
export function readImportGraph(): Map<string, string[]> {
	const files = listSources(SRC);
	const known = new Set(files);
	const graph = new Map<string, string[]>();
	for (const file of files) {
		const text = readFileSync(file, "utf8");
		const targets = [...text.matchAll(IMPORT)].map((match) => resolveImport(file, match[2], known));
		graph.set(file, [...new Set(targets)]);
	}
	return graph;
}

/** The import cycles (strongly connected components of more than one file, or a file importing itself). */
function findCycles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
	let counter = 0;
	const index = new Map<string, number>();
	const low = new Map<string, number>();
	const stack: string[] = [];
	const onStack = new Set<string>();
	const cycles: string[][] = [];
	const visit = (node: string): void => {
		index.set(node, counter);
		low.set(node, counter++);
		stack.push(node);
		onStack.add(node);
		for (const next of graph.get(node) ?? []) {
			if (!index.has(next)) {
				visit(next);
				low.set(node, Math.min(low.get(node)!, low.get(next)!));
			} else if (onStack.has(next)) {
				low.set(node, Math.min(low.get(node)!, index.get(next)!));
			}
		}
		if (low.get(node) !== index.get(node)) return;
		const component: string[] = [];
		for (let member = stack.pop()!; ; member = stack.pop()!) {
			onStack.delete(member);
			component.push(member);
			if (member === node) break;
		}
		if (component.length > 1 || graph.get(node)?.includes(node))
			cycles.push(component.map((file) => relative(SRC, file)).sort());
	};
	for (const node of graph.keys()) if (!index.has(node)) visit(node);
	return cycles;
}

test("every file of src/ lies in a known stage", () => {
	const unknown = [...readImportGraph().keys()]
		.map(stageOf)
		.filter((stage) => !(STAGE_ORDER as readonly string[]).includes(stage));
	assert.deepEqual([...new Set(unknown)], [], "add a new folder to STAGE_ORDER, at its place in the pipeline");
});

test("imports only point down the stage order", () => {
	const upward: string[] = [];
	for (const [file, targets] of readImportGraph()) {
		const rank = STAGE_ORDER.indexOf(stageOf(file) as (typeof STAGE_ORDER)[number]);
		for (const target of targets) {
			if (STAGE_ORDER.indexOf(stageOf(target) as (typeof STAGE_ORDER)[number]) < rank)
				upward.push(`${relative(SRC, file)} -> ${relative(SRC, target)}`);
		}
	}
	assert.deepEqual(upward, []);
});

test("no import cycle between files", () => {
	assert.deepEqual(findCycles(readImportGraph()), []);
});

test("the checks see an upward import and a cycle when there is one", () => {
	const a = join(SRC, "lines/a.ts");
	const b = join(SRC, "bound/b.ts");
	const graph = new Map([
		[a, [b]],
		[b, [a]],
	]);
	assert.deepEqual(findCycles(graph), [["bound/b.ts", "lines/a.ts"]]);
	assert.ok(STAGE_ORDER.indexOf("bound") < STAGE_ORDER.indexOf("lines"), "lines -> bound is upward");
});
