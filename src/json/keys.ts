// The keys of one object as JSON.parse keeps them: distinct keys told apart while a shared budget
// of remembered keys lasts (beyond it, keys count as distinct), and the first keys in Object.keys
// order (array-index keys ascending, then the others as they came).

import { MAX_LISTED_KEYS } from "./path.js";

/** The integer an object key names as an array index (ordered first by Object.keys), or -1. */
export function arrayIndexOfKey(key: string): number {
	const length = key.length;
	if (length === 0 || length > 10) return -1;
	const first = key.charCodeAt(0);
	if (first === 0x30) return length === 1 ? 0 : -1;
	for (let at = 0; at < length; at++) {
		const code = key.charCodeAt(at);
		if (code < 0x30 || code > 0x39) return -1;
	}
	const value = Number(key);
	return value < 4294967295 ? value : -1;
}

/** Shared by all trackers of one evaluation: how many more keys may be remembered. */
export interface KeyBudget {
	remaining: number;
}

/**
 * The distinct keys of one object, each with a number (a printed member's length), and its first
 * MAX_LISTED_KEYS keys in Object.keys order: array-index keys ascending, then the others as they came.
 */
export class KeyTracker {
	count = 0;
	private readonly values = new Map<string, number>();
	private readonly indexKeys: number[] = [];
	private readonly namedKeys: string[] = [];

	constructor(private readonly budget: KeyBudget) {}

	reset(): void {
		if (this.count === 0) return;
		this.budget.remaining += this.values.size;
		this.values.clear();
		this.count = 0;
		this.indexKeys.length = 0;
		this.namedKeys.length = 0;
	}

	/** The number kept for `key`, or undefined when it is new (or could not be remembered). */
	get(key: string): number | undefined {
		return this.values.get(key);
	}

	/** Records one occurrence of a key; false when it was seen before. `truncated` keys count as new. */
	add(key: string, index: number, truncated: boolean): boolean {
		if (!truncated && this.values.has(key)) return false;
		this.count++;
		if (!truncated && this.budget.remaining > 0) {
			this.budget.remaining--;
			this.values.set(key, 0);
		}
		if (index >= 0) {
			const keys = this.indexKeys;
			if (keys.length < MAX_LISTED_KEYS || index < keys[keys.length - 1]!) {
				let at = keys.length;
				while (at > 0 && keys[at - 1]! > index) at--;
				if (keys[at - 1] !== index) {
					keys.splice(at, 0, index);
					if (keys.length > MAX_LISTED_KEYS) keys.pop();
				}
			}
		} else if (this.namedKeys.length < MAX_LISTED_KEYS) {
			this.namedKeys.push(key);
		}
		return true;
	}

	set(key: string, value: number): void {
		if (this.values.has(key)) this.values.set(key, value);
	}

	/** The first `count` keys in Object.keys order. */
	list(count: number = MAX_LISTED_KEYS): string[] {
		return [...this.indexKeys.map(String), ...this.namedKeys].slice(0, count);
	}
}
