// The documents link to each other and to headings in each other (code comments cite
// BENCHMARKS.md's headings too): a renamed heading or a moved file breaks such a link
// silently on GitHub. Anchors are made the way GitHub makes them.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** Text outside fenced code blocks, where a link or a heading means nothing. */
function prose(markdown: string): string {
  return markdown.replace(/^```[\s\S]*?^```/gm, '');
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}_\- ]/gu, '')
    .replace(/ /g, '-');
}

/** Every anchor of a Markdown file; a repeated heading gets -1, -2 … as on GitHub. */
function anchors(markdown: string): Set<string> {
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
function brokenLinks(file: string, markdown: string, read: (path: string) => string | undefined): string[] {
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

test('a heading’s anchor is made as GitHub makes it', () => {
  assert.equal(slug('The query shapes'), 'the-query-shapes');
  assert.equal(slug('Every microsecond costs 1.7'), 'every-microsecond-costs-17');
  assert.equal(slug("Where a request's CPU goes"), 'where-a-requests-cpu-goes');
  assert.equal(slug('GET {base}/api/v1/buchungen'), 'get-baseapiv1buchungen');
  assert.equal(slug('--workers'), '--workers');
  assert.deepEqual([...anchors('# A\n## A\n```\n# not a heading\n```\n### A\n')], ['a', 'a-1', 'a-2']);
});

test('a link to a heading that is only bold text, or to a missing file, is reported', () => {
  const files: Record<string, string> = {
    'BENCHMARKS.md': '## Current figures\n\n**The query shapes** (measured …)\n',
  };
  const read = (path: string): string | undefined => files[path];
  assert.deepEqual(
    brokenLinks(
      'docs/operations.md',
      'See [it](../BENCHMARKS.md#the-query-shapes), [ok](../BENCHMARKS.md#current-figures), [gone](../NOPE.md).',
      read,
    ),
    [
      'docs/operations.md: ../BENCHMARKS.md#the-query-shapes (no such heading)',
      'docs/operations.md: ../NOPE.md (no such file)',
    ],
  );
});

test('every relative link in the repository’s Markdown leads to a file and heading that exist', () => {
  const files = execFileSync('git', ['ls-files', '-z', '--', '*.md'], { cwd: ROOT, encoding: 'utf8' })
    .split('\0')
    .filter((file) => file !== '');
  assert.ok(files.includes('BENCHMARKS.md'), 'the Markdown files are listed');
  const read = (path: string): string | undefined => {
    const full = join(ROOT, path);
    if (!existsSync(full)) return undefined;
    return path.endsWith('.md') ? readFileSync(full, 'utf8') : '';
  };
  const broken = files.flatMap((file) => brokenLinks(file, read(file) ?? '', read));
  assert.deepEqual(broken, []);
});
