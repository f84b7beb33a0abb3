// The -wal and -shm of a followed book's served file (bin/books/wal-files.ts): left beside a
// file that replaced it, they are the old file's log, which SQLite would read into the new
// one; gone under the served file, they are said so once.

import assert from 'node:assert/strict';
import { renameSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { staleLogs, WalFiles } from '../../bin/books/wal-files.js';
import { walFilesOf } from '../../bin/files/file-look.js';
import { tempDir } from '../support/helpers.js';

const FRAMES = Buffer.alloc(32 + 24 + 4096, 1);

/** A file's identity as the served connection has it (bin/files/file-look.ts identityOf). */
function identity(file: string): string {
  const { dev, ino } = statSync(file);
  return `${dev}:${ino}`;
}

function book(dir: string, wal: Buffer = FRAMES): string {
  const file = join(dir, 'kasse.sqlite');
  writeFileSync(file, 'served');
  writeFileSync(`${file}-wal`, wal);
  writeFileSync(`${file}-shm`, Buffer.alloc(32 * 1024));
  return file;
}

test('a file moved over the served one, beside its -wal with commits, is refused; the served file itself is not', (t) => {
  const file = book(tempDir(t));
  const followed = new WalFiles(file);
  followed.served(identity(file), walFilesOf(file));
  assert.equal(followed.stale(), undefined, 'the served file, opened again to be checked');
  writeFileSync(`${file}.new`, 'backup');
  renameSync(`${file}.new`, file);
  assert.match(
    followed.stale() ?? '',
    /^database \S+ was replaced, but kasse\.sqlite-wal and kasse\.sqlite-shm beside it/,
  );
  rmSync(`${file}-wal`);
  rmSync(`${file}-shm`);
  assert.equal(followed.stale(), undefined, 'once they are gone');
});

test('a file put at a path seen empty is another file even on the freed inode of the one served', (t) => {
  const file = book(tempDir(t));
  const followed = new WalFiles(file);
  followed.served(identity(file), walFilesOf(file));
  // As a file copied in after `rm` may take the served file's inode: same identity, another file.
  followed.emptied();
  assert.match(followed.stale() ?? '', /was replaced, but/);
});

test('an empty log beside a file that replaced the served one is no reason to refuse it, and becomes its own', (t) => {
  const file = book(tempDir(t), Buffer.alloc(0));
  const followed = new WalFiles(file);
  followed.served(identity(file), walFilesOf(file));
  writeFileSync(`${file}.new`, 'backup');
  renameSync(`${file}.new`, file);
  assert.equal(followed.stale(), undefined);
  // The application opens the new file on that log and commits into it: its own log now.
  writeFileSync(`${file}-wal`, FRAMES);
  assert.equal(followed.stale(), undefined);
});

test('-wal and -shm deleted under the served file are said once by the look, whatever a check of the file meanwhile', (t) => {
  const file = book(tempDir(t));
  const followed = new WalFiles(file);
  followed.served(identity(file), walFilesOf(file));
  rmSync(`${file}-wal`);
  assert.equal(followed.stale(), undefined, 'a check of the served file');
  assert.equal(followed.look(identity(file)), true);
  assert.equal(followed.look(identity(file)), false);
});

test('a log that appears beside the served file (its application turned it to WAL) is its own: a file moved over it later is refused', (t) => {
  const dir = tempDir(t);
  const file = join(dir, 'kasse.sqlite');
  writeFileSync(file, 'served in rollback mode');
  const followed = new WalFiles(file);
  assert.equal(followed.stale(), undefined);
  followed.served(identity(file), walFilesOf(file));
  assert.equal(followed.look(identity(file)), false, 'no log yet');
  writeFileSync(`${file}-wal`, FRAMES);
  writeFileSync(`${file}-shm`, Buffer.alloc(32 * 1024));
  assert.equal(followed.look(identity(file)), false, 'a log of its own, not one gone');
  writeFileSync(`${file}.new`, 'backup');
  renameSync(`${file}.new`, file);
  assert.match(followed.stale() ?? '', /was replaced, but/);
});

test("a file moved in while the first one was opened, never served, is refused beside that one's log", (t) => {
  const file = book(tempDir(t));
  const followed = new WalFiles(file);
  assert.equal(followed.stale(), undefined, 'the first open');
  // The open ends with the file changed while it was opened: not served, opened again.
  writeFileSync(`${file}.new`, 'backup');
  renameSync(`${file}.new`, file);
  assert.match(followed.stale() ?? '', /was replaced, but/);
});

test('a file moved in after the served one was opened, before it was taken for served, is another file: alone, refused beside the old log; with its own log, not', (t) => {
  const file = book(tempDir(t));
  const opened = [identity(file), walFilesOf(file)] as const;
  writeFileSync(`${file}.new`, 'backup');
  renameSync(`${file}.new`, file);
  const alone = new WalFiles(file);
  alone.served(...opened);
  assert.match(alone.stale() ?? '', /was replaced, but/);
  // Moved in with its -wal and -shm, as docs/operations.md says to move a book: they are its own.
  const dir = tempDir(t);
  const other = book(dir);
  for (const end of ['', '-wal', '-shm']) renameSync(`${other}${end}`, `${file}${end}`);
  const withLog = new WalFiles(file);
  withLog.served(...opened);
  assert.equal(withLog.stale(), undefined);
});

test('a refused log is told at each look (a message lost is sent again), a follower started anew refuses it too and serves the file it belongs to, and one that finds it gone forgets it', (t) => {
  const file = book(tempDir(t));
  const heard: Array<string | undefined> = [];
  staleLogs.tell((at, log) => {
    if (at === file) heard.push(log?.files);
  });
  t.after(() => staleLogs.tell(() => {}));
  const first = new WalFiles(file);
  first.served(identity(file), walFilesOf(file));
  const log = walFilesOf(file);
  renameSync(file, `${file}.orig`);
  writeFileSync(file, 'backup');
  assert.match(first.stale() ?? '', /was replaced, but/);
  assert.match(first.stale() ?? '', /was replaced, but/);
  assert.deepEqual(heard, [log, log], 'refused, at each look');
  // A worker started in place of one, or the book served anew: it cannot tell the log itself.
  const anew = new WalFiles(file);
  assert.match(anew.stale() ?? '', /was replaced, but/);
  // The original file moved back: its own log, which the one started anew serves too.
  renameSync(`${file}.orig`, file);
  const back = new WalFiles(file);
  assert.equal(back.stale(), undefined);
  // The backup again; its log moved out of the folder: forgotten, and told so.
  writeFileSync(`${file}.new`, 'backup');
  renameSync(`${file}.new`, file);
  assert.match(new WalFiles(file).stale() ?? '', /was replaced, but/);
  renameSync(`${file}-wal`, `${file}-wal.old`);
  assert.equal(new WalFiles(file).stale(), undefined, 'gone');
  assert.equal(heard.at(-1), undefined, 'told it is forgotten');
});

test('a book a reload takes out and adds back, or names another way, refuses the log as before while it is there; a new log on its inodes is another', (t) => {
  const dir = tempDir(t);
  const file = book(dir);
  const removed = new WalFiles(file);
  removed.served(identity(file), walFilesOf(file));
  writeFileSync(`${file}.new`, 'backup');
  renameSync(`${file}.new`, file);
  assert.match(removed.stale() ?? '', /was replaced, but/);
  // Added back, as written or as `./kasse.sqlite` from its folder.
  assert.match(new WalFiles(file).stale() ?? '', /was replaced, but/);
  assert.match(new WalFiles(join(dir, '.', 'kasse.sqlite')).stale() ?? '', /was replaced, but/);
  rmSync(`${file}-wal`);
  rmSync(`${file}-shm`);
  writeFileSync(`${file}-wal`, FRAMES);
  writeFileSync(`${file}-shm`, Buffer.alloc(32 * 1024));
  assert.equal(new WalFiles(file).stale(), undefined, 'a new log');
});

test('a log made anew on the freed inodes of the old one is another log (its birth time)', (t) => {
  const file = book(tempDir(t));
  const inodes = (): string => [statSync(`${file}-wal`).ino, statSync(`${file}-shm`).ino].join();
  // A file made at once takes the inode just freed, unless another process took it meanwhile.
  let reused = false;
  for (let attempt = 0; attempt < 5 && !reused; attempt += 1) {
    const [log, was] = [walFilesOf(file), inodes()];
    for (const end of ['-wal', '-shm']) {
      rmSync(`${file}${end}`);
      writeFileSync(`${file}${end}`, end === '-wal' ? FRAMES : Buffer.alloc(32 * 1024));
    }
    reused = inodes() === was;
    if (reused) assert.notEqual(walFilesOf(file), log);
  }
  assert.ok(reused, 'the file system gave the freed inodes back');
});

test('a book named through a link pointed at another file: what is refused beside that file is kept by it, for a follower started anew too', (t) => {
  const dir = tempDir(t);
  const first = join(dir, 'v1.sqlite');
  writeFileSync(first, 'v1, in rollback mode');
  const second = book(tempDir(t));
  const link = join(dir, 'kasse.sqlite');
  symlinkSync(first, link);
  const followed = new WalFiles(link);
  assert.equal(followed.stale(), undefined);
  followed.served(identity(link), walFilesOf(link));
  // The link pointed at another file, with its log: served.
  symlinkSync(second, `${link}.new`);
  renameSync(`${link}.new`, link);
  assert.equal(followed.stale(), undefined);
  followed.served(identity(link), walFilesOf(link));
  // A backup moved over that file beside its log: refused, also by a worker started anew.
  writeFileSync(`${second}.new`, 'backup');
  renameSync(`${second}.new`, second);
  assert.match(followed.stale() ?? '', /was replaced, but/);
  assert.match(new WalFiles(link).stale() ?? '', /was replaced, but/);
  // Pointed at a third file with its own log, served; then back: refused as before.
  const third = book(tempDir(t));
  symlinkSync(third, `${link}.new`);
  renameSync(`${link}.new`, link);
  assert.equal(followed.stale(), undefined);
  followed.served(identity(link), walFilesOf(link));
  symlinkSync(second, `${link}.new`);
  renameSync(`${link}.new`, link);
  assert.match(followed.stale() ?? '', /was replaced, but/);
});
