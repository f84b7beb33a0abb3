// One login throttle for all the workers of --workers (docs/API.md, Throttling): the
// budgets per address, per username and in all, and the memory of clients that logged in,
// hold for the service as a whole, and a worker that ends takes no count with it.
//
// The counts live in the primary (`createThrottleAuthority`, the library's own throttle).
// A worker holds a replica of what every worker must know at once (`createThrottleReplica`):
// which addresses, usernames and the service as a whole are blocked until when, and which
// (user, address) pairs logged in. So the request path stays local: a remembered client is
// one lookup, and a blocked address is refused without asking anyone. Only credentials
// that are not remembered — where a password-hash check costs tens of milliseconds anyway,
// or a wrong plain password is a guess — ask the primary, which decides and counts in one
// step (`reserve`), so that parallel guesses on several workers cannot overrun a budget.
// The worker tells it the outcome (`confirm` or `forgive`, `recordSuccess`); requests without
// credentials are told to it as they come, but from an address where the worker knows a
// client (never counted there), and it says once a window blocks.
//
// Every change the primary makes to what the replicas hold is sent to every worker in one
// message per turn of its event loop; a worker that starts gets all of it first. The link
// to each worker is the embedder's (ThrottleLink).

import { errorCode } from './errors.js';
import { type LocalThrottle, pair, type ThrottleRule } from './throttle.js';

/**
 * What the throttle needs of a link to the other process (the command's channel between
 * its processes is one): notifications, requests with a time limit, and an answer for each
 * kind. A request the other end did not decide fails with an error whose `code` is
 * `CHANNEL_TIMEOUT` (no answer in time), `CHANNEL_FULL` (too many wait, or the other end
 * takes no messages) or `CHANNEL_CLOSED` (it is gone); any other error is the other end's.
 */
export interface ThrottleLink {
  /** Sends `body` under `kind`; false when it was dropped (the link closed, or behind). */
  notify(kind: string, body: unknown): boolean;
  request<T>(kind: string, body: unknown, timeoutMs: number): Promise<T>;
  handle(kind: string, answer: (body: unknown) => unknown): void;
}

const UNDECIDED = new Set(['CHANNEL_TIMEOUT', 'CHANNEL_FULL', 'CHANNEL_CLOSED']);

/** Whether a request over a link failed because the other end did not decide (ThrottleLink), not with its own error. */
export function isUndecided(error: unknown): error is Error {
  return error instanceof Error && UNDECIDED.has(errorCode(error) ?? '');
}

/** What changed in the authority's throttle, for the replicas; also a whole state, for a new replica. */
export interface ThrottleUpdate {
  /** [rule, key, until in ms since the epoch] */
  blocks: [ThrottleRule, string, number][];
  /** [rule, key] no longer blocked before its window ends (a failure taken back). */
  unblocks: [ThrottleRule, string][];
  /** [user, address] that logged in. */
  known: [string, string][];
  /** Addresses with requests without credentials counted: a login from there is told to the authority, which clears them. */
  flagged: string[];
  unflagged: string[];
}

export interface ReserveRequest {
  user: string;
  address: string;
  /** The replica knows the pair: the authority takes its word (it may have forgotten the pair first). */
  known: boolean;
}
export interface ReserveReply {
  retryAfter: number;
  rule: ThrottleRule | null;
}
export interface Pair {
  user: string;
  address: string;
}

/** The link's kinds of this protocol. */
export const THROTTLE_MESSAGES = {
  reserve: 'throttle.reserve',
  forgive: 'throttle.forgive',
  confirm: 'throttle.confirm',
  success: 'throttle.success',
  unauthenticated: 'throttle.unauthenticated',
  update: 'throttle.update',
  /** A worker's replica is there to hear the whole state: it is sent then (a message before is lost). */
  hello: 'throttle.hello',
} as const;

export interface ThrottleAuthority {
  /** Answers the worker at the other end of `link`, and sends it the whole state once its replica says hello. */
  attach(link: ThrottleLink): void;
  /** Stops sending to `link` (its worker ended). */
  detach(link: ThrottleLink): void;
  /**
   * The worker at the other end of `link` takes messages again, after updates were
   * dropped while it took none (a bounded link): it gets the
   * whole state again. What it missed of blocks taken back it keeps until their windows
   * end, the safe side.
   */
  caughtUp(link: ThrottleLink): void;
}

/**
 * In the primary: `throttle` holds the counts for every worker attached. `maxFlagged`
 * bounds the addresses remembered for requests without credentials (the throttle's own
 * bound on addresses).
 */
export function createThrottleAuthority(throttle: LocalThrottle, maxFlagged: number): ThrottleAuthority {
  return new Authority(throttle, maxFlagged);
}

class Authority implements ThrottleAuthority {
  private readonly throttle: LocalThrottle;
  private readonly maxFlagged: number;
  private readonly links = new Set<ThrottleLink>();
  /** What the replicas hold as blocked: rule and key → until. */
  private readonly published = new Map<string, number>();
  private readonly flagged = new Set<string>();
  private pending = emptyUpdate();
  private scheduled = false;
  private sweep: NodeJS.Timeout | undefined;

  constructor(throttle: LocalThrottle, maxFlagged: number) {
    this.throttle = throttle;
    this.maxFlagged = maxFlagged;
  }

