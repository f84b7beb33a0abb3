// POST {base}/api/v1/abgleich end to end, against fixtures/abgleich.sql: each rule of
// docs/API.md's reconciliation, over real HTTP.

import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { type TestContext, test } from 'node:test';
import { gzipSync } from 'node:zlib';
import Database from 'better-sqlite3';
import { fillBook, reconciliation, score } from '../bench/bank-statement.js';
import { Guard } from '../bin/guard/guarded.js';
import { createHandler } from '../lib/index.js';
import { BODY_MESSAGES, lineMessage } from '../lib/messages.js';
import { MAX_WINDOW_BOOKINGS } from '../lib/reconcile/read.js';
import { MAX_WEIGHED } from '../lib/reconcile/reconcile.js';
import type { HandlerOptions } from '../lib/types.js';
import {
  AUTH,
  assertCommonHeaders,
  assertReply,
  buildDatabase,
  CREDENTIALS,
  openReadOnly,
  type Reply,
  request,
  serve,
} from './support/helpers.js';

const PATH = '/api/v1/abgleich';

function fixture(t: TestContext, extra = ''): string {
  const file = buildDatabase(t, ['schema.sql', 'abgleich.sql']);
  if (extra !== '') {
    const db = new Database(file);
    db.exec(extra);
    db.close();
  }
  return file;
}

async function serveBook(t: TestContext, options?: HandlerOptions, extra = ''): Promise<string> {
  return serve(t, createHandler(openReadOnly(t, fixture(t, extra)), CREDENTIALS, options));
}

/** A POST with a body, over a connection of its own unless `agent` is given. */
function post(
  url: string,
  body: string | Buffer,
  headers: Record<string, string> = { authorization: AUTH, 'content-type': 'application/json' },
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: 'POST', headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }),
      );
      res.on('error', reject);
    });
    req.setTimeout(30_000, () => req.destroy(new Error(`no answer within 30 s: POST ${url}`)));
    req.on('error', reject);
    req.end(body);
  });
}

const reconcile = (origin: string, body: unknown): Promise<Reply> => post(`${origin}${PATH}`, JSON.stringify(body));

type Line = {
  ref: string;
  buchungen: Array<{ id: number }>;
  kandidaten: number;
  eindeutig: boolean;
  alternativen: Array<{ id: number }>;
  teile_gesucht?: false;
};

async function lines(origin: string, body: unknown): Promise<Line[]> {
  const reply = await reconcile(origin, body);
  assert.equal(reply.status, 200, reply.body);
  assertCommonHeaders(reply);
  return (JSON.parse(reply.body) as { zeilen: Line[] }).zeilen;
}

const ids = (bookings: Array<{ id: number }>): number[] => bookings.map((booking) => booking.id);

test('a line gets its booking formatted as the GET writes it, with kandidaten, eindeutig and alternativen', async (t) => {
  const origin = await serveBook(t);
  const reply = await reconcile(origin, { zeilen: [{ datum: '2026-06-10', betrag: '20' }] });
  assertReply(reply, 200, {
    zeilen: [
      {
        ref: '1',
        buchungen: [{ id: 110, datum: '2026-06-10', betrag: 20, zweck: 'Erstattung', konto: 'Bank' }],
        kandidaten: 1,
        eindeutig: true,
        alternativen: [],
      },
    ],
  });
  const kept = await post(`${origin}${PATH}`, JSON.stringify({ zeilen: [{ datum: '2026-06-10', betrag: '20' }] }), {
    authorization: AUTH,
    'content-type': 'application/json',
    connection: 'keep-alive',
  });
  assert.equal(kept.headers.connection, 'keep-alive', 'a body read to its end keeps the connection');
});

