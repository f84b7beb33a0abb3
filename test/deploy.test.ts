// deploy/: the systemd unit passes `systemd-analyze verify` (and its hardening is scored),
// the nginx site passes `nginx -t`, and both together serve: nginx with TLS in front of the
// CLI started with the unit's own ExecStart flags on a Unix socket, with nginx's monitoring
// server in front of its admin listener; and the site for many books routes each book's
// base path to one of two instances over TLS, and operations.md's location for many books in one
// service passes each book to the one socket. The tools must be installed (.ci/run installs them);
// a missing tool fails these tests.

import assert from 'node:assert/strict';
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { test } from 'node:test';
import { connect as tlsConnect } from 'node:tls';
import { tlsPolicy } from '../bin/listen/tls.js';
import { BIN, makeCertificate, TIME, until } from './support/cli-helpers.js';
import { AUTH, basicAuth, buildDatabase, type Reply, request, statusAnswer, tempDir } from './support/helpers.js';
import { promtoolCheckMetrics } from './support/prometheus.js';
import { rawRequest } from './support/raw-http.js';

const UNIT = new URL('../deploy/booking-search-server.service', import.meta.url).pathname;
const SITE = new URL('../deploy/nginx.conf', import.meta.url).pathname;
const BOOKS_SITE = new URL('../deploy/nginx-books.conf', import.meta.url).pathname;
const INSTALLED = '/opt/booking-search-server/bin/booking-search-server';
// The Node the unit names (docs/operations.md, Install): never the first `node` on PATH.
const NODE = '/opt/node/bin/node';

test('the systemd unit passes systemd-analyze verify without a warning, and its exposure is low', (t) => {
  const dir = tempDir(t);
  // verify needs an executable at ExecStart's path: this Node, and the repository's own launcher.
  const unit = join(dir, 'booking-search-server.service');
  const text = readFileSync(UNIT, 'utf8');
  assert.ok(text.includes(`ExecStart=${NODE} ${INSTALLED} `), 'the unit starts the installed command on its Node');
  writeFileSync(unit, text.replaceAll(INSTALLED, BIN).replaceAll(NODE, process.execPath));
  const verify = spawnSync('systemd-analyze', ['verify', unit], { encoding: 'utf8' });
  assert.equal(verify.error, undefined, 'systemd-analyze must be installed');
  assert.equal(verify.status, 0, verify.stderr);
  assert.equal(verify.stderr, '', 'no warning');

  const security = spawnSync('systemd-analyze', ['security', '--offline=yes', unit], { encoding: 'utf8' });
  const exposure = /Overall exposure level for booking-search-server\.service: (\d+\.\d)/.exec(security.stdout);
  assert.ok(exposure, security.stdout + security.stderr);
  assert.ok(Number(exposure[1]) <= 1.5, `exposure ${exposure[1]} (0 safe … 10 unsafe)`);

  for (const line of [
    'User=buchungssuche',
    'Restart=on-failure',
    'StartLimitIntervalSec=60',
    'NoNewPrivileges=yes',
    'ProtectSystem=strict',
    'LoadCredential=credentials:/etc/booking-search-server/credentials',
    'RuntimeDirectory=booking-search-server',
    // A core dump would hold the passwords of the clients the process checked.
    'LimitCORE=0',
  ]) {
    assert.match(text, new RegExp(`^${line.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}$`, 'm'));
  }
});

