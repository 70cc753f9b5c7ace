// A module hook for `npm run ablate` (registered by bench/ablate-register.mjs): loads source files
// of pi-overflow with entries of their data replaced, as POF_ABLATE says: one edit or a list of
// them ({ file, from, to }: the file's path ending, the text to replace, which must occur once in
// the loaded module, and its replacement), applied in order. Nothing else changes; without
// POF_ABLATE it changes nothing. Not a test.

const parsed = process.env.POF_ABLATE ? JSON.parse(process.env.POF_ABLATE) : [];
const edits = Array.isArray(parsed) ? parsed : [parsed];

export async function load(url, context, nextLoad) {
	const result = await nextLoad(url, context);
	const mine = edits.filter((edit) => url.endsWith(edit.file));
	if (mine.length === 0) return result;
	let source = String(result.source);
	for (const edit of mine) {
		const at = source.indexOf(edit.from);
		if (at < 0 || source.indexOf(edit.from, at + 1) >= 0)
			throw new Error(`ablation: ${JSON.stringify(edit.from)} does not occur exactly once in ${url}`);
		source = source.slice(0, at) + edit.to + source.slice(at + edit.from.length);
	}
	return { ...result, source };
}