test('twins: each line gets the booking nearest its date, both are not eindeutig, each names the other', async (t) => {
  const origin = await serveBook(t);
  const [first, second] = await lines(origin, {
    zeilen: [
      { ref: 'a', datum: '2026-05-06', betrag: -12.6 },
      { ref: 'b', datum: '2026-05-04', betrag: '-12,60' },
    ],
  });
  assert.deepEqual(
    [first?.ref, ids(first?.buchungen ?? []), first?.kandidaten, first?.eindeutig],
    ['a', [102], 2, false],
  );
  assert.deepEqual(ids(first?.alternativen ?? []), [101]);
  assert.deepEqual(
    [ids(second?.buchungen ?? []), second?.eindeutig, ids(second?.alternativen ?? [])],
    [[101], false, [102]],
  );
});

test('ties in cents, days and signs: the earlier line by date, then by place in the request, gets the earlier booking', async (t) => {
  const origin = await serveBook(t);
  // 101 (05-04) and 102 (05-06) are 5 days from these two lines either way round.
  const [late, early] = await lines(origin, {
    zeilen: [
      { ref: 'late', datum: '2026-05-08', betrag: '-12.60', tage: 4 },
      { ref: 'early', datum: '2026-05-07', betrag: '-12.60', tage: 4 },
    ],
  });
  assert.deepEqual([ids(early?.buchungen ?? []), ids(late?.buchungen ?? [])], [[101], [102]]);
  // Lines of one date: their order in the request decides.
  const [first, second] = await lines(origin, {
    zeilen: [
      { ref: 'first', datum: '2026-05-05', betrag: '-12.60' },
      { ref: 'second', datum: '2026-05-05', betrag: '-12.60' },
    ],
  });
  assert.deepEqual([ids(first?.buchungen ?? []), ids(second?.buchungen ?? [])], [[101], [102]]);
});

test('the most lines are paired first: a line gives up its nearest booking to a line that has no other', async (t) => {
  const origin = await serveBook(t);
  const [wide, narrow] = await lines(origin, {
    zeilen: [
      { datum: '2026-05-07', betrag: '-12.60', tage: 3, toleranz: '0.10' },
      { datum: '2026-05-04', betrag: '-12.60', tage: 1 },
    ],
  });
  // The first line's nearest is 102 (same amount, a day off); 101 is the second's only one.
  assert.deepEqual(ids(narrow?.buchungen ?? []), [101]);
  assert.deepEqual(ids(wide?.buchungen ?? []), [102]);
  const [alone] = await lines(origin, {
    zeilen: [{ datum: '2026-05-09', betrag: '-12.60', tage: 3, toleranz: '0.10' }],
  });
  // The least cents apart come before the least days apart.
  assert.deepEqual([ids(alone?.buchungen ?? []), alone?.kandidaten], [[102], 2]);
});

test('toleranz and tage bound a line inclusively; tage defaults to 3', async (t) => {
  const origin = await serveBook(t);
  const found = async (line: Record<string, unknown>): Promise<number[]> =>
    ids((await lines(origin, { zeilen: [line] }))[0]?.buchungen ?? []);
  assert.deepEqual(await found({ datum: '2026-05-13', betrag: '-12.60', toleranz: '0.10' }), [103]);
  assert.deepEqual(await found({ datum: '2026-05-13', betrag: '-12.60', toleranz: '0.09' }), []);
  assert.deepEqual(await found({ datum: '2026-05-14', betrag: '-12.50' }), []);
  assert.deepEqual(await found({ datum: '2026-05-14', betrag: '-12.50', tage: 4 }), [103]);
  assert.deepEqual(await found({ datum: '2026-05-10', betrag: '-12.50', tage: 0 }), [103]);
});

test('vorzeichen "beide": a cash deposit, an expense of the cash book, pairs with the bank line of its income', async (t) => {
  const origin = await serveBook(t);
  const deposit = { datum: '2026-05-13', betrag: '1000.00', konten: ['Barkasse'] };
  assert.deepEqual(ids((await lines(origin, { zeilen: [deposit], konten: ['Bank'] }))[0]?.buchungen ?? []), []);
  const [line] = await lines(origin, { zeilen: [{ ...deposit, vorzeichen: 'beide' }], konten: ['Bank'] });
  assert.deepEqual(line?.buchungen, [
    { id: 104, datum: '2026-05-12', betrag: -1000, zweck: 'Einzahlung auf die Bank', konto: 'Barkasse' },
  ]);
});

