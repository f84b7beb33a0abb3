// The CLI's connection reads the file through a read-only memory map: a count of every
// booking then reads no page again after the application commits. The map must survive
// the application shrinking and growing the file between two searches.

import assert from 'node:assert/strict';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { MMAP_BYTES, openDatabase } from '../../bin/database-file.js';
import { createBookingSearch } from '../../lib/search/index.js';
import { WIDEST as EVERY_BOOKING } from '../support/cash-book.js';
import { fixtureSql, tempDir } from '../support/helpers.js';

const WIDEST = { ...EVERY_BOOKING, limit: 10 };

test("the CLI's connection judges the file through a small page cache, then reads through a memory map of up to 1 GiB", (t) => {
  const file = join(tempDir(t), 'kasse.sqlite');
  const app = new Database(file);
  app.exec(fixtureSql('schema.sql'));
  app.close();
  const opened = openDatabase(file, (db) => [
    db.pragma('mmap_size', { simple: true }),
    db.pragma('cache_size', { simple: true }),
  ]);
  assert.ok(opened.readable);
  t.after(() => opened.db.close());
  // The first reading of the file (the judgement of its bookings) goes through a small
  // page cache, so that the sample's pages do not stay resident; then the map is on.
  assert.deepEqual(opened.value, [0, -64]);
  assert.equal(opened.db.pragma('mmap_size', { simple: true }), MMAP_BYTES);
  assert.equal(opened.db.pragma('cache_size', { simple: true }), -2000);
  assert.equal(MMAP_BYTES, 1024 ** 3);
});

test('a file the application shrinks (DELETE, VACUUM) and grows between searches is read whole through the map, and the process lives', (t) => {
  const file = join(tempDir(t), 'kasse.sqlite');
  const app = new Database(file);
  t.after(() => app.close());
  app.exec(fixtureSql('schema.sql'));
  const grow = app.prepare(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 20000)
    INSERT INTO entries (date, amount_cents, subject) SELECT '2026-01-01', i, printf('Buchung %d mit etwas Text', i) FROM n`);
  grow.run();
  const opened = openDatabase(file, (db) => createBookingSearch(db));
  assert.ok(opened.readable);
  t.after(() => opened.db.close());
  const search = opened.value;
  assert.equal(search(WIDEST).count, 20_000); // the map now spans the whole file
  const large = statSync(file).size;
  for (let round = 1; round <= 3; round += 1) {
    app.exec('DELETE FROM entries WHERE id % 10 <> 0; VACUUM');
    assert.ok(statSync(file).size < large / 2, 'the file shrank under the map');
    assert.equal(search(WIDEST).count, app.prepare('SELECT count(*) FROM entries').pluck().get());
    grow.run();
    assert.equal(search(WIDEST).count, app.prepare('SELECT count(*) FROM entries').pluck().get());
  }
});
