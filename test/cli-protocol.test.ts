// The CLI at the protocol edge: what Node's HTTP parser refuses is answered as JSON, an
// absolute-form target like its path, and --cors-origin is checked and served (docs/API.md,
// Responses in general; Browser clients (CORS)).

import assert from 'node:assert/strict';
import { once } from 'node:events';
import { connect } from 'node:net';
import { test } from 'node:test';
import { assertFails, run, start } from './support/cli-helpers.js';
import { AUTH, assertReply, buildDatabase, MARCH_COFFEE, request, statusAnswer } from './support/helpers.js';
import { assertProtocolError, rawExchange, rawRequest, statusesIn } from './support/raw-http.js';

const BAD_REQUEST = 'Ungültige Anfrage.';

test('errors raised by Node before the handler are JSON with the common headers and Connection: close', async (t) => {
  const server = await start(t, ['--db', buildDatabase(t), '--headers-timeout', '1', '--request-timeout', '2']);
  const { origin } = server;
  const auth = `Authorization: ${AUTH}\r\n`;
  const cases: [string, string | Buffer, number, string][] = [
    ['a bad request line', 'GARBAGE\r\n\r\n', 400, BAD_REQUEST],
    ['an unknown HTTP version', 'GET /api/v1/status HTTP/9.9\r\nHost: x\r\n\r\n', 400, BAD_REQUEST],
    ['HTTP/1.1 without Host', `GET /api/v1/status HTTP/1.1\r\n${auth}\r\n`, 400, BAD_REQUEST],
    ['HTTP/1.1 without Host, not authenticated', 'GET /api/v1/status HTTP/1.1\r\n\r\n', 400, BAD_REQUEST],
    ['two Host lines', `GET /api/v1/status HTTP/1.1\r\nHost: x\r\nHost: y\r\n${auth}\r\n`, 400, BAD_REQUEST],
    [
      'a header line without a colon',
      `GET /api/v1/status HTTP/1.1\r\nHost: x\r\nKaputt\r\n${auth}\r\n`,
      400,
      BAD_REQUEST,
    ],
    ['a space in a header name', `GET /api/v1/status HTTP/1.1\r\nHost: x\r\nBad Name: 1\r\n\r\n`, 400, BAD_REQUEST],
    [
      'raw non-ASCII bytes in the target',
      Buffer.concat([
        Buffer.from('GET /api/v1/st'),
        Buffer.from([0xc3, 0xa4]),
        Buffer.from('tus HTTP/1.1\r\nHost: x\r\n\r\n'),
      ]),
      400,
      BAD_REQUEST,
    ],
    [
      'request line and headers over 16 KiB',
      `GET /api/v1/status HTTP/1.1\r\nHost: x\r\nX-Gross: ${'a'.repeat(17 * 1024)}\r\n\r\n`,
      431,
      'Anfragekopf zu groß.',
    ],
    [
      'an Expect other than 100-continue',
      `GET /api/v1/status HTTP/1.1\r\nHost: x\r\nExpect: 200-ok\r\n${auth}\r\n`,
      417,
      'Erwartung nicht erfüllbar.',
    ],
    [
      'headers not complete within --headers-timeout',
      'GET /api/v1/status HTTP/1.1\r\nHost: x\r\n',
      408,
      'Zeitüberschreitung der Anfrage.',
    ],
  ];
  for (const [name, payload, status, fehler] of cases) {
    await t.test(name, async () => assertProtocolError(await rawRequest(origin, payload), status, fehler));
  }
  // The server keeps serving.
  assertReply(await request(`${server.api}status`, { headers: { authorization: AUTH } }), 200, statusAnswer());
});

