// The throttle of --workers: the counts in the primary, a replica in each worker
// (lib/throttle-authority.ts, lib/throttle-replica.ts), here over the command's channel on
// in-process ports instead of node:cluster's.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type Channel, ChannelError, createChannel } from '../../bin/base/channel.js';
import { MAX_HASH_WAIT_MS } from '../../lib/hash-checks.js';
import { REFUSALS } from '../../lib/metric-families.js';
import { Metrics } from '../../lib/metrics.js';
import { DEFAULTS } from '../../lib/options.js';
import { createThrottle, type Throttle, type ThrottleSettings } from '../../lib/throttle.js';
import { createThrottleAuthority, THROTTLE_MESSAGES } from '../../lib/throttle-authority.js';
import { createThrottleReplica } from '../../lib/throttle-replica.js';
import { portPair, settle, type TestPort } from '../support/port-pair.js';

/** The library's defaults. */
const SETTINGS: ThrottleSettings = { ...DEFAULTS, now: Date.now };
const REPLICA = { maxKnownClients: 1000, maxTrackedAddresses: 10_000, now: Date.now };

/** A worker's counts, in the primary at the other end of `port`; what it says while the primary does not decide goes to `said`. */
function inPrimary(port: TestPort, said: string[] = []) {
  return { link: createChannel(port), unanswered: (error: Error) => said.push(error.message) };
}

function service(settings: Partial<ThrottleSettings> = {}) {
  const counts = createThrottle({ ...SETTINGS, ...settings });
  const authority = createThrottleAuthority(counts, 10_000);
  const worker = () => {
    const [primaryEnd, workerEnd] = portPair();
    const channel = createChannel(primaryEnd);
    const metrics = new Metrics();
    const throttle = createThrottleReplica(inPrimary(workerEnd), REPLICA, metrics);
    authority.attach(channel);
    return { throttle, metrics, workerEnd, end: () => authority.detach(channel) };
  };
  return { counts, worker };
}

/** One guess as lib/login.ts makes it: wrong credentials, reserved and confirmed. */
async function guess(throttle: Throttle, user: string, address: string): Promise<number> {
  const blocked = throttle.retryAfter(address, user);
  const wait = blocked > 0 ? blocked : await throttle.reserve(user, address);
  if (wait === 0) throttle.confirm(address, user);
  return wait;
}

test('guesses spread over two workers get one budget per username: the 51st waits, on either worker', async () => {
  const { worker } = service();
  const [a, b] = [worker(), worker()];
  await settle();
  const checked = await Promise.all(
    Array.from({ length: 60 }, (_, i) => guess((i % 2 === 0 ? a : b).throttle, 'kasse', `198.51.100.${i}`)),
  );
  assert.equal(checked.filter((wait) => wait === 0).length, 50, 'exactly 50 checked, not 50 per worker');
  // Refused while the 50 checks may still accept: until those can have come, not the window.
  assert.ok(checked.slice(50).every((wait) => wait === MAX_HASH_WAIT_MS / 1000));
  await settle();
  // Both replicas now know the username is spent (50 confirmed), and refuse without asking the primary.
  assert.equal(a.throttle.budgetRetryAfter('kasse', '203.0.113.1'), 60);
  assert.equal(b.throttle.budgetRetryAfter('kasse', '203.0.113.1'), 60);
  const refusedBy = (m: typeof a.metrics) => m.refusals[REFUSALS.indexOf('user')];
  assert.equal((refusedBy(a.metrics) ?? 0) + (refusedBy(b.metrics) ?? 0), 12, 'each refusal counted once, as user');
});

test('an address blocked through one worker is refused by the other from its replica', async () => {
  const { worker } = service();
  const [a, b] = [worker(), worker()];
  await settle();
  for (let i = 0; i < 10; i += 1) assert.equal(await guess(a.throttle, `user${i}`, '203.0.113.9'), 0);
  await settle();
  assert.equal(b.throttle.retryAfter('203.0.113.9'), 60);
  assert.equal(b.metrics.refusals[REFUSALS.indexOf('address')], 1);
});

test("behind one address, a client that logged in through one worker is not refused on the other for another username's failures there; its own failures refuse it on both", async () => {
  const { worker } = service();
  const [a, b] = [worker(), worker()];
  await settle();
  const office = '203.0.113.9';
  a.throttle.recordSuccess(office, 'buero');
  await settle();
  for (let i = 0; i < 10; i += 1) assert.equal(await guess(a.throttle, 'kasse', office), 0);
  await settle();
  assert.equal(b.throttle.retryAfter(office, 'kasse'), 60, "the address's failures are spent");
  assert.equal(b.throttle.retryAfter(office, 'buero'), 0, 'buero, known there, is not refused');
  for (let i = 0; i < 10; i += 1) assert.equal(await guess(b.throttle, 'buero', office), 0, `buero's failure ${i}`);
  assert.equal(await guess(b.throttle, 'buero', office), 60);
  await settle();
  assert.equal(a.throttle.retryAfter(office, 'buero'), 60, "buero's own failures, seen by a's replica");
  assert.equal(a.metrics.refusals[REFUSALS.indexOf('client')], 1);
  assert.equal(b.metrics.refusals[REFUSALS.indexOf('client')], 1);
});

