// The serving process's side of the guard (bin/guard/guard.ts): the child started when a book's
// file must be opened and judged, kept while it serves a book whose searches the serving
// process cannot bound itself, and killed (SIGKILL: a process stuck in a statement ends no
// other way) when it has not answered within its time limit. What waited for it then gets
// an error, never an endless wait. The guard that opens files starts another child for the
// next request; a book's guard (`once`) never does: its file is opened again by a new one.
// Every child ends with its guard (end), and all of them when the service stops
// (endAllGuards); each killed child is waited for until it has exited, so none is left
// behind as a zombie. The requests travel on the command's one channel (bin/base/channel.ts),
// whose time limit counts from the child's last answer: working through searches is not stuck.

import { type ChildProcess, fork } from 'node:child_process';
import { type Channel, ChannelError, createChannel, moduleBeside, type Port } from '../base/index.js';
import type { BookFile, SearchTurns, Trusted } from '../files/index.js';
import { fromWire, type GuardRequests, NO_FILE_OPEN, type OpenResult, type WireOutcome } from './messages.js';

const GUARD_ENTRY = moduleBeside(import.meta.url, 'guard');

/** An answer that did not come within the time limit; the guard was killed for it. */
export class GuardTimeout extends Error {
  readonly code = 'GUARD_TIMEOUT';
}

/** Why a request was settled without an answer: the time limit (or a crash), or its guard was ended first. */
type Unanswered = 'timeout' | 'ended';
/** A request not sent yet (with `serial`), or being sent, and what hears how it was settled. */
interface Ask {
  kind: keyof GuardRequests;
  body: unknown;
  settle: (settled: unknown) => void;
}

