// Authentication and throttling over real HTTP (docs/API.md, Authentication).

import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, request as httpRequest, type IncomingMessage } from 'node:http';
import { type AddressInfo, connect } from 'node:net';
import { join } from 'node:path';
import { test } from 'node:test';
import { createHandler } from '../lib/index.js';
import { requestFacts } from '../lib/request.js';
import {
  AUTH,
  assertReply,
  basicAuth,
  CREDENTIALS,
  get,
  openFixture,
  type Reply,
  request,
  requestFrom,
  serveFixture,
  statusAnswer,
  tempDir,
} from './support/helpers.js';

const UNAUTHORIZED = { fehler: 'Anmeldung erforderlich.', code: 'unauthorized' };
const THROTTLED = {
  fehler: 'Zu viele fehlgeschlagene Anmeldeversuche. Bitte später erneut versuchen.',
  code: 'login_throttled',
};
const CHALLENGE = 'Basic realm="booking-search-server", charset="UTF-8"';

function assertUnauthorized(reply: Reply, challenge = CHALLENGE): void {
  assertReply(reply, 401, UNAUTHORIZED);
  assert.equal(reply.headers['www-authenticate'], challenge);
}

/** A request from another loopback address than 127.0.0.1. */
test('every request without credentials gets 401 before routing, validation or method checks', async (t) => {
  const origin = await serveFixture(t, { maxAuthFailures: 0 });
  const urls = [
    '/api/v1/status',
    '/api/v1/buchungen?von=2026-03-01&bis=2026-03-31&betrag=-12.5',
    '/api/v1/buchungen?unbekannt=%zz',
    '/api/v1/nirgends',
    '/',
  ];
  for (const path of urls) {
    assertUnauthorized(await request(`${origin}${path}`));
    assertUnauthorized(await request(`${origin}${path}`, { method: 'DELETE' }));
  }
  const head = await request(`${origin}/api/v1/status`, { method: 'HEAD' });
  assert.equal(head.status, 401);
  assert.equal(head.body, '');
});

test('wrong user, wrong password and malformed headers give byte-identical answers', async (t) => {
  const origin = await serveFixture(t, { maxAuthFailures: 0 });
  const url = `${origin}/api/v1/buchungen?von=2026-03-01&bis=2026-03-31&betrag=-12.5`;
  const headers = [
    basicAuth('falsch', CREDENTIALS.password),
    basicAuth(CREDENTIALS.username, 'falsch'),
    basicAuth('', ''),
    basicAuth(`${CREDENTIALS.username}:${CREDENTIALS.password}`, ''),
    `Bearer ${Buffer.from('kasse:ge:heim').toString('base64')}`,
    'Basic',
    'Basic ****',
  ];
  const replies = await Promise.all(headers.map((authorization) => request(url, { headers: { authorization } })));
  const comparable = (reply: Reply) => ({ ...reply, headers: { ...reply.headers, date: undefined } });
  for (const reply of replies) {
    assertUnauthorized(reply);
    assert.deepEqual(comparable(reply), comparable(replies[0] as Reply));
  }
});

test('the right credentials pass, with the scheme in any case and a password holding colons', async (t) => {
  const origin = await serveFixture(t);
  const token = Buffer.from(`${CREDENTIALS.username}:${CREDENTIALS.password}`).toString('base64');
  for (const scheme of ['Basic', 'basic', 'BASIC']) {
    assertReply(
      await request(`${origin}/api/v1/status`, { headers: { authorization: `${scheme} ${token}` } }),
      200,
      statusAnswer(),
    );
  }
});

test('the realm is the service name', async (t) => {
  const origin = await serveFixture(t, { serviceName: 'Kasse Nord' });
  assertUnauthorized(await request(`${origin}/api/v1/status`), 'Basic realm="Kasse Nord", charset="UTF-8"');
});

test('after 10 failures within 60 s an address gets 429 with Retry-After, even with the right credentials', async (t) => {
  let now = 5_000_000;
  const origin = await serveFixture(t, { now: () => now });
  const status = `${origin}/api/v1/status`;
  const wrong = { authorization: basicAuth('kasse', 'raten') };
  for (let i = 0; i < 10; i += 1) assertUnauthorized(await request(status, { headers: wrong }));

  const blocked = await get(status);
  assertReply(blocked, 429, THROTTLED);
  assert.equal(blocked.headers['retry-after'], '60');
  assert.equal(blocked.headers['www-authenticate'], undefined);
  now += 45_500;
  assert.equal((await request(status, { headers: wrong })).headers['retry-after'], '15');

  const elsewhere = await requestFrom('127.0.0.2', status, { authorization: AUTH });
  assertReply(elsewhere, 200, statusAnswer());

  now += 14_500;
  assertReply(await get(status), 200, statusAnswer());
});

