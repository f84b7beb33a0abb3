// diffBooks: what a reload changes, book by book; and what the command says of a book's app,
// as it is written where the book is configured. The reload itself (SIGHUP to the command,
// a search in flight kept) is test/cli-books.test.ts's.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { serveBooks } from '../../bin/books/serve-books.js';
import { type BookConfig, diffBooks, inTermsOfBook, sameUsers } from '../../bin/config/book-config.js';
import { appSetting, openBookFile } from '../../bin/files/book-search.js';
import { recognition } from '../../bin/serve/greeting.js';
import { openFixture } from '../support/helpers.js';

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

test('a book’s app is named as it is written where the book is configured: the flag, its variable or the file’s key', (t) => {
  const where = ['flag', 'environment', 'file', undefined] as const;
  assert.deepEqual(
    where.map((appIn) => appSetting(book('a', { appIn }), 'own')),
    ['--app own', 'BOOKING_SEARCH_APP=own', 'app = own', '--app own'],
  );
  // What the library advises for a file under the wrong app names it so, serving it and checking it.
  const db = openFixture(t, ['schema.sql']);
  for (const appIn of where) {
    const opened = openBookFile(db, { app: 'mmex', tables: {}, appIn });
    const lines: string[] = [];
    opened.examine().describe(lines);
    const said = `the file has the tables of the own schema: serve it with ${appSetting({ appIn }, 'own')}`;
    assert.throws(() => opened.serve(), { message: new RegExp(`\\(${said}\\)$`) });
    assert.ok(lines.includes(`T${said.slice(1)}.`), lines.join('\n'));
  }
  assert.equal(
    inTermsOfBook(book('a', { appIn: 'file', dbOrigin: 'office.conf:12: book a' }), 'cannot open database x'),
    'office.conf:12: book a: cannot open database x',
    'placed where its db was written',
  );
});

test('what is said of a book recognised by its tables: the same at the start and later; the own schema, the default, only after an application', () => {
  const inFile = book('weber', { appIn: 'file' });
  assert.equal(
    recognition(inFile, 'mmex'),
    "recognised as Money Manager Ex's file by its tables, served as with app = mmex",
  );
  assert.equal(
    recognition(book('kasse'), 'gnucash', 'mmex'),
    "recognised as GnuCash's file by its tables, served as with --app gnucash",
  );
  assert.equal(recognition(inFile, 'own'), undefined, 'at the start, or added by a reload');
  assert.equal(recognition(inFile, 'mmex', 'mmex'), undefined, 'unchanged');
  assert.equal(recognition(inFile, 'own', 'own'), undefined);
  assert.equal(
    recognition(inFile, 'own', 'mmex'),
    "no longer recognised as Money Manager Ex's file: served with the own schema",
  );
});

test('a reload after a stop began (dropReloads) opens no book and changes nothing', async () => {
  let built = 0;
  const service = serveBooks([], [], {
    build: () => {
      built += 1;
      throw new Error('built after the stop began');
    },
    fallback: () => () => {},
    log: () => {},
    logError: () => {},
  });
  await service.ready;
  service.dropReloads();
  await assert.rejects(service.reload([book('neu')], []), /^Error: the service is stopping$/);
  assert.equal(built, 0);
  assert.deepEqual(service.books(), []);
  service.close();
});
