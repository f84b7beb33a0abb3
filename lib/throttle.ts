// Throttling of authentication (docs/API.md, Throttling): failures per client address (an
// IPv6 address counts per /64), per username and in all; requests without credentials per
// address; and the (user, address) pairs that logged in, which the two budgets let through,
// and which their address's failures do not stop (one NAT address): their own failures do.
//
// Each count is a window that opens at its first event and lasts `windowMs`; once `limit`
// events fall into it, its key is blocked until the window ends. Windows below their limit
// and blocked ones live in two bounded Maps in insertion order: a full table drops its
// oldest window below the limit (failures from other keys never free a blocked one), a full
// table of blocked keys its oldest block. A window that failures still pending (`reserve`)
// fill blocks only until their checks could have come (MAX_HASH_WAIT_MS).

import { MAX_HASH_WAIT_MS } from './hash-checks.js';
import type { Metrics } from './metrics.js';
import type { LocalThrottle, ThrottleRule, ThrottleSettings } from './throttle-types.js';

export type { LocalThrottle, Throttle, ThrottleRule, ThrottleSettings } from './throttle-types.js';

/**
 * A known client's key, a user at an address: the primary's counts and its workers' replicas
 * (lib/throttle-replica.ts) must key them alike. A username cannot contain a colon (RFC 7617
 * §2), so `user:address` is unambiguous.
 */
export const pair = (user: string, address: string): string => `${user}:${address}`;

/** The throttle over `settings`; each refusal is counted in `metrics` by its rule when given (lib/metrics.ts). */
export function createThrottle(settings: ThrottleSettings, metrics?: Metrics): LocalThrottle {
  const tables = createTables(settings);
  const { address: addresses, client: clients, user: users, global: everyone, unauthenticated } = tables;
  const known = createKnownClients(settings.maxKnownClients);
  const refuse = (rule: ThrottleRule, seconds: number): number => {
    metrics?.countRefusal(rule);
    return seconds;
  };
  /** The username's or the global budget, unless the pair logged in before: the seconds, and which rule. */
  const budget = (user: string, address: string): number => {
    const forUser = users.retryAfter(user);
    const forAll = everyone.retryAfter('');
    if ((forUser === 0 && forAll === 0) || known.has(user, address)) return 0;
    return refuse(forUser > 0 ? 'user' : 'global', Math.max(forUser, forAll));
  };
  /** The address's failures decide, or, for a pair that logged in from there, the pair's own. */
  const addressRetryAfter = (address: string, user: string | undefined): number => {
    const wait = addresses.retryAfter(address);
    // Nothing blocked, as almost always: no key built.
    if ((wait === 0 && !clients.blocking) || user === undefined || !known.has(user, address)) {
      return wait === 0 ? 0 : refuse('address', wait);
    }
    const own = clients.retryAfter(pair(user, address));
    return own === 0 ? 0 : refuse('client', own);
  };
  /** `pendingMs`: how long the failure's check may still take it back (`reserve`); 0: confirmed. */
  function recordFailure(address: string, user: string, pendingMs = 0): void {
    addresses.add(address, pendingMs);
    clients.add(pair(user, address), pendingMs);
    users.add(user, pendingMs);
    everyone.add('', pendingMs);
  }
  /** A failure `reserve` counted, its check come: kept (`keep`) or taken back. */
  function settle(address: string, user: string, keep: boolean): void {
    addresses.settle(address, keep);
    clients.settle(pair(user, address), keep);
    users.settle(user, keep);
    everyone.settle('', keep);
  }

  return {
    retryAfter: addressRetryAfter,
    budgetRetryAfter: budget,
    recordUnauthenticated(address) {
      // Never refused where a known client is (an office's NAT): they bound only other addresses.
      if (known.at(address)) return 0;
      const wait = unauthenticated.retryAfter(address);
      if (wait > 0) return refuse('unauthenticated', wait);
      unauthenticated.add(address);
      return 0;
    },
    reserve(user, address) {
      const blocked = addressRetryAfter(address, user);
      if (blocked > 0) return blocked;
      const wait = budget(user, address);
      if (wait > 0) return wait;
      recordFailure(address, user, MAX_HASH_WAIT_MS);
      return 0;
    },
    recordFailure,
    forgive: (address, user) => settle(address, user, false),
    confirm: (address, user) => settle(address, user, true),
    recordSuccess(address, user) {
      if (unauthenticated.size > 0) unauthenticated.clear(address);
      known.add(user, address);
    },
    blockedUntil: (rule, key) => tables[rule].blockedUntil(key),
    isKnown: known.has,
    knownClients: known.list,
    get size() {
      return addresses.size;
    },
  };
}

/** One table of windows for each rule. */
function createTables(settings: ThrottleSettings): Record<ThrottleRule, Windows> {
  const { authFailureWindowMs: windowMs, maxTrackedAddresses: maxAddresses, now } = settings;
  return {
    address: createWindows(settings.maxAuthFailures, windowMs, maxAddresses, now),
    // Per (user, address), budgeted as an address's: they decide for a pair that logged in there.
    client: createWindows(settings.maxAuthFailures, windowMs, maxAddresses, now),
    user: createWindows(settings.maxUserFailures, windowMs, maxAddresses, now),
    global: createWindows(settings.maxGlobalFailures, windowMs, 1, now),
    unauthenticated: createWindows(settings.maxUnauthenticated, windowMs, maxAddresses, now),
  };
}