/** The unit's ExecStart as an argument list, continuation lines joined. */
function execStart(): string[] {
  const line = /^ExecStart=((?:.*\\\n)*.*)$/m.exec(readFileSync(UNIT, 'utf8'))?.[1];
  assert.ok(line, 'ExecStart');
  return line.replace(/\\\n/g, ' ').trim().split(/\s+/);
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

interface Site {
  dir: string;
  config: string;
  https: number;
  http: number;
  /** nginx's monitoring server, in front of the admin listener. */
  monitoring: number;
  socket: string;
  cert: string;
}

/** A throwaway certificate and the site file with its paths and ports pointed at `dir`. */
async function prepareSite(dir: string): Promise<Site> {
  chmodSync(dir, 0o755);
  const cert = join(dir, 'cert.pem');
  const key = join(dir, 'key.pem');
  makeCertificate(cert, key, 'localhost');
  const run = join(dir, 'run');
  mkdirSync(run, { mode: 0o755 });
  chmodSync(run, 0o755);
  const http = await freePort();
  const https = await freePort();
  const monitoring = await freePort();
  const site = readFileSync(SITE, 'utf8')
    .replace('listen 127.0.0.1:9469;', `listen 127.0.0.1:${monitoring};`)
    .replace(/^\s*listen \[::\].*\n/gm, '')
    .replace('listen 80;', `listen 127.0.0.1:${http};`)
    .replace('listen 443 ssl http2;', `listen 127.0.0.1:${https} ssl http2;`)
    .replaceAll('/etc/letsencrypt/live/kasse.example.org/fullchain.pem', cert)
    .replaceAll('/etc/letsencrypt/live/kasse.example.org/privkey.pem', key)
    .replaceAll('/run/booking-search-server/', `${run}/`)
    .replaceAll('/var/log/nginx/', `${dir}/`)
    .replaceAll('/var/www/acme', dir);
  writeFileSync(join(dir, 'site.conf'), site);
  const config = writeNginxMain(dir);
  return { dir, config, https, http, monitoring, socket: join(run, 'api.sock'), cert };
}

/** What Debian's /etc/nginx/nginx.conf provides around `dir`/site.conf, in `dir`; returns its path. */
function writeNginxMain(dir: string): string {
  const config = join(dir, 'nginx.conf');
  writeFileSync(
    config,
    `user www-data;
daemon off;
worker_processes 1;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections 64; }
http {
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  include ${join(dir, 'site.conf')};
}
`,
  );
  return config;
}

test('the nginx site passes nginx -t (TLS, the Unix socket, a log format without the query string)', async (t) => {
  const dir = tempDir(t);
  const site = await prepareSite(dir);
  const check = spawnSync('nginx', ['-t', '-p', dir, '-e', join(dir, 'error.log'), '-c', site.config], {
    encoding: 'utf8',
  });
  assert.equal(check.error, undefined, 'nginx must be installed');
  assert.equal(check.status, 0, check.stderr);
  assert.match(check.stderr, /test is successful/);
  assertCiphers(SITE);
  assertCiphers(BOOKS_SITE);
  assertNoTemporaryFiles(SITE);
  assertNoTemporaryFiles(BOOKS_SITE);
  const text = readFileSync(SITE, 'utf8');
  assert.match(text, /^\s*proxy_pass http:\/\/booking_search;$/m);
  assert.match(text, /server unix:\/run\/booking-search-server\/api\.sock;/);
  assert.match(text, /server unix:\/run\/booking-search-server\/admin\.sock;/);
  assert.match(text, /^\s*listen 127\.0\.0\.1:9469;/m);
  for (const [file, name] of [
    [SITE, 'booking_search'],
    [BOOKS_SITE, 'booking_books'],
  ] as const) {
    const format = new RegExp(`log_format ${name} ([^;]+);`).exec(readFileSync(file, 'utf8'))?.[1] ?? '';
    assert.match(format, /\$uri/);
    assert.doesNotMatch(format, /\$request(?!_method|_time)|\$args|\$query_string|\$request_uri/);
    // What a client typed as its user name, a password typed in the wrong field too.
    assert.doesNotMatch(format, /\$remote_user/, name);
  }
});

// A month's statement of 200 lines: over nginx's default body buffer (16 KiB), which wrote
// it to a temporary file. Its first line is the March coffee, -4.35.
const STATEMENT = JSON.stringify({
  zeilen: Array.from({ length: 200 }, (_, i) => ({
    ref: `KARTENZAHLUNG girocard 2026-03-20T08:15 Cafe am Markt Terminal 6641${i} Folgenr. ${i}`,
    datum: '2026-03-20',
    betrag: i === 0 ? '-4.35' : `-${i + 1000}.01`,
    tage: 31,
  })),
});

/** The API location keeps a statement and its answer off the disk: no temporary file for either. */
function assertNoTemporaryFiles(file: string): void {
  const text = readFileSync(file, 'utf8');
  const bound = /^\s*client_max_body_size (\d+m);/m.exec(text)?.[1];
  assert.ok(bound, file);
  assert.equal(/^\s*client_body_buffer_size (\w+);/m.exec(text)?.[1], bound, file);
  assert.match(text, /^\s*proxy_max_temp_file_size 0;/m, file);
}

/** A GET through nginx's public server, or a POST of `body`. */
function httpsGet(site: Site, path: string, headers: Record<string, string>, body?: string): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const method = body === undefined ? 'GET' : 'POST';
    const req = httpsRequest(
      { host: '127.0.0.1', port: site.https, method, path, headers, ca: readFileSync(site.cert), agent: false },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      },
    );
    req.setTimeout(10_000, () => req.destroy(new Error(`no answer within 10 s: ${path}`)));
    req.on('error', reject);
    req.end(body);
  });
}

