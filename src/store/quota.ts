// The quota at commit time (StoreOptions.maxStoreBytes): a commit resolves only once the store, as
// this process knows it, is back within the quota. Invariants: a commit that fits the picture costs
// no I/O; the picture is rescanned whenever it may be stale (never scanned, or this instance wrote
// more than a tenth of the quota since its last scan), so what it does not know of other processes'
// writes stays that small; a pass evicts down to the low-water mark (hysteresis), never an entry
// being committed in this process, and never rejects.

import { describeError } from "../lines/text.js";
import {
	classifyStoreNames,
	DEFAULT_HOUSEKEEPING_CONCURRENCY,
	type EntryPaths,
	isComplete,
	type KnownEntry,
	runWithConcurrency,
	type StoreDirectory,
} from "./directory.js";
import type { EntryMeta } from "./entry.js";
import { selectVictims } from "./housekeeping.js";
import { type CommitResult, endCommit } from "./writer.js";

/**
 * A commit that finds the store past its quota evicts down to this share of it (hysteresis). The
 * band above it, a tenth of the quota, is also how much a process writes between two directory
 * scans at most, so what it does not know of other processes' writes stays that small.
 */
export const DEFAULT_QUOTA_LOW_WATER_RATIO = 0.9;

/** The quota's low-water mark: what a quota pass evicts down to. */
function lowWaterOf(quota: number): number {
	return Math.floor(quota * DEFAULT_QUOTA_LOW_WATER_RATIO);
}

/**
 * One store instance's picture of the complete entries, for the quota at commit time: seeded by
 * housekeeping, kept by its own commits and evictions, refreshed by a scan when it may be stale
 * (other processes write and evict too). `seq` numbers what commits taught it, so a scan never
 * forgets a commit that landed after the scan began.
 */
export class EntryPicture {
	/** Scans (housekeeping's or a quota pass's) that have replaced the picture so far. */
	scans = 0;
	/** False until housekeeping or a quota pass has listed the directory. */
	scanned = false;
	totalBytes = 0;
	/** Bytes added by commits since the last scan began. */
	bytesSinceScan = 0;
	/** The number of the last add. */
	seq = 0;
	private entries = new Map<string, KnownEntry & { seq: number }>();

	get(id: string): KnownEntry | undefined {
		return this.entries.get(id);
	}

	list(): KnownEntry[] {
		return [...this.entries.values()];
	}

	add(entry: KnownEntry): void {
		this.delete(entry.id);
		this.entries.set(entry.id, { ...entry, seq: ++this.seq });
		this.totalBytes += entry.bytes;
		this.bytesSinceScan += entry.bytes;
	}

	delete(id: string): void {
		const known = this.entries.get(id);
		if (known === undefined) return;
		this.entries.delete(id);
		this.totalBytes -= known.bytes;
	}

	/**
	 * What a scan that began at `startSeq` found. Kept from before: what commits added since then,
	 * and entries still being committed (housekeeping leaves those out).
	 */
	replace(found: readonly KnownEntry[], startSeq: number, isCommitting: (id: string) => boolean): void {
		const next = new Map<string, KnownEntry & { seq: number }>();
		for (const entry of found)
			next.set(entry.id, {
				id: entry.id,
				createdMs: entry.createdMs,
				bytes: entry.bytes,
				sessionId: entry.sessionId,
				seq: 0,
			});
		this.bytesSinceScan = 0;
		for (const [id, known] of this.entries) {
			if (known.seq > startSeq) this.bytesSinceScan += known.bytes;
			if (known.seq > startSeq || isCommitting(id)) next.set(id, known);
		}
		this.entries = next;
		this.totalBytes = 0;
		for (const known of next.values()) this.totalBytes += known.bytes;
		this.scanned = true;
		this.scans++;
	}
}

export class StoreQuota {
	private readonly picture = new EntryPicture();
	/** Quota passes run one at a time; a pass never rejects. */
	private queue: Promise<void> = Promise.resolve();

	constructor(
		private readonly dir: StoreDirectory,
		private readonly quota: number,
		/** The housekeeping under way, if any: a first commit waits for its scan instead of scanning too. */
		private readonly housekeeping: () => Promise<void> | undefined,
	) {}

	/** Marks the start of a scan (housekeeping's): pass it to adoptScan. */
	beginScan(): number {
		return this.picture.seq;
	}

