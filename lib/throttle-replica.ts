// The worker's side of the one login throttle of --workers (lib/throttle-authority.ts):
// a replica of what the primary has blocked and who logged in, answered locally where it
// can, and the primary asked over the link where it must.
//
// A primary that does not answer (stopped, or stuck) costs a worker bounded memory: the
// embedder's link queues no more once the primary stops taking messages, and holds a
// bounded number of requests (lib/throttle-authority.ts, ThrottleLink). Past that bound, or
// past the time limit of a reservation, the worker decides on its own, on the safe side: a
// request without credentials that it cannot tell the primary about, and credentials it
// would have to ask about, get the throttle's 429 with `Retry-After: 1`; a client the
// replica knows gets in, one that asks first without credentials too (its address is never
// counted).

import type { Metrics } from './metrics.js';
import {
  createKnownClients,
  type KnownClients,
  pair,
  type Throttle,
  type ThrottleRule,
  type ThrottleSettings,
} from './throttle.js';
import {
  isUndecided,
  type Pair,
  type ReserveReply,
  type ReserveRequest,
  THROTTLE_MESSAGES,
  type ThrottleLink,
  type ThrottleUpdate,
} from './throttle-authority.js';

// How long a worker waits for the primary's decision before it refuses on its own.
const RESERVE_TIMEOUT_MS = 5_000;
/** The Retry-After of a refusal a worker makes on its own while the primary does not answer. */
const ON_ITS_OWN_RETRY_AFTER = 1;

export type ReplicaSettings = Pick<ThrottleSettings, 'maxKnownClients' | 'maxTrackedAddresses' | 'now'>;

/** Where a worker's throttle keeps its counts: in the process at the other end of `link`. */
export interface CountsElsewhere {
  link: ThrottleLink;
  /**
   * Hears why a reservation went unanswered (the other end did not decide): credentials
   * get 429 until one is answered; said once until then.
   */
  unanswered(error: Error): void;
}

/**
 * In a worker: the throttle its handlers use, answered from the replica where it can and
 * from the primary, over `counts.link`, where it must. Refusals are counted in `metrics` by rule.
 */
export function createThrottleReplica(counts: CountsElsewhere, settings: ReplicaSettings, metrics?: Metrics): Throttle {
  return new ThrottleReplica(counts, settings, metrics);
}

class ThrottleReplica implements Throttle {
  private readonly counts: CountsElsewhere;
  private readonly settings: ReplicaSettings;
  private readonly metrics: Metrics | undefined;
  private readonly blocks: Record<ThrottleRule, Map<string, number>> = {
    address: new Map(),
    client: new Map(),
    user: new Map(),
    global: new Map(),
    unauthenticated: new Map(),
  };
  // The library's table of known clients, as the primary's throttle keeps it.
  private readonly known: KnownClients;
  private readonly flagged = new Set<string>();
  // When the last reservation went unanswered (said once, until one is answered); else undefined.
  private unansweredAt: number | undefined;

  constructor(counts: CountsElsewhere, settings: ReplicaSettings, metrics: Metrics | undefined) {
    this.counts = counts;
    this.settings = settings;
    this.metrics = metrics;
    this.known = createKnownClients(settings.maxKnownClients);
    counts.link.handle(THROTTLE_MESSAGES.update, (body) => this.apply(body as ThrottleUpdate));
    // Now the primary's whole state can be heard: ask for it (lib/throttle-authority.ts).
    counts.link.notify(THROTTLE_MESSAGES.hello, null);
  }

  retryAfter(address: string, user?: string): number {
    // As in lib/throttle.ts: a pair that logged in goes by its own failures from there.
    const wait = this.secondsLeft('address', address);
    if ((wait === 0 && this.blocks.client.size === 0) || user === undefined) {
      return wait > 0 ? this.refuse('address', wait) : 0;
    }
    if (!this.known.has(user, address)) return wait > 0 ? this.refuse('address', wait) : 0;
    const own = this.secondsLeft('client', pair(user, address));
    return own > 0 ? this.refuse('client', own) : 0;
  }

  budgetRetryAfter(user: string, address: string): number {
    const forUser = this.secondsLeft('user', user);
    const forAll = this.secondsLeft('global', '');
    if ((forUser === 0 && forAll === 0) || this.known.has(user, address)) return 0;
    return this.refuse(forUser > 0 ? 'user' : 'global', Math.max(forUser, forAll));
  }

