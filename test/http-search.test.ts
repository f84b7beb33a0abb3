// GET {base}/api/v1/buchungen end to end, against fixtures/bookings.sql.

import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import Database from 'better-sqlite3';
import { createHandler } from '../lib/index.js';
import { ownSchema } from '../lib/mapping.js';
import { createBookingSearch } from '../lib/search/index.js';
import {
  AUTH,
  assertReply,
  buildDatabase,
  CREDENTIALS,
  get,
  openReadOnly,
  type Reply,
  request,
  serve,
  serveFixture,
  statusAnswer,
} from './support/helpers.js';

const MARCH = 'von=2026-03-01&bis=2026-03-31';

test('GET /api/v1/buchungen finds the exact amount, newest first, ties by id descending', async (t) => {
  const origin = await serveFixture(t);
  const reply = await get(`${origin}/api/v1/buchungen?${MARCH}&betrag=-12.5`);
  assertReply(reply, 200, {
    anzahl: 6,
    buchungen: [
      { id: 6, datum: '2026-03-15', betrag: -12.5, zweck: 'Briefmarken mit verwaistem Konto', kategorie: 'Porto' },
      { id: 5, datum: '2026-03-15', betrag: -12.5, zweck: 'Briefmarken mit verwaister Kategorie', konto: 'Barkasse' },
      { id: 3, datum: '2026-03-14', betrag: -12.5, zweck: 'Briefmarken ohne Kategorie', konto: 'Barkasse' },
      {
        id: 2,
        datum: '2026-03-14',
        betrag: -12.5,
        zweck: 'Briefmarken, zweiter Bogen',
        kategorie: 'Porto',
        konto: 'Barkasse',
      },
      {
        id: 1,
        datum: '2026-03-14',
        betrag: -12.5,
        zweck: 'Briefmarken für Mahnungen',
        kategorie: 'Porto',
        konto: 'Barkasse',
      },
      { id: 4, datum: '2026-03-13', betrag: -12.5, zweck: 'Briefmarken ohne Konto', kategorie: 'Porto' },
    ],
  });
});

test('a booking is written with its keys in docs/API.md order and non-ASCII unescaped', async (t) => {
  const origin = await serveFixture(t);
  const reply = await get(`${origin}/api/v1/buchungen?von=2026-03-14&bis=2026-03-14&betrag=-12,50&limit=1`);
  assert.equal(
    reply.body,
    '{"anzahl":3,"buchungen":[{"id":3,"datum":"2026-03-14","betrag":-12.5,"zweck":"Briefmarken ohne Kategorie","konto":"Barkasse"}]}',
  );
  const uml = await get(`${origin}/api/v1/buchungen?von=2026-03-14&bis=2026-03-14&betrag=-12.5&limit=3`);
  assert.ok(uml.body.includes('"zweck":"Briefmarken für Mahnungen","kategorie":"Porto","konto":"Barkasse"}'), uml.body);
  const emoji = await get(`${origin}/api/v1/buchungen?${MARCH}&betrag=-0.05`);
  assert.ok(emoji.body.includes('"zweck":"Fünf Cent für Zürich 🇨🇭","kategorie":"Bürobedarf"'), emoji.body);
  assert.ok(!emoji.body.includes('\\u'), 'no \\u escapes');
  assert.equal(Number(emoji.headers['content-length']), Buffer.byteLength(emoji.body, 'utf8'));
});

test('createHandler takes a search made over the database instead of the database: the same answer', async (t) => {
  const search = createBookingSearch(openReadOnly(t, buildDatabase(t)), ownSchema());
  const origin = await serve(t, createHandler(search, CREDENTIALS));
  const reply = await get(`${origin}/api/v1/buchungen?von=2026-03-14&bis=2026-03-14&betrag=-12,50&limit=1`);
  assertReply(reply, 200, {
    anzahl: 3,
    buchungen: [{ id: 3, datum: '2026-03-14', betrag: -12.5, zweck: 'Briefmarken ohne Kategorie', konto: 'Barkasse' }],
  });
});

test('the sign is converted: stored income is a positive betrag, stored expenses negative', async (t) => {
  const origin = await serveFixture(t);
  assertReply(await get(`${origin}/api/v1/buchungen?${MARCH}&betrag=30`), 200, {
    anzahl: 1,
    buchungen: [{ id: 7, datum: '2026-03-01', betrag: 30, zweck: 'Einzahlung Wechselgeld', konto: 'Barkasse' }],
  });
  assertReply(await get(`${origin}/api/v1/buchungen?${MARCH}&betrag=%2B12.5`), 200, {
    anzahl: 1,
    buchungen: [
      {
        id: 20,
        datum: '2026-03-14',
        betrag: 12.5,
        zweck: 'Erstattung Briefmarken',
        kategorie: 'Porto',
        konto: 'Barkasse',
      },
    ],
  });
});

