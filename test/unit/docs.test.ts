// The documents are sized to their readers: each holds what its reader needs in one
// sitting, and the whole stays small enough to be read. A document that outgrows its size
// has taken in what belongs elsewhere (a decision into docs/design/, a figure into
// BENCHMARKS.md, a rule of the command into docs/settings.md). And RELIABILITY.md names,
// for each guarantee, a test that exists.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { KMYMONEY_DATE_INDEX } from '../../lib/apps/kmymoney.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const size = (path: string): number => statSync(join(ROOT, path)).size;
const KB = 1000;

/** The most each document, or group of documents, may hold, in bytes. */
const LIMITS: ReadonlyArray<readonly [paths: readonly string[], most: number]> = [
  [['docs/API.md'], 25 * KB],
  [['docs/operations.md'], 35 * KB],
  [['docs/applications.md'], 15 * KB],
  [['docs/clients.md', 'docs/embedding.md'], 22.2 * KB],
  [['RELIABILITY.md'], 13 * KB],
  [['BENCHMARKS.md'], 15 * KB],
  [['CHANGELOG.md'], 8 * KB],
  [['CONTRIBUTING.md'], 12 * KB],
  [readdirSync(join(ROOT, 'docs/design')).map((file) => `docs/design/${file}`), 20 * KB],
];

test('each document holds at most its size', () => {
  for (const [paths, most] of LIMITS) {
    const bytes = paths.reduce((sum, path) => sum + size(path), 0);
    assert.ok(bytes <= most, `${paths.join(' + ')}: ${bytes} bytes, at most ${most}`);
  }
});

test('all the Markdown of the repository together holds at most 160 KB', () => {
  const files = execFileSync('git', ['ls-files', '-z', '--', '*.md'], { cwd: ROOT, encoding: 'utf8' })
    .split('\0')
    .filter((file) => file !== '');
  assert.ok(files.includes('docs/API.md'), 'the Markdown files are listed');
  const bytes = files.reduce((sum, file) => sum + size(file), 0);
  assert.ok(bytes <= 160 * KB, `${files.length} files: ${bytes} bytes, at most ${160 * KB}`);
});

test('each document but the README opens with whom it is for: its first paragraph starts "For "', () => {
  const files = execFileSync('git', ['ls-files', '-z', '--', '*.md'], { cwd: ROOT, encoding: 'utf8' })
    .split('\0')
    .filter((file) => file !== '' && file !== 'README.md');
  assert.ok(files.length >= 12, `${files.length} documents`);
  for (const file of files) {
    const first = readFileSync(join(ROOT, file), 'utf8')
      .split('\n')
      .slice(1)
      .find((line) => line.trim() !== '');
    assert.match(first ?? '', /^For /, `${file} opens with its reader`);
  }
});

/** The titles of the tests a file declares, `${…}` and all. */
function testTitles(source: string): string[] {
  return [...source.matchAll(/\btest\(\s*(['"`])((?:\\.|(?!\1)[^\\])*)\1/g)].map((match) =>
    (match[2] ?? '').replace(/\\(.)/g, '$1'),
  );
}

test('every test RELIABILITY.md names by file and title is a test of that file', () => {
  const text = readFileSync(join(ROOT, 'RELIABILITY.md'), 'utf8');
  const rows = text.split('\n').filter((line) => line.startsWith('| ') && line.includes('`test/'));
  assert.ok(rows.length >= 40, `${rows.length} guarantees`);
  const missing: string[] = [];
  for (const row of rows) {
    const held = row.split(' | ').at(-1) ?? '';
    // `test/file.test.ts` "title …", "another title …"; `test/other.test.ts`
    for (const cited of held.matchAll(/`(test\/[\w/.-]+\.test\.ts)`((?: ?"[^"]+",?)*)/g)) {
      const file = cited[1] ?? '';
      const titles = testTitles(readFileSync(join(ROOT, file), 'utf8'));
      for (const quoted of (cited[2] ?? '').matchAll(/"([^"]+)"/g)) {
        // The title's words as cited, an ellipsis for what is left out.
        const pieces = (quoted[1] ?? '')
          .split('…')
          .map((piece) => piece.trim())
          .filter(Boolean);
        const found = titles.some((title) => {
          let from = 0;
          return pieces.every((piece) => {
            const at = title.indexOf(piece, from);
            from = at + piece.length;
            return at !== -1;
          });
        });
        if (!found) missing.push(`${file}: "${quoted[1]}"`);
      }
    }
  }
  assert.deepEqual(missing, []);
});

test("docs/embedding.md's list of exports is lib/index.ts's, no more and no less", () => {
  const index = readFileSync(join(ROOT, 'lib/index.ts'), 'utf8');
  const exported = [...index.matchAll(/export (?:type )?\{([^}]*)\}/g)]
    .flatMap((match) => (match[1] ?? '').split(','))
    // The name it is exported as: `b` of `a as b`.
    .map(
      (name) =>
        name
          .replace(/^\s*type\s+/, '')
          .trim()
          .split(/\s+as\s+/)
          .pop() ?? '',
    )
    .filter(Boolean)
    .sort();
  const embedding = readFileSync(join(ROOT, 'docs/embedding.md'), 'utf8');
  const paragraph = embedding.slice(
    embedding.indexOf('Exports: '),
    embedding.indexOf('\n\n', embedding.indexOf('Exports: ')),
  );
  // The names, not the values (`"1.0"`) or the types' spelled-out unions.
  const listed = [...paragraph.matchAll(/`([A-Za-z_]+)`/g)].map((match) => match[1] as string);
  const named = [...paragraph.matchAll(/`([A-Za-z_]+(?: \| [A-Za-z_]+)+)`/g)].flatMap((match) =>
    (match[1] ?? '').split(' | '),
  );
  assert.ok(exported.includes('createHandler'), 'the exports are read');
  assert.deepEqual([...new Set([...listed, ...named])].sort(), exported);
});

test("the SQL docs/applications.md gives an admin is what the tests run: the worked example's views and index, KMyMoney's index", () => {
  const normal = (sql: string): string =>
    sql
      .replace(/--[^\n]*/g, '')
      .replace(/\s+/g, ' ')
      .trim();
  const run = normal(readFileSync(join(ROOT, 'fixtures/existing-app-views.sql'), 'utf8')) + normal(KMYMONEY_DATE_INDEX);
  const applications = readFileSync(join(ROOT, 'docs/applications.md'), 'utf8');
  const shown = [...applications.matchAll(/^```sql\n([\s\S]*?)^```$/gm)].flatMap((match) =>
    (match[1] ?? '').split(';').map(normal).filter(Boolean),
  );
  assert.ok(shown.length >= 5, `${shown.length} statements shown`);
  for (const statement of shown) assert.ok(run.includes(`${statement};`), `docs/applications.md: ${statement}`);
});
