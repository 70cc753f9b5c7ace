// Self and total time per function of a V8 .cpuprofile (node --cpu-prof), counted only inside a time
// window on the profile's clock (the bound scenario prints one as windowUs). A profiling aid, not a test:
// node --import tsx bench/profile-window.ts <file.cpuprofile> <startUs> <endUs> [rows]

import { readFileSync } from "node:fs";

interface ProfileNode {
	id: number;
	callFrame: { functionName: string; url: string; lineNumber: number };
	children?: number[];
}
interface Profile {
	nodes: ProfileNode[];
	startTime: number;
	samples: number[];
	timeDeltas: number[];
}

const [file, startArg, endArg, rowsArg] = process.argv.slice(2);
const profile = JSON.parse(readFileSync(file, "utf8")) as Profile;
const from = Number(startArg ?? 0);
const to = Number(endArg ?? Number.POSITIVE_INFINITY);
const byId = new Map(profile.nodes.map((node) => [node.id, node]));
const parent = new Map<number, number>();
for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
const label = (node: ProfileNode) =>
	`${node.callFrame.functionName || "(anon)"} ${node.callFrame.url.replace(/^.*\/(src|bench|node_modules)\//, "$1/")}:${node.callFrame.lineNumber + 1}`;
const self = new Map<string, number>();
const total = new Map<string, number>();
let time = profile.startTime;
let inWindow = 0;
for (let i = 0; i < profile.samples.length; i++) {
	time += profile.timeDeltas[i];
	const next = i + 1 < profile.timeDeltas.length ? profile.timeDeltas[i + 1] : 0;
	if (time < from || time > to) continue;
	const ms = next / 1000;
	inWindow += ms;
	let node = byId.get(profile.samples[i]);
	if (node === undefined) continue;
	self.set(label(node), (self.get(label(node)) ?? 0) + ms);
	const seen = new Set<string>();
	for (; node !== undefined; node = byId.get(parent.get(node.id) ?? -1)) {
		const name = label(node);
		if (seen.has(name)) continue;
		seen.add(name);
		total.set(name, (total.get(name) ?? 0) + ms);
	}
}
const rows = Number(rowsArg ?? 30);
const show = (title: string, map: Map<string, number>) => {
	console.log(`${title} (window ${inWindow.toFixed(1)} ms)`);
	for (const [name, ms] of [...map].sort((a, b) => b[1] - a[1]).slice(0, rows))
		console.log(`${ms.toFixed(1).padStart(8)} ms  ${name}`);
};
show("self", self);
show("total", total);