test('the stored 1.10 € matches betrag=-1.00&toleranz=0.10; 0.89 and 1.11 do not', async (t) => {
  const origin = await serveFixture(t);
  const expected = {
    anzahl: 2,
    buchungen: [
      {
        id: 12,
        datum: '2026-03-10',
        betrag: -0.9,
        zweck: 'Kopien 0,90',
        kategorie: 'Bürobedarf',
        konto: 'Kasse Filiale Köln',
      },
      {
        id: 11,
        datum: '2026-03-10',
        betrag: -1.1,
        zweck: 'Kopien "A4" \\ Ständer',
        kategorie: 'Bürobedarf',
        konto: 'Kasse Filiale Köln',
      },
    ],
  };
  assertReply(await get(`${origin}/api/v1/buchungen?${MARCH}&betrag=-1.00&toleranz=0.10`), 200, expected);
  assertReply(await get(`${origin}/api/v1/buchungen?${MARCH}&betrag=-1&toleranz=0,1`), 200, expected);
  const wider = await get(`${origin}/api/v1/buchungen?${MARCH}&betrag=-1&toleranz=0.11&limit=0`);
  assertReply(wider, 200, { anzahl: 4, buchungen: [] });
});

test('the date window is inclusive at both ends', async (t) => {
  const origin = await serveFixture(t);
  const ids = async (query: string): Promise<number[]> => {
    const reply = await get(`${origin}/api/v1/buchungen?${query}&betrag=-4.35`);
    assert.equal(reply.status, 200);
    return (JSON.parse(reply.body) as { buchungen: Array<{ id: number }> }).buchungen.map((b) => b.id);
  };
  assert.deepEqual(await ids(MARCH), [8]);
  assert.deepEqual(await ids('von=2026-02-28&bis=2026-03-31'), [8, 9]);
  assert.deepEqual(await ids('von=2026-03-01&bis=2026-04-01'), [10, 8]);
  assert.deepEqual(await ids('von=2026-03-31&bis=2026-03-31'), [8]);
  assert.deepEqual(await ids('von=2026-04-02&bis=2026-12-31'), []);
});

test('anzahl counts every match; limit only cuts the page', async (t) => {
  const origin = await serveFixture(t);
  const two = await get(`${origin}/api/v1/buchungen?${MARCH}&betrag=-12.5&limit=2`);
  assert.deepEqual(
    (JSON.parse(two.body) as { anzahl: number; buchungen: Array<{ id: number }> }).buchungen.map((b) => b.id),
    [6, 5],
  );
  assert.equal((JSON.parse(two.body) as { anzahl: number }).anzahl, 6);
  assertReply(await get(`${origin}/api/v1/buchungen?${MARCH}&betrag=-12.5&limit=0`), 200, { anzahl: 6, buchungen: [] });
});

test('zero, the largest amount, control characters and a leap day come out exactly', async (t) => {
  const origin = await serveFixture(t);
  assertReply(await get(`${origin}/api/v1/buchungen?${MARCH}&betrag=0`), 200, {
    anzahl: 1,
    buchungen: [{ id: 15, datum: '2026-03-20', betrag: 0, zweck: '' }],
  });
  const largest = await get(`${origin}/api/v1/buchungen?${MARCH}&betrag=-999999999999.99`);
  assert.ok(largest.body.includes('"betrag":-999999999999.99,'), largest.body);
  assertReply(await get(`${origin}/api/v1/buchungen?${MARCH}&betrag=-19.99`), 200, {
    anzahl: 1,
    buchungen: [
      {
        id: 18,
        datum: '2026-03-21',
        betrag: -19.99,
        zweck: 'Zeilen\numbruch und\tTab',
        kategorie: 'Reisekosten – Straßenbahn',
        konto: 'Kasse Filiale Köln',
      },
    ],
  });
  assertReply(await get(`${origin}/api/v1/buchungen?von=2024-02-29&bis=2024-02-29&betrag=-12.5`), 200, {
    anzahl: 1,
    buchungen: [
      { id: 19, datum: '2024-02-29', betrag: -12.5, zweck: 'Schalttag', kategorie: 'Porto', konto: 'Barkasse' },
    ],
  });
});

