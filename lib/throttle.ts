// Throttling of failed authentications per client address (docs/API.md, Throttling).
//
// A window opens at an address's first failure and lasts `windowMs`. Once `maxFailures`
// failures fall into it, the address is blocked until the window ends. The table is a Map
// in insertion order: a new window re-inserts its address at the end, so the first key
// is always the oldest window and is the one dropped when the table is full.

export interface ThrottleSettings {
  maxFailures: number;
  windowMs: number;
  maxAddresses: number;
  now: () => number;
}

export interface Throttle {
  /** Seconds until `address` may try again (an integer ≥ 1), or 0 when it is not blocked. */
  retryAfter(address: string): number;
  /** Counts one failed authentication from `address`. */
  recordFailure(address: string): void;
  /** Addresses currently remembered (for tests and monitoring). */
  readonly size: number;
}

interface Window {
  startedAt: number;
  failures: number;
}

export function createThrottle(settings: ThrottleSettings): Throttle {
  const { maxFailures, windowMs, maxAddresses, now } = settings;
  const windows = new Map<string, Window>();

  return {
    retryAfter(address) {
      if (maxFailures === 0) return 0;
      const window = windows.get(address);
      if (window === undefined || window.failures < maxFailures) return 0;
      const remainingMs = window.startedAt + windowMs - now();
      if (remainingMs <= 0) {
        windows.delete(address);
        return 0;
      }
      return Math.ceil(remainingMs / 1000);
    },

    recordFailure(address) {
      if (maxFailures === 0) return;
      const time = now();
      const window = windows.get(address);
      if (window !== undefined && time - window.startedAt < windowMs) {
        window.failures += 1;
        return;
      }
      windows.delete(address);
      windows.set(address, { startedAt: time, failures: 1 });
      if (windows.size > maxAddresses) {
        const oldest = windows.keys().next();
        if (oldest.done !== true) windows.delete(oldest.value);
      }
    },

    get size() {
      return windows.size;
    },
  };
}
