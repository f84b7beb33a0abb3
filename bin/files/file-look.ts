// A book's file as seen without SQLite: whether it is still the file opened (its identity,
// its fingerprint while written in place, its shape), and its journal as its header and the
// files beside it tell. Reads never wait (readHeader). Used by database-file.ts, the
// followed book (bin/books/) and `check`.

import { realpathSync, statSync } from 'node:fs';
import { basename, resolve } from 'node:path';
import { readHeader } from './file-kind.js';

// sqlite.org/fileformat.html §1.3: the header starts with this string; byte 19, the read version, is 2
// for a database in WAL mode, and SQLite then opens (or creates) FILE-wal and FILE-shm on the first read.
const SQLITE_MAGIC = 'SQLite format 3\0';
const READ_VERSION_OFFSET = 19;
const WAL_READ_VERSION = 2;
// sqlite.org/fileformat.html §4.1: a -wal starts with a header of 32 bytes; a commit is in the frames after it.
export const WAL_HEADER_BYTES = 32;

/** Whether `header` (a file's first bytes) starts as a SQLite database's does. */
export function isSqliteHeader(header: Buffer): boolean {
  return header.toString('latin1', 0, SQLITE_MAGIC.length) === SQLITE_MAGIC;
}

/**
 * The device and inode of what `path` leads to now (`dev:ino`), or `undefined` when there is
 * nothing there: another value is another file, whatever its name.
 */
export function identityOf(path: string): string | undefined {
  try {
    const { dev, ino } = statSync(path);
    return `${dev}:${ino}`;
  } catch {
    return undefined;
  }
}

/**
 * The file `file` names, as SQLite opens it: a symbolic link followed (SQLite's unix VFS
 * follows it; Windows' does not), as an absolute path; as given, made absolute, while there is
 * none.
 */
export function realFile(file: string): string {
  if (process.platform === 'win32') return resolve(file);
  try {
    return realpathSync(file);
  } catch {
    return resolve(file);
  }
}

/** Where SQLite keeps `file`'s `-wal`, `-shm` or `-journal`: beside the real file. */
export function besideFile(file: string, suffix: '-wal' | '-shm' | '-journal'): string {
  return `${realFile(file)}${suffix}`;
}

/** The name `file`'s `-wal`, `-shm` and `-journal` start with (besideFile): a link's target's. */
export function logName(file: string): string {
  return basename(realFile(file));
}

/**
 * The identities of a WAL file's `-wal` and `-shm`, or `undefined` while either is missing.
 * A connection keeps reading the two it opened: deleted or replaced under it (an application
 * started again then makes new ones), they are a log the file no longer has.
 */
export function walFilesOf(file: string): string | undefined {
  const wal = logIdentityOf(besideFile(file, '-wal'));
  const shm = logIdentityOf(besideFile(file, '-shm'));
  return wal && shm && `${wal} ${shm}`;
}

/** `identityOf` with the birth time, where the file system keeps one: a log made anew on a freed inode is another. */
function logIdentityOf(path: string): string | undefined {
  try {
    const { dev, ino, birthtimeNs } = statSync(path, { bigint: true });
    return `${dev}:${ino}:${birthtimeNs}`;
  } catch {
    return undefined;
  }
}

/**
 * `identityOf` with the file's size and times of change: it differs while a file is
 * written in place (cp over it keeps its inode), where its identity does not.
 */
export function fingerprintOf(path: string): string | undefined {
  try {
    const { dev, ino, size, mtimeNs, ctimeNs } = statSync(path, { bigint: true });
    return `${dev}:${ino}:${size}:${mtimeNs}:${ctimeNs}`;
  } catch {
    return undefined;
  }
}

/**
 * `fingerprintOf` the file and its `-wal`: it differs once anything was committed to the file,
 * also into the `-wal` of a WAL file, which leaves the file itself as it was until a checkpoint.
 */
export function committedOf(path: string): string | undefined {
  const file = fingerprintOf(path);
  return file && `${file} ${fingerprintOf(besideFile(path, '-wal')) ?? '-'}`;
}

/**
 * `identityOf` with the schema cookie of the file's header: the same while an application
 * writes rows, another once the file is replaced or its schema changes (a WAL file's, once
 * checkpointed). Read without SQLite, and never waits (readHeader).
 */
export function shapeOf(path: string): string | undefined {
  const identity = identityOf(path);
  const header = readHeader(path);
  return identity && `${identity}:${header.length < 44 ? '' : header.readUInt32BE(40)}`;
}

/** The journal of `file` as its header and the files beside it tell, without SQLite. */
export function journalOf(file: string): { wal: boolean; description: string } {
  const name = logName(file);
  const header = readHeader(file);
  if (!isSqliteHeader(header)) {
    return { wal: false, description: 'unknown (the file has no SQLite header)' };
  }
  if (header[READ_VERSION_OFFSET] === WAL_READ_VERSION) {
    const wal = sizeOf(besideFile(file, '-wal'));
    const shm = sizeOf(besideFile(file, '-shm'));
    const there = (suffix: string, size: number | undefined): string =>
      size === undefined ? `${name}${suffix} missing` : `${name}${suffix} ${size} bytes`;
    return { wal: true, description: `WAL (write-ahead log): ${there('-wal', wal)}, ${there('-shm', shm)}` };
  }
  const journal = sizeOf(besideFile(file, '-journal'));
  const log = logBytes(file);
  const read = log > 0 ? `; but ${name}-wal beside it holds ${log} bytes, which SQLite reads into it` : '';
  return {
    wal: false,
    description:
      journal === undefined
        ? `rollback journal (WAL is off); no journal file${read}`
        : `rollback journal (WAL is off); ${name}-journal ${journal} bytes (a write in progress, or one that was interrupted)${read}`,
  };
}

/**
 * The bytes of the -wal beside `file` when it holds commits, else 0. SQLite reads them into
 * the file whatever its header says: a file in WAL mode before, or another file's log left
 * beside this one (a backup restored beside the replaced file's -wal).
 */
export function logBytes(file: string): number {
  const log = sizeOf(besideFile(file, '-wal')) ?? 0;
  return log > WAL_HEADER_BYTES ? log : 0;
}

function sizeOf(file: string): number | undefined {
  try {
    return statSync(file).size;
  } catch {
    return undefined;
  }
}