test('a currency other than exactly EUR finds nothing', async (t) => {
  const origin = await serveFixture(t);
  for (const waehrung of ['USD', 'eur', 'Eur']) {
    assertReply(await get(`${origin}/api/v1/buchungen?${MARCH}&betrag=-12.5&waehrung=${waehrung}`), 200, {
      anzahl: 0,
      buchungen: [],
    });
  }
  const eur = await get(`${origin}/api/v1/buchungen?${MARCH}&betrag=-12.5&waehrung=EUR&limit=0`);
  assertReply(eur, 200, { anzahl: 6, buchungen: [] });
});

test('validation failures answer 400 with the docs/API.md message', async (t) => {
  const origin = await serveFixture(t);
  const cases: Array<[string, string]> = [
    ['von=2026-03-01&bis=2026-03-31&betrag=1&x=%zz', 'Die Anfrage enthält ungültig kodierte Zeichen.'],
    [`${MARCH}&betrag=1&sort=datum`, "Unbekannter Parameter 'sort'."],
    [`${MARCH}&betrag=1&betrag=2`, "Parameter 'betrag' darf nur einmal angegeben werden."],
    ['bis=2026-03-31&betrag=1', "Parameter 'von' fehlt."],
    ['von=2026-03-01&betrag=1', "Parameter 'bis' fehlt."],
    [MARCH, "Parameter 'betrag' fehlt."],
    ['von=2025-02-29&bis=2026-03-31&betrag=1', "Parameter 'von' muss ein gültiges Datum im Format JJJJ-MM-TT sein."],
    ['von=2026-03-01&bis=31.03.2026&betrag=1', "Parameter 'bis' muss ein gültiges Datum im Format JJJJ-MM-TT sein."],
    [`${MARCH}&betrag=12.345`, "Parameter 'betrag' muss ein Betrag mit höchstens zwei Nachkommastellen sein."],
    [
      `${MARCH}&betrag=1&toleranz=-1`,
      "Parameter 'toleranz' muss ein nicht negativer Betrag mit höchstens zwei Nachkommastellen sein.",
    ],
    [`${MARCH}&betrag=1&waehrung=EURO`, "Parameter 'waehrung' muss ein dreistelliger Währungscode sein."],
    [`${MARCH}&betrag=1&limit=1001`, "Parameter 'limit' muss eine ganze Zahl zwischen 0 und 1000 sein."],
    ['von=2026-03-31&bis=2026-03-01&betrag=1', "Der Zeitraum ist ungültig: 'von' liegt nach 'bis'."],
  ];
  for (const [query, message] of cases) {
    assertReply(await get(`${origin}/api/v1/buchungen?${query}`), 400, { fehler: message, code: 'bad_query' });
  }
  assertReply(await get(`${origin}/api/v1/buchungen`), 400, { fehler: "Parameter 'von' fehlt.", code: 'bad_query' });
});

test('a database error answers the fixed 500, the cause goes to onError with the path a log shows, and serving goes on', async (t) => {
  const file = buildDatabase(t);
  const errors: unknown[] = [];
  const paths: string[] = [];
  const onError = (error: unknown, _req: unknown, path: string): void => {
    errors.push(error);
    paths.push(path);
  };
  const origin = await serve(t, createHandler(openReadOnly(t, file), CREDENTIALS, { onError }));
  // A booking no search can answer, written after the start.
  const writer = new Database(file);
  writer.exec("INSERT INTO entries (id, date, amount_cents) VALUES (100, '2026-03-05', 1250.5)");
  writer.close();
  const reply = await get(`${origin}/api/v1/buchungen?${MARCH}&betrag=-12.5&toleranz=1`);
  assertReply(reply, 500, { fehler: 'Interner Fehler bei der Buchungssuche.', code: 'search_failed' });
  assert.equal(reply.headers['retry-after'], undefined);
  assert.equal(errors.length, 1);
  assert.deepEqual(paths, ['/api/v1/buchungen'], 'no query');
  assertReply(await get(`${origin}/api/v1/status`), 200, statusAnswer());
});

