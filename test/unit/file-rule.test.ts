// The file rule per platform, behind one interface (bin/files/file-rule.ts). Windows' rule
// is judged here on Linux with Windows' own path module and a fake stat that answers as
// Node.js does on Windows (every directory mode 666, every file its reader's): the
// configuration, credentials, TLS key and socket paths a Windows admin gives
// (C:\…, Z:\…) are resolved as Windows paths and not refused for modes Windows does not
// have. test/windows/run.ts runs the real command under Wine.

import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, type Stats, writeFileSync } from 'node:fs';
import path, { join } from 'node:path';
import { test } from 'node:test';
import { CliError, describeFsError, isPrivacyRefusal } from '../../bin/base/errors.js';
import { ruleFor } from '../../bin/files/file-safety.js';
import { addToGroup } from '../../bin/files/posix-readable.js';
import { posixRule } from '../../bin/files/posix-rule.js';
import { NTFS_NOTICE, windowsRule } from '../../bin/files/windows-rule.js';
import { tempDir } from '../support/helpers.js';

/** Stats as Node.js reports them on Windows. */
function windowsStats(kind: 'file' | 'directory'): Stats {
  const mode = (kind === 'file' ? 0o100000 : 0o40000) | 0o666;
  return { mode, uid: 0, gid: 0, isFile: () => kind === 'file', isDirectory: () => kind === 'directory' } as Stats;
}

/** A Windows file system holding `entries` (absolute Windows paths); records every path asked for. */
function fakeWindows(entries: Record<string, 'file' | 'directory'>) {
  const asked: string[] = [];
  const look = (file: unknown): string => {
    const name = String(file);
    asked.push(name);
    if (entries[name] === undefined) throw Object.assign(new Error(`ENOENT: ${name}`), { code: 'ENOENT' });
    return name;
  };
  const rule = windowsRule({
    path: path.win32,
    stat: (file) => windowsStats(entries[look(file)] ?? 'file'),
    realpath: (file) => look(file),
    user: () => 'kasse',
  });
  return { rule, asked };
}

const OFFICE = {
  'C:\\': 'directory',
  'C:\\ProgramData\\booking-search-server': 'directory',
  'C:\\ProgramData\\booking-search-server\\office.conf': 'file',
  'C:\\ProgramData\\booking-search-server\\credentials': 'file',
  'C:\\Users\\me\\Documents\\kasse.mmb': 'file',
} as const;

test('ruleFor: Windows has its own rule, every other platform the POSIX one', () => {
  assert.equal(ruleFor('win32').platform, 'windows');
  assert.equal(ruleFor('linux'), posixRule);
  assert.equal(ruleFor('darwin'), posixRule);
  assert.equal(posixRule.leftToTheSystem, undefined);
  assert.equal(ruleFor('win32').leftToTheSystem, NTFS_NOTICE);
  assert.match(NTFS_NOTICE, /NTFS permissions.*icacls/);
});

test('Windows: a configuration and a credentials file under C:\\ are accepted, their paths parsed as Windows paths', () => {
  const { rule, asked } = fakeWindows(OFFICE);
  rule.ensureOnlyOwnerCanChange(
    'configuration file C:\\ProgramData\\booking-search-server\\office.conf',
    'C:\\ProgramData\\booking-search-server\\office.conf',
  );
  // Forward slashes and a '..' are Windows' too.
  rule.ensureOnlyOwnerCanChange('credentials file', 'C:/ProgramData/booking-search-server/x/../credentials');
  assert.deepEqual(
    [...new Set(asked)],
    ['C:\\ProgramData\\booking-search-server\\office.conf', 'C:\\ProgramData\\booking-search-server\\credentials'],
  );
  assert.ok(
    asked.every((entry) => !entry.startsWith('/')),
    'no path built with /',
  );
});

test('Windows: a missing file is a CliError naming it, not a refusal for a mode', () => {
  const { rule } = fakeWindows(OFFICE);
  assert.throws(
    () => rule.ensureOnlyOwnerCanChange('TLS key C:\\tls\\key.pem', 'C:\\tls\\key.pem'),
    (error: unknown) =>
      error instanceof CliError &&
      /^cannot read TLS key C:\\tls\\key\.pem: /.test(error.message) &&
      !/mode/.test(error.message),
  );
});

