// The queue of turns without SQL: the users, their addresses and their connections take
// turns, a query whose client left is skipped, a failure answers only what it concerns,
// a turn ends once it has used its budget, the event loop running before the next, and a
// query runs at once when no other waits.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import {
  createLoopTurn,
  createTurns,
  LOCK_WAIT_MS,
  type Outcome,
  type Requester,
  TURN_BUDGET_MS,
  type Turns,
} from '../../lib/search/index.js';

/** Queues `query` with `from` and resolves with its outcome. */
function ask<Q, R>(turns: Turns<Q, R>, query: Q, from?: Requester): Promise<Outcome<R>> {
  return new Promise((resolve) => turns.queue(query, resolve, from));
}

test('queued queries take turns by client address, then by connection of one address', async () => {
  const turns = createTurns((name: string) => name);
  const a1 = { address: 'a', connection: {} };
  const a2 = { address: 'a', connection: {} };
  const b = { address: 'b', connection: {} };
  const order: string[] = [];
  const queue = (name: string, from: Requester) => ask(turns, name, from).then(() => void order.push(name));
  await Promise.all([
    queue('a1 first', a1),
    queue('a1 second', a1),
    queue('a1 third', a1),
    queue('b', b),
    queue('a2', a2),
  ]);
  assert.deepEqual(order, ['a1 first', 'b', 'a2', 'a1 second', 'a1 third']);
});

test("queued queries take turns by user first, whatever number of addresses one user's queries come from", async () => {
  const turns = createTurns((name: string) => name);
  const x1 = { user: 'x', address: 'x1', connection: {} };
  const x2 = { user: 'x', address: 'x2', connection: {} };
  const x3 = { user: 'x', address: 'x3', connection: {} };
  const y = { user: 'y', address: 'y', connection: {} };
  const order: string[] = [];
  const queue = (name: string, from: Requester) => ask(turns, name, from).then(() => void order.push(name));
  const all = Promise.all([
    queue('x1 first', x1),
    queue('x1 second', x1),
    queue('x2', x2),
    queue('x3', x3),
    queue('y first', y),
    queue('y second', y),
  ]);
  assert.equal(turns.waitingFor('x'), 4);
  assert.equal(turns.waitingFrom('x1'), 2);
  await all;
  assert.deepEqual(order, ['x1 first', 'y first', 'x2', 'y second', 'x3', 'x1 second']);
  assert.equal(turns.waitingFor('x'), 0);
  assert.equal(turns.waitingFrom('x1'), 0);
});

test('a query whose client left is skipped: never run, never answered', async () => {
  const ran: string[] = [];
  const turns = createTurns((name: string) => void ran.push(name));
  const from = { address: 'a', connection: {} };
  const answered: string[] = [];
  turns.queue('left', () => answered.push('left'), { ...from, connection: { destroyed: true } });
  await new Promise<void>((resolve) =>
    turns.queue('stayed', () => resolve(void answered.push('stayed')), { ...from, connection: { destroyed: false } }),
  );
  assert.deepEqual(ran, ['stayed']);
  assert.deepEqual(answered, ['stayed']);
});

test('a query that throws gets its error; the others of its turn get their results', async () => {
  const failure = new Error('no such table');
  const turns = createTurns((n: number) => {
    if (n === 2) throw failure;
    return n * 10;
  });
  const outcomes = await Promise.all([1, 2, 3].map((n) => ask(turns, n)));
  assert.deepEqual(outcomes, [
    { ok: true, result: 10 },
    { ok: false, error: failure },
    { ok: true, result: 30 },
  ]);
});

test('a turn that fails before its first query answers every waiting query with that error, and runs none', async () => {
  const failure = new Error('the database connection is not open');
  let ran = 0;
  const turns = createTurns(
    () => ran++,
    () => {
      throw failure;
    },
  );
  const outcomes = await Promise.all([ask(turns, 1), ask(turns, 2, { address: 'b', connection: {} })]);
  assert.deepEqual(outcomes, [
    { ok: false, error: failure },
    { ok: false, error: failure },
  ]);
  assert.equal(ran, 0);
  assert.equal(turns.waitingFrom('b'), 0);
});

