// The library's door for the command: bin/ imports lib/ through one file, lib/internal.ts,
// and only so many names pass it, types included. A name counts once however many files of
// bin/ import it; a namespace (`* as`), a dynamic import or a wildcard re-export would hide
// the names behind it, so none is allowed.

import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { test } from 'node:test';

const ROOT = resolve(import.meta.dirname, '../..');
const BIN = join(ROOT, 'bin');
const ENTRY = 'lib/internal.ts';
/** The most names bin/ may import from lib/; lower it as the door narrows, never raise it. */
const MOST_NAMES = 26;

// Every static import and re-export with what it names, type-only ones included.
const STATIC_IMPORT = /(?:^|\n)\s*(?:import|export)\s([^'"]*?)\s*from\s+'(\.[^']+)'/g;
const DYNAMIC_IMPORT = /import\(\s*'(\.[^']+)'\s*\)/g;

interface LibImport {
  file: string;
  target: string;
  clause: string;
}

function libImports(): { imports: LibImport[]; dynamic: string[] } {
  const imports: LibImport[] = [];
  const dynamic: string[] = [];
  for (const name of readdirSync(BIN, { recursive: true, encoding: 'utf8' })) {
    if (!name.endsWith('.ts')) continue;
    const file = join(BIN, name);
    const text = readFileSync(file, 'utf8');
    const targetOf = (path: string): string =>
      relative(ROOT, resolve(dirname(file), path.replace(/\.js$/, '.ts'))).replaceAll('\\', '/');
    for (const match of text.matchAll(STATIC_IMPORT)) {
      const target = targetOf(match[2] ?? '');
      if (target.startsWith('lib/')) imports.push({ file: `bin/${name}`, target, clause: match[1] ?? '' });
    }
    for (const match of text.matchAll(DYNAMIC_IMPORT)) {
      if (targetOf(match[1] ?? '').startsWith('lib/')) dynamic.push(`bin/${name}`);
    }
  }
  return { imports, dynamic };
}

/** The names an import clause takes: `{ a, type B, c as d }` gives a, B and c; `* as x` gives `*`. */
function namesOf(clause: string): string[] {
  const list = /\{([^}]*)\}/.exec(clause)?.[1];
  if (list === undefined) return ['*'];
  return list
    .split(',')
    .map(
      (part) =>
        part
          .trim()
          .replace(/^type\s+/, '')
          .split(/\s+as\s+/)[0] ?? '',
    )
    .filter((name) => name !== '');
}

const { imports, dynamic } = libImports();

test(`bin/ imports lib/ through ${ENTRY} only`, () => {
  const elsewhere = imports.filter((entry) => entry.target !== ENTRY).map((entry) => `${entry.file} → ${entry.target}`);
  assert.deepEqual(elsewhere, []);
  assert.deepEqual(dynamic, [], 'a dynamic import of lib/');
});

test(`bin/ imports at most ${MOST_NAMES} names from lib/, each by name`, () => {
  const names = new Set(imports.flatMap((entry) => namesOf(entry.clause)));
  assert.ok(!names.has('*'), 'a namespace import or a default import of lib/');
  assert.ok(names.size <= MOST_NAMES, `${names.size} names: ${[...names].sort().join(', ')}`);
});

test(`${ENTRY} names what it re-exports: no wildcard`, () => {
  assert.doesNotMatch(readFileSync(join(ROOT, ENTRY), 'utf8'), /export\s*\*/);
});
