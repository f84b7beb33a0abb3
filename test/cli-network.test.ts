// The CLI on the network: slow clients are cut off, TLS serves HTTPS, and plain HTTP on a
// non-loopback address is warned about.

import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { chmodSync, readdirSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { test } from 'node:test';
import { isLoopback } from '../bin/listen/listen.js';
import { cashBook } from './support/cash-book.js';
import { assertFails, makeCertificate, run, start, waitFor } from './support/cli-helpers.js';
import { AUTH, assertReply, buildDatabase, databaseDir, get, statusAnswer, tempDir } from './support/helpers.js';

test('50 slowloris connections are cut off after --headers-timeout while normal requests are answered promptly', async (t) => {
  const server = await start(t, ['--db', buildDatabase(t), '--headers-timeout', '2', '--request-timeout', '3']);
  const port = Number(new URL(server.api).port);
  const sockets: Socket[] = [];
  const closedAt: number[] = [];
  const opened = Date.now();
  for (let i = 0; i < 50; i += 1) {
    const socket = connect(port, '127.0.0.1');
    socket.on('error', () => undefined);
    socket.on('close', () => closedAt.push(Date.now() - opened));
    // Reads what comes (the 408): the close is seen when the server closes, not at the next drip.
    socket.resume();
    socket.write('GET /api/v1/status HTTP/1.1\r\nHost: x\r\n');
    sockets.push(socket);
  }
  // One more header byte a second from each, for at most 6 s.
  const drip = setInterval(() => {
    for (const socket of sockets) if (socket.writable) socket.write('X');
  }, 1_000);
  t.after(() => {
    clearInterval(drip);
    for (const socket of sockets) socket.destroy();
  });

  for (let i = 0; i < 10; i += 1) {
    const started = Date.now();
    assert.equal((await get(`${server.api}status`)).status, 200);
    assert.ok(Date.now() - started < 500, 'a normal request is answered promptly meanwhile');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const deadline = Date.now() + 6_000;
  while (closedAt.length < 50 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
  clearInterval(drip);
  assert.equal(closedAt.length, 50, 'every slow connection was closed by the server');
  // Within the timeout and the second between two checks (docs/settings.md), and the machine's slack.
  assert.ok(Math.max(...closedAt) < 3_500, `closed after at most ${Math.max(...closedAt)} ms`);
  assert.ok(Math.min(...closedAt) >= 1_500, 'not before the timeout');
});

/** The TCP sockets a process holds open (its listening socket among them). */
function openSockets(pid: number): number {
  let count = 0;
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      if (readlinkSync(`/proc/${pid}/fd/${fd}`).startsWith('socket:')) count += 1;
    } catch {
      // Closed while looking.
    }
  }
  return count;
}

test('a client that never reads its large answers is cut off after --send-timeout; others are served meanwhile', async (t) => {
  // The widest search on a 3,000-booking book: 1,000 bookings, about 100 KB an answer.
  const file = join(databaseDir(t), 'kasse.sqlite');
  const book = cashBook(3_000);
  writeFileSync(file, book.serialize());
  book.close();
  const server = await start(t, ['--db', file, '--send-timeout', '2', '--keep-alive-timeout', '1']);
  const pid = server.child.pid as number;
  const baseline = openSockets(pid);
  const settled = async (): Promise<void> => {
    const deadline = Date.now() + 5_000;
    while (openSockets(pid) > baseline && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 50));
  };
  const widest = `${server.api}buchungen?von=2000-01-01&bis=2099-12-31&betrag=0&toleranz=999999999999.99&limit=1000`;
  const answer = await get(widest);
  assert.equal(answer.status, 200);
  assert.ok(answer.body.length > 90_000, `${answer.body.length} bytes an answer`);
  await settled();
  assert.equal(openSockets(pid), baseline, 'the first client has gone');

  // 100 of them pipelined on one connection, and nothing read: far more than the kernel's
  // buffers hold, so the server's writes stall.
  const path = new URL(widest).pathname + new URL(widest).search;
  const reader = connect(Number(new URL(server.api).port), '127.0.0.1');
  reader.on('error', () => undefined);
  reader.pause();
  await once(reader, 'connect');
  reader.write(`GET ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: ${AUTH}\r\n\r\n`.repeat(100));
  const opened = Date.now();
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  assert.equal(openSockets(pid), baseline + 1, 'the stalled connection is open');
  assert.equal((await get(`${server.api}status`)).status, 200, 'another client is served meanwhile');
  while (openSockets(pid) > baseline && Date.now() - opened < 8_000)
    await new Promise((resolve) => setTimeout(resolve, 100));
  const closedAfter = Date.now() - opened;
  assert.equal(openSockets(pid), baseline, `the server closed the stalled connection (after ${closedAfter} ms)`);
  assert.ok(closedAfter >= 2_000 && closedAfter < 5_000, `closed after ${closedAfter} ms`);
  reader.destroy();
});

