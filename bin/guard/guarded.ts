// The serving process's side of the guard (bin/guard/guard.ts): the child started when a book's
// file must be opened and judged, kept while it serves a book whose searches the serving
// process cannot bound itself, and killed (SIGKILL: a process stuck in a statement ends no
// other way) when it has not answered within its time limit. What waited for it then gets
// an error, never an endless wait. The guard that opens files starts another child for the
// next request; a book's guard (`once`) never does: its file is opened again by a new one.
// Every child ends with its guard (end), and all of them when the service stops
// (endAllGuards); each killed child is waited for until it has exited, so none is left
// behind as a zombie.

import { type ChildProcess, fork } from 'node:child_process';
import type { Outcome, Requester, SearchRequest, SearchRows, SearchTurns, TableNames } from '../../lib/internal.js';
import { moduleBeside } from '../base/index.js';
import type { Trusted } from '../files/index.js';

/** What the serving process asks of the guard. */
export type GuardRequest =
  | {
      type: 'open';
      id: number;
      file: string;
      app: string | undefined;
      tables: Partial<TableNames>;
      /** The application's user and group as the start found them, for a replaced file (bin/files/file-safety.ts). */
      application: Trusted | undefined;
    }
  | {
      type: 'search';
      id: number;
      query: SearchRequest;
      from: { user: string; address: string; connection: number };
    }
  /** A client connection closed: the guard's turns forget it. */
  | { type: 'forget'; connection: number }
  | { type: 'check'; id: number; db: string; app: string | undefined; tables: Partial<TableNames> };

/** How the guard found the file. */
export type OpenResult =
  /**
   * Served with `app`. `unbounded`: why the serving process must not run its searches (a
   * view, a virtual table, generated columns, a schema too large), and then the guard
   * keeps the file open for them; `undefined`: the serving process opens it itself,
   * checking that it is still `identity` (`dev:ino`) with `schemaVersion`.
   */
  | { kind: 'ready'; app: string; unbounded: string | undefined; schemaVersion: number; identity: string }
  /** A SQLite file that cannot be read now (bin/files/database-file.ts, NotReadableNow). */
  | { kind: 'waiting'; code: string; explanation: string }
  /** Not served: one line saying why. */
  | { kind: 'refused'; line: string }
  /** Another file came to the path while it was judged: look again. */
  | { kind: 'changed' }
  /** No answer within the time limit: the guard was killed. */
  | { kind: 'timeout' };

/** A search's outcome as it crosses between the processes: an error as its message and code. */
export type WireOutcome =
  | { ok: true; result: SearchRows }
  | { ok: false; error: { message: string; code: string | undefined } };

export type GuardReply =
  | { type: 'opened'; id: number; result: OpenResult }
  | { type: 'answer'; id: number; outcome: WireOutcome }
  | { type: 'checked'; id: number; code: number };

const GUARD_ENTRY = moduleBeside(import.meta.url, 'guard');

/** The code of a guard's answer to a search when it has no file open (bin/guard/guard.ts). */
export const NO_FILE_OPEN = 'GUARD_NO_FILE_OPEN';

/** An answer that did not come within the time limit; the guard was killed for it. */
export class GuardTimeout extends Error {
  readonly code = 'GUARD_TIMEOUT';
}

/** Why a request was settled without an answer: the time limit, or its guard was ended first. */
type Unanswered = 'timeout' | 'ended';

interface Pending {
  settle(reply: GuardReply | undefined, why?: Unanswered): void;
  /** For a search: whose it is, for waitingFrom and waitingFor. */
  address?: string;
  user?: string;
}

export interface GuardOptions {
  /** How long it may go without answering while something waits for it. */
  limitMs: number;
  /**
   * One request at a time, the next sent when the last is answered: a time limit then
   * ends only the request that passed it, and the ones behind it go to the next process.
   * For the opens of every book of a process; a book's searches have turns of their own.
   */
  serial?: boolean;
  /** Ends the process when nothing has waited for this long (it is started again when needed). */
  idleEndMs?: number;
  /** Hears why the process ended while something waited for it. */
  ended?: (why: string) => void;
  /**
   * The process is started once, by the first request, and not again: a book's guard, whose
   * process holds the file it opened. Once that process has ended (killed after its time
   * limit, crashed, or `end`), requests are settled at once instead of going to a process
   * that has no file open; the book opens its file again in a new guard.
   */
  once?: boolean;
  /**
   * A search's error when the guard has no file open for it: the guard ended (`end`, or
   * `once` after its process ended) before it answered or before it was asked. By default
   * the GuardTimeout of a time limit.
   */
  endedError?: () => Error;
}

// Every guard not ended, for endAllGuards; and every child process not yet exited.
const guards = new Set<Guard>();
const children = new Set<ChildProcess>();
let stopping = false;
// After SIGTERM, how long a guard process gets to end before SIGKILL.
const STOP_GRACE_MS = 500;

