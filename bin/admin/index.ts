// The admin listener (--admin-port / --admin-socket): /live, /ready, /metrics and
// POST /-/reload, and the counts it answers from in each kind of process. Runs in the
// serving process, or in the primary of --workers.
//
// This file is the room's door: the other rooms import from it only.

export { adminLine, listenAdmin } from './admin.js';
export {
  answersOfProcess,
  answersOfWorkers,
  recordReload,
  reportToPrimary,
  type ServingProcess,
} from './monitoring.js';
