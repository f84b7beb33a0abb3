// diffBooks: what a reload changes, book by book. The reload itself (SIGHUP to the command,
// a search in flight kept) is test/cli-books.test.ts's.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type BookConfig, diffBooks, sameUsers } from '../../bin/config/book-config.js';

const book = (name: string, more: Partial<BookConfig> = {}): BookConfig => ({
  name,
  db: `/srv/${name}/kasse.sqlite`,
  app: undefined,
  tables: {},
  basePath: `/${name}`,
  users: undefined,
  ...more,
});

const names = (books: ReadonlyArray<BookConfig | { after: BookConfig }>): string[] =>
  books.map((entry) => ('after' in entry ? entry.after.name : entry.name));

test('the same books → everything kept', () => {
  const books = [book('a'), book('b', { users: ['x', 'y'], tables: { entries: 'kasse' } })];
  const change = diffBooks(
    books,
    books.map((b) => ({ ...b })),
  );
  assert.deepEqual(names(change.kept), ['a', 'b']);
  assert.deepEqual([change.added, change.removed, change.replaced, change.newUsers], [[], [], [], []]);
});

test('a fourth book added and one removed; the others kept', () => {
  const change = diffBooks([book('a'), book('b'), book('c')], [book('a'), book('c'), book('d')]);
  assert.deepEqual(names(change.added), ['d']);
  assert.deepEqual(names(change.removed), ['b']);
  assert.deepEqual(names(change.kept), ['a', 'c']);
  assert.deepEqual(change.replaced, []);
});

test('another file, mapping, table name or base path → replaced; other users only → newUsers', () => {
  const before = [book('a'), book('b'), book('c'), book('d'), book('e'), book('f', { users: ['x'] })];
  const after = [
    book('a', { db: '/srv/a/neu.sqlite' }),
    book('b', { app: 'mmex' }),
    book('c', { tables: { entries: 'kasse' } }),
    book('d', { basePath: '/dd' }),
    book('e', { users: ['x'] }),
    book('f', { users: ['x', 'y'] }),
  ];
  const change = diffBooks(before, after);
  assert.deepEqual(names(change.replaced), ['a', 'b', 'c', 'd']);
  assert.deepEqual(names(change.newUsers), ['e', 'f']);
  assert.equal(change.replaced[0]?.before.db, '/srv/a/kasse.sqlite');
});

test('a renamed book is one removed and one added', () => {
  const change = diffBooks([book('a')], [{ ...book('a'), name: 'A' }]);
  assert.deepEqual([names(change.removed), names(change.added)], [['a'], ['A']]);
});

test('sameUsers: the same names in any order; every user (undefined) is not a list', () => {
  assert.equal(sameUsers(['a', 'b'], ['b', 'a']), true);
  assert.equal(sameUsers(['a'], ['a', 'b']), false);
  assert.equal(sameUsers(['a', 'a'], ['a', 'b']), false);
  assert.equal(sameUsers(undefined, undefined), true);
  assert.equal(sameUsers(undefined, ['a']), false);
});