test('konten: only bookings with one of them; a line may name its own; a booking without konto never qualifies', async (t) => {
  const origin = await serveBook(t);
  const fifty = { datum: '2026-05-25', betrag: '-50' };
  assert.equal((await lines(origin, { zeilen: [fifty] }))[0]?.kandidaten, 2);
  assert.equal((await lines(origin, { zeilen: [fifty], konten: ['Bank'] }))[0]?.kandidaten, 1);
  assert.equal(
    (await lines(origin, { zeilen: [{ ...fifty, konten: ['Barkasse'] }], konten: ['Bank'] }))[0]?.kandidaten,
    0,
  );
  assert.equal((await lines(origin, { zeilen: [fifty], konten: [] }))[0]?.kandidaten, 0);
});

test('ausser: an id the client matched is never a candidate; an unknown id is no error', async (t) => {
  const origin = await serveBook(t);
  const line = { datum: '2026-06-01', betrag: '-7.77' };
  assert.equal((await lines(origin, { zeilen: [line] }))[0]?.kandidaten, 1);
  assert.equal((await lines(origin, { zeilen: [line], ausser: [109, 999_999] }))[0]?.kandidaten, 0);
});

test('waehrung other than exactly EUR: every line has no candidates', async (t) => {
  const origin = await serveBook(t);
  for (const waehrung of ['USD', 'eur']) {
    const [line] = await lines(origin, { zeilen: [{ datum: '2026-06-10', betrag: '20', teile: 2 }], waehrung });
    assert.deepEqual(line, { ref: '1', buchungen: [], kandidaten: 0, eindeutig: false, alternativen: [] });
  }
});

test('teile: a line no single booking matches gets two (or three) whose sum is within toleranz', async (t) => {
  const origin = await serveBook(t);
  const split = { datum: '2026-05-20', betrag: '-49.99', konten: ['Bank'] };
  assert.deepEqual(ids((await lines(origin, { zeilen: [split] }))[0]?.buchungen ?? []), []);
  const [two] = await lines(origin, { zeilen: [{ ...split, teile: 2 }] });
  assert.deepEqual([ids(two?.buchungen ?? []), two?.kandidaten, two?.eindeutig], [[106, 105], 0, false]);
  // Three parts: 30 + 19.99 + 50 within a window that holds them.
  const [three] = await lines(origin, { zeilen: [{ ...split, betrag: '-99.99', tage: 5, teile: 3 }] });
  assert.deepEqual(ids(three?.buchungen ?? []), [107, 106, 105]);
  // A booking given to a line in step 2 is no part of another.
  const [, taken] = await lines(origin, {
    zeilen: [
      { datum: '2026-05-21', betrag: '-19.99' },
      { ...split, teile: 2 },
    ],
  });
  assert.deepEqual(ids(taken?.buchungen ?? []), []);
});

test('a window with more than 400 bookings of the sign is not split, and the answer says so', async (t) => {
  const rows = Array.from({ length: 401 }, (_, i) => `(${1000 + i}, '2026-07-01', ${100 + i}, 'Kleinkram', NULL, 1)`);
  const origin = await serveBook(t, undefined, `INSERT INTO entries VALUES ${rows.join(',')};`);
  const [line] = await lines(origin, { zeilen: [{ datum: '2026-07-01', betrag: '-0.01', teile: 2 }] });
  assert.deepEqual(line, {
    ref: '1',
    buchungen: [],
    kandidaten: 0,
    eindeutig: false,
    alternativen: [],
    teile_gesucht: false,
  });
  const [one] = await lines(origin, { zeilen: [{ datum: '2026-07-01', betrag: '-2.01', teile: 2 }] });
  assert.equal(one?.teile_gesucht, undefined, 'a line paired in step 2 needs no parts');
});