test('X-Forwarded-For is ignored unless trustProxy is set', async (t) => {
  const origin = await serveFixture(t, { maxAuthFailures: 2 });
  const status = `${origin}/api/v1/status`;
  for (const forwarded of ['203.0.113.1', '203.0.113.2']) {
    await request(status, { headers: { 'x-forwarded-for': forwarded, authorization: basicAuth('kasse', 'raten') } });
  }
  assert.equal((await get(status, { 'x-forwarded-for': '203.0.113.3' })).status, 429);

  const proxied = await serveFixture(t, { maxAuthFailures: 2, trustProxy: ['127.0.0.1'] });
  const behindProxy = `${proxied}/api/v1/status`;
  const spoofed = { 'x-forwarded-for': 'spoofed, 203.0.113.1', authorization: basicAuth('kasse', 'raten') };
  for (let i = 0; i < 2; i += 1) await request(behindProxy, { headers: spoofed });
  assert.equal((await get(behindProxy, { 'x-forwarded-for': '203.0.113.1' })).status, 429);
  assert.equal((await get(behindProxy, { 'x-forwarded-for': '203.0.113.1, 203.0.113.2' })).status, 200);
});

test('X-Forwarded-For from a peer that trustProxy does not name is ignored (no bypass of the throttle)', async (t) => {
  const origin = await serveFixture(t, { maxAuthFailures: 2, trustProxy: ['127.0.0.1'] });
  const status = `${origin}/api/v1/status`;
  const wrong = { authorization: basicAuth('kasse', 'falsch') };
  // 127.0.0.2 is a direct client, not the proxy: each made-up address still counts as 127.0.0.2.
  for (const forwarded of ['203.0.113.1', '203.0.113.2']) {
    await requestFrom('127.0.0.2', status, { ...wrong, 'x-forwarded-for': forwarded });
  }
  const blocked = await requestFrom('127.0.0.2', status, { authorization: AUTH, 'x-forwarded-for': '203.0.113.3' });
  assertReply(blocked, 429, THROTTLED);
  // The proxy's own clients are unaffected.
  assert.equal((await get(status, { 'x-forwarded-for': '203.0.113.3' })).status, 200);
});

test('trustProxy matches IPv4-mapped and differently written IPv6 peers; a forwarded value that is no address is not used', async (t) => {
  const mapped = await serveFixture(t, { maxAuthFailures: 1, trustProxy: ['::ffff:127.0.0.1'] });
  await request(`${mapped}/api/v1/status`, {
    headers: { authorization: basicAuth('kasse', 'falsch'), 'x-forwarded-for': '198.51.100.7' },
  });
  assert.equal((await get(`${mapped}/api/v1/status`, { 'x-forwarded-for': '198.51.100.7' })).status, 429);
  assert.equal((await get(`${mapped}/api/v1/status`, { 'x-forwarded-for': '198.51.100.8' })).status, 200);

  const garbage = await serveFixture(t, { maxAuthFailures: 1, trustProxy: ['127.0.0.1'] });
  await request(`${garbage}/api/v1/status`, {
    headers: { authorization: basicAuth('kasse', 'falsch'), 'x-forwarded-for': 'not-an-address' },
  });
  // Counted under the proxy itself, so a client cannot invent a fresh key per request.
  assert.equal((await get(`${garbage}/api/v1/status`, { 'x-forwarded-for': 'other-garbage' })).status, 429);
});

test('only well-formed Basic credentials that do not match count as failures (challenge-first clients are never throttled)', async (t) => {
  const origin = await serveFixture(t, { maxAuthFailures: 3 });
  const status = `${origin}/api/v1/status`;
  const notCounted = [
    {},
    { authorization: `Bearer ${Buffer.from('kasse:raten').toString('base64')}` },
    { authorization: 'Digest username="kasse"' },
    { authorization: 'Basic' },
    { authorization: 'Basic ****' },
    { authorization: `Basic ${Buffer.from('ohne-doppelpunkt').toString('base64')}` },
    { authorization: `Basic ${Buffer.from([0xff, 0x3a, 0xfe]).toString('base64')}` },
  ];
  // Far more than the limit, the way urllib or curl --anyauth asks: first without, then with.
  for (let i = 0; i < 4; i += 1) {
    for (const headers of notCounted) assertUnauthorized(await request(status, { headers }));
    assertReply(await get(status), 200, statusAnswer());
  }

  const wrong = { authorization: basicAuth('fremd', 'raten') };
  for (let i = 0; i < 3; i += 1) assertUnauthorized(await request(status, { headers: wrong }));
  assertReply(await request(status, { headers: { authorization: basicAuth('neu', 'raten') } }), 429, THROTTLED);
  // The address's failures are spent, but a request without credentials still gets the
  // challenge: kasse, a known client here, answers it and gets in.
  assertUnauthorized(await request(status));
  assertReply(await get(status), 200, statusAnswer());
});

