// @ts-check
// The search worker thread's entry, started by pool.ts as `new Worker(new URL(
// "./worker.js", import.meta.url), { execArgv: [] })`: plain JavaScript like every module it
// imports, since no TypeScript loader runs in the worker (it reads workerData at load: never import
// it in a main thread; runSearch is the part to test). Invariant: each request on the port is
// answered "started", then "lines" batches as soon as they are final, then "done", with the progress
// slots reset first (so the main thread can terminate it mid-step and answer with what was found).

import { closeSync, openSync, readSync } from "node:fs";
import { workerData } from "node:worker_threads";
import { crAsNewline } from "../../lines/records.js";
import { resetProgress } from "./protocol.js";
import { runSearch } from "./run.js";

/** @import { MessagePort } from "node:worker_threads" */
/** @import { SearchDoneMessage, SearchWorkerMessage, SearchWorkerRequest } from "./protocol.js" */
/** @import { ByteSource } from "./run.js" */

/** @type {{ port: MessagePort; progress: SharedArrayBuffer }} */
const { port, progress: sharedProgress } = workerData;
const progress = new Float64Array(sharedProgress);

/** @param {SearchWorkerMessage} message */
function post(message) {
	port.postMessage(message);
}

/**
 * The stored file, read by position: the descriptor the main thread passed (its to close), or the
 * file at `path`, opened and closed here.
 * @param {SearchWorkerRequest} request
 * @returns {ByteSource}
 */
function openFileSource(request) {
	const given = request.fd;
	const fd = given ?? openSync(/** @type {string} */ (request.path), "r");
	return {
		read: (buffer, offset, length, position) => {
			const count = readSync(fd, buffer, offset, length, position);
			if (request.crRecords) crAsNewline(buffer, offset, offset + count);
			return count;
		},
		close: () => {
			if (given === undefined) closeSync(fd);
		},
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
		reply = runSearch(
			request,
			startedAt,
			() => openFileSource(request),
			progress,
			(lines) => post({ type: "lines", id: request.id, lines }),
		);
	} catch (error) {
		const message = String((error instanceof Error && error.message) || error);
		reply = {
			type: "done",
			id: request.id,
			totalHits: 0,
			collectedHits: 0,
			collectionStop: null,
			stoppedAtLine: 0,
			linesSearched: 0,
			error: message,
		};
	}
	post(reply);
});
