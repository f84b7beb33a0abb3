// The login's policy without HTTP (docs/API.md, Authentication and Throttling): the throttle
// before the credentials, requests without credentials never counted as failures, a pending
// hash check counted as a failure while it runs and forgiven when it accepts (or never
// ran), the budgets letting known clients through.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ChannelError } from '../../bin/base/channel.js';
import { type Authenticator, BUSY, createAuthenticator, PENDING, REJECTED, type Settled } from '../../lib/auth.js';
import type { GivenCredentials } from '../../lib/basic-auth.js';
import { validateCredentials } from '../../lib/credentials.js';
import { MAX_HASH_WAIT_MS } from '../../lib/hash-checks.js';
import { createLogin, type LoginVerdict, refusal } from '../../lib/login.js';
import { ERRORS } from '../../lib/messages.js';
import { DEFAULTS } from '../../lib/options.js';
import { createThrottle, type LocalThrottle, type Throttle, type ThrottleSettings } from '../../lib/throttle.js';
import { createThrottleReplica } from '../../lib/throttle-replica.js';
import { accepted } from '../support/helpers.js';

const basic = (text: string): string => `Basic ${Buffer.from(text, 'utf8').toString('base64')}`;
const HERE = { destroyed: false };
/** 401; `attempted`: the username that well-formed credentials named. */
const refused = (attempted?: string) =>
  attempted === undefined ? { kind: 'refused' } : { kind: 'refused', attempted };
const REFUSED = refused();
/** The Retry-After while failures whose checks may still accept spend a budget. */
const PENDING_WAIT = MAX_HASH_WAIT_MS / 1000;
const throttled = (retryAfter: number, attempted?: string) =>
  attempted === undefined ? { kind: 'throttled', retryAfter } : { kind: 'throttled', retryAfter, attempted };

/** The library's defaults on a clock that stands still, with `overrides`. */
function throttleFor(overrides: Partial<ThrottleSettings> = {}) {
  return createThrottle({
    ...DEFAULTS,
    now: () => 1_000_000,
    ...overrides,
  });
}

/** The login over one plain user `kasse:richtig`, answered at once. */
function plainLogin(overrides: Partial<ThrottleSettings> = {}) {
  const authenticator = createAuthenticator(validateCredentials([{ username: 'kasse', password: 'richtig' }]), {
    maxHashChecks: 1,
    maxQueuedHashChecks: 8,
    maxVerifiedCredentials: 100,
  });
  const login = createLogin(authenticator, throttleFor(overrides));
  return (header: string | undefined, client = '192.0.2.1'): LoginVerdict => {
    const verdict = login(header, client, HERE);
    assert.ok(!(verdict instanceof Promise), 'a plain password is answered at once');
    return verdict;
  };
}

/**
 * An authenticator whose every check is a hash check, answered when the test says so; as the
 * real one, the same credentials while they are checked join that check.
 */
function heldChecks() {
  const checks: Array<{ given: GivenCredentials; done: (verdict: Settled) => void; gone: () => boolean }> = [];
  const open = new Map<string, Array<{ done: (verdict: Settled) => void; gone: () => boolean }>>();
  const key = ({ username, password }: GivenCredentials): string => `${username}:${password}`;
  const authenticator: Authenticator = {
    check: () => PENDING,
    verify(given, done, gone = () => false) {
      const waiters = open.get(key(given));
      if (waiters !== undefined) return void waiters.push({ done, gone });
      const joined = [{ done, gone }];
      open.set(key(given), joined);
      checks.push({
        given,
        done(verdict) {
          open.delete(key(given));
          for (const waiter of joined) waiter.done(verdict);
        },
        gone: () => joined.every((waiter) => waiter.gone()),
      });
    },
    key,
    checking: (credentials) => open.has(credentials),
    headers: new Map(),
    isUser: () => true,
    replaceUsers: () => {},
  };
  return { authenticator, checks };
}