/** Through a trusted proxy on 127.0.0.1: each request names its client in X-Forwarded-For. */
function viaProxy(status: string, forwarded: string, authorization?: string): Promise<Reply> {
  const headers: Record<string, string> = { 'x-forwarded-for': forwarded };
  if (authorization !== undefined) headers['authorization'] = authorization;
  return request(status, { headers });
}

test('IPv6 addresses count per /64: ten wrong passwords from ten addresses of one /64 block all of it', async (t) => {
  const origin = await serveFixture(t, { trustProxy: ['127.0.0.1'] });
  const status = `${origin}/api/v1/status`;
  for (let i = 1; i <= 10; i += 1) {
    assertUnauthorized(await viaProxy(status, `2001:db8:1:2::${i.toString(16)}`, basicAuth('kasse', `raten${i}`)));
  }
  const blocked = await viaProxy(status, '2001:db8:1:2:ffff:ffff:ffff:ffff', AUTH);
  assertReply(blocked, 429, THROTTLED);
  assert.equal(blocked.headers['retry-after'], '60');
  assert.equal((await viaProxy(status, '2001:db8:1:3::1', AUTH)).status, 200, 'the next /64 is another client');
});

test('guessing from fresh addresses stops at the username budget; a client that logged in before still gets in', async (t) => {
  let now = 7_000_000;
  const origin = await serveFixture(t, { trustProxy: ['127.0.0.1'], now: () => now });
  const status = `${origin}/api/v1/status`;
  assert.equal((await viaProxy(status, '192.0.2.7', AUTH)).status, 200, 'the client logs in once');
  const answers: number[] = [];
  // 60 wrong passwords for kasse, each from a fresh address, as a local user behind a
  // loopback proxy can send them.
  for (let i = 0; i < 60; i += 1) {
    answers.push((await viaProxy(status, `198.51.100.${i}`, basicAuth('kasse', `raten${i}`))).status);
  }
  assert.deepEqual(answers, [...Array(50).fill(401), ...Array(10).fill(429)]);
  const fresh = await viaProxy(status, '203.0.113.50', AUTH);
  assertReply(fresh, 429, THROTTLED);
  assert.equal(fresh.headers['retry-after'], '60', 'the right password from a new address waits for the window');
  assert.equal(fresh.headers['connection'], 'close');
  assert.equal((await viaProxy(status, '192.0.2.7', AUTH)).status, 200, 'the known client is checked and let in');
  assert.equal(
    (await viaProxy(status, '203.0.113.51', basicAuth('pruefer', 'raten'))).status,
    401,
    'another username is still checked',
  );
  now += 60_000;
  assert.equal((await viaProxy(status, '203.0.113.50', AUTH)).status, 200, 'after the window');
});

test('the global budget: failures over many usernames stop every address but known clients', async (t) => {
  const origin = await serveFixture(t, { trustProxy: ['127.0.0.1'], maxGlobalFailures: 20 });
  const status = `${origin}/api/v1/status`;
  assert.equal((await viaProxy(status, '2001:db8:7::1', AUTH)).status, 200);
  const answers: number[] = [];
  for (let i = 0; i < 25; i += 1) {
    answers.push((await viaProxy(status, `198.51.100.${i}`, basicAuth(`user${i}`, 'raten'))).status);
  }
  assert.deepEqual(answers, [...Array(20).fill(401), ...Array(5).fill(429)]);
  assert.equal((await viaProxy(status, '203.0.113.9', AUTH)).status, 429);
  assert.equal((await viaProxy(status, '2001:db8:7::2', AUTH)).status, 200, 'same /64 as the known client');
});

test('requests without credentials: the 101st within a minute gets 429 and a closed connection; a login clears the count', async (t) => {
  const origin = await serveFixture(t);
  const status = `${origin}/api/v1/status`;
  for (let i = 0; i < 100; i += 1) assertUnauthorized(await request(status));
  const cut = await request(status);
  assertReply(cut, 429, THROTTLED);
  assert.equal(cut.headers['connection'], 'close');
  assert.equal((await get(status)).status, 200, 'credentials are still checked, and clear the count');
  // A challenge-first client (urllib, curl --anyauth): one without, then one with, 150 times.
  for (let i = 0; i < 150; i += 1) {
    assert.equal((await request(status)).status, 401);
    assert.equal((await get(status)).status, 200);
  }
});

