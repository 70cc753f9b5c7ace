// Which tool results in what the model is sent a later run of the same command follows: for each
// tool result, the index of the next result of a call with the same tool and arguments
// (reruns/run-key.ts), read from the assistant messages' tool calls in the same messages. Masking
// hides a superseded view once that later run has been sent. Pure; linear in the messages.

import type { CallIdentities } from "../reruns/run-key.js";
import type { ContextMessage } from "./masking.js";

/**
 * For each of the results at `views` (indexes in `messages`), the index of the next run of the same
 * command, when there is one. Only calls of the views' tools are hashed: no view, no hash.
 */
export function findSuccessors(
	messages: readonly ContextMessage[],
	views: readonly number[],
	identities: CallIdentities,
): Map<number, number> {
	const successors = new Map<number, number>();
	const tools = new Set<unknown>(views.map((index) => messages[index]?.toolName));
	if (tools.size === 0) return successors;
	const keyOfCall = new Map<string, string>();
	const lastOfKey = new Map<string, number>();
	const wanted = new Set(views);
	messages.forEach((message, index) => {
		if (message.role === "assistant" && Array.isArray(message.content)) {
			for (const part of message.content as Array<{
				type?: unknown;
				id?: unknown;
				name?: unknown;
				arguments?: unknown;
			}>) {
				if (part?.type !== "toolCall" || typeof part.id !== "string" || typeof part.name !== "string") continue;
				if (!tools.has(part.name)) continue;
				const text = identities.textOf(part.name, part.arguments);
				if (text !== undefined) keyOfCall.set(part.id, text);
			}
			return;
		}
		if (message.role !== "toolResult" || typeof message.toolCallId !== "string") return;
		const key = keyOfCall.get(message.toolCallId);
		if (key === undefined) return;
		const previous = lastOfKey.get(key);
		if (previous !== undefined && wanted.has(previous)) successors.set(previous, index);
		lastOfKey.set(key, index);
	});
	return successors;
}
