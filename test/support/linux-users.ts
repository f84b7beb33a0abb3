// Separate Linux users for the tests where permissions matter: the bookkeeping application
// as its own user (owner of a 0750 directory and a 0640 file), the service as another user
// in the application's group, as an admin sets them up (docs/operations.md, "Users and permissions").
// Only root can create users; without root those tests fail, saying so.

import assert from 'node:assert/strict';
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { chmodSync, chownSync, copyFileSync, cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after } from 'node:test';

export const IS_ROOT = process.getuid?.() === 0;
export const NOT_ROOT_REASON = 'needs root to create Linux users (CI runs as root)';

const REPO = new URL('../..', import.meta.url).pathname;

export interface Users {
  /** The application's user and group, owner of the directory and the file. */
  app: { name: string; uid: number; gid: number };
  /** The service's user, in the application's group for read access. */
  service: { name: string; uid: number; gid: number };
  /**
   * A sole trader: a fresh user with a home directory (as `useradd --create-home` makes it)
   * who runs the application and the service alike.
   */
  owner: { name: string; uid: number; gid: number; home: string };
  /** A copy of the built package that both users can read (the clone may sit in a private directory). */
  runtime: string;
  /** A fresh 0755 directory for a test's files, removed when the file's tests end. */
  workDir(): string;
}

/** Creates the two users (unique names per run) and the runtime copy; removed after the file. */
export function createUsers(): Users {
  const tag = `${process.pid.toString(36)}${Date.now().toString(36).slice(-4)}`;
  const app = `bsk${tag}`;
  const service = `bss${tag}`;
  const owner = `bso${tag}`;
  const root = mkdtempSync(join(tmpdir(), 'booking-search-users-'));
  chmodSync(root, 0o755);
  after(() => {
    rmSync(root, { recursive: true, force: true });
    // userdel removes each user's own group as well (USERGROUPS_ENAB).
    for (const name of [owner, service, app]) retry(['userdel', name], true);
  });
  retry(['useradd', '--system', '--no-create-home', '--user-group', '--shell', '/usr/sbin/nologin', app]);
  retry([
    'useradd',
    '--system',
    '--no-create-home',
    '--user-group',
    '--groups',
    app,
    '--shell',
    '/usr/sbin/nologin',
    service,
  ]);
  const home = join(root, 'home', owner);
  mkdirSync(join(root, 'home'), { mode: 0o755 });
  retry(['useradd', '--create-home', '--home-dir', home, '--user-group', '--shell', '/bin/sh', owner]);
  const runtime = join(root, 'runtime');
  copyRuntime(runtime);
  let dirs = 0;
  return {
    app: { name: app, ...ids(app) },
    service: { name: service, ...ids(service) },
    owner: { name: owner, ...ids(owner), home },
    runtime,
    workDir: () => {
      dirs += 1;
      const dir = join(root, `t${dirs}`);
      mkdirSync(dir, { mode: 0o755 });
      return dir;
    },
  };
}

/** `dir/name`: a directory owned by the application, 0750 (or `mode`), for its database. */
export function applicationDirectory(users: Users, dir: string, mode = 0o750): string {
  const path = join(dir, 'kasse');
  mkdirSync(path);
  chownSync(path, users.app.uid, users.app.gid);
  chmodSync(path, mode);
  return path;
}

/** The command that runs `node args…` as `user`, with its groups from /etc/group (as systemd does). */
export function asUser(user: string, args: readonly string[]): [string, string[]] {
  return ['setpriv', ['--reuid', user, '--regid', user, '--init-groups', '--', nodeForEveryUser(), ...args]];
}

let sharedNode: string | undefined;
/**
 * A copy of this process's node that every user may run: the toolchain that runs the
 * tests may sit in root's private home (scripts/node.sh caches it there).
 */
export function nodeForEveryUser(): string {
  if (sharedNode !== undefined) return sharedNode;
  const dir = mkdtempSync(join(tmpdir(), 'booking-search-node-'));
  chmodSync(dir, 0o755);
  // Not `after`: called inside a test, that would remove it when that test ends.
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  sharedNode = join(dir, 'node');
  copyFileSync(process.execPath, sharedNode);
  chmodSync(sharedNode, 0o755);
  return sharedNode;
}

export interface Application {
  child: ChildProcess;
  /** Sends one command line and waits for its answer line. */
  send(command: string): Promise<string>;
  /** `close`: the application closes the database cleanly and exits. */
  close(): Promise<void>;
}

