// Serving: start, reload, watch, greet and stop a configuration's books behind the API
// listener, with the last-resort thread (bin/base) watching its event loop. Runs in the serving process (the
// only process, or each worker) and, for its own part, in the primary of --workers.
//
// This file is the room's door: the other rooms import from it only.
export { unknownTimeZone, warnAboutOpenBooks, warnAboutSecretFiles } from './greeting.js';
export { runServe } from './serve.js';
