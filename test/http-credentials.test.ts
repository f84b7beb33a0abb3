// Several users, password hashes, the memory of verified credentials and the bounded hash
// checks, over real HTTP (docs/API.md, Credentials).

import assert from 'node:assert/strict';
import { Agent, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import { connect, type Socket } from 'node:net';
import { test } from 'node:test';
import { createHandler, mountHandlers, type RequestFacts, requestFacts } from '../lib/index.js';
import type { Credentials, HandlerOptions } from '../lib/types.js';
import { basicAuth, HASH_OF_ALT, HASH_OF_NEU, openFixture, request, serve, statusAnswer } from './support/helpers.js';

const STATUS = statusAnswer();

interface Served {
  status: string;
  handler: ReturnType<typeof createHandler>;
  /** Per Authorization header sent: whether each answer was written before the handler returned (no hash check). */
  atOnce: Map<string | undefined, boolean[]>;
  /** The request facts of each request, in order (the user is set before the answer is sent). */
  facts: Array<RequestFacts | undefined>;
  /** The connection of each request, in order. */
  sockets: Socket[];
}

async function serveUsers(
  t: Parameters<typeof serve>[0],
  credentials: Credentials | Credentials[],
  options: HandlerOptions = {},
  idleTimeoutMs = 0,
): Promise<Served> {
  const handler = createHandler(openFixture(t), credentials, options);
  const atOnce = new Map<string | undefined, boolean[]>();
  const facts: Array<RequestFacts | undefined> = [];
  const sockets: Socket[] = [];
  const origin = await serve(t, (req: IncomingMessage, res: ServerResponse) => {
    sockets.push(req.socket);
    // As server.setTimeout does it (the CLI's --send-timeout): node:http destroys an idle socket.
    if (idleTimeoutMs > 0) req.socket.setTimeout(idleTimeoutMs);
    handler(req, res);
    facts.push(requestFacts(req));
    const header = req.headers.authorization;
    atOnce.set(header, [...(atOnce.get(header) ?? []), res.headersSent]);
  });
  return { status: `${origin}/api/v1/status`, handler, atOnce, facts, sockets };
}

test('several users, plain and hashed, each get in with their own secret, and the facts name the user; a failed login a user of theirs, any other name only as unknown', async (t) => {
  const served = await serveUsers(t, [
    { username: 'bank', password: 'eins' },
    { username: 'pruefer', passwordHash: HASH_OF_ALT },
  ]);
  const as = (user: string, password: string) =>
    request(served.status, { headers: { authorization: basicAuth(user, password) } });
  const replies = await Promise.all([
    as('bank', 'eins'),
    as('pruefer', 'alt'),
    as('bank', 'alt'),
    as('pruefer', 'eins'),
    as('niemand', 'alt'),
    // A password typed into the username field: a log line may not show it.
    as('eins', 'bank'),
  ]);
  assert.deepEqual(
    replies.map((reply) => reply.status),
    [200, 200, 401, 401, 401, 401],
  );
  assert.deepEqual(JSON.parse(replies[1]?.body ?? ''), STATUS);
  const users = served.facts.map((recorded) => recorded?.user);
  assert.equal(users.length, 6);
  assert.deepEqual(users.filter(Boolean).sort(), ['bank', 'pruefer']);
  assert.deepEqual(served.facts.map((recorded) => recorded?.attempted).sort(), [
    ':unknown',
    ':unknown',
    'bank',
    'bank',
    'pruefer',
    'pruefer',
  ]);
});

test('a verified hashed credential is remembered: the next request is answered at once, while its user keeps name and secret; another user added or removed does not forget it, its own new secret does', async (t) => {
  const served = await serveUsers(t, { username: 'kasse', passwordHash: HASH_OF_ALT });
  const header = basicAuth('kasse', 'alt');
  const status = async (authorization = header): Promise<number> =>
    (await request(served.status, { headers: { authorization } })).status;
  for (let i = 0; i < 3; i += 1) assert.equal(await status(), 200);
  assert.deepEqual(served.atOnce.get(header), [false, true, true], 'only the first request waits for a hash check');

  // Rotation: old and new accepted for a while, then only the new one.
  served.handler.updateCredentials([
    { username: 'kasse', passwordHash: HASH_OF_ALT },
    { username: 'kasse-neu', passwordHash: HASH_OF_NEU },
  ]);
  assert.equal(await status(), 200);
  assert.deepEqual(served.atOnce.get(header), [false, true, true, true], 'a user added: kasse is still remembered');
  assert.equal(await status(basicAuth('kasse-neu', 'neu')), 200);
  served.handler.updateCredentials({ username: 'kasse-neu', passwordHash: HASH_OF_NEU });
  assert.equal(await status(), 401);
  assert.equal(await status(basicAuth('kasse-neu', 'neu')), 200);
  assert.deepEqual(
    served.atOnce.get(basicAuth('kasse-neu', 'neu')),
    [false, true],
    'a user removed: kasse-neu is still remembered',
  );

  // The user back with its old secret is checked again, as is a user whose secret changes.
  served.handler.updateCredentials([
    { username: 'kasse', passwordHash: HASH_OF_ALT },
    { username: 'kasse-neu', passwordHash: HASH_OF_ALT },
  ]);
  assert.equal(await status(), 200);
  assert.equal(await status(basicAuth('kasse-neu', 'neu')), 401, 'the old secret of a user given a new one');
  assert.equal(await status(basicAuth('kasse-neu', 'alt')), 200);
  assert.deepEqual(
    served.atOnce.get(header),
    [false, true, true, true, false, false],
    'removed (refused after a check) and back: checked again',
  );
});

test("a plain user's header, in any spelling, is refused once the password changes; the new one logs in", async (t) => {
  const served = await serveUsers(t, { username: 'kasse', password: 'alt' });
  const payload = Buffer.from('kasse:alt').toString('base64');
  const spellings = [`Basic ${payload}`, `basic ${payload}`, `BASIC   ${payload}`];
  const status = async (authorization: string): Promise<number> =>
    (await request(served.status, { headers: { authorization } })).status;
  for (const spelling of spellings) assert.equal(await status(spelling), 200, spelling);
  served.handler.updateCredentials({ username: 'kasse', password: 'neu' });
  for (const spelling of spellings) assert.equal(await status(spelling), 401, spelling);
  assert.equal(await status(basicAuth('kasse', 'neu')), 200);
});

test('handlers that follow one another over one book (its file replaced, its stand-in) share what was verified through one `logins` holder, until the credentials change', async (t) => {
  const logins = {};
  const kasse = { username: 'kasse', passwordHash: HASH_OF_ALT };
  const header = basicAuth('kasse', 'alt');
  let handler = createHandler(openFixture(t), [kasse], {}, { logins });
  const atOnce: boolean[] = [];
  const origin = await serve(t, (req: IncomingMessage, res: ServerResponse) => {
    handler(req, res);
    atOnce.push(res.headersSent);
  });
  const status = async (authorization = header): Promise<number> =>
    (await request(`${origin}/api/v1/status`, { headers: { authorization } })).status;
  assert.equal(await status(), 200);
  // The next file's handler, over the same users.
  handler = createHandler(openFixture(t), [kasse], {}, { logins });
  assert.equal(await status(), 200);
  // A reload that left the users as they were.
  handler.updateCredentials([kasse]);
  assert.equal(await status(), 200);
  assert.deepEqual(atOnce, [false, true, true], 'checked once, by the first handler');
  // The next handler with a user more: kasse is still remembered, and only these users hold.
  handler = createHandler(openFixture(t), [kasse, { username: 'neu', passwordHash: HASH_OF_NEU }], {}, { logins });
  assert.equal(await status(), 200);
  assert.deepEqual(atOnce, [false, true, true, true], 'a user added: kasse kept name and secret');
  handler = createHandler(openFixture(t), [{ ...kasse, passwordHash: HASH_OF_NEU }], {}, { logins });
  assert.equal(await status(), 401, 'a new secret: the old password is checked, and refused');
  handler = createHandler(openFixture(t), [{ username: 'neu', passwordHash: HASH_OF_NEU }], {}, { logins });
  assert.equal(await status(), 401);
});

test('on one kept-alive connection, every header is checked as its own, and new credentials hold at once', async (t) => {
  // Another header on a kept-alive connection, even of the same length, and the same header
  // once the credentials changed, are checked as on a connection of their own.
  const page = 'https://kasse.example';
  const served = await serveUsers(
    t,
    [
      { username: 'kasse', password: 'eins' },
      { username: 'pruefer', passwordHash: HASH_OF_ALT },
    ],
    { corsOrigins: [page] },
  );
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  t.after(() => agent.destroy());
  const send = (headers: Record<string, string>, method = 'GET'): Promise<number> =>
    new Promise((resolve, reject) => {
      const req = httpRequest(served.status, { agent, method, headers }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      });
      req.on('error', reject);
      req.end();
    });
  const status = (user: string, password: string) => send({ authorization: basicAuth(user, password) });
  const steps: Array<[answer: number, user: string | undefined]> = [];
  const step = async (answer: Promise<number>) => {
    const code = await answer;
    steps.push([code, served.facts.at(-1)?.user]);
  };
  await step(status('pruefer', 'alt')); // accepted after a hash check
  await step(status('pruefer', 'alt')); // remembered: accepted at once
  await step(status('kasse', 'eins')); // another user on the same connection
  await step(status('kasse', 'einz')); // the same length
  await step(status('kasse', 'eins'));
  await step(status('kasse', 'ein'));
  await step(status('kasse', 'eins!'));
  await step(status('kasse', 'eins'));
  await step(send({})); // no credentials
  await step(status('kasse', 'eins'));
  await step(send({ origin: page, 'access-control-request-method': 'GET' }, 'OPTIONS')); // a preflight
  await step(status('pruefer', 'neu'));
  assert.deepEqual(steps, [
    [200, 'pruefer'],
    [200, 'pruefer'],
    [200, 'kasse'],
    [401, undefined],
    [200, 'kasse'],
    [401, undefined],
    [401, undefined],
    [200, 'kasse'],
    [401, undefined],
    [200, 'kasse'],
    [204, undefined],
    [401, undefined],
  ]);
  await step(status('kasse', 'eins'));
  served.handler.updateCredentials([
    { username: 'kasse', password: 'zwei' },
    { username: 'pruefer', passwordHash: HASH_OF_ALT },
  ]);
  await step(status('kasse', 'eins'));
  await step(status('kasse', 'zwei'));
  await step(status('kasse', 'eins'));
  assert.deepEqual(steps.slice(-4), [
    [200, 'kasse'],
    [401, undefined],
    [200, 'kasse'],
    [401, undefined],
  ]);
  assert.equal(new Set(served.sockets).size, 1, 'every request came on one connection');
});

