// The queued queries of a turn (lib/search/turns.ts decides when and whose), run inside
// one call of `enclose`, and what a failed one is answered: its error or, when it met another
// connection's lock, a wait for the lock as a timer, never holding the event loop. Such a
// query is tried again every few milliseconds, in a turn of its own, until it has an answer
// or its own LOCK_WAIT_MS since its first try have passed; meanwhile it counts as waiting.

import { type Requester, Rotations } from './rotations.js';

/** What `run` gave for one query: its result, or what it threw. */
export type Outcome<R> = { ok: true; result: R } | { ok: false; error: unknown };

/**
 * How long queued searches may share one turn (and its read transaction): after the search
 * that passes this budget, the turn ends and the event loop gets its turn before the next
 * one begins (docs/API.md, "Searches, the application's writer and other clients").
 */
export const TURN_BUDGET_MS = 5;

/** A query that waits, and who asked for it. */
export interface Job<Q, R> {
  query: Q;
  done: (outcome: Outcome<R>) => void;
  from: Requester;
  /** When it was queued (performance.now()); 0 when nobody hears how long queries wait. */
  queuedAt: number;
}

/** What one queue's turn answered, not yet delivered. */
export interface Answers {
  batch: ReadonlyArray<{ done: (outcome: Outcome<unknown>) => void }>;
  outcomes: readonly Outcome<unknown>[];
}

/**
 * The waiting queries in rotation inside one call of `enclose`, until `TURN_BUDGET_MS` has
 * passed since `started`: the queries it ran and their outcomes. `waited` hears how long
 * each waited, as it starts; `hold` takes a query that failed to wait out a lock: it is not answered now.
 */
export function runQueued<Q, R>(
  waiting: Rotations<Job<Q, R>>,
  run: (query: Q) => R,
  enclose: (work: () => void) => void,
  waited: ((seconds: number, query: Q) => void) | undefined,
  started: number,
  hold: Hold<Job<Q, R>>,
): Answers {
  const batch: Job<Q, R>[] = [];
  const outcomes: Outcome<R>[] = [];
  try {
    enclose(() => {
      // Each query starts when the one before it ended: one clock reading per query.
      let clock = started;
      for (let job = waiting.next(); job !== undefined; job = waiting.next()) {
        batch.push(job);
        if (waited !== undefined) waited((clock - job.queuedAt) / 1000, job.query);
        try {
          outcomes.push({ ok: true, result: run(job.query) });
        } catch (error: unknown) {
          if (hold(job, error)) batch.pop();
          else outcomes.push({ ok: false, error });
        }
        clock = performance.now();
        if (clock - started >= TURN_BUDGET_MS) break;
      }
    });
  } catch (error: unknown) {
    // The turn itself failed (the search's BEGIN or COMMIT on a closed connection, say):
    // every query of the turn that has no answer yet gets the error (or waits out a lock),
    // and so does every waiting one when it failed before the first, so that a broken
    // connection is not retried turn after turn.
    if (batch.length === 0) for (let job = waiting.next(); job !== undefined; job = waiting.next()) batch.push(job);
    for (const job of batch.splice(outcomes.length)) {
      if (hold(job, error)) continue;
      batch.push(job);
      outcomes.push({ ok: false, error });
    }
  }
  return { batch, outcomes } as Answers;
}

/**
 * How long a query that meets another connection's lock waits for it, from its first try
 * (docs/API.md, "Searches, the application's writer and other clients").
 */
export const LOCK_WAIT_MS = 100;
// A commit holds its lock for a few milliseconds: a query is answered about that long after it ends.
const LOCK_RETRY_MS = 5;

/** Takes `job`, which threw `error`, to wait out a lock; `false` when `error` is no lock or the job's time is up. */
export type Hold<J> = (job: J, error: unknown) => boolean;

/**
 * The lock wait of the queue whose jobs wait in `waiting`: a held job counts there as
 * waiting. Every `LOCK_RETRY_MS` while jobs are held, `retry` gets them in a rotation of
 * their own, and runs them (in a turn of the event loop of its own, which calls `begin` first:
 * until then they still count), holding again those that meet the lock again; those it
 * leaves in the rotation are tried with the next.
 * `waitsOut`: whether an error is a lock to wait out.
 */
export function createLockWait<J extends { readonly from: Requester }>(
  waiting: Rotations<J>,
  waitsOut: (error: unknown) => boolean,
  retry: (held: Rotations<J>, hold: Hold<J>, rest: () => void, begin: () => void) => void,
): Hold<J> {
  let held: J[] = [];
  const until = new WeakMap<J, number>();
  let armed = false;

  function hold(job: J, error: unknown): boolean {
    if (!waitsOut(error)) return false;
    const now = performance.now();
    const end = until.get(job) ?? now + LOCK_WAIT_MS;
    if (now >= end) return false;
    until.set(job, end);
    keep(job);
    return true;
  }

  function keep(job: J): void {
    waiting.countAside(job.from, 1);
    held.push(job);
    if (armed) return;
    armed = true;
    setTimeout(tryAgain, LOCK_RETRY_MS);
  }

  function tryAgain(): void {
    armed = false;
    const trying = new Rotations<J>();
    const jobs = held;
    held = [];
    for (const job of jobs) trying.add(job);
    // They count as waiting until their retry's turn begins, not only until it is asked for.
    const begin = (): void => {
      for (const job of jobs) waiting.countAside(job.from, -1);
    };
    retry(
      trying,
      hold,
      () => {
        for (let job = trying.next(); job !== undefined; job = trying.next()) keep(job);
      },
      begin,
    );
  }

  return hold;
}
