// How many reconciliations of this thread read and compute at once. Each holds its windows'
// bookings, every line's candidates and the pairing's graph (tens of megabytes for a
// statement whose lines compete for the same bookings), and they share the thread's CPU
// anyway: those beyond the bound wait for their place, taken as the waiting searches are
// (lib/search/rotations.ts: by user, then address, then connection, each in order of
// arrival). All of them take about as long in total; the memory is that of a few.

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
  // The same jobs, to see whether a client left while waiting: the rotations skip such a job
  // only when its turn comes, which for a reconciliation can be a minute away, and meanwhile
  // it held a place of its address's and its user's bound on waiting searches.
  const queued = new Set<Waiting>();
  let inside = 0;
  const admit = (job: Waiting): void => {
    inside += 1;
    let left = false;
    job.start(() => {
      if (left) return;
      left = true;
      inside -= 1;
      const next = waiting.next();
      if (waiting.empty) queued.clear();
      if (next === undefined) return;
      queued.delete(next);
      admit(next);
    });
  };
  /** The waiting, without those whose client left: taken out (in the order they would have come) before they are counted. */
  const present = (): Rotations<Waiting> => {
    for (const job of queued) {
      if (job.from.connection.destroyed !== true) continue;
      const fresh = new Rotations<Waiting>();
      queued.clear();
      for (let next = waiting.next(); next !== undefined; next = waiting.next()) {
        fresh.add(next);
        queued.add(next);
      }
      waiting = fresh;
      break;
    }
    return waiting;
  };
  return {
    enter(from, start) {
      if (inside < atOnce) return admit({ from, start });
      const job = { from, start };
      waiting.add(job);
      queued.add(job);
    },
    waitingFrom: (address) => present().waitingFrom(address),
    waitingFor: (user) => present().waitingFor(user),
  };
}
