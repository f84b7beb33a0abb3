import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MAX_HASH_WAIT_MS } from '../../lib/hash-checks.js';
import { REFUSALS } from '../../lib/metric-families.js';
import { Metrics } from '../../lib/metrics.js';
import { DEFAULTS } from '../../lib/options.js';
import { createThrottle, type LocalThrottle, type ThrottleSettings } from '../../lib/throttle.js';

/** A wrong guess as lib/login.ts makes it: reserved, and confirmed once its check rejects it. */
function guess(throttle: LocalThrottle, user: string, address: string): number {
  const wait = throttle.reserve(user, address);
  if (wait === 0) throttle.confirm(address, user);
  return wait;
}

function clock(start = 1_000_000) {
  let time = start;
  return { now: () => time, advance: (ms: number) => (time += ms) };
}

/** The library's defaults, with `overrides`. */
function settings(now: () => number, overrides: Partial<ThrottleSettings> = {}): ThrottleSettings {
  return {
    ...DEFAULTS,
    now,
    ...overrides,
  };
}

test('the 10th failure within 60 s blocks the address until its window ends', () => {
  const { now, advance } = clock();
  const throttle = createThrottle(settings(now));
  for (let i = 0; i < 9; i += 1) throttle.recordFailure('10.0.0.1', 'kasse');
  assert.equal(throttle.retryAfter('10.0.0.1'), 0);
  advance(20_000);
  throttle.recordFailure('10.0.0.1', 'kasse');
  assert.equal(throttle.retryAfter('10.0.0.1'), 40);
  advance(39_001);
  assert.equal(throttle.retryAfter('10.0.0.1'), 1);
  advance(999);
  assert.equal(throttle.retryAfter('10.0.0.1'), 0);
});

test('other addresses are not affected', () => {
  const { now } = clock();
  const throttle = createThrottle(settings(now));
  for (let i = 0; i < 10; i += 1) throttle.recordFailure('10.0.0.1', 'kasse');
  assert.equal(throttle.retryAfter('10.0.0.1'), 60);
  assert.equal(throttle.retryAfter('10.0.0.2'), 0);
});

test('failures spread over more than the window never block', () => {
  const { now, advance } = clock();
  const throttle = createThrottle(settings(now));
  for (let i = 0; i < 100; i += 1) {
    throttle.recordFailure('10.0.0.1', 'kasse');
    advance(7_000);
    assert.equal(throttle.retryAfter('10.0.0.1'), 0, `after failure ${i}`);
  }
});

test('the table keeps at most maxAddresses below the limit, dropping the oldest window', () => {
  const { now, advance } = clock();
  const throttle = createThrottle(settings(now, { maxAuthFailures: 3, maxTrackedAddresses: 3, maxGlobalFailures: 0 }));
  throttle.recordFailure('a', 'u');
  throttle.recordFailure('a', 'u');
  for (const address of ['b', 'c', 'd']) {
    advance(1);
    throttle.recordFailure(address, 'u');
  }
  assert.equal(throttle.size, 3);
  throttle.recordFailure('a', 'u');
  assert.equal(throttle.retryAfter('a'), 0, 'a, the oldest, was dropped: one more failure opens a new window');
  for (let i = 0; i < 10_000; i += 1) throttle.recordFailure(`10.0.${i >> 8}.${i & 255}`, 'u');
  assert.equal(throttle.size, 3);
});

test('a blocked address stays blocked however many other addresses fail (they were 10,000 before)', () => {
  const { now, advance } = clock();
  const throttle = createThrottle(settings(now, { maxGlobalFailures: 0, maxUserFailures: 0 }));
  for (let i = 0; i < 10; i += 1) throttle.recordFailure('203.0.113.9', 'kasse');
  assert.equal(throttle.retryAfter('203.0.113.9'), 60);
  for (let i = 0; i < 30_000; i += 1) throttle.recordFailure(`10.${i >> 16}.${(i >> 8) & 255}.${i & 255}`, 'kasse');
  advance(1_000);
  assert.equal(throttle.retryAfter('203.0.113.9'), 59, 'still blocked');
  assert.ok(throttle.size <= 2 * 10_000, `bounded: ${throttle.size}`);
});