test('a turn that fails after its queries ran keeps the answers they had', async () => {
  const failure = new Error('COMMIT failed');
  const turns = createTurns(
    (n: number) => n,
    (work) => {
      work();
      throw failure;
    },
  );
  assert.deepEqual(await Promise.all([ask(turns, 1), ask(turns, 2)]), [
    { ok: true, result: 1 },
    { ok: true, result: 2 },
  ]);
});

test('a turn ends once it has used its budget, and the event loop runs between turns, outside them', async () => {
  const queryMs = 2;
  const count = 4 * Math.ceil(TURN_BUDGET_MS / queryMs);
  let inside = false;
  let turnsRun = 0;
  const turns = createTurns(
    () => {
      const until = performance.now() + queryMs;
      while (performance.now() < until);
    },
    (work) => {
      turnsRun += 1;
      inside = true;
      try {
        work();
      } finally {
        inside = false;
      }
    },
  );
  let between = 0;
  let ticking = true;
  const tick = (): void => {
    between += 1;
    assert.equal(inside, false, 'the event loop never runs inside a turn');
    if (ticking) setImmediate(tick);
  };
  setImmediate(tick);
  const answeredAt: number[] = [];
  await Promise.all(Array.from({ length: count }, (_, i) => ask(turns, i).then(() => void answeredAt.push(between))));
  ticking = false;
  // Each turn runs the queries until one passes the budget: at most ceil(budget / query) + 1 of them.
  assert.ok(turnsRun >= 4, `${count} queries of ${queryMs} ms ran in ${turnsRun} turns`);
  assert.equal(new Set(answeredAt).size, turnsRun, 'each turn answered after the event loop ran');
});

test('a query answers at once when no other waits: inside its own turn, before `answer` returns', () => {
  let turnsRun = 0;
  const turns = createTurns(
    (n: number) => n * 10,
    (work) => {
      turnsRun += 1;
      work();
    },
  );
  const outcomes: Outcome<number>[] = [];
  turns.answer(4, (outcome) => outcomes.push(outcome));
  assert.deepEqual(outcomes, [{ ok: true, result: 40 }]);
  assert.equal(turnsRun, 1);
});

test('after a query ran at once, the others of that turn of the event loop share one turn and its client goes behind them; while queries keep waiting, the first of a turn waits too', async () => {
  let turnsRun = 0;
  const turns = createTurns(
    (name: string) => name,
    (work) => {
      turnsRun += 1;
      work();
    },
  );
  const x1 = { user: 'x', address: 'x1', connection: {} };
  const x2 = { user: 'x', address: 'x2', connection: {} };
  const y = { user: 'y', address: 'y', connection: {} };
  const order: string[] = [];
  const answer = (name: string, from: Requester): Promise<void> =>
    new Promise((resolve) => turns.answer(name, () => resolve(void order.push(name)), from));
  const all = Promise.all([
    answer('x1 first', x1),
    answer('x1 second', x1),
    answer('x2', x2),
    answer('y first', y),
    answer('y second', y),
  ]);
  assert.deepEqual(order, ['x1 first'], 'only the first ran at once');
  // The one that ran at once counts until the end of this turn of the event loop: a burst
  // is held to maxWaitingSearches whether its first waited or not.
  assert.equal(turns.waitingFor('x'), 3);
  assert.equal(turns.waitingFrom('x1'), 2);
  await all;
  assert.deepEqual(order, ['x1 first', 'y first', 'x2', 'y second', 'x1 second']);
  assert.equal(turnsRun, 2, 'one turn at once, one for the four that waited');
  assert.equal(turns.waitingFor('x'), 0);
  assert.equal(turns.waitingFrom('x1'), 0);
  // Right after a turn in which queries waited, as under load, the first of the next turn
  // of the event loop waits for the others too, to share their read transaction.
  let next = false;
  const waited = new Promise<void>((resolve) =>
    turns.answer(
      'next',
      () => {
        next = true;
        resolve();
      },
      x1,
    ),
  );
  assert.equal(next, false);
  await waited;
  assert.equal(turnsRun, 3);
  // After a turn of the event loop in which none waited: at once again.
  await new Promise(setImmediate);
  await new Promise(setImmediate);
  let again = false;
  turns.answer('later', () => (again = true), x1);
  assert.equal(again, true);
});

