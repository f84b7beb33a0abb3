// The guard processes of the serving process (bin/guard/guarded.ts): each forked, killed
// once (SIGKILL: a process stuck in a statement ends no other way) and waited for until it
// has exited, so that none is left behind as a zombie; all of them ended when the service stops.

import { type ChildProcess, fork } from 'node:child_process';
import { moduleBeside } from '../base/index.js';

const GUARD_ENTRY = moduleBeside(import.meta.url, 'guard');

// Every child process not yet exited.
const children = new Set<ChildProcess>();
let allEnded = false;

/** Whether stopAllProcesses ended them all, as the service closes: no guard process is started again. */
export function processesEnded(): boolean {
  return allEnded;
}

/**
 * The environment without the credentials it may hold: a guard process reads files another
 * user may have written, and needs no password.
 */
function withoutCredentials(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const { BOOKING_SEARCH_USER: _user, BOOKING_SEARCH_PASSWORD: _password, ...rest } = env;
  return rest;
}

/** Every process is killed and none started again; the event loop waits only for their exits. */
export function stopAllProcesses(): void {
  allEnded = true;
  for (const child of children) kill(child);
}

/** A new guard process; `ended` hears how it ended (`ended (SIGKILL)`), or that it could not be started. */
export function forkGuard(ended: (how: string) => void): ChildProcess {
  const child = fork(GUARD_ENTRY, [], {
    serialization: 'advanced',
    stdio: ['ignore', 'inherit', 'ignore', 'ipc'],
    execArgv: process.execArgv,
    env: withoutCredentials(process.env),
  });
  children.add(child);
  const gone = (how: string): void => void (children.delete(child) && ended(how));
  // A channel to a process that has just ended fails with EPIPE; its end is heard by 'exit'.
  // A process that could not be started (EAGAIN: too many) has no exit: its error is its end.
  child.on('error', (error: NodeJS.ErrnoException) => {
    if (child.pid === undefined) gone(`could not be started (${error.code ?? error.message})`);
  });
  child.once('exit', (code, signal) => gone(`ended (${signal ?? `exit code ${code}`})`));
  return child;
}

/**
 * Kills `child` (once) and holds the event loop only until it has exited, to reap it:
 * SIGKILL, which a process with its file open read-only can take at any moment, and which
 * is its only end while it is stuck in a statement or holds a stop signal (bin/guard/guard.ts).
 */
export function kill(child: ChildProcess): void {
  if (child.exitCode !== null || child.signalCode !== null) return;
  if (child.connected) child.disconnect();
  child.ref();
  child.kill('SIGKILL');
}

/** Whether `child` (the process and its channel) keeps this process's event loop alive. */
export function holdProcess(child: ChildProcess, hold: boolean): void {
  const how = hold ? 'ref' : 'unref';
  child[how]();
  child.channel?.[how]();
}
