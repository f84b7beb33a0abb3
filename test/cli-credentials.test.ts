// The CLI's credentials (docs/API.md, Credentials): hash-password, the credentials file,
// the environment, and SIGHUP, which re-reads the file and the TLS certificate and key.

import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { scryptSync } from 'node:crypto';
import { once } from 'node:events';
import { chmodSync, chownSync, lchownSync, mkdirSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import { Agent, request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { connect } from 'node:net';
import { join } from 'node:path';
import { test } from 'node:test';
import { assertFails, BIN, cleanEnv, makeCertificate, run, start, waitFor } from './support/cli-helpers.js';
import {
  basicAuth,
  buildDatabase,
  databaseDir,
  HASH_OF_ALT,
  HASH_OF_NEU,
  request,
  tempDir,
} from './support/helpers.js';
import { onTerminal } from './support/terminal.js';

/** Group `gid` as a refusal names it, as `check` does: `root (0)`, or `0` where it has no name. */
function groupNamed(gid: number): string {
  const name = spawnSync('getent', ['group', String(gid)], { encoding: 'utf8' }).stdout?.split(':')[0];
  return name ? `${name} (${gid})` : `${gid}`;
}

/** Runs `hash-password` with `input` on its standard input, Node given `nodeArgs`. */
async function hashPasswordOf(
  input: string,
  nodeArgs: string[] = [],
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [...nodeArgs, BIN, 'hash-password'], {
    stdio: ['pipe', 'pipe', 'pipe'],
    timeout: 30_000,
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  child.stdin.end(input);
  const [code] = (await once(child, 'close')) as [number | null];
  return { code, stdout, stderr };
}

test('a bug in a command (crypto.scrypt throwing) ends it with one line that says where, never a stack trace, exit code 1', async (t) => {
  const preload = join(tempDir(t), 'bug.mjs');
  writeFileSync(
    preload,
    `import crypto from 'node:crypto';
import { syncBuiltinESMExports } from 'node:module';
crypto.scrypt = () => { throw new TypeError('boom'); };
syncBuiltinESMExports();
`,
  );
  const result = await hashPasswordOf('geheim\n', ['--import', preload]);
  assert.equal(result.code, 1, result.stderr);
  assert.equal(result.stdout, '');
  assert.match(
    result.stderr,
    new RegExp(`^booking-search-server: unexpected error: TypeError: boom \\(at file://${preload}:3:\\d+\\)\\n$`),
  );
});

test('hash-password prints one scrypt PHC line that crypto.scrypt reproduces from the first line of stdin', async () => {
  const [lf, crlf, noNewline] = await Promise.all([
    hashPasswordOf('pass:wört €\nzweite Zeile\n'),
    hashPasswordOf('pass:wört €\r\n'),
    hashPasswordOf('pass:wört €'),
  ]);
  for (const result of [lf, crlf, noNewline]) {
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stderr, '');
    const match = /^\$scrypt\$ln=17,r=8,p=1\$([A-Za-z0-9+/]{22})\$([A-Za-z0-9+/]{43})\n$/.exec(result.stdout);
    assert.ok(match, result.stdout);
    const derived = scryptSync('pass:wört €', Buffer.from(match[1] as string, 'base64'), 32, {
      N: 2 ** 17,
      r: 8,
      p: 1,
      maxmem: 256 * 1024 * 1024,
    });
    assert.equal(derived.toString('base64').replace(/=+$/, ''), match[2]);
  }
  assert.notEqual(lf.stdout, noNewline.stdout, 'a fresh salt each time');
  const empty = await hashPasswordOf('\n');
  assertFails(
    { ...empty, signal: null },
    1,
    'booking-search-server: the password is empty; give one line on standard input',
    true,
  );
  // A space at either end is hashed with the password, said on stderr (a copy often adds one).
  const spaced = await hashPasswordOf('abc \n');
  assert.equal(spaced.code, 0, spaced.stderr);
  assert.equal(
    spaced.stderr,
    'booking-search-server: warning: the password begins or ends with a space or tab, hashed with it: a client must send it so\n',
  );
  const [, salt, hash] = /^\$scrypt\$ln=17,r=8,p=1\$([^$]+)\$([^$]+)\n$/.exec(spaced.stdout) ?? [];
  const derived = scryptSync('abc ', Buffer.from(salt ?? '', 'base64'), 32, { N: 2 ** 17, maxmem: 256 * 1024 * 1024 });
  assert.equal(derived.toString('base64').replace(/=+$/, ''), hash);
});

test('--credentials-file: several users, comments, empty lines, hashes and CRLF; each user gets in with its own secret', async (t) => {
  const file = join(tempDir(t), 'zugang');
  writeFileSync(
    file,
    ['# Abgleich-Clients', '', 'bank:pass:wört', '  # der Prüfer', `pruefer:${HASH_OF_ALT}\r`, 'dritter:drei', ''].join(
      '\n',
    ),
    { mode: 0o600 },
  );
  const server = await start(t, ['--db', buildDatabase(t), '--credentials-file', file], cleanEnv());
  const as = (user: string, password: string) =>
    request(`${server.api}status`, { headers: { authorization: basicAuth(user, password) } });
  const replies = await Promise.all([
    as('bank', 'pass:wört'),
    as('pruefer', 'alt'),
    as('dritter', 'drei'),
    as('bank', 'drei'),
  ]);
  assert.deepEqual(
    replies.map((reply) => reply.status),
    [200, 200, 200, 401],
  );
});

test('--credentials-file saved by Notepad as UTF-8 with BOM and CRLF: its first user gets in', async (t) => {
  const file = join(tempDir(t), 'zugang');
  writeFileSync(file, '\uFEFFbank:erstes-passwort\r\nzweiter:zweites\r\n', { mode: 0o600 });
  const server = await start(t, ['--db', buildDatabase(t), '--credentials-file', file], cleanEnv());
  const as = (user: string, password: string) =>
    request(`${server.api}status`, { headers: { authorization: basicAuth(user, password) } });
  const replies = await Promise.all([as('bank', 'erstes-passwort'), as('zweiter', 'zweites')]);
  assert.deepEqual(
    replies.map((reply) => reply.status),
    [200, 200],
  );
});

test('a credentials file that cannot be used names the line, never its content', async (t) => {
  const dir = tempDir(t);
  const cases: Array<[string, string]> = [
    ['# nur Kommentar\n\n', 'holds no credentials (one line user:secret each)'],
    ['bank:geheim1\nGEHEIMNIS-ohne-doppelpunkt\n', 'line 2: expected user:secret'],
    ['# x\n:GEHEIMNIS\n', 'line 2: the user is empty'],
    ['bank:\n', 'line 1: the secret is empty'],
    ['bank:GEHEIMNIS1\n\npruefer:x\nbank:GEHEIMNIS2\n', 'line 4: the user of line 1 is given again'],
    [`bank:${HASH_OF_ALT.slice(0, -3)}!!!\n`, 'line 1: the hash is not usable: not a scrypt hash of the form'],
    [
      'bank:$scrypt$ln=16,r=8,p=1$c2FsdHNhbHRzYWx0c2FsdA$aGFzaGhhc2hoYXNoaGFzaGhhc2hoYXNoaGFzaGhhc2g\n',
      'line 1: the hash is not usable: the parameters are weaker than N=2^17, r=8, p=1',
    ],
    // A line's user with a control character: a mistyped line's part of a password would be logged.
    ['bank\u0001GEHEIMNIS:geheim1\n', 'line 1: the user must not contain a control character'],
    [
      'bank:geheim1\npruefer:$2y$10$GEHEIMNISabcdefghijklmuH6mZ9rH9uJ3k8E1pY6v9gqXw0y3m2e\n',
      'line 2: the secret is a hash of type bcrypt, which this service cannot check; make a scrypt hash with booking-search-server hash-password',
    ],
    // One character short: a bad copy and paste, not a password.
    [
      'bc:$2y$10$GEHEIMNISabcdefghijklmuH6mZ9rH9uJ3k8E1pY6v9gqXw0y3m2\n',
      'line 1: the secret starts as a hash of type bcrypt but is cut short or damaged',
    ],
    // Shaped as a hash, any scheme, spaces around it aside: never taken for a password.
    [
      'bank:$y$j9T$F5Jx5fExrKuPp53xLKQ..1$X3DX6M94c7o.9agCG9G317fhZg9SqC.5i5rd.RhAtQ7\n',
      'line 1: the secret is a password hash of a kind this service cannot check ($y$); make a scrypt hash with booking-search-server hash-password',
    ],
    [
      'bank: $2y$10$GEHEIMNISabcdefghijklmuH6mZ9rH9uJ3k8E1pY6v9gqXw0y3m2e\n',
      'line 1: the secret is a hash of type bcrypt, which this service cannot check',
    ],
    [
      `bank: ${HASH_OF_ALT}\n`,
      'line 1: the secret is a scrypt hash with spaces around it, which would be taken for a password; remove the spaces',
    ],
    // In quotes, as a configuration file's values may be: not taken for a password either.
    ...[
      `'${HASH_OF_ALT}'`,
      `"${HASH_OF_ALT}"`,
      `'${HASH_OF_ALT}`,
      `"$2y$10$GEHEIMNISabcdefghijklmuH6mZ9rH9uJ3k8E1pY6v9gqXw0y3m2e"`,
    ].map((secret): [string, string] => [
      `bank:${secret}\n`,
      'line 1: the secret is a password hash in quotes, which would be taken for a password; remove the quotes',
    ]),
    // Spaces or a tab after it, as an editor leaves them: the same words, not "not a scrypt hash".
    ...[' ', ' \t', '\t'].map((after): [string, string] => [
      `bank:${HASH_OF_ALT}${after}\r\n`,
      'line 1: the secret is a scrypt hash with spaces around it, which would be taken for a password; remove the spaces',
    ]),
  ];
  await Promise.all(
    cases.map(async ([content, problem], i) => {
      const file = join(dir, `zugang${i}`);
      writeFileSync(file, content);
      const result = await run(['--demo', '--credentials-file', file], cleanEnv());
      assertFails(
        result,
        1,
        new RegExp(`^booking-search-server: credentials file ${file}(, | )${escapeRegExp(problem)}`),
      );
      assert.doesNotMatch(result.stderr, /GEHEIMNIS|FDRD|c2Fsd/);
    }),
  );
});

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

// Its header, 4,676 characters, is longer than the login reads: it started, and never got in.
test('a user and password too long for their Basic header: the start and check --config refuse the line, saying the bound', async (t) => {
  const dir = tempDir(t);
  const file = join(dir, 'zugang');
  writeFileSync(file, `bank:geheim1\nlong:${'x'.repeat(3500)}\n`, { mode: 0o600 });
  const problem = `credentials file ${file}, line 2: the user and password together are too long: at most 3065 bytes of UTF-8`;
  assertFails(await run(['--demo', '--credentials-file', file], cleanEnv()), 1, `booking-search-server: ${problem}`);
  const config = join(dir, 'books.conf');
  const book = `[book kasse]\ndb = ${buildDatabase(t)}\nbase-path = /kasse\nusers = bank\n`;
  writeFileSync(config, `credentials-file = ${file}\n${book}`, { mode: 0o600 });
  const checked = await run(['check', '--config', config], cleanEnv());
  assert.equal(checked.code, 1, checked.stdout + checked.stderr);
  assert.ok(checked.stdout.includes(`\nCredentials: given but wrong (${problem});`), checked.stdout);
});

test('BOOKING_SEARCH_PASSWORD may hold a hash; an empty environment variable counts as not set', async (t) => {
  const server = await start(
    t,
    ['--demo'],
    cleanEnv({ BOOKING_SEARCH_USER: 'kasse', BOOKING_SEARCH_PASSWORD: HASH_OF_ALT }),
  );
  assert.equal(
    (await request(`${server.api}status`, { headers: { authorization: basicAuth('kasse', 'alt') } })).status,
    200,
  );
  assert.equal(
    (await request(`${server.api}status`, { headers: { authorization: basicAuth('kasse', HASH_OF_ALT) } })).status,
    401,
    'the hash itself is not a password',
  );
  // The demo's curl hint must not send the hash as the password.
  assert.match(server.output().stdout, /Try: curl -u "\$BOOKING_SEARCH_USER:PASSWORD" '/);

  const file = join(tempDir(t), 'zugang');
  writeFileSync(file, 'bank:eins\n');
  const empty = cleanEnv({ BOOKING_SEARCH_USER: '', BOOKING_SEARCH_PASSWORD: '' });
  const fromFile = await start(t, ['--demo', '--credentials-file', file], empty);
  assert.equal(
    (await request(`${fromFile.api}status`, { headers: { authorization: basicAuth('bank', 'eins') } })).status,
    200,
  );
  assertFails(
    await run(['--db', buildDatabase(t)], empty),
    1,
    'booking-search-server: no credentials: set BOOKING_SEARCH_USER and BOOKING_SEARCH_PASSWORD, or pass --credentials-file FILE',
  );
});

/** A request on `agent` (keep-alive); also gives the local port of the connection it used. */
function viaAgent(
  agent: Agent,
  url: string,
  authorization: string,
): Promise<{ status: number; port: number | undefined }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { agent, headers: { authorization } }, (res) => {
      const port = res.socket.localPort;
      res.resume().on('end', () => resolve({ status: res.statusCode ?? 0, port }));
    });
    req.on('error', reject).end();
  });
}

