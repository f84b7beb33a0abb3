// How the command reads a small file it trusts (the configuration file, the credentials
// file, the TLS key and certificate): a regular file only, of bounded size, read in one go.
// A FIFO or a device in its place would block the start or a reload for good (a FIFO
// without a writer) or never end (/dev/zero); such a file is refused in one line instead.

import { closeSync, constants, fstatSync, openSync, readSync, type Stats } from 'node:fs';
import { CliError, describeFsError, describeReadError } from '../base/index.js';
import { whyNotReadable } from './file-safety.js';

/** Larger than any configuration, credentials or TLS file the service is meant to read. */
export const MAX_READ_BYTES = 16 * 1024 * 1024;

/**
 * The content of `file`, named `what` in messages (`configuration file /etc/x.conf`).
 * Throws a CliError when it cannot be read, is not a regular file, or is larger than
 * `maxBytes`.
 */
export function readRegularFile(what: string, file: string, maxBytes = MAX_READ_BYTES): Buffer {
  let fd: number;
  try {
    // Never waits: a FIFO opens at once with O_NONBLOCK, and is refused below before a read.
    fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY);
  } catch (error: unknown) {
    throw new CliError(`cannot read ${what}: ${describeReadError(error, () => whyNotReadable(file, 'secret'))}`);
  }
  try {
    const stats = fstatSync(fd);
    if (!stats.isFile()) throw new CliError(`cannot read ${what}: it is ${kindOf(stats)}, not a regular file`);
    if (stats.size > maxBytes) throw new CliError(`cannot read ${what}: it is larger than ${maxBytes} bytes`);
    return readAll(fd, what, maxBytes);
  } finally {
    closeSync(fd);
  }
}

/** Up to `maxBytes` of `fd`; one byte more is an error (a file that grew while it was read). */
function readAll(fd: number, what: string, maxBytes: number): Buffer {
  const buffer = Buffer.alloc(Math.min(maxBytes + 1, 64 * 1024));
  const chunks: Buffer[] = [];
  let total = 0;
  for (;;) {
    let read: number;
    try {
      read = readSync(fd, buffer, 0, buffer.length, null);
    } catch (error: unknown) {
      throw new CliError(`cannot read ${what}: ${describeFsError(error)}`);
    }
    if (read === 0) return Buffer.concat(chunks, total);
    total += read;
    if (total > maxBytes) throw new CliError(`cannot read ${what}: it is larger than ${maxBytes} bytes`);
    chunks.push(Buffer.from(buffer.subarray(0, read)));
  }
}

function kindOf(stats: Stats): string {
  if (stats.isDirectory()) return 'a directory';
  if (stats.isFIFO()) return 'a FIFO (named pipe)';
  if (stats.isCharacterDevice() || stats.isBlockDevice()) return 'a device';
  if (stats.isSocket()) return 'a socket';
  return 'of another kind';
}
