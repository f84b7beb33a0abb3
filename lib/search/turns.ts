// The queue of turns: a query runs at once when no other waits; under contention, queued
// queries run in turns of the event loop, a turn within a time budget, the users, their
// addresses and their connections each in rotation. Generic over the function that answers
// one query (the booking search in lib/search/booking-search.ts, a stand-in in
// test/unit/turns.test.ts), and over what a query runs inside, alone or with the others of
// its turn (there: one read transaction).

/** What `run` gave for one query: its result, or what it threw. */
export type Outcome<R> = { ok: true; result: R } | { ok: false; error: unknown };

/** Who asked for a queued query. */
export interface Requester {
  /** The authenticated user: the users take turns, whatever number of addresses each comes from. */
  user?: string;
  /** The client's address: the addresses of one user take turns. */
  address: string;
  /**
   * The client's connection (its socket): the connections of one address take turns, and
   * once it is `destroyed` (the client left), its queries are skipped and their `done` never called.
   */
  connection: { readonly destroyed?: boolean };
}

export interface Turns<Q, R> {
  /**
   * `query` answered now, before this call returns, when no other query waits, none ran at
   * once in this turn of the event loop (here, or in a queue that shares its LoopTurn) and
   * none waited in the turn before; otherwise
   * queued as by `queue`. So a query pays for the turns only when others are there to
   * share them with.
   */
  answer(query: Q, done: (outcome: Outcome<R>) => void, from?: Requester): void;
  /** `query` answered in a later turn of the event loop; `from` decides whose query runs next. */
  queue(query: Q, done: (outcome: Outcome<R>) => void, from?: Requester): void;
  /**
   * How many queries of `address` (whoever's) wait for their turn, counting one that `answer`
   * ran at once in this turn of the event loop: so a burst of pipelined queries is held to
   * the same bound whether its first ran at once or waited.
   */
  waitingFrom(address: string): number;
  /** How many queries of `user` (from any address) wait for their turn, counted as `waitingFrom` counts. */
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
  from: Requester;
  /** When it was queued (performance.now()); 0 when nobody hears how long queries wait. */
  queuedAt: number;
}

// The three rotations, each a Map for finding an entry and an array in the order of the
// rotation (the first entry is served next, then goes to the end or, when it has nothing
// left, out of both): no iterator, closure or entry array is made to find the next query.
interface ConnectionEntry<Q, R> {
  connection: Requester['connection'];
  jobs: Job<Q, R>[];
}
interface AddressEntry<Q, R> {
  address: string;
  connections: Map<object, ConnectionEntry<Q, R>>;
  order: ConnectionEntry<Q, R>[];
}
interface UserEntry<Q, R> {
  user: string;
  addresses: Map<string, AddressEntry<Q, R>>;
  order: AddressEntry<Q, R>[];
  /** Its queries waiting, from all its addresses. */
  waiting: number;
}

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