test("an office's NAT: a neighbour's requests without credentials, or its idle connections that sent them, never lock a known challenge-first client out (it got 429 on its first request)", async (t) => {
  const origin = await serveFixture(t);
  const status = `${origin}/api/v1/status`;
  // A challenge-first client (.NET, curl --anyauth, Java) logs in: a known client at this address.
  assertUnauthorized(await request(status));
  assert.equal((await get(status)).status, 200);
  // A colleague behind the same address never logs in: 120 requests, then 120 connections
  // kept open after one request each.
  for (let i = 0; i < 120; i += 1) assertUnauthorized(await request(status));
  const { hostname, port } = new URL(origin);
  const idle = await Promise.all(
    Array.from({ length: 120 }, async () => {
      const socket = connect(Number(port), hostname);
      socket.write('GET /api/v1/status HTTP/1.1\r\nHost: x\r\n\r\n');
      const [chunk] = (await once(socket, 'data')) as [Buffer];
      assert.match(chunk.toString('latin1'), /^HTTP\/1\.1 401 /);
      return socket;
    }),
  );
  t.after(() => {
    for (const socket of idle) socket.destroy();
  });
  assertUnauthorized(await request(status));
  assert.equal((await get(status)).status, 200);
});

test('a pipelined flood without credentials ends with one 429 and a closed connection', async (t) => {
  const origin = await serveFixture(t);
  const { hostname, port } = new URL(origin);
  const socket = connect(Number(port), hostname);
  t.after(() => socket.destroy());
  let received = '';
  socket.setEncoding('utf8').on('data', (chunk: string) => (received += chunk));
  socket.write('GET /api/v1/status HTTP/1.1\r\nHost: x\r\n\r\n'.repeat(1000));
  await once(socket, 'close');
  const statuses = [...received.matchAll(/HTTP\/1\.1 (\d{3})/g)].map((match) => match[1]);
  assert.deepEqual(statuses, [...Array(100).fill('401'), '429']);
});

test('an X-Forwarded-For entry with an IPv6 zone id is ignored, never a 500', async (t) => {
  const origin = await serveFixture(t, { trustProxy: ['127.0.0.1'], maxAuthFailures: 2 });
  const status = `${origin}/api/v1/status`;
  assert.equal((await viaProxy(status, 'fe80::1%eth0', AUTH)).status, 200);
  for (let i = 0; i < 2; i += 1) assertUnauthorized(await viaProxy(status, `fe80::${i}%eth0`, basicAuth('kasse', 'x')));
  // Both counted under the proxy itself, not under made-up keys.
  assert.equal((await viaProxy(status, 'fe80::9%lo', AUTH)).status, 429);
});

test('a TCP client that resets its connection before its request is read is counted as "unknown", not as the Unix-socket clients of the same handler', async (t) => {
  const handler = createHandler(openFixture(t), CREDENTIALS);
  const seen: Array<string | undefined> = [];
  const listener = (req: IncomingMessage, res: Parameters<typeof handler>[1]): void => {
    handler(req, res);
    seen.push(requestFacts(req)?.clientAddress);
  };
  const tcp = createServer(listener).listen(0, '127.0.0.1');
  const socketPath = join(tempDir(t), 'api.sock');
  const unix = createServer(listener).listen(socketPath);
  await Promise.all([once(tcp, 'listening'), once(unix, 'listening')]);
  t.after(() => {
    for (const server of [tcp, unix]) server.close().closeAllConnections();
  });
  const port = (tcp.address() as AddressInfo).port;
  const head = `GET /api/v1/status HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${basicAuth('kasse', 'falsch')}\r\n\r\n`;
  // Written and reset (RST) at once: the server reads the request after the reset, when the
  // kernel no longer knows the peer. Eleven of them use up the budget of `unknown`.
  for (let i = 0; i < 11; i += 1) {
    const socket = connect(port, '127.0.0.1').on('error', () => {});
    await once(socket, 'connect');
    socket.write(head, () => socket.resetAndDestroy());
    while (seen.length <= i) await new Promise((resolve) => setTimeout(resolve, 5));
  }
  assert.deepEqual(seen, Array(11).fill('unknown'));
  const overSocket = await new Promise<number>((resolve, reject) => {
    httpRequest({ socketPath, path: '/api/v1/status', headers: { authorization: AUTH } }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    })
      .on('error', reject)
      .end();
  });
  assert.equal(overSocket, 200, 'a Unix-socket client keeps its budget');
  assert.equal(seen.at(-1), 'unix');
  assertReply(
    await request(`http://127.0.0.1:${port}/api/v1/status`, { headers: { authorization: AUTH } }),
    200,
    statusAnswer(),
  );
  assert.equal(seen.at(-1), '127.0.0.1');
});