function requestFrom(localAddress: string, url: string, authorization: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { agent: false, localAddress, headers: { authorization } }, (res) => {
      res.resume().on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject).end();
  });
}

test('200 parallel first logins against a hashed password: every request gets an answer (401, 429 busy, 503 busy_timeout with Retry-After) before --send-timeout could close it, even with --request-timeout 600; none is cut off', async (t) => {
  const server = await start(
    t,
    [
      '--demo',
      '--send-timeout',
      '3',
      '--request-timeout',
      '600',
      '--max-auth-failures',
      '0',
      '--max-user-failures',
      '0',
      '--max-global-failures',
      '0',
    ],
    cleanEnv({ BOOKING_SEARCH_USER: 'kasse', BOOKING_SEARCH_PASSWORD: HASH_OF_ALT }),
  );
  const url = new URL(`${server.api}status`);
  const answers = await Promise.all(
    Array.from(
      { length: 200 },
      (_, i) =>
        new Promise<{ answer: string; ms: number }>((resolve) => {
          const socket = connect(Number(url.port), url.hostname);
          let sent = Date.now();
          let text = '';
          socket.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
          socket.once('error', () => undefined);
          socket.once('close', () => {
            const status = text.slice(9, 12);
            const code = /"code":"(\w+)"/.exec(text)?.[1];
            const retryAfter = /^retry-after: (\d+)\r$/im.exec(text)?.[1];
            resolve({
              answer:
                text === ''
                  ? 'no answer'
                  : `${status} ${code}${retryAfter === undefined ? '' : ` retry-after ${retryAfter}`}`,
              ms: Date.now() - sent,
            });
          });
          socket.write(
            `GET ${url.pathname} HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: ${basicAuth('kasse', `falsch${i}`)}\r\nConnection: close\r\n\r\n`,
            () => (sent = Date.now()),
          );
        }),
    ),
  );
  const counts = new Map<string, number>();
  for (const { answer } of answers) counts.set(answer, (counts.get(answer) ?? 0) + 1);
  t.diagnostic(JSON.stringify(Object.fromEntries(counts)));
  assert.deepEqual(
    [...counts.keys()].filter(
      (answer) => !['401 unauthorized', '429 busy retry-after 1', '503 busy_timeout retry-after 1'].includes(answer),
    ),
    [],
    'nothing but the three answers; no connection closed without one',
  );
  assert.ok((counts.get('503 busy_timeout retry-after 1') ?? 0) > 0, 'the waiting ones were answered');
  const latest = Math.max(...answers.map(({ ms }) => ms));
  // What proves it is above: the send timeout closes a connection without an answer, and none
  // was. The answers came at the deadline, a few tenths before it (plus however long a
  // loaded machine took to read a request).
  assert.ok(latest < 4_000, `every answer about the send timeout after its request: the slowest after ${latest} ms`);
});

