// An office of books (docs/operations.md, Many books): the command serving the books of a
// configuration file — the own schema, a Money Manager Ex file and a GnuCash book — each at
// its base path for its own users; a user of one book refused on the others as a wrong
// password is, in the same time; SIGHUP adding and removing books while searches are in
// flight; a broken file kept out; `check --config`; and where a setting may come from.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readdirSync, readlinkSync, renameSync, writeFileSync } from 'node:fs';
import { Agent, request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import Database from 'better-sqlite3';
import { answer, asQuery, CASES, writeGnuCash } from '../fixtures/ledger-books.js';
import {
  assertFails,
  BIN,
  cleanEnv,
  type Finished,
  makeCertificate,
  run,
  run as runCli,
  start,
  TIME,
  waitFor,
} from './support/cli-helpers.js';
import {
  assertReply,
  basicAuth,
  buildDatabase,
  databaseDir,
  fixtureSql,
  HASH_OF_ALT,
  MARCH_COFFEE,
  type Reply,
  request,
  statusAnswer,
  tempDir,
} from './support/helpers.js';

const UNAUTHORIZED = { fehler: 'Anmeldung erforderlich.', code: 'unauthorized' };
const NOT_FOUND = { fehler: 'Nicht gefunden.', code: 'not_found' };
const MARCH_435 = 'buchungen?von=2026-03-01&bis=2026-03-31&betrag=-4.35';
const MARCH_1250 = 'buchungen?von=2026-03-01&bis=2026-03-31&betrag=-12.50';
const GNUCASH_QUERY = { von: '2026-03-01', bis: '2026-03-31', cents: -1250, toleranz: 500 };

/** A Money Manager Ex file (MMEX's own tables) with one cash withdrawal of 12.50 € in March. */
function writeMmex(file: string): void {
  const db = new Database(file);
  db.exec(fixtureSql('mmex-tables.sql'));
  db.exec(`INSERT INTO CURRENCYFORMATS_V1 (CURRENCYID, CURRENCYNAME, PFX_SYMBOL, SFX_SYMBOL, DECIMAL_POINT,
      GROUP_SEPARATOR, UNIT_NAME, CENT_NAME, SCALE, BASECONVRATE, CURRENCY_SYMBOL, CURRENCY_TYPE)
    VALUES (1, 'Euro', '€', '', ',', '.', '', '', 100, 1, 'EUR', 'Fiat');
    INSERT INTO ACCOUNTLIST_V1 (ACCOUNTID, ACCOUNTNAME, ACCOUNTTYPE, STATUS, FAVORITEACCT, CURRENCYID)
      VALUES (1, 'Barkasse', 'Cash', 'Open', 'TRUE', 1);
    INSERT INTO PAYEE_V1 (PAYEEID, PAYEENAME, ACTIVE) VALUES (1, 'Post', 1);
    INSERT INTO CHECKINGACCOUNT_V1 (TRANSID, ACCOUNTID, TOACCOUNTID, PAYEEID, TRANSCODE, TRANSAMOUNT, STATUS,
      NOTES, CATEGID, TRANSDATE, DELETEDTIME, TOTRANSAMOUNT)
      VALUES (1, 1, -1, 1, 'Withdrawal', 12.5, '', 'Briefmarken', -1, '2026-03-14T00:00:00', NULL, 12.5);`);
  db.close();
}

interface Office {
  dir: string;
  config: string;
  files: { own: string; mmex: string; gnucash: string; spare: string };
  gnucashAnswer: ReturnType<typeof answer>;
}

/** Three books' files, a credentials file and the configuration that serves them. */
function office(t: TestContext, credentials: string): Office {
  const dir = tempDir(t);
  const data = databaseDir(t);
  const files = {
    own: buildDatabase(t),
    mmex: join(data, 'schmidt.mmb'),
    gnucash: join(data, 'meier.gnucash'),
    spare: join(data, 'neu.sqlite'),
  };
  writeMmex(files.mmex);
  const expected = writeGnuCash(files.gnucash, CASES);
  copyFileSync(files.own, files.spare);
  writeFileSync(join(dir, 'credentials'), credentials, { mode: 0o600 });
  const config = join(dir, 'books.conf');
  return { dir, config, files, gnucashAnswer: answer(expected, GNUCASH_QUERY) };
}

const CREDENTIALS = ['mueller:m-geheim', 'schmidt:s-geheim', 'meier:g-geheim', `buero:${HASH_OF_ALT}`, ''].join('\n');

/** The configuration of the three books; `more` is appended (further books). */
function writeConfig(o: Office, books: string[]): void {
  const text = [
    '# Steuerbüro: three clients, one service',
    `credentials-file = ${join(o.dir, 'credentials')}`,
    'name = "Steuerbuero Beispiel"',
    '',
    ...books,
  ].join('\n');
  writeFileSync(o.config, text, { mode: 0o600 });
}

const BOOKS = (o: Office): Record<string, string> => ({
  mueller: `[book mueller]\ndb = ${o.files.own}\nbase-path = /mueller\nusers = mueller, buero\n`,
  schmidt: `[book schmidt]\ndb = ${o.files.mmex}\napp = mmex\nbase-path = /schmidt/\nusers = schmidt, buero\n`,
  // No app: the GnuCash book is recognised by its tables.
  meier: `[book "Meier GmbH"]\ndb = "${o.files.gnucash}"\nbase-path = /meier\nusers = meier\n`,
  neu: `[book neu]\ndb = ${o.files.spare}\nbase-path = /neu\nusers = buero\n`,
});

const as = (user: string, password: string) => ({ headers: { authorization: basicAuth(user, password) } });

test('three books (own schema, MMEX, GnuCash) at their base paths, each for its own users; a path that names no book is 404 after a login', async (t) => {
  // weber is in the credentials file and in no book.
  const o = office(t, `${CREDENTIALS}weber:w-geheim\n`);
  const books = BOOKS(o);
  writeConfig(o, [books.mueller as string, books.schmidt as string, books.meier as string]);
  const cli = await start(t, ['--config', o.config], cleanEnv());
  const { origin } = cli;
  const { stdout } = cli.output();
  assert.match(
    stdout,
    new RegExp(`^${TIME} booking-search-server listening on ${origin}/ \\(3 books from ${o.config}\\)$`, 'm'),
  );
  assert.match(stdout, new RegExp(`^${TIME} book mueller: ${origin}/mueller/api/v1/ \\(${o.files.own}\\)$`, 'm'));
  assert.match(stdout, new RegExp(`^${TIME} book schmidt: ${origin}/schmidt/api/v1/ \\(${o.files.mmex}\\)$`, 'm'));
  assert.match(
    stdout,
    new RegExp(
      `^${TIME} book Meier GmbH: ${origin}/meier/api/v1/ \\(${o.files.gnucash}; recognised as GnuCash's file by its tables, served as with app = gnucash\\)$`,
      'm',
    ),
  );

  assertReply(
    await request(`${origin}/mueller/api/v1/status`, as('mueller', 'm-geheim')),
    200,
    statusAnswer('mueller'),
  );
  assertReply(await request(`${origin}/mueller/api/v1/${MARCH_435}`, as('mueller', 'm-geheim')), 200, MARCH_COFFEE);
  assertReply(await request(`${origin}/schmidt/api/v1/${MARCH_1250}`, as('schmidt', 's-geheim')), 200, {
    anzahl: 1,
    buchungen: [{ id: 1, datum: '2026-03-14', betrag: -12.5, zweck: 'Post: Briefmarken', konto: 'Barkasse' }],
  });
  assertReply(
    await request(`${origin}/meier/api/v1/buchungen?${asQuery(GNUCASH_QUERY)}`, as('meier', 'g-geheim')),
    200,
    o.gnucashAnswer,
  );
  assertReply(await request(`${origin}/meier/api/v1/status`, as('meier', 'g-geheim')), 200, statusAnswer('Meier GmbH'));

  // Each user on the other books: the 401 of a wrong password there, with that book's realm.
  const refusals: Array<[path: string, user: string, password: string, realm: string]> = [
    ['/schmidt/api/v1/status', 'mueller', 'm-geheim', 'schmidt'],
    ['/meier/api/v1/status', 'mueller', 'm-geheim', 'Meier GmbH'],
    ['/mueller/api/v1/status', 'schmidt', 's-geheim', 'mueller'],
    ['/meier/api/v1/status', 'schmidt', 's-geheim', 'Meier GmbH'],
    ['/mueller/api/v1/status', 'meier', 'g-geheim', 'mueller'],
    ['/schmidt/api/v1/status', 'meier', 'g-geheim', 'schmidt'],
    ['/meier/api/v1/status', 'meier', 'falsch', 'Meier GmbH'],
  ];
  for (const [path, user, password, realm] of refusals) {
    const reply = await request(`${origin}${path}`, as(user, password));
    assertReply(reply, 401, UNAUTHORIZED);
    assert.equal(reply.headers['www-authenticate'], `Basic realm="${realm}", charset="UTF-8"`, `${user} on ${path}`);
  }

  // A path that names no book: every user of a book logs in, then 404; others get the 401, a user of no book too.
  for (const path of ['/api/v1/status', '/weber/api/v1/status', '/']) {
    assertReply(await request(`${origin}${path}`, as('meier', 'g-geheim')), 404, NOT_FOUND);
    assertReply(await request(`${origin}${path}`, as('weber', 'w-geheim')), 401, UNAUTHORIZED);
    const refused = await request(`${origin}${path}`);
    assertReply(refused, 401, UNAUTHORIZED);
    assert.equal(refused.headers['www-authenticate'], 'Basic realm="Steuerbuero Beispiel", charset="UTF-8"');
  }
  const stopped = await cli.stop();
  assert.equal(stopped.code, 0, stopped.stderr);
  assert.match(stopped.stdout, new RegExp(`^${TIME} 127\\.0\\.0\\.1 meier GET /meier/api/v1/buchungen 200 `, 'm'));
});

type TimedReply = Reply & { at: number; port: number };

/** A GET that records when its answer came, on `agent` (keep-alive) when given. */
function timedGet(url: string, authorization: string, agent?: Agent): Promise<TimedReply> {
  return sentGet(url, authorization, agent).answer;
}

/** A GET, and when it was sent whole: `sent` resolves once the request has left. */
function sentGet(
  url: string,
  authorization: string,
  agent?: Agent,
): { sent: Promise<void>; answer: Promise<TimedReply> } {
  let sent: () => void = () => {};
  const left = new Promise<void>((resolve) => (sent = resolve));
  const answer = new Promise<TimedReply>((resolve, reject) => {
    const req = httpRequest(url, { headers: { authorization }, agent: agent ?? false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          body,
          at: Date.now(),
          port: req.socket?.localPort ?? 0,
        }),
      );
    });
    req.setTimeout(20_000, () => req.destroy(new Error(`no answer within 20 s: ${url}`)));
    req.on('error', reject);
    req.on('finish', sent);
    req.end();
  });
  return { sent: left, answer };
}

