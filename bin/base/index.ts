// The command's base: its one error type, the log, the channel between its processes, the
// words it prints for a shell, the package's own facts, the signals it answers, the thread
// that ends a process whose event loop is held. Runs in every process of the command
// (the service, the primary of --workers, a worker, a guard); imports no other room.
//
// This file is the room's door: the other rooms import from it only.

export { type Channel, ChannelError, createChannel, isUnhandled, type Port } from './channel.js';
export {
  CliError,
  describeBug,
  describeError,
  describeFsError,
  describeReadError,
  isPrivacyRefusal,
  messageOf,
} from './errors.js';
export { type LastResort, startLastResort } from './last-resort.js';
export {
  accessLog,
  errorLineTemplate,
  type LogLevel,
  logError,
  logInfo,
  logLine,
  logText,
  logValue,
  MAX_LINE_CHARACTERS,
  SOCKET_WORD,
  setLogFormat,
} from './log.js';
export { moduleBeside } from './module-file.js';
export { NAME, readPackageFile, readVersion } from './package.js';
export { shellWord } from './shell.js';
export {
  holdReloads,
  inTurn,
  isStopping,
  onReloadSignal,
  onStopSignals,
  type ReloadTrigger,
  reloadAsSignalled,
  stopOnBugs,
} from './signals.js';
