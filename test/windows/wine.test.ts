// The Windows lane (.ci/windows.sh): the real command, built in this clone, run by the
// official Node.js 22 for Windows under Wine, and asked over real HTTP(S) from the Linux
// side on 127.0.0.1. An office's setup as a Windows admin writes it: books at drive-letter
// paths (Wine's Z:\ is Linux's /), quoted and unquoted, in WAL mode, opened first by the
// service as their owner with a writer (a Windows process) beside it; a configuration and a
// credentials file saved by Notepad as UTF-8 with BOM and CRLF; TLS; a reload by POST
// /-/reload; a stop by Ctrl+C that answers the request in flight and writes its last log
// lines; `check`, with a configuration's relative paths and one in UTF-16. The service is started with the command line of WinSW's service file
// (deploy/), its paths put at this lane's.
//
// What Wine cannot show, and so is not tested here (deploy/booking-search-server.xml says it too):
// NTFS permissions (Wine maps files to the Linux user's), the service control manager and
// a service wrapper (WinSW, NSSM), Ctrl+Break, a named pipe reached from another machine's
// tools, and SQLite's locking against a Linux process (Wine keeps Windows' locks to itself:
// the writer here runs under Wine too). Node.js 24 for Windows does not start under Wine 8.

import assert from 'node:assert/strict';
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import Database from 'better-sqlite3';
import { type LedgerTransaction, writeGnuCashBook } from '../../fixtures/ledger-books.js';
import { makeCertificate } from '../support/cli-helpers.js';
import { basicAuth, fixtureSql, request } from '../support/helpers.js';

const NODE_EXE = process.env['WINDOWS_NODE'];
if (NODE_EXE === undefined) throw new Error('WINDOWS_NODE: the path of node.exe (bash scripts/node.sh windows-exe)');
const CLONE = new URL('../..', import.meta.url).pathname.replace(/\/$/, '');
/** How Windows names a Linux path under Wine. */
const win = (path: string): string => `Z:${path.replaceAll('/', '\\')}`;
const BIN = win(`${CLONE}/bin/booking-search-server.js`);
const TIME_LIMIT_MS = 60_000;

const dir = mkdtempSync(join(tmpdir(), 'windows-lane-'));
const env: NodeJS.ProcessEnv = {
  ...process.env,
  WINEPREFIX: join(dir, 'prefix'),
  WINEDEBUG: '-all',
  WINEDLLOVERRIDES: 'mscoree,mshtml=',
};
delete env['BOOKING_SEARCH_USER'];
delete env['BOOKING_SEARCH_PASSWORD'];

/** Every process the lane started, ended at the end whatever happened. */
const started: ChildProcess[] = [];

interface Started {
  child: ChildProcess;
  output: () => string;
}

/** A Windows process under Wine; its output goes to a file (a pipe gives EBADF under Wine). */
function wine(args: string[], name: string): Started {
  return wineWith(env, args, name);
}

function wineWith(environment: NodeJS.ProcessEnv, args: string[], name: string): Started {
  const log = join(dir, `${name}.log`);
  const fd = openSync(log, 'w');
  const child = spawn('wine', [NODE_EXE as string, ...args], { env: environment, stdio: ['ignore', fd, fd] });
  closeSync(fd);
  started.push(child);
  return { child, output: () => (existsSync(log) ? readFileSync(log, 'utf8') : '') };
}

async function finished(child: ChildProcess, what: string): Promise<number | null> {
  const timer = setTimeout(() => child.kill('SIGKILL'), TIME_LIMIT_MS);
  const [code] = (await once(child, 'exit')) as [number | null];
  clearTimeout(timer);
  assert.notEqual(code, null, `${what} was killed after ${TIME_LIMIT_MS} ms`);
  return code;
}