/**
 * Ends every guard and its process, when the service stops: what waits for one is settled
 * at once, no guard starts a process again, and each process gets SIGTERM (it has no
 * handler, so SIGTERM ends it even inside a statement), then SIGKILL after STOP_GRACE_MS
 * if it has not exited by then. The
 * event loop waits only for their exits: no request or channel to a guard keeps it alive.
 */
export function endAllGuards(): void {
  stopping = true;
  for (const guard of [...guards]) guard.end('SIGTERM');
  for (const child of children) kill(child, 'SIGTERM');
}

/** Kills `child` (once) and holds the event loop only until it has exited, to reap it. */
function kill(child: ChildProcess, signal: 'SIGTERM' | 'SIGKILL'): void {
  if (child.exitCode !== null || child.signalCode !== null) return;
  if (child.connected) child.disconnect();
  child.ref();
  child.kill(signal);
  if (signal === 'SIGTERM') setTimeout(() => kill(child, 'SIGKILL'), STOP_GRACE_MS).unref();
}

/**
 * One guard process, started when first needed. After `limitMs` without an answer while
 * something waits, it is killed, what waited for it is settled (an open with `timeout`, a
 * search with a GuardTimeout), and `ended` hears why; an unexpected end (a crash) is
 * settled the same way.
 */
export class Guard {
  private child: ChildProcess | undefined;
  private readonly pending = new Map<number, Pending>();
  /** With `serial`: requests not sent yet. */
  private readonly queued: Array<{ message: GuardRequest; pending: Pending }> = [];
  private nextId = 1;
  private lastProgress = 0;
  private watch: NodeJS.Timeout | undefined;
  private idleTimer: NodeJS.Timeout | undefined;
  private readonly byAddress = new Map<string, number>();
  private readonly byUser = new Map<string, number>();
  private readonly connectionIds = new WeakMap<object, number>();
  private nextConnection = 1;
  private readonly options: GuardOptions;
  private readonly limitMs: number;
  /** Ended (`end`, or a `once` guard whose process ended): no process is started again. */
  private ended = false;

  constructor(options: GuardOptions) {
    this.options = options;
    this.limitMs = options.limitMs;
    guards.add(this);
  }

  /**
   * Opens and judges `file` for a book of `app` (undefined: recognised) and `tables`; the
   * directories above it against `application` (the file's own owner by default).
   */
  open(file: string, app: string | undefined, tables: Partial<TableNames>, application?: Trusted): Promise<OpenResult> {
    return new Promise((resolve) => {
      this.request({ type: 'open', id: 0, file, app, tables, application }, (reply) =>
        resolve(reply?.type === 'opened' ? reply.result : { kind: 'timeout' }),
      );
    });
  }

  /** `check --db FILE` in the guard, which prints to this process's standard output; its exit code, or `undefined` after the time limit. */
  check(db: string, app: string | undefined, tables: Partial<TableNames>): Promise<number | undefined> {
    return new Promise((resolve) => {
      this.request({ type: 'check', id: 0, db, app, tables }, (reply) =>
        resolve(reply?.type === 'checked' ? reply.code : undefined),
      );
    });
  }

  /**
   * The searches of the file the guard opened last, as the handler asks for them: each goes
   * to the guard, whose turns rotate over users, addresses and connections as the serving
   * process's would; the counts of what waits are this process's, so that the handler's
   * bounds (maxWaitingSearches) hold as for any book.
   */
  searches(): SearchTurns {
    const queue = (query: SearchRequest, done: (outcome: Outcome<SearchRows>) => void, from?: Requester): void => {
      if (from?.connection.destroyed === true) return;
      const user = from?.user ?? '';
      const address = from?.address ?? '';
      const connection = this.connectionId(from?.connection);
      const settle = (reply: GuardReply | undefined, why: Unanswered = 'timeout'): void => {
        count(this.byAddress, address, -1);
        count(this.byUser, user, -1);
        const endedError = this.options.endedError;
        const noFile = reply?.type === 'answer' && !reply.outcome.ok && reply.outcome.error.code === NO_FILE_OPEN;
        if (endedError !== undefined && (noFile || (reply === undefined && why === 'ended'))) {
          return done({ ok: false, error: endedError() });
        }
        if (reply?.type === 'answer') return done(toOutcome(reply.outcome));
        done({
          ok: false,
          error: new GuardTimeout(
            `the search's process did not answer within ${this.limitMs / 1000} s (a view, a virtual table or a generated column that does not end): it was ended, and the next search starts another`,
          ),
        });
      };
      count(this.byAddress, address, 1);
      count(this.byUser, user, 1);
      this.request({ type: 'search', id: 0, query, from: { user, address, connection } }, settle, { address, user });
    };
    return {
      answer: queue,
      queue,
      waitingFrom: (address) => this.byAddress.get(address) ?? 0,
      waitingFor: (user) => this.byUser.get(user) ?? 0,
    };
  }

  /** Ends the guard and its process for good; what waits for it is settled (`ended`). */
  end(signal: 'SIGTERM' | 'SIGKILL' = 'SIGKILL'): void {
    this.retire();
    this.stop(signal);
    for (const { pending } of this.queued.splice(0)) pending.settle(undefined, 'ended');
    this.settleAll('ended');
  }

