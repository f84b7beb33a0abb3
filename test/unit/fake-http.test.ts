// The in-process benchmarks' request (bench/fake-http.ts, which bench/phases.ts and
// bench/interleaved.ts time) is one the handler answers as a client's: a request it refused
// (a 400 for a field node:http's parser sets and the fake did not) would be timed instead,
// and on a connection it closes, the next ones never answered.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { fakeExchange, fakeSocket } from '../../bench/fake-http.js';
import { createHandler } from '../../lib/index.js';
import { buildDatabase } from '../support/helpers.js';

test("the benchmarks' fake exchange gets the answer a client gets, twice on one connection", async (t) => {
  const db = new Database(buildDatabase(t), { readonly: true });
  t.after(() => db.close());
  const handler = createHandler(db, { username: 'bench', password: 'bench' }, { maxAuthFailures: 0 });
  const connection = fakeSocket();
  const authorization = `Basic ${Buffer.from('bench:bench').toString('base64')}`;
  for (const path of ['/api/v1/status', '/api/v1/buchungen?von=2026-03-01&bis=2026-03-31&betrag=-4.35']) {
    const [req, res] = fakeExchange(connection, path, authorization);
    const closed = new Promise((done) => res.once('close', done));
    handler(req, res);
    await closed;
    assert.equal(res.statusCode, 200, path);
  }
});
