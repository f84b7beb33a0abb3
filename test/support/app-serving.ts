// An application's file served by the handler with its `app` option, for the test/app-*.test.ts files.

import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import type Database from 'better-sqlite3';
import { createHandler } from '../../lib/index.js';
import { run } from './cli-helpers.js';
import { AUTH, CREDENTIALS, request, serve } from './helpers.js';

/** Serves `db` with `app` on 127.0.0.1; the returned search asserts a 200 and gives the parsed body. */
export async function searchFor(
  t: TestContext,
  db: Database.Database,
  app: string,
): Promise<(query: string) => Promise<unknown>> {
  const origin = await serve(t, createHandler(db, CREDENTIALS, { app }));
  return async (query) => {
    const reply = await request(`${origin}/api/v1/buchungen?${query}`, { headers: { authorization: AUTH } });
    assert.equal(reply.status, 200, reply.body);
    return JSON.parse(reply.body);
  };
}

/**
 * An amount that is not whole cents: the search `query` is a 500 with the reason given to
 * `onError`, and `check --app` refuses `file`. Returns check's output for the application's
 * own wording.
 */
export async function assertNotWholeCents(
  t: TestContext,
  db: Database.Database,
  file: string,
  app: string,
  query: string,
): Promise<string> {
  const errors: unknown[] = [];
  const origin = await serve(t, createHandler(db, CREDENTIALS, { app, onError: (e) => errors.push(e) }));
  const reply = await request(`${origin}/api/v1/buchungen?${query}`, { headers: { authorization: AUTH } });
  assert.equal(reply.status, 500);
  assert.deepEqual(JSON.parse(reply.body), { fehler: 'Interner Fehler bei der Buchungssuche.' });
  assert.match(String(errors[0]), /not a whole number of cents/);
  const check = await run(['check', '--db', file, '--app', app]);
  assert.equal(check.code, 1, check.stdout);
  return check.stdout;
}