test('blocked addresses are bounded too: a full table of blocks drops the oldest block', () => {
  const { now } = clock();
  const throttle = createThrottle(settings(now, { maxAuthFailures: 1, maxTrackedAddresses: 2, maxGlobalFailures: 0 }));
  for (const address of ['a', 'b', 'c']) throttle.recordFailure(address, 'u');
  assert.deepEqual(
    ['a', 'b', 'c'].map((address) => throttle.retryAfter(address)),
    [0, 60, 60],
  );
});

test('a username whose budget is spent is checked only from addresses it logged in from', () => {
  const { now, advance } = clock();
  const throttle = createThrottle(settings(now));
  throttle.recordSuccess('192.0.2.7', 'kasse');
  throttle.recordSuccess('192.0.2.8', 'pruefer');
  // 50 guesses from 50 fresh addresses, each far below the address limit.
  for (let i = 0; i < 50; i += 1) {
    assert.equal(throttle.budgetRetryAfter('kasse', `198.51.100.${i}`), 0, `guess ${i} is checked`);
    throttle.recordFailure(`198.51.100.${i}`, 'kasse');
  }
  assert.equal(throttle.budgetRetryAfter('kasse', '198.51.100.200'), 60, 'a fresh address waits');
  assert.equal(throttle.budgetRetryAfter('kasse', '192.0.2.7'), 0, 'the known client is still checked');
  // Known is the pair: another user's address (a shared NAT, an account of one's own) is a fresh address for kasse.
  assert.equal(throttle.budgetRetryAfter('kasse', '192.0.2.8'), 60, "kasse from pruefer's address waits");
  assert.equal(throttle.budgetRetryAfter('pruefer', '198.51.100.200'), 0, 'another username is not affected');
  advance(60_000);
  assert.equal(throttle.budgetRetryAfter('kasse', '198.51.100.200'), 0, 'the window ended');
});

test('the global budget stops guessing over many usernames; known clients still get in', () => {
  const { now } = clock();
  const throttle = createThrottle(settings(now));
  throttle.recordSuccess('2001:db8:1:2::/64', 'kasse');
  for (let i = 0; i < 100; i += 1) throttle.recordFailure(`198.51.${i >> 8}.${i & 255}`, `user${i}`);
  assert.equal(throttle.budgetRetryAfter('user500', '203.0.113.1'), 60);
  assert.equal(throttle.budgetRetryAfter('kasse', '203.0.113.1'), 60, 'kasse on a new address waits');
  assert.equal(throttle.budgetRetryAfter('kasse', '2001:db8:1:2::/64'), 0, 'kasse where it logged in before does not');
});

test('guesses per hour, whatever addresses the attacker uses: 3,000 against one username, 6,000 in all', () => {
  const { now, advance } = clock();
  for (const spread of ['one username', 'a username per guess'] as const) {
    const throttle = createThrottle(settings(now));
    let checked = 0;
    // One guess every 100 ms from a fresh address for an hour: 36,000 tries.
    for (let i = 0; i < 36_000; i += 1) {
      const address = `10.${i >> 16}.${(i >> 8) & 255}.${i & 255}`;
      const user = spread === 'one username' ? 'kasse' : `user${i}`;
      if (throttle.retryAfter(address) === 0 && throttle.budgetRetryAfter(user, address) === 0) {
        checked += 1;
        throttle.recordFailure(address, user);
      }
      advance(100);
    }
    assert.equal(checked, spread === 'one username' ? 3_000 : 6_000, spread);
  }
});