test('SIGHUP re-reads the credentials file: old secret out, new in, the keep-alive connection and the throttle table stay; a bad file keeps the old credentials', async (t) => {
  const file = join(tempDir(t), 'zugang');
  writeFileSync(file, 'bank:alt\npruefer:zwei\n', { mode: 0o600 });
  // The keep-alive connection idles through two reloads and other clients' requests: on a
  // busy machine longer than the default keep-alive timeout (5 s), which is not what is tested.
  const server = await start(
    t,
    ['--db', buildDatabase(t), '--credentials-file', file, '--max-auth-failures', '2', '--keep-alive-timeout', '60'],
    cleanEnv(),
  );
  const status = `${server.api}status`;
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  t.after(() => agent.destroy());
  const before = await viaAgent(agent, status, basicAuth('bank', 'alt'));
  assert.equal(before.status, 200);
  assert.equal(await requestFrom('127.0.0.2', status, basicAuth('pruefer', 'falsch')), 401);

  writeFileSync(file, `# rotated\nbank:${HASH_OF_NEU}\npruefer:zwei\n`);
  server.child.kill('SIGHUP');
  await waitFor(() => server.output().stderr, /SIGHUP: credentials re-read from .*: 2 user\(s\)/);
  assert.deepEqual(await viaAgent(agent, status, basicAuth('bank', 'alt')), { status: 401, port: before.port });
  assert.deepEqual(await viaAgent(agent, status, basicAuth('bank', 'neu')), { status: 200, port: before.port });

  // The second failure of 127.0.0.2 is its second within the window: the table survived.
  assert.equal(await requestFrom('127.0.0.2', status, basicAuth('pruefer', 'falsch')), 401);
  assert.equal(await requestFrom('127.0.0.2', status, basicAuth('pruefer', 'zwei')), 429);

  writeFileSync(file, 'bank:neu\nGEHEIMNIS-ohne-doppelpunkt\n');
  server.child.kill('SIGHUP');
  await waitFor(() => server.output().stderr, /keeping the old credentials/);
  assert.match(
    server.output().stderr,
    /SIGHUP: keeping the old credentials: credentials file .*, line 2: expected user:secret\n/,
  );
  assert.doesNotMatch(server.output().stderr, /GEHEIMNIS|neu\b/);
  assert.deepEqual(await viaAgent(agent, status, basicAuth('bank', 'neu')), { status: 200, port: before.port });
  agent.destroy();
  const stopped = await server.stop();
  assert.equal(stopped.code, 0);
});

