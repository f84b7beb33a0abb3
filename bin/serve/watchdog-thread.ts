// The watchdog's thread (bin/serve/watchdog.ts starts it in the serving process): it sees
// the event loop's heartbeat stop and, past the limit, writes the line and kills the process.

import { writeSync } from 'node:fs';
import { workerData } from 'node:worker_threads';

interface WatchdogData {
  readonly beat: Int32Array;
  readonly limitMs: number;
  readonly beatMs: number;
  readonly template: string;
}

const { beat, limitMs, beatMs, template } = workerData as WatchdogData;
let seen = Atomics.load(beat, 0);
let since = Date.now();
setInterval(() => {
  const now = Atomics.load(beat, 0);
  if (now !== seen) {
    seen = now;
    since = Date.now();
    return;
  }
  if (Date.now() - since < limitMs) return;
  const seconds = Math.round((Date.now() - since) / 1000);
  try {
    writeSync(2, template.replace('{time}', new Date().toISOString()).replace('{seconds}', String(seconds)));
  } catch {
    // stderr gone: the kill below still ends the process
  }
  process.kill(process.pid, 'SIGKILL');
}, beatMs);
