// Relative links in Markdown, resolved as GitHub resolves them: to a file, and to a heading's
// anchor in it. For test/unit/doc-links.test.ts (the repository) and test/pack/run.ts (the
// tarball, whose documents must not link to what it does not ship).

import { dirname, join, normalize } from 'node:path';

/** Text outside fenced code blocks, where a link or a heading means nothing. */
export function prose(markdown: string): string {
  return markdown.replace(/^```[\s\S]*?^```/gm, '');
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens. */
export function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}_\- ]/gu, '')
    .replace(/ /g, '-');
}

/** Every anchor of a Markdown file; a repeated heading gets -1, -2 … as on GitHub. */
export function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const result = new Set<string>();
  for (const line of prose(markdown).split('\n')) {
    const heading = /^#{1,6}\s+(.*)$/.exec(line);
    if (heading === null) continue;
    const base = slug(heading[1] as string);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    result.add(count === 0 ? base : `${base}-${count}`);
  }
  return result;
}

/** The relative links of a Markdown file that do not resolve: a missing file or heading. */
export function brokenLinks(file: string, markdown: string, read: (path: string) => string | undefined): string[] {
  const broken: string[] = [];
  for (const match of prose(markdown).matchAll(/\]\(([^)\s]+)\)/g)) {
    const target = match[1] as string;
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
    const hash = target.indexOf('#');
    const path = hash === -1 ? target : target.slice(0, hash);
    const fragment = hash === -1 ? '' : target.slice(hash + 1);
    const resolved = path === '' ? file : normalize(join(dirname(file), path));
    const text = read(resolved);
    if (text === undefined) {
      broken.push(`${file}: ${target} (no such file)`);
    } else if (fragment !== '' && resolved.endsWith('.md') && !anchors(text).has(fragment)) {
      broken.push(`${file}: ${target} (no such heading)`);
    }
  }
  return broken;
}