test('SIGHUP warns again about a credentials file every user can read, as the start does', async (t) => {
  const file = join(tempDir(t), 'zugang');
  writeFileSync(file, 'bank:alt\n', { mode: 0o600 });
  const server = await start(t, ['--db', buildDatabase(t), '--credentials-file', file], cleanEnv());
  chmodSync(file, 0o644);
  server.child.kill('SIGHUP');
  // The warning follows the re-read line in a write of its own: waited for, not looked for once.
  await waitFor(
    () => server.output().stderr,
    /SIGHUP: credentials re-read from .*\n(.*\n)*.*warning: credentials file .*zugang is readable by every user of this machine \(mode 644\); chmod o-rwx it\n/,
  );
  assert.equal((await server.stop()).code, 0);
});

// check said "Credentials: 1 user(s)" and nothing else while the service warned.
test('check --config warns about a credentials file every user can read, in the words of the service', async (t) => {
  const dir = tempDir(t);
  const file = join(dir, 'zugang');
  writeFileSync(file, 'bank:alt\n', { mode: 0o644 });
  chmodSync(file, 0o644);
  const config = join(dir, 'books.conf');
  writeFileSync(config, `[book kasse]\ndb = ${buildDatabase(t)}\nbase-path = /kasse\nusers = bank\n`, { mode: 0o600 });
  const checked = await run(['check', '--config', config, '--credentials-file', file], cleanEnv());
  assert.equal(checked.code, 0, checked.stdout + checked.stderr);
  assert.ok(
    checked.stdout.includes(
      `\nCredentials: 1 user(s); the users of the books are checked against them.\nwarning: credentials file ${file} is readable by every user of this machine (mode 644); chmod o-rwx it\n`,
    ),
    checked.stdout,
  );
  chmodSync(file, 0o600);
  const quiet = await run(['check', '--config', config, '--credentials-file', file], cleanEnv());
  assert.doesNotMatch(quiet.stdout, /readable by every user/);
});

