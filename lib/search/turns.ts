// The queue of turns: a query runs at once when no other waits; under contention, queued
// queries run in turns of the event loop, a turn within a time budget, the users, their
// addresses and their connections each in rotation. Generic over the function that answers
// one query (the booking search in lib/search/booking-search.ts, a stand-in in
// test/unit/turns.test.ts), and over what a query runs inside, alone or with the others of
// its turn (there: one read transaction).
//
// "A turn" alone is a queue's: the queued queries run together in a turn of the event loop, within TURN_BUDGET_MS.

import { type Answers, createLockWait, type Hold, type Job, type Outcome, runQueued } from './queued.js';
import { type Requester, Rotations } from './rotations.js';

export { type Outcome, TURN_BUDGET_MS } from './queued.js';

export type { Requester } from './rotations.js';

export interface Turns<Q, R> {
  /**
   * `query` answered now, before this call returns, when no other query waits, none ran at
   * once in this turn of the event loop (here, or in a queue that shares its LoopTurn) and
   * none waited in the turn before; otherwise queued as by `queue`. So a query pays for the
   * turns only when others are there to share them with.
   */
  answer(query: Q, done: (outcome: Outcome<R>) => void, from?: Requester): void;
  /** `query` answered in a later turn of the event loop; `from` decides whose query runs next. */
  queue(query: Q, done: (outcome: Outcome<R>) => void, from?: Requester): void;
  /**
   * How many queries of `address` (whoever's) wait for their turn or a lock, counting one that
   * `answer` ran at once in this turn of the event loop: so a burst of pipelined queries is
   * held to the same bound whether its first ran at once or waited.
   */
  waitingFrom(address: string): number;
  /** How many queries of `user` (from any address) wait for their turn, counted as `waitingFrom` counts. */
  waitingFor(user: string): number;
}

// After a turn, this many empty turns of the event loop per millisecond it took (at most
// MAX_YIELDS) before the next: libuv accepts one new connection per turn of the loop, so a
// burst of connections that arrived during a long turn would otherwise be accepted one
// search at a time, and a new client's /status would wait behind all of them.
const YIELDS_PER_MS = 1;
const MAX_YIELDS = 100;

/**
 * The turn of the event loop as several queues of turns of one thread share it: whether a
 * query of any of them ran at once in it (and the turn of the loop has not ended since).
 *
 * Why several queues share it: a service of many books has a queue per book, and under load
 * its requests go to one book after the other, so that a book rarely has two queries in one
 * turn of the loop. Each would run at once, as it is read, and its answer would be written
 * at once: the client's next request then comes alone, and every turn of the event loop
 * serves one request instead of all that arrived together (docs/design/README.md, "Many books":
 * the CPU time of a request of a rotation over 100 books was that of a client alone). With
 * the turn of the loop shared, the first query of a turn runs at once and the others of
 * that turn, whatever their book, are answered together after it, as one book's are.
 */
export interface LoopTurn {
  ranAtOnce: boolean;
  /** The turns of the queues due in the next turn of the event loop (`runDue`). */
  due: Array<() => Answers | undefined>;
  /** Whether `runDue` is scheduled. */
  scheduled: boolean;
}

/** A turn of the event loop seen by one queue alone (or by those given the same). */
export function createLoopTurn(): LoopTurn {
  return { ranAtOnce: false, due: [], scheduled: false };
}

/** `turn` runs in the next turn of the event loop, with every other turn of `loop` then due. */
function due(loop: LoopTurn, turn: () => Answers | undefined): void {
  loop.due.push(turn);
  if (loop.scheduled) return;
  loop.scheduled = true;
  setImmediate(runDue, loop);
}

/**
 * The turns due, each in its own read transaction, one after the other; then their answers,
 * all of them: a search's answer is written after every transaction of the turn of the loop
 * has ended, and the answers leave together, as one book's turn's do (written one by one
 * between the books' transactions, each woke the client anew: docs/design/README.md, Many books).
 * One failing callback must not leave the others unanswered; its error is thrown after them.
 */
function runDue(loop: LoopTurn): void {
  loop.scheduled = false;
  const turns = loop.due.splice(0);
  const answers: Answers[] = [];
  let failure: { error: unknown } | undefined;
  for (const turn of turns) {
    try {
      const answered = turn();
      if (answered !== undefined) answers.push(answered);
    } catch (error: unknown) {
      failure ??= { error };
    }
  }
  for (const { batch, outcomes } of answers) {
    for (let i = 0; i < batch.length; i += 1) {
      try {
        batch[i]?.done(outcomes[i] as Outcome<unknown>);
      } catch (error: unknown) {
        failure ??= { error };
      }
    }
  }
  if (failure !== undefined) throw failure.error;
}

const ANYONE: Requester = { user: '', address: '', connection: {} };

/**
 * Answers queries with `run`.
 *
 * - `answer` runs a query at once, inside its own call of `enclose`, when nothing waits. What
 *   arrives while others wait, or after one ran at once in the same turn of the event loop,
 *   is queued, and so is the first of a turn while queries have waited in the turn before
 *   (under load they arrive together: one `enclose` for them all).
 * - Queued queries run in turns. A turn runs only queries that arrived before it started,
 *   inside one call of `enclose` (`work` runs them), and answers them only after `enclose` has
 *   returned, so that nothing `enclose` holds is held while other code runs. If `enclose` throws,
 *   every query of the turn without an answer gets that error, and when it threw before its
 *   first query ran, so does every waiting one.
 * - A turn ends once it has used `TURN_BUDGET_MS`: the rest wait for the next turn, after the
 *   event loop has answered what else arrived.
 * - The turns take the users, their addresses and their connections in rotation
 *   (lib/search/rotations.ts). A query that ran at once had its turn: its user, address and
 *   connection go behind the others that queued in the same turn of the loop.
 *
 * `enclose`: what a turn's queries run inside (the search's read transaction, one snapshot).
 * `waited` hears how long each query waited, in seconds (0 for one that ran at once), as it
 * starts. `loop`: the turn of the event loop as other queues of this thread see it (the books
 * of one service): once a query of any of them ran at once in it, the queries that arrive in
 * the same turn of the loop are queued, here as there. `waitsOut`: whether a query that
 * threw `error` waits out a lock (lib/search/queued.ts).
 */