test("behind one address, a user who logged in from it is not refused for other usernames' failures from it; its own failures are budgeted as an address's", () => {
  const { now, advance } = clock();
  const throttle = createThrottle(settings(now));
  const office = '203.0.113.9';
  for (const user of ['kasse', 'buero']) throttle.recordSuccess(office, user);
  // kasse's client kept the old password; a stranger guesses a username never seen there.
  for (let i = 0; i < 10; i += 1) assert.equal(guess(throttle, 'kasse', office), 0, `kasse's failure ${i}`);
  assert.equal(throttle.reserve('kasse', office), 60, "kasse's own budget is spent");
  assert.equal(throttle.retryAfter(office, 'kasse'), 60);
  assert.equal(throttle.retryAfter(office, 'buero'), 0, 'buero, known there, is not refused');
  assert.equal(throttle.reserve('buero', office), 0, "buero's credentials are checked");
  throttle.forgive(office, 'buero');
  assert.equal(throttle.retryAfter(office, 'neu'), 60, 'a username never let in there waits for the window');
  assert.equal(throttle.retryAfter(office), 60, 'so do requests that name no user');
  assert.equal(throttle.reserve('neu', office), 60);
  assert.equal(throttle.retryAfter('198.51.100.1', 'neu'), 0, 'other addresses are not affected');
  advance(60_000);
  assert.equal(throttle.retryAfter(office, 'kasse'), 0, 'the window ended');
});

test('guesses an hour from one address: 600 against a user who logged in from it, 600 against all other usernames together', () => {
  const { now, advance } = clock();
  const throttle = createThrottle(settings(now));
  const office = '203.0.113.9';
  throttle.recordSuccess(office, 'buero');
  const checked = { buero: 0, others: 0 };
  let fresh = 0;
  // A guess for buero and one for a username never seen, every 100 ms for an hour.
  for (let i = 0; i < 36_000; i += 1) {
    if (throttle.reserve('buero', office) === 0) checked.buero += 1;
    if (throttle.reserve(`user${fresh}`, office) === 0) {
      checked.others += 1;
      fresh += 1;
    }
    advance(100);
  }
  assert.equal(checked.buero, 600);
  assert.ok(checked.others <= 600, `${checked.others} guesses for other usernames`);
});

test('a check in flight counts against the address; forgive takes it back', () => {
  const { now } = clock();
  const throttle = createThrottle(settings(now));
  let started = 0;
  // 40 parallel wrong passwords: each counts when its check starts.
  for (let i = 0; i < 40; i += 1) {
    if (throttle.retryAfter('10.0.0.1') > 0) continue;
    started += 1;
    throttle.recordFailure('10.0.0.1', 'kasse');
  }
  assert.equal(started, 10);
  throttle.forgive('10.0.0.1', 'kasse');
  assert.equal(throttle.retryAfter('10.0.0.1'), 0, 'the right password of the 10th unblocks');
});

test('requests without credentials: beyond 100 within the window they get 429, a login clears the count', () => {
  const { now } = clock();
  const throttle = createThrottle(settings(now));
  for (let i = 0; i < 100; i += 1) assert.equal(throttle.recordUnauthenticated('10.0.0.1'), 0);
  assert.equal(throttle.recordUnauthenticated('10.0.0.1'), 60);
  assert.equal(throttle.retryAfter('10.0.0.1'), 0, 'credentials are still checked');
  assert.equal(throttle.recordUnauthenticated('10.0.0.2'), 0);
  throttle.recordSuccess('10.0.0.1', 'kasse');
  assert.equal(throttle.recordUnauthenticated('10.0.0.1'), 0);
});