test('SIGHUP reaches the stand-in that answers while the database is gone: before and after the file goes, only the new secret gets in', async (t) => {
  const dir = databaseDir(t);
  const file = join(dir, 'zugang');
  const db = join(dir, 'kasse.sqlite');
  renameSync(buildDatabase(t), db);
  writeFileSync(file, 'bank:alt\n', { mode: 0o600 });
  const server = await start(t, ['--db', db, '--credentials-file', file], cleanEnv());
  const status = `${server.api}status`;
  const answers = async (): Promise<[number, number]> => [
    (await request(status, { headers: { authorization: basicAuth('bank', 'alt') } })).status,
    (await request(status, { headers: { authorization: basicAuth('bank', 'neu') } })).status,
  ];

  // Renewed while the file is served, then the file goes: the stand-in answers /status.
  writeFileSync(file, 'bank:neu\n');
  server.child.kill('SIGHUP');
  await waitFor(() => server.output().stderr, /SIGHUP: credentials re-read/);
  assert.deepEqual(await answers(), [401, 200]);
  renameSync(db, `${db}.weg`);
  await waitFor(() => server.output().stderr, /is gone; searches answer 500/);
  assert.deepEqual(await answers(), [401, 200], 'the stand-in kept the credentials of the start');

  // Renewed while the file is gone, then it is back.
  writeFileSync(file, 'bank:alt\n');
  server.child.kill('SIGHUP');
  await waitFor(() => server.output().stderr, /SIGHUP: credentials re-read/, 2);
  assert.deepEqual(await answers(), [200, 401]);
  renameSync(`${db}.weg`, db);
  await waitFor(() => server.output().stderr, /serving the new file|can be read now/);
  assert.deepEqual(await answers(), [200, 401]);
  assert.equal((await server.stop()).code, 0);
});

test('SIGHUP with credentials from the environment says there is nothing to re-read, and keeps serving', async (t) => {
  const server = await start(
    t,
    ['--demo'],
    cleanEnv({ BOOKING_SEARCH_USER: 'kasse', BOOKING_SEARCH_PASSWORD: 'ge:heim' }),
  );
  server.child.kill('SIGHUP');
  await waitFor(() => server.output().stderr, /SIGHUP: credentials come from the environment; nothing to re-read/);
  assert.equal(
    (await request(`${server.api}status`, { headers: { authorization: basicAuth('kasse', 'ge:heim') } })).status,
    200,
  );
});

/** The subject CN of the certificate a new connection is served. */
function servedName(url: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(url, { agent: false, rejectUnauthorized: false }, (res) => {
      const cn = (res.socket as import('node:tls').TLSSocket).getPeerCertificate().subject?.CN;
      res.resume().on('end', () => resolve(String(cn)));
    });
    req.on('error', reject).end();
  });
}

test('SIGHUP serves a renewed TLS certificate to new connections; an unusable one keeps the old', async (t) => {
  const dir = tempDir(t);
  const cert = join(dir, 'cert.pem');
  const key = join(dir, 'key.pem');
  makeCertificate(cert, key, 'erstes');
  const server = await start(t, ['--demo', '--tls-cert', cert, '--tls-key', key]);
  const status = `${server.api}status`;
  assert.equal(await servedName(status), 'erstes');

  makeCertificate(cert, key, 'erneuert');
  server.child.kill('SIGHUP');
  await waitFor(() => server.output().stderr, /SIGHUP: TLS certificate and key re-read/);
  assert.equal(await servedName(status), 'erneuert');

  writeFileSync(key, 'kein Schlüssel\n');
  server.child.kill('SIGHUP');
  // Which file and what it must be, not OpenSSL's `Error: error:1E08010C:DECODER routines::unsupported`.
  await waitFor(
    () => server.output().stderr,
    new RegExp(
      `SIGHUP: keeping the old TLS certificate: --tls-key ${key.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is not a usable private key: give the private key as a PEM file`,
    ),
  );
  assert.doesNotMatch(server.output().stderr, /routines::/);
  assert.equal(await servedName(status), 'erneuert');
  assert.equal(server.child.exitCode, null);
});

test('--workers 2: the primary passes SIGHUP on, and every worker takes the new credentials', async (t) => {
  const file = join(tempDir(t), 'zugang');
  writeFileSync(file, 'bank:alt\n');
  const server = await start(t, ['--db', buildDatabase(t), '--workers', '2', '--credentials-file', file], cleanEnv());
  writeFileSync(file, 'bank:neu\n');
  server.child.kill('SIGHUP');
  // Said once, by the primary, when both workers have taken them.
  await waitFor(() => server.output().stderr, /SIGHUP: credentials re-read/);
  // New connections are dealt to the workers in turn: six of them reach both.
  for (let i = 0; i < 6; i += 1) {
    assert.equal(
      (await request(`${server.api}status`, { headers: { authorization: basicAuth('bank', 'neu') } })).status,
      200,
    );
    assert.equal(
      (await request(`${server.api}status`, { headers: { authorization: basicAuth('bank', 'alt') } })).status,
      401,
    );
  }
  assert.equal(server.child.exitCode, null);
});