export function createTurns<Q, R>(
  run: (query: Q) => R,
  enclose: (work: () => void) => void = (work) => work(),
  waited?: (seconds: number, query: Q) => void,
  loop: LoopTurn = createLoopTurn(),
  waitsOut: (error: unknown) => boolean = () => false,
): Turns<Q, R> {
  const waiting = new Rotations<Job<Q, R>>();
  const hold = createLockWait(waiting, waitsOut, retryIn(loop, run, enclose));
  /** A turn (or the end of this turn of the event loop, after a query ran at once) is scheduled. */
  let scheduled = false;
  /** Who had a query answered at once in this turn of the event loop. */
  let ranAtOnce: Requester | undefined;
  /**
   * Queries waited in the last turn of the event loop that had any: under load they keep arriving together,
   * and the first of a turn then waits for the others, to share their read transaction
   * (docs/design/README.md, "The shared read transaction"). Cleared by a turn of the loop in which none arrived.
   */
  let contended = false;
  let probing = false;

  /** The turn: the queries it answered and their outcomes, for `loop` to deliver after every turn now due. */
  function runTurn(): Answers | undefined {
    scheduled = false;
    if (ranAtOnce !== undefined) {
      waiting.served(ranAtOnce);
      ranAtOnce = undefined;
      loop.ranAtOnce = false;
    }
    // Only the end of a turn of the loop in which a query ran at once: nothing to run.
    if (waiting.empty) return undefined;
    contended = true;
    if (!probing) {
      probing = true;
      setImmediate(probe);
    }
    const started = performance.now();
    const answers = runQueued(waiting, run, enclose, waited, started, hold);
    if (!waiting.empty) schedule(Math.min(MAX_YIELDS, Math.floor((performance.now() - started) * YIELDS_PER_MS)));
    return answers;
  }

  /** In the turn of the event loop after a contended one: contended still if queries wait again. */
  function probe(): void {
    probing = false;
    if (scheduled) {
      probing = true;
      setImmediate(probe);
    } else contended = false;
  }

  /** The next turn, after `yields` empty turns of the event loop. */
  function schedule(yields = 0): void {
    if (scheduled) return;
    scheduled = true;
    afterYields(yields, dueTurn);
  }
  const dueTurn = (): void => due(loop, runTurn);

  function queue(query: Q, done: (outcome: Outcome<R>) => void, from: Requester = ANYONE): void {
    waiting.add({ query, done, from, queuedAt: waited !== undefined ? performance.now() : 0 });
    schedule();
  }

  return {
    answer(query, done, from = ANYONE) {
      // Another query waits, or one ran at once in this turn of the loop: contention.
      if (scheduled || contended || loop.ranAtOnce) return queue(query, done, from);
      ranAtOnce = from;
      loop.ranAtOnce = true;
      schedule(); // the end of this turn of the loop: until then, the others wait for a turn
      waited?.(0, query);
      runAlone(run, enclose, query, done, from, hold);
    },
    queue,
    waitingFrom: (address) => waiting.waitingFrom(address) + (ranAtOnce?.address === address ? 1 : 0),
    waitingFor: (user) =>
      waiting.waitingFor(user) + (ranAtOnce !== undefined && (ranAtOnce.user ?? '') === user ? 1 : 0),
  };
}

/** `then` after `yields` empty turns of the event loop. */
function afterYields(yields: number, then: () => void): void {
  if (yields === 0) then();
  else setImmediate(afterYields, yields - 1, then);
}

/** `query` of `from` run at once inside its own call of `enclose`, and answered, unless `hold` takes it. */
function runAlone<Q, R>(
  run: (query: Q) => R,
  enclose: (work: () => void) => void,
  query: Q,
  done: (outcome: Outcome<R>) => void,
  from: Requester,
  hold: Hold<Job<Q, R>>,
): void {
  let outcome: Outcome<R> | undefined;
  try {
    enclose(() => {
      outcome = { ok: true, result: run(query) };
    });
  } catch (error: unknown) {
    // What `run` threw, or `enclose` itself (then after `run`, an answer is kept as in a turn).
    if (outcome === undefined && hold({ query, done, from, queuedAt: 0 }, error)) return;
    outcome ??= { ok: false, error };
  }
  done(outcome as Outcome<R>);
}

/** How a queue's held queries are tried again (lib/search/queued.ts): in a turn of `loop`, unheard by `waited`. */
function retryIn<Q, R>(loop: LoopTurn, run: (query: Q) => R, enclose: (work: () => void) => void) {
  return (held: Rotations<Job<Q, R>>, hold: Hold<Job<Q, R>>, rest: () => void, begin: () => void): void =>
    due(loop, () => {
      begin();
      const answers = runQueued(held, run, enclose, undefined, performance.now(), hold);
      rest();
      return answers;
    });
}
