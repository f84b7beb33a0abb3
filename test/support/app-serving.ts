// An application's file served by the handler with its `app` option, for the test/app-*.test.ts files.

import assert from 'node:assert/strict';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import Database from 'better-sqlite3';
import { answer, asQuery, type ExpectedBooking, type LedgerTransaction } from '../../fixtures/ledger-books.js';
import { type Booking, createHandler } from '../../lib/index.js';
import { run, start } from './cli-helpers.js';
import { AUTH, CREDENTIALS, databaseDir, request, serve } from './helpers.js';

/** Writes the book `file` by `write` as another program would, on a connection of its own. */
export function writeBook(file: string, write: (writer: Database.Database) => void): void {
  const writer = new Database(file);
  write(writer);
  writer.close();
}

/** Serves `db` with `app` on 127.0.0.1; the returned search asserts a 200 and gives the parsed body. */
export async function searchFor(
  t: TestContext,
  db: Database.Database,
  app: string,
): Promise<(query: string) => Promise<unknown>> {
  const origin = await serve(t, createHandler(db, CREDENTIALS, { app }));
  return async (query) => {
    const reply = await request(`${origin}/api/v1/buchungen?${query}`, { headers: { authorization: AUTH } });
    assert.equal(reply.status, 200, reply.body);
    return JSON.parse(reply.body);
  };
}

/**
 * An amount that is not whole cents (or past 2^53 cents), written into the book `file` (open as `db`) by `spoil`
 * as another program would: written while the service runs, the search `query` is a 500
 * with the reason given to `onError`, never a rounded amount; then `check --app` refuses the
 * file naming the booking and its amount, and the handler and the command refuse to start
 * on it with check's sentence naming neither. Returns check's output for the application's
 * own wording.
 */
export async function assertNotWholeCents(
  t: TestContext,
  db: Database.Database,
  file: string,
  app: string,
  /** A search whose band holds the amount; none for one beyond every band. */
  query: string | undefined,
  spoil: (writer: Database.Database) => void,
  /** The amount as check names it, exactly; else any decimal or fraction. */
  held = '-?\\d+(?:\\.\\d+|/\\d+)',
): Promise<string> {
  if (query === undefined) writeBook(file, spoil);
  else {
    const search = await searchSpoiled(t, db, file, app, spoil);
    // Named by its id alone, also when only counted: its values stay out of the log.
    const reason =
      /^RangeError: the booking with id \d+ has (?:an amount that is not whole cents|no amount the service can read)$/;
    await search(query, reason);
    await search(`${query}&limit=0`, reason);
  }
  const check = await run(['check', '--db', file, '--app', app]);
  assert.equal(check.code, 1, check.stdout);
  const [, named, id, amount, fault] =
    check.stdout.match(
      new RegExp(
        `^ {2}- (the booking .*?id (\\d+)\\)) has (?:the amount (${held}), (not whole cents|beyond [^:]+)|no amount the service)`,
        'm',
      ),
    ) ?? [];
  assert.ok(id !== undefined, check.stdout);
  const said = await assertRefusedAsCheckSays(db, file, app, check.stdout, (sentence) =>
    sentence
      .replace(`${named} has the amount ${amount}, ${fault}`, `a booking has an amount that is ${fault}`)
      .replace(`${named} has no amount`, 'a booking has no amount')
      .concat(' booking-search-server check names examples from the bookings.'),
  );
  for (const text of said) assert.ok(!text.includes(amount ?? '\0') && !text.includes(`id ${id}`), text);
  return check.stdout;
}

/**
 * `file` (open as `db`) served with `app`, then changed by `spoil` as another program would;
 * the returned search asserts that `query` answers 500 search_failed, never an answer, with
 * a reason in the log that matches `reason` (it names the booking).
 */