/** The fixture served over a reader with busy timeout `timeout` while a writer holds its lock, a booking written. */
async function servedWhileLocked(t: TestContext, timeout: number) {
  const file = buildDatabase(t);
  const reader = openReadOnly(t, file, { timeout });
  const writer = new Database(file);
  t.after(() => writer.close());
  const errors: unknown[] = [];
  const origin = await serve(t, createHandler(reader, CREDENTIALS, { onError: (error) => errors.push(error) }));
  writer.exec('BEGIN EXCLUSIVE');
  writer.exec("INSERT INTO entries (date, amount_cents) VALUES ('2026-03-02', 1250)");
  return { origin, reader, writer, errors };
}

test('a locked database answers 500 with Retry-After: 1 and succeeds once the lock is gone', async (t) => {
  const { origin, writer, errors } = await servedWhileLocked(t, 20);
  const locked = await get(`${origin}/api/v1/buchungen?${MARCH}&betrag=-12.5`);
  assertReply(locked, 500, { fehler: 'Interner Fehler bei der Buchungssuche.', code: 'database_unavailable' });
  assert.equal(locked.headers['retry-after'], '1');
  assert.match(String((errors[0] as { code?: string }).code), /^SQLITE_BUSY/);

  writer.exec('COMMIT');
  const after = await get(`${origin}/api/v1/buchungen?${MARCH}&betrag=-12.5&limit=0`);
  assertReply(after, 200, { anzahl: 7, buchungen: [] });
});

test('on a connection with busy timeout 0, a search that meets a write lock waits for it without holding the process, and answers 200 once the write is committed', async (t) => {
  const { origin, writer } = await servedWhileLocked(t, 0);
  // The commit runs in this very process: only while the search does not hold the event loop.
  setTimeout(() => writer.exec('COMMIT'), 30);
  const reply = await get(`${origin}/api/v1/buchungen?${MARCH}&betrag=-12.5&limit=0`);
  assertReply(reply, 200, { anzahl: 7, buchungen: [] });
});

test("on such a connection whose default turned to BigInts after the handler was made (the embedder's own code), the search still waits for the lock", async (t) => {
  const { origin, reader, writer } = await servedWhileLocked(t, 0);
  reader.defaultSafeIntegers(true);
  setTimeout(() => writer.exec('COMMIT'), 30);
  const reply = await get(`${origin}/api/v1/buchungen?${MARCH}&betrag=-12.5&toleranz=1&limit=0`);
  assertReply(reply, 200, { anzahl: 7, buchungen: [] });
});

test('a connection its owner closes while a search waits for it: 500 database_unavailable with Retry-After: 1, so that the retry reaches the handler over a new one', async (t) => {
  const { origin, reader, writer, errors } = await servedWhileLocked(t, 0);
  setTimeout(() => {
    reader.close();
    writer.exec('COMMIT');
  }, 30);
  const reply = await get(`${origin}/api/v1/buchungen?${MARCH}&betrag=-12.5&limit=0`);
  assertReply(reply, 500, { fehler: 'Interner Fehler bei der Buchungssuche.', code: 'database_unavailable' });
  assert.equal(reply.headers['retry-after'], '1');
  assert.equal((errors[0] as { code?: string }).code, 'BOOKING_SEARCH_DATABASE_CLOSED');
});

test('an amount that is not whole cents in the database answers 500 instead of a wrong betrag', async (t) => {
  const file = buildDatabase(t);
  const errors: unknown[] = [];
  const origin = await serve(
    t,
    createHandler(openReadOnly(t, file), CREDENTIALS, { onError: (error) => errors.push(error) }),
  );
  // Written after the start: at the start, createHandler refuses such a file as check does.
  const writer = new Database(file);
  writer.exec("INSERT INTO entries (id, date, amount_cents) VALUES (100, '2026-03-05', 1250.5)");
  writer.close();
  const reply = await get(`${origin}/api/v1/buchungen?${MARCH}&betrag=-12.5&toleranz=1`);
  assertReply(reply, 500, { fehler: 'Interner Fehler bei der Buchungssuche.', code: 'search_failed' });
  assert.ok(errors[0] instanceof RangeError);
});

