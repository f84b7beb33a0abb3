// The serving process's side of the guard (bin/guard/guard.ts): the child started when a book's
// file must be opened and judged, kept while it serves a book whose searches the serving
// process cannot bound itself, and killed (SIGKILL: a process stuck in a statement ends no
// other way, bin/guard/processes.ts) when it has not answered within its time limit. What
// waited for it then gets an error, never an endless wait. The guard that opens files starts
// another child for the next request. A book's guard (`once`) opens its file again in a new
// child after a search past the limit, the other searches sent on to it (read-only, they
// lose nothing); once that fails, or its child crashed, it starts none: the file is opened
// again by a new guard. Every child ends with its guard (end), and all of them when the
// service stops (endAllGuards). The requests travel on the command's one channel
// (bin/base/channel.ts), whose time limit counts from the child's last message (an answer,
// or RUNNING): working through searches is not stuck.

import type { ChildProcess } from 'node:child_process';
import { type Channel, ChannelError, createChannel, type Port } from '../base/index.js';
import type { BookFile, SearchTurns, Trusted } from '../files/index.js';
import type { Ask, GuardOptions, Judging } from './guard-options.js';
import { guardedSearches, type Unanswered } from './guarded-searches.js';
import { type GuardRequests, JUDGING, type OpenResult, RUNNING } from './messages.js';
import { forkGuard, holdProcess, kill, processesEnded, stopAllProcesses } from './processes.js';

/** What a guard's channel is closed with when the guard ends: its requests are settled `ended`. */
const ENDED = new Error('the guard was ended');
/** What it is closed with when a search passed the limit: the others are sent to the next process. */
const RERUN = new Error('a search passed the time limit');

/** What it is closed with when its process ended of itself (a kill, a crash) or could not be started: `how`. */
class ProcessEnded extends Error {
  readonly how: string;
  constructor(how: string) {
    super(`the guard process ${how}`);
    this.how = how;
  }
}

// Every guard not ended, for endAllGuards.
const guards = new Set<Guard>();

/**
 * Ends every guard and its process, when the service stops: what waits for one is settled
 * at once, no guard starts a process again (bin/guard/processes.ts, stopAllProcesses).
 */
export function endAllGuards(): void {
  stopAllProcesses();
  for (const guard of [...guards]) guard.end();
}

/**
 * One guard process, started when first needed. After `limitMs` without an answer while
 * something waits, it is killed and what waited for it is settled: an open with `timeout`,
 * the search past the limit with a GuardTimeout, the others sent again (`once`) or `ended`;
 * `ended` hears why, when no process follows. An unexpected end (a crash) settles all `ended`.
 */
export class Guard {
  private child: ChildProcess | undefined;
  private channel: Channel | undefined;
  /** Requests sent and not settled yet. */
  private inFlight = 0;
  /** With `serial`, or while the file is opened again: requests not sent yet. */
  private readonly queued: Ask[] = [];
  private idleTimer: NodeJS.Timeout | undefined;
  private turns: SearchTurns | undefined;
  private readonly options: GuardOptions;
  /** Ended (`end`, or a `once` guard whose process ended): no process is started again. */
  private ended = false;
  /** A `once` guard's file as it was opened, to be opened again. */
  private opened: { body: GuardRequests['open']; ready: Extract<OpenResult, { kind: 'ready' }> } | undefined;
  /** Opening it again: requests wait in `queued`. */
  private reopening = false;
  private nextSearch = 1;
  /** The searches sent and not settled, by number; the one the process said it runs; the one that passed the limit. */
  private readonly searching = new Set<number>();
  private running: number | undefined;
  private culprit: number | undefined;
  /** The open or check sent last, and the end of its judgement through a view when its own limit is longer. */
  private judged: Ask | undefined;
  private judgeTimer: NodeJS.Timeout | undefined;

  constructor(options: GuardOptions) {
    this.options = options;
    guards.add(this);
  }