	/** What housekeeping left (a scan begun at `startSeq`) becomes the picture the commits' quota starts from. */
	adoptScan(kept: readonly KnownEntry[], startSeq: number): void {
		this.picture.replace(kept, startSeq, (id) => this.dir.isCommitting(id));
	}

	/**
	 * After a commit (its entry still marked as committing): when the store as this instance knows
	 * it fits the quota and that knowledge is fresh enough, that is all — no I/O. Otherwise a quota
	 * pass runs before the commit resolves. Passes run one at a time, so a queued one may find room
	 * already; each protects the entries still waiting for theirs, so of two that cannot both fit,
	 * the later stays.
	 */
	async keepWithinQuota(meta: EntryMeta, bytes: number): Promise<CommitResult> {
		const result: CommitResult = { removedForQuota: 0, errors: [] };
		this.picture.add({ id: meta.id, bytes, createdMs: Date.parse(meta.createdAt), sessionId: meta.sessionId });
		if (!this.needsPass()) return result;
		const scansBefore = this.picture.scans;
		const pass = this.queue.then(async () => {
			await this.runPass(meta.sessionId, scansBefore, result);
			// Its own pass over, the entry is no longer the one just written: the next pass may evict it.
			endCommit(this.dir.prefix + meta.id);
		});
		this.queue = pass;
		await pass;
		return result;
	}

	/**
	 * Over the quota as far as this instance knows, or its picture is stale: never scanned, or this
	 * instance has written more than the band below the quota since its last scan.
	 */
	private needsPass(): boolean {
		const { picture, quota } = this;
		return !picture.scanned || picture.totalBytes > quota || picture.bytesSinceScan > quota - lowWaterOf(quota);
	}

	/**
	 * Rescans the directory (the picture misses what other processes wrote or removed) unless a scan
	 * ended since the commit was counted, then evicts down to the low-water mark, so the next pass
	 * is a band of writes away: other sessions' entries first, then this session's, oldest first;
	 * never an entry being committed in this process. Never rejects.
	 */
	private async runPass(sessionId: string, scansBefore: number, result: CommitResult): Promise<void> {
		try {
			const housekeeping = this.housekeeping();
			if (!this.picture.scanned && housekeeping !== undefined) await housekeeping;
			if (!this.needsPass()) return;
			if (this.picture.scans === scansBefore && !(await this.scan(result))) return;
			const targetBytes = lowWaterOf(this.quota);
			if (this.picture.totalBytes <= targetBytes) return;
			const candidates = this.picture.list().filter((entry) => !this.dir.isCommitting(entry.id));
			const victims = selectVictims(candidates, this.picture.totalBytes, targetBytes, sessionId);
			await runWithConcurrency(victims, DEFAULT_HOUSEKEEPING_CONCURRENCY, async (victim) => {
				if (await this.dir.removeEntry(this.dir.pathsOf(victim.id), result)) result.removedForQuota++;
				// Forgotten even when it could not be removed (that is reported): a failing disk must not
				// make every later commit rescan; the next scan finds it again.
				this.picture.delete(victim.id);
			});
		} catch (error) {
			result.errors.push(`quota pass stopped: ${describeError(error)}`);
		}
	}

	/**
	 * Brings the picture up to date: one readdir; metadata is read only for entries it does not know.
	 * False when the directory cannot be listed (nothing is evicted then).
	 */
	private async scan(result: CommitResult): Promise<boolean> {
		const startSeq = this.picture.seq;
		const dirents = await this.dir.list("quota pass", result);
		if (dirents === undefined) return false;
		const found: KnownEntry[] = [];
		const unknown: EntryPaths[] = [];
		for (const [id, has] of classifyStoreNames(dirents, this.dir.prefix).halves) {
			// Entries being committed count too (another store instance's are in no picture here).
			if (!isComplete(has)) continue;
			const known = this.picture.get(id);
			if (known !== undefined) found.push(known);
			else unknown.push(this.dir.pathsOf(id));
		}
		// Metadata that is not ours is left to housekeeping (it removes it once old): not counted here.
		await this.dir.readEntryMetas(unknown, result, (_entry, known) => found.push(known));
		this.picture.replace(found, startSeq, (id) => this.dir.isCommitting(id));
		return true;
	}
}
