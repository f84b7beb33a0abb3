// Actual Budget, served with one option (`app: "actual"`, --app actual) from a budget file
// that Actual's own package wrote: splits, a transfer, a deleted transaction, a deleted
// account, an uncategorised booking, 0.01 and 1,234,567.89, each answer checked against
// what Actual's API itself lists.

import assert from 'node:assert/strict';
import { chmodSync, readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { hexPrefixIdOf } from '../lib/apps/ids.js';
import { findApplication } from '../lib/apps/index.js';
import { type Booking, createHandler } from '../lib/index.js';
import { explainCount } from '../lib/search/index.js';
import { type ActualView, writeActualBudget } from './support/actual-budget.js';
import {
  assertAnswersEverySearch,
  assertDateRefused,
  assertNotWholeCents,
  assertRefusedAsCheckSays,
  searchFor,
  writeBook,
} from './support/app-serving.js';
import { run, start, waitFor } from './support/cli-helpers.js';
import { AUTH, CREDENTIALS, request, serve, tempDir } from './support/helpers.js';

/** The booking Actual's own listing says the service must answer (docs/applications.md, Actual). */
function expectedBooking(tx: ActualView['transactions'][number]): Booking {
  const zweck = [tx.payee ?? '', tx.notes ?? ''].filter((part) => part !== '').join(': ');
  return {
    id: hexPrefixIdOf(tx.id),
    datum: tx.date,
    betrag: tx.amount / 100,
    zweck,
    ...(tx.category === null ? {} : { kategorie: tx.category }),
    konto: tx.account,
  };
}

const SPEC = {
  categories: ['Porto', 'Bürobedarf'],
  accounts: [
    {
      name: 'Barkasse',
      transactions: [
        { date: '2026-03-14', amount: -1250, payee: 'Post', category: 'Porto', notes: 'Briefmarken' },
        {
          date: '2026-03-15',
          amount: -3000,
          payee: 'Laden',
          notes: 'Einkauf',
          parts: [
            { amount: -1000, category: 'Porto', notes: 'Marken' },
            { amount: -2000, category: 'Bürobedarf', notes: 'Papier' },
          ],
        },
        { date: '2026-03-16', amount: -5000, transferTo: 'Girokonto', notes: 'Einzahlung Bank' },
        { date: '2026-03-17', amount: -777, payee: 'Irrtum', deleted: true },
        { date: '2026-03-18', amount: -1999, notes: 'Druckerpatrone' },
        { date: '2026-03-20', amount: -1, payee: 'Rundung' },
        { date: '2026-03-21', amount: 123_456_789, payee: 'Erbschaft', notes: 'Größter Posten' },
        { date: '2026-03-31', amount: -1250, payee: 'Post', category: 'Porto' },
        { date: '2026-04-01', amount: -1250, payee: 'Post', category: 'Porto' },
        { date: '2026-02-28', amount: -1250, payee: 'Post', category: 'Porto' },
      ],
    },
    { name: 'Girokonto', transactions: [{ date: '2026-03-14', amount: -1250, payee: 'Post', category: 'Porto' }] },
    { name: 'Altes Konto', deleted: true, transactions: [{ date: '2026-03-14', amount: -1250, payee: 'Post' }] },
  ],
};

test('an Actual budget written by Actual itself answers exactly what Actual lists, with app "actual"', async (t) => {
  const budget = await writeActualBudget(tempDir(t), SPEC);
  const db = new Database(budget.file, { readonly: true, fileMustExist: true });
  t.after(() => db.close());
  // The file holds what the test means to serve: a split, a deleted row, two sides of a transfer.
  const rows = db.prepare('SELECT isParent, isChild, tombstone, transferred_id FROM transactions').all() as Array<
    Record<string, unknown>
  >;
  assert.ok(rows.some((row) => row['isParent'] === 1) && rows.some((row) => row['isChild'] === 1), 'a split');
  assert.ok(
    rows.some((row) => row['tombstone'] === 1),
    'a deleted transaction',
  );
  assert.equal(rows.filter((row) => row['transferred_id'] !== null).length, 2, 'a transfer is two rows');

  const all = budget.transactions.map(expectedBooking);
  assert.equal(all.length, 11, 'nine in the cash box (one deleted), the transfer in the bank and its own booking');
  const search = await searchFor(t, db, 'actual');

  // Pinned by hand: what an Actual user sees, the way the client gets it.
  assert.deepEqual(await search('von=2026-03-15&bis=2026-03-15&betrag=-30'), {
    anzahl: 1,
    buchungen: [
      {
        id: all.find((b) => b.betrag === -30)?.id,
        datum: '2026-03-15',
        betrag: -30,
        zweck: 'Laden: Einkauf',
        konto: 'Barkasse',
      },
    ],
  });
  assert.deepEqual(await search('von=2026-03-15&bis=2026-03-15&betrag=-10'), { anzahl: 0, buchungen: [] });
  // A transfer is a booking in each of its two accounts, named after the other one.
  const transfer = (await search('von=2026-03-16&bis=2026-03-16&betrag=0&toleranz=50&limit=10')) as {
    buchungen: Booking[];
  };
  assert.deepEqual(
    transfer.buchungen
      .map(({ betrag, zweck, konto }) => ({ betrag, zweck, konto }))
      .sort((a, b) => a.betrag - b.betrag),
    [
      { betrag: -50, zweck: 'Girokonto: Einzahlung Bank', konto: 'Barkasse' },
      { betrag: 50, zweck: 'Barkasse: Einzahlung Bank', konto: 'Girokonto' },
    ],
  );
  assert.deepEqual(await search('von=2026-03-17&bis=2026-03-17&betrag=-7.77'), { anzahl: 0, buchungen: [] });

  // Every amount in the data, exactly, in March; bands; the whole range.
  await assertAnswersEverySearch(search, all, ['2026-03-01', '2026-03-31', 1234567.89, 0, 50]);
  // The smallest and the largest amount, as the client sees them.
  const everything = (await search('von=2000-01-01&bis=2099-12-31&betrag=0&toleranz=9999999&limit=1000')) as {
    buchungen: Booking[];
  };
  assert.ok(everything.buchungen.some((b) => b.betrag === -0.01 && b.zweck === 'Rundung' && !('kategorie' in b)));
  assert.ok(everything.buchungen.some((b) => b.betrag === 1234567.89 && b.zweck === 'Erbschaft: Größter Posten'));
  assert.ok(
    everything.buchungen.some((b) => b.zweck === 'Druckerpatrone' && !('kategorie' in b)),
    'uncategorised',
  );
});

test("an Actual budget is searched by Actual's own date index, and nothing is written to it", async (t) => {
  const budget = await writeActualBudget(tempDir(t), SPEC);
  const before = readFileSync(budget.file);
  const db = new Database(budget.file, { readonly: true, fileMustExist: true });
  t.after(() => db.close());
  const plan = explainCount(db, undefined, findApplication('actual'));
  assert.ok(
    plan.some((line) => /^SEARCH t USING INDEX (trans_date|trans_sorted) \(date>\? AND date<\?\)$/.test(line)),
    plan.join('; '),
  );
  db.close();
  // As an admin gives the service a budget folder it may read but not write.
  chmodSync(dirname(budget.file), 0o555);
  const result = await run(['check', '--db', budget.file, '--app', 'actual']);
  assert.equal(result.code, 0, result.stdout + result.stderr);
  assert.match(result.stdout, /^Mapping: Actual \(--app actual\)\.$/m);
  assert.match(
    result.stdout,
    /^The typical search \(one amount in a month\) reads only its month, by the index trans_date\.$/m,
  );
  assert.deepEqual(readFileSync(budget.file), before);
});

test('check notes two Actual accounts of one name (a deleted one not counted): konto cannot tell them apart', async (t) => {
  const budget = await writeActualBudget(tempDir(t), SPEC);
  writeBook(budget.file, (writer) => writer.exec("UPDATE accounts SET name = 'Barkasse'"));
  chmodSync(dirname(budget.file), 0o555);
  const check = await run(['check', '--db', budget.file, '--app', 'actual']);
  assert.equal(check.code, 0, check.stdout + check.stderr);
  assert.match(
    check.stdout,
    /^Note: 2 served accounts are named 'Barkasse': a booking's konto is its account's own name; rename one in Actual so that clients and konten can tell them apart\.$/m,
  );
});

test("an Actual budget kept in US dollars (Actual's own currency setting) is refused by check, the handler and the command with one sentence; one kept in euros is served", async (t) => {
  const dollars = await writeActualBudget(tempDir(t), {
    preferences: { 'flags.currency': 'true', defaultCurrencyCode: 'USD' },
    ...SPEC,
  });
  // Actual's own reading of the budget's currency.
  assert.equal(dollars.preferences['defaultCurrencyCode'], 'USD');
  chmodSync(dirname(dollars.file), 0o555);
  const check = await run(['check', '--db', dollars.file, '--app', 'actual']);
  assert.equal(check.code, 1, check.stdout);
  // A setting, not data that would be answered wrongly: the bookings are not even read (counted).
  assert.doesNotMatch(check.stdout, /^Bookings: /m);
  assert.match(
    check.stdout,
    /^Data: refused while a setting of its application holds \(no booking read\); served once it no longer does:$/m,
  );
  assert.match(
    check.stdout,
    /^ {2}- the budget is kept in USD \(its currency in Actual's settings, defaultCurrencyCode\), and the service answers in euros only: it does not serve this budget\.$/m,
  );
  const db = new Database(dollars.file, { readonly: true, fileMustExist: true });
  t.after(() => db.close());
  await assertRefusedAsCheckSays(db, dollars.file, 'actual', check.stdout, undefined, t);

  const euros = await writeActualBudget(tempDir(t), { preferences: { defaultCurrencyCode: 'EUR' }, ...SPEC });
  assert.equal(euros.preferences['defaultCurrencyCode'], 'EUR');
  chmodSync(dirname(euros.file), 0o555);
  const fits = await run(['check', '--db', euros.file, '--app', 'actual']);
  assert.equal(fits.code, 0, fits.stdout);
  const served = new Database(euros.file, { readonly: true, fileMustExist: true });
  t.after(() => served.close());
  await assertAnswersEverySearch(await searchFor(t, served, 'actual'), euros.transactions.map(expectedBooking));
});

test('an Actual budget whose currency is set to USD while it is served is answered in euros no more: the command refuses it, says so in its log and /ready, and serves it again once it is EUR; the handler answers 500', async (t) => {
  const budget = await writeActualBudget(tempDir(t), { preferences: { defaultCurrencyCode: 'EUR' }, ...SPEC });
  chmodSync(dirname(budget.file), 0o555);
  // As Actual's Settings › Currency saves it, from a connection of its own.
  const currency = (code: string) =>
    writeBook(budget.file, (writer) => {
      writer.prepare("UPDATE preferences SET value = ? WHERE id = 'defaultCurrencyCode'").run(code);
    });
  const query = 'von=2026-03-14&bis=2026-03-14&betrag=-12.5';
  const cli = await start(t, ['--db', budget.file, '--app', 'actual', '--admin-port', '0']);
  const admin = /admin listener on (http:\/\/127\.0\.0\.1:\d+)\//.exec(cli.output().stdout)?.[1] as string;
  const search = () => request(`${cli.api}buchungen?${query}`, { headers: { authorization: AUTH } });
  const errors: unknown[] = [];
  const db = new Database(budget.file, { readonly: true, fileMustExist: true });
  t.after(() => db.close());
  const origin = await serve(t, createHandler(db, CREDENTIALS, { app: 'actual', onError: (e) => errors.push(e) }));
  const searchHandler = () => request(`${origin}/api/v1/buchungen?${query}`, { headers: { authorization: AUTH } });
  assert.equal((await search()).status, 200);
  assert.equal((await searchHandler()).status, 200);

  currency('USD');
  const said = /the budget is kept in USD \(its currency in Actual's settings, defaultCurrencyCode\)/;
  for (const reply of [await search(), await searchHandler()]) assert.equal(reply.status, 500, reply.body);
  assert.match(String(errors[0]), said);
  await waitFor(() => cli.output().stderr, said);
  // The log says what refuses the file, and until when: not a missing or broken file's words.
  assert.match(cli.output().stderr, /it does not serve this budget\. Searches answer 500 until that no longer holds$/m);
  assert.equal((await search()).status, 500);
  const ready = await request(`${admin}/ready`);
  assert.equal(ready.status, 503, ready.body);
  assert.match(ready.body, said);
  // Served again once the application acts, as a lock passes: waiting, as its 500's Retry-After says.
  assert.match(ready.body, /"state":"waiting"/);

  currency('EUR');
  assert.equal((await searchHandler()).status, 200);
  await waitFor(() => cli.output().stdout + cli.output().stderr, /serving it$/m);
  assert.match(cli.output().stderr, /Z database \S+: what refused it no longer holds; serving it$/m);
  const back = await search();
  assert.equal(back.status, 200, back.body);
  assert.equal((JSON.parse(back.body) as { anzahl: number }).anzahl, 2);
  assert.equal((await cli.stop()).code, 0);
});

test("an Actual amount that is no integer ('LEAK') is never read as 0: written after the start a search is a 500; check, the handler and the command refuse the budget", async (t) => {
  const budget = await writeActualBudget(tempDir(t), SPEC);
  const db = new Database(budget.file, { readonly: true, fileMustExist: true });
  t.after(() => db.close());
  const stdout = await assertNotWholeCents(
    t,
    db,
    budget.file,
    'actual',
    'von=2026-03-18&bis=2026-03-18&betrag=-19.99',
    (writer) => writer.exec("UPDATE transactions SET amount = 'LEAK' WHERE date = 20260318"),
  );
  assert.match(stdout, /^ {2}- the booking .*id \d+\) has no amount the service can read: /m);
});

test("an Actual date that is no integer ('LEAK', 20260318.5) or no day of the calendar (20260231) is refused by check, the handler and the command, never left out or guessed, also when written while served", async (t) => {
  const budget = await writeActualBudget(tempDir(t), SPEC);
  const db = new Database(budget.file, { readonly: true, fileMustExist: true });
  t.after(() => db.close());
  const dated = (date: unknown) => (writer: Database.Database) =>
    writer.prepare('UPDATE transactions SET date = ? WHERE amount = -1999').run(date);
  const unread =
    /^ {2}- the booking in 'Barkasse' \('Druckerpatrone', id \d+\) has no date the service can read: Actual holds a date the service cannot answer/m;
  const notADay = (date: string) =>
    new RegExp(
      `^ {2}- the booking in 'Barkasse' \\('Druckerpatrone', id \\d+\\) has the date '${date}', not a day of the calendar as YYYY-MM-DD: `,
      'm',
    );
  // Written while the budget is served: a search whose window reads it is a 500, also a count.
  const served = { t, query: 'von=2026-02-01&bis=2026-03-31&betrag=-19.99' };
  await assertDateRefused(db, budget.file, 'actual', dated(20260230), notADay('2026-02-30'), served);
  // A REAL date lies in the window Actual's index reads, and no date is read of it.
  writeBook(budget.file, dated(20260318));
  await assertDateRefused(db, budget.file, 'actual', dated(20260318.5), unread, served);
  await assertDateRefused(db, budget.file, 'actual', dated('LEAK'), unread);
  await assertDateRefused(db, budget.file, 'actual', dated(20260231), notADay('2026-02-31'));
});
