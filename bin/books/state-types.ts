// The words of bin/books/states.ts: a followed book's file's states, the events fed to them
// and the effects they ask for.

/** Why searches cannot be answered now; `waits`: a state that passes by itself (Retry-After). */
export interface Cause {
  readonly code: string;
  readonly message: string;
  readonly waits: boolean;
  /** Another program's lock: the file is not broken, a served book keeps its connection. */
  readonly lock?: true | undefined;
}

/** How an open of the file ended: served over `connection`, or not, and why. */
export type Outcome<C> =
  | { readonly serving: true; readonly connection: C; readonly inode: string | undefined }
  | {
      readonly serving: false;
      readonly cause: Cause;
      /** The file whose open did not end within the time limit: not tried again until another is there. */
      readonly timedOut?: string | undefined;
      /** A passing moment (the file changed while it was opened), not said in the log. */
      readonly quiet?: true;
      /** Its bookings not judged within the limit through a slow view: tried again later (Backoff). */
      readonly slow?: true;
      /** With `slow`: the file's fingerprint as that open began, and when it began to read the file. */
      readonly written?: string | undefined;
      readonly began?: number;
    };

/**
 * A file tried again after a judgement through a slow view that did not end in time: when
 * it is tried next (bin/books/backoff.ts). `written`: its fingerprint as that try began;
 * `ended`: when the try ended; `leastMs`: the wait before the next try once the file
 * changed; `waitMs`: the wait while it stays as it was.
 */
export interface Backoff {
  readonly written: string | undefined;
  readonly ended: number;
  readonly leastMs: number;
  readonly waitMs: number;
}

/**
 * What is at the path of the file last served: that file (`served`: its inode, there or none
 * seen, as in a directory closed to this process), or `another`, a replacement not served yet.
 */
export interface There {
  readonly served?: string | undefined;
  readonly another?: true | undefined;
}

/**
 * Whose first look at a file it is: the service's start, which a file that cannot be served
 * ends (one its application's setting refuses waits); a reload's, which any such file ends
 * (the running configuration kept); a process's that joins a running service (a worker
 * replacing another), or a start of several books (bin/books/serve-books.ts), for which that
 * is a state, as a later look's is.
 */
export type First = 'start' | 'reload' | 'joins';

/** An open under way: the first one, or a later look and what was before it. */
export interface Look {
  readonly first: false | First;
  /** The served file was still at the path when the look began (a schema change, a torn read). */
  readonly sameFile: boolean;
  /**
   * The inode of the file last served, when it was at the path as the look began (served, or
   * not readable since), or nothing could be seen there (a directory closed to this process):
   * a file it opens with that inode is that file again, not another.
   */
  readonly served?: string | undefined;
  /** Another file than the one last served was at the path: a replacement, counted when it serves. */
  readonly another?: true | undefined;
  /** The look began while the file was waited for (a lock, a journal, a WAL to recover). */
  readonly wasWaiting: boolean;
  /** The backoff it was tried after: how long the next waits (Backoff). */
  readonly backoff?: Backoff;
}

/**
 * Where the file is: being opened, served (`checking`: opened again beside it; `lock`: a lock
 * held, searches still tried and the book said waiting), or not served (and why).
 */
export type Phase<C> =
  | { readonly is: 'opening'; readonly cause: Cause; readonly look: Look }
  | {
      readonly is: 'served';
      readonly connection: C;
      readonly inode: string | undefined;
      readonly checking?: true;
      readonly lock?: Cause;
    }
  | {
      readonly is: 'unavailable';
      readonly cause: Cause;
      readonly timedOut?: string | undefined;
      readonly quiet?: true | undefined;
      /** The file last served, at the path when it could not be read (its mode changed): Look's `served`. */
      readonly served?: string | undefined;
      /** Another file than the one last served at the path, not served yet: Look's `another`. */
      readonly another?: true | undefined;
      /** Its pages broken, unchanged since it was opened: its fingerprint, not opened again while it is that. */
      readonly broken?: string | undefined;
      /** A view too slow to judge its bookings: tried again after a wait (bin/books/backoff.ts). */
      readonly backoff?: Backoff | undefined;
      /**
       * Refused by what it holds: the refused file's identity, its fingerprint at the last look, and whether it was
       * written since the refusal. Not read until written and then still: a GnuCash save fails while a read holds a
       * book in rollback-journal mode. Another file at the path is opened at once.
       */
      readonly refused?:
        | { readonly identity: string | undefined; readonly written: string | undefined; readonly changed: boolean }
        | undefined;
    };