test('the same request over the same book gives the same answer', async (t) => {
  const origin = await serveBook(t);
  const body = {
    zeilen: Array.from({ length: 6 }, (_, i) => ({
      datum: `2026-05-0${i + 3}`,
      betrag: '-12.60',
      tage: 5,
      toleranz: '0.10',
    })),
  };
  const first = await reconcile(origin, body);
  assert.equal((await reconcile(origin, body)).body, first.body);
});

test('a body of the wrong media type is 415, one over 1 MiB 413, a bad one 400 bad_body naming line and field', async (t) => {
  const origin = await serveBook(t);
  const url = `${origin}${PATH}`;
  const body = JSON.stringify({ zeilen: [{ datum: '2026-06-10', betrag: '20' }] });
  for (const type of [
    'text/plain',
    'application/json; charset=latin1',
    'application/jsonx',
    'application/json;; charset=latin1',
  ]) {
    const reply = await post(url, body, { authorization: AUTH, 'content-type': type });
    assertReply(reply, 415, {
      fehler: 'Der Inhalt muss JSON sein (application/json).',
      code: 'unsupported_media_type',
    });
  }
  // A body in a coding the service does not undo: gzip as content or as transfer coding.
  const gzipped = gzipSync(body);
  for (const coding of [
    { 'content-encoding': 'gzip' },
    { 'content-encoding': 'identity, gzip' },
    { 'transfer-encoding': 'gzip, chunked' },
  ]) {
    const reply = await post(url, gzipped, { authorization: AUTH, 'content-type': 'application/json', ...coding });
    assertReply(reply, 415, {
      fehler: 'Der Inhalt muss JSON sein (application/json).',
      code: 'unsupported_media_type',
    });
  }
  // Refused before its body, whether it announced one or not: the connection ends.
  const empty = await post(url, '', {
    authorization: AUTH,
    'content-type': 'text/plain',
    'content-length': '0',
    connection: 'keep-alive',
  });
  assertReply(empty, 415, { fehler: 'Der Inhalt muss JSON sein (application/json).', code: 'unsupported_media_type' });
  assert.equal(empty.headers.connection, 'close');
  // No coding, said as `identity` or as an empty list (RFC 9110 §5.6.1: empty elements are none).
  for (const coding of [
    { 'content-encoding': 'identity' },
    { 'content-encoding': '' },
    { 'content-encoding': ', identity' },
    { 'transfer-encoding': 'chunked' },
  ]) {
    const reply = await post(url, body, { authorization: AUTH, 'content-type': 'application/json', ...coding });
    assert.equal(reply.status, 200, JSON.stringify(coding));
  }
  for (const type of ['application/json; charset=utf-8', 'Application/JSON;charset="UTF-8"', 'application/json;']) {
    assert.equal((await post(url, body, { authorization: AUTH, 'content-type': type })).status, 200, type);
  }
  const big = Buffer.alloc(1024 * 1024 + 1, 0x20);
  const tooLarge = await post(url, big);
  assertReply(tooLarge, 413, { fehler: 'Der Inhalt ist zu groß: höchstens 1 MiB.', code: 'body_too_large' });
  assert.equal(tooLarge.headers.connection, 'close');
  const chunked = await post(url, big, {
    authorization: AUTH,
    'content-type': 'application/json',
    'transfer-encoding': 'chunked',
  });
  assert.equal(chunked.status, 413);
  const bad = await reconcile(origin, {
    zeilen: [{ datum: '2026-06-10', betrag: '20' }, {}, { datum: '2026-06-10', betrag: 1e21 }],
  });
  assertReply(bad, 400, { fehler: lineMessage(2, BODY_MESSAGES.missing('datum')), code: 'bad_body' });
  assertReply(await post(url, '{"zeilen":['), 400, { fehler: BODY_MESSAGES.badJson, code: 'bad_body' });
  assertReply(await reconcile(origin, { zeilen: [{ datum: '2026-06-10', betrag: 20.001 }] }), 400, {
    fehler: "Zeile 1: Feld 'betrag' muss ein Betrag mit höchstens zwei Nachkommastellen sein, als Text oder Zahl.",
    code: 'bad_body',
  });
});