test("an office's NAT: a known client's address is never refused for requests without credentials, until its last pair there is forgotten", () => {
  const { now } = clock();
  const throttle = createThrottle(settings(now, { maxKnownClients: 2, maxUnauthenticated: 3 }));
  throttle.recordSuccess('10.0.0.1', 'meier');
  throttle.recordSuccess('10.0.0.1', 'schulz');
  // A colleague there who never logs in, and meier's own first request (challenge-first).
  for (let i = 0; i < 120; i += 1) assert.equal(throttle.recordUnauthenticated('10.0.0.1'), 0, `request ${i}`);
  throttle.recordSuccess('10.0.0.2', 'kasse');
  assert.equal(throttle.isKnown('meier', '10.0.0.1'), false, 'meier forgotten, schulz still known there');
  for (let i = 0; i < 10; i += 1) assert.equal(throttle.recordUnauthenticated('10.0.0.1'), 0);
  throttle.recordSuccess('10.0.0.3', 'lager');
  assert.equal(throttle.isKnown('schulz', '10.0.0.1'), false);
  for (let i = 0; i < 3; i += 1) assert.equal(throttle.recordUnauthenticated('10.0.0.1'), 0);
  assert.equal(throttle.recordUnauthenticated('10.0.0.1'), 60, 'nobody known there now: counted again');
});

test('limits of 0 turn each count off', () => {
  const { now } = clock();
  const throttle = createThrottle(
    settings(now, { maxAuthFailures: 0, maxUserFailures: 0, maxGlobalFailures: 0, maxUnauthenticated: 0 }),
  );
  for (let i = 0; i < 500; i += 1) {
    throttle.recordFailure('a', 'u');
    throttle.recordUnauthenticated('a');
  }
  assert.equal(throttle.retryAfter('a'), 0);
  assert.equal(throttle.budgetRetryAfter('u', 'b'), 0);
  assert.equal(throttle.recordUnauthenticated('a'), 0);
  assert.equal(throttle.size, 0);
});

test("a client's repeated logins keep its pair the most recent known client, and each clears its requests without credentials", () => {
  const { now } = clock();
  // A username holds at most half of the known clients: two here.
  const throttle = createThrottle(settings(now, { maxKnownClients: 4 }));
  throttle.recordSuccess('10.0.0.1', 'kasse');
  throttle.recordSuccess('10.0.0.2', 'kasse');
  throttle.recordSuccess('10.0.0.1', 'kasse');
  throttle.recordSuccess('10.0.0.1', 'kasse');
  // A third pair: the least recent one, 10.0.0.2, is forgotten, not 10.0.0.1.
  throttle.recordSuccess('10.0.0.3', 'kasse');
  for (let i = 0; i < 50; i += 1) throttle.recordFailure(`198.51.100.${i}`, 'kasse');
  assert.equal(throttle.budgetRetryAfter('kasse', '10.0.0.1'), 0);
  assert.equal(throttle.budgetRetryAfter('kasse', '10.0.0.3'), 0);
  assert.equal(throttle.budgetRetryAfter('kasse', '10.0.0.2'), 60);
  // The same login again, after 100 requests without credentials: the count starts afresh.
  for (let i = 0; i < 100; i += 1) throttle.recordUnauthenticated('10.0.0.3');
  throttle.recordSuccess('10.0.0.3', 'kasse');
  assert.equal(throttle.recordUnauthenticated('10.0.0.3'), 0);
});

test("one account logging in from many addresses keeps half of the known clients at most, its own least recent forgotten: the others' stay known", () => {
  const { now } = clock();
  const throttle = createThrottle(settings(now, { maxKnownClients: 10 }));
  throttle.recordSuccess('10.0.0.1', 'meier');
  throttle.recordSuccess('10.0.0.2', 'schulz');
  for (let i = 0; i < 1_100; i += 1) throttle.recordSuccess(`10.62.${i >> 8}.${i & 255}`, 'buero');
  assert.equal(throttle.isKnown('meier', '10.0.0.1'), true);
  assert.equal(throttle.isKnown('schulz', '10.0.0.2'), true);
  const buero = throttle.knownClients().filter((client) => client.user === 'buero');
  assert.deepEqual(
    buero.map((client) => client.address),
    ['10.62.4.71', '10.62.4.72', '10.62.4.73', '10.62.4.74', '10.62.4.75'],
  );
  // Its budget spent, the others are still checked from where they logged in.
  for (let i = 0; i < 100; i += 1) throttle.recordFailure(`198.51.100.${i}`, `guess${i}`);
  assert.equal(throttle.budgetRetryAfter('meier', '10.0.0.1'), 0);
  assert.equal(throttle.budgetRetryAfter('meier', '10.0.0.9'), 60);
});