/** `throttle` as the workers of the CLI see the primary's: `reserve` answers on a later turn, and is counted. */
function remote(throttle: LocalThrottle) {
  const asked = { reserve: 0 };
  const replica: Throttle = {
    retryAfter: (address) => throttle.retryAfter(address),
    budgetRetryAfter: (user, address) => throttle.budgetRetryAfter(user, address),
    recordUnauthenticated: (address) => throttle.recordUnauthenticated(address),
    reserve(user, address) {
      asked.reserve += 1;
      return new Promise((resolve) => setImmediate(() => resolve(throttle.reserve(user, address))));
    },
    forgive: (address, user) => throttle.forgive(address, user),
    confirm: (address, user) => throttle.confirm(address, user),
    recordSuccess: (address, user) => throttle.recordSuccess(address, user),
    isKnown: (user, address) => throttle.isKnown(user, address),
  };
  return { replica, asked };
}

test('the right credentials give the user; wrong ones, none and another scheme give the same refusal', () => {
  const login = plainLogin();
  assert.deepEqual(login(basic('kasse:richtig')), accepted('kasse'));
  assert.deepEqual(login(basic('kasse:falsch')), refused('kasse'));
  assert.deepEqual(login(basic('niemand:richtig')), refused('niemand'));
  assert.deepEqual(login(undefined), REFUSED);
  assert.deepEqual(login('Bearer abc'), REFUSED);
});

test('wrong credentials count: the 10th blocks the address before its credentials are looked at, the right ones too', () => {
  const login = plainLogin();
  for (let i = 0; i < 10; i += 1) assert.deepEqual(login(basic('kasse:falsch')), refused('kasse'));
  assert.deepEqual(login(basic('kasse:richtig')), throttled(60));
  assert.deepEqual(login(basic('kasse:richtig'), '192.0.2.2'), accepted('kasse'), 'another address is not affected');
});

test("requests without credentials never count as failures; beyond 100 they are throttled, a login clears them, and from a known client's address never", () => {
  const login = plainLogin();
  for (let i = 0; i < 100; i += 1) assert.deepEqual(login('Bearer abc'), REFUSED);
  assert.deepEqual(login(undefined), throttled(60));
  assert.deepEqual(login(basic('kasse:richtig')), accepted('kasse'), 'no failure was counted, credentials are checked');
  // A known client is at the address now: neither it nor its neighbours are throttled for them.
  for (let i = 0; i < 200; i += 1) assert.deepEqual(login(undefined), REFUSED);
});

test('a header accepted before is the user at once, and the budgets still hold for it on a new address', () => {
  const login = plainLogin({ maxUserFailures: 3 });
  const right = basic('kasse:richtig');
  assert.deepEqual(login(right, '192.0.2.1'), accepted('kasse'));
  for (let i = 0; i < 3; i += 1) assert.deepEqual(login(basic('kasse:falsch'), `198.51.100.${i}`), refused('kasse'));
  assert.deepEqual(login(right, '192.0.2.1'), accepted('kasse'), 'the known client gets in');
  assert.deepEqual(login(right, '203.0.113.9'), throttled(60, 'kasse'), 'a new address waits for the window');
});

