// The one fault-injecting StoreFs of the tests: NODE_STORE_FS (or another base) spread, each method
// wrapped so a fault function can fail it with an errno code (injectFaults), and the step-by-step
// variant the robustness tests use (createFaultyFs: "the second open", "half of the first write"),
// built on it. Invariants: a fault fires only while the fs is armed; every other call goes to the
// base unchanged; a handle whose close "fails" is still really closed, so no descriptor leaks.

import { NODE_STORE_FS, type StoreFileHandle, type StoreFs } from "../../src/store/index.js";

/** An error as Node gives it: `code` set, the message starting with it. */
export function createErrnoError(code: string, what?: string): NodeJS.ErrnoException {
	return Object.assign(new Error(`${code}: injected ${what === undefined ? "" : `${what} `}failure`), { code });
}

/** Where a fault may fire: each returns the errno code to fail with, or undefined to go on. */
export interface Faults {
	open?: (path: string) => string | undefined;
	write?: (path: string, callIndex: number) => string | undefined;
	/** How many of `length` bytes a write takes (a disk filling up); default all. */
	writeLength?: (path: string, length: number) => number;
	sync?: (path: string) => string | undefined;
	/** fchmod of a file opened for writing. */
	chmodHandle?: (path: string) => string | undefined;
	/** Closing a file opened for writing: it is closed, then the code is thrown (as NFS reports a deferred error). */
	close?: (path: string) => string | undefined;
	rename?: (from: string, to: string) => string | undefined;
	link?: (from: string, to: string) => string | undefined;
	readdir?: (path: string) => string | undefined;
	mkdir?: (path: string) => string | undefined;
	unlink?: (path: string) => string | undefined;
	lstat?: (path: string) => string | undefined;
	/** chmod of a path (the store directory). */
	chmod?: (path: string) => string | undefined;
	readSmallTextFiles?: (paths: readonly string[]) => string | undefined;
	/** Opening a file for reading (store.openText). */
	openRead?: (path: string) => string | undefined;
	/** A read of a file opened for reading. */
	read?: (path: string) => string | undefined;
	/** Every write takes at most this many bytes (short writes). */
	maxBytesPerWrite?: number;
	/** Named in the error's message: "EIO: injected <label> failure". */
	label?: string;
}

export interface InjectedFs extends StoreFs {
	/** Faults fire only while armed (from the start). */
	armed: boolean;
	/** Calls of the wrapped methods, armed or not. */
	calls: number;
}

/** `base` with failures (by errno code) injected where a fault function returns one. */
export function injectFaults(faults: Faults, base: StoreFs = NODE_STORE_FS): InjectedFs {
	let writeCalls = 0;
	const check = (code: string | undefined): void => {
		if (code !== undefined) throw createErrnoError(code, faults.label);
	};
	/** Runs the fault function only while armed, after counting the call. */
	const at = <A extends unknown[]>(fault: ((...args: A) => string | undefined) | undefined, ...args: A): void => {
		fs.calls++;
		if (fs.armed && fault !== undefined) check(fault(...args));
	};
	const fs: InjectedFs = {
		...base,
		armed: true,
		calls: 0,
		async open(path, flags, mode) {
			at(faults.open, path);
			return wrapWriteHandle(await base.open(path, flags, mode), path);
		},
		async openRead(path, flags) {
			at(faults.openRead, path);
			const handle = await base.openRead(path, flags);
			return {
				fd: handle.fd,
				stat: () => handle.stat(),
				async read(buffer, offset, length, position) {
					if (fs.armed) check(faults.read?.(path));
					return handle.read(buffer, offset, length, position);
				},
				close: () => handle.close(),
			};
		},
		lstat: async (path) => (at(faults.lstat, path), base.lstat(path)),
		chmod: async (path, mode) => (at(faults.chmod, path), base.chmod(path, mode)),
		rename: async (from, to) => (at(faults.rename, from, to), base.rename(from, to)),
		link: async (from, to) => (at(faults.link, from, to), base.link(from, to)),
		readdir: async (path) => (at(faults.readdir, path), base.readdir(path)),
		mkdir: async (path, options) => (at(faults.mkdir, path), base.mkdir(path, options)),
		unlink: async (path) => (at(faults.unlink, path), base.unlink(path)),
		readSmallTextFiles: async (paths, maxBytes) => (
			at(faults.readSmallTextFiles, paths),
			base.readSmallTextFiles(paths, maxBytes)
		),
	};

	function wrapWriteHandle(handle: StoreFileHandle, path: string): StoreFileHandle {
		return {
			async write(buffer, offset, length, position) {
				const index = writeCalls++;
				if (fs.armed) check(faults.write?.(path, index));
				let taken = Math.min(length, faults.maxBytesPerWrite ?? length);
				if (fs.armed && faults.writeLength) taken = faults.writeLength(path, taken);
				return handle.write(buffer, offset, taken, position);
			},
			async sync() {
				if (fs.armed) check(faults.sync?.(path));
				return handle.sync();
			},
			async chmod(mode) {
				if (fs.armed) check(faults.chmodHandle?.(path));
				return handle.chmod(mode);
			},
			async close() {
				const code = fs.armed ? faults.close?.(path) : undefined;
				await handle.close();
				check(code);
			},
		};
	}

	return fs;
}

