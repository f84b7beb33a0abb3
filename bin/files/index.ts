// A book's file: who else could change it (and the other files the service trusts), how it
// is opened read-only and diagnosed, and the search over it once open. Runs in the serving
// process, in a guard process and in `check`.
//
// This file is the room's door: the other rooms import from it only.

export {
  type AppIn,
  appSetting,
  type BookFile,
  type Judging,
  NO_SEARCH,
  openBookFile,
  type SearchTurns,
  searchOverFile,
  type TableNames,
} from './book-search.js';
export {
  describeDatabaseError,
  ensureDatabaseFile,
  JudgedRefusal,
  type NotReadableNow,
  notReadableNow,
  openDatabase,
  openToServe,
  SettingRefusal,
} from './database-file.js';
export {
  besideFile,
  committedOf,
  fingerprintOf,
  identityOf,
  journalOf,
  logName,
  realFile,
  shapeOf,
  WAL_HEADER_BYTES,
  walFilesOf,
} from './file-look.js';
export type { DatabaseAccess, FileRule, Trusted } from './file-rule.js';
export {
  ensureDirectoriesSafe,
  ensureOnlyOwnerCanChange,
  fileRule,
  judgeDatabaseFile,
  letsEveryoneConnect,
  readableByEveryone,
  ruleFor,
} from './file-safety.js';
export { judgedAs } from './posix-readable.js';
export { applicationOf } from './posix-rule.js';
export { MAX_READ_BYTES, readRegularFile, readTextFile } from './read-file.js';
export { reportOnDatabase, WAITS_FOR_FILE, writeReport } from './report.js';