  /** No process is started again. */
  private retire(): void {
    this.ended = true;
    guards.delete(this);
  }

  private stop(signal: 'SIGTERM' | 'SIGKILL' = 'SIGKILL'): void {
    const child = this.child;
    this.child = undefined;
    clearTimeout(this.idleTimer);
    if (this.options.once === true) this.retire();
    if (child !== undefined) kill(child, signal);
  }

  private connectionId(connection: object | undefined): number {
    if (connection === undefined) return 0;
    let id = this.connectionIds.get(connection);
    if (id === undefined) {
      const fresh = this.nextConnection;
      id = fresh;
      this.nextConnection += 1;
      this.connectionIds.set(connection, fresh);
      const forget = (): void => {
        this.child?.send({ type: 'forget', connection: fresh } satisfies GuardRequest);
      };
      (connection as { once?: (event: string, listener: () => void) => void }).once?.('close', forget);
    }
    return id;
  }

  private request(message: GuardRequest, settle: Pending['settle'], who: Omit<Pending, 'settle'> = {}): void {
    // An ended guard starts no process: one would have no file open, and nothing would end it.
    if (this.ended || stopping) return settle(undefined, 'ended');
    const pending = { settle, ...who };
    if (this.options.serial === true && this.pending.size > 0) return void this.queued.push({ message, pending });
    this.dispatch(message, pending);
  }

  private dispatch(message: GuardRequest, pending: Pending): void {
    clearTimeout(this.idleTimer);
    const child = this.child ?? this.start();
    holdProcess(child, true);
    const id = this.nextId;
    this.nextId += 1;
    if (this.pending.size === 0) this.lastProgress = performance.now();
    this.pending.set(id, pending);
    child.send({ ...message, id });
    this.watch ??= setInterval(() => this.look(), Math.max(10, Math.min(250, this.limitMs / 4)));
  }

  /** The next queued request, or, with nothing left, the end of an idle process. */
  private next(): void {
    if (this.pending.size > 0) return;
    const queued = this.queued.shift();
    if (queued !== undefined) return this.dispatch(queued.message, queued.pending);
    // An idle guard keeps nothing alive: a start that fails right after its books were
    // judged ends at once, not when the idle guard would have been ended.
    if (this.child !== undefined) holdProcess(this.child, false);
    const idleEndMs = this.options.idleEndMs;
    if (idleEndMs !== undefined && this.child !== undefined) {
      clearTimeout(this.idleTimer);
      this.idleTimer = setTimeout(() => this.stop(), idleEndMs);
      this.idleTimer.unref();
    }
  }

  private start(): ChildProcess {
    const child = fork(GUARD_ENTRY, [], {
      serialization: 'advanced',
      stdio: ['ignore', 'inherit', 'ignore', 'ipc'],
      execArgv: process.execArgv,
    });
    this.child = child;
    children.add(child);
    child.on('message', (reply: GuardReply) => {
      this.lastProgress = performance.now();
      const pending = this.pending.get(reply.id);
      if (pending === undefined) return;
      this.pending.delete(reply.id);
      this.idle();
      pending.settle(reply);
      this.next();
    });
    // A channel to a process that has just ended fails with EPIPE; its end is handled below.
    child.on('error', () => {});
    child.once('exit', (code, signal) => {
      children.delete(child);
      if (this.child !== child) return;
      this.child = undefined;
      if (this.pending.size > 0) this.options.ended?.(`its guard process ended (${signal ?? `exit code ${code}`})`);
      if (this.options.once === true) this.retire();
      this.settleAll();
      this.next();
    });
    return child;
  }

  /** Kills the guard when it has answered nothing for `limitMs` while something waits. */
  private look(): void {
    if (this.pending.size === 0) return this.idle();
    if (performance.now() - this.lastProgress < this.limitMs) return;
    this.options.ended?.(`its guard process did not answer within ${this.limitMs / 1000} s and was ended`);
    // What waited is settled; what was queued behind it goes to the next process.
    this.stop();
    this.settleAll();
    this.next();
  }

  private idle(): void {
    if (this.pending.size > 0 || this.watch === undefined) return;
    clearInterval(this.watch);
    this.watch = undefined;
  }

  private settleAll(why: Unanswered = 'timeout'): void {
    const waiting = [...this.pending.values()];
    this.pending.clear();
    this.idle();
    for (const pending of waiting) pending.settle(undefined, why);
  }
}

/** Whether `child` (the process and its channel) keeps this process's event loop alive. */
function holdProcess(child: ChildProcess, hold: boolean): void {
  if (hold) {
    child.ref();
    child.channel?.ref();
  } else {
    child.unref();
    child.channel?.unref();
  }
}

function toOutcome(outcome: WireOutcome): Outcome<SearchRows> {
  if (outcome.ok) return outcome;
  return { ok: false, error: Object.assign(new Error(outcome.error.message), { code: outcome.error.code }) };
}

function count(counts: Map<string, number>, key: string, by: number): void {
  const now = (counts.get(key) ?? 0) + by;
  if (now === 0) counts.delete(key);
  else counts.set(key, now);
}
