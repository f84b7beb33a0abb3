// createHandler checks at creation that `db` behaves like better-sqlite3 where the search
// relies on it; a look-alike that differs is refused with a TypeError naming the problem,
// so no client ever gets the invalid JSON it would have produced.

import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { type TestContext, test } from 'node:test';
import Database from 'better-sqlite3';
import Libsql from 'libsql';
import { validateDatabase } from '../../lib/database-handle.js';
import { createHandler } from '../../lib/index.js';
import { ownSchema } from '../../lib/mapping.js';
import { buildDatabase, CREDENTIALS, openFixture, serve, tempDir } from '../support/helpers.js';

// What createHandler says about libsql 0.5's Database; docs/embedding.md quotes it.
const LIBSQL_REFUSED =
  'db must behave like better-sqlite3: a plucked count must be the number 2, not an object with keys ["count(*)","_metadata"] (see docs/embedding.md on other drivers)';

test('libsql\'s Database is refused at creation: its plucked count is an object (was: 200 with {"anzahl":[object Object],…})', (t) => {
  const db = new Libsql(buildDatabase(t), { readonly: true });
  t.after(() => db.close());
  assert.throws(() => createHandler(db as unknown as Database.Database, CREDENTIALS), {
    name: 'TypeError',
    message: LIBSQL_REFUSED,
  });
});

test('docs/embedding.md quotes the message that refuses libsql', () => {
  const embedding = readFileSync(new URL('../../docs/embedding.md', import.meta.url), 'utf8');
  assert.ok(embedding.includes(LIBSQL_REFUSED), 'docs/embedding.md quotes the TypeError word for word');
});

test("node:sqlite's DatabaseSync is refused at creation, by name, saying what to pass instead", (t) => {
  const db = new DatabaseSync(buildDatabase(t), { readOnly: true });
  t.after(() => db.close());
  assert.throws(() => createHandler(db as never, CREDENTIALS), {
    name: 'TypeError',
    message:
      "db is node:sqlite's DatabaseSync, which createHandler does not take: open the file with better-sqlite3 instead (new Database(file, { readonly: true }))",
  });
});

test('a better-sqlite3 Database with safeIntegers on is refused: amounts would be BigInts', (t) => {
  const db = openFixture(t).defaultSafeIntegers(true);
  assert.throws(() => createHandler(db, CREDENTIALS), {
    name: 'TypeError',
    message: 'db must return numbers, not BigInts: turn safeIntegers off (db.defaultSafeIntegers(false))',
  });
});

test('a better-sqlite3 Database passes the check and answers valid JSON', async (t) => {
  const origin = await serve(t, createHandler(openFixture(t), CREDENTIALS));
  const reply = await fetch(`${origin}/api/v1/buchungen?von=2026-03-01&bis=2026-03-31&betrag=-12.5&limit=1`, {
    headers: { authorization: `Basic ${Buffer.from('kasse:ge:heim').toString('base64')}` },
  });
  assert.equal(reply.status, 200);
  const body = (await reply.json()) as { anzahl: unknown };
  assert.equal(typeof body.anzahl, 'number');
});

/** A hand-made handle over a real better-sqlite3 database, with one part replaced. */
function lookAlike(t: TestContext, change: (real: Database.Database) => object): object {
  const real = openFixture(t);
  return {
    open: real.open,
    prepare: (sql: string) => real.prepare(sql),
    get inTransaction() {
      return real.inTransaction;
    },
    ...change(real),
  };
}

