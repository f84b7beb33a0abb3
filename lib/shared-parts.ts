// What several handlers share: one login throttle, whose budgets then hold for them
// together, and one bound on password-hash checks. The command's books and workers share
// them; an embedder's books behind mountHandlers may too (lib/index.ts).

import { ensure } from './errors.js';
import { createHashChecks, type HashChecks } from './hash-checks.js';
import { Metrics } from './metrics.js';
import { OPTION_NAMES, resolveOptions, type Settings } from './options.js';
import { createThrottle, type Throttle } from './throttle.js';
import { createThrottleAuthority, type ThrottleAuthority } from './throttle-authority.js';
import { type CountsElsewhere, createThrottleReplica } from './throttle-replica.js';
import type { HandlerOptions, SharedParts } from './types.js';

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
 * What several handlers share, under the LOGIN_LIMITS of `options`: one login throttle,
 * whose budgets then hold for them together (with `counts`: a replica of one held in another
 * process, lib/throttle-replica.ts), and one bound on password-hash checks, so that wrong
 * passwords spread over them take no more of the machine than one handler's would; counted
 * in `metrics` when given. The package's createSharedParts (below) checks `options` and calls it.
 */
export function buildSharedParts(options?: HandlerOptions, metrics?: Metrics): SharedHere;
export function buildSharedParts(
  options: HandlerOptions | undefined,
  metrics: Metrics | undefined,
  counts: CountsElsewhere,
): SharedBy;
export function buildSharedParts(
  options?: HandlerOptions,
  metrics?: Metrics,
  counts?: CountsElsewhere,
): SharedHere | SharedBy {
  const settings = resolveOptions(options);
  const counted: Pick<SharedBy, 'metrics'> = metrics === undefined ? {} : { metrics };
  const hashChecks = createHashChecks(settings, metrics);
  if (counts !== undefined) {
    const throttle = createThrottleReplica(counts, settings, metrics);
    made.set(throttle, settings).set(hashChecks, settings);
    return { throttle, hashChecks, ...counted };
  }
  const throttle = createThrottle(settings, metrics);
  made.set(throttle, settings).set(hashChecks, settings);
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

/**
 * One login throttle and one bound on password-hash checks for several handlers: pass the
 * result as the last argument of each (`createHandler(db, credentials, options, shared)`),
 * mountHandlers' fallback too, and failed logins on any of them spend one budget. It takes
 * the login limits (maxAuthFailures to maxKnownClients, maxHashChecks, maxQueuedHashChecks),
 * which hold for every handler given the result: a handler's own value of one that differs
 * is a TypeError, as is any other option here (it is each handler's). Exported by the
 * package (lib/index.ts); the command builds its own with buildSharedParts.
 */
export function createSharedParts(options?: HandlerOptions): SharedParts {
  const limits: readonly string[] = [...LOGIN_LIMITS, 'now'];
  const listed = LOGIN_LIMITS.join(', ');
  // A login limit in another case is named as createHandler names it; any other option, in
  // any case, is each handler's; a name no option has is named beside the login limits.
  for (const key of typeof options === 'object' && options !== null ? Object.keys(options) : []) {
    const meant = OPTION_NAMES.find((name) => name.toLowerCase() === key.toLowerCase());
    if (meant === undefined) ensure(false, `options.${key} is not an option; the login limits are ${listed}`);
    ensure(!limits.includes(meant) || meant === key, `options.${key} is not an option; did you mean ${meant}?`);
    ensure(
      meant === key && limits.includes(key),
      `options.${key} is not a login limit: give it to each createHandler (these are ${listed})`,
    );
  }
  // The counts served to other processes (--workers, `authority`) are the command's.
  const { throttle, hashChecks } = buildSharedParts(options);
  return { throttle, hashChecks };
}

/** The throttles and hash-check bounds buildSharedParts made, each with the settings it counts under. */
const made = new WeakMap<object, Settings>();

const PART_NAMES: readonly string[] = ['throttle', 'hashChecks', 'metrics', 'logins', 'authority'];
const MISUSED = 'shared must be what createSharedParts() made';

/**
 * A TypeError unless `shared` is what createSharedParts made (`logins` added, or nothing),
 * and when a handler's `options` give a login limit its throttle counts otherwise: a part
 * that is not one would fail at the first request, a limit would go unused.
 */
export function ensureShared(options: HandlerOptions | undefined, shared: unknown): void {
  ensure(typeof shared === 'object' && shared !== null && !Array.isArray(shared), MISUSED);
  const parts: Record<string, unknown> = { ...shared };
  for (const key of Object.keys(parts)) ensure(PART_NAMES.includes(key), `shared.${key} is no part: ${MISUSED}`);
  for (const key of ['throttle', 'hashChecks']) {
    ensure(parts[key] === undefined || made.has(parts[key] as object), `shared.${key}: ${MISUSED}`);
  }
  ensure(parts.metrics === undefined || parts.metrics instanceof Metrics, `shared.metrics: ${MISUSED}`);
  ensure(parts.logins === undefined || typeof parts.logins === 'object', 'shared.logins must be an object');
  const held = made.get(parts.throttle as object);
  if (held === undefined || options == null) return;
  for (const name of LOGIN_LIMITS) {
    const own = options[name];
    ensure(
      own === undefined || own === held[name],
      `options.${name} is ${own}, but the shared parts count ${held[name]}: give the login limits to createSharedParts once`,
    );
  }
}
