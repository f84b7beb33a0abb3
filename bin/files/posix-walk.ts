// The POSIX file rule's walk: a path resolved one component at a time (OpenSSH's
// secure_path, the kernel's own order), every directory it passes through and every
// symlink it follows handed to a judge, and the judge of one entry (ownProblem): owned by
// root, the service's user or a trusted one, and writable by nobody else; a directory
// with the sticky bit (/tmp) is accepted, as others cannot rename or remove what is not
// theirs in it. A symlink that another user made in a sticky directory is that user's to
// point elsewhere at any time (to /etc/passwd, say, read at the next reload); the sticky
// bit only keeps them from replacing the service's own.

import { lstatSync, readlinkSync, type Stats } from 'node:fs';
import { dirname } from 'node:path';
import { CliError } from '../base/index.js';
import type { Trusted } from './file-rule.js';
import { named } from './posix-readable.js';

const STICKY = 0o1000;

/** Why another user could change the entry with `stats` itself, or `undefined`. */
export function ownProblem(stats: Stats, directory: boolean, trusted: Trusted = {}): string | undefined {
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
    return `is writable by group ${named('group', group)}${directory ? ", which is not the service's" : ''} ${bits}`;
  return undefined;
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
export function resolveSafely(what: string, path: string, which: string, advice: string): string {
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
