// The one way a listener of the service starts listening: on a host and port, or on a Unix
// socket (a named pipe on Windows) whose path is made ready first and whose group is set
// after; and the one line that says why it cannot, for the API listener and the admin
// listener alike.

import { once } from 'node:events';
import { existsSync } from 'node:fs';
import type { Server } from 'node:http';
import { BlockList, isIP } from 'node:net';
import { dirname } from 'node:path';
import { errorCode } from '../../lib/internal.js';
import { CliError, describeError, describeFsError } from '../base/index.js';
import { applySocketGroup, prepareSocketPath, socketInUse } from './socket.js';

/** Where a listener listens: a host and port, or a socket's path with its group (--socket-group). */
export type ListenAddress =
  | { host: string; port: number }
  | {
      socket: string;
      group: string | undefined;
      /** The path was made ready already: with --workers the primary cleared it, and the workers share its socket. */
      prepared?: boolean;
    };

/**
 * Listens on `where`; when it cannot, closes `server` and throws a CliError whose line says
 * why, `who` first (`the admin listener: `; the API listener's lines start with the reason).
 */
export async function listenOn(server: Server, where: ListenAddress, who = ''): Promise<void> {
  try {
    if ('socket' in where) {
      if (where.prepared !== true) await prepareSocketPath(where.socket);
      server.listen(where.socket);
      await once(server, 'listening');
      applySocketGroup(where.socket, where.group);
    } else {
      server.listen(where.port, where.host);
      await once(server, 'listening');
    }
  } catch (error: unknown) {
    server.close();
    throw new CliError(`${who}${error instanceof CliError ? error.message : whyNot(error, where)}`);
  }
}

function whyNot(error: unknown, where: ListenAddress): string {
  const code = errorCode(error);
  if ('socket' in where) {
    const path = where.socket;
    if (code === 'EADDRINUSE') return socketInUse(path);
    // libuv reports a missing directory as EACCES too.
    if (!existsSync(dirname(path))) return `cannot listen on socket ${path}: no such directory`;
    return `cannot listen on socket ${path}: ${describeFsError(error)}`;
  }
  const { host, port } = where;
  if (code === 'EADDRINUSE')
    return `port ${port} on ${host} is already in use: stop the program that listens there, or choose another port`;
  if (code === 'EACCES') return `no permission to listen on port ${port} (ports below 1024 need privileges)`;
  if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND' || code === 'EAI_AGAIN')
    return `cannot listen on ${host}: no such address on this machine`;
  return `cannot listen on ${host}:${port}: ${describeError(error)}`;
}

// 127.0.0.0/8 and ::1; a BlockList compares an address in any spelling, an IPv4-mapped IPv6
// one (`::ffff:127.0.0.1`, as a dual-stack socket shows it) with its IPv4 address.
const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');

/** Whether `host` is an address only this machine can reach, in any spelling. */
export function isLoopback(host: string): boolean {
  const family = isIP(host);
  return host === 'localhost' || (family !== 0 && LOOPBACK.check(host, family === 6 ? 'ipv6' : 'ipv4'));
}
