// The documents link to each other and to headings in each other, and code comments cite
// headings (`docs/design/README.md, "Many books"`): a renamed heading or a moved file breaks
// such a link silently on GitHub. Anchors are made the way GitHub makes them.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { anchors, brokenLinks, slug } from '../support/markdown-links.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

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

test('every heading a code comment cites in quotes (docs/design/README.md, "Many books") is a heading of that document', () => {
  const sources = ['lib', 'bin', 'bench', 'test', 'scripts'].flatMap((dir) =>
    (readdirSync(join(ROOT, dir), { recursive: true }) as string[])
      .filter((file) => file.endsWith('.ts') && !file.includes('node_modules'))
      .map((file) => join(ROOT, dir, file)),
  );
  const cited: string[] = [];
  for (const file of sources) {
    for (const match of readFileSync(file, 'utf8').matchAll(/((?:docs\/)?[\w/]+\.md), "([^"\n]+)"/g)) {
      const [, document = '', heading = ''] = match;
      const full = join(ROOT, document);
      const headings = existsSync(full) ? anchors(readFileSync(full, 'utf8')) : new Set<string>();
      if (!headings.has(slug(heading))) cited.push(`${file.slice(ROOT.length)}: ${document}, "${heading}"`);
    }
  }
  assert.deepEqual(cited, []);
});
