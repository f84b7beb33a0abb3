// A followed book's file as states and transitions: what the service does when the file is
// replaced, deleted, locked, or its schema changes, decided by `next(state, event)` alone.
// No I/O, no timers: the driver (bin/books/database.ts) looks at the file, opens it, and
// feeds what it saw here as events; it carries out the effects this returns.

import type { DatabaseStatus } from './status.js';

// A changed file is opened only once its path has stood still this long: a file renamed into
// place again and again (a named pipe and back) is not opened in the middle of it.
export const STABLE_MS = 250;

/** Why searches cannot be answered now; `waits`: a state that passes by itself (Retry-After). */
export interface Cause {
  readonly code: string;
  readonly message: string;
  readonly waits: boolean;
}

/** How an open of the file ended: served over `connection`, or not, and why. */
export type Outcome<C> =
  | { readonly serving: true; readonly connection: C; readonly inode: string | undefined }
  | {
      readonly serving: false;
      readonly cause: Cause;
      /** The file whose open did not end within the time limit: not tried again until another is there. */
      readonly timedOut?: string | undefined;
      /** A passing moment (the file changed while it was opened), not said in the log. */
      readonly quiet?: true;
    };

/** An open under way: the first one, or a later look and what was before it. */
interface Look {
  readonly first: boolean;
  /** The state the look began in (describe), to tell whether it ends in another. */
  readonly before: string;
  /** The served file was still at the path when the look began (a schema change, a torn read). */
  readonly sameFile: boolean;
  /** The look began while the file was waited for (a lock, a journal, a WAL to recover). */
  readonly wasWaiting: boolean;
}

/** Where the file is: being opened, served (`checking`: opened again beside it), or not served (and why). */
export type Phase<C> =
  | { readonly is: 'opening'; readonly cause: Cause; readonly look: Look }
  | { readonly is: 'served'; readonly connection: C; readonly inode: string | undefined; readonly checking?: true }
  | {
      readonly is: 'unavailable';
      readonly cause: Cause;
      readonly timedOut?: string | undefined;
      readonly quiet?: true | undefined;
    };

export interface WatchState<C> {
  readonly file: string;
  readonly phase: Phase<C>;
  /** The file must be looked at again at once (a search found it changed under it). */
  readonly noticed: boolean;
  readonly stopped: boolean;
  /** The last line said of a state that lasts: said once, not at every look. */
  readonly lastLine: string;
  readonly since: number;
  readonly replaced: number;
}

export type WatchEvent<C> =
  /** The check tick (every second, or at once after `look soon`) saw the path's identity now. */
  | { readonly on: 'tick'; readonly identity: string | undefined }
  /** A search found the file changed under it: a new schema, a torn read, its guard ended. */
  | { readonly on: 'notice' }
  /** A search met a lock on the served file that outlasted its wait. */
  | { readonly on: 'locked' }
  /** The open beside the connection found that the file can be read. */
  | { readonly on: 'readable' }
  /** The open ended; `identity`: the path's identity then; `at`: the time then. */
  | { readonly on: 'opened'; readonly outcome: Outcome<C>; readonly identity: string | undefined; readonly at: number }
  /** The open ended with a file that cannot be served (`gone`: none at the path), said as `message`. */
  | {
      readonly on: 'failed';
      readonly error: unknown;
      readonly gone: boolean;
      readonly message: string;
      readonly at: number;
    }
  | { readonly on: 'stop' };

export type Effect<C> =
  /** Open the file once its path has stood still `stillFor` ms: `opened` or `failed` (`check`: a file that can be read, `readable`). */
  | { readonly do: 'open'; readonly stillFor: number; readonly check?: true }
  | { readonly do: 'close'; readonly connection: C }
  /** Requests go to the connection's handler from now on. */
  | { readonly do: 'serve'; readonly connection: C }
  /** Requests go to the stand-in: /status as always, searches the 500 of `answerCause`. */
  | { readonly do: 'stand in' }
  | { readonly do: 'log'; readonly line: string; readonly level: 'notice' | 'warning' | 'error' }
  /** Feed a `tick` at once (after this turn of the event loop). */
  | { readonly do: 'look soon' }
  /** The first look ended: the start goes on, or ends with `error`. */
  | { readonly do: 'ready'; readonly error?: unknown }
  /** Stop the check tick. */
  | { readonly do: 'stop ticking' };

type Ended<C> = Extract<WatchEvent<C>, { on: 'opened' | 'failed' | 'readable' }>;

export interface Step<C> {
  readonly state: WatchState<C>;
  readonly effects: readonly Effect<C>[];
}

const OPENING = (message: string): Cause => ({ code: 'SQLITE_BUSY', message, waits: true });