test('a query that throws at once gets its error; one whose turn fails after it ran keeps its answer', () => {
  const failure = new Error('no such table');
  const throwing = createTurns((_: number): number => {
    throw failure;
  });
  const outcomes: Outcome<number>[] = [];
  throwing.answer(1, (outcome) => outcomes.push(outcome));
  const commitFails = createTurns(
    (n: number) => n,
    (work) => {
      work();
      throw new Error('COMMIT failed');
    },
  );
  commitFails.answer(2, (outcome) => outcomes.push(outcome));
  assert.deepEqual(outcomes, [
    { ok: false, error: failure },
    { ok: true, result: 2 },
  ]);
});

test('each query says how long it waited for its turn: 0 at once, the time behind the others when queued', async () => {
  const waits: number[] = [];
  const busy = (ms: number): void => {
    const until = performance.now() + ms;
    while (performance.now() < until);
  };
  const turns = createTurns(
    (ms: number) => busy(ms),
    (work) => work(),
    (seconds) => waits.push(seconds),
  );
  const from = { address: 'a', connection: {} };
  const answers: Promise<unknown>[] = [];
  turns.answer(0, () => {}, from);
  // Queued behind it in this turn of the event loop, then each behind the one before.
  const first = performance.now();
  for (const ms of [2, 2, 0]) answers.push(new Promise((resolve) => turns.answer(ms, resolve, from)));
  // Less the time between their arrivals, which the later ones did not wait: microseconds,
  // unless the machine took the CPU away in between.
  const spread = (performance.now() - first) / 1000;
  await Promise.all(answers);
  assert.equal(waits.length, 4);
  assert.equal(waits[0], 0, 'the one that ran at once');
  const behind = (k: number): number => (waits[k] as number) - (waits[1] as number) + spread;
  assert.ok(behind(2) >= 0.002, `the second queued waited for the first: ${waits}, arrivals ${spread} s apart`);
  assert.ok(behind(3) >= 0.004, `the third for both: ${waits}, arrivals ${spread} s apart`);
});

/**
 * The rotations written plainly, as docs/API.md states them: the users in turn, one query
 * each, the addresses of a user in turn, the connections of an address in turn; a new user,
 * address or connection joins at the end. The order in which queries queued together run.
 */
function rotationOrder(arrivals: Array<{ user: string; address: string; connection: number }>): number[] {
  type Connection = { connection: number; jobs: number[] };
  type Address = { address: string; connections: Connection[] };
  type User = { user: string; addresses: Address[] };
  const users: User[] = [];
  arrivals.forEach(({ user, address, connection }, i) => {
    let u = users.find((entry) => entry.user === user);
    if (u === undefined) {
      u = { user, addresses: [] };
      users.push(u);
    }
    let a = u.addresses.find((entry) => entry.address === address);
    if (a === undefined) {
      a = { address, connections: [] };
      u.addresses.push(a);
    }
    let c = a.connections.find((entry) => entry.connection === connection);
    if (c === undefined) {
      c = { connection, jobs: [] };
      a.connections.push(c);
    }
    c.jobs.push(i);
  });
  const order: number[] = [];
  while (users.length > 0) {
    const u = users.shift() as User;
    const a = u.addresses.shift() as Address;
    const c = a.connections.shift() as Connection;
    order.push(c.jobs.shift() as number);
    if (c.jobs.length > 0) a.connections.push(c);
    if (a.connections.length > 0) u.addresses.push(a);
    if (u.addresses.length > 0) users.push(u);
  }
  return order;
}