test('each way a look-alike handle differs from better-sqlite3 is named', (t) => {
  const statement = (real: Database.Database, sql: string, replace: Record<string, unknown>): object => {
    const inner = real.prepare(sql);
    return {
      pluck: () => ({ ...bound(inner.pluck()), ...replace }),
      raw: () => ({ ...bound(inner.raw()), ...replace }),
      run: () => inner.run(),
    };
  };
  const bound = (s: Database.Statement): object => ({ get: s.get.bind(s), all: s.all.bind(s) });
  const cases: Array<[string, unknown, string]> = [
    ['undefined', undefined, 'db must be a better-sqlite3 Database'],
    ['a string', 'kasse.sqlite', 'db must be a better-sqlite3 Database'],
    [
      'no prepare',
      lookAlike(t, () => ({ prepare: undefined })),
      'db must be a better-sqlite3 Database (it has no prepare())',
    ],
    [
      'no inTransaction',
      lookAlike(t, () => ({ inTransaction: undefined })),
      'db must be a better-sqlite3 Database (it has no inTransaction property)',
    ],
    [
      'no open',
      lookAlike(t, () => ({ open: undefined })),
      'db must be a better-sqlite3 Database (it has no open property)',
    ],
    ['closed', lookAlike(t, () => ({ open: false })), 'db must be open'],
    [
      'prepare throws',
      lookAlike(t, () => ({
        prepare: () => {
          throw new Error('near "SELECT": syntax error');
        },
      })),
      'db must be a better-sqlite3 Database (a test query failed: near "SELECT": syntax error)',
    ],
    [
      'inTransaction does not follow BEGIN',
      lookAlike(t, () => ({ inTransaction: false })),
      'db must behave like better-sqlite3: inTransaction must be true after BEGIN',
    ],
    [
      'pluck gives a row object',
      lookAlike(t, (real) => ({ prepare: (sql: string) => statement(real, sql, { get: () => ({ 'count(*)': 2 }) }) })),
      'db must behave like better-sqlite3: a plucked count must be the number 2, not an object with keys ["count(*)"] (see docs/embedding.md on other drivers)',
    ],
    [
      'pluck gives a string',
      lookAlike(t, (real) => ({ prepare: (sql: string) => statement(real, sql, { get: () => '2' }) })),
      'db must behave like better-sqlite3: a plucked count must be the number 2, not "2" (see docs/embedding.md on other drivers)',
    ],
    [
      'raw gives objects',
      lookAlike(t, (real) => ({
        prepare: (sql: string) => {
          const inner = real.prepare(sql);
          return { pluck: () => inner.pluck(), raw: () => inner, run: () => inner.run() };
        },
      })),
      'db must behave like better-sqlite3: a raw row must be the array [7,"Bürobedarf",null,"x"], not an object with keys ["7",":text","NULL","\'x\'"]',
    ],
    [
      'raw all gives objects',
      lookAlike(t, (real) => ({
        prepare: (sql: string) => {
          const objects = real.prepare(sql);
          return {
            pluck: () => real.prepare(sql).pluck(),
            raw: () => {
              const rows = real.prepare(sql).raw();
              return { get: rows.get.bind(rows), all: objects.all.bind(objects) };
            },
            run: () => objects.run(),
          };
        },
      })),
      'db must behave like better-sqlite3: raw rows must be arrays, not [{"7":7,":text":"Bürobedarf","NULL":null,"\'x\'":"x"}]',
    ],
  ];
  for (const [name, db, message] of cases) {
    assert.throws(() => createHandler(db as Database.Database, CREDENTIALS), { name: 'TypeError', message }, name);
  }
});

test('a closed better-sqlite3 Database is refused as closed', () => {
  const closed = new Database(':memory:');
  closed.close();
  assert.throws(() => createHandler(closed, CREDENTIALS), { name: 'TypeError', message: 'db must be open' });
});

test("SQLite's own errors from the test query go on unchanged: the file's problem, not the handle's", (t) => {
  const file = join(tempDir(t), 'notiz.txt');
  writeFileSync(file, 'Einkaufsliste: Briefmarken, Kaffee, Kassenbuch\n'.repeat(100));
  const db = new Database(file, { readonly: true, fileMustExist: true });
  t.after(() => db.close());
  assert.throws(() => createHandler(db, CREDENTIALS), { name: 'SqliteError', code: 'SQLITE_NOTADB' });
});

test("a file its application is writing throws SQLite's SQLITE_BUSY at creation, for the embedder to try again (docs/embedding.md)", (t) => {
  const file = buildDatabase(t);
  const writer = new Database(file);
  t.after(() => writer.close());
  writer.exec('BEGIN EXCLUSIVE');
  const db = new Database(file, { readonly: true, fileMustExist: true, timeout: 0 });
  t.after(() => db.close());
  assert.throws(() => createHandler(db, CREDENTIALS), { name: 'SqliteError', code: 'SQLITE_BUSY' });
  writer.exec('COMMIT');
  assert.doesNotThrow(() => createHandler(db, CREDENTIALS));
  const embedding = readFileSync(new URL('../../docs/embedding.md', import.meta.url), 'utf8');
  assert.match(embedding, /`SQLITE_NOTADB`: no database; `SQLITE_BUSY`: a writer's lock, try again/);
});

test("validateDatabase with meaningJudged checks the handle and the tables but does not read the bookings again (the guard process judged them); without it, check's judgement refuses", (t) => {
  const file = buildDatabase(t);
  const writer = new Database(file);
  writer.exec('UPDATE entries SET amount_cents = amount_cents + 0.5');
  writer.close();
  const db = new Database(file, { readonly: true, fileMustExist: true });
  t.after(() => db.close());
  assert.throws(() => validateDatabase(db), /^Error: db cannot be served exactly: some amounts are REAL numbers/);
  assert.doesNotThrow(() => validateDatabase(db, ownSchema(), { meaningJudged: true }));
  // The tables are still checked.
  const other = new Database(':memory:');
  t.after(() => other.close());
  assert.throws(
    () => validateDatabase(other, ownSchema(), { meaningJudged: true }),
    /^Error: db does not fit the schema/,
  );
});