/** The state at the start, `at`, and its effect: the first open. */
export function start<C>(file: string, at: number): Step<C> {
  const look: Look = { first: true, before: '', sameFile: false, wasWaiting: false };
  const phase: Phase<C> = { is: 'opening', cause: OPENING('the file is being opened'), look };
  const state = { file, phase, noticed: false, stopped: false, lastLine: '', since: at, replaced: 0 };
  return { state, effects: [{ do: 'open', stillFor: 0 }] };
}

/** What the service does on `event` in `state`: the state after it, and the effects to carry out. */
export function next<C>(state: WatchState<C>, event: WatchEvent<C>): Step<C> {
  switch (event.on) {
    case 'tick':
      return tick(state, event.identity);
    case 'notice':
      if (state.noticed || state.stopped) return { state, effects: [] };
      return { state: { ...state, noticed: true }, effects: [{ do: 'look soon' }] };
    case 'locked': {
      // A lock that lasts is told from the short ones of the application's writes, which
      // may still cost a search its wait, by the open that tells it at the start: made
      // beside the connection, which serves on unless the lock is still held then.
      const { phase } = state;
      if (state.stopped || state.noticed || phase.is !== 'served' || phase.checking) return { state, effects: [] };
      return {
        state: { ...state, phase: { ...phase, checking: true } },
        effects: [{ do: 'open', stillFor: STABLE_MS, check: true }],
      };
    }
    case 'readable':
    case 'opened':
    case 'failed':
      if (state.phase.is === 'served' && state.phase.checking) return checked(state, state.phase, event);
      if (event.on === 'readable') return { state, effects: [] };
      return event.on === 'opened' ? opened(state, event.outcome, event.identity, event.at) : failed(state, event);
    case 'stop': {
      if (state.stopped) return { state, effects: [] };
      const { phase } = state;
      const close: Effect<C>[] = phase.is === 'served' ? [{ do: 'close', connection: phase.connection }] : [];
      return { state: { ...state, stopped: true }, effects: [{ do: 'stop ticking' }, ...close] };
    }
  }
}

/** A look at the path: the file opened again when it changed, or a search asked for it. */
function tick<C>(state: WatchState<C>, identity: string | undefined): Step<C> {
  const { phase, noticed } = state;
  if (state.stopped || phase.is === 'opening' || (phase.is === 'served' && phase.checking))
    return { state, effects: [] };
  if (phase.is === 'served') {
    const sameFile = identity === phase.inode;
    if (!noticed && sameFile) return { state, effects: [] };
    const look: Look = { first: false, before: describe(phase), sameFile, wasWaiting: false };
    return {
      state: {
        ...state,
        noticed: false,
        phase: { is: 'opening', cause: OPENING('the file is being opened again'), look },
      },
      effects: [
        { do: 'close', connection: phase.connection },
        { do: 'stand in' },
        { do: 'open', stillFor: noticed ? STABLE_MS : 0 },
      ],
    };
  }
  // An open that did not end in time is not tried again until another file is there.
  if (phase.timedOut !== undefined && !noticed && identity === phase.timedOut) return { state, effects: [] };
  const look: Look = { first: false, before: describe(phase), sameFile: false, wasWaiting: phase.cause.waits };
  // While it is opened again, a file that was not served keeps the reason it last gave:
  // /ready and the 500s go on saying what to do (start the application, let it roll back
  // its journal) until the file serves or fails otherwise, not "being opened" each second.
  const cause = phase.quiet === true ? OPENING('the file is being opened again') : phase.cause;
  return {
    state: { ...state, noticed: false, phase: { is: 'opening', cause, look } },
    effects: [{ do: 'open', stillFor: STABLE_MS }],
  };
}

/**
 * The open beside a connection whose search met a lock ended: served on when the file could
 * be read; else it is where that open found it, as after any look (a lock held: waited for).
 */
function checked<C>(state: WatchState<C>, phase: Extract<Phase<C>, { is: 'served' }>, event: Ended<C>): Step<C> {
  const served: Phase<C> = { is: 'served', connection: phase.connection, inode: phase.inode };
  if (event.on === 'readable' || state.stopped) {
    const look: Effect<C>[] = state.noticed && !state.stopped ? [{ do: 'look soon' }] : [];
    return { state: { ...state, phase: served }, effects: look };
  }
  const look: Look = { first: false, before: 'serving', sameFile: true, wasWaiting: false };
  const step = next(
    { ...state, phase: { is: 'opening', cause: OPENING('the file is being opened again'), look } },
    event,
  );
  return { ...step, effects: [{ do: 'close', connection: phase.connection }, { do: 'stand in' }, ...step.effects] };
}