/** The first match of `pattern` in a process's output; fails once the process has ended without it. */
async function waitFor({ child, output }: Started, pattern: RegExp): Promise<RegExpExecArray> {
  const deadline = Date.now() + TIME_LIMIT_MS;
  for (;;) {
    const found = pattern.exec(output());
    if (found !== null) return found;
    if (child.exitCode !== null || Date.now() > deadline) assert.fail(`no ${pattern} in ${JSON.stringify(output())}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** A GET over HTTPS that trusts the lane's certificate. */
function httpsGet(url: string, authorization: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(url, { ca: readFileSync(join(dir, 'cert.pem')), headers: { authorization } }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.setTimeout(TIME_LIMIT_MS, () => req.destroy(new Error(`no answer: ${url}`)));
    req.on('error', reject).end();
  });
}

/**
 * The command line of WinSW's service file (deploy/booking-search-server.xml), split as
 * Windows splits one, with the installed command and the configuration at this lane's paths.
 */
function winswArguments(): string[] {
  const xml = readFileSync(new URL('../../deploy/booking-search-server.xml', import.meta.url), 'utf8');
  const line = /<arguments>(.*)<\/arguments>/.exec(xml)?.[1] ?? '';
  const args = [...line.matchAll(/"([^"]*)"|(\S+)/g)].map((match) => match[1] ?? match[2] ?? '');
  const paths: Record<string, string> = {
    'C:\\Program Files\\booking-search-server\\node_modules\\booking-search-server\\bin\\booking-search-server.js': BIN,
    'C:\\ProgramData\\booking-search-server\\office.conf': win(CONFIG),
  };
  assert.deepEqual(
    args.filter((arg) => paths[arg] === undefined),
    ['--config'],
  );
  return args.map((arg) => paths[arg] ?? arg);
}

/** Notepad's "UTF-8 with BOM", Windows' line ends. */
function writeNotepad(file: string, lines: string[]): void {
  writeFileSync(file, `\uFEFF${lines.join('\r\n')}\r\n`);
}

/** A book of the project's own schema in WAL mode, closed: no -wal or -shm beside it. */
function writeBook(file: string): void {
  const db = new Database(file);
  db.exec(fixtureSql('schema.sql'));
  db.exec(fixtureSql('bookings.sql'));
  db.pragma('journal_mode = WAL');
  db.close();
}

const BUERO = join(dir, 'Büro Kasse', 'kasse 2026.sqlite');
const LAGER = join(dir, 'lager.sqlite');
const CREDENTIALS = join(dir, 'credentials.txt');
const CONFIG = join(dir, 'office.conf');

before(async () => {
  const prefix = spawn('wineboot', ['-i'], { env, stdio: 'ignore' });
  assert.equal(await finished(prefix, 'wineboot'), 0);
  // A new prefix says Windows 7, on which Node.js 22 does not start.
  const version = spawn('wine', ['reg', 'add', 'HKCU\\Software\\Wine', '/v', 'Version', '/d', 'win10', '/f'], {
    env,
    stdio: 'ignore',
  });
  assert.equal(await finished(version, 'wine reg add'), 0);
  mkdirSync(join(dir, 'Büro Kasse'));
  writeBook(BUERO);
  writeBook(LAGER);
  makeCertificate(join(dir, 'cert.pem'), join(dir, 'key.pem'));
  writeNotepad(CREDENTIALS, ['# Abgleich', 'buero:erstes-passwort', 'lager:zweites-passwort']);
  writeNotepad(CONFIG, [
    '# office books, as a Windows admin writes them',
    'port = 0',
    'admin-port = 0',
    `credentials-file = ${win(CREDENTIALS)}`,
    `tls-cert = "${win(join(dir, 'cert.pem'))}"`,
    `tls-key = ${win(join(dir, 'key.pem'))}`,
    '[book buero]',
    `db = "${win(BUERO)}"`,
    'base-path = /buero',
    'users = buero',
    '[book lager]',
    `db = ${win(LAGER)}`,
    'base-path = /lager',
  ]);
});

after(() => {
  for (const child of started) if (child.exitCode === null) child.kill('SIGKILL');
  spawnSync('wineserver', ['-k'], { env, stdio: 'ignore', timeout: 10_000 });
  rmSync(dir, { recursive: true, force: true });
});

test('Windows: --config with two books at Windows paths, BOM and CRLF, TLS, a writer beside it, a reload by POST /-/reload, a stop by Ctrl+C', async () => {
  const service = wine(winswArguments(), 'service');
  const listening = await waitFor(service, /listening on https:\/\/127\.0\.0\.1:(\d+)\/ \(2 books from /);
  const origin = `https://127.0.0.1:${listening[1]}`;
  const admin = (await waitFor(service, /admin listener on (http:\/\/127\.0\.0\.1:\d+)\//))[1];
  assert.match(service.output(), /on Windows this service does not judge who else may change .* NTFS permissions/);

  // The owner's first run in WAL mode: SQLite under Windows made -wal and -shm.
  const ready = await request(`${admin}/ready`);
  assert.equal(ready.status, 200, ready.body);
  assert.ok(existsSync(`${BUERO}-wal`) && existsSync(`${BUERO}-shm`), 'the service opened the WAL book as its owner');

  // The first user of a file with a BOM gets in; each book knows its users.
  const search = '/api/v1/buchungen?von=2026-03-01&bis=2026-03-31&betrag=-12.50';
  const buero = await httpsGet(`${origin}/buero${search}`, basicAuth('buero', 'erstes-passwort'));
  assert.equal(buero.status, 200, buero.body);
  assert.match(buero.body, /Briefmarken für Mahnungen/);
  assert.equal((await httpsGet(`${origin}/lager${search}`, basicAuth('lager', 'zweites-passwort'))).status, 200);
  assert.equal((await httpsGet(`${origin}/buero${search}`, basicAuth('lager', 'zweites-passwort'))).status, 401);

  // A writer beside it: another Windows process adds a booking; the next search sees it.
  const script = join(dir, 'writer.cjs');
  writeFileSync(
    script,
    `const Database = require(${JSON.stringify(win(`${CLONE}/node_modules/better-sqlite3`))});
     const db = new Database(process.argv[2]);
     db.prepare("INSERT INTO entries (date, amount_cents, subject) VALUES ('2026-03-20', 1999, 'Druckerpapier')").run();
     db.close();`,
  );
  assert.equal(await finished(wine([win(script), win(BUERO)], 'writer').child, 'the writer'), 0);
  const written = await httpsGet(
    `${origin}/buero/api/v1/buchungen?von=2026-03-01&bis=2026-03-31&betrag=-19.99`,
    basicAuth('buero', 'erstes-passwort'),
  );
  assert.match(written.body, /Druckerpapier/);

  // A reload without SIGHUP: a new password, read again on POST /-/reload.
  writeNotepad(CREDENTIALS, ['buero:neues-passwort', 'lager:zweites-passwort']);
  assert.equal((await request(`${admin}/-/reload`, { method: 'POST' })).status, 202);
  await waitFor(service, /configuration re-read from /);
  assert.equal((await httpsGet(`${origin}/buero${search}`, basicAuth('buero', 'neues-passwort'))).status, 200);
  assert.equal((await httpsGet(`${origin}/buero${search}`, basicAuth('buero', 'erstes-passwort'))).status, 401);

  // Ctrl+C (Wine turns SIGINT into the console's Ctrl+C event): a clean stop, with the
  // access log's last batch written.
  service.child.kill('SIGINT');
  assert.equal(await finished(service.child, 'the service'), 0);
  assert.match(service.output(), /GET \/buero\/api\/v1\/buchungen\S* 401/);
});

test('Windows: check on a book at a Windows path', async () => {
  const check = wine([BIN, 'check', '--db', win(LAGER)], 'check');
  assert.equal(await finished(check.child, 'check'), 0, check.output());
  assert.match(check.output(), /^Schema: fits/m);
  assert.match(check.output(), /A real search, .* answers:\r?\n {2}\{"anzahl":1,/);
});

test("Windows: a configuration's relative paths are from its folder, not the working directory; a UTF-16 one is refused in one line", async () => {
  const relative = join(dir, 'relative.conf');
  writeNotepad(relative, ['credentials-file = credentials.txt', '[book lager]', 'db = lager.sqlite']);
  const check = wine([BIN, 'check', '--config', win(relative)], 'check-relative');
  assert.equal(await finished(check.child, 'check --config'), 0, check.output());
  assert.match(check.output(), /^Credentials: 2 user\(s\)/m);
  assert.ok(
    check
      .output()
      .split(/\r?\n/)
      .includes(`Database: ${win(LAGER)}`),
    check.output(),
  );
  // PowerShell 5's > writes UTF-16 LE with a BOM.
  writeFileSync(relative, Buffer.from('\uFEFF[book lager]\r\ndb = lager.sqlite\r\n', 'utf16le'));
  const refused = wine([BIN, 'check', '--config', win(relative)], 'check-utf16');
  assert.equal(await finished(refused.child, 'check --config'), 1);
  assert.match(refused.output(), /^booking-search-server: configuration file .*relative\.conf is UTF-16 \(/m);
});

test('Windows: --workers is refused in one line (the primary could only end its workers, not stop or reload them)', async () => {
  const workers = wine([BIN, '--demo', '--workers', '2'], 'workers');
  assert.equal(await finished(workers.child, '--workers'), 1);
  assert.match(workers.output(), /booking-search-server: --workers is not supported on Windows/);
});

test('Windows: --socket is a named pipe, answered to another Windows process; a path that is not one is refused in one line', async () => {
  const pipe = '\\\\.\\pipe\\booking-search-lane';
  const service = wine([BIN, '--db', win(LAGER), '--socket', pipe, '--credentials-file', win(CREDENTIALS)], 'pipe');
  // Logged as a pipe, the access line's client too: a Windows admin has no Unix socket.
  await waitFor(service, /listening on pipe:\\\\\.\\pipe\\booking-search-lane:\/api\/v1\//);
  const client = join(dir, 'pipe-client.cjs');
  writeFileSync(
    client,
    `require('node:http').get({ socketPath: ${JSON.stringify(pipe)}, path: '/api/v1/status',
       headers: { authorization: ${JSON.stringify(basicAuth('lager', 'zweites-passwort'))} } }, (res) => {
       console.log('status', res.statusCode); res.resume(); });`,
  );
  const asked = wine([win(client)], 'pipe-client');
  assert.equal(await finished(asked.child, 'the pipe client'), 0, asked.output());
  assert.match(asked.output(), /^status 200/m);
  service.child.kill('SIGINT');
  assert.equal(await finished(service.child, 'the service on a pipe'), 0);
  assert.match(service.output(), /Z pipe lager GET \/api\/v1\/status 200 /);

  const refused = wine(
    [BIN, '--db', win(LAGER), '--socket', win(join(dir, 'api.sock')), '--credentials-file', win(CREDENTIALS)],
    'not-a-pipe',
  );
  assert.equal(await finished(refused.child, 'a socket path'), 1);
  assert.match(
    refused.output(),
    /cannot listen on socket Z:.*api\.sock: on Windows a socket is a named pipe, written \\\\\.\\pipe\\NAME/,
  );
  // A Linux recipe's --socket-mode would restrict nothing on a pipe: refused, not ignored.
  const moded = wine([BIN, '--db', win(LAGER), '--socket', pipe, '--socket-mode', '660'], 'pipe-mode');
  assert.equal(await finished(moded.child, '--socket-mode on a pipe'), 2);
  assert.match(
    moded.output(),
    /^booking-search-server: --socket-mode is for a Unix socket: a named pipe on Windows has neither mode nor group; leave it out \(see --help\)\r?$/m,
  );
});

test('Windows: a book another program holds open exclusively (share mode 0) is waited for as a lock, by check and the start, and served once it is closed', async () => {
  const book = join(dir, 'gesperrt.sqlite');
  writeBook(book);
  const release = join(dir, 'release');
  const holder = join(dir, 'holder.cjs');
  // UV_FS_O_EXLOCK: libuv opens the file with share mode 0, as some applications and backup tools do.
  writeFileSync(
    holder,
    `const fs = require('node:fs');
     const fd = fs.openSync(process.argv[2], fs.constants.O_RDWR | 0x10000000);
     console.log('holding');
     const timer = setInterval(() => { if (fs.existsSync(process.argv[3])) { fs.closeSync(fd); clearInterval(timer); } }, 100);`,
  );
  const held = wine([win(holder), win(book), win(release)], 'holder');
  await waitFor(held, /^holding/m);
  const check = wine([BIN, 'check', '--db', win(book)], 'check-held');
  assert.equal(await finished(check.child, 'check of a held book'), 1);
  assert.match(
    check.output(),
    /^Cannot be read now: another program holds the file open exclusively \(EBUSY, .*Resource Monitor/m,
  );
  assert.doesNotMatch(check.output(), /not a SQLite database/);
  const service = wine([BIN, '--db', win(book), '--port', '0', '--credentials-file', win(CREDENTIALS)], 'held');
  await waitFor(service, /cannot be read yet: another program holds the file open exclusively/);
  const origin = (await waitFor(service, /listening on (http:\/\/127\.0\.0\.1:\d+)\//))[1];
  const search = `${origin}/api/v1/buchungen?von=2026-03-01&bis=2026-03-31&betrag=-12.50`;
  const waiting = await request(search, { headers: { authorization: basicAuth('lager', 'zweites-passwort') } });
  assert.equal(waiting.status, 500);
  assert.equal(waiting.headers['retry-after'], '1');
  writeFileSync(release, '');
  assert.equal(await finished(held.child, 'the holder'), 0);
  await waitFor(service, /can be read now; serving it/);
  const served = await request(search, { headers: { authorization: basicAuth('lager', 'zweites-passwort') } });
  assert.equal(served.status, 200, served.body);
  service.child.kill('SIGINT');
  assert.equal(await finished(service.child, 'the service of a held book'), 0);
});

test("Windows: a GnuCash book's days in the zone TZ names, by Node.js' time zone data (the C runtime's would ignore TZ)", async () => {
  const book = join(dir, 'kasse.gnucash');
  // Entered in Berlin late in the evening: 23:30 UTC is the next day there.
  writeGnuCashBook(book, [
    {
      date: '2026-03-14',
      description: 'Import spät abends',
      currency: 'EUR',
      sides: [
        { account: 'kasse', cents: -1250 },
        { account: 'porto', cents: 1250 },
      ],
      time: '23:30:00',
    } as LedgerTransaction,
  ]);
  const inBerlin = { ...env, TZ: 'Europe/Berlin' };
  const check = wineWith(inBerlin, [BIN, 'check', '--db', win(book), '--app', 'gnucash'], 'gnucash-check');
  assert.equal(await finished(check.child, 'check of a GnuCash book'), 0, check.output());
  assert.match(check.output(), /UTC\+01:00 in January and UTC\+02:00 in July/);
  assert.match(check.output(), /"datum":"2026-03-15"/);
});