test('the login comes first: without it a 401, the body never read; an unknown path 404', async (t) => {
  const origin = await serveBook(t);
  const reply = await post(`${origin}${PATH}`, 'not json', { 'content-type': 'text/plain' });
  assertReply(reply, 401, { fehler: 'Anmeldung erforderlich.', code: 'unauthorized' });
  assert.equal(reply.headers.connection, 'close', 'the unread body is left unread');
  assertReply(await post(`${origin}/api/v1/abgleichen`, '{}'), 404, { fehler: 'Nicht gefunden.', code: 'not_found' });
});

test('a query string is refused as the search refuses an unknown parameter, before the body is read: the question is the body', async (t) => {
  const origin = await serveBook(t);
  const body = JSON.stringify({ zeilen: [{ datum: '2026-03-14', betrag: '-12.60' }] });
  const refused = await post(`${origin}${PATH}?waehrung=USD`, body);
  assertReply(refused, 400, { fehler: "Unbekannter Parameter 'waehrung'.", code: 'bad_query' });
  assert.equal(refused.headers.connection, 'close', 'the unread body is left unread');
  const badEscape = { fehler: 'Die Anfrage enthält ungültig kodierte Zeichen.', code: 'bad_query' };
  assertReply(await post(`${origin}${PATH}?tage=3&x=%ZZ`, body), 400, badEscape);
  // No parameter at all: a lone `?`, or empty pieces, as the search reads them.
  for (const none of ['?', '?&&']) assert.equal((await post(`${origin}${PATH}${none}`, body)).status, 200, none);
});

test('GET and HEAD on the reconciliation are 405 with Allow: POST; POST on the others 405 with Allow: GET, HEAD', async (t) => {
  const origin = await serveBook(t);
  for (const method of ['GET', 'HEAD', 'PUT']) {
    const reply = await request(`${origin}${PATH}`, { method, headers: { authorization: AUTH } });
    assert.equal(reply.status, 405, method);
    assert.equal(reply.headers.allow, 'POST');
  }
  for (const path of ['/api/v1/status', '/api/v1/buchungen']) {
    const reply = await post(`${origin}${path}`, '{}');
    assertReply(reply, 405, { fehler: 'Methode nicht erlaubt.', code: 'method_not_allowed' });
    assert.equal(reply.headers.allow, 'GET, HEAD');
  }
});

test('a CORS preflight for POST with Authorization and Content-Type is granted to a listed origin', async (t) => {
  const page = 'http://127.0.0.1:8081';
  const origin = await serveBook(t, { corsOrigins: [page], basePath: '/kasse' });
  const reply = await request(`${origin}/kasse${PATH}`, {
    method: 'OPTIONS',
    headers: {
      origin: page,
      'access-control-request-method': 'POST',
      'access-control-request-headers': 'authorization, content-type',
    },
  });
  assert.equal(reply.status, 204);
  assert.equal(reply.headers['access-control-allow-methods'], 'POST');
  assert.equal(reply.headers['access-control-allow-headers'], 'Authorization, Content-Type');
  assert.equal(reply.headers['access-control-allow-origin'], page);
  const answer = await post(
    `${origin}/kasse${PATH}`,
    JSON.stringify({ zeilen: [{ datum: '2026-06-10', betrag: 20 }] }),
    {
      authorization: AUTH,
      'content-type': 'application/json',
      origin: page,
    },
  );
  assert.equal(answer.status, 200);
  assert.equal(answer.headers['access-control-allow-origin'], page);
});

