// --workers N: the primary process that forks, supervises and restarts the workers, and
// holds the login throttle's counts for all of them. Runs in the primary, and the worker's
// side of each message in each worker.
//
// This file is the room's door: the other rooms import from it only.

export { answerReloads, logSaid, type SaidLine } from './reload-workers.js';
export { askPrimary, onCutFromPrimary } from './stopping.js';
export {
  commandOfPrimary,
  countsInPrimary,
  primaryChannel,
  reportFailure,
  reportListening,
  shareStaleLogs,
} from './worker.js';
export { type Role, superviseWorkers } from './workers.js';