/** Where createFaultyFs injects its fault. "text" is the entry's temp .txt (first file opened), "meta" its .json temp (second). */
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

export interface FaultyFs extends InjectedFs {
	/** How many times the fault fired. */
	fired: number;
	/** Arms it again and restarts the step counters. */
	arm(): void;
	disarm(): void;
}

/** `base` with `step` of storing an entry failing with `code` while armed (armed from the start). */
export function createFaultyFs(step: FaultStep, code: string, base: StoreFs = NODE_STORE_FS): FaultyFs {
	let opens = 0;
	let textWrites = 0;
	let links = 0;
	/** Text files that already took their half write (each handle takes one). */
	const halfWritten = new Set<string>();
	const roles = new Map<string, "text" | "meta">();
	/** The code when this is the step (and `when` holds), counting the firing. */
	const fire = (at: FaultStep, when = true): string | undefined => {
		if (at !== step || !when) return undefined;
		fs.fired++;
		return code;
	};
	const injected = injectFaults(
		{
			label: step,
			mkdir: () => fire("mkdir"),
			lstat: () => fire("lstat"),
			chmod: () => fire("chmod-dir"),
			open: (path) => {
				const index = ++opens;
				if (index <= 2) roles.set(path, index === 1 ? "text" : "meta");
				return fire("open-text", index === 1) ?? fire("open-meta", index === 2);
			},
			chmodHandle: () => fire("fchmod"),
			write: (path) => {
				const role = roles.get(path);
				const index = role === "text" ? ++textWrites : 0;
				const failed =
					fire("write-first", index === 1) ?? fire("write-middle", index === 2) ?? fire("write-meta", role === "meta");
				// The disk took half of the first write and is now full.
				return failed ?? fire("write-partial", role === "text" && halfWritten.has(path));
			},
			writeLength: (path, length) => {
				if (step !== "write-partial" || roles.get(path) !== "text" || halfWritten.has(path)) return length;
				halfWritten.add(path);
				return Math.max(1, Math.floor(length / 2));
			},
			sync: (path) => fire("sync-text", roles.get(path) === "text") ?? fire("sync-meta", roles.get(path) === "meta"),
			close: (path) => fire("close-text", roles.get(path) === "text") ?? fire("close-meta", roles.get(path) === "meta"),
			link: () => {
				const index = ++links;
				return fire("link-text", index === 1) ?? fire("link-meta", index === 2);
			},
			unlink: () => fire("unlink"),
			readdir: () => fire("readdir"),
			readSmallTextFiles: () => fire("read-meta-files"),
		},
		base,
	);
	const fs: FaultyFs = Object.assign(injected, {
		fired: 0,
		arm() {
			fs.armed = true;
			opens = textWrites = links = 0;
			roles.clear();
		},
		disarm() {
			fs.armed = false;
		},
	});
	return fs;
}
