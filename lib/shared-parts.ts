// What several handlers share: one login throttle, whose budgets then hold for them
// together, and one bound on password-hash checks. The command's books and workers share
// them; an embedder's books behind mountHandlers may too (lib/index.ts).

import { ensure } from './errors.js';
import { createHashChecks, type HashChecks } from './hash-checks.js';
import type { Metrics } from './metrics.js';
import { resolveOptions, type Settings } from './options.js';
import { createThrottle, type Throttle } from './throttle.js';
import { createThrottleAuthority, type ThrottleAuthority } from './throttle-authority.js';
import { type CountsElsewhere, createThrottleReplica } from './throttle-replica.js';
import type { HandlerOptions } from './types.js';

/** What several handlers share (createHandler's `shared`), with the login throttle they share. */
export interface SharedBy {
  throttle: Throttle;
  hashChecks: HashChecks;
  metrics?: Metrics;
}

/** The shared parts of a process that holds its throttle's counts, which it can serve to other processes' replicas. */
export interface SharedHere extends SharedBy {
  /** The counts served to the replicas of other processes (the primary of --workers attaches each worker's link). */
  authority: ThrottleAuthority;
}

/**
 * What several handlers share, over `options` (their LOGIN_LIMITS): one login throttle,
 * whose budgets then hold for them together (with `counts`: a replica of one held in another
 * process, lib/throttle-replica.ts), and one bound on password-hash checks, so that wrong
 * passwords spread over them take no more of the machine than one handler's would; counted
 * in `metrics` when given. Public with `options` alone (lib/index.ts).
 */
export function createSharedParts(options?: HandlerOptions, metrics?: Metrics): SharedHere;
export function createSharedParts(
  options: HandlerOptions | undefined,
  metrics: Metrics | undefined,
  counts: CountsElsewhere,
): SharedBy;
export function createSharedParts(
  options?: HandlerOptions,
  metrics?: Metrics,
  counts?: CountsElsewhere,
): SharedHere | SharedBy {
  const settings = resolveOptions(options);
  const counted: Pick<SharedBy, 'metrics'> = metrics === undefined ? {} : { metrics };
  const hashChecks = createHashChecks(settings, metrics);
  if (counts !== undefined) {
    const throttle = createThrottleReplica(counts, settings, metrics);
    limitsOf.set(throttle, settings);
    return { throttle, hashChecks, ...counted };
  }
  const throttle = createThrottle(settings, metrics);
  limitsOf.set(throttle, settings);
  const authority = createThrottleAuthority(throttle, settings.maxTrackedAddresses);
  return { throttle, hashChecks, authority, ...counted };
}

/** The options that shared parts hold for every handler given them: the login throttle's and the hash checks'. */
const LOGIN_LIMITS = [
  'maxAuthFailures',
  'maxUserFailures',
  'maxGlobalFailures',
  'maxUnauthenticated',
  'authFailureWindowMs',
  'maxTrackedAddresses',
  'maxKnownClients',
  'maxHashChecks',
  'maxQueuedHashChecks',
] as const satisfies ReadonlyArray<keyof HandlerOptions>;

/** The settings each throttle createSharedParts made counts under. */
const limitsOf = new WeakMap<object, Settings>();

/** A TypeError when a handler's `options` give a login limit its `shared` throttle counts otherwise: it would go unused. */
export function ensureSharedLimits(options: HandlerOptions | undefined, shared: { throttle?: object }): void {
  const held = shared.throttle === undefined ? undefined : limitsOf.get(shared.throttle);
  if (held === undefined || options === undefined) return;
  for (const name of LOGIN_LIMITS) {
    const own = options[name];
    ensure(
      own === undefined || own === held[name],
      `options.${name} is ${own}, but the shared parts count ${held[name]}: give the login limits to createSharedParts once`,
    );
  }
}
