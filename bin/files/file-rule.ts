// The file rule's one interface: who else could change a file the service trusts (its
// configuration, credentials, TLS key and certificate, the directory of its socket, the
// directories above a book), who would own what SQLite creates beside a book, and why a
// book cannot be read. Each platform has its own rule behind it (file-safety.ts chooses):
// posix-rule.ts judges owners and modes as OpenSSH does; windows-rule.ts checks what
// Windows lets a process check by itself and leaves the rest to NTFS permissions, which it
// says once at the start.

/**
 * Who may own (and whose group may write) what the service trusts besides root and the
 * service's own user and group: for the database, its owner, the application's user.
 */
export interface Trusted {
  user?: number | undefined;
  group?: number | undefined;
}

/**
 * What the owner rule (docs/operations.md, Users and permissions) says about serving the database `file` as this
 * process's user. SQLite creates `-wal`, `-shm` and `-journal` beside a database as whoever
 * opens it first, and the service never leaves a file there that the application could not
 * use as its own:
 *
 * - `owner`: this process runs as the file's owner (root on root's file, as in a
 *   container; on Windows, whoever may open it: what SQLite creates inherits the folder's
 *   permissions). Whatever SQLite creates belongs to that owner, who is the application's
 *   user, so SQLite may create what it needs: a WAL file is served whether the application
 *   runs or not.
 * - `reader`: another user that cannot create files beside it. SQLite creates nothing, and
 *   a WAL file is opened only while its `-wal` and `-shm` exist. `warning`: root reads
 *   another user's file (a container's root often does: served, but said once at the
 *   start and by `check`).
 * - `refused`: another user that could create files there (the directory is writable for
 *   it: `access(W_OK)`; for root, which may write anywhere, the mode bits as for an
 *   ordinary user), or a path through another user's symlink. The service does not start;
 *   `line` says why and what to do. A check of the directory and SQLite's first read are
 *   two steps: in a directory the service could write, its own open once in a few of the
 *   application's open/close cycles created a `-wal` owned by the service, and the
 *   application's writes then failed. Only permissions close that window.
 *
 * `reader` too when the path does not lead to a regular file: the open says what is wrong.
 */
export type DatabaseAccess =
  | { kind: 'owner' }
  | { kind: 'reader'; warning?: string }
  | { kind: 'refused'; line: string };

/** Whose file the service reads: the application's book, or one of its own (a secret to every other user). */
export type FileKind = 'book' | 'secret';

/** One platform's file rule. */
export interface FileRule {
  readonly platform: 'posix' | 'windows';
  /**
   * Throws a CliError when a user other than root and the service's could change what
   * `path` (a file that exists) reads as: the file, or a directory above it.
   * `what` names it in the line, e.g. `credentials file /etc/x`.
   */
  ensureOnlyOwnerCanChange(what: string, path: string): void;
  /**
   * Throws a CliError when another user could replace an entry of `dir` or of one above it,
   * or could point a symlink on the way to it elsewhere: `refusing WHAT: directory D …, so
   * another user could replace WHICH; ADVICE`. A file-system error (no such directory) is
   * thrown as it is. Returns `dir`'s real path.
   */
  ensureDirectoriesSafe(what: string, dir: string, which: string, advice: string): string;
  /**
   * The owner rule and the rule for the directories above on `file`, as this process's
   * user. `application`: the directories' trusted owner and group, the application as the
   * start found it, for a replaced file; the file's own by default (applicationOf).
   */
  judgeDatabaseFile(file: string, application?: Trusted): DatabaseAccess;
  /** Whether a socket of `mode` lets users who are neither its owner nor in its group connect (connecting is writing). */
  letsEveryoneConnect(mode: number): boolean;
  /** The mode when every user of the machine may read `path` (a warning for a secret), else `undefined`. */
  readableByEveryone(path: string): number | undefined;
  /**
   * Why this process may not read `file` (it was denied), as the end of a line that names
   * the service's user, what stops it and what gives it read access: for a `book`, the
   * application's group; for a file of the service's own (`secret`: its configuration,
   * credentials, TLS key), root and the service's group, as docs/operations.md sets them up.
   */
  whyNotReadable(file: string, kind?: FileKind): string;
  /** What this rule leaves to the system's own permissions, said once at the start; `undefined` when nothing. */
  readonly leftToTheSystem: string | undefined;
}
