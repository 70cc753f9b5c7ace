// One benchmark scenario in a fresh process, so peak RSS belongs to it alone. Prints one JSON line:
// { ms, rssBeforeMiB, rssPeakMiB, ...extra }. Run by bench/bench.ts; not a test.

import { mkdtempSync, openSync, readSync, closeSync, rmSync, statSync, writeFileSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import capture from "../capture.js";
import { boundToolResult } from "../src/bound.js";
import { createDefaultConfig } from "../src/config.js";
import { createOverflowExtension } from "../src/extension.js";
import { ensureStash } from "../src/stash.js";
import { NODE_STORE_FS, OverflowStore, type StoreFs } from "../src/store.js";
import { runQuery } from "../src/query.js";
import { disposeSearchWorkers } from "../src/search.js";
import { buildViewFromFile } from "../src/view.js";
import { createReadStream } from "node:fs";

const [name, rawArgs] = process.argv.slice(2);
const args = JSON.parse(rawArgs ?? "{}") as Record<string, unknown>;

/** Resident memory now; the peak comes from the kernel (maxRSS), so no sample is missed. */
function rssNow(): number {
	return process.memoryUsage.rss();
}

function readTail(path: string, bytes: number): string {
	const size = statSync(path).size;
	const length = Math.min(size, bytes);
	const buffer = Buffer.alloc(length);
	const fd = openSync(path, "r");
	readSync(fd, buffer, 0, length, size - length);
	closeSync(fd);
	return buffer.toString("utf8");
}

/** A pi stand-in that records handlers, so the real extension code runs without Pi's runner. */
function recordHandlers(install: (pi: never) => void): Map<string, Array<(event: unknown, ctx: unknown) => unknown>> {
	const handlers = new Map<string, Array<(event: unknown, ctx: unknown) => unknown>>();
	const pi = {
		on(event: string, handler: (event: unknown, ctx: unknown) => unknown) {
			handlers.set(event, [...(handlers.get(event) ?? []), handler]);
		},
		registerTool() {},
	};
	install(pi as never);
	return handlers;
}

function countingFs(counter: { calls: number }): StoreFs {
	const wrap = <T extends (...a: never[]) => unknown>(fn: T): T => ((...a: never[]) => (counter.calls++, fn(...a))) as T;
	return { ...NODE_STORE_FS, open: wrap(NODE_STORE_FS.open), lstat: wrap(NODE_STORE_FS.lstat), mkdir: wrap(NODE_STORE_FS.mkdir), chmod: wrap(NODE_STORE_FS.chmod), rename: wrap(NODE_STORE_FS.rename), unlink: wrap(NODE_STORE_FS.unlink), readdir: wrap(NODE_STORE_FS.readdir) };
}

async function main(): Promise<Record<string, unknown>> {
	const scratch = mkdtempSync(join(tmpdir(), "pi-overflow-bench-"));
	try {
		const config = createDefaultConfig();
		if (name === "bound") {
			const spill = String(args.spill);
			const current = readTail(spill, 50 * 1024);
			const store = new OverflowStore({ root: join(scratch, "store") });
			globalThis.gc?.();
			const before = rssNow();
			const started = performance.now();
			const patch = await boundToolResult(
				{ toolName: "bash", toolCallId: "bench-call", content: [{ type: "text", text: current }], details: { fullOutputPath: spill }, isError: false },
				{ config, store, sessionId: "bench", stash: undefined },
			);
			const ms = performance.now() - started;
			const viewChars = patch?.content.reduce((chars, part) => chars + (part.type === "text" ? part.text.length : 0), 0) ?? 0;
			return { ms, rssBefore: before, viewChars, stored: (patch?.details as { overflow?: unknown })?.overflow };
		}
		if (name === "view") {
			globalThis.gc?.();
			const signalRegex = typeof args.pattern === "string" ? new RegExp(args.pattern, "i") : config.signalRegex;
			const before = rssNow();
			const started = performance.now();
			const view = await buildViewFromFile(String(args.entry), { ...config, signalRegex, id: "0123456789ab", toolName: "bash" });
			return { ms: performance.now() - started, rssBefore: before, viewChars: view.text.length, lines: view.totalLines };
		}
		if (name === "search" || name === "lines-end" || name === "catastrophic") {
			// Store the entry (not timed), then time one query in this fresh process.
			const store = new OverflowStore({ root: join(scratch, "store") });
			const id = "0123456789ab";
			const writer = await store.beginEntry(id);
			for await (const chunk of createReadStream(String(args.entry), { highWaterMark: 1 << 20 })) await writer.write(chunk as Buffer);
			await writer.commit({ id, sessionId: "bench", toolCallId: "c", toolName: "bash", createdAt: new Date().toISOString(), totalLines: writer.linesWritten, totalBytes: writer.bytesWritten, originalBytes: writer.bytesWritten, truncated: false, source: "current" });
			const queryConfig = { ...config, searchTimeoutMs: Number(args.timeoutMs ?? config.searchTimeoutMs) };
			const params =
				name === "search"
					? { id, search: String(args.pattern) }
					: name === "catastrophic"
						? { id, search: "(a+)+$" }
						: { id, lines: { start: Math.max(1, writer.linesWritten - 20), end: writer.linesWritten } };
			globalThis.gc?.();
			const before = rssNow();
			const started = performance.now();
			const answer = await runQuery(params, { config: queryConfig, store });
			const ms = performance.now() - started;
			// Warm: the median of three more identical queries (worker started, its code compiled).
			let secondMs: number | undefined;
			if (name === "lines-end" || name === "search") {
				const times: number[] = [];
				for (let i = 0; i < 3; i++) {
					const again = performance.now();
					await runQuery(params, { config: queryConfig, store });
					times.push(performance.now() - again);
				}
				secondMs = times.sort((a, b) => a - b)[1];
			}
			await disposeSearchWorkers();
			return { ms, secondMs, rssBefore: before, answerChars: answer.text.length, summary: answer.summary };
		}
		if (name === "store-entry") {
			// Stores a file as an entry for the scenarios that query it (in their own processes).
			const store = new OverflowStore({ root: String(args.store) });
			const id = String(args.id);
			const writer = await store.beginEntry(id);
			for await (const chunk of createReadStream(String(args.entry), { highWaterMark: 1 << 20 })) await writer.write(chunk as Buffer);
			await writer.commit({ id, sessionId: "bench", toolCallId: id, toolName: "bash", createdAt: new Date().toISOString(), totalLines: writer.linesWritten, totalBytes: writer.bytesWritten, originalBytes: writer.bytesWritten, truncated: false, source: "current" });
			return { ms: 0, rssBefore: 0 };
		}
		if (name === "jsonpath") {
			// Every path at once, as one assistant turn would, into an entry stored beforehand: the
			// process's peak RSS is then the queries' own.
			const store = new OverflowStore({ root: String(args.store) });
			const id = String(args.id);
			const paths = args.paths as string[];
			const queryConfig = { ...config, searchTimeoutMs: Number(args.timeoutMs ?? config.searchTimeoutMs) };
			globalThis.gc?.();
			const before = rssNow();
			const started = performance.now();
			const outcomes = await Promise.all(
				paths.map((jsonPath) =>
					runQuery({ id, jsonPath }, { config: queryConfig, store }).then(
						(answer) => ({ ok: true, chars: answer.text.length, head: answer.text.slice(0, 120) }),
						(error: Error) => ({ ok: false, chars: 0, head: error.message.slice(0, 160) }),
					),
				),
			);
			return { ms: performance.now() - started, rssBefore: before, answered: outcomes.filter((o) => o.ok).length, first: outcomes[0]?.head };
		}
		if (name === "small" || name === "small-baseline") {
			const count = Number(args.count ?? 100_000);
			const texts = Array.from({ length: 64 }, (_, i) => "log line with some words in it\n".repeat(Math.floor((1024 + i * 300) / 31)));
			const counter = { calls: 0 };
			let chain: Array<(event: unknown, ctx: unknown) => unknown>;
			if (name === "small") {
				const first = recordHandlers(capture as never).get("tool_result") ?? [];
				const last = recordHandlers(createOverflowExtension({ config: { config, problems: [] }, storeRoot: join(scratch, "store"), storeFs: countingFs(counter) }) as never).get("tool_result") ?? [];
				chain = [...first, ...last];
				ensureStash();
			} else {
				chain = [async () => undefined, async () => undefined];
			}
			const ctx = { hasUI: false, sessionManager: { getSessionId: () => "bench" } };
			const events = texts.map((text, i) => ({ type: "tool_result", toolName: "bash", toolCallId: `c${i}`, input: {}, content: [{ type: "text", text }], details: undefined, isError: false }));
			const before = rssNow();
			const started = performance.now();
			for (let i = 0; i < count; i++) {
				const event = { ...events[i % events.length], toolCallId: `call-${i}` };
				for (const handler of chain) await handler(event, ctx);
			}
			const ms = performance.now() - started;
			return { ms, rssBefore: before, perResultUs: (ms * 1000) / count, fsCalls: counter.calls, count };
		}
		if (name === "housekeep") {
			const entries = Number(args.entries ?? 10_000);
			const root = join(scratch, "my-pi", "pi-overflow");
			mkdirSync(root, { recursive: true, mode: 0o700 });
			const now = Date.now();
			for (let i = 0; i < entries; i++) {
				const id = i.toString(16).padStart(12, "0");
				writeFileSync(join(root, `${id}.txt`), "x".repeat(100), { mode: 0o600 });
				const meta = { id, sessionId: `s${i % 10}`, toolCallId: `c${i}`, toolName: "bash", createdAt: new Date(now - (i % 14) * 86_400_000).toISOString(), totalLines: 1, totalBytes: 100, originalBytes: 100, truncated: false, source: "current" };
				writeFileSync(join(root, `${id}.json`), JSON.stringify(meta), { mode: 0o600 });
			}
			// Through the real session_start handler: how long start-up waits, and when housekeeping ends.
			let finished = 0;
			let result: unknown;
			const done = new Promise<void>((resolve) => {
				const handlers = recordHandlers(
					createOverflowExtension({
						config: { config: { ...config, maxStoreBytes: 1024 * 1024 }, problems: [] },
						storeRoot: root,
						onHousekeeping: (r) => {
							finished = performance.now();
							result = r;
							resolve();
						},
					}) as never,
				);
				const start = handlers.get("session_start")?.[0];
				const before = performance.now();
				void Promise.resolve(start?.({ type: "session_start", reason: "startup" }, { hasUI: false, sessionManager: { getSessionId: () => "s1" } })).then(() => {
					(globalThis as Record<string, unknown>).__startupMs = performance.now() - before;
					(globalThis as Record<string, unknown>).__started = before;
				});
			});
			await done;
			const started = (globalThis as Record<string, unknown>).__started as number;
			return { ms: finished - started, startupWaitMs: (globalThis as Record<string, unknown>).__startupMs, rssBefore: 0, result };
		}
		throw new Error(`unknown scenario ${name}`);
	} finally {
		rmSync(scratch, { recursive: true, force: true });
	}
}

main()
	.then((result) => {
		process.stdout.write(`${JSON.stringify({ ...result, rssPeak: process.resourceUsage().maxRSS * 1024 })}\n`);
	})
	.catch((error) => {
		process.stdout.write(`${JSON.stringify({ error: String(error?.stack ?? error) })}\n`);
		process.exitCode = 1;
	});