/** The TLS 1.2 suite nginx agrees to at `port` when the client offers only `cipher`, or its refusal. */
function tls12Suite(port: number, cipher: string): Promise<string> {
  return new Promise((resolve) => {
    const socket = tlsConnect({
      host: '127.0.0.1',
      port,
      maxVersion: 'TLSv1.2',
      ciphers: cipher,
      rejectUnauthorized: false,
    });
    socket.setTimeout(10_000, () => socket.destroy(new Error('no handshake within 10 s')));
    socket.on('secureConnect', () => {
      resolve(socket.getCipher().name);
      socket.end();
    });
    socket.on('error', (error) => resolve(`refused: ${error.message}`));
  });
}

/** The site's TLS 1.2 suites, the service's own (bin/listen/tls.ts): forward-secret AEAD only. */
function assertCiphers(file: string): void {
  const text = readFileSync(file, 'utf8');
  const service = (tlsPolicy('TLSv1.2').ciphers ?? '').split(':').filter((suite) => !suite.startsWith('TLS_'));
  assert.deepEqual(/^\s*ssl_ciphers ([^;]+);/m.exec(text)?.[1]?.split(':'), service, file);
  assert.match(text, /^\s*ssl_prefer_server_ciphers off;/m, file);
}

/** Offers nginx at `port` each suite alone over TLS 1.2: the AEAD ones agreed, CBC and static RSA refused. */
async function assertSuites(port: number, accepted: string[], refused: string[]): Promise<void> {
  for (const suite of accepted) assert.equal(await tls12Suite(port, suite), suite);
  for (const suite of refused) assert.match(await tls12Suite(port, suite), /^refused: .*handshake failure/, suite);
}

/**
 * docs/operations.md, nginx: on one connection to nginx's public server, a POST with
 * `Expect: 100-continue` whose Content-Type the service refuses (its 415 closes), then a GET.
 * Gives what nginx sent before the body was sent, all it sent, and whether it closed.
 */
async function expectThenAgain(site: Site): Promise<{ beforeBody: string; all: string; ended: boolean }> {
  const socket = tlsConnect({ host: '127.0.0.1', port: site.https, ca: readFileSync(site.cert) });
  let all = '';
  let ended = false;
  socket.setEncoding('utf8').on('data', (chunk: string) => (all += chunk));
  socket.on('end', () => (ended = true));
  socket.on('error', () => undefined);
  const head = `Host: kasse.example.org\r\nAuthorization: ${AUTH}\r\n`;
  const body = 'datum;betrag\n2026-03-20;-4.35\n';
  socket.write(
    `POST /kasse/api/v1/abgleich HTTP/1.1\r\n${head}Content-Type: text/csv\r\n` +
      `Content-Length: ${body.length}\r\nExpect: 100-continue\r\n\r\n`,
  );
  await until(
    () => all.includes('\r\n\r\n') || ended,
    () => `nginx's first answer: ${JSON.stringify(all)}`,
  );
  const beforeBody = all;
  socket.write(body);
  await until(
    () => all.includes('"unsupported_media_type"') || ended,
    () => `the 415: ${JSON.stringify(all)}`,
  );
  if (!ended) socket.write(`GET /kasse/api/v1/status HTTP/1.1\r\n${head}\r\n`);
  await until(
    () => all.includes('"version"') || ended,
    () => `the second answer: ${JSON.stringify(all)}`,
  );
  socket.destroy();
  return { beforeBody, all, ended };
}

function collect(child: ChildProcess): () => string {
  let output = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  return () => output;
}