test('Windows: the directory of a socket resolves; a missing one is a file-system error as on POSIX', () => {
  const { rule } = fakeWindows(OFFICE);
  assert.equal(
    rule.ensureDirectoriesSafe('socket', 'C:\\ProgramData\\booking-search-server', 'the socket', ''),
    'C:\\ProgramData\\booking-search-server',
  );
  assert.throws(() => rule.ensureDirectoriesSafe('socket', 'D:\\nowhere', 'the socket', ''), { code: 'ENOENT' });
});

test('Windows: a book is opened as its owner would (SQLite may create -wal and -shm), a missing one as a reader', () => {
  const { rule } = fakeWindows(OFFICE);
  assert.deepEqual(rule.judgeDatabaseFile('C:\\Users\\me\\Documents\\kasse.mmb'), { kind: 'owner' });
  assert.deepEqual(rule.judgeDatabaseFile('C:\\Users\\me\\Documents\\missing.mmb'), { kind: 'reader' });
});

test('Windows: mode 666 is no warning about secrets or sockets; an unreadable book names icacls', () => {
  const { rule } = fakeWindows(OFFICE);
  assert.equal(rule.readableByEveryone('C:\\ProgramData\\booking-search-server\\credentials'), undefined);
  assert.equal(rule.letsEveryoneConnect(0o666), false);
  assert.equal(
    rule.whyNotReadable('C:\\Users\\me\\Documents\\kasse.mmb'),
    `this service's account kasse may not read it; give that account read access to the file and its folder (icacls C:\\Users\\me\\Documents /grant "kasse:(OI)(CI)RX", deploy/booking-search-server.xml says how)`,
  );
  // A folder with a space in quotes; a drive's root without: cmd and PowerShell hand "D:\" on as D:" and more.
  assert.match(
    rule.whyNotReadable('C:\\Users\\me\\Kasse Büro\\kasse.mmb'),
    /\(icacls "C:\\Users\\me\\Kasse Büro" \/grant/,
  );
  assert.match(rule.whyNotReadable('D:\\kasse.mmb'), /\(icacls D:\\ \/grant "kasse:\(OI\)\(CI\)RX",/);
});

test('POSIX: the same mode on a directory is refused (the part of the rule Windows does not apply)', (t) => {
  const dir = join(tempDir(t), 'open');
  mkdirSync(dir);
  chmodSync(dir, 0o777);
  writeFileSync(join(dir, 'office.conf'), 'port = 0\n');
  assert.throws(
    () => posixRule.ensureOnlyOwnerCanChange('configuration file', join(dir, 'office.conf')),
    (error: unknown) =>
      error instanceof CliError && error.message.includes(`directory ${dir} is writable by every user (mode 777)`),
  );
  assert.equal(posixRule.letsEveryoneConnect(0o666), true);
});

test("macOS: EPERM on a read is named as the privacy protection, with what to grant; EACCES stays the mode's", () => {
  const eperm = Object.assign(new Error('EPERM: operation not permitted'), { code: 'EPERM' });
  const eacces = Object.assign(new Error('EACCES: permission denied'), { code: 'EACCES' });
  assert.equal(isPrivacyRefusal(eperm, 'darwin'), true);
  assert.match(describeFsError(eperm, 'darwin'), /^not permitted by macOS' privacy protection .*Full Disk Access/);
  assert.equal(describeFsError(eacces, 'darwin'), 'permission denied');
  assert.equal(isPrivacyRefusal(eperm, 'linux'), false);
  assert.equal(describeFsError(eperm, 'linux'), 'permission denied');
});

test('macOS: a user is added to a group with dseditgroup (no usermod there), Linux with usermod', () => {
  assert.equal(addToGroup('_booksearch', 'staff', 'darwin'), 'sudo dseditgroup -o edit -a _booksearch -t user staff');
  assert.equal(addToGroup('buchungssuche', 'kasse', 'linux'), 'usermod -aG kasse buchungssuche');
});
