// The CLI's connection reads the file with read() into SQLite's page cache, never through a
// memory map: a file truncated or overwritten in place under a map ends the process with
// SIGBUS (test/cli-database.test.ts overwrites it under the running command). Its reads
// must follow the application shrinking and growing the file between two searches. A lock
// another program holds is explained with the tools of the platform the service runs on.

import assert from 'node:assert/strict';
import fs, { type Mode, type OpenMode, type PathLike, statSync } from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import { delimiter, join } from 'node:path';
import { type TestContext, test } from 'node:test';
import Database from 'better-sqlite3';
import {
  describeDatabaseError,
  ensureDatabaseFile,
  heldExclusively,
  notReadableNow,
  openDatabase,
} from '../../bin/files/database-file.js';
import { isNotReadableNow } from '../../lib/errors.js';
import { createBookingSearch } from '../../lib/search/index.js';
import { WIDEST as EVERY_BOOKING } from '../support/cash-book.js';
import { fixtureSql, tempDir } from '../support/helpers.js';

const WIDEST = { ...EVERY_BOOKING, limit: 10 };

test("the CLI's connection judges the file through a small page cache, then reads without a memory map (mmap_size 0)", (t) => {
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
  // page cache, so that the sample's pages do not stay resident; no map, ever.
  assert.deepEqual(opened.value, [0, -64]);
  assert.equal(opened.db.pragma('mmap_size', { simple: true }), 0);
  assert.equal(opened.db.pragma('cache_size', { simple: true }), -2000);
  const book = openDatabase(file, () => undefined, false, 256);
  assert.ok(book.readable);
  t.after(() => book.db.close());
  assert.equal(book.db.pragma('cache_size', { simple: true }), -256, "a book's own cache");
});

test('a file the application shrinks (DELETE, VACUUM) and grows between searches is read whole, and the process lives', (t) => {
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
  assert.equal(search(WIDEST).count, 20_000);
  const large = statSync(file).size;
  for (let round = 1; round <= 3; round += 1) {
    app.exec('DELETE FROM entries WHERE id % 10 <> 0; VACUUM');
    assert.ok(statSync(file).size < large / 2, 'the file shrank under the open connection');
    assert.equal(search(WIDEST).count, app.prepare('SELECT count(*) FROM entries').pluck().get());
    grow.run();
    assert.equal(search(WIDEST).count, app.prepare('SELECT count(*) FROM entries').pluck().get());
  }
});

test("another program's lock says how to find the process that holds the file with the platform's own tools", () => {
  const busy = Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' });
  const hint = (file: string, platform: NodeJS.Platform): string | undefined =>
    /\(if it lasts, (.*)\)$/.exec(notReadableNow(file, busy, platform)?.explanation ?? '')?.[1];
  assert.equal(
    hint("/srv/kasse/o'brien.sqlite", 'linux'),
    "see which process holds the file: fuser -v '/srv/kasse/o'\\''brien.sqlite'",
  );
  assert.equal(hint('/Users/me/Kasse.mmb', 'darwin'), 'see which process holds the file: lsof /Users/me/Kasse.mmb');
  assert.equal(
    hint('C:\\temp\\kasse.sqlite', 'win32'),
    'close the application, or find the process that holds the file: Resource Monitor (resmon) › CPU › Associated Handles, search kasse.sqlite',
  );
});

/** Has this process's opens of `file` fail as Windows' do: `code` where POSIX would read it. */
function openFails(t: TestContext, file: string, code: string): void {
  const open = fs.openSync;
  t.mock.method(fs, 'openSync', (path: PathLike, flags: OpenMode, mode?: Mode | null) => {
    if (path === file) throw Object.assign(new Error(`${code}: simulated, open '${file}'`), { code });
    return open(path, flags, mode);
  });
  syncBuiltinESMExports();
  t.after(() => {
    t.mock.restoreAll();
    syncBuiltinESMExports();
  });
}

function writeBook(t: TestContext, wal = false): string {
  const file = join(tempDir(t), 'kasse.sqlite');
  const app = new Database(file);
  app.exec(fixtureSql('schema.sql'));
  if (wal) app.pragma('journal_mode = WAL');
  app.close();
  return file;
}

test('a book Windows will not let the service open (EPERM, an access list) is a denied read, not "not a SQLite database"', (t) => {
  const file = writeBook(t);
  openFails(t, file, 'EPERM');
  assert.throws(
    () => ensureDatabaseFile(file),
    (error: Error) => error.message.startsWith(`cannot open database ${file}: permission denied: `),
  );
  assert.throws(() => openDatabase(file, () => undefined), /^Error: cannot open database .*: permission denied: /);
});