async function searchSpoiled(
  t: TestContext,
  db: Database.Database,
  file: string,
  app: string,
  spoil: (writer: Database.Database) => void,
): Promise<(query: string, reason: RegExp) => Promise<void>> {
  const errors: unknown[] = [];
  const origin = await serve(t, createHandler(db, CREDENTIALS, { app, onError: (e) => errors.push(e) }));
  writeBook(file, spoil);
  return async (query, reason) => {
    errors.length = 0;
    const reply = await request(`${origin}/api/v1/buchungen?${query}`, { headers: { authorization: AUTH } });
    assert.equal(reply.status, 500, `${query}: ${reply.body}`);
    assert.deepEqual(JSON.parse(reply.body), {
      fehler: 'Interner Fehler bei der Buchungssuche.',
      code: 'search_failed',
    });
    assert.match(String(errors[0]), reason);
  };
}

/**
 * A booking whose date the service cannot read, or that is no day of the calendar, in the
 * book `file` (open as `db`), written by `spoil` as another program would: `check --app`
 * refuses the file naming the booking and its date (its line matches `named`), and the
 * handler and the command refuse to start on it with check's sentence naming neither.
 * With `searched` (a test and a query whose window reads the booking), written while the
 * file is served: the search and its count alone (limit=0) are a 500 naming the booking.
 * Returns check's output.
 */
export async function assertDateRefused(
  db: Database.Database,
  file: string,
  app: string,
  spoil: (writer: Database.Database) => void,
  named: RegExp,
  searched?: { t: TestContext; query: string },
): Promise<string> {
  if (searched === undefined) {
    writeBook(file, spoil);
  } else {
    const search = await searchSpoiled(searched.t, db, file, app, spoil);
    const reason =
      /^RangeError: the booking with id \S+ has (?:no date the service can read|a date that is not a day of the calendar as YYYY-MM-DD)$/;
    await search(searched.query, reason);
    await search(`${searched.query}&limit=0`, reason);
  }
  const check = await run(['check', '--db', file, '--app', app]);
  assert.equal(check.code, 1, check.stdout);
  assert.match(check.stdout, named);
  const [, booking, id, date] =
    check.stdout.match(
      /^ {2}- (the booking .*?id (\S+)\)) has (?:no date the service|the date ('.*'), not a day of the calendar as YYYY-MM-DD)/m,
    ) ?? [];
  assert.ok(id !== undefined, check.stdout);
  const [unnamed, plain] =
    date === undefined
      ? ['no date the service can read', 'no date the service can read']
      : [
          `the date ${date}, not a day of the calendar as YYYY-MM-DD`,
          'a date that is not a day of the calendar as YYYY-MM-DD',
        ];
  const said = await assertRefusedAsCheckSays(db, file, app, check.stdout, (sentence) =>
    sentence
      .replace(`${booking} has ${unnamed}`, `a booking has ${plain}`)
      .concat(' booking-search-server check names examples from the bookings.'),
  );
  for (const text of said) assert.ok(!text.includes(`id ${id}`) && !text.includes(date ?? '\0'), text);
  return check.stdout;
}

/**
 * The file `check` refused with `checkOutput` is refused by the handler and by the command,
 * with the sentence check printed first under "Data:" as the service says it:
 * `serviceSays` of it (the sentence itself where it names no booking's value). Returns the
 * handler's message and the command's output. With `waitsIn`, a refusal by a setting of the
 * application: the command starts, the book refused until the setting changes.
 */
export async function assertRefusedAsCheckSays(
  db: Database.Database,
  file: string,
  app: string,
  checkOutput: string,
  serviceSays = (sentence: string): string => sentence,
  waitsIn?: TestContext,
): Promise<string[]> {
  const sentence = checkOutput.match(/^Data: (?:does not fit|refused) .*\n {2}- (.*)$/m)?.[1];
  assert.ok(sentence !== undefined, checkOutput);
  const said = serviceSays(sentence);
  let message = '';
  assert.throws(
    () => createHandler(db, CREDENTIALS, { app }),
    (error: unknown) => {
      message = String(error);
      assert.ok(error instanceof Error && error.message.startsWith(`db cannot be served exactly: ${said}`), message);
      return true;
    },
  );
  if (waitsIn !== undefined) {
    // A setting of the application: the command starts and says it, the book waiting for it.
    const server = await start(waitsIn, ['--db', file, '--app', app]);
    const { stderr } = server.output();
    assert.ok(stderr.includes(`${said} Searches answer 500 until that no longer holds`), stderr);
    const search = await request(`${server.api}buchungen?von=2026-01-01&bis=2026-12-31&betrag=1`, {
      headers: { authorization: AUTH },
    });
    assert.equal(search.status, 500, search.body);
    await server.stop();
    return [message, stderr];
  }
  const served = await run(['--db', file, '--app', app, '--port', '0']);
  assert.equal(served.code, 1, served.stderr);
  assert.ok(served.stderr.includes(said), served.stderr);
  return [message, served.stderr];
}