test('a client that logged in through one worker gets in through the other while its username is attacked', async () => {
  const { worker } = service();
  const [a, b] = [worker(), worker()];
  await settle();
  assert.equal(await a.throttle.reserve('kasse', '192.0.2.7'), 0);
  a.throttle.forgive('192.0.2.7', 'kasse');
  a.throttle.recordSuccess('192.0.2.7', 'kasse');
  for (let i = 0; i < 50; i += 1) await guess(a.throttle, 'kasse', `198.51.100.${i}`);
  await settle();
  assert.equal(b.throttle.budgetRetryAfter('kasse', '192.0.2.7'), 0, 'remembered: one lookup on b');
  assert.equal(await b.throttle.reserve('kasse', '192.0.2.7'), 0, 'not remembered by b: checked all the same');
  assert.equal(await b.throttle.reserve('kasse', '192.0.2.8'), 60, 'a new address waits');
});

test('a worker that starts gets the blocks and the known clients; a worker that ends resets no count', async () => {
  const { worker } = service();
  const a = worker();
  await settle();
  a.throttle.recordSuccess('192.0.2.7', 'kasse');
  for (let i = 0; i < 10; i += 1) await guess(a.throttle, 'kasse', '203.0.113.9');
  for (let i = 0; i < 39; i += 1) await guess(a.throttle, 'kasse', `198.51.100.${i}`);
  a.end();
  const b = worker();
  await settle();
  assert.equal(b.throttle.retryAfter('203.0.113.9'), 60, 'the block');
  assert.equal(await guess(b.throttle, 'kasse', '198.51.100.200'), 0, 'the 50th failure for kasse');
  assert.equal(await guess(b.throttle, 'kasse', '198.51.100.201'), 60, 'and no more: the 49 before it count');
  assert.equal(b.throttle.budgetRetryAfter('kasse', '192.0.2.7'), 0, 'the known client');
});

test('a failure taken back (accepted, or never checked) frees the budget again on every worker', async () => {
  const { worker } = service({ maxAuthFailures: 2 });
  const [a, b] = [worker(), worker()];
  await settle();
  assert.equal(await guess(a.throttle, 'kasse', '203.0.113.9'), 0);
  assert.equal(await guess(a.throttle, 'kasse', '203.0.113.9'), 0);
  await settle();
  assert.equal(b.throttle.retryAfter('203.0.113.9'), 60);
  a.throttle.forgive('203.0.113.9', 'kasse');
  await settle();
  assert.equal(b.throttle.retryAfter('203.0.113.9'), 0, 'unblocked');
});

test('requests without credentials count once for the service; a login from the address clears them', async () => {
  const { worker } = service({ maxUnauthenticated: 4 });
  const [a, b] = [worker(), worker()];
  await settle();
  a.throttle.recordSuccess('192.0.2.7', 'kasse');
  await settle();
  // Challenge-first: without credentials, then with them, on either worker.
  for (let round = 0; round < 10; round += 1) {
    assert.equal((round % 2 === 0 ? a : b).throttle.recordUnauthenticated('192.0.2.7'), 0, `round ${round}`);
    await settle();
    (round % 2 === 0 ? b : a).throttle.recordSuccess('192.0.2.7', 'kasse');
    await settle();
  }
  // A flood without a login: four in all, over both workers, and the address is cut off.
  for (let i = 0; i < 4; i += 1) (i % 2 === 0 ? a : b).throttle.recordUnauthenticated('198.51.100.1');
  await settle();
  assert.equal(a.throttle.recordUnauthenticated('198.51.100.1'), 60);
  assert.equal(b.throttle.recordUnauthenticated('198.51.100.1'), 60);
});

