// The JSON reading kit, as the rest of pi-overflow uses it: the streaming lexer and its tokens
// (lexer.ts, token.ts: what JSON.parse accepts, byte by byte) and jsonPath over a stored text
// without building the document (evaluate.ts). Each module below holds one job; this file only
// re-exports.

export { ALL_LEVELS, DEFAULT_CAPTURE_LIMIT_BYTES, JsonLexer, type JsonLexerOptions, NEVER } from "./lexer.js";
export {
	type ContainerKind,
	decodeNumberToken,
	decodeStringToken,
	type JsonErrorKind,
	type JsonEventHandler,
	type JsonSyntaxError,
	JsonToken,
	KIND_ARRAY,
	KIND_OBJECT,
	measureNumberToken,
	type ParentKind,
	SCALAR_FALSE,
	SCALAR_NULL,
	SCALAR_NUMBER,
	SCALAR_STRING,
	SCALAR_TRUE,
	type ScalarKind,
} from "./token.js";
export { formatJsonSyntaxError, type JsonErrorSite } from "./syntax-message.js";
export {
	DEFAULT_JSON_CHUNK_BYTES,
	DEFAULT_MAX_TRACKED_KEYS,
	evaluateJsonPath,
	JSON_PATH_RUNS_KEY,
	type JsonPathOptions,
	type JsonPathResult,
	type JsonValueSummary,
	MAX_JSON_PATH_RUNS,
	readJsonPathRuns,
} from "./evaluate.js";