/** docs/API.md's processing steps 4 to 6 on the bookings a test expects, amounts in euros. */
export function expectedAnswer(
  all: Booking[],
  von: string,
  bis: string,
  betrag: number,
  toleranz: number,
  limit: number,
): { anzahl: number; buchungen: Booking[] } {
  const cents = (euros: number) => Math.round(euros * 100);
  const matches = all
    .filter((b) => b.datum >= von && b.datum <= bis && Math.abs(cents(b.betrag) - cents(betrag)) <= cents(toleranz))
    .sort((a, b) => (a.datum === b.datum ? b.id - a.id : a.datum < b.datum ? 1 : -1));
  return { anzahl: matches.length, buchungen: matches.slice(0, limit) };
}

/** A search: von, bis, betrag, toleranz (euros) and limit. */
export type EuroQuery = [string, string, number, number, number];

/**
 * Every amount of `all` exactly in March, bands, one day, the whole range and a limit of
 * one, then `more`: each answer held to `expectedAnswer`.
 */
export async function assertAnswersEverySearch(
  search: (query: string) => Promise<unknown>,
  all: Booking[],
  ...more: EuroQuery[]
): Promise<void> {
  const queries: EuroQuery[] = [];
  for (const booking of all) queries.push(['2026-03-01', '2026-03-31', booking.betrag, 0, 50]);
  queries.push(['2026-03-01', '2026-03-31', -12.5, 5, 50], ['2026-03-01', '2026-03-31', 0, 0.01, 50]);
  queries.push(['2026-03-14', '2026-03-14', -12.5, 0, 50], ['2000-01-01', '2099-12-31', 0, 9_999_999, 1000]);
  queries.push(['2000-01-01', '2099-12-31', -12.5, 0, 1], ...more);
  for (const [von, bis, betrag, toleranz, limit] of queries) {
    assert.deepEqual(
      await search(`von=${von}&bis=${bis}&betrag=${betrag}&toleranz=${toleranz}&limit=${limit}`),
      expectedAnswer(all, von, bis, betrag, toleranz, limit),
      `${von}..${bis} ${betrag} ±${toleranz}`,
    );
  }
}

/** The command serving a ledger book `file` with `--app`: a band of March answers what the ledger says. */
export async function assertCliServesLedger(
  t: TestContext,
  file: string,
  app: string,
  expected: ExpectedBooking[],
): Promise<void> {
  const cli = await start(t, ['--db', file, '--app', app]);
  const q = { von: '2026-03-01', bis: '2026-03-31', cents: -1250, toleranz: 500 };
  const reply = await request(`${cli.api}buchungen?${asQuery(q)}`, { headers: { authorization: AUTH } });
  assert.equal(reply.status, 200, reply.body);
  assert.deepEqual(JSON.parse(reply.body), answer(expected, q));
  await cli.stop();
}

/**
 * A ledger book written by `write` as `name` in a fresh directory, changed by `prepare` as
 * another program would, then opened read-only (closed after the test).
 */
export function openLedgerBook(
  t: TestContext,
  name: string,
  write: (file: string, book: LedgerTransaction[]) => ExpectedBooking[],
  book: LedgerTransaction[],
  prepare?: (writer: Database.Database) => void,
): { file: string; expected: ExpectedBooking[]; db: Database.Database } {
  const file = join(databaseDir(t), name);
  const expected = write(file, book);
  if (prepare !== undefined) writeBook(file, prepare);
  const db = new Database(file, { readonly: true, fileMustExist: true });
  t.after(() => db.close());
  return { file, expected, db };
}