// The bookkeeping application, controlled over stdin one line at a time:
//   create wal|delete   creates the file from schema.sql and bookings.sql
//   open                opens it (creating -wal/-shm in WAL mode) and reads once
//   insert N            N bookings of 12.50 € on 2026-03-20, one transaction each
//   cycle               opens the file, writes one such booking, closes it again (a desktop
//                       application's save); answers 'cycled' or 'failed: ' and why
//   crash               a large write with a tiny cache, so that pages reach the file, then waits to be killed
//   close               closes the database cleanly and exits
const APPLICATION = `
const Database = require('better-sqlite3');
const fs = require('fs');
const readline = require('readline');
const file = process.argv[1];
let db;
const answer = (line) => process.stdout.write(line + '\\n');
readline.createInterface({ input: process.stdin }).on('line', (line) => {
  const [command, arg] = line.split(' ');
  if (command === 'create') {
    db = new Database(file);
    db.exec(fs.readFileSync('fixtures/schema.sql', 'utf8') + fs.readFileSync('fixtures/bookings.sql', 'utf8'));
    if (arg === 'wal') db.pragma('journal_mode = WAL');
    db.close();
    fs.chmodSync(file, 0o640);
    return answer('created');
  }
  if (command === 'open') {
    db = new Database(file, { fileMustExist: true, timeout: 5000 });
    return answer(String(db.prepare('SELECT count(*) FROM entries').pluck().get()));
  }
  if (command === 'insert') {
    const insert = db.prepare("INSERT INTO entries (date, amount_cents, subject) VALUES ('2026-03-20', 1250, 'Nachtrag')");
    for (let i = 0; i < Number(arg); i += 1) insert.run();
    return answer('inserted');
  }
  if (command === 'cycle') {
    try {
      const once = new Database(file, { fileMustExist: true, timeout: 5000 });
      once.prepare("INSERT INTO entries (date, amount_cents, subject) VALUES ('2026-03-20', 1250, 'Nachtrag')").run();
      once.close();
      return answer('cycled');
    } catch (error) {
      return answer('failed: ' + String(error && error.code) + ' ' + String(error && error.message));
    }
  }
  if (command === 'crash') {
    db.pragma('cache_size = 2');
    db.exec('BEGIN');
    const insert = db.prepare("INSERT INTO entries (date, amount_cents, subject) VALUES ('2026-03-21', 1250, ?)");
    for (let i = 0; i < 2000; i += 1) insert.run('Nachtrag, nie bestätigt ' + i);
    return answer('writing');
  }
  if (command === 'close') {
    db.close();
    answer('closed');
    process.exit(0);
  }
});
`;

/**
 * Starts the application as its user (`as`: another one, e.g. the owner or root); it is
 * killed when the test file ends, if still running.
 */
export function startApplication(users: Users, file: string, as = users.app.name): Application {
  const [command, args] = asUser(as, ['-e', APPLICATION, file]);
  const child = spawn(command, args, { cwd: users.runtime, stdio: ['pipe', 'pipe', 'inherit'] });
  after(() => void child.kill('SIGKILL'));
  const lines: string[] = [];
  const waiting: Array<(line: string) => void> = [];
  let buffered = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    buffered += chunk;
    for (let end = buffered.indexOf('\n'); end !== -1; end = buffered.indexOf('\n')) {
      const line = buffered.slice(0, end);
      buffered = buffered.slice(end + 1);
      const resolve = waiting.shift();
      if (resolve === undefined) lines.push(line);
      else resolve(line);
    }
  });
  const send = (line: string): Promise<string> => {
    child.stdin?.write(`${line}\n`);
    const ready = lines.shift();
    if (ready !== undefined) return Promise.resolve(ready);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the application did not answer '${line}'`)), 15_000);
      waiting.push((answer) => {
        clearTimeout(timer);
        resolve(answer);
      });
    });
  };
  return {
    child,
    send,
    close: async () => {
      const exited = once(child, 'exit');
      assert.equal(await send('close'), 'closed');
      await exited;
    },
  };
}

/** The names in `dir`, sorted: what a test compares before and after. */
export function listing(dir: string): string[] {
  return readdirSync(dir).sort();
}

function copyRuntime(runtime: string): void {
  mkdirSync(join(runtime, 'fixtures'), { recursive: true });
  for (const file of [
    'package.json',
    'openapi.json',
    'bin/booking-search-server.js',
    'fixtures/schema.sql',
    'fixtures/bookings.sql',
  ]) {
    mkdirSync(join(runtime, file, '..'), { recursive: true });
    copyFileSync(join(REPO, file), join(runtime, file));
  }
  cpSync(join(REPO, 'dist'), join(runtime, 'dist'), { recursive: true });
  // better-sqlite3 at run time: its JavaScript and the prebuilt binary of this platform.
  const sqlite = join(REPO, 'node_modules', 'better-sqlite3');
  const copy = join(runtime, 'node_modules', 'better-sqlite3');
  cpSync(join(sqlite, 'lib'), join(copy, 'lib'), { recursive: true });
  copyFileSync(join(sqlite, 'package.json'), join(copy, 'package.json'));
  cpSync(join(sqlite, 'prebuilds'), join(copy, 'prebuilds'), { recursive: true });
  // Readable by everyone, as an installed package under /opt or /usr/local is.
  execFileSync('chmod', ['-R', 'a+rX', runtime]);
}

function ids(name: string): { uid: number; gid: number } {
  const id = (flag: string): number => Number(execFileSync('id', [flag, name], { encoding: 'utf8' }).trim());
  return { uid: id('-u'), gid: id('-g') };
}

// useradd and userdel lock /etc/passwd; another process on the machine may hold it a moment.
function retry(command: string[], ignoreFailure = false): void {
  for (let attempt = 1; ; attempt += 1) {
    try {
      execFileSync(command[0] as string, command.slice(1), { stdio: 'pipe' });
      return;
    } catch (error: unknown) {
      if (attempt >= 20) {
        if (ignoreFailure) return;
        throw error;
      }
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 250);
    }
  }
}
