// booking-search-server check --db FILE, as an admin runs it.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { RECOMMENDED_INDEXES } from '../lib/schema.js';
import { run } from './support/cli-helpers.js';
import { buildDatabase, databaseDir, fixtureSql, tempDir } from './support/helpers.js';

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
      "Data: fits (20 bookings looked at: dates 'YYYY-MM-DD', amounts whole cents, ids whole and unique).",
      'Index on (amount_cents, date) for one amount, or a narrow band, in a window of dates: present (entries_amount_date).',
      'Index on (date, id, amount_cents) for a wide band of amounts in a short window: present (entries_date_id_amount).',
      'The typical search (one amount in a month) uses an index: SEARCH entries USING COVERING INDEX entries_amount_date (amount_cents=? AND date>? AND date<?).',
      'A real search, ?von=2026-04-01&bis=2026-04-30&betrag=-4.35&limit=3, answers:',
      '  {"anzahl":1,"buchungen":[{"id":10,"datum":"2026-04-01","betrag":-4.35,"zweck":"Kaffee am Folgetag","kategorie":"Bewirtung","konto":"Barkasse"}]}',
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

// Views over a kassenbuch whose mapping is wrong in one way each: every one has the right
// names, and every one would answer wrongly. None may "fit".
const WRONG_MAPPINGS = [
  {
    wrong: 'integer dates',
    date: 'CAST(substr(buchungstag, 7, 4) || substr(buchungstag, 4, 2) || substr(buchungstag, 1, 2) AS INTEGER)',
    amount: 'CAST(round(-betrag_eur * 100) AS INTEGER)',
    says: /^ {2}- dates are numbers such as \d{8}, not 'YYYY-MM-DD' text: .* Give the date as text: printf\('%04d-%02d-%02d', d \/ 10000, d \/ 100 % 100, d % 100\)\.$/m,
  },
  {
    wrong: 'date-times',
    date: "substr(buchungstag, 7, 4) || '-' || substr(buchungstag, 4, 2) || '-' || substr(buchungstag, 1, 2) || 'T00:00:00'",
    amount: 'CAST(round(-betrag_eur * 100) AS INTEGER)',
    says: /^ {2}- dates carry a time, such as '\d{4}-\d\d-\d\dT00:00:00': .* Give the day alone: substr\(date, 1, 10\)\.$/m,
  },
  {
    wrong: 'REAL amounts',
    date: "substr(buchungstag, 7, 4) || '-' || substr(buchungstag, 4, 2) || '-' || substr(buchungstag, 1, 2)",
    amount: '-betrag_eur * 100',
    says: /^ {2}- amounts are REAL numbers such as -?[0-9.]+, not whole cents: .* CAST\(round\(x \* 100\) AS INTEGER\) for euros\.$/m,
  },
];

for (const { wrong, date, amount, says } of WRONG_MAPPINGS) {
  test(`a custom mapping with ${wrong} is refused by check with what to change, exit 1 (it used to "fit"), and not served`, async (t) => {
    const file = join(databaseDir(t), 'falsch.sqlite');
    const db = new Database(file);
    db.exec(fixtureSql('existing-app.sql'));
    db.exec(`CREATE VIEW kasse AS SELECT lfd_nr AS id, ${date} AS date, ${amount} AS amount_cents,
      coalesce(buchungstext, '') AS subject, kategorie_nr AS category_id, zahlungsart_nr AS payment_method_id FROM kassenbuch;
      CREATE VIEW kat AS SELECT nr AS id, bezeichnung AS name FROM kategorie;
      CREATE VIEW zahlart AS SELECT nr AS id, bezeichnung AS name FROM zahlungsart;`);
    db.close();
    const result = await run([
      'check',
      '--db',
      file,
      '--table-names',
      'entries=kasse,categories=kat,payment_methods=zahlart',
    ]);
    assert.equal(result.code, 1, result.stdout);
    assert.match(result.stdout, /^Schema: fits \(kasse: view, kat: view, zahlart: view\)\.$/m);
    assert.match(result.stdout, /^Data: does not fit \(10 bookings looked at\); the search would answer wrongly:$/m);
    assert.match(result.stdout, says);
    assert.doesNotMatch(result.stdout, /Data: fits/);
    const served = await run([
      '--db',
      file,
      '--port',
      '0',
      '--table-names',
      'entries=kasse,categories=kat,payment_methods=zahlart',
    ]);
    assert.equal(served.code, 1, 'the service refuses to start rather than answer every search wrongly');
    assert.match(served.stderr, /db's bookings do not mean what the search needs, so every answer would be wrong: /);
  });
}

test('a custom mapping under its own names fits, and check prints the answer of a real search', async (t) => {
  const file = join(tempDir(t), 'richtig.sqlite');
  const db = new Database(file);
  db.exec(fixtureSql('existing-app.sql'));
  db.exec(
    fixtureSql('existing-app-views.sql')
      .replace('CREATE VIEW entries', 'CREATE VIEW kasse')
      .replace('CREATE VIEW categories', 'CREATE VIEW kat')
      .replace('CREATE VIEW payment_methods', 'CREATE VIEW zahlart'),
  );
  db.close();
  const result = await run([
    'check',
    '--db',
    file,
    '--table-names',
    'entries=kasse,categories=kat,payment_methods=zahlart',
  ]);
  assert.equal(result.code, 0, result.stdout);
  assert.match(result.stdout, /^Data: fits \(10 bookings looked at: /m);
  assert.match(
    result.stdout,
    /^A real search, \?von=2026-04-01&bis=2026-04-30&betrag=-4\.35&limit=3, answers:\n {2}\{"anzahl":1,"buchungen":\[\{"id":6,"datum":"2026-04-01","betrag":-4\.35,"zweck":"Kaffee im April","kategorie":"Bewirtung","konto":"Barkasse"\}\]\}$/m,
  );
  const plain = await run(['check', '--db', file]);
  assert.equal(plain.code, 1, 'without the names the file does not fit');
  assert.match(plain.stdout, /^ {2}- table or view 'entries' is missing$/m);
});
