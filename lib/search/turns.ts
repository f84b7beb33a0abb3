// The queue of turns: queued queries run in turns of the event loop, a turn within a time
// budget, the users, their addresses and their connections each in rotation. Generic over
// the function that answers one query (the booking search in lib/search/booking-search.ts,
// a stand-in in test/unit/turns.test.ts), and over what a whole turn runs inside (there:
// one read transaction).

/** What `run` gave for one query: its result, or what it threw. */
export type Outcome<R> = { ok: true; result: R } | { ok: false; error: unknown };

/** Who asked for a queued query. */
export interface Requester {
  /** The authenticated user: the users take turns, whatever number of addresses each comes from. */
  user?: string;
  /** The client's address: the addresses of one user take turns. */
  address: string;
  /** The client's connection: the connections of one address take turns. */
  connection: object;
  /** Whether no one waits for the answer any more (the client left): the query is then skipped, and `done` never called. */
  abandoned?: () => boolean;
}

export interface Turns<Q, R> {
  /** `query` answered in a later turn of the event loop; `from` decides whose query runs next. */
  queue(query: Q, done: (outcome: Outcome<R>) => void, from?: Requester): void;
  /** How many queued queries of `address` (whoever's) wait for their turn. */
  waitingFrom(address: string): number;
  /** How many queued queries of `user` (from any address) wait for their turn. */
  waitingFor(user: string): number;
}

/**
 * How long queued searches may share one turn (and its read transaction): after the search
 * that passes this budget, the turn ends and the event loop gets its turn before the next
 * one begins (docs/API.md, "Searches, the application's writer and other clients").
 */
export const TURN_BUDGET_MS = 5;

// After a turn, this many empty turns of the event loop per millisecond it took (at most
// MAX_YIELDS) before the next: libuv accepts one new connection per turn of the loop, so a
// burst of connections that arrived during a long turn would otherwise be accepted one
// search at a time, and a new client's /status would wait behind all of them.
const YIELDS_PER_MS = 1;
const MAX_YIELDS = 100;

interface Job<Q, R> {
  query: Q;
  done: (outcome: Outcome<R>) => void;
  abandoned: (() => boolean) | undefined;
}
const ANYONE: Requester = { user: '', address: '', connection: {} };

/**
 * Queues queries for `run`, answered in turns. A turn starts after every query it runs has
 * arrived, runs them inside one call of `turn` (`work` runs them; if `turn` throws, every
 * query of the turn without an answer gets that error, and when it threw before the first,
 * so does every waiting one), and answers them only after `turn` has returned, so that
 * nothing `turn` holds is held while other code runs. A turn ends once it has used
 * `TURN_BUDGET_MS`: the rest wait for the next turn, after the event loop has answered what
 * else arrived. The turns take the users in rotation, one query each, the addresses of one
 * user in rotation, and the connections of one address in rotation, so that a user with
 * many queries queued (pipelined, over many connections, or from many addresses) delays
 * another user by at most one query of its own a round, another address of its own by at
 * most one query per address, and another connection of its own address by at most one
 * query per connection.
 */
export function createTurns<Q, R>(
  run: (query: Q) => R,
  turn: (work: () => void) => void = (work) => work(),
): Turns<Q, R> {
  // The queued queries by user, then by address, then by connection, each in the order
  // of the rotation: the first user's first address's first connection's oldest query
  // runs next, and all three then go to the end of their rotation.
  const waiting = new Map<string, Map<string, Map<object, Job<Q, R>[]>>>();
  const byAddress = new Map<string, number>();
  const byUser = new Map<string, number>();
  let scheduled = false;

  /** Moves the first entry of a non-empty `map` to its end, or drops it when `take` (given its value) returns false. */
  function rotate<K, V>(map: Map<K, V>, take: (value: V) => boolean): void {
    const [key, value] = map.entries().next().value as [K, V];
    map.delete(key);
    if (take(value)) map.set(key, value);
  }
  function count(counts: Map<string, number>, key: string, by: number): void {
    const now = (counts.get(key) ?? 0) + by;
    if (now === 0) counts.delete(key);
    else counts.set(key, now);
  }

  function next(): Job<Q, R> | undefined {
    for (;;) {
      const firstUser = waiting.entries().next();
      if (firstUser.done === true) return undefined;
      let job: Job<Q, R> | undefined;
      let address = '';
      rotate(waiting, (addresses) => {
        address = addresses.keys().next().value as string;
        rotate(addresses, (connections) => {
          rotate(connections, (jobs) => {
            job = jobs.shift();
            return jobs.length > 0;
          });
          return connections.size > 0;
        });
        return addresses.size > 0;
      });
      count(byUser, firstUser.value[0], -1);
      count(byAddress, address, -1);
      if (job !== undefined && job.abandoned?.() !== true) return job;
    }
  }

  function runTurn(): void {
    scheduled = false;
    const batch: Job<Q, R>[] = [];
    const outcomes: Outcome<R>[] = [];
    const started = performance.now();
    try {
      turn(() => {
        for (let job = next(); job !== undefined; job = next()) {
          batch.push(job);
          try {
            outcomes.push({ ok: true, result: run(job.query) });
          } catch (error: unknown) {
            outcomes.push({ ok: false, error });
          }
          if (performance.now() - started >= TURN_BUDGET_MS) break;
        }
      });
    } catch (error: unknown) {
      // The turn itself failed (the search's BEGIN or COMMIT on a closed connection, say):
      // every query of the turn that has no answer yet gets the error, and so does every
      // waiting one when it failed before the first, so that a broken connection is not
      // retried turn after turn.
      if (batch.length === 0) for (let job = next(); job !== undefined; job = next()) batch.push(job);
      while (outcomes.length < batch.length) outcomes.push({ ok: false, error });
    }
    if (waiting.size > 0) schedule(Math.min(MAX_YIELDS, Math.floor((performance.now() - started) * YIELDS_PER_MS)));
    // What the turn held is released before any answer is written. One failing callback
    // must not leave the others unanswered; its error is thrown after them.
    let failure: { error: unknown } | undefined;
    for (const [i, { done }] of batch.entries()) {
      try {
        done(outcomes[i] as Outcome<R>);
      } catch (error: unknown) {
        failure ??= { error };
      }
    }
    if (failure !== undefined) throw failure.error;
  }

  /** The next turn, after `yields` empty turns of the event loop. */
  function schedule(yields = 0): void {
    if (scheduled) return;
    scheduled = true;
    const hop = (left: number): void => {
      if (left > 0) setImmediate(hop, left - 1);
      else runTurn();
    };
    setImmediate(hop, yields);
  }

  return {
    queue(query, done, from = ANYONE) {
      const job = { query, done, abandoned: from.abandoned };
      const user = from.user ?? '';
      // A new user, address or connection joins at the end of its rotation.
      const addresses = waiting.get(user) ?? new Map<string, Map<object, Job<Q, R>[]>>();
      waiting.set(user, addresses);
      const connections = addresses.get(from.address) ?? new Map<object, Job<Q, R>[]>();
      addresses.set(from.address, connections);
      const jobs = connections.get(from.connection);
      if (jobs === undefined) connections.set(from.connection, [job]);
      else jobs.push(job);
      count(byUser, user, 1);
      count(byAddress, from.address, 1);
      schedule();
    },
    waitingFrom: (address) => byAddress.get(address) ?? 0,
    waitingFor: (user) => byUser.get(user) ?? 0,
  };
}
