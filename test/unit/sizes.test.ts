// A file of lib/ or bin/ holds one job and a function one step: at most 300 lines a file
// and 80 lines a function, from its first line to its last (a factory whose closures make
// it longer is a class, or its closures functions of their own). Past that, a file or a
// function is split by job.

import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { test } from 'node:test';
import ts from 'typescript';

const ROOT = resolve(import.meta.dirname, '../..');
const MAX_FILE_LINES = 300;
const MAX_FUNCTION_LINES = 80;

function sources(): string[] {
  return ['lib', 'bin'].flatMap((dir) =>
    readdirSync(join(ROOT, dir), { recursive: true, encoding: 'utf8' })
      .filter((name) => name.endsWith('.ts'))
      .map((name) => join(dir, name)),
  );
}

/** Every function longer than `limit` lines in `text` (from its first line to its last), as `file:line name (lines)`. */
function longFunctions(file: string, text: string, limit: number): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const lineOf = (position: number): number => source.getLineAndCharacterOfPosition(position).line;
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body !== undefined) {
      const lines = lineOf(node.end) - lineOf(node.getStart()) + 1;
      if (lines > limit) {
        const name = node.name?.getText(source) ?? '(anonymous)';
        found.push(`${file}:${lineOf(node.getStart()) + 1} ${name} (${lines} lines)`);
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

test('longFunctions finds a function over the limit and passes one within it', () => {
  const body = (n: number): string => `function f() {\n${'  x();\n'.repeat(n)}}\n`;
  assert.deepEqual(longFunctions('a.ts', body(3), 5), []);
  assert.deepEqual(longFunctions('a.ts', body(4), 5), ['a.ts:1 f (6 lines)']);
});

test(`every file of lib/ and bin/ is at most ${MAX_FILE_LINES} lines`, () => {
  const long = sources()
    .map((file) => [file, readFileSync(join(ROOT, file), 'utf8').split('\n').length - 1] as const)
    .filter(([, lines]) => lines > MAX_FILE_LINES)
    .map(([file, lines]) => `${file} (${lines} lines)`);
  assert.deepEqual(long, []);
});

test(`every function of lib/ and bin/ is at most ${MAX_FUNCTION_LINES} lines`, () => {
  const long = sources().flatMap((file) =>
    longFunctions(file, readFileSync(join(ROOT, file), 'utf8'), MAX_FUNCTION_LINES),
  );
  assert.deepEqual(long, []);
});
