// How often the primary starts a worker in place of another: a dead worker is replaced, but at
// most RESTART_BUDGET times within RESTART_WINDOW_MS (not in a hot loop); with that budget spent
// the service stops (exit 1), and systemd's Restart=on-failure takes over. A reload starts one
// for each worker that could not start, within a budget of its own: an admin's reloads while a
// file is mid-edit never spend what keeps the service up when workers die.

export const RESTART_BUDGET = 5;
export const RESTART_WINDOW_MS = 60_000;

/** The starts of one kind within the last RESTART_WINDOW_MS, at most RESTART_BUDGET. */
export class StartBudget {
  private readonly times: number[] = [];
  private readonly what: string;

  /** `what` names a start in the log: `replacement 2 of 5 allowed within 60 s`. */
  constructor(what: string) {
    this.what = what;
  }

  /** Whether one more start is within the budget; counted if so. */
  spend(now = Date.now()): boolean {
    const { times } = this;
    while (times.length > 0 && (times[0] ?? 0) <= now - RESTART_WINDOW_MS) times.shift();
    if (times.length >= RESTART_BUDGET) return false;
    times.push(now);
    return true;
  }

  /** The last start's place in the budget, for its log line. */
  line(): string {
    return `${this.what} ${this.times.length} of ${RESTART_BUDGET} allowed within ${RESTART_WINDOW_MS / 1000} s`;
  }
}
