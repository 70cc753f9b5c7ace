// A module hook for `npm run ablate` (registered by bench/ablate-register.mjs): loads one source file
// of pi-overflow with one entry of its data replaced, as POF_ABLATE says ({ file, from, to }: the
// file's path ending, the text to replace, which must occur once in the loaded module, and its
// replacement). Nothing else changes; without POF_ABLATE it changes nothing. Not a test.

const edit = process.env.POF_ABLATE ? JSON.parse(process.env.POF_ABLATE) : undefined;

export async function load(url, context, nextLoad) {
	const result = await nextLoad(url, context);
	if (edit === undefined || !url.endsWith(edit.file)) return result;
	const source = String(result.source);
	const at = source.indexOf(edit.from);
	if (at < 0 || source.indexOf(edit.from, at + 1) >= 0)
		throw new Error(`ablation: ${JSON.stringify(edit.from)} does not occur exactly once in ${url}`);
	return { ...result, source: source.slice(0, at) + edit.to + source.slice(at + edit.from.length) };
}
