// Long passes on the main thread give Pi's event loop a turn: a pass calls `turn()` between small
// pieces of work, and it resolves at once until the slice's time is up, then after a macrotask
// (setImmediate, so timers and I/O run meanwhile). The clock decides only when to yield, never a result.

/** Time a pass may run before it yields, in ms: small against the 100 ms a stall may last. */
export const DEFAULT_SLICE_MS = 10;

export interface TimeSliceOptions {
	/** Default DEFAULT_SLICE_MS. */
	sliceMs?: number;
	/** With `passed`: a turn is given after this many bytes whatever the clock says. Default: the clock alone. */
	turnBytes?: number;
	/** Default performance.now. */
	now?: () => number;
}

export class TimeSlice {
	/** Turns given to the event loop so far. */
	yields = 0;
	private readonly sliceMs: number;
	private readonly turnBytes: number;
	private readonly now: () => number;
	private started: number;
	/** Bytes passed since the last turn. */
	private unyielded = 0;

	constructor(options: TimeSliceOptions = {}) {
		this.sliceMs = options.sliceMs ?? DEFAULT_SLICE_MS;
		this.turnBytes = options.turnBytes ?? Number.POSITIVE_INFINITY;
		this.now = options.now ?? (() => performance.now());
		this.started = this.now();
	}

	/** True once the slice's time is up: the caller should `await turn()` before more work. */
	get due(): boolean {
		return this.now() - this.started >= this.sliceMs;
	}

	/** Yields to the event loop when the slice's time is up; a new slice starts after it. */
	async turn(): Promise<void> {
		if (this.due) await this.giveTurn();
	}

	/** `bytes` more were worked through: yields when the slice's time is up or `turnBytes` have passed since the last turn. */
	async passed(bytes: number): Promise<void> {
		this.unyielded += bytes;
		if (this.unyielded >= this.turnBytes) await this.giveTurn();
		else await this.turn();
	}

	/** Yields to the event loop now; a new slice starts after it. */
	async giveTurn(): Promise<void> {
		await new Promise<void>((resolve) => setImmediate(resolve));
		this.yields++;
		this.unyielded = 0;
		this.started = this.now();
	}
}
