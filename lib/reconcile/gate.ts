// How many reconciliations of this thread parse, read and compute at once. Each holds its windows'
// bookings, every line's candidates and the pairing's graph (up to about 100 MB, bounded by
// reconcile.ts's MAX_WEIGHED), and they share the thread's CPU anyway: those beyond the
// bound wait for their place, taken as the waiting searches are (lib/search/rotations.ts:
// by user, then address, then connection, each in order of arrival). All of them take
// about as long in total; the memory is that of a few.

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
  const admit = (job: Waiting): void => {
    inside += 1;
    let left = false;
    job.start(() => {
      if (left) return;
      left = true;
      inside -= 1;
      const next = waiting.next();
      if (next !== undefined) admit(next);
    });
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
  return {
    enter(from, start) {
      if (inside < atOnce) admit({ from, start });
      else waiting.add({ from, start });
    },
    waitingFrom: (address) => present().waitingFrom(address),
    waitingFor: (user) => present().waitingFor(user),
  };
}