  /**
   * Opens and judges `file` for `book` (its app, undefined: recognised, and tables); the
   * directories above it against `application` (the file's own owner by default).
   */
  async open(file: string, book: BookFile, application?: Trusted): Promise<OpenResult> {
    const body = { file, ...bookFile(book), application };
    const judging: Judging = {};
    const settled = await this.ask<OpenResult>({ kind: 'open', body, judging });
    if (typeof settled === 'string' && judging.ended !== undefined) return { kind: 'ended', how: judging.ended };
    if (typeof settled === 'string')
      return { kind: 'timeout', ...(judging.why !== undefined && { judging: judging.why }) };
    if (this.options.once === true && settled.kind === 'ready' && settled.unbounded !== undefined)
      this.opened = { body, ready: settled };
    return settled;
  }

  /**
   * `check --db FILE` in the guard, which prints to this process's standard output, within
   * `limitMs` (its judgement of the bookings through a view within the guard's): its exit
   * code, or, past a limit, why the process judged the bookings then, if it did; or how the
   * process ended of itself before that (a kill, a crash).
   */
  async check(db: string, book: BookFile, limitMs: number): Promise<number | Judging> {
    const judging: Judging = {};
    const settled = await this.ask<number>({ kind: 'check', body: { db, ...bookFile(book) }, limitMs, judging });
    return typeof settled === 'string' ? judging : settled;
  }

  /**
   * The searches of the file the guard opened last, as the handler asks for them: each goes
   * to the guard, whose turns rotate over users, addresses and connections as the serving
   * process's would (bin/guard/guarded-searches.ts).
   */
  searches(): SearchTurns {
    this.turns ??= guardedSearches({
      ask: (search) => {
        const id = this.nextSearch++;
        return this.ask({ kind: 'search', body: { ...search, id }, id });
      },
      forget: (connection) => void this.channel?.notify('forget', { connection }),
      limitMs: this.options.limitMs,
      endedError: this.options.endedError,
      changed: this.options.changed,
    });
    return this.turns;
  }

  /** Ends the guard and its process for good; what waits for it is settled (`ended`). */
  end(): void {
    this.retire();
    this.stop(ENDED);
    for (const queued of this.queued.splice(0)) queued.settle('ended');
  }

  /** No process is started again. */
  private retire(): void {
    this.ended = true;
    guards.delete(this);
  }

  /** Kills the process; what waits for it is settled (`failed`), or sent again with RERUN. */
  private stop(why: Error = new Error('the guard process ended')): void {
    const { child, channel } = this;
    this.child = undefined;
    this.channel = undefined;
    clearTimeout(this.idleTimer);
    clearTimeout(this.judgeTimer);
    if (this.options.once === true && why !== RERUN) this.retire();
    channel?.close(why);
    if (child !== undefined) kill(child);
  }

  private ask<T>(request: Omit<Ask, 'settle'>): Promise<T | Unanswered> {
    return new Promise((resolve) => {
      const ask: Ask = { ...request, settle: resolve as Ask['settle'] };
      // An ended guard starts no process: one would have no file open, and nothing would end it.
      if (this.ended || processesEnded()) ask.settle('ended');
      else if (this.options.serial === true && this.inFlight > 0) this.queued.push(ask);
      else this.send(ask);
    });
  }

  /** `ask` sent now, or once the file is open again. */
  private send(ask: Ask): void {
    if (this.ended) ask.settle('ended');
    else if (this.reopening) this.queued.push(ask);
    else this.dispatch(ask);
  }

  private dispatch(ask: Ask): void {
    clearTimeout(this.idleTimer);
    const channel = this.channel ?? this.start();
    if (this.child !== undefined) holdProcess(this.child, true);
    this.inFlight += 1;
    if (ask.id !== undefined) this.searching.add(ask.id);
    if (ask.judging !== undefined) this.judged = ask;
    channel.request(ask.kind, ask.body, ask.limitMs ?? this.options.limitMs).then(
      (reply: unknown) => this.settled(ask, reply),
      (error: unknown) => this.failed(ask, channel, error),
    );
  }

