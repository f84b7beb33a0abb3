// The last resort: a thread that ends this process when its event loop has not turned for
// far longer than any open or search may take. What could hold the event loop is SQLite
// inside a statement or an open that does not return (a named pipe put in place of the
// file's -journal, -wal or -shm, which SQLite opens by name, or a file made to loop): no
// signal handler runs then, so SIGTERM (systemd's stop) would wait for ever, and so would
// process.exit (it waits for a thread stuck in SQLite). A thread can still write a line
// with fs.writeSync and end the process with SIGKILL; systemd, or the primary of
// --workers, starts it again.

import { Worker } from 'node:worker_threads';
import { moduleBeside } from '../base/index.js';

// How often the event loop says it is alive; the thread looks as often.
const BEAT_MS = 500;

/**
 * Starts the watchdog: when the event loop has not turned for `limitMs`, `template` (a
 * whole log line, bin/base/log.ts's errorLineTemplate, with `{time}` and `{seconds}` in it) is
 * written to stderr and the process is killed. The heartbeat is a timer that keeps nothing
 * alive; the thread is unref'd.
 */
export function startWatchdog(limitMs: number, template: string): void {
  const beat = new Int32Array(new SharedArrayBuffer(4));
  const timer = setInterval(() => Atomics.add(beat, 0, 1), BEAT_MS);
  timer.unref();
  const worker = new Worker(moduleBeside(import.meta.url, 'watchdog-thread'), {
    workerData: { beat, limitMs, beatMs: BEAT_MS, template },
  });
  worker.unref();
}
