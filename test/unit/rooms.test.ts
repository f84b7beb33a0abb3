// The rooms of bin/ as CONTRIBUTING.md lists them (its table "The rooms of bin/"): every
// folder of bin/ is a room of the table and opens with its door; a room imports only the
// rooms listed before it, through their door; bin/ holds at most three files of its own,
// and no code is written in a string for a thread or process.

import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { test } from 'node:test';

const ROOT = resolve(import.meta.dirname, '../..');
const BIN = join(ROOT, 'bin');
// Every import and re-export, type-only ones included: a type names a room's internals too.
const RELATIVE_IMPORT = /(?:^|\n)\s*(?:import|export)\s[^'"]*?from\s+'(\.[^']+)'|import\('(\.[^']+)'\)/g;

function roomsOfContributing(): string[] {
  const text = readFileSync(join(ROOT, 'CONTRIBUTING.md'), 'utf8');
  const section = text.split('## The rooms of bin/')[1]?.split('\n## ')[0] ?? '';
  return [...section.matchAll(/^\| `([a-z-]+)` \|/gm)].map((match) => match[1] ?? '');
}

function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(RELATIVE_IMPORT)].map((match) =>
    relative(BIN, resolve(dirname(file), (match[1] ?? match[2] ?? '').replace(/\.js$/, '.ts'))),
  );
}

const rooms = roomsOfContributing();
const folders = readdirSync(BIN).filter((name) => statSync(join(BIN, name)).isDirectory());

test('every folder of bin/ is a room of CONTRIBUTING.md, and every room a folder', () => {
  assert.ok(rooms.length >= 5, `the table lists ${rooms.length} rooms`);
  assert.deepEqual([...folders].sort(), [...rooms].sort());
});

test('bin/ holds at most three files of its own', () => {
  const files = readdirSync(BIN).filter((name) => statSync(join(BIN, name)).isFile());
  assert.ok(files.length <= 3, files.join(', '));
});

test('each room opens with its door: index.ts, a comment first', () => {
  for (const room of rooms) {
    const door = readFileSync(join(BIN, room, 'index.ts'), 'utf8');
    assert.match(door, /^\/\/ \S/, `bin/${room}/index.ts`);
  }
});

test('a room imports only the rooms listed before it, through their door', () => {
  const wrong: string[] = [];
  for (const room of rooms) {
    for (const name of readdirSync(join(BIN, room)).filter((file) => file.endsWith('.ts'))) {
      for (const target of importsOf(join(BIN, room, name))) {
        const [targetRoom, file] = target.split(sep);
        if (targetRoom === room || targetRoom === '..' || file === undefined) continue;
        const before = rooms.indexOf(targetRoom ?? '') < rooms.indexOf(room);
        if (!before || file !== 'index.ts') wrong.push(`bin/${room}/${name} → bin/${target}`);
      }
    }
  }
  assert.deepEqual(wrong, []);
});

test('the launcher reaches the rooms through their doors', () => {
  const wrong = importsOf(join(BIN, 'cli.ts')).filter((target) => !target.endsWith(`${sep}index.ts`));
  assert.deepEqual(wrong, []);
});

test('no code for a thread or process is written in a string (eval: true)', () => {
  for (const dir of ['lib', 'bin']) {
    for (const name of readdirSync(join(ROOT, dir), { recursive: true, encoding: 'utf8' })) {
      if (!name.endsWith('.ts')) continue;
      assert.doesNotMatch(readFileSync(join(ROOT, dir, name), 'utf8'), /eval:\s*true/, `${dir}/${name}`);
    }
  }
});
