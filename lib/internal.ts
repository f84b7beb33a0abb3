// The library's one door for the command (bin/): every name bin/ uses of lib/, public or
// not, is re-exported here and bin/ imports the library from nowhere else (held, with a bound
// on how many names pass, by test/unit/door.test.ts). Only re-exports.

export { openBook } from './book.js';
export { credentialsFromPairs } from './credentials.js';
export { errorCode, isNotReadableNow, REFUSED_BY_SETTING } from './errors.js';
export { createHandler, mountHandlers } from './handler.js';
export { ERRORS } from './messages.js';
export { Metrics } from './metrics.js';
export { resolveOptions } from './options.js';
export { hashPassword } from './password-hash.js';
export { protectServer } from './protocol-errors.js';
export type { Answered } from './request.js';
export { send } from './respond.js';
export { buildSharedParts } from './shared-parts.js';
export type { Credentials, HandlerOptions } from './types.js';