test("nginx with TLS in front of the CLI started with the unit's flags: searches pass, the client is throttled, nothing logs a query", async (t) => {
  const dir = tempDir(t);
  const site = await prepareSite(dir);
  const credentials = join(dir, 'credentials');
  mkdirSync(credentials);
  writeFileSync(join(credentials, 'credentials'), 'kasse:ge:heim\n', { mode: 0o400 });

  const args = execStart();
  assert.deepEqual(args.slice(0, 2), [NODE, INSTALLED]);
  const database = buildDatabase(t);
  const cliArgs = args.slice(2).map((arg) =>
    arg
      .replace('/srv/kasse/kasse.sqlite', database)
      .replace('/run/booking-search-server/', `${dirnameOf(site.socket)}/`)
      // biome-ignore lint/suspicious/noTemplateCurlyInString: systemd's variable, not a template
      .replace('${CREDENTIALS_DIRECTORY}', credentials),
  );
  assert.ok(cliArgs.includes(site.socket), cliArgs.join(' '));
  assert.ok(cliArgs.includes(join(dirnameOf(site.socket), 'admin.sock')), cliArgs.join(' '));
  const cli = spawn(process.execPath, [BIN, ...cliArgs], { stdio: ['ignore', 'pipe', 'pipe'] });
  t.after(() => void cli.kill('SIGKILL'));
  const cliOutput = collect(cli);
  await until(
    () => cliOutput().includes(' listening on unix:'),
    () => `the CLI: ${cliOutput()}`,
  );
  assert.match(
    cliOutput(),
    new RegExp(`^${TIME} booking-search-server listening on unix:${site.socket}:/kasse/api/v1/$`, 'm'),
  );

  // Its workers hold no pipe of ours, so a worker left behind cannot keep this test alive;
  // SIGTERM makes the master stop its workers too.
  const nginx = spawn('nginx', ['-p', dir, '-e', join(dir, 'error.log'), '-c', site.config], { stdio: 'ignore' });
  t.after(() => void nginx.kill('SIGTERM'));
  const nginxOutput = (): string =>
    existsSync(join(dir, 'error.log')) ? readFileSync(join(dir, 'error.log'), 'utf8') : '';
  await until(
    () =>
      httpsGet(site, '/kasse/api/v1/status', { authorization: AUTH }).then(
        () => true,
        () => false,
      ),
    () => `nginx: ${nginxOutput()}`,
  );

  // An EC certificate: its forward-secret AEAD suites, not its CBC ones.
  await assertSuites(
    site.https,
    ['ECDHE-ECDSA-AES128-GCM-SHA256', 'ECDHE-ECDSA-CHACHA20-POLY1305'],
    ['ECDHE-ECDSA-AES128-SHA', 'ECDHE-ECDSA-AES256-SHA384'],
  );
  const search = await httpsGet(site, '/kasse/api/v1/buchungen?von=2026-03-01&bis=2026-03-31&betrag=-4.35', {
    authorization: AUTH,
  });
  assert.equal(search.status, 200, search.body);
  assert.equal((JSON.parse(search.body) as { anzahl: number }).anzahl, 1);
  assert.equal((await httpsGet(site, '/', { authorization: AUTH })).status, 404, 'only the API is passed on');
  // Over HTTP the API is refused in a line that says why, never redirected (a POST would turn into a GET).
  const large = `{"zeilen":[${'{"datum":"2026-03-20","betrag":"-4.35"},'.repeat(60_000)}{}]}`;
  for (const [method, body] of [['GET'], ['POST', '{"zeilen":[]}'], ['POST', large]] as const) {
    const plain = await request(`http://127.0.0.1:${site.http}/kasse/api/v1/abgleich`, {
      method,
      headers: { authorization: AUTH, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body }),
    });
    assert.equal(plain.status, 403, method);
    assert.equal(plain.body, 'HTTPS only: this API is not served over http://\n');
  }
  const page = await request(`http://127.0.0.1:${site.http}/`);
  assert.equal(page.status, 301);
  assert.equal(page.headers.location, `https://127.0.0.1/`);
  // A month's statement in one request: far more than a search's kilobyte, passed on whole.
  const paired = await httpsGet(
    site,
    '/kasse/api/v1/abgleich',
    { authorization: AUTH, 'content-type': 'application/json' },
    STATEMENT,
  );
  assert.equal(paired.status, 200, paired.body);
  const { zeilen } = JSON.parse(paired.body) as { zeilen: { buchungen: { id: number }[] }[] };
  assert.equal(zeilen.length, 200);
  assert.equal(zeilen[0]?.buchungen[0]?.id, 8, 'the March coffee, -4.35');

  // The admin listener through nginx's monitoring server: what a health check and Prometheus
  // ask for. The public server passes none of it on.
  const ready = await request(`http://127.0.0.1:${site.monitoring}/ready`);
  assert.equal(ready.status, 200, ready.body);
  assert.equal((JSON.parse(ready.body) as { ready: boolean }).ready, true);
  const metrics = await request(`http://127.0.0.1:${site.monitoring}/metrics`);
  assert.equal(metrics.status, 200);
  assert.deepEqual(await promtoolCheckMetrics(metrics.body), { code: 0, output: '' });
  assert.match(metrics.body, /^booking_search_requests_total\{endpoint="search",status="200"\} 1$/m);
  assert.equal((await request(`http://127.0.0.1:${site.monitoring}/kasse/api/v1/status`)).status, 404);
  // A health check of HTTP/1.0 sends no Host (HAProxy's httpchk): nginx passes its own name on.
  const check = await rawRequest(`http://127.0.0.1:${site.monitoring}`, 'GET /live HTTP/1.0\r\n\r\n');
  assert.equal(check.status, 200, check.body);
  // A page's name that its DNS points at this address (DNS rebinding) reaches nginx with that name.
  const rebound = await request(`http://127.0.0.1:${site.monitoring}/metrics`, {
    headers: { host: 'rebind.example:9469' },
  });
  assert.equal(rebound.status, 400, rebound.body);
  for (const path of ['/ready', '/metrics', '/live']) {
    assert.equal((await httpsGet(site, path, {})).status, 404, `${path} is not public`);
  }

  // nginx answers Expect: 100-continue itself, before the service judged the request, and
  // keeps the client's connection when the service's answer closes its own (a 415).
  const kept = await expectThenAgain(site);
  assert.match(kept.beforeBody, /^HTTP\/1\.1 100 Continue\r\n\r\n$/);
  assert.match(kept.all, /^HTTP\/1\.1 415 /m);
  assert.doesNotMatch(kept.all, /^connection: close/im);
  assert.match(kept.all, /"unsupported_media_type"}HTTP\/1\.1 200 /);
  assert.ok(kept.all.endsWith(`"version":"${statusAnswer().version}"}`), kept.all);
  assert.equal(kept.ended, false);

  // Ten wrong passwords from this client (through nginx, as 127.0.0.1) block it; a made-up
  // X-Forwarded-For does not help, since nginx appends the address it saw and the service
  // takes the last entry.
  const wrong = basicAuth('kasse', 'falsch');
  for (let i = 0; i < 10; i += 1) {
    const reply = await httpsGet(site, '/kasse/api/v1/status', {
      authorization: wrong,
      'x-forwarded-for': `10.0.0.${i}`,
    });
    assert.equal(reply.status, 401);
  }
  const blocked = await httpsGet(site, '/kasse/api/v1/status', { authorization: AUTH, 'x-forwarded-for': '10.0.0.99' });
  assert.equal(blocked.status, 429);
  assert.ok(Number(blocked.headers['retry-after']) > 0);
  // A password typed as the user name (curl -u 'PASSWORD:') is in neither log.
  const typed = await httpsGet(site, '/kasse/api/v1/status', { authorization: basicAuth('S3cret-Passw0rd!', '') });
  assert.equal(typed.status, 429);

  cli.kill('SIGTERM');
  nginx.kill('SIGQUIT');
  await until(
    () => cli.exitCode !== null && nginx.exitCode !== null,
    () => 'both to stop',
  );
  assert.equal(cli.exitCode, 0);
  const serviceLog = cliOutput();
  assert.match(serviceLog, new RegExp(`^${TIME} 127\\.0\\.0\\.1 kasse GET /kasse/api/v1/buchungen 200 `, 'm'));
  assert.match(serviceLog, new RegExp(`^${TIME} 127\\.0\\.0\\.1 - GET /kasse/api/v1/status 429 `, 'm'));
  assert.doesNotMatch(serviceLog, /10\.0\.0\.|betrag|ge:heim|S3cret/);
  // Neither the statement nor its answer was written to disk (nginx warns when it does).
  assert.doesNotMatch(nginxOutput(), /buffered to a temporary file/);
  assert.deepEqual([...readdirSync(join(dir, 'body')), ...readdirSync(join(dir, 'proxy'))], []);
  const nginxLog = readFileSync(join(dir, 'booking-search.access.log'), 'utf8');
  assert.match(nginxLog, /"GET \/kasse\/api\/v1\/buchungen HTTP\/[\d.]+" 200 /);
  assert.match(nginxLog, /"GET \/kasse\/api\/v1\/status HTTP\/[\d.]+" 429 /);
  assert.doesNotMatch(nginxLog, /betrag|von=|\?|S3cret|kasse \[/);
});