for (const mounted of [false, true]) {
  test(`a header accepted by one book is nothing to another on the same connection, and a request of another route on it goes to that route (${mounted ? 'mountHandlers' : 'two handlers'})`, async (t) => {
    // docs/API.md, Books: a user of book A is an unknown user on book B. Two handlers of one
    // server, each with its own users, chosen by hand or by mountHandlers; the rest of the
    // site behind `next`.
    const a = createHandler(openFixture(t), { username: 'alice', password: 'eins' }, { basePath: '/a' });
    const b = createHandler(openFixture(t), { username: 'bob', password: 'zwei' }, { basePath: '/b' });
    const books = mountHandlers(
      [
        { basePath: '/a', handler: a },
        { basePath: '/b', handler: b },
      ],
      (_req, res) => res.writeHead(404).end(),
    );
    const sockets: Socket[] = [];
    const origin = await serve(t, (req: IncomingMessage, res: ServerResponse) => {
      sockets.push(req.socket);
      const site = () => {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.end('app page');
      };
      if (mounted) books(req, res, site);
      else (req.url?.startsWith('/b/') ? b : a)(req, res, site);
    });
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    t.after(() => agent.destroy());
    const get = (path: string, authorization?: string): Promise<number> =>
      new Promise((resolve, reject) => {
        const headers: Record<string, string> = authorization === undefined ? {} : { authorization };
        const req = httpRequest(`${origin}${path}`, { agent, headers }, (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        });
        req.on('error', reject);
        req.end();
      });
    const [alice, bob] = [basicAuth('alice', 'eins'), basicAuth('bob', 'zwei')];
    assert.deepEqual(
      [
        await get('/a/api/v1/status', alice),
        await get('/b/api/v1/status', alice),
        await get('/a/api/v1/status', alice),
        await get('/a/api/v1/status', alice),
        await get('/b/api/v1/buchungen?von=2026-03-01&bis=2026-03-31&betrag=-12.50', alice),
        await get('/b/api/v1/status', bob),
        await get('/a/api/v1/status', bob),
        await get('/a/api/v1/status', alice),
        await get('/index.html'),
        await get('/a/api/v1/status', alice),
        await get('/a/other-page'),
      ],
      [200, 401, 200, 200, 401, 200, 401, 200, 200, 200, 200],
    );
    assert.equal(new Set(sockets).size, 1, 'every request came on one connection');
  });
}

