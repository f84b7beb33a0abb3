// The library as CONTRIBUTING.md maps it (its section "The library, lib/"): every file of
// lib/ is named there, by its path under lib/ or by its folder, and every path the map
// names exists, so that the map cannot age behind the code. A folder of lib/ with an
// index.ts (search/, apps/) is entered through it alone, as the map says.

import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { test } from 'node:test';

const ROOT = resolve(import.meta.dirname, '../..');
const LIB = join(ROOT, 'lib');

/**
 * The paths of the section, as paths under lib/: in its table each code-quoted file or
 * folder (`search/sql.ts`, `apps/`), in its text those written from lib/ (`lib/index.ts`).
 */
function pathsOfContributing(): string[] {
  const text = readFileSync(join(ROOT, 'CONTRIBUTING.md'), 'utf8');
  const section = text.split('## The library, lib/')[1]?.split('\n## ')[0] ?? '';
  return section.split('\n').flatMap((line) => {
    const path = line.startsWith('|') ? /`(?:lib\/)?([\w./-]+(?:\.ts|\/))`/g : /`lib\/([\w./-]+(?:\.ts|\/))`/g;
    return [...line.matchAll(path)].map((match) => match[1] ?? '');
  });
}

const named = pathsOfContributing();
const files = readdirSync(LIB, { recursive: true, encoding: 'utf8' })
  .filter((name) => name.endsWith('.ts'))
  .map((name) => name.split('\\').join('/'));

test("every file of lib/ is named in CONTRIBUTING.md's map of the library, or its folder is", () => {
  assert.ok(named.length >= 20, `the map names ${named.length} paths`);
  const folderNamed = (file: string) => named.some((path) => path.endsWith('/') && file.startsWith(path));
  const missing = files.filter((file) => !named.includes(file) && !folderNamed(file));
  assert.deepEqual(missing, []);
});

test("every path CONTRIBUTING.md's map of the library names is a file or folder of lib/", () => {
  assert.deepEqual(
    named.filter((path) => !existsSync(join(LIB, path))),
    [],
  );
});

test('a folder of lib/ with an index.ts is entered only through it from the rest of lib/', () => {
  const doors = files.filter((file) => file.endsWith('/index.ts')).map((file) => dirname(file));
  const wrong: string[] = [];
  for (const file of files) {
    const text = readFileSync(join(LIB, file), 'utf8');
    for (const [, target = ''] of text.matchAll(/(?:^|\n)\s*(?:import|export)\s[^'"]*?from\s+'(\.[^']+)'/g)) {
      const path = relative(LIB, resolve(LIB, dirname(file), target))
        .split('\\')
        .join('/');
      const door = doors.find((folder) => path.startsWith(`${folder}/`));
      if (door !== undefined && !file.startsWith(`${door}/`) && path !== `${door}/index.js`) {
        wrong.push(`lib/${file} → lib/${path}`);
      }
    }
  }
  assert.deepEqual(wrong, []);
});