test('a user let in on its own book is refused on another over the same kept-alive connection', async (t) => {
  const o = office(t, CREDENTIALS);
  const books = BOOKS(o);
  writeConfig(o, [books.mueller as string, books.schmidt as string, books.meier as string]);
  // No throttle: every refusal below is a failed login from one address.
  const cli = await start(t, ['--config', o.config, '--max-auth-failures', '0'], cleanEnv());
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  t.after(() => agent.destroy());
  const ports = new Set<number>();
  const pairs: Array<[user: string, password: string, other: string]> = [
    ['mueller', 'm-geheim', 'schmidt'],
    ['mueller', 'm-geheim', 'meier'],
    ['schmidt', 's-geheim', 'mueller'],
    ['meier', 'g-geheim', 'schmidt'],
  ];
  for (const [user, password, other] of pairs) {
    const header = basicAuth(user, password);
    const own = await timedGet(`${cli.origin}/${user}/api/v1/status`, header, agent);
    const refused = await timedGet(`${cli.origin}/${other}/api/v1/status`, header, agent);
    const again = await timedGet(`${cli.origin}/${user}/api/v1/status`, header, agent);
    assert.deepEqual([own.status, refused.status, again.status], [200, 401, 200], `${user}, then on /${other}`);
    for (const reply of [own, refused, again]) ports.add(reply.port);
  }
  assert.equal(ports.size, 1, 'one connection');
});