test("operations.md's many-books location, as written, in the shipped site: each book's API reaches the one socket, and the service tells the books apart", async (t) => {
  const dir = tempDir(t);
  const site = await prepareSite(dir);
  const operations = readFileSync(new URL('../docs/operations.md', import.meta.url), 'utf8');
  const location = /`location \/kasse\/api\/` line made\s+`(location ~ [^`]+)`/.exec(operations)?.[1];
  assert.ok(location !== undefined, 'docs/operations.md shows the location for many books');
  const conf = join(dir, 'site.conf');
  const shipped = readFileSync(conf, 'utf8');
  assert.ok(shipped.includes('location /kasse/api/ {'), 'the shipped site has the line to change');
  writeFileSync(conf, shipped.replace('location /kasse/api/ {', `${location} {`));
  const credentials = join(dir, 'credentials');
  writeFileSync(credentials, 'mueller:m-1\nschmidt:s-1\n', { mode: 0o400 });
  const books = join(dir, 'books.conf');
  writeFileSync(
    books,
    `[book mueller]\ndb = ${buildDatabase(t)}\nbase-path = /mueller\nusers = mueller\n\n` +
      `[book schmidt]\ndb = ${buildDatabase(t)}\nbase-path = /schmidt\nusers = schmidt\n`,
    { mode: 0o600 },
  );
  const cli = spawn(
    process.execPath,
    [BIN, '--config', books, '--socket', site.socket, '--socket-group', 'www-data', '--credentials-file', credentials],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  t.after(() => void cli.kill('SIGKILL'));
  const cliOutput = collect(cli);
  await until(
    () => cliOutput().includes(' listening on unix:'),
    () => `the CLI: ${cliOutput()}`,
  );
  const nginx = spawn('nginx', ['-p', dir, '-e', join(dir, 'error.log'), '-c', site.config], { stdio: 'ignore' });
  t.after(() => void nginx.kill('SIGTERM'));
  const mueller = basicAuth('mueller', 'm-1');
  await until(
    () =>
      httpsGet(site, '/mueller/api/v1/status', { authorization: mueller }).then(
        () => true,
        () => false,
      ),
    () => 'nginx',
  );
  const own = await httpsGet(site, '/mueller/api/v1/status', { authorization: mueller });
  assert.equal(own.status, 200, own.body);
  assert.equal((JSON.parse(own.body) as { name: string }).name, 'mueller');
  const other = await httpsGet(site, '/schmidt/api/v1/status', { authorization: basicAuth('schmidt', 's-1') });
  assert.equal((JSON.parse(other.body) as { name: string }).name, 'schmidt');
  assert.equal((await httpsGet(site, '/schmidt/api/v1/status', { authorization: mueller })).status, 401);
  assert.equal((await httpsGet(site, '/niemand/api/v1/status', { authorization: mueller })).status, 404);
  assert.equal((await httpsGet(site, '/', { authorization: mueller })).status, 404, 'only the APIs are passed on');
  // A path that names no book is the service's 404, after the login (its access log is written in batches).
  await until(
    () => /GET \/niemand\/api\/v1\/status 404/.test(cliOutput()),
    () => `the service's 404: ${cliOutput()}`,
  );
});