test("behind an office's NAT, where a worker knows a client, requests without credentials are never counted nor told to the primary: a challenge-first client gets the challenge whatever its neighbours send, the primary stopped too", async () => {
  const { counts, worker } = service({ maxUnauthenticated: 3 });
  const [a, b] = [worker(), worker()];
  await settle();
  a.throttle.recordSuccess('192.0.2.7', 'meier');
  await settle();
  const sent = [a.workerEnd.sent.length, b.workerEnd.sent.length];
  for (let i = 0; i < 20; i += 1) assert.equal((i % 2 === 0 ? a : b).throttle.recordUnauthenticated('192.0.2.7'), 0);
  await settle();
  assert.deepEqual([a.workerEnd.sent.length, b.workerEnd.sent.length], sent, 'nothing sent to the primary');
  assert.equal(counts.blockedUntil('unauthenticated', '192.0.2.7'), 0);
  // An address nobody logged in from keeps its budget, once for the service.
  for (let i = 0; i < 3; i += 1) (i % 2 === 0 ? a : b).throttle.recordUnauthenticated('198.51.100.1');
  await settle();
  assert.equal(b.throttle.recordUnauthenticated('198.51.100.1'), 60);
  // The primary gone: the worker refuses what it cannot tell it, but not where it knows a client.
  b.workerEnd.close();
  assert.equal(b.throttle.recordUnauthenticated('198.51.100.2'), 1);
  assert.equal(b.throttle.recordUnauthenticated('192.0.2.7'), 0);
});

test("a worker forgets a client's address with its last pair there: requests without credentials from there are counted again", async () => {
  const counts = createThrottle({ ...SETTINGS, maxUnauthenticated: 3, maxKnownClients: 1 });
  const [primaryEnd, workerEnd] = portPair();
  createThrottleAuthority(counts, 10_000).attach(createChannel(primaryEnd));
  const throttle = createThrottleReplica(inPrimary(workerEnd), { ...REPLICA, maxKnownClients: 1 });
  await settle();
  throttle.recordSuccess('192.0.2.7', 'meier');
  throttle.recordSuccess('192.0.2.8', 'kasse');
  await settle();
  for (let i = 0; i < 3; i += 1) assert.equal(throttle.recordUnauthenticated('192.0.2.7'), 0);
  await settle();
  assert.equal(throttle.recordUnauthenticated('192.0.2.7'), 60);
  assert.equal(throttle.recordUnauthenticated('192.0.2.8'), 0, 'where kasse is known');
});

test("a worker whose replica is made after its primary attached it, as a starting process's is, gets the whole state: a block, a known client", async () => {
  const counts = createThrottle({ ...SETTINGS, maxUnauthenticated: 3 });
  const authority = createThrottleAuthority(counts, 10_000);
  const attach = () => {
    const [primaryEnd, workerEnd] = portPair();
    authority.attach(createChannel(primaryEnd));
    return workerEnd;
  };
  // The first worker blocks an address and knows a client, through the primary.
  const firstEnd = attach();
  const first = createThrottleReplica(inPrimary(firstEnd), REPLICA);
  await settle();
  for (let i = 0; i < 4; i += 1) first.recordUnauthenticated('192.0.2.7');
  first.recordSuccess('192.0.2.8', 'kasse');
  await settle();
  assert.ok(first.recordUnauthenticated('192.0.2.7') > 0, 'blocked on the first worker');
  // The next is attached at its fork; its code listens only later: what came before is lost.
  const nextEnd = attach();
  await settle();
  const next = createThrottleReplica(inPrimary(nextEnd), REPLICA);
  await settle();
  assert.ok(next.recordUnauthenticated('192.0.2.7') > 0, 'the block made before it started');
  assert.equal(next.recordUnauthenticated('192.0.2.8'), 0, 'where kasse is known: not counted');
});

test('a worker that takes no messages costs the primary a bounded backlog: updates are dropped meanwhile, and it gets the whole state once it takes them again', async () => {
  const counts = createThrottle({ ...SETTINGS, maxUnauthenticated: 3 });
  const authority = createThrottleAuthority(counts, 10_000);
  const attach = (bounded: boolean) => {
    const [primaryEnd, workerEnd] = portPair();
    const channel: Channel = createChannel(
      primaryEnd,
      bounded
        ? {
            maxPending: 10,
            behind: (behind) => {
              if (!behind) authority.caughtUp(channel);
            },
          }
        : undefined,
    );
    authority.attach(channel);
    return { primaryEnd, throttle: createThrottleReplica(inPrimary(workerEnd), REPLICA) };
  };
  const stopped = attach(true);
  const other = attach(false);
  await settle();
  stopped.primaryEnd.stall(2);
  const before = stopped.primaryEnd.sent.length;
  // Through the other worker: 50 addresses flagged, then blocked, each change an update for every worker.
  for (let i = 0; i < 50; i += 1) {
    for (let j = 0; j < 6; j += 1) other.throttle.recordUnauthenticated(`192.0.2.${i}`);
    await settle();
  }
  assert.ok(other.throttle.recordUnauthenticated('192.0.2.7') > 0, 'blocked on the worker that takes messages');
  const queued = stopped.primaryEnd.sent.length - before;
  assert.ok(queued <= 3, `${queued} messages queued for the stopped worker: two updates and the probe at most`);
  assert.equal(stopped.throttle.recordUnauthenticated('192.0.2.7'), 0, 'the stopped worker has not heard of it');
  stopped.primaryEnd.resume();
  await settle();
  assert.ok(stopped.throttle.recordUnauthenticated('192.0.2.7') > 0, 'the whole state came once it took the backlog');
});

