// Misuse of createHandler throws at creation, naming the argument; untrusted input never throws.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { createHandler, createSharedParts, type SharedParts } from '../../lib/index.js';
import type { Credentials, HandlerOptions } from '../../lib/types.js';
import { CREDENTIALS, openFixture } from '../support/helpers.js';

test('credentials must be a non-empty username without a colon and a non-empty password', (t) => {
  const db = openFixture(t);
  const bad: Array<[unknown, RegExp]> = [
    [undefined, /^credentials must be an object/],
    [null, /^credentials must be an object/],
    ['kasse:geheim', /^credentials must be an object/],
    [{ username: '', password: 'x' }, /^credentials\.username must be a non-empty string/],
    [{ username: 'a:b', password: 'x' }, /^credentials\.username must not contain a colon/],
    [{ username: 'a', password: '' }, /^credentials\.password must be a non-empty string/],
    [{ username: 'a', password: 42 }, /^credentials\.password must be a non-empty string/],
  ];
  for (const [credentials, message] of bad) {
    assert.throws(
      () => createHandler(db, credentials as Credentials),
      { name: 'TypeError', message },
      String(credentials),
    );
  }
});

test('options are checked and name what is wrong', (t) => {
  const db = openFixture(t);
  const bad: Array<[HandlerOptions, RegExp]> = [
    [{ basePath: 'kasse' }, /^options\.basePath/],
    [{ basePath: '/ka sse' }, /^options\.basePath/],
    [{ basePath: '/kasse?x' }, /^options\.basePath/],
    [{ basePath: 5 as unknown as string }, /^options\.basePath/],
    // What a client cannot send as written: it would never be answered.
    [
      { basePath: '/kä' },
      /^options\.basePath must be .*, not "\/kä" \(a client sends "ä" percent-encoded\); use "\/kae" instead$/,
    ],
    [{ basePath: '/müller' }, /^options\.basePath .*use "\/mueller" instead$/],
    [
      { basePath: '/k%C3%A4' },
      /^options\.basePath .*not "\/k%C3%A4" \("%" starts a percent-encoding.*use "\/kae" instead$/,
    ],
    [{ basePath: '/x/../y' }, /^options\.basePath .*\(a client resolves "\." and "\.\." segments .*use "\/y" instead$/],
    [{ basePath: '/./kasse' }, /^options\.basePath .*use "\/kasse" instead$/],
    [{ basePath: '/a;b' }, /^options\.basePath .*\(some clients send ";" percent-encoded\); use "\/a-b" instead$/],
    [{ basePath: '/a//b' }, /^options\.basePath .*use "\/a\/b" instead$/],
    [{ basePath: 'kasse' }, /^options\.basePath .*\(it must start with "\/"\); use "\/kasse" instead$/],
    // The base URL given whole: its path is meant.
    [
      { basePath: 'https://kasse.example.org/mueller/kasse' },
      /^options\.basePath .*\(it is the base URL's path, not the URL\); use "\/mueller\/kasse" instead$/,
    ],
    [
      { basePath: 'https://u:geheim@kasse.example.org/kasse' },
      /^options\.basePath .*, not "https:\/\/kasse\.example\.org\/kasse" \(it is the base URL's path, not the URL\); use "\/kasse" instead$/,
    ],
    [
      { basePath: '/kasse/api/v1/buchungen' },
      /^options\.basePath .*\(the service puts the API's path after it: \/kasse\/api\/v1\/buchungen\/api\/v1\/status\); use "\/kasse" instead$/,
    ],
    [
      { basePath: 'http://127.0.0.1:8080/' },
      /^options\.basePath .*\(it is the base URL's path, not the URL\); use "" instead$/,
    ],
    [{ serviceName: '' }, /^options\.serviceName/],
    [{ serviceName: 'Kasse\r\nX-Evil: 1' }, /^options\.serviceName/],
    [{ onError: 'log' as unknown as () => void }, /^options\.onError/],
    [{ maxAuthFailures: -1 }, /^options\.maxAuthFailures/],
    [{ maxAuthFailures: 1.5 }, /^options\.maxAuthFailures/],
    [{ authFailureWindowMs: 0 }, /^options\.authFailureWindowMs/],
    [{ maxTrackedAddresses: 0 }, /^options\.maxTrackedAddresses/],
    [{ maxUserFailures: -1 }, /^options\.maxUserFailures/],
    [{ maxGlobalFailures: 2.5 }, /^options\.maxGlobalFailures/],
    [{ maxUnauthenticated: Number.NaN }, /^options\.maxUnauthenticated/],
    [{ maxKnownClients: 0 }, /^options\.maxKnownClients/],
    [{ trustProxy: ['fe80::1%eth0'] }, /^options\.trustProxy must hold IP addresses/],
    [{ trustProxy: 'yes' as unknown as string[] }, /^options\.trustProxy must be an array/],
    [{ trustProxy: true as unknown as string[] }, /^options\.trustProxy must list the proxy's addresses/],
    [
      { trustProxy: ['127.0.0.1', 'proxy.example'] },
      /^options\.trustProxy must hold IP addresses or "unix", not "proxy\.example"/,
    ],
    [{ trustProxy: ['10.0.0.0/8'] }, /^options\.trustProxy must hold IP addresses/],
  ];
  for (const [options, message] of bad) {
    assert.throws(
      () => createHandler(db, CREDENTIALS, options),
      { name: 'TypeError', message },
      JSON.stringify(options),
    );
  }
  assert.doesNotThrow(() => createHandler(db, CREDENTIALS, { basePath: undefined, serviceName: undefined }));
});

test('an option createHandler does not know is refused, naming it and the option it misspells', (t) => {
  const db = openFixture(t);
  const bad: Array<[Record<string, unknown>, RegExp]> = [
    [{ basepath: '/kasse' }, /^options\.basepath is not an option; did you mean basePath\?$/],
    [
      { basePath: '/kasse', MaxAuthFailures: 3 },
      /^options\.MaxAuthFailures is not an option; did you mean maxAuthFailures\?$/,
    ],
    [{ maxFailures: 3 }, /^options\.maxFailures is not an option; the options are basePath, serviceName, .*, now$/],
    [{ basepath: undefined }, /^options\.basepath is not an option; did you mean basePath\?$/],
  ];
  for (const [options, message] of bad) {
    assert.throws(
      () => createHandler(db, CREDENTIALS, options as HandlerOptions),
      { name: 'TypeError', message },
      JSON.stringify(options),
    );
    // createSharedParts names a misspelt login limit alike; another option, in any case, is each
    // handler's; for a name no option has, only the login limits.
    const shared =
      'maxFailures' in options
        ? /the login limits are maxAuthFailures, .*maxQueuedHashChecks$/
        : 'basepath' in options || 'basePath' in options
          ? /^options\.base[pP]ath is not a login limit: give it to each createHandler/
          : message;
    assert.throws(() => createSharedParts(options as HandlerOptions), { name: 'TypeError', message: shared });
  }
  // Options that are no object are refused as such, not key by key ('abc' has the keys 0, 1, 2).
  for (const options of ['/kasse', ['/kasse'], 42]) {
    assert.throws(() => createHandler(db, CREDENTIALS, options as HandlerOptions), {
      name: 'TypeError',
      message: 'options must be an object',
    });
  }
  assert.doesNotThrow(() => createHandler(db, CREDENTIALS, null as unknown as HandlerOptions));
});

test('a handler given shared parts is refused a login limit of its own that differs from theirs', (t) => {
  const db = openFixture(t);
  const shared = createSharedParts({ maxAuthFailures: 3, maxHashChecks: 1 });
  assert.throws(() => createHandler(db, CREDENTIALS, { maxAuthFailures: 5 }, shared), {
    name: 'TypeError',
    message:
      'options.maxAuthFailures is 5, but the shared parts count 3: give the login limits to createSharedParts once',
  });
  assert.throws(() => createHandler(db, CREDENTIALS, { maxHashChecks: 2 }, shared), {
    name: 'TypeError',
    message: /^options\.maxHashChecks is 2, but the shared parts count 1/,
  });
  assert.doesNotThrow(() => createHandler(db, CREDENTIALS, { maxAuthFailures: 3, basePath: '/a' }, shared));
  assert.doesNotThrow(() => createHandler(db, CREDENTIALS, { basePath: '/b' }, shared));
});

test('a closed or missing database is refused at creation', () => {
  assert.throws(() => createHandler(undefined as unknown as Database.Database, CREDENTIALS), {
    name: 'TypeError',
    message: /^db must be a better-sqlite3 Database/,
  });
  const closed = new Database(':memory:');
  closed.close();
  assert.throws(() => createHandler(closed, CREDENTIALS), { name: 'TypeError', message: /^db must be open/ });
});

test('a database without the schema is refused at creation, naming what is missing', () => {
  const empty = new Database(':memory:');
  assert.throws(() => createHandler(empty, CREDENTIALS), {
    message:
      "db does not fit the schema: table or view 'entries' is missing; table or view 'categories' is missing; table or view 'payment_methods' is missing",
  });
  const partial = new Database(':memory:');
  partial.exec(`
    CREATE TABLE entries (id INTEGER PRIMARY KEY, date TEXT, amount_cents INTEGER, category_id INTEGER);
    CREATE TABLE categories (id INTEGER PRIMARY KEY, name TEXT);
    CREATE VIEW payment_methods AS SELECT 1 AS id;`);
  assert.throws(() => createHandler(partial, CREDENTIALS), {
    message:
      "db does not fit the schema: 'entries' is missing columns 'subject', 'payment_method_id'; 'payment_methods' is missing column 'name'",
  });
});

test('views with the right columns fit the schema', () => {
  const db = new Database(':memory:');
  db.exec(`
    CREATE TABLE buchung (nr INTEGER PRIMARY KEY, tag TEXT, cent INTEGER);
    CREATE VIEW entries AS SELECT nr AS id, tag AS date, cent AS amount_cents, '' AS subject,
      NULL AS category_id, NULL AS payment_method_id FROM buchung;
    CREATE VIEW categories AS SELECT 1 AS id, 'x' AS name;
    CREATE VIEW payment_methods AS SELECT 1 AS id, 'x' AS name;`);
  assert.equal(typeof createHandler(db, CREDENTIALS), 'function');
});

test('shared parts that createSharedParts did not make are refused at creation, never at the first request', (t) => {
  const db = openFixture(t);
  const misused: Array<[unknown, string]> = [
    [null, 'shared must be what createSharedParts() made'],
    ['x', 'shared must be what createSharedParts() made'],
    [[], 'shared must be what createSharedParts() made'],
    [createSharedParts, 'shared must be what createSharedParts() made'],
    [{ maxAuthFailures: 2 }, 'shared.maxAuthFailures is no part: shared must be what createSharedParts() made'],
    [{ throttle: {} }, 'shared.throttle: shared must be what createSharedParts() made'],
    [{ hashChecks: 1 }, 'shared.hashChecks: shared must be what createSharedParts() made'],
    [{ metrics: 1 }, 'shared.metrics: shared must be what createSharedParts() made'],
    [{ logins: 'x' }, 'shared.logins must be an object'],
  ];
  for (const [shared, message] of misused) {
    assert.throws(
      () => createHandler(db, CREDENTIALS, {}, shared as SharedParts),
      { name: 'TypeError', message },
      String(shared),
    );
  }
  const shared = createSharedParts({ maxAuthFailures: 2 });
  for (const given of [{}, shared, { ...shared }, { ...shared, logins: {} }]) {
    assert.doesNotThrow(() => createHandler(db, CREDENTIALS, {}, given));
  }
});

test('createSharedParts takes the login limits alone: another option, which each handler holds, is refused', () => {
  assert.throws(() => createSharedParts({ maxAuthFailures: 2, trustProxy: ['127.0.0.1'] }), {
    name: 'TypeError',
    message:
      /^options\.trustProxy is not a login limit: give it to each createHandler \(these are maxAuthFailures, .*maxQueuedHashChecks\)$/,
  });
  assert.throws(() => createSharedParts({ basePath: '/kasse' }), {
    name: 'TypeError',
    message: /^options\.basePath is not a login limit/,
  });
  assert.doesNotThrow(() => createSharedParts({ maxAuthFailures: 2, maxHashChecks: 1, authFailureWindowMs: 1000 }));
  // What SharedParts names, nothing of the command's (the counts it serves to its workers).
  assert.deepEqual(Object.keys(createSharedParts()).sort(), ['hashChecks', 'throttle']);
});
