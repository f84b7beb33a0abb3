// --socket PATH: listening where only the proxy can reach. Before listening, the directory
// is checked (only the service's user or root may be able to replace an entry in it and in
// every directory above it, unless the sticky bit forbids that) and the path is made free (a
// socket nobody answers on is a leftover of a killed process and replaced; anything else is
// refused).
//
// The socket is born with its mode: bind() creates it with 0777 & ~umask, so the umask is
// set from --socket-mode before listening, and it is never chmodded. A chmod by path after
// listen() follows whatever the path names by then: in a directory that others can write,
// another user could swap a symlink in and have a root-owned file's mode changed. The group
// (--socket-group) is set with lchown, which changes the entry itself and never follows a
// symlink, in a directory that the check above shows nobody else can write: the entry the
// chown reaches is the socket that bind() just made.

import { execFileSync } from 'node:child_process';
import { lchownSync, lstatSync, unlinkSync } from 'node:fs';
import { connect } from 'node:net';
import { dirname } from 'node:path';
import { errorCode } from '../../lib/internal.js';
import { CliError, describeFsError, shellWord } from '../base/index.js';
import { ensureDirectoriesSafe } from '../files/index.js';

/**
 * Checks the socket's directory and removes a stale socket at `path`; throws a CliError
 * when the directory is not safe, or the path is in use or not a socket.
 */
export async function prepareSocketPath(path: string): Promise<void> {
  if (process.platform === 'win32') return prepareNamedPipe(path);
  checkSocketDirectory(path);
  let isSocket: boolean;
  try {
    isSocket = lstatSync(path).isSocket();
  } catch (error: unknown) {
    if (errorCode(error) === 'ENOENT') return;
    throw new CliError(`cannot use socket ${path}: ${describeFsError(error)}`);
  }
  if (!isSocket) throw new CliError(`cannot use socket ${path}: it exists and is not a socket; refusing to replace it`);
  if (await answers(path)) throw new CliError(socketInUse(path));
  try {
    unlinkSync(path);
  } catch (error: unknown) {
    if (errorCode(error) !== 'ENOENT')
      throw new CliError(`cannot remove stale socket ${path}: ${describeFsError(error)}`);
  }
}

/** Why a socket that another process listens on is not taken, and what to do, as for a port in use. */
export function socketInUse(path: string): string {
  return `cannot use socket ${path}: another process is listening on it; stop that program, or choose another path`;
}

// On Windows, Node.js listens on a path as a named pipe: \\.\pipe\NAME. A pipe lives in no
// directory and leaves nothing behind when its process ends; who may connect is its access
// list, Windows' default for the creator (the service's account, Administrators, SYSTEM).
const NAMED_PIPE = /^\\\\[.?]\\pipe\\[^\\]{1,200}$/i;

async function prepareNamedPipe(path: string): Promise<void> {
  if (!NAMED_PIPE.test(path)) {
    throw new CliError(
      `cannot listen on socket ${path}: on Windows a socket is a named pipe, written \\\\.\\pipe\\NAME`,
    );
  }
  if (await answers(path)) throw new CliError(socketInUse(path));
}

/**
 * The socket's directory and each one above it must be owned by root or the service's user
 * and writable by no one else (another user, a group that is not the service's own), unless
 * its sticky bit keeps others from renaming or removing what the service created (/tmp).
 * Otherwise another user could replace the socket with their own, and read the passwords
 * the proxy passes on, or swap the entry while the service sets its group. A symlink on
 * the way must be root's or the service's user's too (bin/files/file-safety.ts).
 */
export function checkSocketDirectory(path: string): void {
  try {
    // The directory as bind() will reach it: '..' after a symlink is the symlink target's parent.
    ensureDirectoriesSafe(
      `socket ${path}`,
      dirname(path),
      'the socket',
      "use a directory only the service's user can write, such as systemd's RuntimeDirectory=",
    );
  } catch (error: unknown) {
    if (error instanceof CliError) throw error;
    if (errorCode(error) === 'ENOENT') throw new CliError(`cannot listen on socket ${path}: no such directory`);
    throw new CliError(`cannot listen on socket ${path}: ${describeFsError(error)}`);
  }
}

function answers(path: string): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = connect({ path });
    probe.once('connect', () => {
      probe.destroy();
      resolve(true);
    });
    // ECONNREFUSED: a socket file without a listener. Any other error: nobody answers either.
    probe.once('error', () => resolve(false));
  });
}

/**
 * The umask under which bind() creates the socket with `mode`. The service creates no other
 * file, so it is set for the whole process (with --workers the primary binds, for the
 * workers, when the first of them listens).
 */
export function useSocketMode(mode: number): void {
  process.umask(0o777 & ~mode);
}

/**
 * Gives the socket at `path` its `group` (a name or number; `undefined` keeps the process's),
 * once it exists (see the top of this file for why lchown).
 */
export function applySocketGroup(path: string, group: string | undefined): void {
  if (group === undefined) return;
  const gid = groupId(group);
  try {
    lchownSync(path, -1, gid);
  } catch (error: unknown) {
    const code = errorCode(error);
    const why =
      code === 'EPERM' ? 'not permitted (the service user must be a member of that group)' : describeFsError(error);
    throw new CliError(`cannot set group ${group} on socket ${path}: ${why}`);
  }
}

/**
 * A group number, or the number of a named group as the system's name service knows it:
 * `getent group` asks NSS, so a group from LDAP or sssd counts as well as one in /etc/group.
 * macOS has no getent: its directory service answers (`dscl /Search`, local groups and a
 * directory's alike).
 */
export function groupId(group: string, platform: NodeJS.Platform = process.platform): number {
  if (/^[0-9]{1,9}$/.test(group)) return Number(group);
  const darwin = platform === 'darwin';
  // A name starting with '-' is no group, and the tool would take it for an option; a '/'
  // would be a path to dscl.
  const asked =
    group.startsWith('-') || group.includes('/') ? undefined : darwin ? dsclGroup(group) : getentGroup(group);
  if (asked !== undefined && /^[0-9]{1,9}$/.test(asked)) return Number(asked);
  const tool = darwin
    ? `dscl /Search -read /Groups/${shellWord(group)} PrimaryGroupID`
    : `getent group ${shellWord(group)}`;
  throw new CliError(`no group '${group}' on this system (${tool}); give its number instead`);
}

/** The output of `command`, or '' when it fails (a group it does not know, or no such tool). */
function ask(command: string, args: string[]): string {
  try {
    return execFileSync(command, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], timeout: 5_000 });
  } catch {
    return '';
  }
}

/** getent's line is name:password:gid:members. */
function getentGroup(group: string): string | undefined {
  return ask('getent', ['group', group]).split('\n')[0]?.split(':')[2];
}

/** dscl says `PrimaryGroupID: 20`. */
function dsclGroup(group: string): string | undefined {
  return /^PrimaryGroupID:\s*([0-9]{1,9})\s*$/m.exec(
    ask('dscl', ['/Search', '-read', `/Groups/${group}`, 'PrimaryGroupID']),
  )?.[1];
}
