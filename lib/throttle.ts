// Throttling of authentication (docs/API.md, Throttling): failures per client address (an
// IPv6 address counts per /64), per username and in all; requests without credentials per
// address; and the (user, address) pairs that logged in, which the two budgets let through.
//
// Each count is a window that opens at its first event and lasts `windowMs`; once `limit`
// events fall into it, its key is blocked until the window ends. Windows below their limit
// and blocked ones live in two bounded Maps in insertion order: a full table drops its
// oldest window below the limit, so that failures from other keys can never free a
// blocked one; only a full table of blocked keys drops its oldest block.

/** The throttle's options, under createHandler's names (lib/types.ts says what each means). */
export interface ThrottleSettings {
  /** Failures per address (or IPv6 /64) within a window; 0: off. */
  maxAuthFailures: number;
  /** Failures per username within a window before only known clients are checked; 0: off. */
  maxUserFailures: number;
  /** Failures in all within a window before only known clients are checked; 0: off. */
  maxGlobalFailures: number;
  /** Requests without credentials per address within a window, not followed by a login; 0: off. */
  maxUnauthenticated: number;
  authFailureWindowMs: number;
  /** Addresses (and, separately, usernames) remembered at most, in each of the two tables. */
  maxTrackedAddresses: number;
  /** (user, address) pairs that logged in, remembered at most; the least recent is forgotten. */
  maxKnownClients: number;
  now: () => number;
}

export interface Throttle {
  /** Seconds until `address` may present credentials again (≥ 1), or 0 when it may. */
  retryAfter(address: string): number;
  /**
   * Seconds until credentials for `user` from `address` are checked, when the username's
   * or the global budget is spent and the pair has not logged in before; otherwise 0.
   */
  budgetRetryAfter(user: string, address: string): number;
  /** Counts a request without credentials; seconds until the next is answered 401, or 0. */
  recordUnauthenticated(address: string): number;
  /** Counts a failed authentication, also one whose check has only begun. */
  recordFailure(address: string, user: string): void;
  /** Takes back a `recordFailure` whose check accepted the credentials or never ran. */
  forgive(address: string, user: string): void;
  /** `user` logged in from `address`: a known client from now on. */
  recordSuccess(address: string, user: string): void;
  /** Addresses currently remembered (for tests and monitoring). */
  readonly size: number;
}

export function createThrottle(settings: ThrottleSettings): Throttle {
  const { authFailureWindowMs: windowMs, maxTrackedAddresses: maxAddresses, now } = settings;
  const addresses = createWindows(settings.maxAuthFailures, windowMs, maxAddresses, now);
  const users = createWindows(settings.maxUserFailures, windowMs, maxAddresses, now);
  const everyone = createWindows(settings.maxGlobalFailures, windowMs, 1, now);
  const unauthenticated = createWindows(settings.maxUnauthenticated, windowMs, maxAddresses, now);
  // Insertion order is recency: a login re-inserts its pair at the end.
  const known = new Set<string>();
  // A username cannot contain a colon (RFC 7617 §2), so `user:address` is unambiguous.
  const pair = (user: string, address: string): string => `${user}:${address}`;
  // The pair at the end of `known`: a client's next login, as most are, is already the most
  // recent, and costs two comparisons instead of a new key and a delete and an add.
  let recentUser: string | undefined;
  let recentAddress: string | undefined;

  return {
    retryAfter: (address) => addresses.retryAfter(address),

    budgetRetryAfter(user, address) {
      const wait = Math.max(users.retryAfter(user), everyone.retryAfter(''));
      return wait > 0 && known.has(pair(user, address)) ? 0 : wait;
    },

    recordUnauthenticated(address) {
      const wait = unauthenticated.retryAfter(address);
      if (wait === 0) unauthenticated.add(address);
      return wait;
    },

    recordFailure(address, user) {
      addresses.add(address);
      users.add(user);
      everyone.add('');
    },

    forgive(address, user) {
      addresses.remove(address);
      users.remove(user);
      everyone.remove('');
    },

    recordSuccess(address, user) {
      if (unauthenticated.size > 0) unauthenticated.clear(address);
      if (user === recentUser && address === recentAddress) return;
      recentUser = user;
      recentAddress = address;
      const key = pair(user, address);
      known.delete(key);
      known.add(key);
      if (known.size > settings.maxKnownClients) {
        const oldest = known.values().next();
        if (oldest.done !== true) known.delete(oldest.value);
      }
    },

    get size() {
      return addresses.size;
    },
  };
}

interface Window {
  startedAt: number;
  count: number;
}

interface Windows {
  retryAfter(key: string): number;
  add(key: string): void;
  remove(key: string): void;
  clear(key: string): void;
  readonly size: number;
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

  return {
    retryAfter(key) {
      // Nothing blocked, as almost always: no lookup.
      if (limit === 0 || blocked.size === 0) return 0;
      const window = blocked.get(key);
      if (window === undefined) return 0;
      const remainingMs = window.startedAt + windowMs - now();
      if (remainingMs > 0) return Math.ceil(remainingMs / 1000);
      blocked.delete(key);
      return 0;
    },

    add(key) {
      if (limit === 0) return;
      const time = now();
      const window = current(key, time);
      if (window === undefined) {
        const fresh = { startedAt: time, count: 1 };
        put(fresh.count >= limit ? blocked : counting, key, fresh);
        return;
      }
      window.count += 1;
      if (window.count >= limit && counting.delete(key)) put(blocked, key, window);
    },

    remove(key) {
      if (limit === 0) return;
      const window = current(key, now());
      if (window === undefined) return;
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
  };
}
