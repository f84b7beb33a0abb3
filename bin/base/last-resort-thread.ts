// The thread of the last resort (bin/base/last-resort.ts): it ends its process with SIGKILL
// when the event loop's heartbeat has stopped for the limit (after one line on stderr), or
// when the parent process is gone.

import { writeSync } from 'node:fs';
import { workerData } from 'node:worker_threads';
import type { LastResortData } from './last-resort.js';

const { beat, everyMs, stuck, parent } = workerData as LastResortData;
let seen = Atomics.load(beat, 0);
let since = Date.now();
setInterval(() => {
  if (parent !== undefined && !alive(parent)) process.kill(process.pid, 'SIGKILL');
  if (stuck === undefined) return;
  const now = Atomics.load(beat, 0);
  if (now !== seen) {
    seen = now;
    since = Date.now();
    return;
  }
  if (Date.now() - since < stuck.limitMs) return;
  const seconds = Math.round((Date.now() - since) / 1000);
  try {
    writeSync(2, stuck.template.replace('{time}', new Date().toISOString()).replace('{seconds}', String(seconds)));
  } catch {
    // stderr gone: the kill below still ends the process
  }
  process.kill(process.pid, 'SIGKILL');
}, everyMs);

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error: unknown) {
    return (error as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}
