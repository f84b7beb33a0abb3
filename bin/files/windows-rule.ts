// The file rule on Windows (file-rule.ts). Windows has no owner and mode bits to judge:
// Node.js reports every directory as mode 666 and every file as its reader's, and who may
// change a file is in its NTFS access list, which Node.js cannot read. So the rule checks
// what a process can check by itself (that the path resolves, by the platform's own path
// module, to a file that can be opened) and leaves who may change the service's files to
// NTFS permissions, which the service says once at the start. What SQLite creates beside
// a book inherits the folder's access list, so the service opens a WAL book as its owner
// would (the application's user keeps its rights on -wal and -shm through the folder).

import { type PathLike, realpathSync, type Stats, statSync } from 'node:fs';
import { userInfo } from 'node:os';
import path from 'node:path';
import { CliError, describeReadError, shellWord } from '../base/index.js';
import type { FileRule } from './file-rule.js';

/** What the rule reads of the file system; tests give path.win32 and a fake stat. */
export interface WindowsFileSystem {
  path: typeof path.win32;
  stat: (file: PathLike) => Stats;
  realpath: (file: PathLike) => string;
  /** The account the service runs as, for messages. */
  user: () => string;
}

const ADVICE = 'deploy/booking-search-server.xml says how';

export const NTFS_NOTICE = `on Windows this service does not judge who else may change its configuration, credentials, TLS and book files (Windows has no owner and mode bits to read): NTFS permissions do; let only Administrators and the service's account write their folders (icacls, ${ADVICE})`;

function currentUser(): string {
  try {
    return userInfo().username;
  } catch {
    return process.env['USERNAME'] ?? 'unknown';
  }
}

/** The rule over `fs` (the real one by default). */
export function windowsRule(
  fs: WindowsFileSystem = { path: path.win32, stat: statSync, realpath: realpathSync, user: currentUser },
): FileRule {
  const real = (file: string): string => fs.realpath(fs.path.resolve(file));
  const whyNotReadable = (file: string): string => {
    const user = fs.user();
    // A drive's root unquoted: in "D:\" the backslash would escape the closing quote.
    const folder = shellWord(fs.path.dirname(fs.path.resolve(file)), 'win32');
    return `this service's account ${user} may not read it; give that account read access to the file and its folder (icacls ${folder} /grant ${shellWord(`${user}:(OI)(CI)RX`, 'win32')}, ${ADVICE})`;
  };
  return {
    platform: 'windows',
    ensureOnlyOwnerCanChange(what, file) {
      try {
        fs.stat(real(file));
      } catch (error: unknown) {
        throw new CliError(`cannot read ${what}: ${describeReadError(error, () => whyNotReadable(file))}`);
      }
    },
    ensureDirectoriesSafe(_what, dir) {
      const resolved = real(dir);
      if (!fs.stat(resolved).isDirectory()) {
        throw Object.assign(new Error(`not a directory: ${resolved}`), { code: 'ENOTDIR' });
      }
      return resolved;
    },
    judgeDatabaseFile(file) {
      try {
        return fs.stat(real(file)).isFile() ? { kind: 'owner' } : { kind: 'reader' };
      } catch {
        return { kind: 'reader' }; // the open says what is missing
      }
    },
    // A named pipe's access list is Windows' default for its creator: the service's account,
    // Administrators and SYSTEM may connect.
    letsEveryoneConnect: () => false,
    // Every file reads as mode 666 on Windows: a warning would be said of every secret.
    readableByEveryone: () => undefined,
    whyNotReadable,
    leftToTheSystem: NTFS_NOTICE,
  };
}
