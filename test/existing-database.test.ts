// An existing application's database, served through views (fixtures/existing-app*.sql):
// REAL euros with expenses negative and 'TT.MM.JJJJ' dates come out exact to the cent.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { createHandler } from '../lib/index.js';
import { explainCount } from '../lib/search/index.js';
import {
  assertReply,
  CREDENTIALS,
  EXISTING_APP_MARCH_COFFEE,
  fixtureSql,
  get,
  openFixture,
  serve,
} from './support/helpers.js';

const VIEWS = ['existing-app.sql', 'existing-app-views.sql'];

test("through the views, REAL euros come out as exact cents in the client's sign convention", async (t) => {
  const origin = await serve(t, createHandler(openFixture(t, VIEWS), CREDENTIALS));
  const search = (query: string) => get(`${origin}/api/v1/buchungen?von=2026-03-01&bis=2026-03-31&${query}`);
  assertReply(await search('betrag=-4.35'), 200, EXISTING_APP_MARCH_COFFEE);
  assertReply(await search('betrag=0.30'), 200, {
    anzahl: 1,
    buchungen: [{ id: 4, datum: '2026-03-16', betrag: 0.3, zweck: 'Pfand zurück' }],
  });
  assertReply(await search('betrag=-1.00&toleranz=0.10'), 200, {
    anzahl: 1,
    buchungen: [{ id: 5, datum: '2026-03-31', betrag: -1.1, zweck: 'Kopien', kategorie: 'Bewirtung' }],
  });
  assertReply(await search('betrag=-1234567,89'), 200, {
    anzahl: 1,
    buchungen: [{ id: 8, datum: '2026-03-20', betrag: -1234567.89, zweck: 'Größter Posten', konto: 'Barkasse' }],
  });
  assertReply(await search('betrag=250'), 200, {
    anzahl: 1,
    buchungen: [{ id: 9, datum: '2026-03-21', betrag: 250, zweck: 'Bareinzahlung', konto: 'Barkasse' }],
  });
  assertReply(await search('betrag=-0.01'), 200, {
    anzahl: 1,
    buchungen: [{ id: 10, datum: '2026-03-22', betrag: -0.01, zweck: '' }],
  });
  const all = await search('betrag=0&toleranz=9999999&limit=1000');
  const body = JSON.parse(all.body) as { anzahl: number; buchungen: Array<{ id: number }> };
  assert.equal(body.anzahl, 8, 'the dates outside March are converted and left out');
  assert.deepEqual(
    body.buchungen.map((b) => b.id),
    [5, 10, 9, 8, 4, 3, 2, 1],
  );
});

test('the expression index restores the index seek of the typical search through the views', () => {
  const plan = (db: Database.Database): string => explainCount(db).join('; ');
  const withIndex = new Database(':memory:');
  for (const name of VIEWS) withIndex.exec(fixtureSql(name));
  assert.equal(
    plan(withIndex),
    'SEARCH kassenbuch USING COVERING INDEX kassenbuch_cents_date (<expr>=? AND <expr>>? AND <expr><?)',
  );
  const without = new Database(':memory:');
  without.exec(fixtureSql('existing-app.sql'));
  without.exec(fixtureSql('existing-app-views.sql').replace(/CREATE INDEX[^;]*;/, ''));
  assert.equal(plan(without), 'SCAN kassenbuch');
});