test('a client that reads nothing but keeps sending is cut off after --send-timeout all the same: what it sends does not restart it', async (t) => {
  const file = join(databaseDir(t), 'kasse.sqlite');
  const book = cashBook(3_000);
  writeFileSync(file, book.serialize());
  book.close();
  const server = await start(t, ['--db', file, '--send-timeout', '2']);
  const pid = server.child.pid as number;
  const baseline = openSockets(pid);
  const widest = new URL(
    `${server.api}buchungen?von=2000-01-01&bis=2099-12-31&betrag=0&toleranz=999999999999.99&limit=1000`,
  );
  const reader = connect(Number(widest.port), '127.0.0.1');
  reader.on('error', () => undefined);
  reader.pause();
  await once(reader, 'connect');
  reader.write(
    `GET ${widest.pathname}${widest.search} HTTP/1.1\r\nHost: x\r\nAuthorization: ${AUTH}\r\n\r\n`.repeat(60),
  );
  const opened = Date.now();
  // Then a request that never ends, a byte every 200 ms: node:http's socket timeout,
  // restarted by every read, never fired.
  reader.write('GET /api/v1/status HTTP/1.1\r\nHost: x\r\nX-Langsam: ');
  const trickle = setInterval(() => reader.write('a'), 200);
  t.after(() => clearInterval(trickle));
  while (openSockets(pid) === baseline && Date.now() - opened < 1_000)
    await new Promise((resolve) => setTimeout(resolve, 10));
  assert.equal(openSockets(pid), baseline + 1, 'the connection is open');
  while (openSockets(pid) > baseline && Date.now() - opened < 10_000)
    await new Promise((resolve) => setTimeout(resolve, 100));
  const closedAfter = Date.now() - opened;
  assert.equal(openSockets(pid), baseline, `the server closed the stalled connection (after ${closedAfter} ms)`);
  assert.ok(closedAfter >= 2_000 && closedAfter < 5_000, `closed after ${closedAfter} ms`);
  reader.destroy();
});

test('the timeout flags are checked', async () => {
  assertFails(
    await run(['--demo', '--headers-timeout', '0']),
    2,
    "booking-search-server: --headers-timeout must be a whole number from 1 to 3600, not '0' (see --help)",
  );
  assertFails(
    await run(['--demo', '--headers-timeout', '40', '--request-timeout', '30']),
    2,
    'booking-search-server: --headers-timeout must not be longer than --request-timeout (see --help)',
  );
});

test('--tls-cert and --tls-key serve HTTPS with the same handler', async (t) => {
  const dir = tempDir(t);
  const cert = join(dir, 'cert.pem');
  const key = join(dir, 'key.pem');
  makeCertificate(cert, key);
  const server = await start(t, ['--db', buildDatabase(t), '--tls-cert', cert, '--tls-key', key]);
  assert.match(server.api, /^https:\/\/127\.0\.0\.1:\d+\/api\/v1\/$/);
  const reply = await new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = httpsRequest(
      `${server.api}buchungen?von=2026-03-01&bis=2026-03-31&betrag=-12.5&limit=0`,
      { ca: readFileSync(cert), headers: { authorization: AUTH } },
      (res) => {
        let body = '';
        res
          .setEncoding('utf8')
          .on('data', (chunk: string) => (body += chunk))
          .on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('error', reject).end();
  });
  assert.deepEqual(reply, { status: 200, body: '{"anzahl":6,"buchungen":[]}' });
  await assert.rejects(
    get(`${server.api.replace('https:', 'http:')}status`),
    'plain HTTP gets no answer from the TLS port',
  );
  assert.equal(server.output().stderr, '');
});

/** What `openssl s_client` negotiates with `origin` given its flags: the suite, or `(NONE)`. */
function negotiated(port: string, flags: string[]): string {
  const result = spawnSync('openssl', ['s_client', '-connect', `127.0.0.1:${port}`, ...flags], {
    input: '',
    encoding: 'utf8',
    timeout: 10_000,
  });
  return /Cipher is (\S+)/.exec(result.stdout)?.[1] ?? `no handshake: ${result.stderr.split('\n')[0]}`;
}

