// A book's file once open (lib/book.ts): what check is told of it, the book served with its
// app recognised, a cookie judged by another process held to, and a schema changed under
// the connection noticed before any statement of a search reads the file.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { openBook } from '../../lib/book.js';
import type { SearchQuery } from '../../lib/query.js';
import { buildDatabase, fixtureSql, MARCH_COFFEE, openFixture, openReadOnly } from '../support/helpers.js';

const OWN = { app: undefined, tables: {} };
// fixtures/bookings.sql: MARCH_COFFEE is its answer.
const MARCH: SearchQuery = {
  von: '2026-03-01',
  bis: '2026-03-31',
  betragCents: -435,
  toleranzCents: 0,
  waehrung: 'EUR',
  limit: 10,
};

test('a file of the own schema is served as own, its searches answered', (t) => {
  const served = openBook(openFixture(t), OWN).serve();
  assert.equal(served.app, 'own');
  assert.equal(served.unbounded(), undefined);
  assert.equal(served.search()(MARCH).count, MARCH_COFFEE.anzahl);
});

test('a file judged at another schema cookie is not served: SQLITE_SCHEMA, opened again', (t) => {
  const book = openBook(openFixture(t), OWN);
  const { schemaVersion } = book.serve();
  assert.throws(() => book.serve(schemaVersion + 1), { code: 'SQLITE_SCHEMA' });
  assert.equal(book.serve(schemaVersion).schemaVersion, schemaVersion);
});

test('a schema changed under the connection is noticed once, and the search refused, before it reads', (t) => {
  const file = buildDatabase(t);
  const changes: string[] = [];
  const search = openBook(openReadOnly(t, file), OWN)
    .serve()
    .search({ changed: () => changes.push('changed') });
  const writer = new Database(file);
  writer.exec('CREATE TABLE unrelated (id INTEGER)');
  writer.close();
  assert.throws(() => search(MARCH), { code: 'SQLITE_SCHEMA' });
  assert.deepEqual(changes, ['changed']);
});

test('check is told why a file does not fit, where serving it throws', (t) => {
  const book = openBook(openFixture(t, ['schema.sql']), { app: 'gnucash', tables: {} });
  const lines: string[] = [];
  assert.equal(book.examine().describe(lines), false);
  assert.match(lines.join('\n'), /Tables of GnuCash: does not fit/);
  assert.throws(() => book.serve(), /db does not fit the tables of GnuCash/);
});

