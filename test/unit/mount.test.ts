// mountHandlers: which handler a request target reaches, and misuse named at creation. The
// handlers here only record who was asked; test/http-books.test.ts speaks HTTP to real ones.

import assert from 'node:assert/strict';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { test } from 'node:test';
import { normalBasePath } from '../../lib/base-path.js';
import { createHandler, type Mount, mountHandlers } from '../../lib/handler.js';
import type { RequestHandler } from '../../lib/types.js';
import { CREDENTIALS, openFixture } from '../support/helpers.js';

// route() puts a recording handler in each mount's place; these only fill the table.
const handler: RequestHandler = () => {};

function route(mounts: readonly Mount[], url: string, withNext = false): string {
  let answeredBy = '';
  const record =
    (name: string): RequestHandler =>
    () => {
      answeredBy = name;
    };
  const handler = mountHandlers(
    mounts.map((mount) => ({ basePath: mount.basePath, handler: record(mount.basePath || '(root)') })),
    record('fallback'),
  );
  const next = withNext ? () => (answeredBy = 'next') : undefined;
  handler({ url } as IncomingMessage, {} as ServerResponse, next);
  return answeredBy;
}

const BOOKS: Mount[] = ['/mueller', '/mueller/filiale', '/schmidt/', '/a'].map((basePath) => ({
  basePath,
  handler,
}));

const ROUTES: Array<[url: string, expected: string, withNext?: boolean]> = [
  ['/mueller/api/v1/status', '/mueller'],
  ['/mueller/api/v1/buchungen?von=2026-01-01', '/mueller'],
  ['/mueller/api/v2/other', '/mueller'],
  ['/mueller/filiale/api/v1/status', '/mueller/filiale'],
  ['/schmidt/api/v1/status', '/schmidt/'],
  ['http://kasse.example/schmidt/api/v1/status', '/schmidt/'],
  ['/mueller', 'fallback'],
  ['/mueller/api', 'fallback'],
  ['/muellerx/api/v1/status', 'fallback'],
  ['/api/v1/status', 'fallback'],
  ['/', 'fallback'],
  ['*', 'fallback'],
  ['/ab/api/v1/status', 'fallback'],
  ['/other/api/v1/status', 'next', true],
  ['/mueller/api/v1/status', '/mueller', true],
  // A password in the request line is no path to route on: the fallback's 400, never next.
  ['http://user:pw@kasse.example/mueller/api/v1/status', 'fallback', true],
];

for (const [url, expected, withNext] of ROUTES) {
  test(`${url}${withNext ? ' (with next)' : ''} → ${expected}`, () => {
    assert.equal(route(BOOKS, url, withNext), expected);
  });
}

test('a book at the base path "" takes every /api/ path that no longer base path names', () => {
  const mounts = [
    { basePath: '', handler },
    { basePath: '/mueller', handler },
  ];
  assert.equal(route(mounts, '/api/v1/status'), '(root)');
  assert.equal(route(mounts, '/mueller/api/v1/status'), '/mueller');
  assert.equal(route(mounts, '/x/api/v1/status'), 'fallback');
});

test('misuse is a TypeError naming the mount', () => {
  const bad: Array<[unknown, unknown, RegExp]> = [
    [undefined, handler, /^mounts must be an array/],
    [[], 'no', /^fallback must be a request handler/],
    [[{ basePath: 'mueller', handler }], handler, /^mounts\[0\]\.basePath must be "" or a path/],
    [
      [
        { basePath: '/a', handler },
        { basePath: '/b b', handler },
      ],
      handler,
      /^mounts\[1\]\.basePath must be/,
    ],
    [[{ basePath: '/a', handler: 'h' }], handler, /^mounts\[0\]\.handler must be a request handler/],
    [
      [
        { basePath: '/a', handler },
        { basePath: '/a/', handler },
      ],
      handler,
      /^mounts\[1\]\.basePath "\/a" is given twice/,
    ],
    [[null], handler, /^mounts\[0\]\.basePath must be/],
    [[{ basePath: '/müller', handler }], handler, /^mounts\[0\]\.basePath must be .*use "\/mueller" instead$/],
    [[{ basePath: '/x/../y', handler }], handler, /^mounts\[0\]\.basePath must be .*use "\/y" instead$/],
  ];
  for (const [mounts, fallback, message] of bad) {
    assert.throws(
      () => mountHandlers(mounts as Mount[], fallback as RequestHandler),
      { name: 'TypeError', message },
      JSON.stringify(mounts),
    );
  }
});

test("a mount whose base path is not its handler's is refused, naming both", (t) => {
  const schmidt = createHandler(openFixture(t), CREDENTIALS, { basePath: '/schmidt' });
  assert.throws(() => mountHandlers([{ basePath: '/wrong', handler: schmidt }], handler), {
    name: 'TypeError',
    message: 'mounts[0].basePath "/wrong" is not its handler\'s basePath "/schmidt"',
  });
  assert.throws(
    () =>
      mountHandlers(
        [
          { basePath: '/schmidt', handler: schmidt },
          { basePath: '/mueller', handler: schmidt },
        ],
        handler,
      ),
    { name: 'TypeError', message: /^mounts\[1\]\.basePath "\/mueller" is not its handler's basePath "\/schmidt"$/ },
  );
  // The same base path however it is written; a handler the library did not make is taken at its word.
  assert.doesNotThrow(() => mountHandlers([{ basePath: '/schmidt/', handler: schmidt }], handler));
  assert.doesNotThrow(() => mountHandlers([{ basePath: '/wrong', handler: (req, res) => schmidt(req, res) }], handler));
});

test('the book a target reaches is the longest base path it starts with, as trying every book in turn finds it (5,000 random tables and targets)', () => {
  let state = 11;
  const random = (): number => {
    state = (state * 1_664_525 + 1_013_904_223) >>> 0;
    return state / 4_294_967_296;
  };
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
  const segments = ['a', 'api', 'b', 'api', 'v1', 'status'];
  const pathOf = (length: number): string => Array.from({ length }, () => `/${pick(segments)}`).join('');
  for (let round = 0; round < 5_000; round += 1) {
    // Base paths as the library takes them: none ends in the API's own path (`/a/api`).
    const bases = [
      ...new Set(Array.from({ length: 1 + Math.floor(random() * 5) }, () => pathOf(Math.floor(random() * 4)))),
    ].filter((base) => normalBasePath(base) === base);
    if (bases.length === 0) continue;
    const target = `${pathOf(Math.floor(random() * 8))}${pick(['', '/', '?q=/api/', '/api/v1/status'])}`;
    // Every book in turn, the longest base path first.
    const expected =
      [...bases].sort((x, y) => y.length - x.length).find((base) => target.startsWith(`${base}/api/`)) ?? 'fallback';
    const mounts = bases.map((basePath) => ({ basePath, handler }));
    assert.equal(
      route(mounts, target),
      expected === '' ? '(root)' : expected,
      `${target} over ${JSON.stringify(bases)}`,
    );
  }
});

test('a target of thousands of "/api/" still reaches its book, looking only where a base path can end', () => {
  const mounts = ['/mueller', '/a/api/b'].map((basePath) => ({ basePath, handler }));
  assert.equal(route(mounts, `/a/api/b/api/v1/status?${'/api/'.repeat(20_000)}`), '/a/api/b');
  assert.equal(route(mounts, `${'/api/'.repeat(20_000)}`), 'fallback');
});