test('--workers with the primary not answering: the right header of a client unknown at its address is refused as a wrong one (429, Retry-After 1); a known client gets in', async () => {
  const authenticator = createAuthenticator(validateCredentials([{ username: 'kasse', password: 'richtig' }]), {
    maxHashChecks: 1,
    maxQueuedHashChecks: 8,
    maxVerifiedCredentials: 100,
  });
  // The worker's replica over a link whose primary decides, then stops answering (as after RESERVE_TIMEOUT_MS).
  let answering = true;
  const link = {
    notify: () => true,
    handle: () => {},
    request: <T>() =>
      (answering
        ? Promise.resolve({ retryAfter: 0, rule: null })
        : Promise.reject(new ChannelError('no answer to throttle.reserve', 'CHANNEL_TIMEOUT'))) as Promise<T>,
  };
  const replica = createThrottleReplica({ link, unanswered: () => {} }, { ...DEFAULTS, now: Date.now });
  const login = createLogin(authenticator, replica);
  const own = basic('kasse:richtig');
  const spelled = `basic  ${Buffer.from('kasse:richtig').toString('base64')}`;
  assert.deepEqual(await login(own, '192.0.2.1', HERE), accepted('kasse'));
  assert.deepEqual(await login(spelled, '192.0.2.1', HERE), accepted('kasse'), 'now remembered by its spelling');
  answering = false;
  const wrong = await login(basic('kasse:falsch'), '203.0.113.9', HERE);
  assert.deepEqual(wrong, throttled(1, 'kasse'));
  for (const header of [own, spelled]) {
    assert.deepEqual(await login(header, '203.0.113.9', HERE), wrong, `${header} from a new address`);
    assert.deepEqual(login(header, '192.0.2.1', HERE), accepted('kasse'), `${header} from the known client, at once`);
  }
});

test('--workers with the primary not answering: parallel requests with the same credentials wait for one reservation, not one after another', async () => {
  const authenticator = createAuthenticator(validateCredentials([{ username: 'kasse', password: 'richtig' }]), {
    maxHashChecks: 1,
    maxQueuedHashChecks: 8,
    maxVerifiedCredentials: 100,
  });
  // Each reservation waits until the test says the primary did not answer it (RESERVE_TIMEOUT_MS).
  const unanswered: Array<(error: Error) => void> = [];
  const link = {
    notify: () => true,
    handle: () => {},
    request: <T>() => new Promise<T>((_, reject) => unanswered.push(reject)),
  };
  const login = createLogin(
    authenticator,
    createThrottleReplica({ link, unanswered: () => {} }, { ...DEFAULTS, now: Date.now }),
  );
  // From one address, and from several: none waits for a reservation of its own after another's.
  const parallel = Array.from({ length: 6 }, (_, i) => login(basic('kasse:richtig'), `203.0.113.${9 + (i % 3)}`, HERE));
  assert.equal(unanswered.length, 1, 'one reservation for the six');
  unanswered.shift()?.(new ChannelError('no answer to throttle.reserve', 'CHANNEL_TIMEOUT'));
  for (let turn = 0; turn < 5; turn += 1) await new Promise((resolve) => setImmediate(resolve));
  assert.equal(unanswered.length, 0, 'none waits for a reservation of its own after it');
  assert.deepEqual(
    await Promise.all(parallel),
    Array.from({ length: 6 }, () => throttled(1, 'kasse')),
  );
});

test('a header recalled from an address where its user is not known spends no budget: its failure is taken back at once', () => {
  const login = plainLogin({ maxUserFailures: 1, maxGlobalFailures: 1 });
  for (let i = 0; i < 5; i += 1) assert.deepEqual(login(basic('kasse:richtig'), `198.51.100.${i}`), accepted('kasse'));
  assert.deepEqual(login(basic('kasse:falsch'), '203.0.113.9'), refused('kasse'), 'the budget was whole');
  assert.deepEqual(login(basic('kasse:richtig'), '203.0.113.10'), throttled(60, 'kasse'), 'and is spent now');
});

test('a username whose budget is spent: an unknown client is throttled without a check, a known one is checked', () => {
  const { authenticator, checks } = heldChecks();
  const login = createLogin(authenticator, throttleFor({ maxUserFailures: 2 }));
  const known = login(basic('kasse:richtig'), '192.0.2.1', HERE);
  checks.shift()?.done(accepted('kasse'));
  assert.ok(known instanceof Promise);
  for (let i = 0; i < 2; i += 1) {
    void login(basic('kasse:falsch'), `198.51.100.${i}`, HERE);
    checks.shift()?.done(REJECTED);
  }
  assert.deepEqual(login(basic('kasse:falsch'), '203.0.113.9', HERE), throttled(60, 'kasse'));
  assert.equal(checks.length, 0, 'no hash check for the unknown client');
  // Another spelling of its credentials, which is not recalled (its first was, once accepted).
  void login(`basic  ${Buffer.from('kasse:richtig').toString('base64')}`, '192.0.2.1', HERE);
  assert.equal(checks.length, 1, 'the known client is checked');
  checks.shift()?.done(accepted('kasse'));
});

