// What a served file is now (bin/books/database.ts, status()): the state the admin listener's
// /ready and /metrics report for each book, followed through a restore, a deletion and a
// file that is no database. The CLI's lines for the same story are test/cli-database.test.ts's.

import assert from 'node:assert/strict';
import { copyFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { watchDatabase } from '../bin/books/database.js';
import type { DatabaseStatus } from '../bin/books/status.js';
import { isNotReadableNow } from '../lib/errors.js';
import { createHandler } from '../lib/handler.js';
import type { SearchQuery } from '../lib/query.js';
import type { SearchTurns } from '../lib/search-endpoint.js';
import { AUTH, buildDatabase, CREDENTIALS, get, serve, tempDir } from './support/helpers.js';

const MARCH: SearchQuery = {
  von: '2026-03-01',
  bis: '2026-03-31',
  betragCents: -1250,
  toleranzCents: 0,
  waehrung: 'EUR',
  limit: 0,
};

async function until(status: () => DatabaseStatus, state: DatabaseStatus['state']): Promise<DatabaseStatus> {
  const deadline = Date.now() + 3_000;
  while (status().state !== state) {
    if (Date.now() > deadline) assert.fail(`still ${JSON.stringify(status())}, not ${state}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return status();
}

test('status(): serving, replaced (counted), missing with the reason, unusable with the reason, serving again', async (t) => {
  const file = buildDatabase(t);
  const lines: string[] = [];
  const started = Date.now();
  const served = watchDatabase(
    file,
    { app: undefined, tables: {} },
    (search, _app, onError) => createHandler(search, CREDENTIALS, { onError }),
    (line) => lines.push(line),
    () => {},
  );
  t.after(() => served.close());
  await served.ready;
  const first = served.status();
  assert.deepEqual({ ...first, since: 0 }, { state: 'serving', reason: undefined, since: 0, replaced: 0 });
  assert.ok(first.since >= started && first.since <= Date.now());

  const backup = join(tempDir(t), 'backup.sqlite');
  copyFileSync(file, backup);
  const db = new Database(backup);
  db.exec("INSERT INTO entries (date, amount_cents) VALUES ('2026-03-03', 1250)");
  db.close();
  renameSync(backup, file);
  const deadline = Date.now() + 3_000;
  while (served.status().replaced === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  assert.deepEqual({ ...served.status(), since: 0 }, { state: 'serving', reason: undefined, since: 0, replaced: 1 });

  rmSync(file);
  const missing = await until(served.status, 'missing');
  assert.match(missing.reason ?? '', /no such file/);
  assert.ok(missing.since > first.since);

  writeFileSync(file, 'kaputt'.repeat(1000));
  const unusable = await until(served.status, 'unusable');
  assert.match(unusable.reason ?? '', /is not a SQLite database/);

  rmSync(file);
  copyFileSync(buildDatabase(t), file);
  const again = await until(served.status, 'serving');
  assert.equal(again.reason, undefined);
  assert.equal(again.replaced, 2, 'a file back after a gap is another file served');
  assert.ok(lines.some((line) => line.includes('is gone')));
});

test('a search the stand-in took while the file was opened gets the 500 with Retry-After even when the file is served before it is answered', async (t) => {
  const file = buildDatabase(t);
  // Locked: the file is waited for, and the stand-in answers until the lock is released.
  const writer = new Database(file);
  t.after(() => writer.close());
  writer.exec('BEGIN EXCLUSIVE');
  let standIn: SearchTurns | undefined;
  let answered: Promise<unknown> | undefined;
  const served = watchDatabase(
    file,
    { app: undefined, tables: {} },
    (search, _app, onError, isStandIn) => {
      if (isStandIn === true) standIn = search;
      // The file's own handler is built the moment before it serves: a search the stand-in
      // queues now is answered after the switch.
      else if (standIn !== undefined) {
        const stand = standIn;
        answered = new Promise((resolve) => stand.queue(MARCH, (result) => resolve(result.ok ? 'ok' : result.error)));
      }
      return createHandler(search, CREDENTIALS, { onError });
    },
    () => {},
    () => {},
  );
  t.after(() => served.close());
  await served.ready;
  const url = await serve(t, served.handler);
  assert.equal((await get(`${url}/api/v1/status`, { authorization: AUTH })).status, 200);
  assert.ok(standIn !== undefined, 'the stand-in answered');
  writer.exec('COMMIT');
  await until(served.status, 'serving');
  const error = await answered;
  assert.ok(isNotReadableNow(error), `answered with Retry-After: ${String(error)}`);
});
