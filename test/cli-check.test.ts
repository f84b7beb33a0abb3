// booking-search-server check --db FILE, as an admin runs it.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { RECOMMENDED_INDEXES } from '../lib/schema.js';
import { run } from './cli-helpers.js';
import { buildDatabase, fixtureSql, tempDir } from './helpers.js';

test('a fitting database: the count, the dates, the indexes, the plan; exit 0', async (t) => {
  const file = buildDatabase(t);
  const result = await run(['check', '--db', file]);
  assert.equal(result.code, 0, result.stderr);
  assert.equal(
    result.stdout,
    [
      `Database: ${file}`,
      'Journal: rollback journal (WAL is off); no journal file.',
      'Schema: fits (categories: table, entries: table, payment_methods: table).',
      'Bookings: 20, dated 2024-02-29 to 2026-04-01.',
      'Index on (amount_cents, date) for one amount, or a narrow band, in a window of dates: present (entries_amount_date).',
      'Index on (date, id, amount_cents) for a wide band of amounts in a short window: present (entries_date_id_amount).',
      'The typical search (one amount in a month) uses an index: SEARCH entries USING COVERING INDEX entries_amount_date (amount_cents=? AND date>? AND date<?).',
      '',
    ].join('\n'),
  );
});

test('missing indexes are named with the CREATE INDEX to run; the file is not changed', async (t) => {
  const file = join(tempDir(t), 'ohne-index.sqlite');
  const db = new Database(file);
  db.exec(fixtureSql('schema.sql').replace(/^CREATE INDEX.*$/gm, ''));
  db.close();
  const before = readFileSync(file);
  const result = await run(['check', '--db', file]);
  assert.equal(result.code, 0);
  assert.match(result.stdout, /^Bookings: none\.$/m);
  assert.match(
    result.stdout,
    /^Index on \(amount_cents, date\) .*: missing\. To add it .*: CREATE INDEX entries_amount_date ON entries \(amount_cents, date\);$/m,
  );
  assert.match(
    result.stdout,
    /^Index on \(date, id, amount_cents\) .*: missing\. To add it .*: CREATE INDEX entries_date_id_amount ON entries \(date, id, amount_cents\);$/m,
  );
  assert.match(
    result.stdout,
    /^The typical search \(one amount in a month\) reads every booking: SCAN entries\. It will be slow on a large book\.$/m,
  );
  assert.deepEqual(readFileSync(file), before);
});

test('a database that does not fit: what is missing, exit 1', async (t) => {
  const file = join(tempDir(t), 'fremd.sqlite');
  new Database(file)
    .exec('CREATE TABLE entries (id INTEGER PRIMARY KEY, date TEXT); CREATE TABLE categories (id INTEGER, name TEXT)')
    .close();
  const result = await run(['check', '--db', file]);
  assert.equal(result.code, 1);
  assert.equal(
    result.stdout.split('\n').slice(2, 5).join('\n'),
    [
      'Schema: does not fit. Missing:',
      "  - 'entries' is missing columns 'amount_cents', 'subject', 'category_id', 'payment_method_id'",
      "  - table or view 'payment_methods' is missing",
    ].join('\n'),
  );
  const missing = await run(['check', '--db', join(tempDir(t), 'nix.sqlite')]);
  assert.equal(missing.code, 1);
  assert.match(missing.stdout, /^Cannot check: cannot open database .*nix\.sqlite: no such file$/m);
  const usage = await run(['check']);
  assert.equal(usage.code, 2);
  assert.equal(usage.stderr, 'booking-search-server: check needs --db FILE (see --help)\n');
});

test('an existing application served through views: fits, and the plan shows whether its index is there', async (t) => {
  const file = buildDatabase(t, ['existing-app.sql', 'existing-app-views.sql']);
  const result = await run(['check', '--db', file]);
  assert.equal(result.code, 0);
  assert.match(result.stdout, /^Schema: fits \(categories: view, entries: view, payment_methods: view\)\.$/m);
  assert.match(result.stdout, /^Bookings: 10, dated 2026-02-28 to 2026-04-01\.$/m);
  assert.match(
    result.stdout,
    /^Indexes: entries is a view, so the search uses the indexes of the tables behind it\.$/m,
  );
  assert.match(result.stdout, /uses an index: SEARCH kassenbuch USING COVERING INDEX kassenbuch_cents_date/);
});

test('the recommended indexes are the ones fixtures/schema.sql creates', () => {
  const created = [...fixtureSql('schema.sql').matchAll(/^CREATE INDEX (\w+) ON entries \(([^)]*)\);$/gm)].map((m) => ({
    name: m[1],
    columns: m[2]?.split(', '),
  }));
  assert.deepEqual(
    created,
    RECOMMENDED_INDEXES.map(({ name, columns }) => ({ name, columns: [...columns] })),
  );
});