test('SIGHUP adds a fourth book and removes one; searches in flight on the others and on the removed one are answered, keep-alive connections stay', async (t) => {
  const o = office(t, CREDENTIALS);
  const books = BOOKS(o);
  writeConfig(o, [books.mueller as string, books.schmidt as string, books.meier as string]);
  // The keep-alive connection idles through two hash checks and the reload: on a busy
  // machine longer than the default keep-alive timeout (5 s), which is not what is tested.
  const cli = await start(t, ['--config', o.config, '--keep-alive-timeout', '60'], cleanEnv());
  const { origin } = cli;
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  t.after(() => agent.destroy());
  const mueller = basicAuth('mueller', 'm-geheim');
  const before = await timedGet(`${origin}/mueller/api/v1/${MARCH_435}`, mueller, agent);
  assert.equal(before.status, 200);

  // buero's password is a hash: each first request waits for a check of a few hundred
  // milliseconds, on libuv's pool, one at a time on this machine. The reload happens meanwhile.
  const buero = basicAuth('buero', 'alt');
  const inFlight = [
    sentGet(`${origin}/mueller/api/v1/${MARCH_435}`, buero),
    sentGet(`${origin}/schmidt/api/v1/${MARCH_1250}`, buero),
  ];
  await Promise.all(inFlight.map(({ sent }) => sent));
  // The requests have left; a moment for the service to read them and start their checks.
  await new Promise((resolve) => setTimeout(resolve, 50));
  writeConfig(o, [books.mueller as string, books.meier as string, books.neu as string]);
  const hangup = Date.now();
  cli.child.kill('SIGHUP');
  await waitFor(() => cli.output().stderr, /SIGHUP: configuration re-read/);
  const reloaded = Date.now();
  const [onKept, onRemoved] = (await Promise.all(inFlight.map(({ answer }) => answer))) as [TimedReply, TimedReply];
  assert.ok(
    onKept.at > reloaded && onRemoved.at > reloaded,
    `answered after the reload (${onKept.at - hangup} ms, ${onRemoved.at - hangup} ms after SIGHUP, reload after ${reloaded - hangup} ms)`,
  );
  assertReply(onKept, 200, MARCH_COFFEE);
  assertReply(onRemoved, 200, {
    anzahl: 1,
    buchungen: [{ id: 1, datum: '2026-03-14', betrag: -12.5, zweck: 'Post: Briefmarken', konto: 'Barkasse' }],
  });
  // Its last request answered, the removed book's file is closed at once, not when the grace ends.
  if (process.platform === 'linux') {
    const holds = (): boolean => openFiles(cli.child.pid as number).includes(o.files.mmex);
    const deadline = Date.now() + 3_000;
    while (holds() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(holds(), false, 'the removed book is closed once its last request has ended');
  }
  assert.match(
    cli.output().stderr,
    new RegExp(
      `^${TIME} SIGHUP: configuration re-read from ${o.config}: 3 books: added neu; removed schmidt; credentials re-read: 4 user\\(s\\)$`,
      'm',
    ),
  );

  const after = await timedGet(`${origin}/mueller/api/v1/${MARCH_435}`, mueller, agent);
  assertReply(after, 200, MARCH_COFFEE);
  assert.equal(after.port, before.port, 'the keep-alive connection to an unchanged book stayed open');
  assertReply(await request(`${origin}/neu/api/v1/${MARCH_435}`, as('buero', 'alt')), 200, MARCH_COFFEE);
  // schmidt's book is gone, and schmidt is a user of no book now: its login is refused everywhere.
  assertReply(await request(`${origin}/schmidt/api/v1/status`, as('schmidt', 's-geheim')), 401, UNAUTHORIZED);
  assertReply(await request(`${origin}/schmidt/api/v1/status`, as('buero', 'alt')), 404, NOT_FOUND);
  assertReply(
    await request(`${origin}/meier/api/v1/buchungen?${asQuery(GNUCASH_QUERY)}`, as('meier', 'g-geheim')),
    200,
    o.gnucashAnswer,
  );
  // The reload says where neu is served as the start said it of mueller: on stdout.
  await waitFor(() => cli.output().stdout, new RegExp(`^${TIME} book neu: ${origin}/neu/api/v1/ \\(`, 'm'));
  assert.doesNotMatch(cli.output().stderr, /book neu:/);
});

// A reload that found a book's user missing from the credentials was refused whole: the
// running credentials stayed, and a user removed from them went on logging in.
test("a user removed from the credentials loses its access at the reload, though a book's users = still names it; a book left with none of its users answers no login, and /ready says so, until one comes back", async (t) => {
  const o = office(t, CREDENTIALS);
  const books = BOOKS(o);
  writeConfig(o, [books.mueller as string, books.schmidt as string]);
  const credentials = join(o.dir, 'credentials');
  const source = `${credentials} (${o.config}:2)`;
  const cli = await start(t, ['--config', o.config, '--admin-port', '0'], cleanEnv());
  const { origin } = cli;
  const admin = /admin listener on (http:\/\/127\.0\.0\.1:\d+)\//.exec(cli.output().stdout)?.[1] as string;
  const searchSchmidt = `${origin}/schmidt/api/v1/${MARCH_1250}`;
  const searchMueller = `${origin}/mueller/api/v1/${MARCH_435}`;
  assert.equal((await request(searchSchmidt, as('schmidt', 's-geheim'))).status, 200);
  // buero's hash checked on each of its books, and remembered there.
  assert.equal((await request(searchMueller, as('buero', 'alt'))).status, 200);
  const reloadWith = async (lines: string[]): Promise<string> => {
    writeFileSync(credentials, `${lines.join('\n')}\n`, { mode: 0o600 });
    const mark = cli.output().stderr.length;
    cli.child.kill('SIGHUP');
    await waitFor(() => cli.output().stderr.slice(mark), /SIGHUP: (configuration re-read|keeping)[^\n]*\n/);
    await new Promise((resolve) => setTimeout(resolve, 100));
    return cli.output().stderr.slice(mark);
  };
  const [mueller, , meier, buero] = CREDENTIALS.split('\n') as [string, string, string, string];

  let said = await reloadWith([mueller, meier, buero]);
  assert.match(
    said,
    /SIGHUP: configuration re-read from .*: 2 books: users or secrets changed for schmidt; credentials re-read: 3 user\(s\), removed schmidt\n/,
  );
  assert.ok(
    said.includes(
      `warning: ${o.config}:14: user 'schmidt' is not in the credentials of ${source}: it cannot log in to book schmidt\n`,
    ),
    said,
  );
  assertReply(await request(searchSchmidt, as('schmidt', 's-geheim')), 401, UNAUTHORIZED);
  assert.equal((await request(searchSchmidt, as('buero', 'alt'))).status, 200);

  said = await reloadWith([mueller, meier]);
  assert.match(
    said,
    /: 2 books: users or secrets changed for mueller, schmidt; credentials re-read: 2 user\(s\), removed buero\n/,
  );
  assert.ok(
    said.includes(
      `warning: ${o.config}:14: users 'schmidt', 'buero' are not in the credentials of ${source}: book schmidt names no other, so no one can log in to it (/ready names it) until one is\n`,
    ),
    said,
  );
  const ready = await request(`${admin}/ready`);
  assert.equal(ready.status, 503);
  assert.ok(
    ready.body.includes(
      '"name":"schmidt","basePath":"/schmidt","state":"unusable","reason":"none of its users (schmidt, buero) is in the credentials: no one can log in to it"',
    ),
    ready.body,
  );
  assert.ok(
    said.includes(
      `warning: ${o.config}:8: user 'buero' is not in the credentials of ${source}: it cannot log in to book mueller\n`,
    ),
    said,
  );
  assertReply(await request(searchSchmidt, as('mueller', 'm-geheim')), 401, UNAUTHORIZED);
  assertReply(await request(searchMueller, as('mueller', 'm-geheim')), 200, MARCH_COFFEE);
  // Removed, buero is not let in by what each book remembered of its hash.
  assertReply(await request(searchMueller, as('buero', 'alt')), 401, UNAUTHORIZED);
  assertReply(await request(searchSchmidt, as('buero', 'alt')), 401, UNAUTHORIZED);

  said = await reloadWith([mueller, 'schmidt:s-neu', meier]);
  assert.match(
    said,
    /: 2 books: users or secrets changed for schmidt; credentials re-read: 3 user\(s\), added schmidt\n/,
  );
  assert.equal((await request(searchSchmidt, as('schmidt', 's-neu'))).status, 200);
  // Named all along, it may log in at once: perhaps another person under the old name.
  assert.ok(
    said.includes(
      "warning: user 'schmidt', named by book schmidt while not in the credentials, may log in to it now\n",
    ),
    said,
  );
  const schmidtOf = async (): Promise<{ state: string; reason?: string; since: string }> =>
    (
      JSON.parse((await request(`${admin}/ready`)).body) as {
        books: Array<{ name: string; state: string; reason?: string; since: string }>;
      }
    ).books.find((book) => book.name === 'schmidt') as { state: string; reason?: string; since: string };
  const back = await schmidtOf();
  assert.equal(back.state, 'serving');
  // A reload that only changes its users = to a name the credentials lack: said as its state, since then.
  const before = Date.now();
  writeConfig(o, [
    books.mueller as string,
    (books.schmidt as string).replace('users = schmidt, buero', 'users = ghost'),
  ]);
  said = await reloadWith([mueller, 'schmidt:s-neu', meier]);
  const ghost = await schmidtOf();
  assert.deepEqual(
    [ghost.state, ghost.reason],
    ['unusable', 'none of its users (ghost) is in the credentials: no one can log in to it'],
  );
  assert.ok(
    Date.parse(ghost.since) >= before - 1000,
    `${ghost.since}, the reload at ${new Date(before).toISOString()}`,
  );
  writeConfig(o, [books.mueller as string, books.schmidt as string]);
  said = await reloadWith([mueller, 'schmidt:s-neu', meier]);
  assert.equal((await schmidtOf()).state, 'serving');

  // The start and check say the same of a user the credentials lack, and serve the rest.
  assert.equal((await cli.stop()).code, 0);
  const again = await start(t, ['--config', o.config], cleanEnv());
  assert.ok(
    again.output().stderr.includes(`warning: ${o.config}:8: user 'buero' is not in the credentials of ${source}`),
  );
  assert.equal((await request(`${again.origin}/schmidt/api/v1/status`, as('schmidt', 's-neu'))).status, 200);
  const checked = await run(['check', '--config', o.config], cleanEnv());
  assert.equal(checked.code, 0, checked.stdout);
  assert.match(
    checked.stdout,
    new RegExp(
      `^warning: ${o.config}:8: user 'buero' is not in the credentials of .*: it cannot log in to book mueller$`,
      'm',
    ),
  );
});

// One book, one client, its user replaced: the reload was refused ("no book left"), and the
// old user went on logging in; and check said the book fits.
test('one book whose only user is replaced in the credentials: the old user is refused after the reload, and check says the book does not fit', async (t) => {
  const o = office(t, 'client:c-geheim\n');
  writeConfig(o, [`[book kasse]\ndb = ${o.files.own}\nbase-path = /kasse\nusers = client\n`]);
  const cli = await start(t, ['--config', o.config], cleanEnv());
  const status = `${cli.origin}/kasse/api/v1/status`;
  assert.equal((await request(status, as('client', 'c-geheim'))).status, 200);
  writeFileSync(join(o.dir, 'credentials'), 'neu:n-geheim\n', { mode: 0o600 });
  cli.child.kill('SIGHUP');
  await waitFor(
    () => cli.output().stderr,
    /SIGHUP: configuration re-read from .*: 1 book: users or secrets changed for kasse; credentials re-read: 1 user\(s\), added neu; removed client\n/,
  );
  assertReply(await request(status, as('client', 'c-geheim')), 401, UNAUTHORIZED);
  assertReply(await request(status, as('neu', 'n-geheim')), 401, UNAUTHORIZED);
  const checked = await run(['check', '--config', o.config], cleanEnv());
  assert.equal(checked.code, 1, checked.stdout);
  assert.match(checked.stdout, /^Does not fit: none of its users is in the credentials \(see the warning above\)\.$/m);
  assert.match(checked.stdout, /^0 of 1 book fit\.$/m);
  // At the start, a book that no one can log in to is no book to serve: the start ends, after the warning.
  assert.equal((await cli.stop()).code, 0);
  const started = await run(['--config', o.config, '--port', '0'], cleanEnv());
  assert.equal(started.code, 1);
  assert.match(
    started.stderr,
    /warning: .*books\.conf:8: user 'client' is not in the credentials of .*: book kasse names no other/,
  );
  assert.match(
    started.stderr,
    /booking-search-server: no book of the configuration can be served: the lines above say why\n$/,
  );
});

test('SIGHUP with a broken file, or a book that cannot be served, keeps the running books and says why in one line', async (t) => {
  const o = office(t, CREDENTIALS);
  const books = BOOKS(o);
  writeConfig(o, [books.mueller as string, books.schmidt as string]);
  const cli = await start(t, ['--config', o.config], cleanEnv());
  const attempts: Array<[books: string[], line: RegExp]> = [
    [
      [books.mueller as string, `${books.schmidt}prot = 8080\n`],
      new RegExp(`${o.config}:15: unknown key prot in \\[book schmidt\\]`),
    ],
    [
      [books.mueller as string, (books.schmidt as string).replace('/schmidt/', '/mueller')],
      new RegExp(`${o.config}:13: base-path /mueller is already the one of the book on line 5`),
    ],
    [
      [
        books.mueller as string,
        books.schmidt as string,
        (books.neu as string).replace(o.files.spare, join(o.dir, 'fehlt.sqlite')),
      ],
      // Placed where its db was written, as every other problem of the file.
      new RegExp(`: ${o.config}:17: book neu: cannot open database .*fehlt\\.sqlite: no such file$`),
    ],
    [
      [books.mueller as string, books.schmidt as string, (books.neu as string).replace('db = ', 'app = mmex\ndb = ')],
      // The app named as the section writes it.
      new RegExp(
        `: ${o.config}:18: book neu: .*neu\\.sqlite does not fit the tables of Money Manager Ex: .* \\(the file has the tables of the own schema: serve it with app = own\\)$`,
      ),
    ],
  ];
  for (const [index, [next, line]] of attempts.entries()) {
    writeConfig(o, next);
    cli.child.kill('SIGHUP');
    await waitFor(() => cli.output().stderr, /SIGHUP: keeping the running configuration: /, index + 1);
    const last = cli.output().stderr.trim().split('\n').at(-1) ?? '';
    assert.match(last, new RegExp(`^${TIME} SIGHUP: keeping the running configuration: `));
    assert.match(last, line);
    assertReply(await request(`${cli.origin}/schmidt/api/v1/${MARCH_1250}`, as('schmidt', 's-geheim')), 200, {
      anzahl: 1,
      buchungen: [{ id: 1, datum: '2026-03-14', betrag: -12.5, zweck: 'Post: Briefmarken', konto: 'Barkasse' }],
    });
  }
  assertReply(await request(`${cli.origin}/neu/api/v1/status`, as('buero', 'alt')), 404, NOT_FOUND);
  const stopped = await cli.stop();
  assert.equal(stopped.code, 0);
  assert.doesNotMatch(stopped.stderr, /\n\s+at /, 'no stack trace');
  // At the start, a file that is no database beside one that serves: the others are served, as
  // while running, and it answers 500 until a valid file is there; the start ends only when no
  // book can be served.
  const kaputt = join(o.dir, 'kaputt.sqlite');
  writeFileSync(kaputt, 'kaputt', { mode: 0o600 });
  writeConfig(o, [books.mueller as string, (books.schmidt as string).replace(o.files.mmex, kaputt)]);
  const some = await start(t, ['--config', o.config], cleanEnv());
  assertReply(
    await request(`${some.origin}/mueller/api/v1/${MARCH_435}`, as('mueller', 'm-geheim')),
    200,
    MARCH_COFFEE,
  );
  const unserved = await request(`${some.origin}/schmidt/api/v1/${MARCH_1250}`, as('schmidt', 's-geheim'));
  assert.equal(unserved.status, 500);
  assert.match(
    some.output().stderr,
    new RegExp(
      `^${TIME} book schmidt: ${kaputt} is not a SQLite database; searches answer 500 until a valid file is there$`,
      'm',
    ),
  );
  writeConfig(o, [
    (books.mueller as string).replace(o.files.own, join(o.dir, 'fehlt.sqlite')),
    (books.schmidt as string).replace(o.files.mmex, kaputt),
  ]);
  const none = await run(['--config', o.config, '--port', '0'], cleanEnv());
  assert.equal(none.code, 1);
  assert.match(none.stderr, /book schmidt: .* is not a SQLite database; searches answer 500/);
  assert.match(
    none.stderr,
    / booking-search-server: no book of the configuration can be served: the lines above say why\n$/,
  );
});

test('a --config of one book (db in the service part) reloads like many: SIGHUP serves a changed db (its name waits for a restart), and a broken line keeps it and says why', async (t) => {
  const o = office(t, CREDENTIALS);
  const write = (lines: string[]): void =>
    writeFileSync(o.config, [`credentials-file = ${join(o.dir, 'credentials')}`, ...lines, ''].join('\n'), {
      mode: 0o600,
    });
  write(['name = kasse', `db = ${o.files.own}`]);
  const cli = await start(t, ['--config', o.config], cleanEnv());
  const url = `${cli.origin}/api/v1/${MARCH_1250}`;
  const own = await request(url, as('mueller', 'm-geheim'));
  assert.equal(own.status, 200);
  assert.equal(JSON.parse(own.body).anzahl, 6, 'the own file has six bookings of 12.50 in March');

  write(['name = kasse2', `db = ${o.files.mmex}`, 'app = mmex']);
  cli.child.kill('SIGHUP');
  await waitFor(() => cli.output().stderr, /SIGHUP: name changed/);
  assert.match(
    cli.output().stderr,
    new RegExp(
      `^${TIME} SIGHUP: configuration re-read from ${o.config}: 1 book: served anew kasse; credentials re-read: 4 user\\(s\\)$`,
      'm',
    ),
  );
  assert.match(cli.output().stderr, /SIGHUP: name changed; that takes effect at the next start/);
  assertReply(await request(`${cli.origin}/api/v1/status`, as('mueller', 'm-geheim')), 200, statusAnswer('kasse'));
  const mmex = {
    anzahl: 1,
    buchungen: [{ id: 1, datum: '2026-03-14', betrag: -12.5, zweck: 'Post: Briefmarken', konto: 'Barkasse' }],
  };
  assertReply(await request(url, as('mueller', 'm-geheim')), 200, mmex);

  write(['name = kasse', `db = ${o.files.own}`, 'prot = 8080']);
  cli.child.kill('SIGHUP');
  await waitFor(() => cli.output().stderr, /SIGHUP: keeping the running configuration: /);
  assert.match(
    cli.output().stderr.trim().split('\n').at(-1) ?? '',
    new RegExp(`^${TIME} SIGHUP: keeping the running configuration: ${o.config}:4: unknown key prot`),
  );
  assertReply(await request(url, as('mueller', 'm-geheim')), 200, mmex);

  // The service was started with --port 0: the file's port is outranked, and judged all the same.
  write(['name = kasse', `db = ${o.files.own}`, 'port = 8080 # web']);
  cli.child.kill('SIGHUP');
  await waitFor(() => cli.output().stderr, /SIGHUP: keeping the running configuration: /, 2);
  assert.match(
    cli.output().stderr.trim().split('\n').at(-1) ?? '',
    new RegExp(
      `^${TIME} SIGHUP: keeping the running configuration: ${o.config}:4: port must be a whole number from 0 to 65535, not '8080 # web' \\(# starts a comment only at the start of a line\\)$`,
    ),
  );
  assertReply(await request(url, as('mueller', 'm-geheim')), 200, mmex);
});

test('a user of one book on another costs what a wrong password costs there (hashed users, medians of 5 each)', async (t) => {
  const o = office(t, [`mueller:${HASH_OF_ALT}`, `schmidt:${HASH_OF_ALT}`, ''].join('\n'));
  writeConfig(o, [
    `[book mueller]\ndb = ${o.files.own}\nbase-path = /mueller\nusers = mueller\n`,
    `[book schmidt]\ndb = ${o.files.spare}\nbase-path = /schmidt\nusers = schmidt\n`,
  ]);
  // Every attempt fails on purpose: no throttle, so that each one is checked.
  const cli = await start(
    t,
    ['--config', o.config, '--max-auth-failures', '0', '--max-user-failures', '0', '--max-global-failures', '0'],
    cleanEnv(),
  );
  const url = `${cli.origin}/schmidt/api/v1/status`;
  const kinds = {
    otherBook: basicAuth('mueller', 'alt'),
    wrongPassword: basicAuth('schmidt', 'neu'),
    unknownUser: basicAuth('weber', 'alt'),
  };
  const names = Object.keys(kinds) as Array<keyof typeof kinds>;
  const samples: Record<keyof typeof kinds, number[]> = { otherBook: [], wrongPassword: [], unknownUser: [] };
  for (let i = 0; i < 5; i += 1) {
    for (const kind of i % 2 === 0 ? names : [...names].reverse()) {
      const started = performance.now();
      const reply = await request(url, { headers: { authorization: kinds[kind] } });
      samples[kind].push(performance.now() - started);
      assertReply(reply, 401, UNAUTHORIZED);
    }
  }
  const median = (values: number[]): number => [...values].sort((a, b) => a - b)[values.length >> 1] as number;
  const wrong = median(samples.wrongPassword);
  // A hash check takes tens of milliseconds, an answer without one under one: a ratio below
  // 0.1. The bounds are wide, for a machine that others share.
  assert.ok(wrong > 10, `a wrong password costs a hash check: ${wrong.toFixed(1)} ms`);
  for (const kind of ['otherBook', 'unknownUser'] as const) {
    const ratio = median(samples[kind]) / wrong;
    assert.ok(ratio > 0.5 && ratio < 2, `${kind} / wrong password = ${ratio.toFixed(2)}`);
  }
});

test('check --config judges every book as check --db does and says which fit; a bad line of the file is named', async (t) => {
  const o = office(t, CREDENTIALS);
  const books = BOOKS(o);
  const broken = join(o.dir, 'kaputt.sqlite');
  writeFileSync(broken, 'kaputt'.repeat(1000));
  writeConfig(o, [books.mueller as string, books.schmidt as string, books.meier as string]);
  const fits = await run(['check', '--config', o.config], cleanEnv());
  assert.equal(fits.code, 0, fits.stdout + fits.stderr);
  // A misspelt TZ is said once for the whole configuration, not once a book.
  const misspelt = await run(['check', '--config', o.config], cleanEnv({ TZ: 'Europe/Berln' }));
  assert.equal(misspelt.stdout.match(/^warning: TZ=Europe\/Berln /gm)?.length, 1, misspelt.stdout);
  assert.match(
    fits.stdout,
    /^Configuration: .*books\.conf\nCredentials: 4 user\(s\); the users of the books are checked against them\.\nBooks: 3\.\n/,
  );
  // The verdict holds for a process with these groups; a running service has those it started with.
  const uid = process.geteuid?.() ?? 0;
  const gid = process.getegid?.() ?? 0;
  assert.match(
    fits.stdout,
    new RegExp(
      `^Judged as user (\\S+ \\()?${uid}\\)? with groups (.*\\b)?${gid}\\b.*\\. A running service keeps the groups it started with: a file that needs another group is read after the group is in its SupplementaryGroups= \\(under systemd\\) and the service is restarted\\.$`,
      'm',
    ),
  );
  assert.match(fits.stdout, /^Book mueller at \/mueller\/api\/v1\/ \(users mueller, buero\):\nDatabase: /m);
  assert.match(
    fits.stdout,
    /^Book Meier GmbH at \/meier\/api\/v1\/ \(users meier\):\nDatabase: .*\nJournal: .*\nMapping: GnuCash \(recognised from its tables, as the service recognises it; --app gnucash names it\)\./m,
  );
  assert.match(fits.stdout, /\n3 of 3 books fit: mueller, schmidt, Meier GmbH\.\n$/);

  writeConfig(o, [
    books.mueller as string,
    books.schmidt as string,
    `[book kaputt]\ndb = ${broken}\nbase-path = /kaputt\n`,
  ]);
  const unfit = await run(['check', '--config', o.config], cleanEnv());
  assert.equal(unfit.code, 1);
  assert.match(unfit.stdout, /\n2 of 3 books fit: mueller, schmidt\.\nDo not fit: kaputt \(see above\)\.\n$/);

  // A book the service would wait for (a writer's lock) is not one that does not fit.
  const writer = new Database(o.files.own);
  writer.exec('BEGIN EXCLUSIVE');
  const waiting = await run(['check', '--config', o.config], cleanEnv()).finally(() => writer.close());
  assert.equal(waiting.code, 1);
  assert.match(
    waiting.stdout,
    /\n1 of 3 books fit: schmidt\.\nCannot be read now: mueller \(see above; the service starts and waits for them\)\.\nDo not fit: kaputt \(see above\)\.\n$/,
  );

  writeConfig(o, [books.mueller as string, `${books.schmidt}users = meier\n`]);
  const badLine = await run(['check', '--config', o.config], cleanEnv());
  assert.equal(badLine.code, 1);
  assertFails(badLine, 1, `booking-search-server: ${o.config}:15: users is given again (first on line 14)`, true);
});

// All books fitting while the credentials file was wrong ended "3 of 3 books fit: …" with exit
// code 1, and "cannot be read here" read as "not given" although the file was given.
test('check --config with a wrong credentials file says so in its last line, and tells it from credentials not given', async (t) => {
  const o = office(t, `${CREDENTIALS}mueller:noch-einmal\n`);
  const books = BOOKS(o);
  writeConfig(o, [books.mueller as string, books.schmidt as string]);
  const credentials = join(o.dir, 'credentials');
  const wrong = await run(['check', '--config', o.config, '--credentials-file', credentials], cleanEnv());
  assert.equal(wrong.code, 1, wrong.stdout + wrong.stderr);
  const problem = `credentials file ${credentials}, line 5: the user of line 1 is given again`;
  assert.ok(
    wrong.stdout.includes(`\nCredentials: given but wrong (${problem}); the users of the books are not checked.\n`),
    wrong.stdout,
  );
  assert.ok(
    wrong.stdout.endsWith(`\n2 of 2 books fit: mueller, schmidt; the credentials file does not: ${problem}.\n`),
    wrong.stdout,
  );

  writeFileSync(o.config, [books.mueller as string, ''].join('\n'), { mode: 0o600 });
  // None given (the service's user under LoadCredential=): the books are judged, and they fit.
  const none = await run(['check', '--config', o.config], cleanEnv());
  assert.equal(none.code, 0, none.stdout + none.stderr);
  assert.match(none.stdout, /^Credentials: not given \(no credentials: set BOOKING_SEARCH_USER/m);
  assert.match(
    none.stdout,
    /\n1 of 1 book fit: mueller; no credentials are given, so the users of the books are not checked\.\n$/,
  );
});

// A flat file (`db = …`, `credentials-file = …`, no sections) was checked as `check --db`:
// no Configuration or Credentials line and exit 0, while the start refused its credentials file.
test('check of a flat configuration judges its credentials as the start does, named by --config or BOOKING_SEARCH_CONFIG', async (t) => {
  const dir = tempDir(t);
  const db = join(dir, 'kasse.sqlite');
  copyFileSync(buildDatabase(t), db);
  const creds = join(dir, 'creds');
  writeFileSync(creds, 'abgleich\n', { mode: 0o600 });
  const config = join(dir, 'flat.conf');
  writeFileSync(config, 'db = kasse.sqlite\ncredentials-file = creds\n', { mode: 0o600 });
  const problem = `credentials file ${creds}, line 1: expected user:secret`;
  assertFails(await run(['--config', config, '--port', '0'], cleanEnv()), 1, `booking-search-server: ${problem}`);
  for (const [args, env] of [
    [['check', '--config', config, '--credentials-file', creds], cleanEnv()],
    [['check'], cleanEnv({ BOOKING_SEARCH_CONFIG: config })],
  ] as const) {
    const wrong = await run([...args], env);
    assert.equal(wrong.code, 1, wrong.stdout + wrong.stderr);
    assert.ok(
      wrong.stdout.startsWith(
        `Configuration: ${config}\nCredentials: given but wrong (${problem}); the users of the books are not checked.\n`,
      ),
      wrong.stdout,
    );
    assert.ok(wrong.stdout.endsWith(`; the credentials file does not: ${problem}.\n`), wrong.stdout);
  }
  writeFileSync(creds, `abgleich:${HASH_OF_ALT}\n`, { mode: 0o600 });
  const fits = await run(['check', '--config', config], cleanEnv());
  assert.equal(fits.code, 0, fits.stdout + fits.stderr);
  assert.match(
    fits.stdout,
    /^Credentials: 1 user\(s\); the users of the books are checked against them\.\nBooks: 1\.\n/m,
  );
  assert.ok(fits.stdout.includes(`\nDatabase: ${db}\n`), fits.stdout);
  assert.match(fits.stdout, /\n1 of 1 book fit: .*\.\n$/);
});

test('a setting comes from its flag, else its BOOKING_SEARCH_ variable, else the file; the file itself may be named by BOOKING_SEARCH_CONFIG', async (t) => {
  const o = office(t, CREDENTIALS);
  writeFileSync(o.config, `name = Datei\ndb = ${o.files.own}\ncredentials-file = ${join(o.dir, 'credentials')}\n`, {
    mode: 0o600,
  });
  const status = async (args: string[], env: Record<string, string>): Promise<unknown> => {
    const cli = await start(t, args, cleanEnv(env));
    const reply = await request(`${cli.api}status`, as('mueller', 'm-geheim'));
    await cli.stop();
    return JSON.parse(reply.body);
  };
  assert.deepEqual(await status(['--config', o.config], {}), statusAnswer('Datei'));
  assert.deepEqual(await status([], { BOOKING_SEARCH_CONFIG: o.config }), statusAnswer('Datei'));
  assert.deepEqual(await status(['--config', o.config], { BOOKING_SEARCH_NAME: 'Umgebung' }), statusAnswer('Umgebung'));
  assert.deepEqual(
    await status(['--config', o.config, '--name', 'Flagge'], { BOOKING_SEARCH_NAME: 'Umgebung' }),
    statusAnswer('Flagge'),
  );

  writeFileSync(o.config, `port = achtzig\ndb = ${o.files.own}\n`, { mode: 0o600 });
  // A flag that sets the same setting does not let the file's line through: the file is judged whole.
  for (const flags of [[], ['--port', '0']]) {
    assertFails(
      await run(['--config', o.config, ...flags], cleanEnv({ BOOKING_SEARCH_USER: 'a', BOOKING_SEARCH_PASSWORD: 'b' })),
      1,
      `booking-search-server: ${o.config}:1: port must be a whole number from 0 to 65535, not 'achtzig'`,
    );
  }
  assertFails(
    await run(
      ['--db', o.files.own],
      cleanEnv({ BOOKING_SEARCH_WORKERS: 'viele', BOOKING_SEARCH_USER: 'a', BOOKING_SEARCH_PASSWORD: 'b' }),
    ),
    1,
    "booking-search-server: BOOKING_SEARCH_WORKERS: --workers must be a whole number from 1 to 64, not 'viele'",
  );
});

test('a configuration, credentials or TLS file that is a FIFO is refused in one line at once, not waited on for good', async (t) => {
  const o = office(t, CREDENTIALS);
  const pipe = join(o.dir, 'books.fifo');
  execFileSync('mkfifo', ['-m', '600', pipe]);
  const refused = (what: string): string =>
    `booking-search-server: cannot read ${what} ${pipe}: it is a FIFO (named pipe), not a regular file`;
  const env = cleanEnv({ BOOKING_SEARCH_USER: 'a', BOOKING_SEARCH_PASSWORD: 'b' });
  // Each refused before it read a byte: a FIFO without a writer blocked the start for good.
  const run = async (args: string[], environment: NodeJS.ProcessEnv): Promise<Finished> => {
    const started = Date.now();
    const finished = await runCli(args, environment);
    assert.ok(Date.now() - started < 5_000, `${args.join(' ')}: ${Date.now() - started} ms`);
    return finished;
  };
  assertFails(await run(['--config', pipe], env), 1, refused('configuration file'));
  assertFails(await run([], { ...env, BOOKING_SEARCH_CONFIG: pipe }), 1, refused('configuration file'));
  assertFails(await run(['check', '--config', pipe], env), 1, refused('configuration file'), true);
  assertFails(await run(['--db', o.files.own, '--credentials-file', pipe], cleanEnv()), 1, refused('credentials file'));
  const key = join(o.dir, 'key.pem');
  makeCertificate(join(o.dir, 'cert.pem'), key);
  assertFails(await run(['--db', o.files.own, '--tls-cert', pipe, '--tls-key', key], env), 1, refused('--tls-cert'));
});

// The unit's --credentials-file won over the file's credentials-file line without a word:
// "user 'mueller' is not in the credentials" named neither file.
test("a book's user not in the credentials names the credentials file read and where it was named: the flag, its variable or the file's line", async (t) => {
  const o = office(t, CREDENTIALS);
  // Its only user: a book left with none is no book to serve, and the start ends after the warning.
  const mueller = (BOOKS(o).mueller as string).replace('users = mueller, buero', 'users = mueller');
  writeConfig(o, [mueller]);
  const other = join(o.dir, 'other-credentials');
  writeFileSync(other, 'buero:b-geheim\n', { mode: 0o600 });
  const inFile = join(o.dir, 'credentials');
  const line = `${o.config}:8: user 'mueller' is not in the credentials of`;
  const ends = (result: Finished, source: string): void => {
    assert.equal(result.code, 1, JSON.stringify(result));
    const [warning, last, ...rest] = result.stderr.replaceAll(new RegExp(`^${TIME} `, 'gm'), '').split('\n');
    assert.equal(
      warning,
      `warning: ${line} ${source}: book mueller names no other, so no one can log in to it (/ready names it) until one is`,
    );
    assert.equal(last, 'booking-search-server: no book of the configuration can be served: the lines above say why');
    assert.deepEqual(rest, ['']);
  };
  ends(await run(['--config', o.config, '--credentials-file', other], cleanEnv()), `${other} (--credentials-file)`);
  ends(
    await run(['--config', o.config], cleanEnv({ BOOKING_SEARCH_CREDENTIALS_FILE: other })),
    `${other} (BOOKING_SEARCH_CREDENTIALS_FILE)`,
  );
  writeFileSync(inFile, 'buero:b-geheim\n', { mode: 0o600 });
  ends(await run(['--config', o.config], cleanEnv()), `${inFile} (${o.config}:2)`);
  // Under systemd's LoadCredential=, the file read is a copy made as the service started.
  const copies = join(o.dir, 'credentials.d');
  mkdirSync(copies, { mode: 0o700 });
  const copy = join(copies, 'credentials');
  writeFileSync(copy, 'buero:b-geheim\n', { mode: 0o600 });
  ends(
    await run(['--config', o.config, '--credentials-file', copy], cleanEnv({ CREDENTIALS_DIRECTORY: copies })),
    `${copy} (--credentials-file; systemd's copy, made as the service started: a restart copies it anew)`,
  );
  const checked = await run(['check', '--config', o.config, '--credentials-file', other], cleanEnv());
  assert.equal(checked.code, 1);
  assert.ok(
    checked.stdout.includes(`warning: ${line} ${other} (--credentials-file): book mueller names no other`),
    checked.stdout,
  );
  const withoutFile = join(o.dir, 'environment.conf');
  writeFileSync(withoutFile, mueller, { mode: 0o600 });
  const fromVariables = await run(
    ['--config', withoutFile],
    cleanEnv({ BOOKING_SEARCH_USER: 'buero', BOOKING_SEARCH_PASSWORD: 'b-geheim' }),
  );
  assert.equal(fromVariables.code, 1);
  assert.ok(
    fromVariables.stderr.includes(
      `warning: ${withoutFile}:4: user 'mueller' is not in the credentials of BOOKING_SEARCH_USER: `,
    ),
  );
});

test('the users of a SIGHUP hold for a file replaced after it, for --db and for a book of the file', async (t) => {
  const o = office(t, CREDENTIALS);
  const credentials = join(o.dir, 'credentials');
  writeConfig(o, [`[book mueller]\ndb = ${o.files.own}\nbase-path = /mueller\nusers = mueller\n`]);
  const single = await start(t, ['--db', o.files.spare, '--credentials-file', credentials], cleanEnv());
  const books = await start(t, ['--config', o.config], cleanEnv());
  // mueller's password changes (to one as long); a restore then replaces each file (another inode at the path).
  writeFileSync(credentials, CREDENTIALS.replace('mueller:m-geheim', 'mueller:m-zweite'), { mode: 0o600 });
  single.child.kill('SIGHUP');
  books.child.kill('SIGHUP');
  // Only a secret changed: the line said "new users for mueller".
  await waitFor(
    () => single.output().stderr,
    /SIGHUP: credentials re-read from .*: 4 user\(s\), secrets changed for mueller\n/,
  );
  await waitFor(
    () => books.output().stderr,
    /SIGHUP: configuration re-read from .*: 1 book: users or secrets changed for mueller; credentials re-read: 4 user\(s\), secrets changed for mueller\n/,
  );
  for (const file of [o.files.own, o.files.spare]) {
    const copy = `${file}.restore`;
    copyFileSync(file, copy);
    renameSync(copy, file);
  }
  await waitFor(() => single.output().stderr, /was replaced; serving the new file/);
  await waitFor(() => books.output().stderr, /was replaced; serving the new file/);
  for (const url of [`${single.api}status`, `${books.origin}/mueller/api/v1/status`]) {
    assertReply(await request(url, as('mueller', 'm-geheim')), 401, UNAUTHORIZED);
    assert.equal((await request(url, as('mueller', 'm-zweite'))).status, 200, url);
  }
});

test('a file of the own schema moved over a book’s MMEX file: /ready’s reason, the log line and check name the app as the section writes it', async (t) => {
  const o = office(t, CREDENTIALS);
  writeConfig(o, [BOOKS(o).schmidt as string]);
  const cli = await start(t, ['--config', o.config, '--admin-port', '0'], cleanEnv());
  const admin = /admin listener on (http:\/\/127\.0\.0\.1:\d+)\//.exec(cli.output().stdout)?.[1];
  const copy = `${o.files.mmex}.restore`;
  copyFileSync(o.files.own, copy);
  renameSync(copy, o.files.mmex);
  await waitFor(() => cli.output().stderr, /searches answer 500 until a valid file is there/);
  const advice = '(the file has the tables of the own schema: serve it with app = own)';
  const line = cli.output().stderr.trim().split('\n').at(-1) ?? '';
  assert.ok(line.endsWith(`${advice}; searches answer 500 until a valid file is there`), line);
  const ready = JSON.parse((await request(`${admin}/ready`)).body) as { books: Array<{ reason?: string }> };
  assert.ok(ready.books[0]?.reason?.endsWith(advice), JSON.stringify(ready));
  // check says it as the service does, for the book as configured, and for --db by its variable.
  const checked = await run(['check', '--config', o.config], cleanEnv());
  assert.match(checked.stdout, /^The file has the tables of the own schema: serve it with app = own\.$/m);
  const byVariable = await run(['check', '--db', o.files.mmex], cleanEnv({ BOOKING_SEARCH_APP: 'mmex' }));
  assert.match(
    byVariable.stdout,
    /^The file has the tables of the own schema: serve it with BOOKING_SEARCH_APP=own\.$/m,
  );
});

test('--workers 2 serves the books from both workers; a book that cannot be served is served unavailable by each, and a start with no book to serve ends with its one line', async (t) => {
  const o = office(t, CREDENTIALS);
  const books = BOOKS(o);
  const broken = join(o.dir, 'kaputt.sqlite');
  writeFileSync(broken, 'kaputt'.repeat(1000));
  const kaputt = `[book kaputt]\ndb = ${broken}\nbase-path = /kaputt\nusers = buero\n`;
  writeConfig(o, [books.mueller as string, kaputt]);
  const cli = await start(t, ['--config', o.config, '--workers', '2'], cleanEnv());
  assert.match(cli.output().stdout, /Serving from 2 worker processes/);
  for (let i = 0; i < 4; i += 1) {
    assertReply(
      await request(`${cli.origin}/mueller/api/v1/${MARCH_435}`, as('mueller', 'm-geheim')),
      200,
      MARCH_COFFEE,
    );
  }
  assert.equal((await request(`${cli.origin}/kaputt/api/v1/${MARCH_435}`, as('buero', 'alt'))).status, 500);
  const said = cli.output().stderr.match(/worker \d+: book kaputt: .*kaputt\.sqlite is not a SQLite database; /g);
  assert.equal(said?.length, 2, cli.output().stderr);
  assert.equal((await cli.stop()).code, 0);

  writeConfig(o, [(books.mueller as string).replace(o.files.own, join(o.dir, 'fehlt.sqlite')), kaputt]);
  const none = await run(['--config', o.config, '--workers', '2', '--port', '0'], cleanEnv());
  assert.equal(none.code, 1, none.stderr);
  assert.match(
    none.stderr,
    / booking-search-server: no book of the configuration can be served: the lines above say why\n$/,
  );
});

test("a start that no book can serve says why in its last line, after each book's own line (journalctl and systemctl status show the last lines)", async (t) => {
  const o = office(t, CREDENTIALS);
  const broken = join(o.dir, 'kaputt.sqlite');
  writeFileSync(broken, 'kaputt'.repeat(1000));
  const missing = join(o.dir, 'fehlt.sqlite');
  writeConfig(o, [
    `[book kaputt]\ndb = ${broken}\nbase-path = /kaputt\n`,
    `[book fehlt]\ndb = ${missing}\nbase-path = /fehlt\n`,
  ]);
  const failed = await run(['--config', o.config, '--port', '0'], cleanEnv());
  assert.equal(failed.code, 1, failed.stderr);
  const lines = failed.stderr.trimEnd().split('\n');
  assert.ok(
    lines.some((line) => / book kaputt: .*kaputt\.sqlite is not a SQLite database; /.test(line)),
    failed.stderr,
  );
  assert.ok(
    lines.some((line) => / book fehlt: database .*fehlt\.sqlite is gone; /.test(line)),
    failed.stderr,
  );
  assert.match(
    lines.at(-1) ?? '',
    / booking-search-server: no book of the configuration can be served: the lines above say why$/,
  );
  // One book alone: its own line, placed where its db is written, as ever.
  writeConfig(o, [`[book kaputt]\ndb = ${broken}\nbase-path = /kaputt\n`]);
  const alone = await run(['--config', o.config, '--port', '0'], cleanEnv());
  assertFails(alone, 1, /^booking-search-server: .*:\d+: book kaputt: .*kaputt\.sqlite is not a SQLite database/);
});

test('the login throttle holds for the service: failures on several books spend one budget of the address', async (t) => {
  const o = office(t, CREDENTIALS);
  const books = BOOKS(o);
  writeConfig(o, [books.mueller as string, books.schmidt as string, books.meier as string]);
  const cli = await start(t, ['--config', o.config, '--max-auth-failures', '3'], cleanEnv());
  for (const [path, user] of [
    ['/mueller', 'mueller'],
    ['/schmidt', 'schmidt'],
    ['/meier', 'meier'],
  ] as const) {
    assertReply(await request(`${cli.origin}${path}/api/v1/status`, as(user, 'falsch')), 401, UNAUTHORIZED);
  }
  // Three failures, one on each book: the address is blocked on every book, the right
  // password included, and on a path that names no book.
  for (const [path, user, password] of [
    ['/mueller', 'mueller', 'm-geheim'],
    ['/meier', 'meier', 'g-geheim'],
    ['/weber', 'meier', 'g-geheim'],
  ] as const) {
    const reply = await request(`${cli.origin}${path}/api/v1/status`, as(user, password));
    assert.equal(reply.status, 429, `${path}: ${reply.body}`);
  }
});

/** The files a process holds open (Linux). */
function openFiles(pid: number): string[] {
  return readdirSync(`/proc/${pid}/fd`).flatMap((fd) => {
    try {
      return [readlinkSync(`/proc/${pid}/fd/${fd}`)];
    } catch {
      return []; // closed meanwhile
    }
  });
}

// They were read from the working directory, and a refusal named them as written
// ("cannot read credentials file credentials.txt: no such file").
test("a configuration file's relative paths are from its folder, whatever folder the command runs in; a refusal names the absolute path", async (t) => {
  const folder = databaseDir(t);
  const elsewhere = tempDir(t);
  const db = join(folder, 'kasse.sqlite');
  copyFileSync(buildDatabase(t), db);
  writeFileSync(join(folder, 'credentials.txt'), 'abgleich:geheim\n', { mode: 0o600 });
  const config = join(folder, 'office.conf');
  writeFileSync(config, 'credentials-file = credentials.txt\n[book kasse]\ndb = kasse.sqlite\nbase-path = /kasse\n', {
    mode: 0o600,
  });
  const inElsewhere = (args: string[]): [string, string[]] => [
    '/bin/sh',
    ['-c', 'cd "$1" && shift && exec "$@"', 'sh', elsewhere, process.execPath, BIN, ...args],
  ];
  const server = await start(t, ['--config', config], cleanEnv(), inElsewhere);
  const reply = await request(`${server.origin}/kasse/api/v1/status`, {
    headers: { authorization: basicAuth('abgleich', 'geheim') },
  });
  assert.equal(reply.status, 200);
  assert.equal((await server.stop()).code, 0);

  const checked = await run(['check', '--config', config], cleanEnv(), inElsewhere);
  assert.equal(checked.code, 0, checked.stdout + checked.stderr);
  writeFileSync(config, 'credentials-file = zugang.txt\n[book kasse]\ndb = kasse.sqlite\n');
  assertFails(
    await run(['--config', config, '--port', '0'], cleanEnv(), inElsewhere),
    1,
    `booking-search-server: cannot read credentials file ${join(folder, 'zugang.txt')}: no such file`,
  );
});
