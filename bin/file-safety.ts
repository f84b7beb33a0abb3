// Who else could change a file the service trusts: its credentials file, its TLS key and
// certificate, the directory of its socket. The rule is OpenSSH's for its own files
// (StrictModes): the file, and every directory above it, must be owned by root or the
// service's user and writable by nobody else; a directory with the sticky bit (/tmp) is
// accepted, as others cannot rename or remove what is not theirs in it. A symlink is
// judged by what it points to (the path every part of which is resolved).

import { realpathSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { errorCode } from '../lib/errors.js';
import { CliError, describeFsError } from './errors.js';

const STICKY = 0o1000;

/** Why another user could change `path` itself, or `undefined`. `path` must exist. */
function ownProblem(path: string, directory: boolean): string | undefined {
  const { mode, uid: owner, gid: group } = statSync(path);
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
  let real: string;
  try {
    real = realpathSync(path);
  } catch (error: unknown) {
    throw new CliError(`cannot read ${what}: ${describeFsError(error)}`);
  }
  const problem = ownProblem(real, false);
  if (problem !== undefined) {
    const fix = problem.includes('owned by') ? `chown it to root or the service's user` : 'chmod go-w it';
    throw new CliError(`refusing ${what}: ${real === path ? 'it' : real} ${problem}; ${fix}`);
  }
  ensureDirectoriesSafe(what, dirname(real), 'the file', "use a directory only root or the service's user can write");
}

/**
 * Throws a CliError when another user could replace an entry of `dir` (a real path, no
 * symlink in it) or of one above it: `refusing WHAT: directory D …, so another user could
 * replace WHICH; ADVICE`.
 */
export function ensureDirectoriesSafe(what: string, dir: string, which: string, advice: string): void {
  for (let current = dir; ; current = dirname(current)) {
    let problem: string | undefined;
    try {
      problem = ownProblem(current, true);
    } catch (error: unknown) {
      if (errorCode(error) === 'ENOENT') throw new CliError(`cannot use ${what}: no such directory`);
      throw new CliError(`cannot use ${what}: ${describeFsError(error)}`);
    }
    if (problem !== undefined) {
      throw new CliError(
        `refusing ${what}: directory ${current} ${problem}, so another user could replace ${which}; ${advice}`,
      );
    }
    if (current === dirname(current)) return;
  }
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