  attach(link: ThrottleLink): void {
    const { throttle } = this;
    // Blocks whose window has ended are forgotten now and then, so that the map stays
    // bounded; from the first worker on (a process without workers publishes nothing).
    this.sweep ??= setInterval(() => {
      const now = Date.now();
      for (const [id, until] of this.published) if (until <= now) this.published.delete(id);
    }, 60_000).unref();
    link.handle(THROTTLE_MESSAGES.reserve, (body) => this.reserve(body as ReserveRequest));
    for (const outcome of ['forgive', 'confirm'] as const) {
      link.handle(THROTTLE_MESSAGES[outcome], (body) => {
        const { user, address } = body as Pair;
        throttle[outcome](address, user);
        this.publish(address, user);
      });
    }
    link.handle(THROTTLE_MESSAGES.success, (body) => this.success(body as Pair));
    link.handle(THROTTLE_MESSAGES.unauthenticated, (body) => {
      const { address } = body as { address: string };
      throttle.recordUnauthenticated(address);
      this.flag(address);
      this.publish(address, undefined);
    });
    // Sent once the worker's replica says it is there (a worker's process drops a message
    // that comes before it listens): the worker's listen comes after, so it applies the whole
    // state before its first request.
    link.handle(THROTTLE_MESSAGES.hello, () => {
      if (this.links.has(link)) link.notify(THROTTLE_MESSAGES.update, this.wholeState());
    });
    this.links.add(link);
  }

  detach(link: ThrottleLink): void {
    this.links.delete(link);
  }

  caughtUp(link: ThrottleLink): void {
    if (this.links.has(link)) link.notify(THROTTLE_MESSAGES.update, this.wholeState());
  }

  /** Everything the replicas hold, for a worker that starts. */
  private wholeState(): ThrottleUpdate {
    const now = Date.now();
    const state = emptyUpdate();
    for (const [id, until] of this.published) {
      if (until <= now) continue;
      const [rule, key] = id.split('\u0000') as [ThrottleRule, string];
      state.blocks.push([rule, key, until]);
    }
    state.known = this.throttle.knownClients().map(({ user, address }) => [user, address]);
    state.flagged = [...this.flagged];
    return state;
  }

  /** The changes sent to every worker, once a turn of the event loop. */
  private changed(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      const update = this.pending;
      this.pending = emptyUpdate();
      if (isEmpty(update)) return;
      for (const link of this.links) link.notify(THROTTLE_MESSAGES.update, update);
    });
  }

  /** Publishes each rule's block of the keys a change touched, where it differs from what the replicas hold. */
  private publish(address: string, user: string | undefined): void {
    const keys: [ThrottleRule, string][] = [
      ['address', address],
      ['unauthenticated', address],
      ['global', ''],
    ];
    if (user !== undefined) keys.push(['user', user], ['client', pair(user, address)]);
    for (const [rule, key] of keys) {
      const until = this.throttle.blockedUntil(rule, key);
      const id = `${rule}\u0000${key}`;
      const before = this.published.get(id);
      if (until > 0 && until !== before) {
        this.published.set(id, until);
        this.pending.blocks.push([rule, key, until]);
        this.changed();
      } else if (until === 0 && before !== undefined) {
        this.published.delete(id);
        // A window that simply ended needs no message: every replica knows its end.
        if (before > Date.now()) {
          this.pending.unblocks.push([rule, key]);
          this.changed();
        }
      }
    }
  }

  private flag(address: string): void {
    const { flagged } = this;
    if (flagged.has(address)) return;
    flagged.add(address);
    if (flagged.size > this.maxFlagged) {
      const oldest = flagged.values().next();
      if (oldest.done !== true) flagged.delete(oldest.value);
    }
    this.pending.flagged.push(address);
    this.changed();
  }

  private reserve({ user, address, known }: ReserveRequest): ReserveReply {
    const { throttle } = this;
    if (known && !throttle.isKnown(user, address)) throttle.recordSuccess(address, user);
    const retryAfter = throttle.reserve(user, address);
    const rule = retryAfter === 0 ? null : ruleOf(throttle, user, address);
    this.publish(address, user);
    return { retryAfter, rule };
  }

  private success({ user, address }: Pair): void {
    const known = this.throttle.isKnown(user, address);
    this.throttle.recordSuccess(address, user);
    if (!known) {
      this.pending.known.push([user, address]);
      this.changed();
    }
    if (this.flagged.delete(address)) {
      this.pending.unflagged.push(address);
      this.changed();
    }
    this.publish(address, user);
  }
}

/** Which rule refused credentials for `user` from `address`, in the order the throttle applies them. */
function ruleOf(throttle: LocalThrottle, user: string, address: string): ThrottleRule {
  // A pair that logged in is refused by its own failures alone.
  if (throttle.isKnown(user, address)) return 'client';
  if (throttle.blockedUntil('address', address) > 0) return 'address';
  return throttle.blockedUntil('user', user) > 0 ? 'user' : 'global';
}

export function emptyUpdate(): ThrottleUpdate {
  return { blocks: [], unblocks: [], known: [], flagged: [], unflagged: [] };
}

function isEmpty(update: ThrottleUpdate): boolean {
  return (
    update.blocks.length === 0 &&
    update.unblocks.length === 0 &&
    update.known.length === 0 &&
    update.flagged.length === 0 &&
    update.unflagged.length === 0
  );
}