test('queries arriving together run in the order of the rotations, whoever they come from, queued or the first answered at once (2,000 random sequences of arrivals against the plain rotations)', async () => {
  const connections = Array.from({ length: 6 }, () => ({}));
  const arrival = fc.record({
    user: fc.constantFrom('x', 'y', 'z'),
    address: fc.constantFrom('a', 'b', 'c'),
    connection: fc.integer({ min: 0, max: 5 }),
  });
  await fc.assert(
    fc.asyncProperty(fc.array(arrival, { minLength: 1, maxLength: 30 }), fc.boolean(), async (arrivals, atOnce) => {
      const turns = createTurns((i: number) => i);
      const ran: number[] = [];
      await Promise.all(
        arrivals.map(
          ({ user, address, connection }, i) =>
            new Promise<void>((resolve) =>
              // `answer` runs the first at once; its client then goes behind the others, as
              // if the rotations had served it first.
              (atOnce ? turns.answer : turns.queue)(
                i,
                (outcome) => {
                  if (outcome.ok) ran.push(outcome.result);
                  resolve();
                },
                // The same connection object for the same number: a connection is one client's.
                { user, address: `${user}-${address}`, connection: connections[connection] as object },
              ),
            ),
        ),
      );
      assert.deepEqual(ran, rotationOrder(arrivals.map((a) => ({ ...a, address: `${a.user}-${a.address}` }))));
    }),
    { numRuns: 2000, seed: 20_261_124 },
  );
});

test('queues that share a turn of the event loop (the books of a service): after one ran a query at once, the others queue theirs, answered together after it in that turn; queues that share none each run one at once', async () => {
  const loop = createLoopTurn();
  const books = Array.from({ length: 3 }, (_, i) =>
    createTurns((name: string) => `${name} in ${i}`, undefined, undefined, loop),
  );
  const alone = Array.from({ length: 3 }, (_, i) => createTurns((name: string) => `${name} in ${i}`));
  for (const [queues, atOnce] of [
    [books, ['a in 0']],
    [alone, ['a in 0', 'b in 1', 'c in 2']],
  ] as const) {
    const answered: string[] = [];
    const all = ['a', 'b', 'c'].map(
      (name, i) =>
        new Promise<void>((resolve) =>
          (queues[i] as Turns<string, string>).answer(name, (outcome) => {
            if (outcome.ok) answered.push(outcome.result);
            resolve();
          }),
        ),
    );
    const now = [...answered];
    await Promise.all(all);
    assert.deepEqual(now, atOnce);
    assert.deepEqual(answered, ['a in 0', 'b in 1', 'c in 2']);
    // A later turn of the event loop: the first query runs at once again.
    await new Promise((resolve) => setImmediate(resolve));
    let later = '';
    (queues[2] as Turns<string, string>).answer('d', (outcome) => {
      later = outcome.ok ? outcome.result : '';
    });
    assert.equal(later, 'd in 2');
    await new Promise((resolve) => setImmediate(resolve));
  }
});

test("queues that share a turn of the event loop answer after every due turn has run: each book's transaction ends before any answer of that turn of the loop is written", async () => {
  const loop = createLoopTurn();
  const events: string[] = [];
  const books = ['x', 'y', 'z'].map((book) =>
    createTurns(
      (name: string) => {
        events.push(`run ${name}`);
        return name;
      },
      (work) => {
        events.push(`begin ${book}`);
        work();
        events.push(`end ${book}`);
      },
      undefined,
      loop,
    ),
  );
  await Promise.all(
    books.map(
      (book, i) =>
        new Promise<void>((resolve) =>
          book.queue(`q${i}`, () => {
            events.push(`answer q${i}`);
            resolve();
          }),
        ),
    ),
  );
  assert.deepEqual(events, [
    'begin x',
    'run q0',
    'end x',
    'begin y',
    'run q1',
    'end y',
    'begin z',
    'run q2',
    'end z',
    'answer q0',
    'answer q1',
    'answer q2',
  ]);
});

/** A stand-in for another program's write lock: while `held`, a query throws SQLite's SQLITE_BUSY. */
function lockable(): { held: boolean; run: (n: number) => number; isLock: (error: unknown) => boolean } {
  const busy = Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' });
  const lock = {
    held: true,
    run: (n: number): number => {
      if (lock.held) throw busy;
      return n;
    },
    isLock: (error: unknown) => error === busy,
  };
  return lock;
}

