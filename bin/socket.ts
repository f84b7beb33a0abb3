// --socket PATH: listening where only the proxy can reach. The path is made safe before
// listening (a socket nobody answers on is a leftover of a killed process and replaced;
// anything else is refused), and given its mode and group right after: node:net creates it
// with the process's umask, which under the usual 022 lets only its owner connect.

import { chmodSync, chownSync, lstatSync, readFileSync, unlinkSync } from 'node:fs';
import { connect } from 'node:net';
import { errorCode } from '../lib/errors.js';
import { CliError, describeFsError } from './errors.js';

export interface SocketOptions {
  path: string;
  /** Permission bits, e.g. 0o660. */
  mode: number;
  /** A group name or number, or `undefined` to keep the process's group. */
  group: string | undefined;
}

/** Removes a stale socket at `path`; throws a CliError when the path is in use or not a socket. */
export async function clearSocketPath(path: string): Promise<void> {
  let isSocket: boolean;
  try {
    isSocket = lstatSync(path).isSocket();
  } catch (error: unknown) {
    if (errorCode(error) === 'ENOENT') return;
    throw new CliError(`cannot use socket ${path}: ${describeFsError(error)}`);
  }
  if (!isSocket) throw new CliError(`cannot use socket ${path}: it exists and is not a socket; refusing to replace it`);
  if (await answers(path)) throw new CliError(`cannot use socket ${path}: another process is listening on it`);
  try {
    unlinkSync(path);
  } catch (error: unknown) {
    if (errorCode(error) !== 'ENOENT')
      throw new CliError(`cannot remove stale socket ${path}: ${describeFsError(error)}`);
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

/** Sets the socket's mode and group, once it exists. */
export function applySocketPermissions({ path, mode, group }: SocketOptions): void {
  try {
    if (group !== undefined) chownSync(path, -1, groupId(group));
    chmodSync(path, mode);
  } catch (error: unknown) {
    if (error instanceof CliError) throw error;
    const code = errorCode(error);
    const why =
      code === 'EPERM' ? 'not permitted (the service user must be a member of that group)' : describeFsError(error);
    throw new CliError(
      `cannot set mode ${mode.toString(8)}${group === undefined ? '' : ` and group ${group}`} on socket ${path}: ${why}`,
    );
  }
}

/** A group number, or the number of a group named in /etc/group. */
export function groupId(group: string): number {
  if (/^[0-9]{1,9}$/.test(group)) return Number(group);
  let text = '';
  try {
    text = readFileSync('/etc/group', 'utf8');
  } catch {
    // Falls through to "no such group".
  }
  for (const line of text.split('\n')) {
    const [name, , gid] = line.split(':');
    if (name === group && gid !== undefined && /^[0-9]+$/.test(gid)) return Number(gid);
  }
  throw new CliError(`no group '${group}' in /etc/group; give its number instead`);
}
