// How many reconciliations of this thread parse, read and compute at once, one of each user
// at most. Each holds its windows' bookings, every line's candidates and the pairing's graph
// (up to about 100 MB, bounded by reconcile.ts's MAX_WEIGHED), and they share the thread's CPU
// anyway: those beyond the bound wait for their place, taken as the waiting searches are
// (lib/search/rotations.ts: by user, then address, then connection, each in order of arrival).
// All of them take about as long in total; the memory is that of a few. A user's next waits
// while its last runs, so that one user's long statements never hold every place of the
// thread (every book's) while another user's wait.

import { type Requester, Rotations } from '../search/index.js';

/** docs/API.md: reconciliations that read and compute at once in a process; the others wait. */
export const RECONCILING_AT_ONCE = 2;

export interface Gate {
  /**
   * `start` at once when fewer than the bound hold a place, else once a place is free (and
   * never when the client left before): it calls `leave` when done, once or more.
   */
  enter(from: Requester, start: (leave: () => void) => void): void;
  /** How many reconciliations of `address` wait for their place. */
  waitingFrom(address: string): number;
  /** How many reconciliations of `user` wait for their place. */
  waitingFor(user: string): number;
}

interface Waiting {
  readonly from: Requester;
  readonly start: (leave: () => void) => void;
}

export function createGate(atOnce = RECONCILING_AT_ONCE): Gate {
  let waiting = new Rotations<Waiting>();
  let inside = 0;
  /** The users who hold a place. */
  const holding = new Set<string>();
  /** The jobs of a user who holds a place, in order of arrival: they wait in the rotation once it holds none. */
  const parked = new Map<string, Waiting[]>();
  const userOf = (job: Waiting): string => job.from.user ?? '';
  const park = (job: Waiting): void => {
    const jobs = parked.get(userOf(job));
    if (jobs === undefined) parked.set(userOf(job), [job]);
    else jobs.push(job);
  };
  const admit = (job: Waiting): void => {
    inside += 1;
    const user = userOf(job);
    holding.add(user);
    let left = false;
    job.start(() => {
      if (left) return;
      left = true;
      inside -= 1;
      holding.delete(user);
      for (const next of parked.get(user) ?? []) waiting.add(next);
      parked.delete(user);
      admitNext();
    });
  };
  /** The next in the rotation whose user holds no place, into a free place; the others of such a user parked. */
  const admitNext = (): void => {
    while (inside < atOnce) {
      const next = waiting.next();
      if (next === undefined) return;
      if (holding.has(userOf(next))) park(next);
      else return admit(next);
    }
  };
  // A job whose client left is skipped only when its turn comes, which for a reconciliation
  // can be a minute away, and meanwhile it held a place of its address's and its user's bound
  // on waiting searches: before they are counted, the waiting are taken over, in the order
  // they would have come, without those.
  const present = (): Rotations<Waiting> => {
    if (!waiting.anyLeft) return waiting;
    const fresh = new Rotations<Waiting>();
    for (let next = waiting.next(); next !== undefined; next = waiting.next()) fresh.add(next);
    waiting = fresh;
    return waiting;
  };
  /** How many parked jobs whose client has not left `matches`. */
  const parkedWhere = (matches: (job: Waiting) => boolean): number => {
    let count = 0;
    for (const jobs of parked.values())
      for (const job of jobs) if (job.from.connection.destroyed !== true && matches(job)) count += 1;
    return count;
  };
  return {
    enter(from, start) {
      const job = { from, start };
      if (holding.has(userOf(job))) park(job);
      else if (inside < atOnce) admit(job);
      else waiting.add(job);
    },
    waitingFrom: (address) => present().waitingFrom(address) + parkedWhere((job) => job.from.address === address),
    waitingFor: (user) => present().waitingFor(user) + parkedWhere((job) => userOf(job) === user),
  };
}