export interface WatchState<C> {
  readonly file: string;
  readonly phase: Phase<C>;
  /** The file must be looked at again at once (a search found it changed under it). */
  readonly noticed: boolean;
  readonly stopped: boolean;
  /** The last line said of a state that lasts: said once, not at every look. */
  readonly lastLine: string;
  readonly since: number;
  readonly replaced: number;
}

export type WatchEvent<C> =
  /** The check tick (every second, or at once after `look soon`) saw the path's identity at `at` (and a broken or backed-off file's fingerprint). */
  | {
      readonly on: 'tick';
      readonly identity: string | undefined;
      readonly written?: string | undefined;
      readonly at: number;
    }
  /** A search read broken pages of the served file, unchanged since it was opened (`written`: its fingerprint). */
  | { readonly on: 'broken'; readonly message: string; readonly written: string | undefined; readonly at: number }
  /** A search found the file changed under it: a new schema, a torn read, its guard ended. */
  | { readonly on: 'notice' }
  /** A search met a lock on the served file that outlasted its wait. */
  | { readonly on: 'locked' }
  /** The open beside the connection found that the file can be read. */
  | { readonly on: 'readable'; readonly at: number }
  /** A search over the connection was answered while a lock was said to hold the file. */
  | { readonly on: 'answered'; readonly at: number }
  /** The open ended; `identity`: the path's identity then; `at`: the time then. */
  | { readonly on: 'opened'; readonly outcome: Outcome<C>; readonly identity: string | undefined; readonly at: number }
  /**
   * The open ended with a file that cannot be served (`gone`: none at the path; `bySetting`:
   * refused by a setting of its application; `identity`: the path's then; `written`: the file's
   * fingerprint as the open began), said as `message`.
   */
  | {
      readonly on: 'failed';
      readonly error: unknown;
      readonly gone: boolean;
      readonly identity: string | undefined;
      readonly written?: string | undefined;
      readonly bySetting?: true;
      readonly message: string;
      readonly at: number;
    }
  | { readonly on: 'stop' };

export type Effect<C> =
  /** Open the file once its path has stood still `stillFor` ms: `opened` or `failed` (`check`: a file that can be read, `readable`). */
  | { readonly do: 'open'; readonly stillFor: number; readonly check?: true }
  | { readonly do: 'close'; readonly connection: C }
  /** Requests go to the connection's handler from now on. */
  | { readonly do: 'serve'; readonly connection: C; readonly inode: string | undefined }
  /** Requests go to the stand-in: /status as always, searches the 500 of `answerCause`. */
  | { readonly do: 'stand in' }
  | { readonly do: 'log'; readonly line: string; readonly level: 'notice' | 'warning' | 'error' }
  /**
   * Read the served file through its search, as a request of no search: what it meets is
   * heard as a client's search's is (`notice`, `locked`, `answered`).
   */
  | { readonly do: 'read' }
  /** Feed a `tick` at once (after this turn of the event loop). */
  | { readonly do: 'look soon' }
  /** The first look ended: the start goes on, or ends with `error`; `unservable`: a start's would end (a joining one's goes on). */
  | { readonly do: 'ready'; readonly error?: unknown; readonly unservable?: boolean }
  /** Stop the check tick. */
  | { readonly do: 'stop ticking' };

export type Ended<C> = Extract<WatchEvent<C>, { on: 'opened' | 'failed' | 'readable' }>;

export interface Step<C> {
  readonly state: WatchState<C>;
  readonly effects: readonly Effect<C>[];
}

export type Served<C> = Extract<Phase<C>, { is: 'served' }>;