test('reserve decides and counts in one step: 0 and a failure counted, or the wait of the rule that refuses', () => {
  const { now } = clock();
  const throttle = createThrottle(settings(now, { maxAuthFailures: 2, maxUserFailures: 3 }));
  throttle.recordSuccess('192.0.2.7', 'kasse');
  assert.equal(throttle.reserve('kasse', '10.0.0.1'), 0);
  assert.equal(throttle.reserve('kasse', '10.0.0.1'), 0);
  // Both checks may still accept: blocked until they can have come, not for the window.
  assert.equal(throttle.blockedUntil('address', '10.0.0.1'), 1_000_000 + MAX_HASH_WAIT_MS, 'two pending');
  assert.equal(throttle.reserve('kasse', '10.0.0.1'), MAX_HASH_WAIT_MS / 1000, 'refused until they come');
  throttle.confirm('10.0.0.1', 'kasse');
  assert.equal(throttle.blockedUntil('address', '10.0.0.1'), 1_000_000 + MAX_HASH_WAIT_MS, 'one still pending');
  throttle.confirm('10.0.0.1', 'kasse');
  assert.equal(
    throttle.blockedUntil('address', '10.0.0.1'),
    1_000_000 + 60_000,
    'two confirmed failures block the address until the window ends',
  );
  assert.equal(throttle.reserve('kasse', '10.0.0.1'), 60, 'refused by the address rule');
  assert.equal(guess(throttle, 'kasse', '10.0.0.2'), 0, 'the third failure for kasse');
  assert.equal(throttle.reserve('kasse', '10.0.0.3'), 60, 'refused by the username rule');
  assert.equal(throttle.reserve('kasse', '192.0.2.7'), 0, 'a known client is still checked');
  throttle.forgive('192.0.2.7', 'kasse');
  assert.equal(throttle.isKnown('kasse', '192.0.2.7'), true);
  assert.deepEqual(throttle.knownClients(), [{ user: 'kasse', address: '192.0.2.7' }]);
});

test('each refusal is counted by the rule that refused it', () => {
  const { now } = clock();
  const metrics = new Metrics();
  const throttle = createThrottle(
    settings(now, { maxAuthFailures: 1, maxUserFailures: 2, maxGlobalFailures: 3, maxUnauthenticated: 1 }),
    metrics,
  );
  guess(throttle, 'kasse', '10.0.0.1');
  assert.equal(throttle.retryAfter('10.0.0.1'), 60);
  guess(throttle, 'kasse', '10.0.0.2');
  assert.equal(throttle.budgetRetryAfter('kasse', '10.0.0.3'), 60);
  guess(throttle, 'pruefer', '10.0.0.4');
  assert.equal(throttle.reserve('bank', '10.0.0.5'), 60);
  throttle.recordUnauthenticated('10.0.0.6');
  assert.equal(throttle.recordUnauthenticated('10.0.0.6'), 60);
  throttle.recordSuccess('10.0.0.7', 'bank');
  assert.equal(guess(throttle, 'bank', '10.0.0.7'), 0, 'a known client, past the global budget');
  assert.equal(throttle.reserve('bank', '10.0.0.7'), 60, "refused by the client's own failures");
  assert.deepEqual(Object.fromEntries(REFUSALS.map((reason, i) => [reason, metrics.refusals[i]])), {
    address: 1,
    client: 1,
    user: 1,
    global: 1,
    unauthenticated: 1,
    hash_checks: 0,
    searches: 0,
    unanswered: 0,
  });
});
