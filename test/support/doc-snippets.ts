// The commands and code the documents show a user, taken from the Markdown as written, so
// that a test runs (or compiles) exactly what a reader types.

/**
 * The fenced blocks of language `lang` (```sh, ```ts, …) that follow the first line
 * containing `marker` in `markdown`, up to the next heading of that level or higher; at
 * least one, or an Error naming the marker (a test fails when the document changes).
 */
export function blocksAfter(markdown: string, marker: string, lang: string): string[] {
  const start = markdown.indexOf(marker);
  if (start === -1) throw new Error(`the document has no "${marker}"`);
  const heading = /^(#+) /m.exec(markdown.slice(markdown.lastIndexOf('\n#', start) + 1))?.[1] ?? '#';
  const rest = markdown.slice(start + marker.length);
  const end = new RegExp(`^#{1,${heading.length}} `, 'm').exec(rest)?.index ?? rest.length;
  const blocks = [...rest.slice(0, end).matchAll(new RegExp(`^\`\`\`${lang}\\n([\\s\\S]*?)^\`\`\`$`, 'gm'))].map(
    (match) => match[1] as string,
  );
  if (blocks.length === 0) throw new Error(`no \`\`\`${lang} block after "${marker}"`);
  return blocks;
}

/** `block` as it runs on a test machine: `sudo` left out (the tests run as root), paths moved. */
export function asRoot(block: string, paths: ReadonlyArray<readonly [from: string, to: string]>): string {
  let text = block.replace(/\bsudo (?!-u )/g, '');
  for (const [from, to] of paths) text = text.replaceAll(from, to);
  return text;
}
