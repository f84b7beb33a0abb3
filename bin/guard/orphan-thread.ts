// A guard's thread (bin/guard/guard.ts starts it in the guard process): when the serving
// process is gone, the guard goes too, also while it is stuck in a statement, which only
// another thread can see. A thread may end its process with SIGKILL; process.exit would
// wait for the stuck statement.

import { workerData } from 'node:worker_threads';

const parent = workerData as number;
setInterval(() => {
  try {
    process.kill(parent, 0);
  } catch (error: unknown) {
    if ((error as NodeJS.ErrnoException).code === 'ESRCH') process.kill(process.pid, 'SIGKILL');
  }
}, 1000);