test('a request without credentials pipelined behind a hashed login on the same connection is refused', async (t) => {
  const served = await serveUsers(t, { username: 'pruefer', passwordHash: HASH_OF_ALT });
  const { port } = new URL(served.status);
  const socket = connect(Number(port), '127.0.0.1');
  t.after(() => socket.destroy());
  let received = '';
  socket.on('data', (chunk: Buffer) => {
    received += chunk.toString('latin1');
  });
  const get = (authorization?: string) =>
    `GET /api/v1/status HTTP/1.1\r\nHost: 127.0.0.1\r\n${authorization === undefined ? '' : `Authorization: ${authorization}\r\n`}\r\n`;
  // The second request is handed over while the first waits for its hash check.
  socket.write(get(basicAuth('pruefer', 'alt')) + get());
  const deadline = Date.now() + 10_000;
  while ((received.match(/HTTP\/1\.1 \d{3} /g) ?? []).length < 2 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  assert.deepEqual(
    (received.match(/HTTP\/1\.1 \d{3} /g) ?? []).map((line) => line.slice(9, 12)),
    ['200', '401'],
  );
  assert.equal(served.sockets.length, 2);
});

test('plain passwords are answered at once, with no hash check', async (t) => {
  const served = await serveUsers(t, [
    { username: 'bank', password: 'eins' },
    { username: 'pruefer', password: 'zwei' },
  ]);
  const good = basicAuth('pruefer', 'zwei');
  const bad = basicAuth('pruefer', 'eins');
  assert.equal((await request(served.status, { headers: { authorization: good } })).status, 200);
  assert.equal((await request(served.status, { headers: { authorization: bad } })).status, 401);
  assert.deepEqual([served.atOnce.get(good), served.atOnce.get(bad)], [[true], [true]]);
});

test('only well-formed Basic credentials that do not match count towards the throttle', async (t) => {
  const served = await serveUsers(t, { username: 'kasse', password: 'geheim' }, { maxAuthFailures: 2 });
  for (const authorization of [undefined, 'Bearer abc', 'Basic ****', undefined, 'Negotiate xyz']) {
    const reply = await request(served.status, { headers: authorization === undefined ? {} : { authorization } });
    assert.equal(reply.status, 401);
  }
  assert.equal(
    (await request(served.status, { headers: { authorization: basicAuth('kasse', 'geheim') } })).status,
    200,
  );
  for (let i = 0; i < 2; i += 1) {
    assert.equal(
      (await request(served.status, { headers: { authorization: basicAuth('kasse', 'raten') } })).status,
      401,
    );
  }
  assert.equal(
    (await request(served.status, { headers: { authorization: basicAuth('kasse', 'geheim') } })).status,
    429,
  );
});

/** Opens one connection a header, then sends one request on each in the same tick; gives each status and Retry-After. */
async function burst(status: string, headers: string[], hangUp = 0): Promise<{ answers: Promise<string[]> }> {
  const url = new URL(status);
  const sockets = await Promise.all(
    headers.map(
      () =>
        new Promise<ReturnType<typeof connect>>((resolve, reject) => {
          const socket = connect(Number(url.port), url.hostname, () => resolve(socket));
          socket.once('error', reject);
        }),
    ),
  );
  const answers = sockets.map(
    (socket) =>
      new Promise<string>((resolve) => {
        // A connection closed by the server before any answer: what must never happen.
        socket.once('close', () => resolve('no answer'));
        let text = '';
        socket.setEncoding('utf8').on('data', (chunk: string) => {
          text += chunk;
          if (text.includes('\r\n\r\n')) {
            socket.destroy();
            const retryAfter = /^retry-after: (\d+)\r$/im.exec(text)?.[1];
            resolve(`${text.slice(9, 12)}${retryAfter === undefined ? '' : ` retry-after ${retryAfter}`}`);
          }
        });
      }),
  );
  sockets.forEach((socket, i) => {
    socket.write(
      `GET ${url.pathname} HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: ${headers[i]}\r\nConnection: close\r\n\r\n`,
    );
  });
  // The last `hangUp` clients give up at once (after the server has read their requests).
  const kept = sockets.length - hangUp;
  if (hangUp > 0) await new Promise((resolve) => setTimeout(resolve, 200));
  for (const socket of sockets.slice(kept)) socket.destroy();
  return { answers: Promise.all(answers.slice(0, kept)) };
}

test('a flood of wrong passwords gets at most maxHashChecks checks at once and maxQueuedHashChecks waiting; the rest 429 at once, and a verified client is answered at once throughout', async (t) => {
  const served = await serveUsers(
    t,
    { username: 'kasse', passwordHash: HASH_OF_ALT },
    {
      maxHashChecks: 1,
      maxQueuedHashChecks: 2,
      maxAuthFailures: 0,
    },
  );
  const verified = basicAuth('kasse', 'alt');
  assert.equal((await request(served.status, { headers: { authorization: verified } })).status, 200);

  const flood = await burst(
    served.status,
    Array.from({ length: 10 }, (_, i) => basicAuth(i % 2 === 0 ? 'kasse' : `niemand${i}`, `falsch${i}`)),
  );
  // While the flood is being checked, the verified client keeps getting in without waiting.
  const during = await Promise.all(
    Array.from({ length: 5 }, () => request(served.status, { headers: { authorization: verified } })),
  );
  assert.deepEqual(
    during.map((reply) => reply.status),
    [200, 200, 200, 200, 200],
  );
  const answers = (await flood.answers).sort();
  // One checked at once, two waiting: three get their 401 after a check, seven are turned away.
  assert.deepEqual(answers, [...Array(3).fill('401'), ...Array(7).fill('429 retry-after 1')]);
  assert.deepEqual(served.atOnce.get(verified), [false, true, true, true, true, true]);
});

test('a request still waiting for its hash check when its socket would time out gets 503 busy_timeout with Retry-After a moment before, never a closed connection', async (t) => {
  // An idle timeout of 1.5 s, as server.setTimeout sets it: checks of about half a second
  // each, one at a time, and eight of them waiting.
  const served = await serveUsers(
    t,
    { username: 'kasse', passwordHash: HASH_OF_ALT },
    { maxHashChecks: 1, maxQueuedHashChecks: 20, maxAuthFailures: 0, maxUserFailures: 0, maxGlobalFailures: 0 },
    1_500,
  );
  const started = Date.now();
  const flood = await burst(
    served.status,
    Array.from({ length: 8 }, (_, i) => basicAuth('kasse', `falsch${i}`)),
  );
  const answers = await flood.answers;
  const took = Date.now() - started;
  assert.ok(!answers.includes('no answer'), answers.join(', '));
  assert.ok(
    answers.every((answer) => answer === '401' || answer === '503 retry-after 1'),
    answers.join(', '),
  );
  assert.ok(answers.includes('503 retry-after 1'), `some waited too long: ${answers.join(', ')}`);
  assert.ok(took < 1_500, `answered before the socket's timeout: ${took} ms`);
});

test('a client whose first requests come in parallel pays one hash check for all of them', async (t) => {
  const served = await serveUsers(
    t,
    { username: 'kasse', passwordHash: HASH_OF_ALT },
    { maxHashChecks: 1, maxQueuedHashChecks: 0 },
  );
  const header = basicAuth('kasse', 'alt');
  const { answers } = await burst(served.status, [header, header, header, header]);
  // With no room to wait, three more checks would have been turned away with 429.
  assert.deepEqual(await answers, ['200', '200', '200', '200']);
});

test('a waiting check whose client has hung up is dropped, not computed', async (t) => {
  const served = await serveUsers(
    t,
    { username: 'kasse', passwordHash: HASH_OF_ALT },
    {
      maxHashChecks: 1,
      maxQueuedHashChecks: 2,
      maxAuthFailures: 0,
    },
  );
  const wrong = (i: number) => basicAuth('kasse', `falsch${i}`);
  // One checked, two waiting whose clients hang up.
  const first = await burst(served.status, [wrong(1), wrong(2), wrong(3)], 2);
  assert.deepEqual(await first.answers, ['401']);
  // Had the two been computed, one would still run and one wait, and three of these would get 429.
  const second = await burst(served.status, [wrong(4), wrong(5), wrong(6), wrong(7)]);
  assert.deepEqual((await second.answers).sort(), ['401', '401', '401', '429 retry-after 1']);
});

// ln=13, p=10: OWASP's cheapest row, so that these tests need no second of CPU per check.
const CHEAP_HASH_OF_ALT = '$scrypt$ln=13,r=8,p=10$t32q+swFKtNFG8W4WW+iuQ$U0czAa6OOpWzh9L2w5ap1+3c6cTCjm0HrcAHxLR0PKk';

test('the right credentials spelled another way (basic, extra spaces, = padding) are remembered: one hash check in all', async (t) => {
  const served = await serveUsers(t, { username: 'kasse', passwordHash: CHEAP_HASH_OF_ALT });
  const payload = Buffer.from('kasse:alt').toString('base64');
  const spellings = [`Basic ${payload}`, `basic ${payload}`, `BASIC   ${payload}`, `Basic ${payload}==`];
  for (const authorization of spellings) {
    assert.equal((await request(served.status, { headers: { authorization } })).status, 200, authorization);
  }
  assert.deepEqual(
    spellings.map((spelling) => served.atOnce.get(spelling)),
    [[false], [true], [true], [true]],
    'only the first waits for a hash check',
  );
});

test('16 parallel first requests with a hashed right password from one address all get in (the 11th and later got 429 login_throttled)', async (t) => {
  const served = await serveUsers(t, { username: 'kasse', passwordHash: CHEAP_HASH_OF_ALT });
  const header = basicAuth('kasse', 'alt');
  const { answers } = await burst(served.status, Array(16).fill(header));
  assert.deepEqual(await answers, Array(16).fill('200'));
});

test('12 first logins of different hashed users at once from one address: those refused wait only until the pending checks can have come, then get in; wrong passwords keep the window', async (t) => {
  let now = 5_000_000;
  const users = Array.from({ length: 12 }, (_, i) => ({ username: `kasse${i}`, passwordHash: CHEAP_HASH_OF_ALT }));
  const served = await serveUsers(t, users, { now: () => now });
  const answers = async (headers: string[]) => (await burst(served.status, headers)).answers;
  const headers = users.map(({ username }) => basicAuth(username, 'alt'));
  const first = await answers(headers);
  // Ten pending checks spend the address's budget, and all may accept: not the window (it said 60).
  const refused = headers.filter((_, i) => first[i] !== '200');
  assert.ok(refused.length > 0, first.join());
  for (const answer of first.filter((answer) => answer !== '200')) assert.match(answer, /^429 retry-after ([1-9]|10)$/);
  now += 10_000;
  assert.deepEqual(await answers(refused), Array(refused.length).fill('200'), 'retried after Retry-After');
  // Usernames never let in here, wrong passwords: once confirmed, they block until the window ends.
  const wrong = await answers(users.map((_, i) => basicAuth(`fremd${i}`, 'falsch')));
  assert.equal(wrong.filter((answer) => answer === '401').length, 10, wrong.join());
  assert.deepEqual(await answers([basicAuth('fremd', 'raten')]), ['429 retry-after 60']);
});

test('parallel requests with the same wrong password are refused and count as one failure', async (t) => {
  // The throttle's clock stands still: a loaded machine's seconds do not shorten the Retry-After.
  const served = await serveUsers(
    t,
    { username: 'kasse', passwordHash: CHEAP_HASH_OF_ALT },
    { maxAuthFailures: 3, now: () => 5_000_000 },
  );
  const { answers } = await burst(served.status, Array(12).fill(basicAuth('kasse', 'falsch')));
  assert.deepEqual(await answers, Array(12).fill('401'));
  // One failure of three: two more guesses are refused, the second blocking the address.
  for (const guess of ['zwei', 'drei']) {
    const { answers: one } = await burst(served.status, [basicAuth('kasse', guess)]);
    assert.deepEqual(await one, ['401'], guess);
  }
  const { answers: blocked } = await burst(served.status, [basicAuth('kasse', 'alt')]);
  assert.deepEqual(await blocked, ['429 retry-after 60']);
});

test('parallel wrong passwords from one address: a check counts while it waits, so only maxAuthFailures are checked', async (t) => {
  const served = await serveUsers(
    t,
    { username: 'kasse', passwordHash: CHEAP_HASH_OF_ALT },
    { maxHashChecks: 1, maxQueuedHashChecks: 20, maxAuthFailures: 3, now: () => 5_000_000 },
  );
  const { answers } = await burst(
    served.status,
    Array.from({ length: 8 }, (_, i) => basicAuth('kasse', `falsch${i}`)),
  );
  // Counted only after the check, all eight were checked (33 of 40 in the review). Refused
  // while the three checks may still accept: until they can have come.
  assert.deepEqual((await answers).sort(), [...Array(3).fill('401'), ...Array(5).fill('429 retry-after 10')]);
  const { answers: confirmed } = await burst(served.status, [basicAuth('kasse', 'falsch8')]);
  assert.deepEqual(await confirmed, ['429 retry-after 60'], 'three confirmed failures: the window');
});

test('a right password whose check was counted while it waited is taken back: it does not use up the address', async (t) => {
  const served = await serveUsers(
    t,
    { username: 'kasse', passwordHash: CHEAP_HASH_OF_ALT },
    { maxHashChecks: 1, maxAuthFailures: 2 },
  );
  for (let i = 0; i < 3; i += 1) {
    const header = basicAuth('kasse', 'alt');
    served.handler.updateCredentials({ username: 'kasse', passwordHash: CHEAP_HASH_OF_ALT }); // forget: check again
    assert.equal((await request(served.status, { headers: { authorization: header } })).status, 200);
  }
  assert.equal(
    (await request(served.status, { headers: { authorization: basicAuth('kasse', 'falsch') } })).status,
    401,
  );
});

test('40 wrong passwords from fresh addresses no longer turn away the first logins of a hashed user (they got 10 × 429)', async (t) => {
  // The defaults but two checks at once; the fresh addresses come through a trusted proxy.
  const served = await serveUsers(
    t,
    { username: 'kasse', passwordHash: CHEAP_HASH_OF_ALT },
    { trustProxy: ['127.0.0.1'], maxHashChecks: 2 },
  );
  const url = new URL(served.status);
  const flood = await Promise.all(
    Array.from(
      { length: 40 },
      () =>
        new Promise<ReturnType<typeof connect>>((resolve, reject) => {
          const socket = connect(Number(url.port), url.hostname, () => resolve(socket));
          socket.once('error', reject);
        }),
    ),
  );
  t.after(() => {
    for (const socket of flood) socket.destroy();
  });
  flood.forEach((socket, i) => {
    socket.on('error', () => undefined);
    socket.write(
      `GET ${url.pathname} HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: ${basicAuth('kasse', `falsch${i}`)}\r\nX-Forwarded-For: 198.51.100.${i}\r\n\r\n`,
    );
  });
  await new Promise((resolve) => setTimeout(resolve, 300));
  // The first logins arrive while all 40 checks run or wait ...
  const logins = Promise.all(
    Array.from({ length: 10 }, (_, i) =>
      request(served.status, {
        headers: { authorization: basicAuth('kasse', 'alt'), 'x-forwarded-for': `203.0.113.${i}` },
      }),
    ),
  );
  await new Promise((resolve) => setTimeout(resolve, 300));
  // ... then the attacker hangs up, so that its waiting checks are skipped and the test stays short.
  for (const socket of flood) socket.destroy();
  assert.deepEqual(
    (await logins).map((reply) => reply.status),
    Array(10).fill(200),
  );
});
