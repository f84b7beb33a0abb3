// The last resort of a process whose event loop may be held: SQLite inside a statement or
// an open that does not return (a named pipe put in place of the file's -journal, -wal or
// -shm, which SQLite opens by name, or a file made to loop). No signal handler runs then,
// so SIGTERM (systemd's stop) would wait for ever, and so would process.exit (it waits for
// a thread stuck in SQLite). A thread (bin/base/last-resort-thread.ts) can still write a
// line with fs.writeSync and end the process with SIGKILL: the serving process when its
// event loop has not turned for far longer than any open or search may take (systemd, or
// the primary of --workers, starts it again), a guard when its serving process is gone.

import { Worker } from 'node:worker_threads';
import { moduleBeside } from './module-file.js';

// How often the event loop says it is alive; the thread looks as often.
const BEAT_MS = 500;

/** What the thread watches: the event loop's heartbeat, the parent process, or both. */
export interface LastResort {
  /** The event loop not turned for `limitMs`: `template` (a whole log line with `{time}` and `{seconds}`, bin/base/log.ts's errorLineTemplate) to stderr, then SIGKILL. */
  readonly stuck?: { readonly limitMs: number; readonly template: string };
  /** This process's parent gone (a guard's serving process): SIGKILL. */
  readonly parent?: number;
}

/** What the thread receives: `beat` is counted up by this process's event loop. */
export interface LastResortData extends LastResort {
  readonly beat: Int32Array;
  readonly everyMs: number;
}

/** Starts the thread; its heartbeat is a timer that keeps nothing alive, and the thread is unref'd. */
export function startLastResort(watch: LastResort): void {
  const beat = new Int32Array(new SharedArrayBuffer(4));
  if (watch.stuck !== undefined) setInterval(() => Atomics.add(beat, 0, 1), BEAT_MS).unref();
  const workerData: LastResortData = { ...watch, beat, everyMs: BEAT_MS };
  new Worker(moduleBeside(import.meta.url, 'last-resort-thread'), { workerData }).unref();
}