/** What a guard's channel is closed with when the guard ends: its requests are settled `ended`. */
const ENDED = new Error('the guard was ended');

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
 * if it has not exited by then. The event loop waits only for their exits.
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
  private channel: Channel | undefined;
  /** Requests sent and not settled yet. */
  private inFlight = 0;
  /** With `serial`: requests not sent yet. */
  private readonly queued: Ask[] = [];
  private idleTimer: NodeJS.Timeout | undefined;
  private readonly byAddress = new Map<string, number>();
  private readonly byUser = new Map<string, number>();
  private readonly connectionIds = new WeakMap<object, number>();
  private nextConnection = 1;
  private readonly options: GuardOptions;
  /** Ended (`end`, or a `once` guard whose process ended): no process is started again. */
  private ended = false;

  constructor(options: GuardOptions) {
    this.options = options;
    guards.add(this);
  }

  /**
   * Opens and judges `file` for `book` (its app, undefined: recognised, and tables); the
   * directories above it against `application` (the file's own owner by default).
   */
  async open(file: string, book: BookFile, application?: Trusted): Promise<OpenResult> {
    const settled = await this.ask<OpenResult>('open', { file, ...bookFile(book), application });
    return typeof settled === 'string' ? { kind: 'timeout' } : settled;
  }

  /** `check --db FILE` in the guard, which prints to this process's standard output; its exit code, or `undefined` after the time limit. */
  async check(db: string, book: BookFile): Promise<number | undefined> {
    const settled = await this.ask<number>('check', { db, ...bookFile(book) });
    return typeof settled === 'string' ? undefined : settled;
  }

  /**
   * The searches of the file the guard opened last, as the handler asks for them: each goes
   * to the guard, whose turns rotate over users, addresses and connections as the serving
   * process's would; the counts of what waits are this process's, so that the handler's
   * bounds (maxWaitingSearches) hold as for any book.
   */
  searches(): SearchTurns {
    const queue: SearchTurns['queue'] = (query, done, from) => {
      if (from?.connection.destroyed === true) return;
      const user = from?.user ?? '';
      const address = from?.address ?? '';
      const connection = this.connectionId(from?.connection);
      count(this.byAddress, address, 1);
      count(this.byUser, user, 1);
      void this.ask<WireOutcome>('search', { query, from: { user, address, connection } }).then((settled) => {
        count(this.byAddress, address, -1);
        count(this.byUser, user, -1);
        done(this.searchOutcome(settled));
      });
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
    this.stop(signal, ENDED);
    for (const queued of this.queued.splice(0)) queued.settle('ended');
  }

  private searchOutcome(settled: WireOutcome | Unanswered): ReturnType<typeof fromWire> {
    const endedError = this.options.endedError;
    const noFile = typeof settled !== 'string' && !settled.ok && settled.error.code === NO_FILE_OPEN;
    if (endedError !== undefined && (noFile || settled === 'ended')) return { ok: false, error: endedError() };
    if (typeof settled !== 'string') return fromWire(settled);
    const error = new GuardTimeout(
      `the search's process did not answer within ${this.options.limitMs / 1000} s (a view, a virtual table or a generated column that does not end): it was ended, and the next search starts another`,
    );
    return { ok: false, error };
  }

  /** No process is started again. */
  private retire(): void {
    this.ended = true;
    guards.delete(this);
  }

  /** Kills the process; what waits for it is settled `timeout`, or `ended` with ENDED. */
  private stop(signal: 'SIGTERM' | 'SIGKILL' = 'SIGKILL', why: Error = new Error('the guard process ended')): void {
    const { child, channel } = this;
    this.child = undefined;
    this.channel = undefined;
    clearTimeout(this.idleTimer);
    if (this.options.once === true) this.retire();
    channel?.close(why);
    if (child !== undefined) kill(child, signal);
  }

  private connectionId(connection: object | undefined): number {
    if (connection === undefined) return 0;
    const known = this.connectionIds.get(connection);
    if (known !== undefined) return known;
    const id = this.nextConnection++;
    this.connectionIds.set(connection, id);
    const forget = (): void => void this.channel?.notify('forget', { connection: id });
    (connection as { once?: (event: string, listener: () => void) => void }).once?.('close', forget);
    return id;
  }

  private ask<T>(kind: keyof GuardRequests, body: GuardRequests[typeof kind]): Promise<T | Unanswered> {
    return new Promise((resolve) => {
      const ask: Ask = { kind, body, settle: resolve as Ask['settle'] };
      // An ended guard starts no process: one would have no file open, and nothing would end it.
      if (this.ended || stopping) ask.settle('ended');
      else if (this.options.serial === true && this.inFlight > 0) this.queued.push(ask);
      else this.dispatch(ask);
    });
  }

  private dispatch({ kind, body, settle }: Ask): void {
    clearTimeout(this.idleTimer);
    const channel = this.channel ?? this.start();
    if (this.child !== undefined) holdProcess(this.child, true);
    this.inFlight += 1;
    channel.request(kind, body, this.options.limitMs).then(
      (reply: unknown) => this.settled(settle, reply),
      (error: unknown) => {
        // The first request past the time limit ends the process; the others are settled by its end.
        if (channel === this.channel && error instanceof ChannelError && error.code === 'CHANNEL_TIMEOUT') {
          this.options.ended?.(
            `its guard process did not answer within ${this.options.limitMs / 1000} s and was ended`,
          );
          this.stop();
        }
        this.settled(settle, error === ENDED ? 'ended' : 'timeout');
      },
    );
  }

  private settled(settle: Ask['settle'], settled: unknown): void {
    this.inFlight -= 1;
    settle(settled);
    this.next();
  }

  /** The next queued request, or, with nothing left, the end of an idle process. */
  private next(): void {
    if (this.inFlight > 0) return;
    const queued = this.queued.shift();
    if (queued !== undefined) return this.ended ? queued.settle('ended') : this.dispatch(queued);
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

  private start(): Channel {
    const child = fork(GUARD_ENTRY, [], {
      serialization: 'advanced',
      stdio: ['ignore', 'inherit', 'ignore', 'ipc'],
      execArgv: process.execArgv,
    });
    const channel = createChannel(child as Port);
    this.child = child;
    this.channel = channel;
    children.add(child);
    // A channel to a process that has just ended fails with EPIPE; its end is handled below.
    child.on('error', () => {});
    child.once('exit', (code, signal) => {
      children.delete(child);
      if (this.child !== child) return;
      if (channel.waiting() > 0) this.options.ended?.(`its guard process ended (${signal ?? `exit code ${code}`})`);
      this.stop();
    });
    return channel;
  }
}

/** Whether `child` (the process and its channel) keeps this process's event loop alive. */
function holdProcess(child: ChildProcess, hold: boolean): void {
  const how = hold ? 'ref' : 'unref';
  child[how]();
  child.channel?.[how]();
}

function count(counts: Map<string, number>, key: string, by: number): void {
  const now = (counts.get(key) ?? 0) + by;
  if (now === 0) counts.delete(key);
  else counts.set(key, now);
}

/** What the guard reads of a book: a book as configured holds more (its name, its users). */
function bookFile({ app, tables, appIn }: BookFile): BookFile {
  return { app, tables, appIn };
}