  private failed(ask: Ask, channel: Channel, error: unknown): void {
    if (error instanceof ProcessEnded && ask.judging !== undefined) ask.judging.ended = error.how;
    const expired = error instanceof ChannelError && error.code === 'CHANNEL_TIMEOUT';
    // The first request past the time limit ends the process; the others are settled by its end, or sent again.
    const restarted = expired && channel === this.channel && this.timedOut(ask);
    if (ask.id !== undefined && ask.id !== this.culprit && (error === RERUN || restarted)) {
      this.searching.delete(ask.id);
      this.inFlight -= 1;
      return this.send(ask);
    }
    this.settled(ask, expired || (ask.id !== undefined && ask.id === this.culprit) ? 'timeout' : 'ended');
  }

  /**
   * `ask` passed the time limit: the process is ended. The search it said it runs (else
   * `ask`) is the one that passed it; after one, a `once` guard opens its file again in a new
   * process, for the others. Whether it does.
   */
  private timedOut(ask: Ask): boolean {
    const seconds = this.options.limitMs / 1000;
    if (this.opened === undefined || this.reopening || ask.kind !== 'search') {
      this.options.ended?.(`its searches' process did not answer within ${seconds} s and was ended`);
      this.stop();
      return false;
    }
    const running = this.running;
    this.culprit = running !== undefined && this.searching.has(running) ? running : ask.id;
    this.stop(RERUN);
    this.reopening = true;
    const { body, ready } = this.opened;
    const reopened = (result: OpenResult | Unanswered): void => {
      this.reopening = false;
      const same =
        typeof result !== 'string' &&
        result.kind === 'ready' &&
        result.unbounded !== undefined &&
        result.identity === ready.identity &&
        result.app === ready.app;
      if (same && !this.ended) {
        for (const waiting of this.queued.splice(0)) this.dispatch(waiting);
        return;
      }
      // Ended meanwhile (`end`, a crash): told already.
      if (!this.ended)
        this.options.ended?.(`after a search took longer than ${seconds} s, a new process could not open it`);
      this.end();
    };
    this.dispatch({ kind: 'open', body, settle: (result) => reopened(result as OpenResult | Unanswered) });
    return true;
  }

  private settled(ask: Ask, settled: unknown): void {
    if (ask.id !== undefined) this.searching.delete(ask.id);
    this.inFlight -= 1;
    ask.settle(settled);
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
    const child: ChildProcess = forkGuard((how) => {
      if (this.child !== child) return;
      // A book's guard holds its file also while idle: an end then (a kill, the OOM killer)
      // is heard as one in a search is, or the book would answer from a process that is gone.
      if (channel.waiting() > 0 || this.opened !== undefined) this.options.ended?.(`its searches' process ${how}`);
      this.stop(new ProcessEnded(how));
    });
    const channel = createChannel(child as Port);
    this.child = child;
    this.channel = channel;
    this.running = undefined;
    channel.handle(RUNNING, (body) => {
      if (channel === this.channel) this.running = (body as { id?: number }).id;
    });
    channel.handle(JUDGING, (body) => this.judging(channel, (body as { why?: string }).why));
    return channel;
  }

  /**
   * The process judges the bookings through a view for the open or check sent last (`why`),
   * or has ended that: within the guard's limit, which the channel's counts from this
   * message; a request of a longer limit (a check) is ended once it passes.
   */
  private judging(channel: Channel, why: string | undefined): void {
    const ask = this.judged;
    if (channel !== this.channel || ask?.judging === undefined) return;
    ask.judging.why = why;
    clearTimeout(this.judgeTimer);
    if (why === undefined || (ask.limitMs ?? 0) <= this.options.limitMs) return;
    this.judgeTimer = setTimeout(() => channel === this.channel && this.stop(), this.options.limitMs);
  }
}

/** What the guard reads of a book: a book as configured holds more (its name, its users). */
function bookFile({ app, tables, appIn }: BookFile): BookFile {
  return { app, tables, appIn };
}
