// A UI context for a Pi session in tests: every notice (and every question, with the options it
// offered) is recorded in order; a question is answered by `choose`, the first option by default.

import type { ExtensionUIContext } from "@mariozechner/pi-coding-agent";

/** What the UI was told, in order; a question is recorded with type "confirm". */
export type Said = Array<{ message: string; type?: string }>;

export function recordingUi(said: Said, choose: (options: string[]) => number = () => 0): ExtensionUIContext {
	const ignore = () => undefined;
	return new Proxy({} as ExtensionUIContext, {
		get(_target, name) {
			if (name === "notify") return (message: string, type?: string) => said.push({ message, type });
			if (name === "select")
				return async (title: string, options: string[]) => {
					said.push({ message: `${title} [${options.join(" | ")}]`, type: "confirm" });
					return options[choose(options)];
				};
			if (name === "theme") return undefined;
			if (name === "confirm" || name === "input" || name === "editor" || name === "custom")
				return async () => undefined;
			if (name === "onTerminalInput") return () => ignore;
			if (name === "getEditorText") return () => "";
			if (name === "getToolsExpanded") return () => false;
			return ignore;
		},
	});
}