test('a pending hash check counts as a failure while it runs: parallel guesses beyond the limit are throttled unchecked', async () => {
  const { authenticator, checks } = heldChecks();
  const login = createLogin(authenticator, throttleFor());
  const verdicts = Array.from({ length: 40 }, (_, i) => login(basic(`kasse:falsch${i}`), '192.0.2.1', HERE));
  assert.equal(checks.length, 10, 'only maxAuthFailures checks start');
  assert.equal(verdicts.filter((verdict) => verdict instanceof Promise).length, 10);
  // Ten checks that may still accept spend the budget: until they can have come, not the window.
  assert.deepEqual(verdicts[10], throttled(PENDING_WAIT));
  for (const check of checks) check.done(REJECTED);
  await Promise.all(verdicts);
  assert.deepEqual(login(basic('kasse:falsch40'), '192.0.2.1', HERE), throttled(60), 'ten confirmed: the window');
});

test('success forgives the failure its pending check counted; a rejection keeps it', async () => {
  const { authenticator, checks } = heldChecks();
  const login = createLogin(authenticator, throttleFor());
  const pending = Array.from({ length: 10 }, (_, i) => login(basic(`kasse:?${i}`), '192.0.2.1', HERE));
  assert.deepEqual(login(basic('kasse:?10'), '192.0.2.1', HERE), throttled(PENDING_WAIT), 'ten checks in flight block');
  // Nine wrong, one right: the right one gives its failure back, the address has one left.
  for (let i = 0; i < 9; i += 1) checks[i]?.done(REJECTED);
  checks[9]?.done(accepted('kasse'));
  const settled = await Promise.all(pending);
  assert.deepEqual(settled.slice(0, 9), Array(9).fill(refused('kasse')));
  assert.deepEqual(settled[9], accepted('kasse'));
  const eleventh = login(basic('kasse:?11'), '192.0.2.1', HERE);
  assert.ok(eleventh instanceof Promise, 'one more is checked');
  assert.deepEqual(login(basic('kasse:?12'), '192.0.2.1', HERE), throttled(PENDING_WAIT), 'while it may accept');
  checks[10]?.done(REJECTED);
  await eleventh;
  assert.deepEqual(login(basic('kasse:?12'), '192.0.2.1', HERE), throttled(60), 'ten confirmed');
});

test('parallel requests with the same credentials join one check and count one failure: the right ones all get in, wrong ones are refused once', async () => {
  const { authenticator, checks } = heldChecks();
  const login = createLogin(authenticator, throttleFor({ maxAuthFailures: 3 }));
  // A client's first requests in parallel: one check, and no 429 for the eleventh (they got 429 from the fourth here).
  const right = Array.from({ length: 16 }, () => login(basic('kasse:richtig'), '192.0.2.1', HERE));
  assert.equal(checks.length, 1, 'one hash check for all of them');
  checks.shift()?.done(accepted('kasse'));
  assert.deepEqual(await Promise.all(right), Array(16).fill(accepted('kasse')));
  // A flood of one wrong password: refused, and one failure of three.
  const wrong = Array.from({ length: 16 }, () => login(basic('kasse:falsch'), '192.0.2.1', HERE));
  assert.equal(checks.length, 1);
  checks.shift()?.done(REJECTED);
  assert.deepEqual(await Promise.all(wrong), Array(16).fill(refused('kasse')));
  const second = login(basic('kasse:anders'), '192.0.2.1', HERE);
  checks.shift()?.done(REJECTED);
  assert.deepEqual(await second, refused('kasse'), 'the second failure');
  const third = login(basic('kasse:drittes'), '192.0.2.1', HERE);
  checks.shift()?.done(REJECTED);
  assert.deepEqual(await third, refused('kasse'), 'the third failure blocks');
  assert.deepEqual(login(basic('kasse:richtig'), '192.0.2.1', HERE), throttled(60));
});