test('TLS offers forward-secret AEAD suites only: static RSA and CBC are refused, ECDHE with GCM or ChaCha20 and TLS 1.3 accepted, also after SIGHUP', async (t) => {
  const dir = tempDir(t);
  const cert = join(dir, 'cert.pem');
  const key = join(dir, 'key.pem');
  makeCertificate(cert, key, '127.0.0.1', 'rsa');
  const server = await start(t, ['--demo', '--tls-cert', cert, '--tls-key', key]);
  const port = new URL(server.api).port;
  const check = (): void => {
    for (const refused of [
      'AES128-SHA',
      'AES256-SHA256',
      'AES128-GCM-SHA256',
      'ECDHE-RSA-AES128-SHA',
      'ECDHE-RSA-AES256-SHA384',
    ])
      assert.equal(negotiated(port, ['-tls1_2', '-cipher', refused]), '(NONE)', refused);
    for (const accepted of [
      'ECDHE-RSA-AES128-GCM-SHA256',
      'ECDHE-RSA-AES256-GCM-SHA384',
      'ECDHE-RSA-CHACHA20-POLY1305',
    ])
      assert.equal(negotiated(port, ['-tls1_2', '-cipher', accepted]), accepted);
    assert.equal(
      negotiated(port, ['-tls1_3', '-ciphersuites', 'TLS_CHACHA20_POLY1305_SHA256']),
      'TLS_CHACHA20_POLY1305_SHA256',
    );
    assert.equal(negotiated(port, ['-tls1_1', '-cipher', 'ALL:@SECLEVEL=0']), '(NONE)', 'TLS 1.1');
  };
  check();
  server.child.kill('SIGHUP');
  await waitFor(() => server.output().stderr, /SIGHUP: TLS certificate and key re-read/);
  check();
});

test('--tls-min-version 1.3 refuses TLS 1.2 and serves TLS 1.3; the flag needs TLS and 1.2 or 1.3', async (t) => {
  const dir = tempDir(t);
  const cert = join(dir, 'cert.pem');
  const key = join(dir, 'key.pem');
  makeCertificate(cert, key);
  const server = await start(t, ['--demo', '--tls-cert', cert, '--tls-key', key, '--tls-min-version', '1.3']);
  const port = new URL(server.api).port;
  assert.equal(negotiated(port, ['-tls1_2', '-cipher', 'ECDHE-ECDSA-AES128-GCM-SHA256']), '(NONE)');
  assert.equal(negotiated(port, ['-tls1_3']), 'TLS_AES_256_GCM_SHA384');
  assertFails(
    await run(['--demo', '--tls-min-version', '1.3']),
    2,
    'booking-search-server: --tls-min-version needs --tls-cert and --tls-key (see --help)',
  );
  assertFails(
    await run(['--demo', '--tls-cert', cert, '--tls-key', key, '--tls-min-version', '1.1']),
    2,
    "booking-search-server: --tls-min-version must be 1.2 or 1.3, not '1.1' (see --help)",
  );
});

