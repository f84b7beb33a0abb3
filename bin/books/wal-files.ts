// The -wal and -shm of a followed book's served file. Its connection keeps reading the two it
// opened, and keeps them on disk after the application closes the file (a read-only connection
// cannot remove them): deleted or replaced under it, they are a log the file no longer has;
// left beside another file that replaced it (a backup restored while the service ran), they
// are a log SQLite would read into that file, which must not be opened (docs/operations.md,
// Backups and restore).

import { statSync } from 'node:fs';
import { besideFile, identityOf, logName, realFile, WAL_HEADER_BYTES, walFilesOf } from '../files/index.js';

/**
 * The logs this process refuses as another file's, by book file (its real path, however it is
 * written): their -wal/-shm and the file they belong to (`of`, unknown once the path was seen
 * empty). Kept while they are there, also for a book a reload takes out and adds back (a log's
 * identity has its birth time: a new log on the old inodes is another). A process started anew
 * cannot tell them (a worker of --workers after a crash): the workers tell the primary, which
 * hands them to the worker it starts in place of one (bin/cluster/worker.ts, shareStaleLogs).
 */
export interface StaleLog {
  readonly of?: string | undefined;
  readonly files: string;
}
const refused = new Map<string, StaleLog>();
let told: ((file: string, log: StaleLog | undefined) => void) | undefined;

export const staleLogs = {
  /** Taken as refused before the books open: what the other processes refuse. */
  learn(logs: Readonly<Record<string, StaleLog>>): void {
    for (const [file, log] of Object.entries(logs)) refused.set(file, log);
  },
  /** `to` hears each log refused (`log`), each time it is found so (a message lost is sent again), or no longer (`undefined`). */
  tell(to: (file: string, log: StaleLog | undefined) => void): void {
    told = to;
  },
};

function note(file: string, log: StaleLog | undefined): void {
  const was = refused.get(file);
  if (log === undefined) refused.delete(file);
  else refused.set(file, log);
  if (log !== undefined || was !== undefined) told?.(file, log);
}

export class WalFiles {
  private readonly file: string;
  /**
   * The served file's -wal and -shm as its connection began, and the file's identity, which
   * the path has not held since it was seen empty (a file put there later may take its freed
   * inode); `undefined`: none, or gone.
   */
  private last: { of: string | undefined; files: string } | undefined;

  constructor(file: string) {
    this.file = file;
  }

  /** The real path the file's name leads to now, which keys what is refused (a link may be pointed elsewhere). */
  private key(): string {
    return realFile(this.file);
  }

  /**
   * The file of identity `of` is served from now on, its -wal and -shm `files` as its
   * connection opened them (a file moved in since, with or without a log, is not taken for it).
   */
  served(of: string | undefined, files: string | undefined): void {
    this.last = files === undefined ? undefined : { of, files };
    note(this.key(), undefined);
  }

  /**
   * The path was seen empty: whatever file is put there is taken for another one, whatever its
   * inode (a file copied in after `rm` may take the freed one; the file moved away and back
   * cannot be told from it: the line says to move the log aside, not to delete it).
   */
  emptied(): void {
    if (this.last !== undefined) this.last = { ...this.last, of: undefined };
  }

  /**
   * The served file, of identity `of`, looked at: whether the -wal or -shm its connection
   * opened are no longer there, deleted or replaced (then forgotten). A log that appeared
   * beside it since it was opened (its application turned it to WAL) is taken as its own.
   */
  look(of: string | undefined): boolean {
    if (this.last !== undefined) return this.gone();
    const files = walFilesOf(this.file);
    if (files !== undefined) this.last = { of, files };
    return false;
  }

  private gone(): boolean {
    if (this.last === undefined || walFilesOf(this.file) === this.last.files) return false;
    this.last = undefined;
    note(this.key(), undefined);
    return true;
  }

  /**
   * Why the file at the path is not opened now: the -wal and -shm beside it are still those
   * of the file served before, which another file replaced, and the -wal holds commits;
   * `undefined` when not (a file's own, none, or an empty log, which SQLite reads nothing
   * from). Once gone they are forgotten, for new ones may take their inodes. Nothing known of
   * the path's log yet (a first open), the one beside the file is taken as its own: SQLite
   * reads it into it, and a file moved in while it is opened finds it another's.
   */
  stale(): string | undefined {
    const now = identityOf(this.file);
    if (now === undefined) return undefined;
    // Refused where the name leads now, by this process or the others (a worker started anew, a
    // book added back, a link pointed back): another file's log here too, while it is there.
    const key = this.key();
    const known = refused.get(key);
    if (known !== undefined && walFilesOf(this.file) !== known.files) note(key, undefined);
    else if (known !== undefined && known.of !== now) {
      this.last = { of: known.of, files: known.files };
      return this.another(now);
    }
    // The served file itself (a check of it): its own -wal and -shm, looked at by the tick.
    if (this.last !== undefined && now !== this.last.of && !this.gone()) return this.another(now);
    if (this.last === undefined) {
      const files = walFilesOf(this.file);
      if (files !== undefined) this.last = { of: now, files };
    }
    return undefined;
  }

  /** The last log beside `now`, another file: refused, unless it is empty. */
  private another(now: string): string | undefined {
    const last = this.last as NonNullable<typeof this.last>;
    // An empty log, which SQLite reads nothing from, becomes the new file's as it opens it.
    if ((statSync(besideFile(this.file, '-wal'), { throwIfNoEntry: false })?.size ?? 0) <= WAL_HEADER_BYTES) {
      this.last = { ...last, of: now };
      note(this.key(), undefined);
      return undefined;
    }
    note(this.key(), this.last);
    const name = logName(this.file);
    return `database ${this.file} was replaced, but ${name}-wal and ${name}-shm beside it are still those of the file it replaced, which SQLite would read into this one: stop the application, move ${name}-wal and ${name}-shm out of the folder (they hold that file's last commits), then start the application; this service serves the file once they are gone; do not restart it before: started anew, it could not tell them from this file's own and would serve the old file's last commits (docs/operations.md, Backups and restore)`;
  }
}
