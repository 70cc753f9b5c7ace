// A StoreFs that fails one named step of the store's work with a chosen errno code: NODE_STORE_FS
// spread, one method replaced, as src/store/fs.ts intends. Invariant: a fault fires only while the fs is
// armed and only at its step (e.g. the second open is the metadata temp file); every other call,
// and every call once disarmed, goes to the real file system unchanged, and a handle whose close
// "fails" is still really closed, so tests never leak descriptors.

import { NODE_STORE_FS, type StoreFileHandle, type StoreFs } from "../../src/store/index.js";

/** Where a fault is injected. "text" is the entry's temp .txt (first file opened), "meta" its .json temp (second). */
export type FaultStep =
	| "mkdir"
	| "lstat"
	| "chmod-dir"
	| "open-text"
	| "open-meta"
	| "fchmod"
	| "write-first"
	| "write-middle"
	| "write-partial"
	| "write-meta"
	| "sync-text"
	| "sync-meta"
	| "close-text"
	| "close-meta"
	| "link-text"
	| "link-meta"
	| "readdir"
	| "unlink"
	| "read-meta-files";

export const ENTRY_FAULT_STEPS: readonly FaultStep[] = [
	"mkdir",
	"lstat",
	"chmod-dir",
	"open-text",
	"open-meta",
	"fchmod",
	"write-first",
	"write-middle",
	"write-partial",
	"write-meta",
	"sync-text",
	"sync-meta",
	"close-text",
	"close-meta",
	"link-text",
	"link-meta",
];

export const FAULT_CODES = ["ENOSPC", "EACCES", "EIO"] as const;

export interface FaultyFs extends StoreFs {
	/** Faults fire only while armed. Re-arming restarts the step counters. */
	armed: boolean;
	/** How many times the fault fired. */
	fired: number;
	arm(): void;
	disarm(): void;
}

export function createErrnoError(code: string, step: string): NodeJS.ErrnoException {
	return Object.assign(new Error(`${code}: injected ${step} failure`), { code });
}

/** NODE_STORE_FS with `step` failing with `code` while armed (armed from the start). */
export function createFaultyFs(step: FaultStep, code: string, base: StoreFs = NODE_STORE_FS): FaultyFs {
	let opens = 0;
	let writes = 0;
	let unlinks = 0;
	let links = 0;
	const fs: FaultyFs = {
		...base,
		armed: true,
		fired: 0,
		arm() {
			fs.armed = true;
			opens = writes = unlinks = links = 0;
		},
		disarm() {
			fs.armed = false;
		},
		async mkdir(path, options) {
			if (shouldFail("mkdir")) throw fail();
			return base.mkdir(path, options);
		},
		async lstat(path) {
			if (shouldFail("lstat")) throw fail();
			return base.lstat(path);
		},
		async chmod(path, mode) {
			if (shouldFail("chmod-dir")) throw fail();
			return base.chmod(path, mode);
		},
		async open(path, flags, mode) {
			const index = fs.armed ? ++opens : 0;
			if (shouldFail("open-text", index === 1) || shouldFail("open-meta", index === 2)) throw fail();
			const handle = await base.open(path, flags, mode);
			return wrapHandle(handle, index === 1 ? "text" : index === 2 ? "meta" : "other");
		},
		async link(from, to) {
			const index = fs.armed ? ++links : 0;
			if (shouldFail("link-text", index === 1) || shouldFail("link-meta", index === 2)) throw fail();
			return base.link(from, to);
		},
		async unlink(path) {
			if (fs.armed) ++unlinks;
			if (shouldFail("unlink")) throw fail();
			return base.unlink(path);
		},
		async readdir(path) {
			if (shouldFail("readdir")) throw fail();
			return base.readdir(path);
		},
		async readSmallTextFiles(paths, maxBytes) {
			if (shouldFail("read-meta-files")) throw fail();
			return base.readSmallTextFiles(paths, maxBytes);
		},
	};

	function shouldFail(at: FaultStep, when = true): boolean {
		if (!fs.armed || at !== step || !when) return false;
		fs.fired++;
		return true;
	}

	function fail(): NodeJS.ErrnoException {
		return createErrnoError(code, step);
	}

	function wrapHandle(handle: StoreFileHandle, role: "text" | "meta" | "other"): StoreFileHandle {
		let partialDone = false;
		return {
			async write(buffer, offset, length, position) {
				const index = fs.armed && role === "text" ? ++writes : 0;
				if (shouldFail("write-first", index === 1) || shouldFail("write-middle", index === 2) || shouldFail("write-meta", role === "meta")) {
					throw fail();
				}
				if (fs.armed && step === "write-partial" && role === "text") {
					// The disk takes half of the first write, then is full.
					if (partialDone) {
						fs.fired++;
						throw fail();
					}
					partialDone = true;
					return handle.write(buffer, offset, Math.max(1, Math.floor(length / 2)), position);
				}
				return handle.write(buffer, offset, length, position);
			},
			async sync() {
				if (shouldFail("sync-text", role === "text") || shouldFail("sync-meta", role === "meta")) throw fail();
				return handle.sync();
			},
			async chmod(mode) {
				if (shouldFail("fchmod")) throw fail();
				return handle.chmod(mode);
			},
			async close() {
				const failing = shouldFail("close-text", role === "text") || shouldFail("close-meta", role === "meta");
				await handle.close();
				// Like NFS reporting a deferred write error at close: the descriptor is gone either way.
				if (failing) throw fail();
			},
		};
	}

	return fs;
}
