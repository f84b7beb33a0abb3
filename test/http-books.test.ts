// Several books behind one listener (docs/API.md, Books), over real HTTP: each book's
// handler knows only its own users, so a user of one book is an unknown user on another —
// the same 401 as a wrong password (test/cli-books.test.ts times it); a path that names no
// book is answered after a login with any user of the service.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createHandler, createSharedParts, mountHandlers, type SharedParts } from '../lib/index.js';
import type { Credentials, HandlerOptions } from '../lib/types.js';
import { assertReply, basicAuth, openFixture, type Reply, request, serve, statusAnswer } from './support/helpers.js';

const UNAUTHORIZED = { fehler: 'Anmeldung erforderlich.', code: 'unauthorized' };
const NOT_FOUND = { fehler: 'Nicht gefunden.', code: 'not_found' };
const MUELLER: Credentials[] = [{ username: 'mueller', password: 'kasse-m' }];
const SCHMIDT: Credentials[] = [{ username: 'schmidt', password: 'kasse-s' }];

/** Two books and the fallback with every user, as the command composes them; returns the origin. */
async function serveTwoBooks(
  t: Parameters<typeof openFixture>[0],
  mueller: Credentials[],
  schmidt: Credentials[],
  options: HandlerOptions = {},
  shared?: SharedParts,
): Promise<string> {
  const book = (users: Credentials[], basePath: string, serviceName: string) =>
    createHandler(openFixture(t), users, { ...options, basePath, serviceName }, shared);
  return serve(
    t,
    mountHandlers(
      [
        { basePath: '/mueller', handler: book(mueller, '/mueller', 'Mueller') },
        { basePath: '/schmidt', handler: book(schmidt, '/schmidt', 'Schmidt') },
      ],
      book([...mueller, ...schmidt], '/mueller', 'Kanzlei'),
    ),
  );
}

function assertRefused(reply: Reply, realm: string): void {
  assertReply(reply, 401, UNAUTHORIZED);
  assert.equal(reply.headers['www-authenticate'], `Basic realm="${realm}", charset="UTF-8"`);
}

test('each book answers its own users, and a user of the other book exactly as a wrong password', async (t) => {
  const origin = await serveTwoBooks(t, MUELLER, SCHMIDT);
  const as = (user: string, password: string) => ({ headers: { authorization: basicAuth(user, password) } });

  assertReply(await request(`${origin}/mueller/api/v1/status`, as('mueller', 'kasse-m')), 200, statusAnswer('Mueller'));
  assertReply(await request(`${origin}/schmidt/api/v1/status`, as('schmidt', 'kasse-s')), 200, statusAnswer('Schmidt'));
  const search = await request(
    `${origin}/schmidt/api/v1/buchungen?von=2026-03-01&bis=2026-03-31&betrag=-4.35`,
    as('schmidt', 'kasse-s'),
  );
  assert.equal(search.status, 200, search.body);

  const otherBook = await request(`${origin}/schmidt/api/v1/status`, as('mueller', 'kasse-m'));
  const wrongPassword = await request(`${origin}/schmidt/api/v1/status`, as('schmidt', 'kasse-m'));
  assertRefused(otherBook, 'Schmidt');
  assertRefused(wrongPassword, 'Schmidt');
  const { date: _a, ...otherHeaders } = otherBook.headers;
  const { date: _b, ...wrongHeaders } = wrongPassword.headers;
  assert.deepEqual(otherHeaders, wrongHeaders);
  assert.equal(otherBook.body, wrongPassword.body);
  assertRefused(
    await request(
      `${origin}/mueller/api/v1/buchungen?von=2026-03-01&bis=2026-03-31&betrag=-4.35`,
      as('schmidt', 'kasse-s'),
    ),
    'Mueller',
  );
});

test('a path that names no book: 401 without credentials or with wrong ones, 404 for a user of any book', async (t) => {
  const origin = await serveTwoBooks(t, MUELLER, SCHMIDT);
  for (const path of ['/api/v1/status', '/meier/api/v1/status', '/mueller', '/', '/muellerx/api/v1/buchungen']) {
    assertRefused(await request(`${origin}${path}`), 'Kanzlei');
    assertRefused(
      await request(`${origin}${path}`, { headers: { authorization: basicAuth('mueller', 'x') } }),
      'Kanzlei',
    );
    for (const [user, password] of [
      ['mueller', 'kasse-m'],
      ['schmidt', 'kasse-s'],
    ] as const) {
      assertReply(
        await request(`${origin}${path}`, { headers: { authorization: basicAuth(user, password) } }),
        404,
        NOT_FOUND,
      );
    }
  }
  // Within a book, a path it does not have is that book's 404, for that book's users only.
  assertReply(
    await request(`${origin}/mueller/api/v2/status`, { headers: { authorization: basicAuth('mueller', 'kasse-m') } }),
    404,
    NOT_FOUND,
  );
  assertRefused(
    await request(`${origin}/mueller/api/v2/status`, { headers: { authorization: basicAuth('schmidt', 'kasse-s') } }),
    'Mueller',
  );
});

test('books and the fallback given one createSharedParts spend one login throttle: failures on one book refuse the next login on another', async (t) => {
  const limits = { maxAuthFailures: 3 };
  const origin = await serveTwoBooks(t, MUELLER, SCHMIDT, limits, createSharedParts(limits));
  const as = (user: string, password: string) => ({ headers: { authorization: basicAuth(user, password) } });
  assertRefused(await request(`${origin}/mueller/api/v1/status`, as('mueller', 'falsch')), 'Mueller');
  assertRefused(await request(`${origin}/schmidt/api/v1/status`, as('schmidt', 'falsch')), 'Schmidt');
  assertRefused(await request(`${origin}/api/v1/status`, as('mueller', 'falsch')), 'Kanzlei');
  // Three failures in all from this address: each book and the fallback refuse the next login, a right one too.
  for (const [path, user, password] of [
    ['/mueller', 'mueller', 'kasse-m'],
    ['/schmidt', 'schmidt', 'kasse-s'],
    ['/meier', 'schmidt', 'kasse-s'],
  ] as const) {
    const refused = await request(`${origin}${path}/api/v1/status`, as(user, password));
    assert.equal(refused.status, 429, `${path}: ${refused.body}`);
    assert.equal(JSON.parse(refused.body).code, 'login_throttled');
  }
});
