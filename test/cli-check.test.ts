// booking-search-server check --db FILE, as an admin runs it.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmodSync, chownSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { gzipSync } from 'node:zlib';
import Database from 'better-sqlite3';
import { CASES, writeGnuCashBook } from '../fixtures/ledger-books.js';
import { RECOMMENDED_INDEXES } from '../lib/schema.js';
import { assertFails, cleanEnv, directoryRefusal, run, USER } from './support/cli-helpers.js';
import { buildDatabase, databaseDir, fixtureSql, tempDir } from './support/helpers.js';

test('a misspelt TZ is warned of first, as the service warns of it, with the nearest name; the file still fits', async (t) => {
  const result = await run(['check', '--db', buildDatabase(t)], { ...cleanEnv(USER), TZ: 'Europe/Berln' });
  assert.equal(result.code, 0, result.stderr);
  assert.match(
    result.stdout,
    /^warning: TZ=Europe\/Berln names no time zone Node\.js knows: .*; did you mean Europe\/Berlin\?\nDatabase: /,
  );
});

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
  const file = join(databaseDir(t), 'ohne-index.sqlite');
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
  assert.equal(usage.stderr, 'booking-search-server: check needs --db FILE or --config FILE (see --help)\n');
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
    serves: "dates are numbers, not 'YYYY-MM-DD' text: ",
  },
  {
    wrong: 'date-times',
    date: "substr(buchungstag, 7, 4) || '-' || substr(buchungstag, 4, 2) || '-' || substr(buchungstag, 1, 2) || 'T00:00:00'",
    amount: 'CAST(round(-betrag_eur * 100) AS INTEGER)',
    says: /^ {2}- dates carry a time, such as '\d{4}-\d\d-\d\dT00:00:00': .* Give the day alone: substr\(date, 1, 10\)\.$/m,
    serves: 'dates carry a time: ',
  },
  {
    wrong: 'REAL amounts',
    date: "substr(buchungstag, 7, 4) || '-' || substr(buchungstag, 4, 2) || '-' || substr(buchungstag, 1, 2)",
    amount: '-betrag_eur * 100',
    says: /^ {2}- amounts are REAL numbers such as -?[0-9.]+, not whole cents: .* CAST\(round\(x \* 100\) AS INTEGER\) for euros\.$/m,
    serves: 'some amounts are REAL numbers, not whole cents: ',
  },
];

/** The views of the custom mappings below, under their own names. */
const OWN_NAMES = ['--table-names', 'entries=kasse,categories=kat,payment_methods=zahlart'];

for (const { wrong, date, amount, says, serves } of WRONG_MAPPINGS) {
  test(`a custom mapping with ${wrong} is refused by check with what to change and an example, exit 1 (it used to "fit"), and not served, the refusal naming no value`, async (t) => {
    const file = join(databaseDir(t), 'falsch.sqlite');
    const db = new Database(file);
    db.exec(fixtureSql('existing-app.sql'));
    db.exec(`CREATE VIEW kasse AS SELECT lfd_nr AS id, ${date} AS date, ${amount} AS amount_cents,
      coalesce(buchungstext, '') AS subject, kategorie_nr AS category_id, zahlungsart_nr AS payment_method_id FROM kassenbuch;
      CREATE VIEW kat AS SELECT nr AS id, bezeichnung AS name FROM kategorie;
      CREATE VIEW zahlart AS SELECT nr AS id, bezeichnung AS name FROM zahlungsart;`);
    db.close();
    const result = await run(['check', '--db', file, ...OWN_NAMES]);
    assert.equal(result.code, 1, result.stdout);
    assert.match(result.stdout, /^Schema: fits \(kasse: view, kat: view, zahlart: view\)\.$/m);
    assert.match(result.stdout, /^Data: does not fit \(10 bookings looked at\); the search would answer wrongly:$/m);
    assert.match(result.stdout, says);
    assert.doesNotMatch(result.stdout, /Data: fits/);
    const served = await run(['--db', file, '--port', '0', ...OWN_NAMES]);
    assert.equal(served.code, 1, 'the service refuses to start rather than answer every search wrongly');
    const sentence = result.stdout.match(/^ {2}- (.*)$/m)?.[1] as string;
    assert.match(sentence, / such as /);
    // check's sentence less its example: what is wrong and what to do, word for word; the
    // whole line but its time.
    const said = `${file} cannot be served exactly: ${serves}${sentence.slice(sentence.indexOf(': ') + 2)} booking-search-server check names examples from the bookings.\n`;
    assert.ok(served.stderr.includes(` booking-search-server: ${said}`), `${said}${served.stderr}`);
  });
}