test('a request that joins a check counts no failure, takes none back, and still meets the budgets of its own address', async () => {
  const { authenticator, checks } = heldChecks();
  const guarded = createLogin(authenticator, throttleFor({ maxUserFailures: 1 }));
  // The first reservation spends the username's budget: an unknown address is not let in to join.
  const first = guarded(basic('kasse:falsch'), '192.0.2.1', HERE);
  assert.deepEqual(guarded(basic('kasse:falsch'), '192.0.2.2', HERE), throttled(PENDING_WAIT, 'kasse'));
  checks.shift()?.done(REJECTED);
  assert.deepEqual(await first, refused('kasse'));
  // A joiner of a right check takes back nothing: one failure of three stays for 192.0.2.1.
  const throttle = throttleFor({ maxAuthFailures: 3 });
  const login = createLogin(authenticator, throttle);
  throttle.recordFailure('192.0.2.1', 'kasse');
  const owner = login(basic('kasse:richtig'), '192.0.2.1', HERE);
  const joiner = login(basic('kasse:richtig'), '192.0.2.1', HERE);
  checks.shift()?.done(accepted('kasse'));
  assert.deepEqual([await owner, await joiner], [accepted('kasse'), accepted('kasse')]);
  for (const password of ['nochmal', 'wieder']) {
    assert.equal(throttle.blockedUntil('address', '192.0.2.1'), 0);
    const guess = login(basic(`kasse:${password}`), '192.0.2.1', HERE);
    checks.shift()?.done(REJECTED);
    assert.deepEqual(await guess, refused('kasse'));
  }
  assert.ok(throttle.blockedUntil('address', '192.0.2.1') > 0, 'three failures: the address is blocked');
});

test('--workers: requests with the same credentials while the primary reserves their failure ask it once and share the check', async () => {
  const { authenticator, checks } = heldChecks();
  const { replica, asked } = remote(throttleFor({ maxAuthFailures: 3 }));
  const login = createLogin(authenticator, replica);
  const right = Array.from({ length: 16 }, () => login(basic('kasse:richtig'), '192.0.2.1', HERE));
  assert.equal(asked.reserve, 1, 'one reservation');
  while (checks.length === 0) await new Promise((resolve) => setImmediate(resolve));
  checks.shift()?.done(accepted('kasse'));
  assert.deepEqual(await Promise.all(right), Array(16).fill(accepted('kasse')));
  assert.equal(checks.length, 0, 'one hash check');
  const wrong = Array.from({ length: 16 }, () => login(basic('kasse:falsch'), '192.0.2.1', HERE));
  while (checks.length === 0) await new Promise((resolve) => setImmediate(resolve));
  checks.shift()?.done(REJECTED);
  assert.deepEqual(await Promise.all(wrong), Array(16).fill(refused('kasse')));
  assert.equal(asked.reserve, 2, 'one failure reserved for sixteen requests');
});