test('a file of another application: the advice names the app as its opener sets it, createHandler’s option by default', (t) => {
  const db = openFixture(t, ['schema.sql']);
  const advice = (book: Parameters<typeof openBook>[1]): string[] => {
    const lines: string[] = [];
    openBook(db, book).examine().describe(lines);
    const hint = lines.filter((line) => line.startsWith('The file has'));
    try {
      openBook(db, book).serve();
    } catch (error: unknown) {
      hint.push((error as Error).message.replace(/^.*\(/, '('));
    }
    return hint;
  };
  assert.deepEqual(advice({ app: 'gnucash', tables: {} }), [
    'The file has the tables of the own schema: serve it with app: "own".',
    '(the file has the tables of the own schema: serve it with app: "own")',
  ]);
  assert.deepEqual(advice({ app: 'gnucash', tables: {}, appSetting: (app) => `app = ${app}` }), [
    'The file has the tables of the own schema: serve it with app = own.',
    '(the file has the tables of the own schema: serve it with app = own)',
  ]);
});

test('a GnuCash book that GnuCash holds open in rollback-journal mode is refused within one read transaction before its tables are recognised: any read fails a save it meets, so served and checked, one shared lock is taken', (t) => {
  const file = buildDatabase(t, ['gnucash.sql']);
  const writer = new Database(file);
  t.after(() => writer.close());
  writer.exec("INSERT INTO gnclock VALUES ('kasse-pc', 4242)");
  for (const app of ['gnucash', undefined]) {
    const statements: string[] = [];
    const traced = (): Database.Database => {
      const db = new Database(file, { readonly: true, verbose: (sql) => statements.push(String(sql)) });
      t.after(() => db.close());
      return db;
    };
    // One read transaction, the first and the last statement: its shared lock the only one taken.
    const inOne = (what: string): void => {
      assert.deepEqual([statements[0], statements.at(-1)], ['BEGIN', 'COMMIT'], `${what}: ${statements.join('; ')}`);
      assert.ok(!statements.some((sql) => /\bFROM (?:transactions|splits)\b/.test(sql)), `${what}: no booking read`);
      statements.length = 0;
    };
    assert.throws(() => openBook(traced(), { app, tables: {} }).serve(), { code: 'BOOKING_SEARCH_APP_SETTING' });
    inOne(`serve, app ${app}`);
    const lines: string[] = [];
    assert.equal(openBook(traced(), { app, tables: {} }).examine().describe(lines), false);
    inOne(`check, app ${app}`);
    assert.match(lines.join('\n'), /^Mapping: GnuCash .*\nTables of GnuCash: fit .*\nData: refused while a setting/);
  }
});

test("a book named like one an application refuses is not refused by that setting when its tables are not that application's", (t) => {
  // GnuCash's tables but one column (an older version's): the misfit is told, not the setting.
  const older = buildDatabase(t, ['gnucash.sql']);
  const writer = new Database(older);
  writer.exec("ALTER TABLE splits DROP COLUMN reconcile_state; INSERT INTO gnclock VALUES ('pc', 1)");
  writer.close();
  const misfits = [
    ['gnucash', /'splits' is missing column 'reconcile_state'/],
    [undefined, /the tables of GnuCash, but not every column/],
  ] as const;
  for (const [app, misfit] of misfits) {
    assert.throws(
      () => openBook(openReadOnly(t, older), { app, tables: {} }).serve(),
      (error: Error & { code?: string }) => error.code === undefined && misfit.test(error.message),
    );
    const lines: string[] = [];
    assert.equal(openBook(openReadOnly(t, older), { app, tables: {} }).examine().describe(lines), false);
    assert.match(lines.join('\n'), misfit);
    assert.doesNotMatch(lines.join('\n'), /refused while a setting/);
  }
  // The own schema, its bookings under main.kasse, beside GnuCash's tables held open: served as own.
  const both = buildDatabase(t, ['gnucash.sql']);
  const own = new Database(both);
  for (const name of ['schema.sql', 'bookings.sql']) own.exec(fixtureSql(name).replace(/\bentries\b/g, 'kasse'));
  own.exec("INSERT INTO gnclock VALUES ('pc', 1)");
  own.close();
  assert.equal(
    openBook(openReadOnly(t, both), { app: undefined, tables: { entries: 'main.kasse' } }).serve().app,
    'own',
  );
});

test('a GnuCash book in rollback-journal mode that a GnuCash session has open (its row in gnclock) is refused until GnuCash closes it or it is in WAL mode: its saves would fail', (t) => {
  const file = buildDatabase(t, ['gnucash.sql']);
  const writer = new Database(file);
  t.after(() => writer.close());
  const refusal =
    'db cannot be served exactly: GnuCash has the book open (its lock: kasse-pc, process 4242) in SQLite\'s rollback-journal mode, in which a GnuCash save that meets a search fails at once ("database is locked") and GnuCash\'s session then fails its later saves too: it is not searched while GnuCash has it open. Close GnuCash and switch the book to WAL once (PRAGMA journal_mode=WAL in sqlite3; docs/applications.md, GnuCash). A lock left by a GnuCash that did not close the book (a crash) goes once GnuCash opens it ("Open Anyway") and closes it.';
  assert.doesNotThrow(() => openBook(openReadOnly(t, file), { app: 'gnucash', tables: {} }).serve(), 'GnuCash closed');
  writer.exec("INSERT INTO gnclock VALUES ('kasse-pc', 4242)");
  // The code of a setting's refusal: the command serves the file again once it no longer holds.
  assert.throws(() => openBook(openReadOnly(t, file), { app: 'gnucash', tables: {} }).serve(), {
    message: refusal,
    code: 'BOOKING_SEARCH_APP_SETTING',
  });
  writer.exec('DELETE FROM gnclock');
  assert.doesNotThrow(() => openBook(openReadOnly(t, file), { app: 'gnucash', tables: {} }).serve(), 'GnuCash closed');
  writer.exec("INSERT INTO gnclock VALUES ('kasse-pc', 4242)");
  writer.pragma('journal_mode = WAL');
  assert.doesNotThrow(
    () => openBook(openReadOnly(t, file), { app: 'gnucash', tables: {} }).serve(),
    'WAL, GnuCash open',
  );
});

test("a GnuCash book in rollback-journal mode harms GnuCash's saves: said with the command that switches it to WAL where the book's path is given as a shell word, else of 'the book'; a WAL book or one in memory, nothing", (t) => {
  const file = buildDatabase(t, ['gnucash.sql']);
  const sentence = (command: string): string =>
    `the book is in SQLite's rollback-journal mode: it is not searched while GnuCash has it open, for a GnuCash save that meets a search fails at once ("database is locked") and GnuCash's session then fails its later saves too: run check and the service with GnuCash closed, and switch the book to WAL once${command} (docs/applications.md, GnuCash)`;
  const rollback = openBook(openReadOnly(t, file), { app: 'gnucash', tables: {} }).serve();
  assert.deepEqual(rollback.harms(), [sentence(' (PRAGMA journal_mode=WAL in sqlite3)')]);
  assert.deepEqual(rollback.harms("'/srv/Kasse Nord.gnucash'"), [
    sentence(': sqlite3 \'/srv/Kasse Nord.gnucash\' "PRAGMA journal_mode=WAL"'),
  ]);
  const writer = new Database(file);
  writer.pragma('journal_mode = WAL');
  const wal = openBook(openReadOnly(t, file), { app: 'gnucash', tables: {} }).serve();
  writer.close();
  assert.deepEqual(wal.harms('kasse.gnucash'), []);
  const memory = new Database(':memory:');
  t.after(() => memory.close());
  memory.exec(fixtureSql('gnucash.sql'));
  assert.deepEqual(openBook(memory, { app: 'gnucash', tables: {} }).serve().harms(), []);
  assert.deepEqual(openBook(openFixture(t), OWN).serve().harms('kasse.sqlite'), [], 'the own schema harms nothing');
});