test('an absolute-form request target is answered like its path and query (RFC 9112 §3.2.2)', async (t) => {
  const server = await start(t, ['--db', buildDatabase(t), '--base-path', '/kasse']);
  const { origin } = server;
  const ask = (target: string, authorization = `Authorization: ${AUTH}\r\n`) =>
    rawRequest(origin, `GET ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\n${authorization}Connection: close\r\n\r\n`);

  assertReply(await ask(`${origin}/kasse/api/v1/status`), 200, statusAnswer());
  assertReply(await ask(`http://andere.example/kasse/api/v1/status?egal=1`), 200, statusAnswer());
  assertReply(
    await ask(`${origin}/kasse/api/v1/buchungen?von=2026-03-01&bis=2026-03-31&betrag=-4.35`),
    200,
    MARCH_COFFEE,
  );
  assertReply(await ask(`${origin}/kasse/api/v1/buchungen?von=2026-03-01`), 400, {
    fehler: "Parameter 'bis' fehlt.",
    code: 'bad_query',
  });
  assertReply(await ask(`${origin}/kasse/api/v1/status`, ''), 401, {
    fehler: 'Anmeldung erforderlich.',
    code: 'unauthorized',
  });
  assertReply(await ask(`${origin}/api/v1/status`), 404, { fehler: 'Nicht gefunden.', code: 'not_found' });
  assertReply(await ask(origin), 404, { fehler: 'Nicht gefunden.', code: 'not_found' });
  // RFC 9110 §4.2.4: user info in the target is an error (it would put a password in logs).
  const withUser = await ask(`http://kasse:geheim@127.0.0.1/kasse/api/v1/status`);
  assertReply(withUser, 400, { fehler: 'Ungültige Anfrage.', code: 'bad_request' });
  assert.equal(withUser.headers.connection, 'close');

  // The access log shows the path of each target, never its scheme, authority or query.
  const deadline = Date.now() + 5_000;
  while ((server.output().stdout.match(/ GET /g) ?? []).length < 9 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const log = server
    .output()
    .stdout.split('\n')
    .filter((line) => line.includes(' GET '))
    .join('\n');
  assert.match(log, / GET \/kasse\/api\/v1\/status 400 /);
  assert.match(log, / GET \/ 404 /, 'an absolute-form target without a path is logged as /');
  assert.doesNotMatch(log, /geheim|andere\.example|http:\/\/|egal|betrag/);
});

test('--cors-origin is repeatable and served; "*" and malformed origins end the CLI with exit 2', async (t) => {
  const db = buildDatabase(t);
  for (const [origin, line] of [
    ['*', /^booking-search-server: --cors-origin "\*" is refused: no wildcard; .* \(see --help\)$/],
    [
      'https://buchhaltung.example/',
      /^booking-search-server: --cors-origin "https:\/\/buchhaltung\.example\/" is not an origin/,
    ],
    ['HTTPS://buchhaltung.example', /write "https:\/\/buchhaltung\.example" \(see --help\)$/],
  ] as const) {
    assertFails(
      await run(['--db', db, '--port', '0', '--cors-origin', 'http://127.0.0.1:8081', '--cors-origin', origin]),
      2,
      line,
    );
  }

  const server = await start(t, [
    '--db',
    db,
    '--cors-origin',
    'http://127.0.0.1:8081',
    '--cors-origin',
    'https://buchhaltung.example',
  ]);
  for (const page of ['http://127.0.0.1:8081', 'https://buchhaltung.example']) {
    const preflight = await request(`${server.api}buchungen`, {
      method: 'OPTIONS',
      headers: {
        origin: page,
        'access-control-request-method': 'GET',
        'access-control-request-headers': 'authorization',
      },
    });
    assert.equal(preflight.status, 204);
    assert.equal(preflight.headers['access-control-allow-origin'], page);
    const search = await request(`${server.api}buchungen?von=2026-03-01&bis=2026-03-31&betrag=-4.35`, {
      headers: { origin: page, authorization: AUTH },
    });
    assertReply(search, 200, MARCH_COFFEE);
    assert.equal(search.headers['access-control-allow-origin'], page);
  }
});

test('answers that leave at the end of the turn are not overtaken: pipelined requests before bad bytes or a closing request are answered in order', async (t) => {
  const server = await start(t, ['--db', buildDatabase(t)]);
  const status = (extra = ''): string =>
    `GET /api/v1/status HTTP/1.1\r\nHost: x\r\nAuthorization: ${AUTH}\r\n${extra}\r\n`;
  const statuses = (reply: { status: number; body: string }): string[] =>
    [...`HTTP/1.1 ${reply.status} ${reply.body}`.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((m) => m[1] as string);

  // Answers held for the end of the turn, and answers waiting in node:http's queue behind
  // them, then the parser's error: every answer first, whole and in order, then the 400.
  const garbage = await rawRequest(server.origin, `${status()}${status()}${status()}GARBAGE\r\n\r\n`);
  assert.deepEqual(statuses(garbage), ['200', '200', '200', '400']);
  assert.ok(garbage.body.endsWith('{"fehler":"Ungültige Anfrage.","code":"bad_request"}'), garbage.body);
  assert.ok(garbage.closed);

  // A CONNECT (Node would close the connection on it at once): 405 after the answers before it.
  const connect = await rawRequest(
    server.origin,
    `${status()}${status()}CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n`,
  );
  assert.deepEqual(statuses(connect), ['200', '200', '405']);
  assert.match(connect.body, /\r\nAllow: GET, HEAD\r\n/);
  assert.ok(connect.closed);

  // A closing request's answer is held too; the wrong passwords behind it are never
  // processed (ten would block this address), and the bytes after it are no 400.
  const wrong = `GET /api/v1/status HTTP/1.1\r\nHost: x\r\nAuthorization: Basic ${Buffer.from('kasse:raten').toString('base64')}\r\n\r\n`;
  const closing = await rawRequest(server.origin, `${status()}${status('Connection: close\r\n')}${wrong.repeat(10)}`);
  assert.deepEqual(statuses(closing), ['200', '200']);
  assert.ok(closing.closed);
  assertReply(await request(`${server.api}status`, { headers: { authorization: AUTH } }), 200, statusAnswer());
});

test('a parser error in the body of a request the command answered already is no second answer, on the API and the admin listener: the one answer, then the close', async (t) => {
  const server = await start(t, ['--db', buildDatabase(t), '--admin-port', '0']);
  const admin = /admin listener on (http:\/\/127\.0\.0\.1:\d+)\//.exec(server.output().stdout)?.[1] as string;
  const status = `GET /api/v1/status HTTP/1.1\r\nHost: x\r\nAuthorization: ${AUTH}\r\n`;
  const cases: [string, string, string[], number[]][] = [
    ['Transfer-Encoding: identity', server.origin, [`${status}Transfer-Encoding: identity\r\n\r\n`], [200]],
    [
      'HTTP/1.0 with Transfer-Encoding',
      server.origin,
      ['GET /api/v1/status HTTP/1.0\r\nTransfer-Encoding: identity\r\n\r\n'],
      [400],
    ],
    [
      'a gzipped reconciliation body',
      server.origin,
      [
        `POST /api/v1/abgleich HTTP/1.1\r\nHost: x\r\nAuthorization: ${AUTH}\r\nContent-Type: application/json\r\nTransfer-Encoding: gzip\r\n\r\n`,
      ],
      [415],
    ],
    [
      'a broken chunk, no credentials',
      server.origin,
      ['GET /api/v1/status HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n'],
      [401],
    ],
    [
      'after a pipelined request',
      server.origin,
      [`${status}\r\n${status}Transfer-Encoding: identity\r\n\r\n`],
      [200, 200],
    ],
    [
      '/live, Transfer-Encoding: identity',
      admin,
      ['GET /live HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: identity\r\n\r\n'],
      [200],
    ],
  ];
  for (const [name, origin, parts, statuses] of cases) {
    const { text, closed } = await rawExchange(origin, parts);
    assert.deepEqual(statusesIn(text), statuses, `${name}: ${text}`);
    assert.ok(closed, `${name}: closed`);
  }
  // Closed on the server's side too, none left lingering.
  const open = async (): Promise<string | undefined> =>
    /^booking_search_open_connections (\d+)$/m.exec((await request(`${admin}/metrics`)).body)?.[1];
  const deadline = Date.now() + 2_000;
  while ((await open()) !== '0' && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
  assert.equal(await open(), '0');
});

test('Expect: 100-continue gets 100 Continue only once the request is let in: not before a 401, a 413 or a 415', async (t) => {
  const server = await start(t, ['--db', buildDatabase(t)]);
  const post = (headers: string): string =>
    `POST /api/v1/abgleich HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\n${headers}\r\n`;
  const json = 'Content-Type: application/json\r\nContent-Length: 14\r\n';
  const refused: [string, string, number][] = [
    ['without credentials', json, 401],
    [
      'with a body over 1 MiB',
      `Authorization: ${AUTH}\r\nContent-Type: application/json\r\nContent-Length: 2000000\r\n`,
      413,
    ],
    ['with another media type', `Authorization: ${AUTH}\r\nContent-Type: text/plain\r\nContent-Length: 14\r\n`, 415],
  ];
  for (const [name, headers, status] of refused) {
    // The client waits for the 100 and sends no body: the answer is the first thing it reads.
    const reply = await rawRequest(server.origin, post(headers), 5_000);
    assert.equal(reply.status, status, name);
    assert.doesNotMatch(reply.body, /100 Continue/, name);
    assert.ok(reply.closed, `${name}: the unsent body is not waited for`);
  }

  // Let in: 100 Continue, then the body, then its answer.
  const socket = connect(Number(new URL(server.origin).port), '127.0.0.1');
  t.after(() => socket.destroy());
  let received = '';
  socket.setEncoding('utf8').on('data', (chunk: string) => (received += chunk));
  await once(socket, 'connect');
  socket.write(post(`Authorization: ${AUTH}\r\n${json}`));
  const deadline = Date.now() + 5_000;
  while (!received.includes('\r\n\r\n') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  assert.equal(received, 'HTTP/1.1 100 Continue\r\n\r\n');
  socket.write('{"zeilen":[]}\n');
  while (!/\r\n\r\n\{.*\}$/.test(received.slice(25)) && Date.now() < deadline)
    await new Promise((r) => setTimeout(r, 20));
  assert.match(received.slice(25), /^HTTP\/1\.1 400 [\s\S]*"code":"bad_body"}$/, 'the body was read');
});
