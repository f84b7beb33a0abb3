// How many files a search crosses, held: the walk of bench/walk.ts (`npm run bench:walk`)
// over the built dist/ (`npm run build` first), of a typical search on a fixture book, is at
// most BOUND files of lib/ and bin/, and CONTRIBUTING.md's "A search, file by file" names each
// of them and says how many they are.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { walk } from '../bench/walk.js';
import './support/built.js';
import { buildDatabase } from './support/helpers.js';

// Today's count, a ratchet: the change that takes a file off the path lowers it to the new
// count (the test says so), none raises it to let one more in; the goal is 15.
const BOUND = 15;
const SEARCH = 'buchungen?von=2026-03-01&bis=2026-03-31&betrag=-4.35';
const SECTION = 'A search, file by file';

/** The text of the section `title` of a Markdown document, without its heading. */
function section(markdown: string, title: string): string {
  const start = markdown.indexOf(`\n## ${title}\n`);
  assert.notEqual(start, -1, `CONTRIBUTING.md has a section "${title}"`);
  const body = markdown.slice(start + title.length + 5);
  const end = body.indexOf('\n## ');
  return end === -1 ? body : body.slice(0, end);
}

/**
 * What the section gets wrong about `files`: each file is named in backticks by its path or
 * by its end (`lib/search/sql.ts`, `search/sql.ts`, `sql.ts`), each name is exactly one file
 * of the walk, and the section's first number is their count.
 */
function mistakes(text: string, files: readonly string[]): string[] {
  const found: string[] = [];
  const named = new Set<string>();
  for (const [, name = ''] of text.matchAll(/`([\w./-]+\.ts)`/g)) {
    const meant = files.filter((file) => file === name || file.endsWith(`/${name}`));
    if (meant.length === 0) found.push(`\`${name}\` is named, and no search runs code in it`);
    else if (meant.length > 1) found.push(`\`${name}\` could be any of ${meant.join(', ')}`);
    else if (named.has(meant[0] ?? '')) found.push(`${meant[0]} is named twice`);
    else named.add(meant[0] ?? '');
  }
  for (const file of files) if (!named.has(file)) found.push(`${file} runs in every search and is not named`);
  const count = /\d+/.exec(text)?.[0];
  if (count !== String(files.length)) found.push(`the count written is ${count}, and the walk crosses ${files.length}`);
  return found;
}

test(`a search crosses at most ${BOUND} files, all named in CONTRIBUTING.md`, async (t) => {
  const walked = await walk(buildDatabase(t), SEARCH);
  assert.deepEqual([walked.status, walked.bookings], [200, 1], 'the search finds its one booking');
  const list = walked.files.map((file) => `\n  ${file}`).join('');

  await t.test(`at most ${BOUND} files of lib/ and bin/ run, and BOUND is their count`, () => {
    assert.ok(walked.files.length <= BOUND, `${walked.files.length} files ran, more than ${BOUND}:${list}`);
    assert.ok(walked.files.length === BOUND, `${walked.files.length} files ran: lower BOUND to ${walked.files.length}`);
    assert.ok(walked.files.includes('lib/search/sql.ts'), `the walk reaches the SQL:${list}`);
  });

  await t.test(`CONTRIBUTING.md's "${SECTION}" names each file and their count`, () => {
    const text = section(readFileSync(new URL('../CONTRIBUTING.md', import.meta.url), 'utf8'), SECTION);
    assert.deepEqual(mistakes(text, walked.files), [], `the walk:${list}`);
  });
});