  recordUnauthenticated(address: string): number {
    // As in lib/throttle.ts: where a known client is, never counted, so nothing to tell the primary.
    if (this.known.at(address)) return 0;
    const wait = this.secondsLeft('unauthenticated', address);
    if (wait > 0) return this.refuse('unauthenticated', wait);
    // Not counted by the primary, not let through uncounted.
    if (!this.counts.link.notify(THROTTLE_MESSAGES.unauthenticated, { address })) {
      return this.refuse('unauthenticated', ON_ITS_OWN_RETRY_AFTER);
    }
    remember(this.flagged, address, this.settings.maxTrackedAddresses);
    return 0;
  }

  async reserve(user: string, address: string): Promise<number> {
    // Spent as far as this worker knows already: no need to ask.
    const spent = this.budgetRetryAfter(user, address);
    if (spent > 0) return spent;
    // Within the Retry-After of a reservation the primary left unanswered, asking again would
    // only wait as long again (and the logins that waited for it would wait one after another).
    const since = this.unansweredAt === undefined ? Infinity : this.settings.now() - this.unansweredAt;
    if (since < ON_ITS_OWN_RETRY_AFTER * 1000) return this.refuse('global', ON_ITS_OWN_RETRY_AFTER);
    const request: ReserveRequest = { user, address, known: this.known.has(user, address) };
    let reply: ReserveReply;
    try {
      reply = await this.counts.link.request<ReserveReply>(THROTTLE_MESSAGES.reserve, request, RESERVE_TIMEOUT_MS);
    } catch (error: unknown) {
      // The primary did not decide (too much waits for it, or no answer in time): nothing is checked.
      if (!isUndecided(error)) throw error;
      if (this.unansweredAt === undefined) this.counts.unanswered(error);
      this.unansweredAt = this.settings.now();
      return this.refuse('global', ON_ITS_OWN_RETRY_AFTER);
    }
    this.unansweredAt = undefined;
    return reply.rule === null ? 0 : this.refuse(reply.rule, reply.retryAfter);
  }

  forgive(address: string, user: string): void {
    this.counts.link.notify(THROTTLE_MESSAGES.forgive, { user, address } satisfies Pair);
  }

  confirm(address: string, user: string): void {
    this.counts.link.notify(THROTTLE_MESSAGES.confirm, { user, address } satisfies Pair);
  }

  recordSuccess(address: string, user: string): void {
    // The primary hears of a login only when it changes something there: a pair new to
    // this worker, or an address with requests without credentials counted. A client's next
    // login, as most are, is the table's most recent pair: two comparisons, nothing to send.
    const flaggedHere = this.flagged.size > 0 && this.flagged.has(address);
    if (flaggedHere || !this.known.has(user, address)) {
      this.counts.link.notify(THROTTLE_MESSAGES.success, { user, address } satisfies Pair);
      this.flagged.delete(address);
    }
    this.known.add(user, address);
  }

  isKnown(user: string, address: string): boolean {
    return this.known.has(user, address);
  }

  /** What the primary changed, or its whole state (the first message to a new worker). */
  private apply(update: ThrottleUpdate): void {
    const { maxTrackedAddresses } = this.settings;
    for (const [rule, key, until] of update.blocks) {
      const table = this.blocks[rule];
      table.set(key, until);
      // As bounded as the primary's table: the oldest block is dropped first.
      if (table.size > maxTrackedAddresses) {
        const oldest = table.keys().next();
        if (oldest.done !== true) table.delete(oldest.value);
      }
    }
    for (const [rule, key] of update.unblocks) this.blocks[rule].delete(key);
    for (const [user, address] of update.known) this.known.add(user, address);
    for (const address of update.flagged) remember(this.flagged, address, maxTrackedAddresses);
    for (const address of update.unflagged) this.flagged.delete(address);
  }

  private refuse(rule: ThrottleRule, seconds: number): number {
    this.metrics?.countRefusal(rule);
    return seconds;
  }

  private secondsLeft(rule: ThrottleRule, key: string): number {
    const table = this.blocks[rule];
    // Nothing blocked, as almost always: no lookup.
    if (table.size === 0) return 0;
    const until = table.get(key);
    if (until === undefined) return 0;
    const remaining = until - this.settings.now();
    if (remaining > 0) return Math.ceil(remaining / 1000);
    table.delete(key);
    return 0;
  }
}

function remember(set: Set<string>, key: string, bound: number): void {
  set.delete(key);
  set.add(key);
  if (set.size > bound) {
    const oldest = set.values().next();
    if (oldest.done !== true) set.delete(oldest.value);
  }
}
