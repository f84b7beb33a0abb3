// The recipes of docs/operations.md (the credentials file, one shared read group), executed
// as written: each shell block taken from the document and run by sh on a terminal (so that
// hash-password asks for each password twice, and the test types it), as root, with `sudo`
// left out and the paths of this machine put in. The unit is the shipped one. systemd is
// not running here, so `systemctl` is a stand-in that does for this unit what systemd's
// manual says it does: LoadCredential= copies the file into a directory only the
// service's user may read and names it in $CREDENTIALS_DIRECTORY, at each start;
// RuntimeDirectory= makes the socket's directory; ExecStart= runs as User=, Group= and
// SupplementaryGroups=; reload runs ExecReload= (kill -HUP $MAINPID).
// Needs root for the users, as CI runs.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, chownSync, copyFileSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { asRoot, blocksAfter } from './support/doc-snippets.js';
import { fixtureSql } from './support/helpers.js';
import { createUsers, IS_ROOT, NOT_ROOT_REASON, nodeForEveryUser, type Users } from './support/linux-users.js';
import { onTerminal } from './support/terminal.js';

const REPO = new URL('..', import.meta.url).pathname;
const OPERATIONS = readFileSync(join(REPO, 'docs/operations.md'), 'utf8');
const UNIT = 'booking-search-server';
const users: Users | undefined = IS_ROOT ? createUsers() : undefined;

// The stand-in for systemctl: start, stop, restart, reload, daemon-reload, show -p MainPID.
const SYSTEMCTL = String.raw`
import { execFileSync, spawn } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
const config = JSON.parse(readFileSync(process.env.SYSTEMCTL_CONFIG, 'utf8'));
const [command, ...rest] = process.argv.slice(2);
const name = (rest.filter((arg) => !arg.startsWith('-')).at(-1) ?? '').replace(/\.service$/, '');
const move = (text) => config.paths.reduce((t, [from, to]) => t.replace(new RegExp('(^|[\\s=:|])' + from.replace(/[.*+?^$()|[\]\\]/g, '\\$&'), 'g'), '$1' + to), text);
const pidFile = config.state + '/' + name + '.pid';
const logFile = config.state + '/' + name + '.log';
const log = () => (existsSync(logFile) ? readFileSync(logFile, 'utf8') : '');
const mainPid = () => (existsSync(pidFile) ? Number(readFileSync(pidFile, 'utf8')) : 0);
const alive = (pid) => { try { process.kill(pid, 0); return true; } catch { return false; } };
const sleep = (ms) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
const until = (done, what) => {
  for (let i = 0; i < 400; i += 1) { if (done()) return; sleep(50); }
  process.stderr.write('systemctl: ' + what + ' did not happen; the service wrote:\n' + log());
  process.exit(1);
};
const count = (pattern) => (log().match(pattern) ?? []).length;
function unit() {
  const entries = {};
  const text = move(readFileSync(config.units + '/' + name + '.service', 'utf8').replace(/\\\n/g, ' '));
  for (const line of text.split('\n')) {
    const match = /^([A-Za-z]+)=(.*)$/.exec(line.trim());
    if (match) (entries[match[1]] ??= []).push(match[2].trim());
  }
  return entries;
}
function stop() {
  const pid = mainPid();
  if (pid && alive(pid)) { process.kill(pid, 'SIGTERM'); until(() => !alive(pid), 'the stop'); }
  rmSync(pidFile, { force: true });
}
function start() {
  const u = unit();
  const user = u.User[0];
  const group = u.Group?.[0] ?? user;
  const groups = (u.SupplementaryGroups?.[0] ?? '').split(/\s+/).filter(Boolean).map((g) => config.groups[g] ?? g);
  for (const dir of u.RuntimeDirectory ?? []) {
    const path = config.run + '/' + dir;
    rmSync(path, { recursive: true, force: true });
    mkdirSync(path, { recursive: true });
    chmodSync(path, Number.parseInt(u.RuntimeDirectoryMode?.[0] ?? '0755', 8));
    execFileSync('chown', [user + ':' + group, path]);
  }
  const env = { PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' };
  const credentials = config.run + '/credentials/' + name + '.service';
  rmSync(credentials, { recursive: true, force: true });
  if (u.LoadCredential) {
    mkdirSync(credentials, { recursive: true });
    for (const entry of u.LoadCredential) {
      const colon = entry.indexOf(':');
      const copy = credentials + '/' + entry.slice(0, colon);
      copyFileSync(entry.slice(colon + 1), copy);
      chmodSync(copy, 0o400);
      execFileSync('chown', [user, copy]);
    }
    chmodSync(credentials, 0o500);
    execFileSync('chown', [user, credentials]);
    env.CREDENTIALS_DIRECTORY = credentials;
  }
  const argv = u.ExecStart[0].replaceAll('$' + '{CREDENTIALS_DIRECTORY}', credentials).split(/\s+/);
  const before = count(/ listening on /g);
  const out = openSync(logFile, 'a');
  const child = spawn('setpriv', ['--reuid', user, '--regid', group, '--groups', groups.join(','), '--', ...argv], {
    env, stdio: ['ignore', out, out], detached: true,
  });
  writeFileSync(pidFile, String(child.pid));
  child.unref();
  until(() => count(/ listening on /g) > before || !alive(child.pid), 'the start');
  if (!alive(child.pid)) { process.stderr.write(log()); process.exit(1); }
}
if (command === 'daemon-reload') process.exit(0);
if (command === 'stop') stop();
else if (command === 'start' || command === 'restart') { stop(); start(); }
else if (command === 'reload') {
  const before = count(/ SIGHUP: /g);
  execFileSync('kill', ['-HUP', String(mainPid())]);
  until(() => count(/ SIGHUP: /g) > before, 'the reload');
} else if (command === 'show') process.stdout.write(mainPid() + '\n');
else { process.stderr.write('systemctl: not part of the stand-in: ' + command + '\n'); process.exit(1); }
`;

