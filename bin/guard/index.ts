// The guard: a child process that opens and judges a book's file before the serving process
// does (bin/guard/guard.ts runs in that child; bin/guard/guarded.ts is the serving process's
// side of it).
//
// This file is the room's door: the other rooms import from it only.

export { endAllGuards, Guard } from './guarded.js';
export { slowJudgement } from './messages.js';