test('--workers: a plain password answered at once is passed on to the requests that waited for its reservation', async () => {
  const authenticator = createAuthenticator(validateCredentials([{ username: 'kasse', password: 'richtig' }]), {
    maxHashChecks: 1,
    maxQueuedHashChecks: 8,
    maxVerifiedCredentials: 100,
  });
  const { replica, asked } = remote(throttleFor({ maxAuthFailures: 3 }));
  const login = createLogin(authenticator, replica);
  const spell = (i: number) => `Basic ${Buffer.from('kasse:richtig').toString('base64')}${'='.repeat(i % 3)}`;
  const right = Array.from({ length: 16 }, (_, i) => login(spell(i), '192.0.2.1', HERE));
  assert.deepEqual(await Promise.all(right), Array(16).fill(accepted('kasse')));
  assert.equal(asked.reserve, 1);
  const wrong = Array.from({ length: 16 }, () => login(basic('kasse:falsch'), '192.0.2.1', HERE));
  assert.deepEqual(await Promise.all(wrong), Array(16).fill(refused('kasse')));
  assert.equal(asked.reserve, 2);
  // One failure of three counted: two more wrong ones are refused, then the address is blocked.
  assert.deepEqual(await login(basic('kasse:zwei'), '192.0.2.1', HERE), refused('kasse'));
  assert.deepEqual(await login(basic('kasse:drei'), '192.0.2.1', HERE), refused('kasse'));
  assert.deepEqual(await login(basic('kasse:vier'), '192.0.2.1', HERE), throttled(60));
});

test('--workers: when the reservation of one request is refused, those that waited for it make their own', async () => {
  const { authenticator, checks } = heldChecks();
  const throttle = throttleFor({ maxUserFailures: 1 });
  const { replica, asked } = remote(throttle);
  const login = createLogin(authenticator, replica);
  // 192.0.2.1 logged in before; the username's budget is spent by a guess from elsewhere.
  throttle.recordSuccess('192.0.2.1', 'kasse');
  throttle.recordFailure('198.51.100.1', 'kasse');
  // Not refused at once: the replica does not know yet that the budget is spent.
  const stranger = login(basic('kasse:richtig'), '203.0.113.9', HERE);
  const known = login(basic('kasse:richtig'), '192.0.2.1', HERE);
  assert.deepEqual(await stranger, throttled(60, 'kasse'));
  while (checks.length === 0) await new Promise((resolve) => setImmediate(resolve));
  checks.shift()?.done(accepted('kasse'));
  assert.deepEqual(await known, accepted('kasse'), 'the known client is checked on its own reservation');
  assert.equal(asked.reserve, 2);
});

test('a full queue of hash checks answers busy for a second, and the check that never ran is forgiven', async () => {
  const { authenticator, checks } = heldChecks();
  const login = createLogin(authenticator, throttleFor({ maxAuthFailures: 1 }));
  const verdict = login(basic('kasse:richtig'), '192.0.2.1', HERE);
  checks[0]?.done(BUSY);
  assert.deepEqual(await verdict, { kind: 'busy', retryAfter: 1, attempted: 'kasse' });
  assert.ok(login(basic('kasse:richtig'), '192.0.2.1', HERE) instanceof Promise, 'the address was not used up');
  checks[1]?.done(accepted('kasse'));
});

test('the hash check learns from the connection whether its client has gone', () => {
  const { authenticator, checks } = heldChecks();
  const login = createLogin(authenticator, throttleFor());
  const connection = { destroyed: false };
  void login(basic('kasse:richtig'), '192.0.2.1', connection);
  assert.equal(checks[0]?.gone(), false);
  connection.destroyed = true;
  assert.equal(checks[0]?.gone(), true);
  checks[0]?.done(REJECTED);
});

test('a hash check that has not come a little before the connection would time out is answered 503 and given up', async () => {
  const { authenticator, checks } = heldChecks();
  const login = createLogin(authenticator, throttleFor());
  const started = performance.now();
  const verdict = await login(basic('kasse:richtig'), '192.0.2.1', { destroyed: false, timeout: 200 });
  const waited = performance.now() - started;
  assert.deepEqual(verdict, { kind: 'late', retryAfter: 1, attempted: 'kasse' });
  // A tenth of the idle timeout (at most a second) before it: 180 ms.
  assert.ok(waited >= 170, `answered after ${waited.toFixed(0)} ms`);
  assert.equal(checks[0]?.gone(), true, 'nobody waits for the check any more');
  checks[0]?.done(accepted('kasse'));
});

