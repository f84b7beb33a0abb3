// The words of the login throttle (lib/throttle.ts): its settings, its rules, and what a login
// asks of it (lib/login.ts), in this process or in the primary's (lib/throttle-authority.ts).

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

/** Which budget of the login throttle refused a request; `client`: a pair that logged in, its own failures spent. */
export type ThrottleRule = 'address' | 'client' | 'user' | 'global' | 'unauthenticated';

/**
 * What a login asks of a throttle (lib/login.ts), in the contract's order. One throttle may
 * serve several handlers (the books of a service), and its counts may live in another
 * process (lib/throttle-authority.ts, for --workers): then `reserve` answers with a promise.
 */
export interface Throttle {
  /** Seconds until `address` may present credentials (≥ 1), or 0; for a `user` who logged in there, by its own. */
  retryAfter(address: string, user?: string): number;
  /** Seconds until `user`'s credentials are checked while its or the global budget is spent, but for a known client. */
  budgetRetryAfter(user: string, address: string): number;
  /** Counts a request without credentials; seconds until the next is answered 401, or 0. */
  recordUnauthenticated(address: string): number;
  /**
   * Credentials for `user` from `address` are about to be checked: 0, and a failure counted,
   * pending until the check comes (then `confirm` or `forgive`); or the seconds until they may
   * be checked, as `retryAfter` and `budgetRetryAfter` would say. Deciding and counting are
   * one step, so that parallel guesses cannot overrun a budget.
   */
  reserve(user: string, address: string): number | Promise<number>;
  /** Takes back a failure counted by `reserve` whose check accepted the credentials or never ran. */
  forgive(address: string, user: string): void;
  /** Keeps a failure counted by `reserve` whose check rejected the credentials: it blocks until its window ends. */
  confirm(address: string, user: string): void;
  /** `user` logged in from `address`: a known client from now on. */
  recordSuccess(address: string, user: string): void;
  /** Whether `user` logged in from `address` (and is still remembered). */
  isKnown(user: string, address: string): boolean;
}

/** The throttle that holds the counts itself, in this process. */
export interface LocalThrottle extends Throttle {
  reserve(user: string, address: string): number;
  /** Counts a failed authentication. */
  recordFailure(address: string, user: string): void;
  /** When `rule` stops blocking `key` (`''` the global one, `user:address` a client), in ms of `now`; else 0. */
  blockedUntil(rule: ThrottleRule, key: string): number;
  /** The (user, address) pairs that logged in, least recent first. */
  knownClients(): { user: string; address: string }[];
  /** Addresses currently remembered (for tests and monitoring). */
  readonly size: number;
}