/** Where the books' site names the file of the certificates it trusts for the instances. */
const INSTANCES_CA = '/etc/nginx/booking-books-instances.pem';

/**
 * The self-signed certificate (EC P-256, one day) of the site's `upstream` named `instance`,
 * for the name the site checks in it (its line in the map of TLS names), in `dir`.
 */
function instanceCertificate(dir: string, site: string, instance: string): { cert: string; key: string } {
  const name = new RegExp(`^\\s*${instance}\\s+([a-z0-9.-]+);`, 'm').exec(site)?.[1];
  assert.ok(name, `the name the site checks in ${instance}'s certificate`);
  const files = { cert: join(dir, `${instance}.pem`), key: join(dir, `${instance}.key`) };
  const made = spawnSync(
    'openssl',
    [
      ...['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1'],
      ...['-subj', `/CN=${name}`, '-addext', `subjectAltName=DNS:${name}`, '-keyout', files.key, '-out', files.cert],
    ],
    { encoding: 'utf8' },
  );
  assert.equal(made.status, 0, made.stderr);
  return files;
}

function dirnameOf(path: string): string {
  return path.slice(0, path.lastIndexOf('/'));
}

test('nginx routes the books to two instances on loopback ports, each serving its own books for their own users', async (t) => {
  const dir = tempDir(t);
  chmodSync(dir, 0o755);
  const cert = join(dir, 'cert.pem');
  const key = join(dir, 'key.pem');
  makeCertificate(cert, key, 'localhost', 'rsa');
  const [a, b, http, https] = [await freePort(), await freePort(), await freePort(), await freePort()];
  const text = readFileSync(BOOKS_SITE, 'utf8');
  // On to the instances over TLS, their certificates checked: the Basic passwords cross the network.
  for (const line of [
    'proxy_pass https://$booking_books_instance;',
    'proxy_ssl_verify on;',
    `proxy_ssl_trusted_certificate ${INSTANCES_CA};  # adjust`,
    'proxy_ssl_name $booking_books_tls_name;',
    'proxy_ssl_session_reuse on;',
  ]) {
    assert.ok(
      text.split('\n').some((shipped) => shipped.trim() === line),
      line,
    );
  }
  assert.doesNotMatch(text, /proxy_pass http:/);
  // Each instance its own self-signed certificate for the name the site checks, both in the trusted file.
  const tlsA = instanceCertificate(dir, text, 'booking_books_a');
  const tlsB = instanceCertificate(dir, text, 'booking_books_b');
  const trusted = join(dir, 'instances.pem');
  writeFileSync(trusted, readFileSync(tlsA.cert, 'utf8') + readFileSync(tlsB.cert, 'utf8'));
  const site = text
    .replace(/^\s*listen \[::\].*\n/gm, '')
    .replace('listen 80;', `listen 127.0.0.1:${http};`)
    .replace('listen 443 ssl http2;', `listen 127.0.0.1:${https} ssl http2;`)
    .replace('server 10.0.0.11:8443;', `server 127.0.0.1:${a};`)
    .replace('server 10.0.0.12:8443;', `server 127.0.0.1:${b};`)
    .replaceAll('/etc/letsencrypt/live/buchungen.example.org/fullchain.pem', cert)
    .replaceAll('/etc/letsencrypt/live/buchungen.example.org/privkey.pem', key)
    .replaceAll(INSTANCES_CA, trusted)
    .replaceAll('/var/log/nginx/', `${dir}/`)
    .replaceAll('/var/www/acme', dir);
  writeFileSync(join(dir, 'site.conf'), site);
  const config = writeNginxMain(dir);
  const nginxCheck = spawnSync('nginx', ['-t', '-p', dir, '-e', join(dir, 'error.log'), '-c', config], {
    encoding: 'utf8',
  });
  assert.equal(nginxCheck.error, undefined, 'nginx must be installed');
  assert.equal(nginxCheck.status, 0, nginxCheck.stderr);

  // Instance A has mueller and schmidt, instance B has meier: each its own file, port and
  // certificate; B takes TLS 1.3 only, which nginx 1.22 offers an upstream only when told.
  const data = join(dir, 'data');
  mkdirSync(data);
  const files = Object.fromEntries(
    ['mueller', 'schmidt', 'meier'].map((name) => {
      const file = join(data, `${name}.sqlite`);
      copyFileSync(buildDatabase(t), file);
      return [name, file];
    }),
  );
  chmodSync(data, 0o555);
  writeFileSync(join(dir, 'credentials'), 'mueller:m-geheim\nschmidt:s-geheim\nmeier:g-geheim\n', { mode: 0o600 });
  const instance = (name: string, port: number, books: string[], tls: Record<string, string>): string => {
    const file = join(dir, `${name}.conf`);
    const sections = books.map(
      (book) => `[book ${book}]\ndb = ${files[book]}\nbase-path = /${book}\nusers = ${book}\n`,
    );
    writeFileSync(
      file,
      [
        `port = ${port}`,
        ...Object.entries(tls).map(([key, value]) => `tls-${key} = ${value}`),
        'trust-proxy = 127.0.0.1',
        `credentials-file = ${join(dir, 'credentials')}`,
        '',
        ...sections,
      ].join('\n'),
      { mode: 0o600 },
    );
    return file;
  };
  const env = { ...process.env };
  delete env['BOOKING_SEARCH_USER'];
  delete env['BOOKING_SEARCH_PASSWORD'];
  const started = [
    spawn(process.execPath, [BIN, '--config', instance('a', a, ['mueller', 'schmidt'], tlsA)], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
    spawn(process.execPath, [BIN, '--config', instance('b', b, ['meier'], { ...tlsB, 'min-version': '1.3' })], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  ];
  const outputs = started.map((child) => {
    t.after(() => void child.kill('SIGKILL'));
    return collect(child);
  });
  for (const output of outputs)
    await until(
      () => output().includes(' listening on https://'),
      () => `an instance: ${output()}`,
    );

  const nginx = spawn('nginx', ['-p', dir, '-e', join(dir, 'error.log'), '-c', config], { stdio: 'ignore' });
  t.after(() => void nginx.kill('SIGTERM'));
  const site443 = { dir, config, https, http, monitoring: 0, socket: '', cert };
  const as = (user: string, password: string) => ({ authorization: basicAuth(user, password) });
  await until(
    () =>
      httpsGet(site443, '/meier/api/v1/status', as('meier', 'g-geheim')).then(
        (reply) => reply.status === 200,
        () => false,
      ),
    () => `nginx: ${existsSync(join(dir, 'error.log')) ? readFileSync(join(dir, 'error.log'), 'utf8') : ''}`,
  );

  // An RSA certificate: its ECDHE AEAD suites, neither CBC nor static RSA (no forward secrecy).
  await assertSuites(
    https,
    ['ECDHE-RSA-AES256-GCM-SHA384', 'ECDHE-RSA-CHACHA20-POLY1305'],
    ['ECDHE-RSA-AES128-SHA', 'AES128-GCM-SHA256', 'AES256-SHA'],
  );
  const search = '/api/v1/buchungen?von=2026-03-01&bis=2026-03-31&betrag=-4.35';
  for (const [book, password] of [
    ['mueller', 'm-geheim'],
    ['schmidt', 's-geheim'],
    ['meier', 'g-geheim'],
  ] as const) {
    const status = await httpsGet(site443, `/${book}/api/v1/status`, as(book, password));
    assert.equal(status.status, 200, status.body);
    assert.deepEqual(JSON.parse(status.body), statusAnswer(book));
    const reply = await httpsGet(site443, `/${book}${search}`, as(book, password));
    assert.equal((JSON.parse(reply.body) as { anzahl: number }).anzahl, 1);
  }
  const paired = await httpsGet(
    site443,
    '/meier/api/v1/abgleich',
    { ...as('meier', 'g-geheim'), 'content-type': 'application/json' },
    STATEMENT,
  );
  assert.equal(paired.status, 200, paired.body);
  // A user of instance A's book on instance B's: refused there, as a wrong password.
  assert.equal((await httpsGet(site443, '/meier/api/v1/status', as('mueller', 'm-geheim'))).status, 401);
  assert.equal((await httpsGet(site443, '/schmidt/api/v1/status', as('mueller', 'm-geheim'))).status, 401);
  // meier's password typed as the user name: in neither log.
  assert.equal((await httpsGet(site443, '/meier/api/v1/status', as('g-geheim', ''))).status, 401);
  // A book no instance has, and anything but an API: nginx's own 404, no instance asked.
  assert.equal((await httpsGet(site443, '/weber/api/v1/status', as('mueller', 'm-geheim'))).status, 404);
  assert.equal((await httpsGet(site443, '/', as('mueller', 'm-geheim'))).status, 404);
  // nginx checks each instance's certificate: with B's left out of the trusted file (and a
  // reload), B's books are nginx's 502, no password sent to it; A's are served still.
  assert.doesNotMatch(readFileSync(join(dir, 'error.log'), 'utf8'), /verify error/);
  writeFileSync(trusted, readFileSync(tlsA.cert));
  nginx.kill('SIGHUP');
  await until(
    () =>
      httpsGet(site443, '/meier/api/v1/status', as('meier', 'g-geheim')).then(
        (reply) => reply.status === 502,
        () => false,
      ),
    () => `nginx's 502: ${readFileSync(join(dir, 'error.log'), 'utf8')}`,
  );
  assert.match(readFileSync(join(dir, 'error.log'), 'utf8'), /upstream SSL certificate verify error/);
  assert.equal((await httpsGet(site443, '/mueller/api/v1/status', as('mueller', 'm-geheim'))).status, 200);

  for (const child of started) child.kill('SIGTERM');
  nginx.kill('SIGQUIT');
  await until(
    () => started.every((child) => child.exitCode !== null) && nginx.exitCode !== null,
    () => 'the instances and nginx to stop',
  );
  const [logA, logB] = outputs.map((output) => output());
  // Each instance saw only its own books, and the client's address (the proxy is trusted).
  assert.match(logA ?? '', new RegExp(`^${TIME} 127\\.0\\.0\\.1 mueller GET /mueller/api/v1/buchungen 200 `, 'm'));
  assert.match(logA ?? '', new RegExp(`^${TIME} 127\\.0\\.0\\.1 schmidt GET /schmidt/api/v1/buchungen 200 `, 'm'));
  assert.doesNotMatch(logA ?? '', /\/meier\/|\/weber\//);
  assert.match(logB ?? '', new RegExp(`^${TIME} 127\\.0\\.0\\.1 meier GET /meier/api/v1/buchungen 200 `, 'm'));
  // mueller is none of instance B's users: a name B does not know may be a password typed as one.
  assert.match(logB ?? '', new RegExp(`^${TIME} 127\\.0\\.0\\.1 :unknown GET /meier/api/v1/status 401 `, 'm'));
  assert.doesNotMatch(logB ?? '', /\/mueller\/|\/schmidt\/|\/weber\//);
  const errors = readFileSync(join(dir, 'error.log'), 'utf8');
  assert.doesNotMatch(errors, /buffered to a temporary file/);
  const nginxLog = readFileSync(join(dir, 'booking-books.access.log'), 'utf8');
  assert.match(
    nginxLog,
    new RegExp(`"GET /meier/api/v1/buchungen HTTP/[\\d.]+" 200 \\d+ [\\d.]+ 127\\.0\\.0\\.1:${b}`),
  );
  assert.match(
    nginxLog,
    new RegExp(`"GET /mueller/api/v1/buchungen HTTP/[\\d.]+" 200 \\d+ [\\d.]+ 127\\.0\\.0\\.1:${a}`),
  );
  assert.doesNotMatch(nginxLog, /betrag|von=|\?|-geheim|mueller \[|meier \[/);
  assert.doesNotMatch(logB ?? '', /g-geheim/);
});
