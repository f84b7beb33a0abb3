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
/** The most names bin/ may import from lib/; lower it as the door narrows; raise it only where a name replaces a copy of a library mechanism in bin/. */
const MOST_NAMES = 17;
/**
 * Why each name that passes the door is the library's to give: what the command does with it,
 * and why that is neither the command's own (it would move to bin/) nor one job with another
 * name. A name that starts to pass needs its line here; a name that stops passing loses it.
 */
const WHY: Record<string, string> = {
  createHandler: "a book's handler, and the answer for a path that names no book: the public constructor",
  mountHandlers: "a configuration's books behind one listener, chosen by base path: public, as createHandler",
  buildSharedParts:
    "one login throttle and one bound on hash checks for a process's handlers: a worker's a replica over its channel, the primary's served to them",
  resolveOptions:
    "createHandler's options resolved: the defaults and app names --help shows, a text judged by their rules, the mapping an app names",
  HandlerOptions: "createHandler's options, which the table of settings feeds: public",
  Credentials: 'what a credentials file or the environment gives createHandler: public',
  openBook: "a book's file recognised, validated and searched, as check, a guard and the service open it",
  isNotReadableNow:
    "the SQLite answers that pass once the application acts: the handler's 500 gets Retry-After, the command says the state (its opening's own PRAGMA meets them too)",
  errorCode: 'the code of a Node or SQLite error, read alike by the library and the command',
  REFUSED_BY_SETTING:
    "the code of a book its application's setting refuses: the command's stand-in answers with it, so that the search's 500 has Retry-After as the library's own",
  credentialsFromPairs:
    "user:secret pairs checked into credentials, the problem with its entry (the command names the line; createHandler's TypeError an index); which secret is a hash is the library's format",
  hashPassword: "hash-password's scrypt hash, in the format the login reads",
  Metrics: "a process's counts, added up over the workers and written for /metrics",
  protectServer: "the library's edge on a listener: a connection's bound, protocol errors as JSON",
  send: "the one writer of an answer, its headers and its close with a body unread: the admin listener's answers as the API's",
  ERRORS: 'the errors with their status, code and text, which the admin listener answers as the API does',
  Answered:
    "what the listener's edge hands the access log of each response (its milliseconds, what the handler learnt of it, its path)",
};
/**
 * Types bin/ derives from a name it imports from lib/ instead of importing the type itself:
 * what each file writes, and the type of lib/ it stands for. Take one out as its need goes;
 * never add one (import the type, and count it).
 */
const DERIVED: Record<string, string> = {
  'bin/books/status.ts: ReturnType<typeof createHandler>': 'BookingSearchHandler',
  'bin/config/credentials.ts: ReturnType<typeof credentialsFromPairs>': 'CredentialsProblem',
  'bin/files/book-search.ts: Parameters<typeof createHandler>': 'SearchTurns',
  'bin/files/book-search.ts: Parameters<typeof openBook>': 'BookTables',
  'bin/serve/handlers.ts: Parameters<typeof createHandler>': 'SharedParts',
};

// Every static import and re-export with what it names, type-only ones included.
const STATIC_IMPORT = /(?:^|\n)\s*(?:import|export)\s([^'"]*?)\s*from\s+'(\.[^']+)'/g;
const DYNAMIC_IMPORT = /import\(\s*'(\.[^']+)'\s*\)/g;

interface LibImport {
  file: string;
  target: string;
  clause: string;
}

function libImports(): { imports: LibImport[]; dynamic: string[]; texts: Map<string, string> } {
  const imports: LibImport[] = [];
  const dynamic: string[] = [];
  const texts = new Map<string, string>();
  for (const name of readdirSync(BIN, { recursive: true, encoding: 'utf8' })) {
    if (!name.endsWith('.ts')) continue;
    const file = join(BIN, name);
    const text = readFileSync(file, 'utf8');
    texts.set(`bin/${name}`, text);
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
  return { imports, dynamic, texts };
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

const { imports, dynamic, texts } = libImports();

/** Where a file of bin/ derives a type from a name it imports from lib/: `file: ReturnType<typeof name>`, `file: Name['…']`. */
function derivations(): string[] {
  const found: string[] = [];
  for (const [file, text] of texts) {
    for (const name of new Set(
      imports.filter((entry) => entry.file === file).flatMap((entry) => namesOf(entry.clause)),
    )) {
      const derived = new RegExp(
        `\\b(Parameters|ReturnType|InstanceType|ConstructorParameters)<\\s*typeof\\s+${name}\\b|\\b${name}\\['`,
        'g',
      );
      for (const match of text.matchAll(derived)) {
        found.push(`${file}: ${match[1] === undefined ? `${name}['…']` : `${match[1]}<typeof ${name}>`}`);
      }
    }
  }
  return [...new Set(found)].sort();
}

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

test('each name that passes the door has its reason written here, and none that no longer passes', () => {
  const names = [...new Set(imports.flatMap((entry) => namesOf(entry.clause)))].sort();
  assert.deepEqual(names, Object.keys(WHY).sort(), 'a new name needs its line in WHY; a name gone takes its line out');
});

test(`${ENTRY} names what it re-exports: no wildcard`, () => {
  assert.doesNotMatch(readFileSync(join(ROOT, ENTRY), 'utf8'), /export\s*\*/);
});

test('bin/ derives no type of lib/ from a name that passes the door, beyond the few listed', () => {
  assert.deepEqual(derivations(), Object.keys(DERIVED).sort());
});