/** The status lines of the answers to `count` requests with `authorization`, pipelined on one connection to `api`. */
async function pipelined(api: string, authorization: string, count: number): Promise<string[]> {
  const url = new URL(`${api}status`);
  const socket = connect(Number(url.port), url.hostname);
  let text = '';
  const statuses = (): string[] => [...text.matchAll(/HTTP\/1\.1 (\d{3})/g)].map((match) => match[1] as string);
  const done = new Promise<string[]>((resolve) => {
    socket.setEncoding('utf8').on('data', (chunk: string) => {
      text += chunk;
      if (statuses().length >= count) socket.end();
    });
    socket.once('close', () => resolve(statuses()));
  });
  const request = `GET ${url.pathname} HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: ${authorization}\r\n\r\n`;
  socket.write(request.repeat(count));
  return done;
}

test('--workers 2, a hashed password: a client whose first requests come in parallel gets in with all of them (from the 11th: 429 login_throttled)', async (t) => {
  const file = join(tempDir(t), 'zugang');
  writeFileSync(file, `kasse:${HASH_OF_ALT}\n`);
  const server = await start(t, ['--db', buildDatabase(t), '--workers', '2', '--credentials-file', file], cleanEnv());
  const right = basicAuth('kasse', 'alt');
  // One connection, twelve pipelined requests: one worker, one check.
  assert.deepEqual(await pipelined(server.api, right, 12), Array(12).fill('200'));
  // Sixteen connections from a client the service has forgotten (the credentials changed):
  // both workers check once.
  writeFileSync(file, `kasse:${HASH_OF_ALT}\nneu:${HASH_OF_NEU}\n`);
  server.child.kill('SIGHUP');
  // Said once, by the primary, when both workers have taken them.
  await waitFor(() => server.output().stderr, /SIGHUP: credentials re-read/);
  const parallel = await Promise.all(
    Array.from({ length: 16 }, () => request(`${server.api}status`, { headers: { authorization: right } })),
  );
  assert.deepEqual(
    parallel.map((answer) => answer.status),
    Array(16).fill(200),
  );
});

// On a terminal (a pseudo-terminal, test/support/terminal.ts): two prompts, no echo.
function hashOnTerminal(...answers: string[]): { status: number | null; output: string } {
  const result = onTerminal([process.execPath, BIN, 'hash-password'], answers, { timeout: 90_000 });
  assert.equal(result.error, undefined, 'python3 runs (it provides the pseudo-terminal)');
  return { status: result.status, output: result.stdout };
}

test('hash-password on a terminal asks twice without echo, and refuses two different answers, and an empty one before asking again', () => {
  const same = hashOnTerminal('Ge:heim 1', 'Ge:heim 1');
  assert.equal(same.status, 0, same.output);
  assert.match(
    same.output,
    /^Password: \r\nRepeat password: \r\n\$scrypt\$ln=17,r=8,p=1\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}\r\n$/,
  );
  const [salt, hash] = same.output.trim().split('$').slice(3) as [string, string];
  const derived = scryptSync('Ge:heim 1', Buffer.from(salt, 'base64'), 32, {
    N: 2 ** 17,
    r: 8,
    p: 1,
    maxmem: 256 * 1024 * 1024,
  });
  assert.equal(derived.toString('base64').replace(/=+$/, ''), hash);

  const different = hashOnTerminal('Ge:heim 1', 'Ge:heim 2');
  assert.equal(different.status, 1);
  assert.doesNotMatch(different.output, /Ge:heim|\$scrypt\$/);
  assert.match(different.output, /booking-search-server: the two passwords differ; nothing printed\r\n$/);

  const empty = hashOnTerminal('');
  assert.equal(empty.status, 1, empty.output);
  assert.equal(empty.output, 'Password: \r\nbooking-search-server: the password is empty; nothing printed\r\n');
});