export type KnownClients = ReturnType<typeof createKnownClients>;
/**
 * The (user, address) pairs that logged in, at most `max`, the least recent forgotten first (and
 * a worker's copy). A username holds at most half of them, its own least recent forgotten
 * first, as it holds at most half of the connections: one account logging in from a thousand
 * addresses does not push the other users' clients out.
 */
export function createKnownClients(max: number) {
  // Each pair's address; insertion order is recency: a login re-inserts its pair at the end.
  const known = new Map<string, string>();
  // How many pairs each address has (`at`: any), counted as they come and go.
  const perAddress = new Map<string, number>();
  // Each username's pairs, least recent first.
  const perUser = new Map<string, Set<string>>();
  const mostPerUser = Math.max(1, Math.floor(max / 2));
  // The pair last added (kept, as max ≥ 1): a client's next request, as most are, costs two comparisons.
  let recentUser: string | undefined;
  let recentAddress: string | undefined;
  const forget = (key: string | undefined): void => {
    const gone = key === undefined ? undefined : known.get(key);
    if (key === undefined || gone === undefined) return;
    known.delete(key);
    const user = key.slice(0, key.length - gone.length - 1);
    const pairs = perUser.get(user);
    pairs?.delete(key);
    if (pairs?.size === 0) perUser.delete(user);
    const left = (perAddress.get(gone) ?? 1) - 1;
    if (left === 0) perAddress.delete(gone);
    else perAddress.set(gone, left);
  };
  return {
    has: (user: string, address: string): boolean =>
      (user === recentUser && address === recentAddress) || known.has(pair(user, address)),
    at: (address: string): boolean => perAddress.has(address),
    add(user: string, address: string): void {
      if (user === recentUser && address === recentAddress) return;
      recentUser = user;
      recentAddress = address;
      const key = pair(user, address);
      const pairs = perUser.get(user) ?? new Set<string>();
      perUser.set(user, pairs);
      if (known.delete(key)) pairs.delete(key);
      else perAddress.set(address, (perAddress.get(address) ?? 0) + 1);
      known.set(key, address);
      pairs.add(key);
      if (pairs.size > mostPerUser) forget(pairs.values().next().value);
      else if (known.size > max) forget(known.keys().next().value);
    },
    list: () => [...known].map(([key, address]) => ({ user: key.slice(0, key.length - address.length - 1), address })),
  };
}

interface Window {
  startedAt: number;
  count: number;
  /** When each event still pending (`add`'s `pendingMs`) is settled at the latest, earliest first. */
  pending: number[];
}

interface Windows {
  retryAfter(key: string): number;
  blockedUntil(key: string): number;
  /** Counts an event; `pendingMs`: one that may still be taken back within that time. */
  add(key: string, pendingMs?: number): void;
  /** The earliest event pending is settled: kept (`keep`), or taken back. */
  settle(key: string, keep: boolean): void;
  clear(key: string): void;
  readonly size: number;
  /** Whether any key is blocked now (or was, its window since ended). */
  readonly blocking: boolean;
}

function createWindows(limit: number, windowMs: number, bound: number, now: () => number): Windows {
  const counting = new Map<string, Window>();
  const blocked = new Map<string, Window>();

  function put(table: Map<string, Window>, key: string, window: Window): void {
    table.set(key, window);
    if (table.size <= bound) return;
    const oldest = table.keys().next();
    if (oldest.done !== true) table.delete(oldest.value);
  }

  function current(key: string, time: number): Window | undefined {
    const window = blocked.get(key) ?? counting.get(key);
    if (window !== undefined && time - window.startedAt < windowMs) return window;
    blocked.delete(key);
    counting.delete(key);
    return undefined;
  }

  function blockedUntil(key: string, time: number): number {
    const window = blocked.get(key);
    if (limit === 0 || window === undefined) return 0;
    const end = until(window, limit, windowMs, time);
    return end > time ? end : 0;
  }

  return {
    retryAfter(key) {
      // Nothing blocked, as almost always: no lookup.
      if (limit === 0 || blocked.size === 0) return 0;
      const time = now();
      const end = blockedUntil(key, time);
      if (end > 0) return Math.ceil((end - time) / 1000);
      blocked.delete(key);
      return 0;
    },
    blockedUntil: (key) => blockedUntil(key, now()),
    add(key, pendingMs = 0) {
      if (limit === 0) return;
      const time = now();
      const window = current(key, time) ?? { startedAt: time, count: 0, pending: [] };
      if (pendingMs > 0) window.pending.push(time + pendingMs);
      window.count += 1;
      if (window.count === 1) put(window.count >= limit ? blocked : counting, key, window);
      else if (window.count >= limit && counting.delete(key)) put(blocked, key, window);
    },
    settle(key, keep) {
      if (limit === 0) return;
      const window = current(key, now());
      if (window === undefined) return;
      window.pending.shift();
      if (keep) return;
      window.count -= 1;
      if (window.count <= 0) {
        blocked.delete(key);
        counting.delete(key);
      } else if (window.count < limit && blocked.delete(key)) put(counting, key, window);
    },
    clear(key) {
      blocked.delete(key);
      counting.delete(key);
    },
    get size() {
      return counting.size + blocked.size;
    },
    get blocking() {
      return limit > 0 && blocked.size > 0;
    },
  };
}

/** When `window` stops blocking: its end, or, while pending events are needed to fill it, the last one's bound. */
function until(window: Window, limit: number, windowMs: number, time: number): number {
  const end = window.startedAt + windowMs;
  const pending = window.pending;
  while ((pending[0] ?? Number.POSITIVE_INFINITY) <= time) pending.shift();
  const last = pending.at(-1);
  return last === undefined || window.count - pending.length >= limit ? end : Math.min(end, last);
}
