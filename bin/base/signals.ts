// The signals the service answers, heard here and nowhere else, in every kind of process
// (the only one, the primary of --workers, each worker): SIGINT and SIGTERM stop it (and
// Ctrl+Break in a Windows console; Ctrl+C there is SIGINT, and a service wrapper such as
// WinSW or NSSM stops a console program with Ctrl+C too); SIGHUP reloads it.

/** Runs `stop` on SIGINT, SIGTERM and SIGBREAK, with the signal; `again` is true from the second signal on. */
export function onStopSignals(stop: (again: boolean, signal: NodeJS.Signals) => void): void {
  let heard = false;
  const signalled = (signal: NodeJS.Signals): void => {
    const again = heard;
    heard = true;
    stop(again, signal);
  };
  process.on('SIGINT', signalled);
  process.on('SIGTERM', signalled);
  process.on('SIGBREAK', signalled);
}

/** What asked for a reload, as its log line names it. */
export type ReloadTrigger = 'SIGHUP' | 'POST /-/reload';

let trigger: ReloadTrigger = 'SIGHUP';

/** Runs `reload` on SIGHUP (never sent on Windows) or POST /-/reload, with which of them asked. */
export function onReloadSignal(reload: (by: ReloadTrigger) => void): void {
  process.on('SIGHUP', () => reload(trigger));
}

/**
 * Reloads as SIGHUP does, without a signal: for the admin listener's POST /-/reload, on
 * every platform (Windows has no SIGHUP). The primary of --workers passes it on (as SIGHUP).
 */
export function reloadAsSignalled(): void {
  trigger = 'POST /-/reload';
  try {
    process.emit('SIGHUP', 'SIGHUP');
  } finally {
    trigger = 'SIGHUP';
  }
}
