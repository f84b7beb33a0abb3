// The worker's side of the one login throttle of --workers (bin/cluster/shared-throttle.ts):
// a replica of what the primary has blocked and who logged in, answered locally where it
// can, and the primary asked over the channel where it must.
//
// A primary that does not answer (stopped, or stuck) costs a worker bounded memory: its
// channel queues no more once the primary stops taking messages, and holds a bounded
// number of reservations (bin/cluster/workers.ts). Past that bound, or past the time limit
// of a reservation, the worker decides on its own, on the safe side: a request without
// credentials that it cannot tell the primary about, and credentials it would have to ask
// about, get the throttle's 429 with `Retry-After: 1`; a client the replica knows gets in.

import { type Metrics, REFUSAL_INDEX, type Throttle, type ThrottleRule } from '../../lib/internal.js';
import { type Channel, ChannelError, logLine } from '../base/index.js';
import {
  type Pair,
  type ReserveReply,
  type ReserveRequest,
  THROTTLE_MESSAGES,
  type ThrottleUpdate,
} from './shared-throttle.js';

// How long a worker waits for the primary's decision before it refuses on its own.
const RESERVE_TIMEOUT_MS = 5_000;
/** The Retry-After of a refusal a worker makes on its own while the primary does not answer. */
const ON_ITS_OWN_RETRY_AFTER = 1;

export interface ReplicaSettings {
  maxKnownClients: number;
  maxTrackedAddresses: number;
  now: () => number;
}

/**
 * In a worker: the throttle its handlers use, answered from the replica where it can and
 * from the primary, over `channel`, where it must. Refusals are counted in `metrics` by rule.
 */
export function createThrottleReplica(channel: Channel, settings: ReplicaSettings, metrics?: Metrics): Throttle {
  const { now } = settings;
  const blocks: Record<ThrottleRule, Map<string, number>> = {
    address: new Map(),
    client: new Map(),
    user: new Map(),
    global: new Map(),
    unauthenticated: new Map(),
  };
  // Insertion order is recency, as in the primary.
  const known = new Set<string>();
  const flagged = new Set<string>();
  const pair = (user: string, address: string): string => `${user}:${address}`;
  // The pair at the end of `known`, as in lib/throttle.ts.
  let recentUser: string | undefined;
  let recentAddress: string | undefined;
  // The last reservation went unanswered: said once, until one is answered.
  let unanswered = false;

  const refuse = (rule: ThrottleRule, seconds: number): number => {
    if (metrics !== undefined) (metrics.refusals[REFUSAL_INDEX[rule]] as number) += 1;
    return seconds;
  };
  const secondsLeft = (rule: ThrottleRule, key: string): number => {
    const table = blocks[rule];
    // Nothing blocked, as almost always: no lookup.
    if (table.size === 0) return 0;
    const until = table.get(key);
    if (until === undefined) return 0;
    const remaining = until - now();
    if (remaining > 0) return Math.ceil(remaining / 1000);
    blocks[rule].delete(key);
    return 0;
  };
  const remember = (set: Set<string>, key: string, bound: number): void => {
    set.delete(key);
    set.add(key);
    if (set.size > bound) {
      const oldest = set.values().next();
      if (oldest.done !== true) set.delete(oldest.value);
    }
  };

  channel.handle(THROTTLE_MESSAGES.update, (body) => {
    const update = body as ThrottleUpdate;
    for (const [rule, key, until] of update.blocks) {
      const table = blocks[rule];
      table.set(key, until);
      // As bounded as the primary's table: the oldest block is dropped first.
      if (table.size > settings.maxTrackedAddresses) {
        const oldest = table.keys().next();
        if (oldest.done !== true) table.delete(oldest.value);
      }
    }
    for (const [rule, key] of update.unblocks) blocks[rule].delete(key);
    for (const [user, address] of update.known) remember(known, pair(user, address), settings.maxKnownClients);
    // Pairs from other workers go behind this worker's most recent one.
    if (update.known.length > 0) recentUser = recentAddress = undefined;
    for (const address of update.flagged) remember(flagged, address, settings.maxTrackedAddresses);
    for (const address of update.unflagged) flagged.delete(address);
  });

  function budgetRetryAfter(user: string, address: string): number {
    const forUser = secondsLeft('user', user);
    const forAll = secondsLeft('global', '');
    if ((forUser === 0 && forAll === 0) || known.has(pair(user, address))) return 0;
    return refuse(forUser > 0 ? 'user' : 'global', Math.max(forUser, forAll));
  }

  return {
    retryAfter(address, user) {
      // As in lib/throttle.ts: a pair that logged in goes by its own failures from there.
      const wait = secondsLeft('address', address);
      if ((wait === 0 && blocks.client.size === 0) || user === undefined) return wait > 0 ? refuse('address', wait) : 0;
      const key = pair(user, address);
      if (!known.has(key)) return wait > 0 ? refuse('address', wait) : 0;
      const own = secondsLeft('client', key);
      return own > 0 ? refuse('client', own) : 0;
    },

    budgetRetryAfter,

    recordUnauthenticated(address) {
      const wait = secondsLeft('unauthenticated', address);
      if (wait > 0) return refuse('unauthenticated', wait);
      // Not counted by the primary, not let through uncounted.
      if (!channel.notify(THROTTLE_MESSAGES.unauthenticated, { address })) {
        return refuse('unauthenticated', ON_ITS_OWN_RETRY_AFTER);
      }
      remember(flagged, address, settings.maxTrackedAddresses);
      return 0;
    },

    async reserve(user, address) {
      // Spent as far as this worker knows already: no need to ask.
      const spent = budgetRetryAfter(user, address);
      if (spent > 0) return spent;
      const request: ReserveRequest = { user, address, known: known.has(pair(user, address)) };
      let reply: ReserveReply;
      try {
        reply = await channel.request<ReserveReply>(THROTTLE_MESSAGES.reserve, request, RESERVE_TIMEOUT_MS);
      } catch (error: unknown) {
        // The primary did not decide (too much waits for it, or no answer in time): nothing is checked.
        if (!(error instanceof ChannelError) || error.code === 'CHANNEL_REMOTE') throw error;
        if (!unanswered)
          logLine(`worker ${process.pid}: ${error.message}: credentials get 429 until the primary answers`, 'warning');
        unanswered = true;
        return refuse('global', ON_ITS_OWN_RETRY_AFTER);
      }
      unanswered = false;
      return reply.rule === null ? 0 : refuse(reply.rule, reply.retryAfter);
    },

    forgive(address, user) {
      channel.notify(THROTTLE_MESSAGES.forgive, { user, address } satisfies Pair);
    },

    recordSuccess(address, user) {
      // A client's next login, as most are, is the most recent already: two comparisons, as
      // in the library's throttle, and nothing for the primary.
      const flaggedHere = flagged.size > 0 && flagged.has(address);
      if (user === recentUser && address === recentAddress && !flaggedHere) return;
      const key = pair(user, address);
      // The primary hears of a login only when it changes something there: a pair new to
      // this worker, or an address with requests without credentials counted.
      if (flaggedHere || !known.has(key)) {
        channel.notify(THROTTLE_MESSAGES.success, { user, address } satisfies Pair);
        flagged.delete(address);
      }
      remember(known, key, settings.maxKnownClients);
      recentUser = user;
      recentAddress = address;
    },
  };
}