test('TLS: connections that never finish the handshake are closed after --headers-timeout, and their descriptors given back', async (t) => {
  const dir = tempDir(t);
  const cert = join(dir, 'cert.pem');
  const key = join(dir, 'key.pem');
  makeCertificate(cert, key);
  const server = await start(t, ['--demo', '--tls-cert', cert, '--tls-key', key, '--headers-timeout', '3']);
  const port = Number(new URL(server.api).port);
  const descriptors = (): number => readdirSync(`/proc/${server.child.pid}/fd`).length;
  const before = descriptors();

  // 50 connections that send nothing, 50 that send half a ClientHello (a TLS record
  // header that announces 512 bytes, then one).
  const closedAt: number[] = [];
  const sockets: Socket[] = [];
  const opened = Date.now();
  for (let i = 0; i < 100; i += 1) {
    const socket = connect(port, '127.0.0.1');
    socket.on('error', () => undefined);
    socket.on('close', () => closedAt.push(Date.now() - opened));
    if (i % 2 === 1) socket.write(Buffer.from([0x16, 0x03, 0x01, 0x02, 0x00, 0x01]));
    sockets.push(socket);
  }
  t.after(() => {
    for (const socket of sockets) socket.destroy();
  });
  // Accepting 100 connections takes a moment on a busy machine: looked at until they are
  // all held, well within the timeout.
  const held = Date.now() + 2_500;
  while (descriptors() < before + 100 && Date.now() < held) await new Promise((resolve) => setTimeout(resolve, 25));
  assert.ok(
    descriptors() >= before + 100,
    `the server holds the stalled connections meanwhile (${descriptors() - before})`,
  );
  assert.equal(closedAt.length, 0, 'none closed before the timeout');
  const heldAt = Date.now() - opened;
  assert.equal((await httpsStatus(server.api, cert)).status, 200, 'a real client is served meanwhile');

  const deadline = Date.now() + 10_000;
  while (closedAt.length < 100 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
  assert.equal(closedAt.length, 100, 'every stalled handshake was closed by the server');
  // The timeout runs from each connection's accept: a second of lateness at most, once all are held.
  const last = Math.max(...closedAt);
  assert.ok(last < heldAt + 4_000, `closed after at most ${last} ms (all held after ${heldAt} ms)`);
  assert.ok(Math.min(...closedAt) >= 2_800, 'not before the timeout');
  const given = Date.now() + 2_000;
  while (descriptors() > before + 1 && Date.now() < given) await new Promise((resolve) => setTimeout(resolve, 25));
  assert.ok(descriptors() <= before + 1, `descriptors back to ${before} (now ${descriptors()})`);
  assert.equal((await httpsStatus(server.api, cert)).status, 200, 'and a real client is served after');
  assert.equal(server.output().stderr, '');
});

/** `GET {api}status` over HTTPS, trusting `cert`. */
function httpsStatus(api: string, cert: string): Promise<{ status: number }> {
  return new Promise((resolve, reject) => {
    httpsRequest(`${api}status`, { ca: readFileSync(cert), headers: { authorization: AUTH } }, (res) => {
      res.resume().on('end', () => resolve({ status: res.statusCode ?? 0 }));
    })
      .on('error', reject)
      .end();
  });
}

test('TLS flags: both or neither, readable files, a usable pair', async (t) => {
  const dir = tempDir(t);
  const cert = join(dir, 'cert.pem');
  assertFails(
    await run(['--demo', '--tls-cert', cert]),
    2,
    'booking-search-server: --tls-cert and --tls-key go together (see --help)',
  );
  assertFails(
    await run(['--demo', '--tls-cert', cert, '--tls-key', cert]),
    1,
    `booking-search-server: cannot read --tls-cert ${cert}: no such file`,
  );
  execFileSync('sh', ['-c', `echo nonsense > ${cert}`]);
  chmodSync(cert, 0o600);
  // Which file, in words, and what to give instead; not OpenSSL's DECODER error.
  assertFails(
    await run(['--demo', '--tls-cert', cert, '--tls-key', cert]),
    1,
    `booking-search-server: --tls-key ${cert} is not a usable private key: give the private key as a PEM file, the one that begins with -----BEGIN PRIVATE KEY----- (or RSA or EC PRIVATE KEY)`,
  );
  const key = join(dir, 'key.pem');
  const other = { cert: join(dir, 'other.pem'), key: join(dir, 'other-key.pem') };
  makeCertificate(cert, key);
  makeCertificate(other.cert, other.key);
  const encrypted = join(dir, 'encrypted-key.pem');
  execFileSync('openssl', ['pkey', '-in', key, '-aes256', '-passout', 'pass:geheim', '-out', encrypted]);
  const der = join(dir, 'cert.der');
  execFileSync('openssl', ['x509', '-in', cert, '-outform', 'DER', '-out', der]);
  const pairs: Array<[certificate: string, privateKey: string, line: string]> = [
    [
      cert,
      other.key,
      `--tls-key ${other.key} is not the key of the certificate in --tls-cert ${cert}: give the private key the certificate was issued for (after a renewal, the new key with the new certificate)`,
    ],
    [
      key,
      cert,
      `--tls-key ${cert} is not a usable private key: it holds a certificate, not a private key: are --tls-cert and --tls-key swapped? A private key's file begins with -----BEGIN PRIVATE KEY-----`,
    ],
    [
      cert,
      encrypted,
      `--tls-key ${encrypted} is not a usable private key: it is encrypted with a passphrase, which the service cannot type; give it unencrypted (openssl pkey -in FILE -out NEW), readable only by the service`,
    ],
    [
      der,
      key,
      `--tls-cert ${der} is not a usable certificate: give the certificate (with its chain, if any) as a PEM file, the one that begins with -----BEGIN CERTIFICATE-----`,
    ],
    [
      key,
      key,
      `--tls-cert ${key} is not a usable certificate: it holds a private key, not a certificate: are --tls-cert and --tls-key swapped? A certificate's file begins with -----BEGIN CERTIFICATE-----`,
    ],
  ];
  for (const [certificate, privateKey, line] of pairs) {
    assertFails(
      await run(['--demo', '--tls-cert', certificate, '--tls-key', privateKey]),
      1,
      `booking-search-server: ${line}`,
    );
  }
});

test('only loopback addresses count as safe for plain HTTP', () => {
  for (const host of ['127.0.0.1', '127.1.2.3', '::1', '0:0::1', '::ffff:127.0.0.1', 'localhost'])
    assert.equal(isLoopback(host), true, host);
  for (const host of [
    '0.0.0.0',
    '::',
    '::ffff:192.168.1.10',
    '192.168.1.10',
    'kasse.example',
    '128.0.0.1',
    'fe80::1%lo',
  ])
    assert.equal(isLoopback(host), false, host);
});

test('a status check over plain HTTP on loopback carries no warning', async (t) => {
  const server = await start(t, ['--db', buildDatabase(t)]);
  assertReply(await get(`${server.api}status`), 200, statusAnswer());
  assert.doesNotMatch((await server.stop()).stderr, /warning/);
});
