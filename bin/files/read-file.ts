// How the command reads a small file it trusts (the configuration file, the credentials
// file, the TLS key and certificate): a regular file only, of bounded size, read in one go.
// A FIFO or a device in its place would block the start or a reload for good (a FIFO
// without a writer) or never end (/dev/zero); such a file is refused in one line instead.
// A text file (configuration, credentials) is UTF-8, a BOM at its start aside: one Windows
// saves in another encoding is refused in one line, as its text would be misread without a
// word (a UTF-16 line as no line, a Windows-1252 "ü" as U+FFFD in a path or a password).

import { isUtf8 } from 'node:buffer';
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

/**
 * The text of `file`, named `what` in messages, without a BOM at its start (Notepad's "UTF-8
 * with BOM"). Throws a CliError as readRegularFile does, and when the file is UTF-16 or not
 * UTF-8, saying to save it as UTF-8.
 */
export function readTextFile(what: string, file: string): string {
  const bytes = readRegularFile(what, file);
  const resave = 'save it as UTF-8';
  const utf16 = `UTF-16 (Notepad's "Unicode", PowerShell 5's >)`;
  const bom = bytes.subarray(0, 2).toString('hex');
  if (bom === 'fffe' || bom === 'feff') throw new CliError(`${what} is ${utf16}: ${resave}`);
  // UTF-16 without a BOM: every ASCII character comes with a NUL byte, which no text holds.
  if (bytes.includes(0)) throw new CliError(`${what} holds NUL bytes, as ${utf16} does: ${resave}`);
  if (!isUtf8(bytes)) throw new CliError(`${what} is not UTF-8 (line ${firstLineNotUtf8(bytes)}): ${resave}`);
  const text = bytes.toString('utf8');
  return text.startsWith('\uFEFF') ? text.slice(1) : text;
}

/** The first line, from 1, of `bytes` that is not UTF-8 (a line break is never inside a UTF-8 character). */
function firstLineNotUtf8(bytes: Buffer): number {
  let start = 0;
  for (let line = 1; ; line += 1) {
    const end = bytes.indexOf(0x0a, start);
    if (end === -1 || !isUtf8(bytes.subarray(start, end))) return line;
    start = end + 1;
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