interface Machine {
  root: string;
  etc: string;
  run: string;
  env: NodeJS.ProcessEnv;
  paths: Array<[string, string]>;
  log: () => string;
  pid: () => number;
  /** One shell block of the document, as written, on a terminal with `answers` typed. */
  runBlock(block: string, answers: string[]): void;
  /** GET /kasse/api/v1/status over the unit's socket as `user:password`: the status. */
  status(user: string, password: string): Promise<number>;
  systemctl(...args: string[]): void;
}

/** A machine as the recipes expect it: the unit installed, the application's database, no credentials yet. */
function machine(users: Users): Machine {
  const root = users.workDir();
  const etc = join(root, 'etc');
  const run = join(root, 'run');
  const state = join(root, 'state');
  const bin = join(root, 'bin');
  for (const dir of [etc, join(etc, 'systemd', 'system'), run, state, bin]) mkdirSync(dir, { recursive: true });
  copyFileSync(join(REPO, 'deploy', `${UNIT}.service`), join(etc, 'systemd', 'system', `${UNIT}.service`));
  // The application's database, as in "Users and permissions": kasse:kasse 0750 and 0640.
  const srv = join(root, 'srv');
  mkdirSync(srv);
  const db = join(srv, 'kasse.sqlite');
  const book = new Database(db);
  book.exec(fixtureSql('schema.sql') + fixtureSql('bookings.sql'));
  book.close();
  for (const path of [srv, db]) chownSync(path, users.app.uid, users.app.gid);
  chmodSync(srv, 0o750);
  chmodSync(db, 0o640);
  const node = nodeForEveryUser();
  const command = join(users.runtime, 'bin', 'booking-search-server.js');
  const paths: Array<[string, string]> = [
    ['/opt/node/bin/node', node],
    ['/opt/booking-search-server/bin/booking-search-server', command],
    ['/srv/kasse/kasse.sqlite', db],
    ['/etc/', `${etc}/`],
    ['/run/', `${run}/`],
  ];
  const config = join(state, 'systemctl.json');
  writeFileSync(
    config,
    JSON.stringify({
      units: join(etc, 'systemd', 'system'),
      state,
      run,
      paths: [...paths, ['buchungssuche', users.service.name]],
      groups: { kasse: users.app.name },
    }),
  );
  writeFileSync(join(state, 'systemctl.mjs'), SYSTEMCTL);
  writeFileSync(join(bin, 'systemctl'), `#!/bin/sh\nexec ${process.execPath} ${join(state, 'systemctl.mjs')} "$@"\n`);
  // The command as /usr/local/bin/booking-search-server runs it (docs/operations.md, Install).
  writeFileSync(join(bin, 'booking-search-server'), `#!/bin/sh\nexec ${node} ${command} "$@"\n`);
  chmodSync(join(bin, 'systemctl'), 0o755);
  chmodSync(join(bin, 'booking-search-server'), 0o755);
  const env = { ...process.env, PATH: `${bin}:/usr/sbin:/usr/bin:/sbin:/bin`, SYSTEMCTL_CONFIG: config };
  const logFile = join(state, `${UNIT}.log`);
  const result: Machine = {
    root,
    etc,
    run,
    env,
    paths,
    log: () => {
      try {
        return readFileSync(logFile, 'utf8');
      } catch {
        return '';
      }
    },
    pid: () => Number(readFileSync(join(state, `${UNIT}.pid`), 'utf8')),
    runBlock(block, answers) {
      const script = asRoot(block, [...paths, ['buchungssuche', users.service.name]]);
      const ran = onTerminal(['sh', '-ec', script], answers, { env, timeout: 120_000 });
      assert.equal(ran.status, 0, `${block}\n${ran.stdout}${ran.stderr}\n${result.log()}`);
      assert.doesNotMatch(ran.stdout, new RegExp(answers.join('|')), 'no password shown');
    },
    status: (user, password) =>
      new Promise((resolve, reject) => {
        request(
          {
            socketPath: join(run, UNIT, 'api.sock'),
            // A new connection each time: a kept one would lead to the service before a restart.
            agent: false,
            path: '/kasse/api/v1/status',
            headers: { authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}` },
          },
          (res) => {
            res.resume();
            resolve(res.statusCode ?? 0);
          },
        )
          .on('error', reject)
          .end();
      }),
    systemctl: (...args) => {
      const ran = spawnSync('systemctl', args, { env, encoding: 'utf8' });
      assert.equal(ran.status, 0, ran.stderr);
    },
  };
  return result;
}

function modeOf(path: string): string {
  const { mode, uid, gid } = statSync(path);
  return `${uid}:${gid} ${(mode & 0o7777).toString(8)}`;
}

test("the recipe with systemd's LoadCredential=, as written: the root-only file is served; a client added and restarted gets in (a reload alone would re-read the old copy)", async (t) => {
  assert.ok(users !== undefined, NOT_ROOT_REASON);
  const host = machine(users);
  t.after(() => host.systemctl('stop', UNIT));
  const [create, add] = blocksAfter(OPERATIONS, "**With systemd's `LoadCredential=`**", 'sh');
  assert.ok(create !== undefined && add !== undefined, 'two blocks: the file, and a client added');

  host.runBlock(create, ['Abgleich-1', 'Abgleich-1']);
  const dir = join(host.etc, 'booking-search-server');
  assert.equal(modeOf(dir), `0:${users.service.gid} 750`);
  assert.equal(modeOf(join(dir, 'credentials')), '0:0 600');
  assert.equal(await host.status('abgleich', 'Abgleich-1'), 200);
  assert.equal(await host.status('pruefung', 'Pruefung-1'), 401);
  const first = host.pid();

  host.runBlock(add, ['Pruefung-1', 'Pruefung-1']);
  assert.notEqual(host.pid(), first, 'restarted');
  assert.equal(await host.status('pruefung', 'Pruefung-1'), 200);
  assert.equal(await host.status('abgleich', 'Abgleich-1'), 200);

  // Why the recipe restarts: a reload (SIGHUP) re-reads the copy made at start.
  writeFileSync(join(dir, 'credentials'), 'dritte:Dritte-1\n', { flag: 'a' });
  host.systemctl('reload', UNIT);
  assert.match(host.log(), /SIGHUP: credentials re-read from \S+\/credentials: 2 user\(s\)$/m);
  assert.equal(await host.status('dritte', 'Dritte-1'), 401);
  assert.doesNotMatch(host.log(), /warning|refusing/);
});

test('the recipe of a file the service reads itself, as written: root:buchungssuche 0640 in a 0750 directory is served without a warning; a client added and reloaded gets in without a restart', async (t) => {
  assert.ok(users !== undefined, NOT_ROOT_REASON);
  const host = machine(users);
  t.after(() => host.systemctl('stop', UNIT));
  const [create, add] = blocksAfter(OPERATIONS, '**A file the service reads itself**', 'sh');
  assert.ok(create !== undefined && add !== undefined, 'two blocks: the file and the unit, and a client added');

  host.runBlock(create, ['Abgleich-1', 'Abgleich-1']);
  const dir = join(host.etc, 'booking-search-server');
  assert.equal(modeOf(dir), `0:${users.service.gid} 750`);
  assert.equal(modeOf(join(dir, 'credentials')), `0:${users.service.gid} 640`);
  const unit = readFileSync(join(host.etc, 'systemd', 'system', `${UNIT}.service`), 'utf8');
  assert.doesNotMatch(unit, /^LoadCredential=/m);
  assert.equal(await host.status('abgleich', 'Abgleich-1'), 200);
  const first = host.pid();

  host.runBlock(add, ['Pruefung-1', 'Pruefung-1']);
  assert.equal(host.pid(), first, 'not restarted');
  assert.match(host.log(), /SIGHUP: credentials re-read from \S+\/credentials: 2 user\(s\), added pruefung$/m);
  assert.equal(await host.status('pruefung', 'Pruefung-1'), 200);
  assert.equal(await host.status('abgleich', 'Abgleich-1'), 200);
  assert.doesNotMatch(host.log(), /warning|refusing/);
});

test("the recipe of one shared read group, as written: a book owned by its application's user in the group buecher is read by the service's user through that group alone, and what SQLite makes beside it takes the group", (t) => {
  assert.ok(users !== undefined, NOT_ROOT_REASON);
  const block = blocksAfter(OPERATIONS, '**one shared read group**', 'sh')[0] ?? '';
  assert.ok(block.includes('groupadd'), 'the block that makes the group');
  const root = users.workDir();
  const book = join(root, 'm1');
  const file = join(book, 'kasse.sqlite');
  // The application's book as it left it: its own user's file, in a directory of its own group.
  mkdirSync(book);
  const db = new Database(file);
  db.exec(fixtureSql('schema.sql') + fixtureSql('bookings.sql'));
  db.close();
  for (const path of [book, file]) chownSync(path, users.owner.uid, users.owner.gid);
  chmodSync(book, 0o700);
  const group = `bsg${process.pid.toString(36)}`;
  t.after(() => spawnSync('groupdel', [group]));
  const script = asRoot(block, [
    ['/srv/mueller', book],
    ['buchungssuche', users.service.name],
    ['buecher', group],
    ['mueller', users.owner.name],
  ]);
  const ran = spawnSync('sh', ['-ec', script], { encoding: 'utf8' });
  assert.equal(ran.status, 0, `${script}\n${ran.stdout}${ran.stderr}`);
  const gid = Number(spawnSync('getent', ['group', group], { encoding: 'utf8' }).stdout.split(':')[2]);
  assert.equal(modeOf(book), `${users.owner.uid}:${gid} 2750`);
  assert.equal(modeOf(file), `${users.owner.uid}:${gid} 640`);
  // The service's user with the groups /etc/group gives it, as systemd starts it: check passes.
  const command = join(users.runtime, 'bin', 'booking-search-server.js');
  const checked = spawnSync(
    'setpriv',
    [
      '--reuid',
      users.service.name,
      '--regid',
      users.service.name,
      '--init-groups',
      '--',
      nodeForEveryUser(),
      command,
      'check',
      '--db',
      file,
    ],
    { encoding: 'utf8' },
  );
  assert.equal(checked.status, 0, checked.stdout + checked.stderr);
  assert.match(checked.stdout, /^Data: fits/m);
  // What the application creates beside its book (-wal, -shm, -journal) takes the group.
  const made = spawnSync(
    'setpriv',
    ['--reuid', users.owner.name, '--regid', users.owner.name, '--init-groups', '--', 'touch', `${file}-wal`],
    { encoding: 'utf8' },
  );
  assert.equal(made.status, 0, made.stderr);
  assert.equal(statSync(`${file}-wal`).gid, gid);
});