test('a credentials file that another user could change is refused with one line: writable by others or a group, owned by another user, in a directory others can write, or behind a symlink to one', async (t) => {
  assert.equal(process.getuid?.(), 0, 'needs root to give files to another user (CI runs as root)');
  const nobody = Number(spawnSync('id', ['-u', 'nobody'], { encoding: 'utf8' }).stdout.trim());
  const dir = tempDir(t);
  chmodSync(dir, 0o755);
  const file = join(dir, 'zugang');
  writeFileSync(file, 'bank:geheim\n', { mode: 0o600 });
  const refused = async (path: string, line: string): Promise<void> =>
    assertFails(await run(['--demo', '--credentials-file', path], cleanEnv()), 1, `booking-search-server: ${line}`);

  chmodSync(file, 0o602);
  await refused(file, `refusing credentials file ${file}: it is writable by every user (mode 602); chmod go-w it`);
  chmodSync(file, 0o660);
  await refused(
    file,
    `refusing credentials file ${file}: it is writable by group ${groupNamed(0)} (mode 660); chmod go-w it`,
  );
  chmodSync(file, 0o600);
  chownSync(file, nobody, 0);
  await refused(
    file,
    `refusing credentials file ${file}: it is owned by another user (uid ${nobody}) (mode 600); chown it to root or the service's user`,
  );
  chownSync(file, 0, 0);

  const open = join(dir, 'offen');
  mkdirSync(open);
  chmodSync(open, 0o777);
  const inOpen = join(open, 'zugang');
  writeFileSync(inOpen, 'bank:geheim\n', { mode: 0o600 });
  const openLine = `directory ${open} is writable by every user (mode 777), so another user could replace the file; use a directory only root or the service's user can write`;
  await refused(inOpen, `refusing credentials file ${inOpen}: ${openLine}`);
  const link = join(dir, 'verweis');
  symlinkSync(inOpen, link);
  await refused(link, `refusing credentials file ${link}: ${openLine}`);
  const toWritable = join(dir, 'verweis-2');
  symlinkSync(file, toWritable);
  chmodSync(file, 0o602);
  await refused(
    toWritable,
    `refusing credentials file ${toWritable}: ${file} is writable by every user (mode 602); chmod go-w it`,
  );

  // A sticky directory (/tmp) is fine: nobody else can rename or remove the file in it.
  chmodSync(open, 0o1777);
  const server = await start(t, ['--demo', '--credentials-file', inOpen], cleanEnv());
  assert.equal(server.output().stderr, '');
  // SIGHUP: a file made writable by others is not taken; the old credentials stay.
  chmodSync(inOpen, 0o666);
  server.child.kill('SIGHUP');
  await waitFor(
    () => server.output().stderr,
    /SIGHUP: keeping the old credentials: refusing credentials file .*: it is writable by every user \(mode 666\); chmod go-w it/,
  );
  assert.equal(
    (await request(`${server.api}status`, { headers: { authorization: basicAuth('bank', 'geheim') } })).status,
    200,
  );
});

test("a credentials file or TLS key reached through another user's symlink in a sticky directory is refused at the start; root's own symlink there is taken", async (t) => {
  assert.equal(process.getuid?.(), 0, 'needs root to give a symlink to another user (CI runs as root)');
  const nobody = Number(spawnSync('id', ['-u', 'nobody'], { encoding: 'utf8' }).stdout.trim());
  const dir = tempDir(t);
  chmodSync(dir, 0o755);
  const own = join(dir, 'cred');
  mkdirSync(own, { mode: 0o755 });
  const good = join(own, 'good');
  writeFileSync(good, 'bank:geheim\n', { mode: 0o600 });
  const sticky = join(dir, 'st');
  mkdirSync(sticky);
  chmodSync(sticky, 0o1777);
  // Another user's symlink in a sticky directory is theirs to point elsewhere at any time
  // (at /etc/passwd, whose lines read as user:password, before the next SIGHUP).
  const link = join(sticky, 'credlink');
  symlinkSync(good, link);
  lchownSync(link, nobody, 0);
  const refusal = (what: string, symlink: string): string =>
    `booking-search-server: refusing ${what}: symlink ${symlink} is owned by another user (uid ${nobody}), who could point it elsewhere; give the path without it, or a symlink owned by root or the service's user`;
  assertFails(
    await run(['--demo', '--credentials-file', link], cleanEnv()),
    1,
    refusal(`credentials file ${link}`, link),
  );
  // The same for a symlink to a directory on the way.
  const dirlink = join(sticky, 'dirlink');
  symlinkSync(own, dirlink);
  lchownSync(dirlink, nobody, 0);
  const through = join(dirlink, 'good');
  assertFails(
    await run(['--demo', '--credentials-file', through], cleanEnv()),
    1,
    refusal(`credentials file ${through}`, dirlink),
  );
  const cert = join(own, 'cert.pem');
  const key = join(own, 'key.pem');
  makeCertificate(cert, key);
  chmodSync(key, 0o600);
  assertFails(
    await run(['--demo', '--tls-cert', cert, '--tls-key', join(dirlink, 'key.pem')]),
    1,
    refusal(`--tls-key ${join(dirlink, 'key.pem')}`, dirlink),
  );

  lchownSync(link, 0, 0);
  const server = await start(t, ['--demo', '--credentials-file', link], cleanEnv());
  assert.equal(
    (await request(`${server.api}status`, { headers: { authorization: basicAuth('bank', 'geheim') } })).status,
    200,
  );
});