test('a custom mapping under its own names fits, and check prints the answer of a real search', async (t) => {
  const file = join(databaseDir(t), 'richtig.sqlite');
  const db = new Database(file);
  db.exec(fixtureSql('existing-app.sql'));
  db.exec(
    fixtureSql('existing-app-views.sql')
      .replace('CREATE VIEW entries', 'CREATE VIEW kasse')
      .replace('CREATE VIEW categories', 'CREATE VIEW kat')
      .replace('CREATE VIEW payment_methods', 'CREATE VIEW zahlart'),
  );
  db.close();
  const result = await run(['check', '--db', file, ...OWN_NAMES]);
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

test("another user's file in a directory the service could write: check says the refusal the service says, in the same words, and exits 1; as root the mode bits decide; root's own file fits", async (t) => {
  assert.equal(process.getuid?.(), 0, 'needs root to judge a directory by its mode bits (CI runs as root)');
  const nobody = Number(execFileSync('id', ['-u', 'nobody'], { encoding: 'utf8' }).trim());
  const file = buildDatabase(t);
  const dir = dirname(file);
  chownSync(file, nobody, 0);
  chmodSync(dir, 0o755);
  const refusal = directoryRefusal(file, dir, 'root (uid 0)', `nobody (uid ${nobody})`);
  const checked = await run(['check', '--db', file]);
  assert.equal(checked.code, 1, checked.stdout);
  const lines = checked.stdout.split('\n');
  assert.match(checked.stdout, /^Schema: fits /m, 'the rest of the report is still there');
  assert.match(checked.stdout, /^A real search, /m);
  assert.equal(lines.at(-2), `Cannot be served: ${refusal}`, 'said last');
  assert.equal(lines.at(-1), '');
  assertFails(await run(['--db', file, '--port', '0']), 1, `booking-search-server: ${refusal}`);
  // A file that does not fit is refused for both reasons; exit 1 either way.
  const foreign = await run(['check', '--db', file, '--app', 'gnucash']);
  assert.equal(foreign.code, 1);
  assert.equal(foreign.stdout.split('\n').at(-2), `Cannot be served: ${refusal}`);
  chmodSync(dir, 0o555);
  const fits = await run(['check', '--db', file]);
  assert.equal(fits.code, 0, fits.stdout);
  assert.doesNotMatch(fits.stdout, /Cannot be served/);
  assert.deepEqual(readdirSync(dir), ['kasse.sqlite'], 'nothing created');
  // The owner rule: root's own file, in the directory root may write.
  chownSync(file, 0, 0);
  chmodSync(dir, 0o700);
  const own = await run(['check', '--db', file]);
  assert.equal(own.code, 0, own.stdout);
  assert.doesNotMatch(own.stdout, /Cannot be served/);
});

test('a file that is not a database is told so first, in one line, and not the refusal of its directory', async (t) => {
  assert.equal(process.getuid?.(), 0, 'needs root to give the file to another user (CI runs as root)');
  const nobody = Number(execFileSync('id', ['-u', 'nobody'], { encoding: 'utf8' }).trim());
  const dir = tempDir(t);
  chmodSync(dir, 0o755);
  const readme = join(dir, 'README.md');
  writeFileSync(readme, '# Kasse\n\nNotizen.\n');
  for (const owner of [0, nobody]) {
    chownSync(readme, owner, 0);
    assertFails(
      await run(['--db', readme, '--port', '0']),
      1,
      `booking-search-server: ${readme} is not a SQLite database`,
    );
    const checked = await run(['check', '--db', readme]);
    assert.equal(checked.code, 1);
    assert.equal(checked.stdout, `Database: ${readme}\nCannot check: ${readme} is not a SQLite database\n`);
  }
});

test("a GnuCash book in SQLite's rollback-journal mode: check warns that GnuCash's saves fail while a search reads it and names the command that switches it to WAL, its path one shell word; in WAL mode it says nothing of it", async (t) => {
  const file = join(tempDir(t), "kasse 'Nord'.gnucash");
  writeGnuCashBook(file, CASES);
  const warning =
    "Warning: the book is in SQLite's rollback-journal mode: it is not searched while GnuCash has it open, for a GnuCash" +
    ' save that meets a search fails at once ("database is locked") and GnuCash\'s session then fails its' +
    ' later saves too: run check and the service with GnuCash closed, and switch the book to WAL once:' +
    ` sqlite3 '${file.replace("'Nord'", "'\\''Nord'\\''")}' "PRAGMA journal_mode=WAL" (docs/applications.md, GnuCash).`;
  const rollback = await run(['check', '--db', file]);
  assert.equal(rollback.code, 0, rollback.stdout);
  assert.match(rollback.stdout, /^Journal: rollback journal \(WAL is off\); no journal file\.$/m);
  assert.deepEqual(
    rollback.stdout.split('\n').filter((line) => line.startsWith('Warning:')),
    [warning],
  );
  // The command as the admin pastes it into a shell.
  const pasted = /once: (sqlite3 .*) \(docs/.exec(rollback.stdout)?.[1] as string;
  assert.equal(execFileSync('sh', ['-c', pasted], { encoding: 'utf8' }).trim(), 'wal');
  const wal = await run(['check', '--db', file]);
  assert.equal(wal.code, 0, wal.stdout);
  assert.match(wal.stdout, /^Journal: WAL/m);
  assert.doesNotMatch(wal.stdout, /Warning|rollback-journal/);
});

// Each application's own empty tables, from its DDL: enough to be recognised.
const TITLES: Record<string, string> = {
  actual: 'Actual',
  mmex: 'Money Manager Ex',
  gnucash: 'GnuCash',
  kmymoney: 'KMyMoney',
  own: 'the own schema',
};
const APPLICATION_FILES = [
  { fixture: 'gnucash.sql', name: 'gnucash', wrong: ['kmymoney', 'mmex'] },
  { fixture: 'kmymoney.sql', name: 'kmymoney', wrong: ['gnucash', 'actual'] },
  { fixture: 'mmex-tables.sql', name: 'mmex', wrong: ['actual', 'own'] },
  { fixture: 'schema.sql', name: 'own', wrong: ['mmex'] },
];

for (const { fixture, name, wrong } of APPLICATION_FILES) {
  const title = TITLES[name] as string;
  test(`a file with the tables of ${title} under the wrong --app (${wrong.join(', ')}): the service and check list what is missing and name --app ${name}, as without the flag`, async (t) => {
    const file = buildDatabase(t, [fixture]);
    for (const app of wrong) {
      const asked = app === 'own' ? 'the schema' : `the tables of ${TITLES[app]}`;
      assertFails(
        await run(['--db', file, '--port', '0', '--app', app]),
        1,
        new RegExp(
          `^booking-search-server: \\S+ does not fit ${asked}: .* \\(the file has the tables of ${title}: serve it with --app ${name}\\)$`,
        ),
      );
      const checked = await run(['check', '--db', file, '--app', app]);
      assert.equal(checked.code, 1);
      const lines = checked.stdout.split('\n');
      const missing = lines.findIndex((line) => line.endsWith('does not fit. Missing:'));
      const hint = lines.findIndex((line) => line.startsWith('The file has the tables of'));
      assert.ok(missing > 0 && hint > missing, checked.stdout);
      assert.ok(
        lines.slice(missing + 1, hint).every((line) => line.startsWith('  - ')),
        checked.stdout,
      );
      assert.equal(lines[hint], `The file has the tables of ${title}: serve it with --app ${name}.`);
    }
  });
}

test('an older Money Manager Ex file, without the trash column of schema 16: check names the application and, with --app mmex, the column', async (t) => {
  const file = join(databaseDir(t), 'alt.mmb');
  const db = new Database(file);
  db.exec(fixtureSql('mmex-tables.sql').replace(/^, DELETEDTIME TEXT$/m, ''));
  assert.equal(
    db.prepare("SELECT count(*) FROM pragma_table_info('CHECKINGACCOUNT_V1') WHERE name = 'DELETEDTIME'").pluck().get(),
    0,
  );
  db.close();
  const plain = await run(['check', '--db', file]);
  assert.equal(plain.code, 1);
  assert.match(
    plain.stdout,
    /^The file has the tables of Money Manager Ex, but not every column the service reads \(a file of an older version\?\): check --app mmex names them\.$/m,
  );
  const asked = await run(['check', '--db', file, '--app', 'mmex']);
  assert.equal(asked.code, 1);
  assert.match(
    asked.stdout,
    /^Tables of Money Manager Ex: does not fit\. Missing:\n {2}- 'CHECKINGACCOUNT_V1' is missing column 'DELETEDTIME'$/m,
  );
  assertFails(
    await run(['--db', file, '--port', '0']),
    1,
    /^booking-search-server: \S+ does not fit the schema: .* \(the file has the tables of Money Manager Ex, but not every column the service reads, as a file of an older version may: check --app mmex names them\)$/,
  );
});

test('a GnuCash book in XML, gzip-compressed or not, and a KMyMoney XML file: "not a SQLite database" says how to save it as SQLite, in one line', async (t) => {
  const dir = tempDir(t);
  const gnucash =
    '<?xml version="1.0" encoding="utf-8" ?>\n<gnc-v2\n     xmlns:gnc="http://www.gnucash.org/XML/gnc">\n<gnc:count-data cd:type="book">1</gnc:count-data>\n';
  const kmymoney = '<?xml version="1.0" encoding="utf-8"?>\n<!DOCTYPE KMYMONEY-FILE>\n<KMYMONEY-FILE>\n <FILEINFO>\n';
  const files = {
    'kasse.gnucash': gzipSync(gnucash + 'x'.repeat(100_000)),
    'kasse-xml.gnucash': Buffer.from(gnucash),
    'kasse.kmy': gzipSync(kmymoney),
    'anderes.gz': gzipSync('nichts'),
  };
  for (const [name, content] of Object.entries(files)) writeFileSync(join(dir, name), content);
  chmodSync(dir, 0o555);
  const saveGnuCash =
    "it is a GnuCash book in XML (GnuCash's default format); save it in GnuCash as SQLite (File › Save As…, Data Format sqlite3) and serve that file with --app gnucash";
  for (const name of ['kasse.gnucash', 'kasse-xml.gnucash']) {
    const file = join(dir, name);
    assertFails(
      await run(['--db', file, '--app', 'gnucash']),
      1,
      `booking-search-server: ${file} is not a SQLite database: ${saveGnuCash}`,
    );
    const checked = await run(['check', '--db', file]);
    assert.equal(checked.code, 1);
    assert.match(checked.stdout, /^Cannot check: .* is not a SQLite database: it is a GnuCash book in XML /m);
  }
  assertFails(
    await run(['--db', join(dir, 'kasse.kmy'), '--app', 'kmymoney']),
    1,
    `booking-search-server: ${join(dir, 'kasse.kmy')} is not a SQLite database: it is a KMyMoney file in XML (KMyMoney's default format); save it in KMyMoney as SQLite (File › Save As…, SQLite) and serve that file with --app kmymoney`,
  );
  assertFails(
    await run(['--db', join(dir, 'anderes.gz')]),
    1,
    `booking-search-server: ${join(dir, 'anderes.gz')} is not a SQLite database: it is gzip-compressed, as GnuCash and KMyMoney save a book by default; save it as SQLite in the application (GnuCash: File › Save As…, Data Format sqlite3; KMyMoney: File › Save As…, SQLite) and serve that file`,
  );
});

test('an Actual budget folder given instead of its db.sqlite: "not a regular file" names the db.sqlite inside, in one line; a folder without one is told as before', async (t) => {
  const budget = join(tempDir(t), 'My-Finances-1a2b3c4');
  execFileSync('mkdir', ['-p', budget]);
  new Database(join(budget, 'db.sqlite')).close();
  const said = `cannot open database ${budget}: not a regular file (a folder; Actual keeps each budget as a folder, and the file to serve is ${budget}/db.sqlite: --db ${budget}/db.sqlite --app actual)`;
  assertFails(await run(['--db', budget, '--app', 'actual']), 1, `booking-search-server: ${said}`);
  const checked = await run(['check', '--db', budget]);
  assert.equal(checked.code, 1);
  assert.equal(checked.stdout, `Database: ${budget}\nCannot check: ${said}\n`);
  const empty = tempDir(t);
  assertFails(
    await run(['--db', empty]),
    1,
    `booking-search-server: cannot open database ${empty}: not a regular file`,
  );
});

test('a book of one booking: check says "1 booking looked at", whether it fits or not', async (t) => {
  const file = buildDatabase(t);
  const db = new Database(file);
  db.exec('DELETE FROM entries WHERE id <> 10');
  db.close();
  const fits = await run(['check', '--db', file]);
  assert.equal(fits.code, 0, fits.stdout);
  assert.match(fits.stdout, /^Data: fits \(1 booking looked at: /m);
  const writer = new Database(file);
  writer.exec('UPDATE entries SET amount_cents = 435.5');
  writer.close();
  const wrong = await run(['check', '--db', file]);
  assert.equal(wrong.code, 1, wrong.stdout);
  assert.match(wrong.stdout, /^Data: does not fit \(1 booking looked at\); the search would answer wrongly:$/m);
});

test('bookings dated a day the calendar lacks (2026-02-29): check names the first three as their owner finds them (date, account, zweck, id) and how many; the start says how many, no value', async (t) => {
  const file = buildDatabase(t);
  const writer = new Database(file);
  writer.exec(`INSERT INTO entries (id, date, amount_cents, subject, category_id, payment_method_id) VALUES
    (9001, '2026-02-29', 4711, 'Tankquittung Schaltjahr?', 1, 1), (9002, '2025-02-29', 100, 'Porto', 1, NULL),
    (9003, '2026-02-30', 200, '', 1, 1), (9004, '2026-02-31', 300, 'Vierte', 1, 1)`);
  writer.close();
  const checked = await run(['check', '--db', file]);
  assert.equal(checked.code, 1, checked.stdout);
  // The sample is read in the order of the (date, id, amount_cents) index.
  assert.match(
    checked.stdout,
    /^ {2}- 4 of 24 bookings have a date that is no day of the calendar \(the booking \('Porto', id 9002\) has the date '2025-02-29', not a day of the calendar as YYYY-MM-DD; the booking in 'Barkasse' \('Tankquittung Schaltjahr\?', id 9001\) has the date '2026-02-29', not a day of the calendar as YYYY-MM-DD; the booking in 'Barkasse' \(id 9003\) has the date '2026-02-30', not a day of the calendar as YYYY-MM-DD; and 1 more\): a search would answer a day that does not exist\. Correct those bookings\.$/m,
  );
  const alone = await run(['--db', file, '--port', '0']);
  assertFails(
    alone,
    1,
    `booking-search-server: ${file} cannot be served exactly: 4 of 24 bookings have a date that is no day of the calendar: a search would answer a day that does not exist. Correct those bookings. booking-search-server check names examples from the bookings.`,
  );
});
