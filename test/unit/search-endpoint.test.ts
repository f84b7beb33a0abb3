// The answer of a search is written by hand: an amount's cents as the exact decimal of
// euros, and a JSON text that, whatever a row holds, is valid JSON or the search fails with
// its 500, never a 200 with invalid JSON.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { createHandler } from '../../lib/index.js';
import { parseAmount } from '../../lib/query.js';
import type { BookingRow } from '../../lib/search/index.js';
import { formatEuros, formatSearchResult } from '../../lib/search-endpoint.js';
import { AUTH, assertReply, CREDENTIALS, request, serve } from '../support/helpers.js';

const row = (id: unknown): BookingRow => [id as number, '2026-03-14', 1250, 'Briefmarken', 'Porto', null];

test('formatSearchResult writes exact JSON for integer ids and counts', () => {
  const text = formatSearchResult({ count: 2, rows: [row(7)] });
  assert.equal(
    text,
    '{"anzahl":2,"buchungen":[{"id":7,"datum":"2026-03-14","betrag":-12.5,"zweck":"Briefmarken","kategorie":"Porto"}]}',
  );
  assert.doesNotThrow(() => JSON.parse(text));
});

test('formatSearchResult refuses a count or id that is no integer instead of writing invalid JSON', () => {
  for (const count of [{ 'count(*)': 2 }, '2', 2.5, 2n, Number.NaN]) {
    assert.throws(() => formatSearchResult({ count: count as number, rows: [] }), RangeError, String(count));
  }
  for (const id of ['A-17', 7.5, null, { id: 7 }]) {
    assert.throws(() => formatSearchResult({ count: 1, rows: [row(id)] }), RangeError, String(id));
  }
});

test('a view whose id is text answers the search 500, not 200 with {"id":A-17} (was invalid JSON)', async (t) => {
  const db = new Database(':memory:');
  t.after(() => db.close());
  db.exec(`
    CREATE TABLE buchung (nr, datum TEXT, cents INTEGER, text TEXT);
    INSERT INTO buchung VALUES (1, '2026-02-02', 990, 'Kaffee'), (2, '2026-02-03', 450, 'Porto');
    CREATE VIEW entries AS SELECT nr AS id, datum AS date, cents AS amount_cents, text AS subject,
      NULL AS category_id, NULL AS payment_method_id FROM buchung;
    CREATE TABLE categories (id INTEGER PRIMARY KEY, name TEXT NOT NULL);
    CREATE TABLE payment_methods (id INTEGER PRIMARY KEY, name TEXT NOT NULL);`);
  const causes: unknown[] = [];
  const origin = await serve(t, createHandler(db, CREDENTIALS, { onError: (error) => causes.push(error) }));
  // Written after the start (at the start, createHandler refuses it as check does).
  db.exec(`INSERT INTO buchung VALUES ('A-17', '2026-03-14', 1250, 'Briefmarken')`);
  const reply = await request(`${origin}/api/v1/buchungen?von=2026-03-01&bis=2026-03-31&betrag=-12.5`, {
    headers: { authorization: AUTH },
  });
  assertReply(reply, 500, { fehler: 'Interner Fehler bei der Buchungssuche.', code: 'search_failed' });
  assert.match(String(causes[0]), /booking id is not an integer: 'A-17'/);
  // An id beyond 2^53 reaches JavaScript rounded: the log says so, as check does, so that
  // nobody looks for the rounded id in the book.
  db.exec(`INSERT INTO buchung VALUES (9007199254740993, '2026-03-15', 1250, 'Porto')`);
  await request(`${origin}/api/v1/buchungen?von=2026-03-15&bis=2026-03-15&betrag=-12.5`, {
    headers: { authorization: AUTH },
  });
  assert.equal(
    String(causes[1]),
    'RangeError: booking id is not an integer: 9007199254740992 (the figure shown is already rounded)',
  );
});

test('formatSearchResult writes every text as JSON.stringify does: quotes, backslashes, controls, lone and paired surrogates, U+2028, umlauts', () => {
  const pieces = [
    'a',
    'ü',
    '€',
    '"',
    '\\',
    '\n',
    '\u0000',
    '\u001f',
    '\u007f',
    '\u2028',
    '\ud83d\ude00',
    '\ud83d',
    '\ude00',
    ' ',
    '/',
  ];
  let seed = 7;
  const random = (n: number): number => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed % n;
  };
  for (let i = 0; i < 2000; i += 1) {
    const text = (): string => Array.from({ length: random(6) }, () => pieces[random(pieces.length)]).join('');
    const [subject, category, account] = [text(), text(), text()];
    const written = formatSearchResult({ count: 1, rows: [[1, '2026-03-14', 1250, subject, category, account]] });
    assert.equal(
      written,
      `{"anzahl":1,"buchungen":[{"id":1,"datum":"2026-03-14","betrag":-12.5,"zweck":${JSON.stringify(subject)},"kategorie":${JSON.stringify(category)},"konto":${JSON.stringify(account)}}]}`,
    );
  }
});

test('formatEuros writes the exact decimal of whole cents', () => {
  const cases: Array<[number, string]> = [
    [-1250, '-12.5'],
    [3000, '30'],
    [435, '4.35'],
    [-435, '-4.35'],
    [5, '0.05'],
    [-5, '-0.05'],
    [50, '0.5'],
    [0, '0'],
    [-0, '0'],
    [100, '1'],
    [110, '1.1'],
    [99_999_999_999_999, '999999999999.99'],
    [Number.MAX_SAFE_INTEGER, '90071992547409.91'],
  ];
  for (const [cents, text] of cases) assert.equal(formatEuros(cents), text, String(cents));
});

test('formatEuros round-trips every parsed amount through JSON', () => {
  for (let cents = -100_000; cents <= 100_000; cents += 7) {
    const text = formatEuros(cents);
    assert.equal(parseAmount(text), cents);
    // What a client's JSON parser sees is the number it would have written itself.
    assert.equal(JSON.parse(text), Number(text));
  }
});

test('formatEuros refuses what it cannot write exactly', () => {
  assert.throws(() => formatEuros(12.5), RangeError);
  assert.throws(() => formatEuros(Number.NaN), RangeError);
  assert.throws(() => formatEuros(2 ** 53), RangeError);
});
