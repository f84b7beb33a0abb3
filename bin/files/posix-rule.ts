// The file rule on Linux, macOS and the other POSIX systems (file-rule.ts): who else could
// change a file the service trusts, its credentials file, its TLS key and certificate, the
// directory of its socket, the directories above the database it serves (with the
// application's user and group among the trusted); who else may connect to its socket or
// read a secret; and who would own what SQLite creates beside the database (the owner
// rule). The rule is OpenSSH's for its own files (StrictModes): the file, and every
// directory above it, must be owned by root or the service's user and writable by nobody
// else (posix-walk.ts); every symlink on the way must be owned by root or the service's
// user as well.

import { accessSync, constants, lstatSync, realpathSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { CliError, describeReadError } from '../base/index.js';
import type { DatabaseAccess, FileRule, Trusted } from './file-rule.js';
import { giveBackFile, labelled, named, whyNotReadable } from './posix-readable.js';
import { ownProblem, resolveSafely, walkPath } from './posix-walk.js';

/**
 * Throws a CliError when a user other than root and the service's could change what
 * `path` (a file that exists) reads as: the file, or a directory above it.
 * `what` names it in the line, e.g. `credentials file /etc/x`.
 */
function ensureOnlyOwnerCanChange(what: string, path: string): void {
  const advice = "use a directory only root or the service's user can write";
  let real: string;
  try {
    real = resolveSafely(what, path, 'the file', advice);
  } catch (error: unknown) {
    if (error instanceof CliError) throw error;
    throw new CliError(`cannot read ${what}: ${describeReadError(error, () => whyNotReadable(path, 'secret'))}`);
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
function ensureDirectoriesSafe(what: string, dir: string, which: string, advice: string): string {
  return resolveSafely(what, dir, which, advice);
}

/** Whether a socket of `mode` lets users who are neither its owner nor in its group connect (connecting is writing). */
function letsEveryoneConnect(mode: number): boolean {
  return (mode & 0o002) !== 0;
}

/** Whether every user of the machine may read `path` (a warning for a secret). */
function readableByEveryone(path: string): number | undefined {
  try {
    const { mode } = statSync(path);
    return (mode & 0o004) !== 0 ? mode & 0o777 : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The rule for the directories above the database (the ownership rule of the service's
 * other trusted files, with the application's user and group among the trusted): every
 * directory the path passes through must be owned by root, the service's user or
 * `application.user` (the application's user: applicationOf), and writable by no
 * other user and no group but the service's, root's and `application.group`, unless it
 * has the sticky bit. Otherwise whoever owns or may write such a directory could rename
 * the application's directory away and put one of their own in its place, and the
 * service would serve their bookings at the next look. Checked at the start and at every
 * open of a replaced file. `application` defaults to the application of the file now.
 */
function databasePathProblem(file: string, application?: Trusted): string | undefined {
  const trusted = application ?? applicationOf(file);
  if (trusted === undefined) return undefined; // nothing to judge: the open says what is missing
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
  const stranger = thirdOwner(file);
  if (stranger !== undefined) return stranger;
  return `refusing database ${file}: ${found}, so another user could put a directory of their own in its place and a database of their own at this path; give a path whose directories belong to root, the service's user or the application's (uid ${trusted.user ?? '?'}) and that no one else may write (chmod o-w, g-w)`;
}

/**
 * The refusal of `file` when it belongs to a user who is neither root nor the owner of the
 * directory holding it (who is neither root nor the service's user): that owner is the application, whose
 * directory the refusal should not advise giving away; the file is what is out of place,
 * so it is given back as a restore as root is (giveBackFile). `undefined` otherwise.
 */
function thirdOwner(file: string): string | undefined {
  try {
    const real = realpathSync(file);
    const { uid } = statSync(real);
    const holder = statSync(dirname(real)).uid;
    if (uid === 0 || holder === 0 || holder === uid || holder === process.geteuid?.()) return undefined;
    return `refusing database ${file}: it belongs to user ${named('passwd', uid)}, not to the owner of its directory, ${named('passwd', holder)}, so another user could have put it there; if it is the application's file, ${giveBackFile(file)} (docs/operations.md, Users and permissions)`;
  } catch {
    return undefined;
  }
}

/**
 * The owner rule and the rule for the directories above (databasePathProblem) on `file`,
 * as this process's user. `application`: the directories' trusted owner and group, the
 * application as the start found it, for a replaced file; the file's own by default.
 */
function judgeDatabaseFile(file: string, application?: Trusted): DatabaseAccess {
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

/**
 * The application's user and group as `file` tells them: its owner and group; but a file
 * of root's says nothing of the application (root restored it, as a backup copied as root
 * is), so the owner and group of the directory holding it, the application's own. Whoever
 * owns that directory could put a file of their own there anyway. `undefined` when there
 * is nothing at the path.
 */
export function applicationOf(file: string): Trusted | undefined {
  try {
    const { uid, gid } = statSync(file);
    if (uid !== 0) return { user: uid, group: gid };
    const holder = statSync(dirname(realpathSync(file)));
    return { user: holder.uid, group: holder.gid };
  } catch {
    return undefined;
  }
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
    // Said of a file it may read; of one it may not, the open's line says the same.
    if (owner === 0 && statSync(dir).uid !== 0 && !canWrite(dir) && canAccess(real, constants.R_OK))
      return { kind: 'reader', warning: restored(file) };
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
  if (!writable) return uid === 0 ? { kind: 'reader', warning: rootReads(file, owner) } : { kind: 'reader' };
  return {
    kind: 'refused',
    line: `refusing database ${file}: its directory ${dir} is writable by this service's user ${labelled('passwd', uid, 'uid')}, which does not own the file (its owner is ${labelled('passwd', owner, 'uid')}), so SQLite could create -wal, -shm or -journal files there that the application then cannot write; run the service as the file's owner, or as a user of its own that may read the file and the directory but not write the directory (e.g. in the application's group, the directory 0750 and the file 0640: docs/operations.md, Users and permissions)`,
  };
}

/**
 * The warning when another user serves `file`, which belongs to root in a directory that
 * is not root's: a restore as root, which the application (the directory's owner) cannot
 * write; the directories above were judged for that application (applicationOf).
 */
function restored(file: string): string {
  return `database ${file} belongs to root, so the application that owns its directory cannot write it; ${giveBackFile(file)} (docs/operations.md, Users and permissions)`;
}

/** The warning when root serves `file`, which belongs to user `owner` (docs/operations.md, Users and permissions). */
function rootReads(file: string, owner: number): string {
  return `database ${file} belongs to user ${named('passwd', owner)}, but this service runs as root, which may read and write every file; serve another user's file as its owner or as a user of its own (docs/operations.md, Users and permissions)`;
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
  return canAccess(dir, constants.W_OK);
}

function canAccess(path: string, mode: number): boolean {
  try {
    accessSync(path, mode);
    return true;
  } catch {
    return false;
  }
}

export const posixRule: FileRule = {
  platform: 'posix',
  ensureOnlyOwnerCanChange,
  ensureDirectoriesSafe,
  judgeDatabaseFile,
  letsEveryoneConnect,
  readableByEveryone,
  whyNotReadable,
  leftToTheSystem: undefined,
};