/** An open ended with an outcome: served, or a state that is said when it is one to say. */
function opened<C>(state: WatchState<C>, outcome: Outcome<C>, identity: string | undefined, at: number): Step<C> {
  const { phase } = state;
  const close: Effect<C>[] = outcome.serving ? [{ do: 'close', connection: outcome.connection }] : [];
  if (phase.is !== 'opening') return { state, effects: close };
  const { look } = phase;
  const ready: Effect<C>[] = look.first ? [{ do: 'ready' }] : [];
  // Stopped meanwhile: what was opened is closed, and nothing is said of the file.
  if (state.stopped) return { state, effects: [...close, ...ready] };
  const now = phaseOf(outcome);
  const since = look.first || describe(now) === look.before ? state.since : at;
  if (!outcome.serving) {
    // A passing moment is not said, but at the start: the start says where the file stands.
    if (!look.first && outcome.quiet === true) return { state: { ...state, phase: now, since }, effects: [] };
    const line = stateLine(state.file, outcome.cause);
    return {
      state: { ...state, phase: now, since, lastLine: line },
      effects: [...say(state, line, 'warning'), ...ready],
    };
  }
  const serve: Effect<C> = { do: 'serve', connection: outcome.connection };
  // The first look's serving is said by the greeting.
  if (look.first) return { state: { ...state, phase: now }, effects: [serve, ...ready] };
  const again = look.sameFile && outcome.inode === identity;
  const replaced = state.replaced + (look.wasWaiting || again ? 0 : 1);
  const { file } = state;
  const line = look.wasWaiting
    ? `database ${file} can be read now; serving it`
    : again
      ? `database ${file} was opened and checked again; serving it`
      : `database ${file} was replaced; serving the new file`;
  // Each start of serving is said, even the same as the last one (two restores in a row).
  return {
    state: { ...state, phase: now, since, replaced, lastLine: '' },
    effects: [serve, { do: 'log', line, level: 'notice' }],
  };
}

/** An open ended with a file that cannot be served, or none: at the start, the start's end. */
function failed<C>(state: WatchState<C>, event: Extract<Ended<C>, { on: 'failed' }>): Step<C> {
  const { phase, file } = state;
  if (phase.is !== 'opening') return { state, effects: [] };
  const cause: Cause = { code: event.gone ? 'ENOENT' : 'INVALID', message: event.message, waits: false };
  const now: Phase<C> = { is: 'unavailable', cause };
  if (phase.look.first) return { state: { ...state, phase: now }, effects: [{ do: 'ready', error: event.error }] };
  if (state.stopped) return { state, effects: [] };
  const since = describe(now) === phase.look.before ? state.since : event.at;
  const line = event.gone
    ? `database ${file} is gone; searches answer 500 until it is back`
    : `${event.message}; searches answer 500 until a valid file is there`;
  const said = say(state, line, 'error');
  return { state: { ...state, phase: now, since, lastLine: line }, effects: said };
}

/** The phase an open ended in. */
function phaseOf<C>(outcome: Outcome<C>): Phase<C> {
  if (outcome.serving) return { is: 'served', connection: outcome.connection, inode: outcome.inode };
  const { cause, timedOut, quiet } = outcome;
  return { is: 'unavailable', cause, ...(timedOut !== undefined && { timedOut }), ...(quiet && { quiet }) };
}

/** A line of a state that lasts: said only when it is not the last one said. */
function say<C>(state: WatchState<C>, line: string, level: 'warning' | 'error'): Effect<C>[] {
  return line === state.lastLine ? [] : [{ do: 'log', line, level }];
}

/** The line of a state that is not served: one to wait for, or one that cannot be served. */
function stateLine(file: string, cause: Cause): string {
  return cause.waits
    ? `database ${file} cannot be read yet: ${cause.message}; searches answer 500 with Retry-After until it can`
    : `${cause.message}; searches answer 500 until another file is there`;
}

/** A state as a word and its cause, to tell whether a look at the file changed it. */
function describe<C>(phase: Phase<C>): string {
  return phase.is === 'served' ? 'serving' : `${phase.cause.code}: ${phase.cause.message}`;
}

/**
 * What a search the stand-in took answers: the cause of now, or, once the file is served
 * again (the search waited for its login or its turn), a file being opened, which a retry
 * a second later finds served.
 */
export function answerCause<C>(state: WatchState<C>): Cause {
  return state.phase.is === 'served' ? OPENING('the file is being opened') : state.phase.cause;
}

/** What the file is now, for /ready, /metrics and the books' state. */
export function statusOf<C>(state: WatchState<C>): DatabaseStatus {
  const { phase, since, replaced } = state;
  if (phase.is === 'served') return { state: 'serving', reason: undefined, since, replaced };
  const { cause } = phase;
  const kind = cause.waits ? 'waiting' : cause.code === 'ENOENT' ? 'missing' : 'unusable';
  return { state: kind, reason: cause.message, since, replaced };
}
