// No module of lib/, bin/ or scripts/ imports itself through others. A cycle loads one
// module half-initialised: a class declared in it is in its temporal dead zone for the
// other, and loading fails with "Cannot access 'X' before initialization". And the doors
// between the parts: bin/ reaches the library through its two entries only, and bench/
// never reaches into the tests.

import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { test } from 'node:test';

const ROOT = resolve(import.meta.dirname, '../..');
// `import … from './x.js'`, `export … from '../x.js'`, and `import('./x.js')`. Type-only
// imports count too: erased at run time, they still tie two files to each other for a reader.
const RELATIVE_IMPORT = /(?:^|\n)\s*(?:import|export)\s+[^'"]*?from\s+'(\.[^']+)'|import\('(\.[^']+)'\)/g;

function sources(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.ts'))
    .map((name) => join(ROOT, dir, name));
}

/** Each module → the modules it imports at run time (paths relative to the repository). */
function importGraph(files: readonly string[]): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const text = readFileSync(file, 'utf8');
    const targets: string[] = [];
    for (const match of text.matchAll(RELATIVE_IMPORT)) {
      const specifier = match[1] ?? match[2] ?? '';
      targets.push(relative(ROOT, resolve(dirname(file), specifier.replace(/\.js$/, '.ts'))));
    }
    graph.set(relative(ROOT, file), targets);
  }
  return graph;
}

/** Every cycle, each once, as the list of modules from its first to itself again. */
function findCycles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  const cycles: string[][] = [];
  const seen = new Set<string>();
  const done = new Set<string>();
  const path: string[] = [];
  const visit = (node: string): void => {
    if (done.has(node)) return;
    const at = path.indexOf(node);
    if (at !== -1) {
      const cycle = [...path.slice(at), node];
      const key = [...cycle.slice(0, -1)].sort().join(' ');
      if (!seen.has(key)) cycles.push(cycle);
      seen.add(key);
      return;
    }
    path.push(node);
    for (const next of graph.get(node) ?? []) visit(next);
    path.pop();
    done.add(node);
  };
  for (const node of graph.keys()) visit(node);
  return cycles;
}

test('findCycles finds a cycle of two and one of three, and none in a tree', () => {
  assert.deepEqual(
    findCycles(
      new Map([
        ['a', ['b']],
        ['b', ['a']],
      ]),
    ),
    [['a', 'b', 'a']],
  );
  assert.deepEqual(
    findCycles(
      new Map([
        ['a', ['b']],
        ['b', ['c']],
        ['c', ['a']],
      ]),
    ),
    [['a', 'b', 'c', 'a']],
  );
  assert.deepEqual(
    findCycles(
      new Map([
        ['a', ['b', 'c']],
        ['b', ['c']],
        ['c', []],
      ]),
    ),
    [],
  );
});

test('lib/, bin/ and scripts/ have no import cycle', () => {
  const graph = importGraph([...sources('lib'), ...sources('bin'), ...sources('scripts')]);
  assert.ok(graph.size > 20, `read the modules (${graph.size})`);
  assert.deepEqual(
    findCycles(graph).map((cycle) => cycle.join(' → ')),
    [],
  );
});

// Every import and export, type-only ones too: which module a file reaches is the question here.
const ANY_IMPORT = /(?:^|\n)\s*(?:import|export)\s[^'"]*?from\s+'(\.[^']+)'|import\('(\.[^']+)'\)/g;

/** The modules of the repository `file` names in an import or export, relative to the repository. */
function reached(file: string): string[] {
  return [...readFileSync(file, 'utf8').matchAll(ANY_IMPORT)].map((match) =>
    relative(ROOT, resolve(dirname(file), match[1] ?? match[2] ?? '')),
  );
}

test('bench/ never imports test/', () => {
  const bench = sources('bench').filter((file) => !file.includes('/node_modules/'));
  assert.ok(bench.length > 10, `read bench/ (${bench.length})`);
  for (const file of bench) {
    for (const target of reached(file))
      assert.ok(!target.startsWith('test/'), `${relative(ROOT, file)} imports ${target}`);
  }
});