test('a reconciliation is one search of the waiting searches: over the bound, 429 too_many_searches', async (t) => {
  // Reconciliations long enough (1,000 lines competing for 1,000 bookings) that the others arrive while one runs.
  const rows = Array.from(
    { length: 1000 },
    (_, i) => `(${5000 + i}, '2026-08-${String(1 + (i % 28)).padStart(2, '0')}', 1000, 'Gleich', NULL, 1)`,
  );
  const origin = await serveBook(t, { maxWaitingSearches: 1 }, `INSERT INTO entries VALUES ${rows.join(',')};`);
  const zeilen = Array.from({ length: 1000 }, (_, i) => ({
    datum: `2026-08-${String(1 + (i % 28)).padStart(2, '0')}`,
    betrag: '-10',
    tage: 30,
  }));
  const body = JSON.stringify({ zeilen });
  const replies = await Promise.all(Array.from({ length: 6 }, () => post(`${origin}${PATH}`, body)));
  assert.ok(replies.every((reply) => reply.status === 200 || reply.status === 429));
  const refused = replies.filter((reply) => reply.status === 429);
  assert.ok(refused.length > 0 && refused.length < replies.length, `${refused.length} of ${replies.length} refused`);
  for (const reply of refused) assert.equal(JSON.parse(reply.body).code, 'too_many_searches');
});

