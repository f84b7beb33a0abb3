// The bound on password-hash checks: at most `maxHashChecks` run at once on libuv's thread
// pool, at most `maxQueuedHashChecks` wait (docs/API.md, Credentials). lib/auth.ts checks
// through it; several authenticators may share one.

import type { Metrics } from './metrics.js';

/** The longest wait for a password-hash check (docs/API.md, Credentials); never past the socket's idle timeout (hashWaitMs). */
export const MAX_HASH_WAIT_MS = 10_000;

/** The client's connection (its socket), as far as a login looks at it. */
export interface Connection {
  /** Whether the client has gone: a hash check that nobody waits for any more is skipped. */
  readonly destroyed: boolean;
  /** The socket's idle timeout in milliseconds (node:http's `server.setTimeout`); 0 or none: no limit. */
  readonly timeout?: number | undefined;
}

/** How long a request on `connection` may wait for its hash check: until a second (or a tenth) before its socket's idle timeout. */
export function hashWaitMs(connection: Connection): number {
  const idle = connection.timeout ?? 0;
  return idle > 0 ? Math.min(MAX_HASH_WAIT_MS, idle - Math.min(1_000, idle / 10)) : MAX_HASH_WAIT_MS;
}

/**
 * The password-hash checks of a process: at most `maxHashChecks` at once, at most
 * `maxQueuedHashChecks` waiting (docs/API.md, Credentials). One per authenticator by
 * default; the CLI gives all of its books' authenticators one, so that many books cannot
 * multiply the share of the machine a flood of wrong passwords takes.
 */
export interface HashChecks {
  /** Whether a check now would have to wait behind a full queue: then it is answered `BUSY`. */
  full(): boolean;
  /**
   * Queues `start`, which begins a check and says whether it did (a check nobody waits for
   * any more does not); `giveUp` answers its requests instead once the checks are stopped.
   */
  enqueue(start: () => boolean, giveUp?: () => void): void;
  /** A check that `start` began has ended. */
  finished(): void;
  /**
   * The service stops: every waiting check, and every one queued from now on, is given up
   * (its requests answered at once: `503`); the running ones end as they would.
   */
  stop(): void;
}

/** Hash checks bounded by `limits`; the running and waiting ones counted in `metrics` (lib/metrics.ts). */
export function createHashChecks(
  limits: { readonly maxHashChecks: number; readonly maxQueuedHashChecks: number },
  metrics?: Metrics,
): HashChecks {
  let running = 0;
  let stopped = false;
  /** Checks waiting for a free slot; each says whether it started one. */
  const waiting: Array<() => boolean> = [];
  /** What gives each waiting check up, in the same order. */
  const givingUp: Array<(() => void) | undefined> = [];
  // The checks running and waiting now, added to those of other authenticators (lib/metrics.ts).
  const gauges = metrics?.hashChecks ?? new Float64Array(2);

  /** Starts waiting checks while there is room. */
  function pump(): void {
    while (running < limits.maxHashChecks) {
      const next = waiting.shift();
      givingUp.shift();
      if (next === undefined) return;
      (gauges[1] as number) -= 1;
      // Counted as running before it starts: a check that ends at once finds itself counted.
      running += 1;
      (gauges[0] as number) += 1;
      if (!next()) {
        running -= 1;
        (gauges[0] as number) -= 1;
      }
    }
  }

  return {
    full: () => running >= limits.maxHashChecks && waiting.length >= limits.maxQueuedHashChecks,
    enqueue(start, giveUp) {
      if (stopped) return giveUp?.();
      waiting.push(start);
      givingUp.push(giveUp);
      (gauges[1] as number) += 1;
      pump();
    },
    finished() {
      running -= 1;
      (gauges[0] as number) -= 1;
      pump();
    },
    stop() {
      stopped = true;
      const given = givingUp.splice(0);
      (gauges[1] as number) -= waiting.length;
      waiting.length = 0;
      for (const giveUp of given) giveUp?.();
    },
  };
}
