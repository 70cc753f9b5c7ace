// The default signalPattern: the project's knowledge of how software fails.
// A line matching it (case-insensitive) is a "signal line" that the bounded view keeps from anywhere
// in the output. It must stay precise (a test merely named `error_handling` is noise) and linear
// (no nested quantifiers: it runs over every line of every large result).

/** Default for `signalPattern` (compiled case-insensitive). Refined against test/fixtures/real/. */
export const DEFAULT_SIGNAL_PATTERN = String.raw`\b(?:error|errors|fatal|failed|failure|fail|panic|panicked|exception|traceback|warning|warn|segmentation fault|core dumped|abort(?:ed)?|assert(?:ion)?(?:error)?|undefined reference|not found|denied|timed? ?out|killed)\b`;