test('while 1,000 lines that compete for the same bookings are paired, /status is answered within milliseconds', async (t) => {
  const rows = Array.from(
    { length: 1000 },
    (_, i) => `(${5000 + i}, '2026-08-${String(1 + (i % 28)).padStart(2, '0')}', 1000, 'Gleich', NULL, 1)`,
  );
  const origin = await serveBook(t, undefined, `INSERT INTO entries VALUES ${rows.join(',')};`);
  const zeilen = Array.from({ length: 1000 }, (_, i) => ({
    datum: `2026-08-${String(1 + (i % 28)).padStart(2, '0')}`,
    betrag: '-10',
    tage: 30,
  }));
  let done = false;
  const big = reconcile(origin, { zeilen }).finally(() => {
    done = true;
  });
  const waits: number[] = [];
  while (!done) {
    const started = performance.now();
    assert.equal((await request(`${origin}/api/v1/status`, { headers: { authorization: AUTH } })).status, 200);
    waits.push(performance.now() - started);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  const reply = await big;
  assert.equal(reply.status, 200);
  const answered = (JSON.parse(reply.body) as { zeilen: Line[] }).zeilen;
  assert.equal(answered.filter((line) => line.buchungen.length === 1).length, 1000);
  assert.ok(waits.length > 3, `the reconciliation ran long enough to be watched (${waits.length} looks)`);
  waits.sort((a, b) => a - b);
  // The slices are half a millisecond; a loaded machine adds its own.
  assert.ok((waits[Math.floor(waits.length / 2)] as number) < 50, `median /status wait ${waits.join(', ')}`);
});

test('a two-year statement against its cash book, in one request: precision and recall at least 0.99', async (t) => {
  const book = reconciliation();
  const { entries, body, expected } = book;
  const file = buildDatabase(t, ['schema.sql']);
  const db = new Database(file);
  fillBook(db, book);
  db.close();
  assert.ok(entries.length > 2500 && entries.length < 3500, `${entries.length} bookings`);
  assert.ok(body.zeilen.length > 380 && body.zeilen.length < 480, `${body.zeilen.length} lines`);
  const origin = await serve(t, createHandler(openReadOnly(t, file), CREDENTIALS));
  const answered = await lines(origin, body);
  const { precision, recall, paired, right, wanted } = score(expected, answered);
  assert.ok(
    precision >= 0.99 && recall >= 0.99,
    `precision ${precision}, recall ${recall}: ${right} right of ${paired} paired, ${wanted} wanted`,
  );
});

test('a book whose searches run in a guard process (its entries a view) reconciles too: the windows cross to the guard as one search', async (t) => {
  const file = fixture(t);
  const db = new Database(file);
  db.exec('ALTER TABLE entries RENAME TO kasse; CREATE VIEW entries AS SELECT * FROM kasse;');
  db.close();
  const guard = new Guard({ limitMs: 10_000, once: true });
  t.after(() => guard.end());
  const opened = await guard.open(file, { app: undefined, tables: {} });
  assert.equal(opened.kind, 'ready');
  assert.notEqual(opened.kind === 'ready' ? opened.unbounded : undefined, undefined, 'served by the guard');
  const origin = await serve(t, createHandler(guard.searches(), CREDENTIALS));
  const [twin, deposit] = await lines(origin, {
    zeilen: [
      { datum: '2026-05-06', betrag: '-12.60' },
      { datum: '2026-05-13', betrag: '1000', vorzeichen: 'beide', konten: ['Barkasse'] },
    ],
  });
  assert.deepEqual([ids(twin?.buchungen ?? []), twin?.kandidaten], [[102], 2]);
  assert.deepEqual(ids(deposit?.buchungen ?? []), [104]);
});

test('eindeutig is false when another line had the booking as a candidate, even if it was the line’s only one', async (t) => {
  const origin = await serveBook(t);
  const [only, other] = await lines(origin, {
    zeilen: [
      { datum: '2026-05-10', betrag: '-12.50', tage: 0 },
      { datum: '2026-05-09', betrag: '-12.60', toleranz: '0.10' },
    ],
  });
  assert.deepEqual([ids(only?.buchungen ?? []), only?.kandidaten, only?.eindeutig], [[103], 1, false]);
  // The other line got its nearest (0 cents apart), and names the one it shared.
  assert.deepEqual([ids(other?.buchungen ?? []), ids(other?.alternativen ?? [])], [[102], [103]]);
});

test('alternativen: at most three, least cents apart first, then least days, then id', async (t) => {
  const rows = [
    "(201, '2026-09-10', 1000, 'a', NULL, 1)",
    "(202, '2026-09-11', 1001, 'b', NULL, 1)",
    "(203, '2026-09-12', 999, 'c', NULL, 1)",
    "(204, '2026-09-09', 999, 'd', NULL, 1)",
    "(205, '2026-09-10', 1005, 'e', NULL, 1)",
  ];
  const origin = await serveBook(t, undefined, `INSERT INTO entries VALUES ${rows.join(',')};`);
  const [line] = await lines(origin, { zeilen: [{ datum: '2026-09-10', betrag: '-10', toleranz: '0.05' }] });
  assert.deepEqual([ids(line?.buchungen ?? []), line?.kandidaten], [[201], 5]);
  assert.deepEqual(ids(line?.alternativen ?? []), [202, 204, 203]);
});

test('lines whose windows hold more than 20,000 bookings together are refused: 400 bad_body, the statement to be sent in parts', async (t) => {
  const many = `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${MAX_WINDOW_BOOKINGS - 2})
    INSERT INTO entries SELECT 100000 + i, '2026-10-0' || (1 + i % 2), 100, 'Kleinkram', NULL, 1 FROM n;`;
  const origin = await serveBook(t, undefined, many);
  assert.ok(BODY_MESSAGES.tooManyBookings.includes(`mehr als ${MAX_WINDOW_BOOKINGS}.`));
  // 20,000 − 2 here, and the three of the fixture from 2026-05-04 to 05-10: one too many.
  const near = { zeilen: [{ datum: '2026-10-01', betrag: '-1', tage: 1 }] };
  assert.equal((await reconcile(origin, near)).status, 200);
  const far = {
    zeilen: [
      { datum: '2026-10-01', betrag: '-1', tage: 1 },
      { datum: '2026-05-05', betrag: '-12.60', tage: 5 },
    ],
  };
  assertReply(await reconcile(origin, far), 400, { fehler: BODY_MESSAGES.tooManyBookings, code: 'bad_body' });
});

test('lines that weigh more than 4,000,000 candidates together are refused: 400 bad_body, the statement to be sent in parts', async (t) => {
  const BOOKINGS = 19_990;
  const many = `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${BOOKINGS})
    INSERT INTO entries SELECT 100000 + i, '2026-10-0' || (1 + i % 2), 100, 'Kleinkram', NULL, 1 FROM n;`;
  const origin = await serveBook(t, undefined, many);
  assert.ok(BODY_MESSAGES.tooMuchWeighing.includes(`mehr als ${MAX_WEIGHED} Kandidaten`));
  // Each line has every booking: one line more than the bound holds.
  const line = { datum: '2026-10-01', betrag: '-1', tage: 1 };
  const zeilen = Array.from({ length: Math.floor(MAX_WEIGHED / BOOKINGS) + 1 }, () => line);
  assertReply(await reconcile(origin, { zeilen }), 400, { fehler: BODY_MESSAGES.tooMuchWeighing, code: 'bad_body' });
  // Its place is free again: a small statement is answered.
  assert.equal((await reconcile(origin, { zeilen: [line] })).status, 200);
});

test('a body parser in front of the handler took the body: a 500 at once, and the hook hears whose mistake it is', async (t) => {
  const heard: string[] = [];
  const handler = createHandler(openReadOnly(t, fixture(t)), CREDENTIALS, {
    onError: (error) => heard.push(error instanceof Error ? error.message : String(error)),
  });
  // What express.json() does: read the whole body, then hand the request on.
  const origin = await serve(t, (req, res) => {
    req.on('data', () => {});
    req.on('end', () => handler(req, res));
  });
  const reply = await post(`${origin}${PATH}`, JSON.stringify({ zeilen: [{ datum: '2026-03-31', betrag: '-4.35' }] }));
  assertReply(reply, 500, { fehler: 'Interner Fehler.', code: 'internal_error' });
  assert.equal(heard.length, 1);
  assert.match(heard[0] ?? '', /read before the handler \(a body parser in front of it\)/);
});

test("a booking written with a time of day on a window's last day is the window's: the search and the reconciliation answer 500, never pass it over", async (t) => {
  const file = fixture(t);
  const origin = await serve(t, createHandler(openReadOnly(t, file), CREDENTIALS, { onError: () => {} }));
  // Written by the application after the handler was made, as a row no search can answer.
  const writer = new Database(file);
  writer.exec(`INSERT INTO entries (id, date, amount_cents, subject) VALUES
    (902, '2026-07-03', 1250, 'Porto'), (903, '2026-07-04 12:00', 1250, 'mit Uhrzeit')`);
  writer.close();
  const search = await request(`${origin}/api/v1/buchungen?von=2026-07-02&bis=2026-07-04&betrag=-12.50`, {
    headers: { authorization: AUTH },
  });
  assert.equal(search.status, 500, search.body);
  // The reconciliation reads a line's window in slices of days; with `tage` 5 one slice ends
  // on 2026-07-04 and the next begins on 2026-07-05: the booking lies where they meet.
  for (const tage of [0, 1, 4, 5, 6]) {
    const reply = await reconcile(origin, { zeilen: [{ datum: '2026-07-03', betrag: '-12.50', tage }] });
    assert.equal(reply.status, tage === 0 ? 200 : 500, `tage ${tage}: ${reply.body}`);
  }
});

test("a handle whose default turns to BigInts after the handler was made (the embedder's own code) answers every search and reconciliation as before", async (t) => {
  const file = fixture(t);
  const shared = openReadOnly(t, file);
  const flipped = await serve(t, createHandler(shared, CREDENTIALS));
  shared.defaultSafeIntegers(true);
  const plain = await serve(t, createHandler(openReadOnly(t, file), CREDENTIALS));
  const search = '/api/v1/buchungen?von=2026-01-01&bis=2026-12-31&betrag=-12.50&toleranz=5';
  const statement = { zeilen: [{ datum: '2026-05-08', betrag: '-12.50', toleranz: '0.20', tage: 5 }] };
  for (const origin of [flipped, plain]) {
    const found = await request(`${origin}${search}`, { headers: { authorization: AUTH } });
    assert.equal(found.status, 200, found.body);
  }
  const answers = await Promise.all(
    [flipped, plain].map(async (origin) => [
      (await request(`${origin}${search}`, { headers: { authorization: AUTH } })).body,
      (await reconcile(origin, statement)).body,
    ]),
  );
  assert.deepEqual(answers[0], answers[1]);
  assert.match(answers[0]?.[1] ?? '', /"kandidaten":[1-9]/);
});