test('a booking the search cannot answer is its 500 also where only counted: limit=0, a full page, every plan but the count of every date and amount', async (t) => {
  for (const [date, amount, said] of [
    [
      '2026-03-05x',
      1250,
      /^RangeError: the booking with id 100 has a date that is not a day of the calendar as YYYY-MM-DD$/,
    ],
    [
      '2026-02-30',
      1250,
      /^RangeError: the booking with id 100 has a date that is not a day of the calendar as YYYY-MM-DD$/,
    ],
    ['2026-03-05', 1250.5, /^RangeError: the booking with id 100 has an amount that is not whole cents$/],
  ] as const) {
    const file = buildDatabase(t);
    const errors: unknown[] = [];
    const origin = await serve(
      t,
      createHandler(openReadOnly(t, file), CREDENTIALS, { onError: (error) => errors.push(error) }),
    );
    // Written after the start: at the start, createHandler refuses such a file as check does.
    const writer = new Database(file);
    writer
      .prepare('INSERT INTO entries (id, date, amount_cents, payment_method_id) VALUES (100, ?, ?, 1)')
      .run(date, amount);
    writer.close();
    // One amount (only where the booking's is whole), a page with no room for it, bands.
    const searches = [
      ...(amount === 1250 ? ['betrag=-12.5&limit=0', 'betrag=-12.5&limit=1'] : []),
      'betrag=-12.5&toleranz=0.01&limit=1',
      'betrag=-12.5&toleranz=1&limit=0',
      'betrag=0&toleranz=999999999999.99&limit=0',
    ];
    for (const search of searches) {
      const window = date === '2026-02-30' ? 'von=2026-02-01&bis=2026-03-31' : MARCH;
      const reply = await get(`${origin}/api/v1/buchungen?${window}&${search}`);
      assertReply(reply, 500, { fehler: 'Interner Fehler bei der Buchungssuche.', code: 'search_failed' });
      assert.match(String(errors.at(-1)), said, `${date} ${amount} ${search}`);
    }
    // Every date and every amount: a table's whole b-tree counted, its bookings unread
    // (lib/search/sql.ts, CountKind), so the booking is counted there, as docs/API.md says.
    const widest = await get(
      `${origin}/api/v1/buchungen?von=0000-01-01&bis=9999-12-31&betrag=0&toleranz=999999999999.99&limit=0`,
    );
    assert.equal(widest.status, 200, `${date} ${amount}: every date, every amount`);
    const stored = new Database(file, { readonly: true });
    assert.equal(JSON.parse(widest.body).anzahl, stored.prepare('SELECT count(*) FROM entries').pluck().get());
    stored.close();
    // A search whose window or amount leaves the booking out is answered.
    assert.equal((await get(`${origin}/api/v1/buchungen?${MARCH}&betrag=-4.35&limit=0`)).status, 200);
  }
});

test('the handler reads bookings another program added after it was created', async (t) => {
  const file = buildDatabase(t);
  const db = openReadOnly(t, file);
  const origin = await serve(t, createHandler(db, CREDENTIALS));
  const writer = new Database(file);
  writer.exec("INSERT INTO entries (id, date, amount_cents, subject) VALUES (500, '2026-03-30', 1250, 'Nachgebucht')");
  writer.close();
  const reply = await get(`${origin}/api/v1/buchungen?${MARCH}&betrag=-12.5&limit=1`);
  assertReply(reply, 200, {
    anzahl: 7,
    buchungen: [{ id: 500, datum: '2026-03-30', betrag: -12.5, zweck: 'Nachgebucht' }],
  });
});

test('a writable connection whose owner holds a transaction on it: a search never reads what is not committed (500 database_unavailable, Retry-After: 1, until it ends), nor does a reconciliation', async (t) => {
  const db = new Database(buildDatabase(t), { timeout: 0 });
  t.after(() => db.close());
  const origin = await serve(t, createHandler(db, CREDENTIALS));
  const search = `${origin}/api/v1/buchungen?${MARCH}&betrag=-777.77`;
  const unavailable = { fehler: 'Interner Fehler bei der Buchungssuche.', code: 'database_unavailable' };
  const abgleich = (): Promise<Reply> =>
    request(`${origin}/api/v1/abgleich`, {
      method: 'POST',
      headers: { authorization: AUTH, 'content-type': 'application/json' },
      body: JSON.stringify({ zeilen: [{ datum: '2026-03-14', betrag: '-777.77' }] }),
    });

  db.exec('BEGIN');
  db.prepare(
    "INSERT INTO entries (id, date, amount_cents, subject) VALUES (99999, '2026-03-14', 77777, 'offen')",
  ).run();
  const during = await get(search);
  assertReply(during, 500, unavailable);
  assert.equal(during.headers['retry-after'], '1');
  assertReply(await abgleich(), 500, unavailable);
  db.exec('ROLLBACK');
  assertReply(await get(search), 200, { anzahl: 0, buchungen: [] });
  assert.match((await abgleich()).body, /"buchungen":\[\]/);
});
