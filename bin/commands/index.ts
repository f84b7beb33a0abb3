// The commands besides serving: `check` (does a file or a configuration fit?) and
// `hash-password`. Run in the process of the command line, `check` partly in a guard.
//
// This file is the room's door: the other rooms import from it only.
export { checkOneFile, reportOnBooks } from './check.js';
export { runHashPassword } from './hash-password.js';
