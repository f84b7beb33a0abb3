// Who else could change a file the service trusts: its credentials file, its TLS key and
// certificate, the directory of its socket, the directories above the database it serves
// (with the application's user and group among the trusted); who else may connect to its
// socket or read a secret; and who would own what SQLite creates beside the database (the
// owner rule, at the end). The rule is OpenSSH's for its own files
// (StrictModes): the file, and every directory above it, must be owned by root or the
// service's user and writable by nobody else; a directory with the sticky bit (/tmp) is
// accepted, as others cannot rename or remove what is not theirs in it. The path is
// resolved one component at a time (OpenSSH's secure_path, the kernel's own order): every
// directory it passes through is judged, and every symlink on the way must be owned by
// root or the service's user as well. A symlink that another user made in a sticky
// directory is that user's to point elsewhere at any time (to /etc/passwd, say, read at
// the next SIGHUP); the sticky bit only keeps them from replacing the service's own.

import { execFileSync } from 'node:child_process';
import { accessSync, constants, lstatSync, readlinkSync, realpathSync, type Stats, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { errorCode } from '../../lib/internal.js';
import { CliError, describeFsError, shellWord } from '../base/index.js';

const STICKY = 0o1000;

/**
 * Who may own (and whose group may write) what the service trusts besides root and the
 * service's own user and group: for the database, its owner, the application's user.
 */
export interface Trusted {
  user?: number | undefined;
  group?: number | undefined;
}

/** Why another user could change the entry with `stats` itself, or `undefined`. */
function ownProblem(stats: Stats, directory: boolean, trusted: Trusted = {}): string | undefined {
  const { mode, uid: owner, gid: group } = stats;
  const uid = process.geteuid?.() ?? 0;
  const gid = process.getegid?.() ?? 0;
  const bits = `(mode ${(mode & 0o7777).toString(8)})`;
  if (owner !== 0 && owner !== uid && owner !== trusted.user) return `is owned by another user (uid ${owner}) ${bits}`;
  if (directory && (mode & STICKY) !== 0) return undefined;
  if ((mode & 0o002) !== 0) return `is writable by every user ${bits}`;
  // A directory may be writable by the service's own group (systemd's Group=); a file it
  // only reads need not be writable by any group.
  if ((mode & 0o020) !== 0 && (!directory || (group !== gid && group !== 0 && group !== trusted.group)))
    return `is writable by group ${group}${directory ? ", which is not the service's" : ''} ${bits}`;
  return undefined;
}

/**
 * Throws a CliError when a user other than root and the service's could change what
 * `path` (a file that exists) reads as: the file, or a directory above it.
 * `what` names it in the line, e.g. `credentials file /etc/x`.
 */
export function ensureOnlyOwnerCanChange(what: string, path: string): void {
  const advice = "use a directory only root or the service's user can write";
  let real: string;
  try {
    real = resolveSafely(what, path, 'the file', advice);
  } catch (error: unknown) {
    if (error instanceof CliError) throw error;
    throw new CliError(`cannot read ${what}: ${describeFsError(error)}`);
  }
  const problem = ownProblem(statSync(real), false);
  if (problem !== undefined) {
    const fix = problem.includes('owned by') ? `chown it to root or the service's user` : 'chmod go-w it';
    throw new CliError(`refusing ${what}: ${real === path ? 'it' : real} ${problem}; ${fix}`);
  }
}

/**
 * Throws a CliError when another user could replace an entry of `dir` or of one above it,
 * or could point a symlink on the way to it elsewhere: `refusing WHAT: directory D …, so
 * another user could replace WHICH; ADVICE`. A file-system error (no such directory) is
 * thrown as it is. Returns `dir`'s real path.
 */
export function ensureDirectoriesSafe(what: string, dir: string, which: string, advice: string): string {
  return resolveSafely(what, dir, which, advice);
}

/** As many symlinks as Linux follows in one path before ELOOP. */
const MAX_SYMLINKS = 40;

/**
 * Resolves `path` one component at a time, as the kernel does, and calls `visit` with each
 * directory it enters and each symlink it follows (by lstat, so the symlink itself), and
 * with the last entry. Returns the real path. File-system errors are thrown as they are.
 */
export function walkPath(
  path: string,
  visit: (entry: string, stats: Stats, role: 'directory' | 'symlink' | 'last') => void,
): string {
  let pending = (path.startsWith('/') ? path : `${process.cwd()}/${path}`).split('/');
  let current = '/';
  visit('/', lstatSync('/'), pending.some((name) => name !== '' && name !== '.') ? 'directory' : 'last');
  let links = 0;
  for (let name = pending.shift(); name !== undefined; name = pending.shift()) {
    if (name === '' || name === '.') continue;
    if (name === '..') {
      current = dirname(current); // `current` is a real path: its parent was entered before
      continue;
    }
    const entry = current === '/' ? `/${name}` : `${current}/${name}`;
    const stats = lstatSync(entry);
    if (stats.isSymbolicLink()) {
      visit(entry, stats, 'symlink');
      links += 1;
      if (links > MAX_SYMLINKS) throw Object.assign(new Error(`too many symlinks in ${path}`), { code: 'ELOOP' });
      const target = readlinkSync(entry);
      if (target.startsWith('/')) current = '/';
      pending = [...target.split('/'), ...pending];
      continue;
    }
    visit(entry, stats, pending.every((next) => next === '' || next === '.') ? 'last' : 'directory');
    current = entry;
  }
  return current;
}

/**
 * The real path of `path`, or a CliError for the first directory on the way that another
 * user could change (the last entry included when it is a directory) or the first symlink
 * on the way owned by another user.
 */
function resolveSafely(what: string, path: string, which: string, advice: string): string {
  const uid = process.geteuid?.() ?? 0;
  return walkPath(path, (entry, stats, role) => {
    if (role === 'symlink') {
      if (stats.uid === 0 || stats.uid === uid) return;
      throw new CliError(
        `refusing ${what}: symlink ${entry} is owned by another user (uid ${stats.uid}), who could point it elsewhere; give the path without it, or a symlink owned by root or the service's user`,
      );
    }
    if (role === 'last' && !stats.isDirectory()) return; // the caller judges the file itself
    const problem = ownProblem(stats, true);
    if (problem !== undefined) {
      throw new CliError(
        `refusing ${what}: directory ${entry} ${problem}, so another user could replace ${which}; ${advice}`,
      );
    }
  });
}

/** Whether a socket of `mode` lets users who are neither its owner nor in its group connect (connecting is writing). */
export function letsEveryoneConnect(mode: number): boolean {
  return (mode & 0o002) !== 0;
}

/** Whether every user of the machine may read `path` (a warning for a secret). */
export function readableByEveryone(path: string): number | undefined {
  try {
    const { mode } = statSync(path);
    return (mode & 0o004) !== 0 ? mode & 0o777 : undefined;
  } catch {
    return undefined;
  }
}

/**
 * What the owner rule (docs/API.md, The CLI) says about serving the database `file` as this
 * process's user. SQLite creates `-wal`, `-shm` and `-journal` beside a database as whoever
 * opens it first, and the service never leaves a file there that the application could not
 * use as its own:
 *
 * - `owner`: this process runs as the file's owner (root on root's file, as in a
 *   container). Whatever SQLite creates belongs to that owner, who is the application's
 *   user, so SQLite may create what it needs: a WAL file is served whether the application
 *   runs or not.
 * - `reader`: another user that cannot create files beside it. SQLite creates nothing, and
 *   a WAL file is opened only while its `-wal` and `-shm` exist.
 * - `refused`: another user that could create files there (the directory is writable for
 *   it: `access(W_OK)`; for root, which may write anywhere, the mode bits as for an
 *   ordinary user), or a path through another user's symlink. The service does not start;
 *   `line` says why and what to do. A check of the directory and SQLite's first read are
 *   two steps: in a directory the service could write, its own open once in a few of the
 *   application's open/close cycles created a `-wal` owned by the service, and the
 *   application's writes then failed. Only permissions close that window.
 *
 * `reader` too when the path does not lead to a regular file: the open says what is wrong.
 */
export type DatabaseAccess = { kind: 'owner' } | { kind: 'reader' } | { kind: 'refused'; line: string };

/**
 * The rule for the directories above the database (the ownership rule of the service's
 * other trusted files, with the application's user and group among the trusted): every
 * directory the path passes through must be owned by root, the service's user or
 * `application.user` (the database's owner, as the start found it), and writable by no
 * other user and no group but the service's, root's and `application.group`, unless it
 * has the sticky bit. Otherwise whoever owns or may write such a directory could rename
 * the application's directory away and put one of their own in its place, and the
 * service would serve their bookings at the next look. Checked at the start and at every
 * open of a replaced file. `application` defaults to the owner and group of the file now.
 */
export function databasePathProblem(file: string, application?: Trusted): string | undefined {
  let trusted = application;
  if (trusted === undefined) {
    try {
      const { uid, gid } = statSync(file);
      trusted = { user: uid, group: gid };
    } catch {
      return undefined; // nothing to judge: the open says what is missing
    }
  }
  let found: string | undefined;
  try {
    walkPath(file, (entry, stats, role) => {
      if (found !== undefined || (role !== 'directory' && !(role === 'last' && stats.isDirectory()))) return;
      const problem = ownProblem(stats, true, trusted);
      if (problem !== undefined) found = `directory ${entry} ${problem}`;
    });
  } catch {
    return undefined;
  }
  if (found === undefined) return undefined;
  return `refusing database ${file}: ${found}, so another user could put a directory of their own in its place and a database of their own at this path; give a path whose directories belong to root, the service's user or the application's (uid ${trusted.user ?? '?'}) and that no one else may write (chmod o-w, g-w)`;
}

/**
 * The owner rule and the rule for the directories above (databasePathProblem) on `file`,
 * as this process's user. `application`: the database's owner and group as the start found
 * them (the directories' trusted owner), for a replaced file; the file's own by default.
 */
export function judgeDatabaseFile(file: string, application?: Trusted): DatabaseAccess {
  const link = foreignSymlink(file);
  if (link !== undefined) {
    return {
      kind: 'refused',
      line: `refusing database ${file}: symlink ${link.entry} is owned by another user (uid ${link.owner}), who could point it at another file; give the path without it, or a symlink owned by root, the service's user or the owner of its directory`,
    };
  }
  const access = ownerRule(file);
  if (access.kind === 'refused') return access;
  const tree = databasePathProblem(file, application);
  return tree === undefined ? access : { kind: 'refused', line: tree };
}

/** The owner rule alone (DatabaseAccess). */
function ownerRule(file: string): DatabaseAccess {
  const uid = process.geteuid?.() ?? 0;
  let dir: string;
  let owner: number;
  let writable: boolean;
  try {
    const real = realpathSync(file);
    const stats = statSync(real);
    if (!stats.isFile()) return { kind: 'reader' };
    owner = stats.uid;
    if (owner === uid) return { kind: 'owner' };
    dir = dirname(real);
    if (uid === 0) {
      const { mode, uid: dirOwner, gid: group } = statSync(dir);
      writable =
        (dirOwner === 0 && (mode & 0o200) !== 0) || (group === 0 && (mode & 0o020) !== 0) || (mode & 0o002) !== 0;
    } else {
      writable = canWrite(dir);
    }
  } catch {
    return { kind: 'reader' };
  }
  if (!writable) return { kind: 'reader' };
  return {
    kind: 'refused',
    line: `refusing database ${file}: its directory ${dir} is writable by this service's user (uid ${uid}), which does not own the file (its owner is uid ${owner}), so SQLite could create -wal, -shm or -journal files there that the application then cannot write; run the service as the file's owner, or as a user of its own that may read the file and the directory but not write the directory (e.g. in the application's group, the directory 0750 and the file 0640: docs/operations.md, Users and permissions)`,
  };
}

/**
 * The first symlink on the way to `file` that is owned by someone other than root, this
 * process's user and the owner of the directory it is in (who could replace it anyway):
 * in a sticky directory such as /tmp, another user's symlink is theirs to point at another
 * file, whose bookings the service would then serve. The application's own symlinks in
 * its own directory pass. `undefined` also when the path does not resolve (the open says why).
 */
function foreignSymlink(file: string): { entry: string; owner: number } | undefined {
  const uid = process.geteuid?.() ?? 0;
  let found: { entry: string; owner: number } | undefined;
  try {
    walkPath(file, (entry, stats, role) => {
      if (found !== undefined || role !== 'symlink' || stats.uid === 0 || stats.uid === uid) return;
      if (lstatSync(dirname(entry)).uid !== stats.uid) found = { entry, owner: stats.uid };
    });
  } catch {
    return undefined;
  }
  return found;
}

function canWrite(dir: string): boolean {
  try {
    accessSync(dir, constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * Why this process may not read `file` (it was denied), as the end of a line that names the
 * service's user, the first entry on the way it may not pass (a directory it may not enter,
 * or the file it may not read) with its owner, group and mode, and what gives the user
 * read access: the application's group (docs/operations.md, Users and permissions).
 */
export function whyNotReadable(file: string): string {
  const uid = process.geteuid?.() ?? 0;
  const user = nameOf('passwd', uid);
  const who = `this service's user ${user ?? ''}${user === undefined ? '' : ' '}(uid ${uid})`;
  const advice = 'docs/operations.md, Users and permissions';
  const culprit = firstDenied(file);
  if (culprit === undefined) {
    return `${who} may not read it; give that user read access through the application's group (${advice})`;
  }
  const { path, directory, stats } = culprit;
  const owner = nameOf('passwd', stats.uid);
  const group = nameOf('group', stats.gid);
  const mode = (stats.mode & 0o7777).toString(8).padStart(3, '0');
  const what = directory ? `may not enter directory ${path}` : 'may not read the file';
  const details = `owner ${owner ?? 'uid'} ${owner === undefined ? stats.uid : `(uid ${stats.uid})`}, group ${group ?? 'gid'} ${group === undefined ? stats.gid : `(gid ${stats.gid})`}, mode ${mode}`;
  const bits = directory ? 'rx' : 'r';
  const steps: string[] = [];
  if (stats.uid === uid) steps.push(`chmod u+${bits} ${shellWord(path)}`);
  else {
    const member = stats.gid === process.getegid?.() || (process.getgroups?.() ?? []).includes(stats.gid);
    if (!member) {
      steps.push(
        `add ${user ?? `uid ${uid}`} to group ${group ?? stats.gid} (usermod -aG ${shellWord(group ?? String(stats.gid))} ${shellWord(user ?? String(uid))}, then restart the service)`,
      );
    }
    if ((stats.mode & (directory ? 0o010 : 0o040)) === 0) steps.push(`chmod g+${bits} ${shellWord(path)}`);
  }
  const fix =
    steps.length > 0
      ? `give it read access through the application's group: ${steps.join(' and ')}`
      : "give it read access through the application's group";
  return `${who} ${what} (${details}); ${fix} (${advice})`;
}

/** The first directory on the way to `file` that this process may not enter, or the file when it may not read it. */
function firstDenied(file: string): { path: string; directory: boolean; stats: Stats } | undefined {
  const names = resolve(file)
    .split('/')
    .filter((name) => name !== '');
  let path = '';
  for (const [index, name] of names.entries()) {
    path = `${path}/${name}`;
    const last = index === names.length - 1;
    try {
      accessSync(path, last ? constants.R_OK : constants.X_OK);
    } catch (error: unknown) {
      const code = errorCode(error);
      if (code !== 'EACCES' && code !== 'EPERM') return undefined;
      try {
        // The parent was entered, so the entry itself can be looked at.
        return { path: last ? file : path, directory: !last, stats: statSync(path) };
      } catch {
        return undefined;
      }
    }
  }
  return undefined;
}

/**
 * The name of user or group `id` as the system's name service knows it (`getent`, so LDAP
 * and sssd count too), or `undefined`. Asked only to word a refusal.
 */
function nameOf(database: 'passwd' | 'group', id: number): string | undefined {
  try {
    const entry = execFileSync('getent', [database, String(id)], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
      timeout: 2_000,
    });
    const name = entry.split(':')[0];
    return name !== undefined && /^[A-Za-z0-9._-]{1,64}$/.test(name) ? name : undefined;
  } catch {
    return undefined;
  }
}
