// The signals the service answers, heard here and nowhere else, in every kind of process
// (the only one, the primary of --workers, each worker): SIGINT and SIGTERM stop it (and
// Ctrl+Break in a Windows console; Ctrl+C there is SIGINT, and a service wrapper such as
// WinSW or NSSM stops a console program with Ctrl+C too); SIGHUP reloads it, but on Windows,
// where Node sends it as the console window closes and Windows ends the process 10 s later,
// it stops it too. And an error nothing caught, which ends it in one line.

import { describeBug } from './errors.js';
import { logLine } from './log.js';

// Once a stop began, no reload starts, and one under way says nothing: what it would serve,
// or fail to, no client gets, and its lines came after `stopped`.
let stopping = false;

/** Whether this process heard a stop signal: a reload's lines are not said then. */
export const isStopping = (): boolean => stopping;

/** Runs `stop` on SIGINT, SIGTERM and SIGBREAK, with the signal; `again` is true from the second signal on. */
export function onStopSignals(stop: (again: boolean, signal: NodeJS.Signals) => void): void {
  let heard = false;
  const signalled = (signal: NodeJS.Signals): void => {
    const again = heard;
    heard = true;
    stopping = true;
    stop(again, signal);
  };
  process.on('SIGINT', signalled);
  process.on('SIGTERM', signalled);
  process.on('SIGBREAK', signalled);
  process.on('SIGHUP', () => consoleClosed() && signalled('SIGHUP'));
}

/** What asked for a reload, as its log line names it. */
export type ReloadTrigger = 'SIGHUP' | 'POST /-/reload';

let trigger: ReloadTrigger = 'SIGHUP';

/** A SIGHUP on Windows, not POST /-/reload's: its console window closes. */
const consoleClosed = (): boolean => process.platform === 'win32' && trigger === 'SIGHUP';

// Node ends a process on a SIGHUP nothing listens for: a `systemctl reload` right after the
// start, while the code loads and the books are opened, is kept for the reload's listener.
let heardEarly = false;
const keep = (): void => {
  heardEarly ||= !consoleClosed();
};

/**
 * From the process's first lines (bin/booking-search-server.js) until onReloadSignal: a
 * SIGHUP is kept for it, answered once it listens. `release`: a command that serves nothing
 * lets a SIGHUP (a closed terminal) end it again.
 */
export function holdReloads(release = false): void {
  if (release) process.off('SIGHUP', keep);
  else if (!process.listeners('SIGHUP').includes(keep)) process.on('SIGHUP', keep);
}

/** Runs `reload` on SIGHUP (on Windows a stop) or POST /-/reload, with which of them asked. */
export function onReloadSignal(reload: (by: ReloadTrigger) => void): void {
  // Added before the keeper goes: Node stops hearing a signal when its last listener goes, and
  // one that came meanwhile, not yet handed to a listener, would be lost.
  process.on('SIGHUP', () => stopping || consoleClosed() || reload(trigger));
  process.off('SIGHUP', keep);
  if (heardEarly) setImmediate(() => stopping || reload('SIGHUP'));
  heardEarly = false;
}

/**
 * Reloads as SIGHUP does, without a signal: for the admin listener's POST /-/reload, on
 * every platform (Windows has no SIGHUP). The primary of --workers has its workers reload.
 * Whether it did: not once a stop began.
 */
export function reloadAsSignalled(): boolean {
  if (stopping) return false;
  trigger = 'POST /-/reload';
  try {
    process.emit('SIGHUP', 'SIGHUP');
  } finally {
    trigger = 'SIGHUP';
  }
  return true;
}

/**
 * `run` for each call, one at a time. A call while it runs (two `systemctl reload` in a
 * row) makes it run once more when it ends, however many calls came meanwhile: that run
 * reads the files as they are then, so the last signal's files are always what is applied,
 * and a book is never opened by two reloads at once. It runs with the last call's
 * arguments; each call resolves with the result of the run that covers it.
 */
export function inTurn<A extends unknown[], R>(run: (...args: A) => Promise<R>): (...args: A) => Promise<R> {
  let running = false;
  let next: { args: A; promise: Promise<R>; settle: (result: Promise<R>) => void } | undefined;
  const turn = (args: A): Promise<R> => {
    running = true;
    const result = run(...args);
    const after = (): void => {
      running = false;
      const queued = next;
      next = undefined;
      if (queued !== undefined) queued.settle(turn(queued.args));
    };
    result.then(after, after);
    return result;
  };
  return (...args) => {
    if (!running) return turn(args);
    if (next === undefined) {
      let settle: (result: Promise<R>) => void = () => {};
      const promise = new Promise<R>((resolve) => (settle = resolve));
      next = { args, promise, settle };
    }
    next.args = args;
    return next.promise;
  };
}

/**
 * The handler catches every error of a request. Anything that escapes it (a bug in a
 * callback, a rejected promise nobody awaits) leaves the process in a state nobody knows,
 * which Node's documentation calls unsafe to resume: it is logged in one line, with where
 * it was thrown, and `end` ends the process with exit code 1 (by default at once; the
 * primary of --workers stops its workers first). A worker is then replaced within the
 * restart budget (bin/cluster/workers.ts); a single process or a primary is restarted by
 * systemd (`Restart=on-failure` in deploy/). A second error, or one in `end`, ends it at once.
 */
export function stopOnBugs(end: () => void = () => process.exit(1)): void {
  let ending = false;
  process.on('uncaughtException', (error) => {
    logLine(`unexpected error, stopping: ${describeBug(error)}`);
    if (ending) process.exit(1);
    ending = true;
    try {
      end();
    } catch {
      process.exit(1);
    }
  });
}
