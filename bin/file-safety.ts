// Who else could change a file the service trusts: its credentials file, its TLS key and
// certificate, the directory of its socket. The rule is OpenSSH's for its own files
// (StrictModes): the file, and every directory above it, must be owned by root or the
// service's user and writable by nobody else; a directory with the sticky bit (/tmp) is
// accepted, as others cannot rename or remove what is not theirs in it. The path is
// resolved one component at a time (OpenSSH's secure_path, the kernel's own order): every
// directory it passes through is judged, and every symlink on the way must be owned by
// root or the service's user as well. A symlink that another user made in a sticky
// directory is that user's to point elsewhere at any time (to /etc/passwd, say, read at
// the next SIGHUP); the sticky bit only keeps them from replacing the service's own.

import { lstatSync, readlinkSync, type Stats, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { CliError, describeFsError } from './errors.js';

const STICKY = 0o1000;

/** Why another user could change the entry with `stats` itself, or `undefined`. */
function ownProblem(stats: Stats, directory: boolean): string | undefined {
  const { mode, uid: owner, gid: group } = stats;
  const uid = process.geteuid?.() ?? 0;
  const gid = process.getegid?.() ?? 0;
  const bits = `(mode ${(mode & 0o7777).toString(8)})`;
  if (owner !== 0 && owner !== uid) return `is owned by another user (uid ${owner}) ${bits}`;
  if (directory && (mode & STICKY) !== 0) return undefined;
  if ((mode & 0o002) !== 0) return `is writable by every user ${bits}`;
  // A directory may be writable by the service's own group (systemd's Group=); a file it
  // only reads need not be writable by any group.
  if ((mode & 0o020) !== 0 && (!directory || (group !== gid && group !== 0)))
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

/** Whether every user of the machine may read `path` (a warning for a secret). */
export function readableByEveryone(path: string): number | undefined {
  try {
    const { mode } = statSync(path);
    return (mode & 0o004) !== 0 ? mode & 0o777 : undefined;
  } catch {
    return undefined;
  }
}
