// Hostile input: random and malformed query strings (fast-check) against an independent
// oracle, and a raw-socket corpus of broken HTTP against the real CLI.

import assert from 'node:assert/strict';
import { Agent, request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { test } from 'node:test';
import fc from 'fast-check';
import { start } from './support/cli-helpers.js';
import { AUTH, buildDatabase, get, openReadOnly, serveFixture } from './support/helpers.js';
import { expected, loadRows, NAMES } from './support/oracle.js';

// ---- The generators ---------------------------------------------------------------------

const encode = (text: string): string =>
  encodeURIComponent(text).replace(/%20/g, () => (Math.random() < 0.5 ? '+' : '%20'));
const day = fc
  .integer({ min: Date.UTC(2024, 1, 20) / 86_400_000, max: Date.UTC(2026, 4, 10) / 86_400_000 })
  .map((d) => new Date(d * 86_400_000).toISOString().slice(0, 10));
const dateText = fc.oneof(
  { weight: 6, arbitrary: day },
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.integer({ min: 0, max: 9999 }), fc.integer({ min: 0, max: 13 }), fc.integer({ min: 0, max: 32 }))
      .map(([y, m, d]) => `${String(y).padStart(4, '0')}-${String(m).padStart(2, '0')}-${String(d).padStart(2, '0')}`),
  },
  { weight: 1, arbitrary: fc.string({ maxLength: 12 }) },
);
const storedAmounts = [1250, -1250, -3000, 435, 110, 90, 111, 89, 0, 99_999_999_999_999, 5, 1999];
const amountText = fc.oneof(
  {
    weight: 14,
    arbitrary: fc
      .tuple(fc.constantFrom(...storedAmounts), fc.constantFrom('.', ','), fc.boolean())
      .map(([c, sep, full]) => {
        const client = -c;
        const abs = Math.abs(client);
        const text = `${Math.floor(abs / 100)}${full || abs % 100 !== 0 ? `${sep}${String(abs % 100).padStart(2, '0')}` : ''}`;
        return client < 0 ? `-${text}` : Math.random() < 0.3 ? `+${text}` : text;
      }),
  },
  { weight: 2, arbitrary: fc.stringMatching(/^[+-]?\d{0,14}([.,]\d{0,3})?$/) },
  { weight: 1, arbitrary: fc.constantFrom('NaN', 'Infinity', '1e3', '1 000', '0x10', '١٢', '-', '+-1', '.5') },
  { weight: 1, arbitrary: fc.string({ maxLength: 10 }) },
);
const toleranceText = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom('0', '0.10', '0,1', '0.01', '1', '5', '999999999999.99') },
  { weight: 1, arbitrary: fc.constantFrom('-1', '0.001', '+1', '') },
  { weight: 1, arbitrary: fc.stringMatching(/^\d{0,3}([.,]\d{0,3})?$/) },
);
const currencyText = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom('EUR', 'eur', 'USD') },
  { weight: 1, arbitrary: fc.constantFrom('EU', 'EURO', 'ÄUR', '') },
  { weight: 1, arbitrary: fc.string({ maxLength: 4 }) },
);
const limitText = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom('0', '1', '2', '50', '1000', '0050') },
  { weight: 1, arbitrary: fc.constantFrom('1001', '-1', '1e2', '') },
  { weight: 1, arbitrary: fc.string({ maxLength: 5 }) },
);

const valueFor: Record<string, fc.Arbitrary<string>> = {
  von: dateText,
  bis: dateText,
  betrag: amountText,
  toleranz: toleranceText,
  waehrung: currencyText,
  limit: limitText,
};
const namedPiece = fc
  .constantFrom(...NAMES)
  .chain((name) => (valueFor[name] as fc.Arbitrary<string>).map((value) => `${name}=${encode(value)}`));
const strangePiece = fc.oneof(
  fc.string({ maxLength: 50, unit: 'grapheme' }).map((name) => `${encode(name)}=1`),
  // Long names, around the 40 characters a message may echo.
  fc.string({ minLength: 38, maxLength: 45, unit: 'grapheme' }).map((name) => `${encode(name)}=1`),
  fc.constantFrom(
    '%',
    '%4',
    '%zz',
    '%FF',
    '%C3',
    '%e2%82',
    'von',
    'von=',
    '=',
    '==',
    'betrag=1=2',
    'x=%G1',
    '%76on=2026-03-01',
  ),
);