test('a query that meets a lock waits it out: answered once the lock ends, run at once or queued, and counted as waiting until then', async () => {
  const lock = lockable();
  const turns = createTurns(lock.run, undefined, undefined, createLoopTurn(), lock.isLock);
  const from = { user: 'u', address: 'a', connection: {} };
  const outcomes: Array<Promise<Outcome<number>>> = [
    new Promise((resolve) => turns.answer(0, resolve, from)),
    ...Array.from({ length: 20 }, (_, i) => ask(turns, i + 1, { ...from, connection: {} })),
  ];
  await new Promise((resolve) => setTimeout(resolve, 20));
  assert.equal(turns.waitingFrom('a'), 21, 'the held queries count as waiting');
  assert.equal(turns.waitingFor('u'), 21);
  lock.held = false;
  assert.deepEqual(
    await Promise.all(outcomes),
    Array.from({ length: 21 }, (_, i) => ({ ok: true, result: i })),
  );
  assert.equal(turns.waitingFrom('a'), 0);
  assert.equal(turns.waitingFor('u'), 0);
});

test('a query that meets a lock for its whole wait gets the error LOCK_WAIT_MS after its first try, each query on its own time, not one after the other', async () => {
  const lock = lockable();
  const turns = createTurns(lock.run, undefined, undefined, createLoopTurn(), lock.isLock);
  const timed = (n: number, address: string) => {
    const sent = performance.now();
    return ask(turns, n, { address, connection: {} }).then((outcome) => ({ outcome, ms: performance.now() - sent }));
  };
  const first = Array.from({ length: 20 }, (_, i) => timed(i, `a${i}`));
  await new Promise((resolve) => setTimeout(resolve, LOCK_WAIT_MS / 2));
  const later = timed(99, 'b');
  // Each on its own time: one after the other, the last would wait 20 × LOCK_WAIT_MS; the
  // bound leaves a loaded machine's late timers room.
  for (const { outcome, ms } of [...(await Promise.all(first)), await later]) {
    assert.equal(outcome.ok, false);
    assert.ok(ms >= LOCK_WAIT_MS && ms < LOCK_WAIT_MS * 5, `answered after ${ms} ms`);
  }
});

test('a turn that meets a lock before its first query (its read transaction): every waiting query waits it out', async () => {
  const lock = lockable();
  const turns = createTurns(
    (n: number) => n,
    (work) => {
      lock.run(0);
      work();
    },
    undefined,
    createLoopTurn(),
    lock.isLock,
  );
  const outcomes = Promise.all([ask(turns, 1), ask(turns, 2, { address: 'b', connection: {} })]);
  setTimeout(() => (lock.held = false), 20);
  assert.deepEqual(await outcomes, [
    { ok: true, result: 1 },
    { ok: true, result: 2 },
  ]);
});

test('held queries count as waiting until the turn that tries them again begins, not only until it is asked for', async () => {
  const lock = lockable();
  const loop = createLoopTurn();
  const turns = createTurns(lock.run, undefined, undefined, loop, lock.isLock);
  const from = { user: 'u', address: 'a', connection: {} };
  const outcomes: Array<Promise<Outcome<number>>> = [
    new Promise((resolve) => turns.answer(0, resolve, from)),
    ...Array.from({ length: 3 }, (_, i) => ask(turns, i + 1, { ...from, connection: {} })),
  ];
  // The queued three ran (and met the lock) in the loop's turn, asked for before this await's.
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(turns.waitingFrom('a'), 4);
  // Hold back the loop's next turn from now, before any timer can ask for it (a retry let
  // run would reset `scheduled`), so that the retry stays due; then wait until it is asked
  // for, however late its timer fires.
  loop.scheduled = true;
  for (let polls = 0; loop.due.length === 0 && polls < 200; polls += 1) {
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  assert.equal(loop.due.length, 1, 'the retry is due');
  assert.equal(turns.waitingFrom('a'), 4, 'held queries whose retry is due still wait');
  assert.equal(turns.waitingFor('u'), 4);
  lock.held = false;
  loop.scheduled = false;
  outcomes.push(ask(turns, 4, { ...from, connection: {} }));
  assert.deepEqual(
    await Promise.all(outcomes),
    Array.from({ length: 5 }, (_, i) => ({ ok: true, result: i })),
  );
  assert.equal(turns.waitingFrom('a'), 0);
});
