// @ts-check
// The search engine's worker thread: search.ts starts it with
// `new Worker(new URL("./search-worker.js", import.meta.url), { execArgv: [] })`. Plain JavaScript
// (ESM, JSDoc types checked by tsc), like every module it imports: Pi loads extensions through jiti
// and tsx is not there at run time, so nothing here may need a TypeScript loader.
// Invariant: the worker answers each request on its port with "started", then "lines" batches as
// soon as they are final, then "done", and keeps the shared progress slots current (reset, the
// request id written last), so the main thread can terminate it in the middle of a runaway regex
// step and still answer with what was found.

import { closeSync, openSync, readSync } from "node:fs";
import { workerData } from "node:worker_threads";
import { resetProgress } from "./search-protocol.js";
import { runSearch } from "./search-run.js";

/** @import { MessagePort } from "node:worker_threads" */
/** @import { SearchDoneMessage, SearchWorkerMessage, SearchWorkerRequest } from "./search-protocol.js" */
/** @import { ByteSource } from "./search-run.js" */

/** @type {{ port: MessagePort; progress: SharedArrayBuffer }} */
const { port, progress: sharedProgress } = workerData;
const progress = new Float64Array(sharedProgress);

/** @param {SearchWorkerMessage} message */
function post(message) {
	port.postMessage(message);
}

/**
 * The stored file, read by position.
 * @param {string} path
 * @returns {ByteSource}
 */
function openFileSource(path) {
	const fd = openSync(path, "r");
	return {
		read: (buffer, offset, length, position) => readSync(fd, buffer, offset, length, position),
		close: () => closeSync(fd),
	};
}

port.on("message", (/** @type {SearchWorkerRequest} */ request) => {
	// The search's clock starts here, when it begins to run, not when it was asked for.
	const startedAt = Date.now();
	resetProgress(progress, request.id);
	post({ type: "started", id: request.id, startedAt });
	/** @type {SearchDoneMessage} */
	let reply;
	try {
		reply = runSearch(request, startedAt, () => openFileSource(request.path), progress, (lines) => post({ type: "lines", id: request.id, lines }));
	} catch (error) {
		const message = String((error instanceof Error && error.message) || error);
		reply = { type: "done", id: request.id, totalHits: 0, collectedHits: 0, collectionStop: null, stoppedAtLine: 0, linesSearched: 0, error: message };
	}
	post(reply);
});
