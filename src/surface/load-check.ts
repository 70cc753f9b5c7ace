// Whether capture.ts (stage 1) runs before index.ts (stage 2), decided at session start and said
// once. Pi runs every extension's session_start handlers in load order on one event object: stage 1
// marks the event, stage 2 marks it too, and whichever sees the other's mark (or the lack of it)
// knows the order. Invariant: each warning reaches the user at most once per process (after /reload
// too): as a UI warning where there is a UI, one line on stderr otherwise.

import type { ExtensionContext } from "@mariozechner/pi-coding-agent";

const MARKS_KEY = Symbol.for("my-pi.pi-overflow.session-start-marks.v1");
const WARNED_KEY = Symbol.for("my-pi.pi-overflow.warned.v1");

export type Stage = "capture" | "index";

export const MISSING_CAPTURE_WARNING =
	"pi-overflow: capture.ts is not loaded, so a result an earlier extension cut is stored as it was cut; add capture.ts as your first extension (see the README, Install).";
export const MISORDERED_CAPTURE_WARNING =
	"pi-overflow: capture.ts loads after index.ts, so it cannot keep any result's original; list capture.ts first and index.ts last (see the README, Install).";
/** The check at the first result, for a capture.ts gone since the stash was made (a /reload without it). */
export const STALE_CAPTURE_WARNING =
	"pi-overflow: capture.ts did not see this result, so a result an earlier extension cut is stored as it was cut; load capture.ts first and index.ts last (see the README, Install).";

type Marks = WeakMap<object, Set<Stage>>;

function findMarks(): Marks {
	const holder = globalThis as typeof globalThis & { [MARKS_KEY]?: Marks };
	holder[MARKS_KEY] ??= new WeakMap();
	return holder[MARKS_KEY];
}

/** Records that `stage` saw this session_start event; returns the stages that saw it before. */
export function markSessionStart(stage: Stage, event: object): ReadonlySet<Stage> {
	const marks = findMarks();
	const seen = new Set(marks.get(event) ?? []);
	marks.set(event, new Set([...seen, stage]));
	return seen;
}

/** Shows a warning once per process, whichever module instance (after /reload) asks. */
export function warnOnce(ctx: ExtensionContext | undefined, message: string): void {
	const holder = globalThis as typeof globalThis & { [WARNED_KEY]?: Set<string> };
	holder[WARNED_KEY] ??= new Set();
	if (holder[WARNED_KEY].has(message)) return;
	holder[WARNED_KEY].add(message);
	if (ctx?.hasUI) ctx.ui.notify(message, "warning");
	else process.stderr.write(`${message}\n`);
}
