// The configuration: the table of settings, argv, the environment and the configuration
// file → what the command is asked to do, the books and the credentials. Pure but for
// reading files; runs in every process that starts the command.
//
// This file is the room's door: the other rooms import from it only.

export {
  asksForTheService,
  CONFIG_KEYS,
  CONFIGURABLE,
  type Command,
  parseCommandLine,
  stuckLimitMs,
  USAGE,
} from './args.js';
export {
  type BookConfig,
  describeChange,
  diffBooks,
  inTermsOfBook,
  sameCredentials,
  usersOf,
  usersOfAny,
} from './book-config.js';
export { type ConfigEntry, type ConfigFile, readConfigFile } from './config-file.js';
export { configPath, resolveBooks } from './configuration.js';
export { atTheNextStart, readCredentialsFile } from './credentials.js';
export { nearestName } from './nearest-name.js';
export {
  FROM_ENVIRONMENT,
  type Reread,
  type RunningCredentials,
  readApp,
  type ServeCommand,
  type UnreadCredentials,
} from './serve-command.js';
export { readTableNames } from './setting-kinds.js';
export { BOOK_SETTINGS, camel, handlerOptions, SETTINGS } from './settings.js';