test('a CORS preflight is never a failed login but counts with the requests without credentials; a login clears them', () => {
  const authenticator = createAuthenticator(validateCredentials([{ username: 'kasse', password: 'richtig' }]), {
    maxHashChecks: 1,
    maxQueuedHashChecks: 8,
    maxVerifiedCredentials: 100,
  });
  const login = createLogin(authenticator, throttleFor({ maxAuthFailures: 1 }));
  for (let i = 0; i < 100; i += 1) assert.equal(login.preflight('192.0.2.1'), undefined);
  assert.deepEqual(login.preflight('192.0.2.1'), throttled(60));
  assert.deepEqual(login(undefined, '192.0.2.1', HERE), throttled(60), 'so is a request without credentials');
  assert.deepEqual(login(basic('kasse:richtig'), '192.0.2.1', HERE), accepted('kasse'), 'no failure was counted');
  assert.equal(login.preflight('192.0.2.1'), undefined);
});

test('each refusal is answered with its error: 401 with the challenge, 429 and 503 with Retry-After, the throttle closing', () => {
  const challenge = ['WWW-Authenticate', 'Basic realm="x"'];
  assert.deepEqual(refusal({ kind: 'refused', attempted: 'kasse' }, challenge), [ERRORS.unauthorized, challenge]);
  assert.deepEqual(refusal({ kind: 'busy', retryAfter: 1 }, challenge), [ERRORS.busy, ['Retry-After', '1']]);
  assert.deepEqual(refusal({ kind: 'late', retryAfter: 1 }, challenge), [ERRORS.busyTimeout, ['Retry-After', '1']]);
  assert.deepEqual(refusal({ kind: 'throttled', retryAfter: 42 }, challenge), [
    ERRORS.loginThrottled,
    ['Retry-After', '42'],
  ]);
  assert.equal(ERRORS.loginThrottled.closes, true);
});

test("a plain user's own header and a header accepted before are let in by their spelling alone, without a check, where the user is known; a rejected one never; none after new users", () => {
  const real = createAuthenticator(validateCredentials([{ username: 'bank', password: 'eins' }]), {
    maxHashChecks: 1,
    maxQueuedHashChecks: 8,
    maxVerifiedCredentials: 100,
  });
  let checks = 0;
  const authenticator: Authenticator = {
    ...real,
    check(given) {
      checks += 1;
      return real.check(given);
    },
  };
  const login = createLogin(authenticator, throttleFor());
  const at = (header: string): LoginVerdict => {
    const verdict = login(header, '192.0.2.1', HERE);
    assert.ok(!(verdict instanceof Promise));
    return verdict;
  };
  const right = basic('bank:eins');
  assert.deepEqual(at(basic('bank:zwei')), refused('bank'));
  assert.deepEqual(at(basic('bank:zwei')), refused('bank'));
  assert.equal(checks, 2, 'rejected credentials are never remembered');
  assert.deepEqual(at(right), accepted('bank'));
  assert.deepEqual(at(right), accepted('bank'));
  assert.equal(checks, 3, "the user's own header is checked only where the user is not known yet");
  const others = [
    `basic ${Buffer.from('bank:eins').toString('base64')}`,
    `Basic   ${Buffer.from('bank:eins').toString('base64')}`,
    `${right} `,
  ];
  for (const other of others) {
    assert.deepEqual(at(other), accepted('bank'), other);
    assert.deepEqual(at(other), accepted('bank'), other);
  }
  assert.equal(checks, 3 + others.length, 'each other spelling is checked once, then recalled');
  login.replaceUsers(validateCredentials([{ username: 'bank', password: 'neu' }]));
  assert.deepEqual(at(right), refused('bank'), "the user's old header outlived its credentials");
  assert.deepEqual(at(others[0] as string), refused('bank'), 'a remembered header outlived its credentials');
  assert.deepEqual(at(basic('bank:neu')), accepted('bank'));
  assert.equal(checks, 3 + others.length + 2, 'only the new header needs no check');
});