/** What one queue's turn answered, not yet delivered. */
interface Answers {
  batch: ReadonlyArray<{ done: (outcome: Outcome<unknown>) => void }>;
  outcomes: readonly Outcome<unknown>[];
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
 * Answers queries with `run`. `answer` runs a query at once, inside its own call of `turn`,
 * when nothing waits; what arrives while others wait, or after one ran at once in the same
 * turn of the event loop, is queued, and so is the first of a turn while queries have
 * waited in the turn before (under load they arrive together: one `turn` for them all). Queued queries run in turns: a turn starts after every
 * query it runs has arrived, runs them inside one call of `turn` (`work` runs them; if
 * `turn` throws, every query of the turn without an answer gets that error, and when it
 * threw before the first, so does every waiting one), and answers them only after `turn`
 * has returned, so that nothing `turn` holds is held while other code runs. A turn ends
 * once it has used `TURN_BUDGET_MS`: the rest wait for the next turn, after the event loop
 * has answered what else arrived. The turns take the users in rotation, one query each,
 * the addresses of one user in rotation, and the connections of one address in rotation,
 * so that a user with many queries queued (pipelined, over many connections, or from many
 * addresses) delays another user by at most one query of its own a round, another address
 * of its own by at most one query per address, and another connection of its own address
 * by at most one query per connection. A query that ran at once had its turn: its user,
 * address and connection go behind the others that queued in the same turn of the loop.
 * `waited` hears how long each query waited, in seconds (0 for one that ran at once).
 * `loop`: the turn of the event loop as other queues of this thread see it (the books of
 * one service): once a query of any of them ran at once in it, the queries that arrive in
 * the same turn of the loop are queued, here as there.
 */
export function createTurns<Q, R>(
  run: (query: Q) => R,
  turn: (work: () => void) => void = (work) => work(),
  waited?: (seconds: number) => void,
  loop: LoopTurn = createLoopTurn(),
): Turns<Q, R> {
  const users = new Map<string, UserEntry<Q, R>>();
  // A query's wait is measured only for someone who hears it (the admin listener's metrics).
  const timed = waited !== undefined;
  const order: UserEntry<Q, R>[] = [];
  const byAddress = new Map<string, number>();
  /** A turn (or the end of this turn of the event loop, after a query ran at once) is scheduled. */
  let scheduled = false;
  /** Who had a query answered at once in this turn of the event loop. */
  let ranAtOnce: Requester | undefined;
  /**
   * Queries waited in the last turn of the event loop that had any: under load they keep
   * arriving together, and then the first of a turn waits for the others too, so that they
   * share one read transaction instead of paying a lock cycle of its own (about 9 µs of a
   * 15 µs search). Cleared by a turn of the event loop in which none arrived.
   */
  let contended = false;
  let probing = false;
  // The lane: while every waiting query comes from one user and one address, and no
  // connection has two, the rotations' order is the order of arrival, and the queries wait
  // in this one array instead (the common case: one client, or a proxy, on many
  // connections). The first query that breaks the rule moves them all into the rotations,
  // in their order, as if they had been queued there.
  const lane: Job<Q, R>[] = [];
  let laneHead = 0;
  const laneConnections = new Set<object>();

  function countAddress(address: string, by: number): void {
    const now = (byAddress.get(address) ?? 0) + by;
    if (now === 0) byAddress.delete(address);
    else byAddress.set(address, now);
  }

  /** Queries waiting in the lane. */
  const inLane = (): number => lane.length - laneHead;

  /** The next query in the rotations (its user, address and connection then go to the end), or `undefined`. */
  function next(): Job<Q, R> | undefined {
    while (laneHead < lane.length) {
      const job = lane[laneHead] as Job<Q, R>;
      lane[laneHead] = undefined as unknown as Job<Q, R>;
      laneHead += 1;
      if (laneHead === lane.length) {
        lane.length = 0;
        laneHead = 0;
      } else if (laneHead >= 1024 && laneHead * 2 >= lane.length) {
        // Under a lasting overload the lane never empties: what was served is cut off.
        lane.splice(0, laneHead);
        laneHead = 0;
      }
      laneConnections.delete(job.from.connection);
      if (job.from.connection.destroyed !== true) return job;
    }
    for (;;) {
      const user = order.shift();
      if (user === undefined) return undefined;
      const address = user.order.shift() as AddressEntry<Q, R>;
      const connection = address.order.shift() as ConnectionEntry<Q, R>;
      const job = connection.jobs.shift() as Job<Q, R>;
      if (connection.jobs.length > 0) address.order.push(connection);
      else address.connections.delete(connection.connection);
      if (address.order.length > 0) user.order.push(address);
      else user.addresses.delete(address.address);
      user.waiting -= 1;
      if (user.order.length > 0) order.push(user);
      else users.delete(user.user);
      countAddress(address.address, -1);
      if (job.from.connection.destroyed !== true) return job;
    }
  }

  /** Moves the entry that `isIt` finds to the end of `entries`. */
  function toTheEnd<T>(entries: T[], from: number, isIt: (entry: T) => boolean): void {
    for (let i = from; i < entries.length - 1; i += 1) {
      if (isIt(entries[i] as T)) {
        entries.push(entries.splice(i, 1)[0] as T);
        return;
      }
    }
  }

  /**
   * The rotations as if the query that ran at once had been served from them first: its
   * user, its address and its connection go to the end of their rotations, behind every
   * other that queued in the same turn of the event loop.
   */
  function afterRanAtOnce(from: Requester): void {
    const name = from.user ?? '';
    if (inLane() > 0) {
      const first = lane[laneHead] as Job<Q, R>;
      // One user and one address in the lane: only its connections take turns.
      if ((first.from.user ?? '') === name && first.from.address === from.address) {
        toTheEnd(lane, laneHead, (job) => job.from.connection === from.connection);
      }
      return;
    }
    const user = users.get(name);
    if (user === undefined) return;
    toTheEnd(order, 0, (entry) => entry === user);
    const address = user.addresses.get(from.address);
    if (address === undefined) return;
    toTheEnd(user.order, 0, (entry) => entry === address);
    toTheEnd(address.order, 0, (entry) => entry.connection === from.connection);
  }

  /** The turn: the queries it answered and their outcomes, for `loop` to deliver after every turn now due. */
  function runTurn(): Answers | undefined {
    scheduled = false;
    if (ranAtOnce !== undefined) {
      afterRanAtOnce(ranAtOnce);
      ranAtOnce = undefined;
      loop.ranAtOnce = false;
    }
    // Only the end of a turn of the loop in which a query ran at once: nothing to run.
    if (order.length === 0 && inLane() === 0) return undefined;
    contended = true;
    if (!probing) {
      probing = true;
      setImmediate(probe);
    }
    const batch: Job<Q, R>[] = [];
    const outcomes: Outcome<R>[] = [];
    const started = performance.now();
    try {
      turn(() => {
        // Each query starts when the one before it ended: one clock reading per query.
        let clock = started;
        for (let job = next(); job !== undefined; job = next()) {
          batch.push(job);
          if (timed) waited((clock - job.queuedAt) / 1000);
          try {
            outcomes.push({ ok: true, result: run(job.query) });
          } catch (error: unknown) {
            outcomes.push({ ok: false, error });
          }
          clock = performance.now();
          if (clock - started >= TURN_BUDGET_MS) break;
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
    if (order.length > 0 || inLane() > 0) {
      schedule(Math.min(MAX_YIELDS, Math.floor((performance.now() - started) * YIELDS_PER_MS)));
    }
    return { batch, outcomes } as Answers;
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
    if (yields === 0) due(loop, runTurn);
    else setImmediate(hop, yields);
  }
  function hop(left: number): void {
    if (left > 1) setImmediate(hop, left - 1);
    else due(loop, runTurn);
  }

  function queue(query: Q, done: (outcome: Outcome<R>) => void, from: Requester = ANYONE): void {
    const job: Job<Q, R> = { query, done, from, queuedAt: timed ? performance.now() : 0 };
    if (order.length === 0) {
      const first = lane[laneHead];
      if (
        first === undefined ||
        ((first.from.user ?? '') === (from.user ?? '') &&
          first.from.address === from.address &&
          !laneConnections.has(from.connection))
      ) {
        lane.push(job);
        laneConnections.add(from.connection);
        schedule();
        return;
      }
      // Two users, two addresses or a connection's second query: the rotations from now on.
      while (laneHead < lane.length) {
        const waiting = lane[laneHead] as Job<Q, R>;
        laneHead += 1;
        rotate(waiting);
      }
      lane.length = 0;
      laneHead = 0;
      laneConnections.clear();
    }
    rotate(job);
    schedule();
  }

  /** `job` into the rotations: a new user, address or connection joins at the end of its rotation. */
  function rotate(job: Job<Q, R>): void {
    const { from } = job;
    const name = from.user ?? '';
    // A new user, address or connection joins at the end of its rotation.
    let user = users.get(name);
    if (user === undefined) {
      user = { user: name, addresses: new Map(), order: [], waiting: 0 };
      users.set(name, user);
      order.push(user);
    }
    let address = user.addresses.get(from.address);
    if (address === undefined) {
      address = { address: from.address, connections: new Map(), order: [] };
      user.addresses.set(from.address, address);
      user.order.push(address);
    }
    let connection = address.connections.get(from.connection);
    if (connection === undefined) {
      connection = { connection: from.connection, jobs: [] };
      address.connections.set(from.connection, connection);
      address.order.push(connection);
    }
    connection.jobs.push(job);
    user.waiting += 1;
    countAddress(from.address, 1);
  }

  return {
    answer(query, done, from = ANYONE) {
      // Another query waits, or one ran at once in this turn of the loop: contention.
      if (scheduled || contended || loop.ranAtOnce) return queue(query, done, from);
      ranAtOnce = from;
      loop.ranAtOnce = true;
      // The end of this turn of the loop: until then, the others that arrive wait for a turn.
      schedule();
      waited?.(0);
      let outcome: Outcome<R> | undefined;
      try {
        turn(() => {
          outcome = { ok: true, result: run(query) };
        });
      } catch (error: unknown) {
        // What `run` threw, or `turn` itself (then after `run`, an answer is kept as in a turn).
        outcome ??= { ok: false, error };
      }
      done(outcome as Outcome<R>);
    },
    queue,
    waitingFrom: (address) =>
      (byAddress.get(address) ?? 0) +
      (inLane() > 0 && (lane[laneHead] as Job<Q, R>).from.address === address ? inLane() : 0) +
      (ranAtOnce?.address === address ? 1 : 0),
    waitingFor: (user) =>
      (users.get(user)?.waiting ?? 0) +
      (inLane() > 0 && ((lane[laneHead] as Job<Q, R>).from.user ?? '') === user ? inLane() : 0) +
      (ranAtOnce !== undefined && (ranAtOnce.user ?? '') === user ? 1 : 0),
  };
}