/** Mostly searches a client would send, some of them broken. */
const window = fc.oneof(
  {
    weight: 8,
    arbitrary: fc
      .tuple(day, fc.integer({ min: 0, max: 90 }))
      .map(([von, days]) => [von, new Date(Date.parse(von) + days * 86_400_000).toISOString().slice(0, 10)] as const),
  },
  { weight: 2, arbitrary: fc.tuple(dateText, dateText) },
);
const plausibleQuery = fc
  .record({
    window,
    betrag: amountText,
    toleranz: fc.option(toleranceText),
    waehrung: fc.option(currencyText, { freq: 2 }),
    limit: fc.option(limitText, { freq: 2 }),
    extra: fc.oneof(
      { weight: 6, arbitrary: fc.constant(null) },
      { weight: 1, arbitrary: fc.oneof(namedPiece, strangePiece) },
    ),
    dropOne: fc.oneof({ weight: 9, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
  })
  .chain((q) => {
    const values: Record<string, string | null> = {
      von: q.window[0],
      bis: q.window[1],
      betrag: q.betrag,
      toleranz: q.toleranz,
      waehrung: q.waehrung,
      limit: q.limit,
    };
    const pieces = Object.entries(values)
      .filter((entry): entry is [string, string] => entry[1] !== null)
      .map(([name, value]) => `${name}=${encode(value)}`);
    if (q.extra !== null) pieces.push(q.extra);
    return fc
      .shuffledSubarray(pieces, { minLength: q.dropOne ? pieces.length - 1 : pieces.length })
      .map((parts) => parts.join('&'));
  });
const anyQuery = fc.array(fc.oneof(namedPiece, strangePiece), { maxLength: 8 }).map((parts) => parts.join('&'));

test("10,000 random and malformed queries: 400 with the oracle's message or 200 with its result, never anything else", async (t) => {
  const db = openReadOnly(t, buildDatabase(t));
  const rows = loadRows(db);
  const origin = await serveFixture(t, { onError: (error) => assert.fail(`onError: ${String(error)}`) });
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  t.after(() => agent.destroy());
  const ask = (query: string) =>
    new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = httpRequest(
        `${origin}/api/v1/buchungen?${query}`,
        { agent, headers: { authorization: AUTH } },
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
  const counts = { 200: 0, 400: 0 };
  const property = fc.asyncProperty(
    fc.oneof({ weight: 4, arbitrary: plausibleQuery }, { weight: 1, arbitrary: anyQuery }),
    async (query) => {
      const reply = await ask(query);
      const outcome = expected(query, rows);
      assert.equal(reply.status, outcome.status, `${query} → ${reply.body}`);
      counts[outcome.status] += 1;
      if (outcome.status === 400) {
        assert.deepEqual(JSON.parse(reply.body), { fehler: outcome.fehler, code: 'bad_query' }, query);
        const echoed = /^Unbekannter Parameter '(.*)'\.$/su.exec(outcome.fehler)?.[1];
        if (echoed !== undefined) assert.ok([...echoed].length <= 40);
      } else {
        assert.deepEqual(JSON.parse(reply.body), outcome.body, query);
      }
    },
  );
  await fc.assert(property, { numRuns: 10_000, seed: 20_261_122 });
  // The generators must reach both sides, or the property proves little.
  assert.ok(counts[200] > 2_000 && counts[400] > 2_000, JSON.stringify(counts));
  const found = await get(`${origin}/api/v1/status`);
  assert.equal(found.status, 200);
});

// ---- Broken HTTP on a raw socket --------------------------------------------------------

function raw(port: number, bytes: string | Buffer): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let answer = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => (answer += chunk));
    socket.on('error', () => resolve(answer));
    socket.on('close', () => resolve(answer));
    socket.setTimeout(5_000, () => socket.destroy());
    socket.write(bytes);
  });
}

test('a corpus of broken requests gets only 400 or 431, and the server keeps serving', async (t) => {
  const server = await start(t, ['--db', buildDatabase(t)]);
  const port = Number(new URL(server.api).port);
  const auth = `Authorization: ${AUTH}\r\n`;
  const corpus: Array<[string, string | Buffer, number]> = [
    ['garbage instead of a request line', 'GARBAGE\r\n\r\n', 400],
    ['no Host header', 'GET /api/v1/status HTTP/1.1\r\n\r\n', 400],
    ['a header of 20 KB', `GET /api/v1/status HTTP/1.1\r\nHost: x\r\n${auth}X-Big: ${'a'.repeat(20_000)}\r\n\r\n`, 431],
    ['a URL of 20 KB', `GET /api/v1/buchungen?${'a=1&'.repeat(5_000)} HTTP/1.1\r\nHost: x\r\n${auth}\r\n`, 431],
    ['a bad percent escape', `GET /api/v1/buchungen?von=%zz HTTP/1.1\r\nHost: x\r\n${auth}\r\n`, 400],
    [
      'a half percent escape',
      `GET /api/v1/buchungen?von=2026-03-01&bis=2026-03-31&betrag=1%2 HTTP/1.1\r\nHost: x\r\n${auth}\r\n`,
      400,
    ],
    ['a control byte in the path', `GET /api/v1/\x01status HTTP/1.1\r\nHost: x\r\n${auth}\r\n`, 400],
    ['a NUL in a header value', `GET /api/v1/status HTTP/1.1\r\nHost: x\r\nX-A: a\x00b\r\n\r\n`, 400],
    ['a header without a colon', 'GET /api/v1/status HTTP/1.1\r\nHost: x\r\nNoColon\r\n\r\n', 400],
    ['a bad Content-Length', 'GET /api/v1/status HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n', 400],
    [
      'Content-Length and chunked together',
      'POST /api/v1/status HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\nabc',
      400,
    ],
    ['a space inside the path', `GET /api/v1/status now HTTP/1.1\r\nHost: x\r\n\r\n`, 400],
    [
      'bytes that are not UTF-8',
      Buffer.concat([
        Buffer.from('GET /api/v1/'),
        Buffer.from([0xff, 0xfe]),
        Buffer.from(' HTTP/1.1\r\nHost: x\r\n\r\n'),
      ]),
      400,
    ],
  ];
  for (const [what, bytes, status] of corpus) {
    const answer = await raw(port, bytes);
    assert.match(answer, new RegExp(`^HTTP/1\\.1 ${status} `), `${what}: ${answer.slice(0, 80)}`);
    assert.equal((await get(`${server.api}status`)).status, 200, `still serving after: ${what}`);
  }
  const stopped = await server.stop();
  assert.equal(stopped.code, 0);
  assert.doesNotMatch(stopped.stderr, /unexpected/);
});