test('a TLS key readable by every user is served with a warning; a TLS key or certificate writable by others is refused', async (t) => {
  const dir = tempDir(t);
  const cert = join(dir, 'cert.pem');
  const key = join(dir, 'key.pem');
  makeCertificate(cert, key);
  chmodSync(key, 0o644);
  const server = await start(t, ['--demo', '--tls-cert', cert, '--tls-key', key]);
  assert.match(
    server.output().stderr,
    new RegExp(
      `^\\S+ warning: TLS key ${key} is readable by every user of this machine \\(mode 644\\); chmod o-rwx it\\n$`,
    ),
  );
  await server.stop();
  chmodSync(key, 0o602);
  assertFails(
    await run(['--demo', '--tls-cert', cert, '--tls-key', key]),
    1,
    `booking-search-server: refusing --tls-key ${key}: it is writable by every user (mode 602); chmod go-w it`,
  );
  chmodSync(key, 0o600);
  chmodSync(cert, 0o664);
  assertFails(
    await run(['--demo', '--tls-cert', cert, '--tls-key', key]),
    1,
    `booking-search-server: refusing --tls-cert ${cert}: it is writable by group ${groupNamed(0)} (mode 664); chmod go-w it`,
  );
});

// A UTF-16 file read as UTF-8 was one line of NUL-spaced text: "1 user(s)", then every
// login 401 and no word in the log; a Windows-1252 "ü" became U+FFFD in a path or a secret.
test('credentials and configuration saved by Windows as UTF-16 or Windows-1252: one line naming the file and the encoding, at the start, at check and at SIGHUP (which keeps the old)', async (t) => {
  const dir = tempDir(t);
  const db = buildDatabase(t);
  const write = (name: string, bytes: Buffer): string => {
    const file = join(dir, name);
    writeFileSync(file, bytes, { mode: 0o600 });
    return file;
  };
  const utf16 = `is UTF-16 (Notepad's "Unicode", PowerShell 5's >): save it as UTF-8`;
  // PowerShell 5.1's > and Notepad's "Unicode": UTF-16 LE with a BOM, with or without a last line end.
  const cred16 = write('cred16.txt', Buffer.from('\uFEFFabgleich:plain-pw', 'utf16le'));
  const credAnsi = write('ansi.txt', Buffer.concat([Buffer.from('abgleich:Gr'), Buffer.from([0xfc, 0xdf, 0x65])]));
  const prefix = 'booking-search-server: credentials file';
  assertFails(
    await run(['--db', db, '--port', '0', '--credentials-file', cred16], cleanEnv()),
    1,
    `${prefix} ${cred16} ${utf16}`,
  );
  assertFails(
    await run(['--db', db, '--port', '0', '--credentials-file', credAnsi], cleanEnv()),
    1,
    `${prefix} ${credAnsi} is not UTF-8 (line 1): save it as UTF-8`,
  );
  const conf16 = write(
    'a16.conf',
    Buffer.from(`\uFEFF[book kasse]\r\ndb = ${db}\r\nbase-path = /kasse\r\n`, 'utf16le'),
  );
  const checked = await run(['check', '--config', conf16, '--credentials-file', cred16], cleanEnv());
  assert.equal(checked.code, 1);
  assert.equal(checked.stderr, `booking-search-server: configuration file ${conf16} ${utf16}\n`);
  const confAnsi = write('ansi.conf', Buffer.from('[book kasse]\r\ndb = /srv/M\u00fcller/kasse.sqlite\r\n', 'latin1'));
  const good = write('good.conf', Buffer.from(`\uFEFFcredentials-file = ${cred16}\r\n[book kasse]\r\ndb = ${db}\r\n`));
  const checkedCredentials = await run(['check', '--config', good], cleanEnv());
  assert.equal(checkedCredentials.code, 1);
  assert.ok(checkedCredentials.stdout.includes(`credentials file ${cred16} ${utf16}`), checkedCredentials.stdout);
  const ansiChecked = await run(['check', '--config', confAnsi], cleanEnv());
  assert.equal(
    ansiChecked.stderr,
    `booking-search-server: configuration file ${confAnsi} is not UTF-8 (line 2): save it as UTF-8\n`,
  );

  const file = write('zugang', Buffer.from('\uFEFFabgleich:alt\r\n'));
  const office = write(
    'office.conf',
    Buffer.from(`credentials-file = zugang\n[book kasse]\ndb = ${db}\nbase-path = /kasse\n`),
  );
  const server = await start(t, ['--config', office], cleanEnv());
  const status = async (): Promise<number> =>
    (
      await request(`${server.origin}/kasse/api/v1/status`, {
        headers: { authorization: basicAuth('abgleich', 'alt') },
      })
    ).status;
  writeFileSync(file, Buffer.from('\uFEFFabgleich:neu\r\n', 'utf16le'));
  server.child.kill('SIGHUP');
  await waitFor(() => server.output().stderr, /keeping the running configuration/);
  assert.ok(
    server.output().stderr.includes(`SIGHUP: keeping the running configuration: credentials file ${file} ${utf16}\n`),
  );
  assert.equal(await status(), 200);
  writeFileSync(file, Buffer.from('\uFEFFabgleich:alt\r\n'));
  writeFileSync(office, Buffer.from(`\uFEFF[book kasse]\r\ndb = ${db}\r\nbase-path = /kasse\r\n`, 'utf16le'));
  server.child.kill('SIGHUP');
  await waitFor(() => server.output().stderr, /keeping the running configuration/, 2);
  assert.ok(
    server
      .output()
      .stderr.includes(`SIGHUP: keeping the running configuration: configuration file ${office} ${utf16}\n`),
  );
  assert.equal(await status(), 200);
  assert.equal((await server.stop()).code, 0);
});