test('a book another program holds open exclusively (EBUSY, a sharing violation) is waited for as a lock, not "not a SQLite database"', (t) => {
  const file = writeBook(t);
  openFails(t, file, 'EBUSY');
  const opened = openDatabase(file, () => undefined);
  assert.equal(opened.readable, false);
  assert.deepEqual(opened.readable ? undefined : opened.state, heldExclusively(file));
  // Told as a lock is: the file is waited for, its searches answered with Retry-After.
  assert.equal(heldExclusively(file).lock, true);
  assert.ok(isNotReadableNow({ code: heldExclusively(file).code }));
  assert.equal(
    heldExclusively('C:\\Buchhaltung\\kasse.sqlite', 'win32').explanation,
    'another program holds the file open exclusively (EBUSY, a sharing violation: no other program may open it meanwhile); this passes when that program closes it (if it lasts, close the application, or find the process that holds the file: Resource Monitor (resmon) › CPU › Associated Handles, search kasse.sqlite)',
  );
});

test("a WAL book without -wal and -shm that SQLite cannot open (Windows' SQLITE_CANTOPEN, where Linux says SQLITE_READONLY_DIRECTORY) is waited for, as on Linux", (t) => {
  const cantOpen = Object.assign(new Error('unable to open database file'), { code: 'SQLITE_CANTOPEN' });
  const wal = writeBook(t, true);
  const state = notReadableNow(wal, cantOpen);
  // Waited for, its searches answered with Retry-After, as Linux's SQLITE_READONLY_DIRECTORY is.
  assert.equal(state?.code, 'SQLITE_READONLY_DIRECTORY');
  assert.ok(isNotReadableNow({ code: state.code }));
  assert.match(
    state.explanation,
    /^it is in WAL mode and kasse\.sqlite-wal or kasse\.sqlite-shm is missing .* this service's account may not create files in its folder \(SQLITE_CANTOPEN\): start the application before this service/,
  );
  // A file in rollback mode has nothing to wait for: SQLite cannot open it, and says so.
  assert.equal(notReadableNow(writeBook(t), cantOpen), undefined);
});

test("a hot journal's command for the file's owner asks the name service once a process, and names an owner it does not know by number", (t) => {
  // A stand-in for getent that counts its calls and knows one user, as LDAP would.
  const dir = tempDir(t);
  const calls = join(dir, 'calls');
  const getent = join(dir, 'getent');
  fs.writeFileSync(
    getent,
    `#!/bin/sh\necho "$@" >> ${calls}\n[ "$2" = 54321 ] && { echo "kassenwart:x:54321:54321::/:/bin/sh"; exit 0; }\nexit 2\n`,
  );
  fs.chmodSync(getent, 0o755);
  const path = process.env['PATH'];
  process.env['PATH'] = `${dir}${delimiter}${path}`;
  t.after(() => {
    process.env['PATH'] = path;
  });
  const hot = { code: 'SQLITE_READONLY_ROLLBACK' };
  const [known, unknown] = ['known.sqlite', 'unknown.sqlite'].map((name, i) => {
    const file = join(dir, name);
    fs.writeFileSync(file, '');
    fs.chownSync(file, 54321 + i, 54321 + i);
    return file;
  }) as [string, string];
  // A served file with a hot journal is looked at every second, each look worded.
  for (let i = 0; i < 3; i += 1) {
    assert.match(notReadableNow(known, hot)?.explanation ?? '', /as its owner: sudo -u kassenwart sqlite3 /);
    assert.match(notReadableNow(unknown, hot)?.explanation ?? '', /as its owner: sudo -u '#54322' sqlite3 /);
  }
  assert.deepEqual(fs.readFileSync(calls, 'utf8').split('\n').filter(Boolean), ['passwd 54321', 'passwd 54322']);
});

test("a file SQLite finds malformed with a -wal of commits beside it names that log, and that a backup's may be the replaced file's", (t) => {
  const file = join(tempDir(t), 'kasse.sqlite');
  const app = new Database(file);
  app.exec(fixtureSql('schema.sql'));
  app.close();
  const malformed = Object.assign(new Error('database disk image is malformed'), { code: 'SQLITE_CORRUPT' });
  assert.equal(describeDatabaseError(file, malformed), `cannot serve ${file}: database disk image is malformed`);
  fs.writeFileSync(`${file}-wal`, Buffer.alloc(4_152));
  assert.equal(
    describeDatabaseError(file, malformed),
    `cannot serve ${file}: database disk image is malformed, read with ${file}-wal laid over it (4152 bytes): if the file is a backup put back beside the replaced file's log, move ${file}-wal and its -shm away (the backup itself may be intact)`,
  );
});