test("a worker whose primary does not decide refuses credentials on its own (1 s) and says so once until the primary answers again; the primary's own error is thrown", async () => {
  let answer = (): Promise<unknown> =>
    Promise.reject(new ChannelError('no answer to throttle.reserve', 'CHANNEL_TIMEOUT'));
  const link = { notify: () => true, handle: () => {}, request: <T>() => answer() as Promise<T> };
  const said: string[] = [];
  const metrics = new Metrics();
  let now = 1_000_000;
  let asked = 0;
  const counted = {
    ...link,
    request: <T>() => {
      asked += 1;
      return answer() as Promise<T>;
    },
  };
  const settings = { ...REPLICA, now: () => now };
  const throttle = createThrottleReplica(
    { link: counted, unanswered: (error) => said.push(error.message) },
    settings,
    metrics,
  );
  assert.equal(await throttle.reserve('kasse', '192.0.2.7'), 1);
  assert.equal(await throttle.reserve('kasse', '192.0.2.8'), 1);
  assert.equal(asked, 1, 'within the Retry-After of an unanswered reservation, the primary is not asked again');
  now += 1_000;
  assert.equal(await throttle.reserve('kasse', '192.0.2.8'), 1);
  assert.equal(asked, 2, 'after it, it is');
  assert.deepEqual(said, ['no answer to throttle.reserve'], 'said once');
  assert.equal(metrics.refusals[REFUSALS.indexOf('global')], 3);
  answer = () => Promise.resolve({ retryAfter: 0, rule: null });
  now += 1_000;
  assert.equal(await throttle.reserve('kasse', '192.0.2.9'), 0);
  for (const code of ['CHANNEL_FULL', 'CHANNEL_CLOSED'] as const) {
    answer = () => Promise.reject(new ChannelError(`refused: ${code}`, code));
    now += 1_000;
    assert.equal(await throttle.reserve('kasse', '192.0.2.10'), 1, code);
  }
  assert.deepEqual(said.slice(1), ['refused: CHANNEL_FULL'], 'said again once the primary had answered between');
  // A primary that answers with an error (here: nothing attached to answer) decided nothing for the worker to guess.
  const [primaryEnd, workerEnd] = portPair();
  createChannel(primaryEnd);
  const unattached = createThrottleReplica(inPrimary(workerEnd, said), REPLICA);
  await assert.rejects(async () => await unattached.reserve('kasse', '192.0.2.7'), { code: 'CHANNEL_REMOTE' });
  assert.equal(said.length, 2);
});

test("a primary of a version before the replica's hello, which ignores it (a new version installed, a worker replaced before the restart): the worker serves, its primary deciding its reservations", async () => {
  const counts = createThrottle(SETTINGS);
  const authority = createThrottleAuthority(counts, 10_000);
  const attach = (older: boolean) => {
    const [primaryEnd, workerEnd] = portPair();
    const channel = createChannel(primaryEnd);
    authority.attach({
      notify: (kind, body) => channel.notify(kind, body),
      request: (kind, body, timeoutMs) => channel.request(kind, body, timeoutMs),
      handle: (kind, answer) => (older && kind === THROTTLE_MESSAGES.hello ? undefined : channel.handle(kind, answer)),
    });
    return workerEnd;
  };
  const first = createThrottleReplica(inPrimary(attach(false)), REPLICA);
  await settle();
  for (let i = 0; i < 10; i += 1) assert.equal(await guess(first, `user${i}`, '203.0.113.9'), 0);
  await settle();
  const said: string[] = [];
  const next = createThrottleReplica(inPrimary(attach(true), said), REPLICA);
  await settle();
  assert.equal(next.retryAfter('203.0.113.9'), 0, 'the block made before it: not in its replica');
  assert.equal(await guess(next, 'user10', '203.0.113.9'), 60, 'the primary refuses the guess');
  for (let i = 0; i < 10; i += 1) await guess(first, `user${i}`, '203.0.113.10');
  await settle();
  assert.equal(next.retryAfter('203.0.113.10'), 60, 'a block made after its start reaches it');
  assert.deepEqual(said, [], 'the primary decided every reservation');
});
