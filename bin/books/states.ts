// A followed book's file as states and transitions: what the service does when the file is replaced, deleted, locked or
// its schema changes, by `next(state, event)` alone: no I/O, no timers; bin/books/database.ts feeds and carries it out.

import { REFUSED_BY_SETTING } from '../../lib/internal.js';
import { backOff, due } from './backoff.js';
import type {
  Backoff,
  Cause,
  Effect,
  Ended,
  First,
  Look,
  Outcome,
  Phase,
  Served,
  Step,
  There,
  WatchEvent,
  WatchState,
} from './state-types.js';

export type { Backoff, Cause, Effect, First, Outcome, Phase, Step, WatchEvent, WatchState } from './state-types.js';

// A changed file is opened once its path stood still this long, not amid renames (a named pipe and back, again).
export const STABLE_MS = 250;

const OPENING = (message: string): Cause => ({ code: 'SQLITE_BUSY', message, waits: true });
// The end of the line of a file its application refuses (an Actual budget in USD), answered when served again.
const UNTIL_SET_BACK = 'answer 500 until that no longer holds';

/** The state at the start, `at`, and its effect: the first open (`first`: whose, Look). */
export function start<C>(file: string, at: number, first: First = 'start'): Step<C> {
  const look: Look = { first, sameFile: false, wasWaiting: false };
  const phase: Phase<C> = { is: 'opening', cause: OPENING('the file is being opened'), look };
  const state = { file, phase, noticed: false, stopped: false, lastLine: '', since: at, replaced: 0 };
  return { state, effects: [{ do: 'open', stillFor: 0 }] };
}

/**
 * What the service does on `event` in `state`: the state after it, and the effects to carry out.
 * `since` is when the state said (statusOf) began, whatever event began it: a served file
 * opened again is `waiting` from the look that closed it, and served from the open's end.
 * The events without a time (`notice`, `locked`, `stop`) change no state said.
 */
export function next<C>(state: WatchState<C>, event: WatchEvent<C>): Step<C> {
  const step = transition(state, event);
  if (!('at' in event) || describe(step.state.phase) === describe(state.phase)) return step;
  return { ...step, state: { ...step.state, since: event.at } };
}

function transition<C>(state: WatchState<C>, event: WatchEvent<C>): Step<C> {
  switch (event.on) {
    case 'tick':
      return tick(state, event);
    case 'broken':
      return broken(state, event);
    case 'notice':
      if (state.noticed || state.stopped) return { state, effects: [] };
      return { state: { ...state, noticed: true }, effects: [{ do: 'look soon' }] };
    case 'locked': {
      // A lock that lasts is told from the application's short writes (which may still cost a search its wait) by
      // the open that tells it at the start: made beside the connection, which serves on unless the lock holds then.
      const { phase } = state;
      if (state.stopped || state.noticed || phase.is !== 'served' || phase.checking) return { state, effects: [] };
      return lookBeside(state, phase, STABLE_MS);
    }
    case 'answered':
      if (state.stopped || state.phase.is !== 'served' || state.phase.lock === undefined) return { state, effects: [] };
      return readAgain(state, state.phase);
    case 'readable':
    case 'opened':
    case 'failed':
      if (state.phase.is === 'served' && state.phase.checking) return checked(state, state.phase, event);
      if (event.on === 'readable') return { state, effects: [] };
      return event.on === 'opened' ? opened(state, event) : failed(state, event);
    case 'stop': {
      if (state.stopped) return { state, effects: [] };
      const { phase } = state;
      const close: Effect<C>[] = phase.is === 'served' ? [{ do: 'close', connection: phase.connection }] : [];
      return { state: { ...state, stopped: true }, effects: [{ do: 'stop ticking' }, ...close] };
    }
  }
}

/**
 * A look at the path: the file opened again when it changed, or a search asked for it. The
 * same file, served: read through its search (`read`), so that what a client's search would
 * meet now (a new schema, a refused setting, a lock) is met without one, and told as a search
 * tells it; a lock said to hold the file: whether it still does.
 */
function tick<C>(state: WatchState<C>, { identity, written, at }: Extract<WatchEvent<C>, { on: 'tick' }>): Step<C> {
  const { phase, noticed } = state;
  if (state.stopped || phase.is === 'opening' || (phase.is === 'served' && phase.checking))
    return { state, effects: [] };
  if (phase.is === 'served') {
    const sameFile = identity === phase.inode;
    if (!noticed && sameFile)
      return phase.lock === undefined ? { state, effects: [{ do: 'read' }] } : lookBeside(state, phase, 0);
    const look: Look = { first: false, sameFile, wasWaiting: false, ...stillThere(identity, { served: phase.inode }) };
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
  // Not opened again: a timed-out open until another file is there, a broken file until written, a slow view until due.
  if (phase.timedOut !== undefined && !noticed && identity === phase.timedOut) return { state, effects: [] };
  if (phase.broken !== undefined && !noticed && written === phase.broken) return { state, effects: [] };
  // Refused by what it holds: opened again once written, then still for a look (GnuCash saving); another file at once.
  const { refused } = phase;
  const held = refused !== undefined && !noticed && identity === refused.identity;
  if (held && written !== refused.written)
    return { state: { ...state, phase: { ...phase, refused: { ...refused, written, changed: true } } }, effects: [] };
  if (held && !refused.changed) return { state, effects: [] };
  const { backoff } = phase;
  if (backoff !== undefined && !noticed && !due(backoff, written, at)) return { state, effects: [] };
  // The file last served, still at the path, is looked at as that file (another is a replacement); a slow view's wait doubles.
  const was = { ...stillThere(identity, phase), ...(backoff && { backoff }) };
  const waited = phase.cause.waits && was.another === undefined;
  const look: Look = { first: false, sameFile: false, wasWaiting: waited, ...was };
  // Opened again, a file not served keeps its last reason (/ready and the 500s say what to do), not "being opened".
  const cause = phase.quiet === true ? OPENING('the file is being opened again') : phase.cause;
  return {
    state: { ...state, noticed: false, phase: { is: 'opening', cause, look } },
    effects: [{ do: 'open', stillFor: STABLE_MS }],
  };
}

/** The file opened beside the connection, `stillFor` after its path stood still: `checked`. */
function lookBeside<C>(state: WatchState<C>, phase: Served<C>, stillFor: number): Step<C> {
  return { state: { ...state, phase: { ...phase, checking: true } }, effects: [{ do: 'open', stillFor, check: true }] };
}

/**
 * The open beside a connection whose search met a lock ended: served on when the file could
 * be read; a lock still held is said, the connection kept (a lock is not a broken file: the
 * searches go on trying, each within its wait); else it is where that open found it.
 */
function checked<C>(state: WatchState<C>, phase: Served<C>, event: Ended<C>): Step<C> {
  const { lock } = phase;
  const served: Phase<C> = { is: 'served', connection: phase.connection, inode: phase.inode, ...(lock && { lock }) };
  if (event.on === 'readable' && lock !== undefined && !state.stopped) return readAgain(state, served);
  if (event.on === 'readable' || state.stopped) {
    const look: Effect<C>[] = state.noticed && !state.stopped ? [{ do: 'look soon' }] : [];
    return { state: { ...state, phase: served }, effects: look };
  }
  if (event.on === 'opened' && !event.outcome.serving && event.outcome.cause.lock === true) {
    const { cause } = event.outcome;
    const line = `database ${state.file} cannot be read yet: ${cause.message}; each search waits up to 100 ms for it, then answers 500 with Retry-After`;
    const effects: Effect<C>[] = state.noticed ? [{ do: 'look soon' }] : [];
    const held: Phase<C> = { ...served, lock: cause };
    return { state: { ...state, phase: held, lastLine: line }, effects: [...say(state, line, 'warning'), ...effects] };
  }
  const look: Look = { first: false, sameFile: true, wasWaiting: lock !== undefined, ...servedAs(phase.inode) };
  const step = next(
    { ...state, phase: { is: 'opening', cause: OPENING('the file is being opened again'), look } },
    event,
  );
  return { ...step, effects: [{ do: 'close', connection: phase.connection }, { do: 'stand in' }, ...step.effects] };
}

/** Pages read broken from the served file, unchanged since opened: not served until written (a judgement may pass). */
function broken<C>(state: WatchState<C>, { message, written }: Extract<WatchEvent<C>, { on: 'broken' }>): Step<C> {
  const { phase } = state;
  if (state.stopped || phase.is !== 'served') return { state, effects: [] };
  const cause: Cause = { code: 'SQLITE_CORRUPT', message, waits: false };
  const line = stateLine(state.file, cause);
  const now: Phase<C> = { is: 'unavailable', cause, ...servedAs(phase.inode), broken: written };
  const close: Effect<C> = { do: 'close', connection: phase.connection };
  const effects: Effect<C>[] = [close, { do: 'stand in' }, ...say(state, line, 'error')];
  return { state: { ...state, phase: now, noticed: false, lastLine: line }, effects };
}

/** A lock said to hold the file passed: served, said once. */
function readAgain<C>(state: WatchState<C>, phase: Served<C>): Step<C> {
  const served: Phase<C> = { is: 'served', connection: phase.connection, inode: phase.inode };
  const line = `database ${state.file} can be read now; serving it`;
  const effects: Effect<C>[] = [{ do: 'log', line, level: 'notice' }];
  if (state.noticed) effects.push({ do: 'look soon' });
  return { state: { ...state, phase: served, lastLine: '' }, effects };
}

/** An open ended with an outcome: served, or a state that is said when it is one to say. */
function opened<C>(state: WatchState<C>, { outcome, identity, at }: Extract<WatchEvent<C>, { on: 'opened' }>): Step<C> {
  const { phase, file } = state;
  const close: Effect<C>[] = outcome.serving ? [{ do: 'close', connection: outcome.connection }] : [];
  if (phase.is !== 'opening') return { state, effects: close };
  const { look } = phase;
  const ready: Effect<C>[] = look.first ? [{ do: 'ready' }] : [];
  // Stopped meanwhile: what was opened is closed, and nothing is said of the file.
  if (state.stopped) return { state, effects: [...close, ...ready] };
  const slow = !outcome.serving && outcome.slow === true ? backOff(outcome, look.backoff, at) : undefined;
  const now = phaseOf(outcome, stillThere(identity, look), slow);
  if (!outcome.serving) {
    // A passing moment is not said, but at the start: the start says where the file stands.
    if (!look.first && outcome.quiet === true) return { state: { ...state, phase: now }, effects: [] };
    const line = stateLine(state.file, outcome.cause);
    return { state: { ...state, phase: now, lastLine: line }, effects: [...say(state, line, 'warning'), ...ready] };
  }
  const serve: Effect<C> = { do: 'serve', connection: outcome.connection, inode: outcome.inode };
  // The first look's serving is said by the greeting.
  if (look.first) return { state: { ...state, phase: now }, effects: [serve, ...ready] };
  const again = look.sameFile && outcome.inode === identity;
  // The file last served, not read since (a chmod took its read away), is that file once read: not a replacement.
  const back = !look.sameFile && look.served !== undefined && outcome.inode === look.served && identity === look.served;
  const replaced = state.replaced + (look.wasWaiting || again || back ? 0 : 1);
  const line =
    back && state.lastLine.endsWith(UNTIL_SET_BACK)
      ? `database ${file}: what refused it no longer holds; serving it`
      : look.wasWaiting || back
        ? `database ${file} can be read now; serving it`
        : again
          ? `database ${file} was opened and checked again; serving it`
          : `database ${file} was replaced; serving the new file`;
  // Each start of serving is said, even the same as the last one (two restores in a row).
  return {
    state: { ...state, phase: now, replaced, lastLine: '' },
    effects: [serve, { do: 'log', line, level: 'notice' }],
  };
}

/** An open ended with a file that cannot be served, or none: a first look's end, by whose it is (First). */
function failed<C>(state: WatchState<C>, event: Extract<Ended<C>, { on: 'failed' }>): Step<C> {
  const { phase, file } = state;
  if (phase.is !== 'opening') return { state, effects: [] };
  const code = event.gone ? 'ENOENT' : event.bySetting ? REFUSED_BY_SETTING : 'INVALID';
  const cause: Cause = { code, message: event.message, waits: false };
  const { first } = phase.look;
  // A setting of its application (GnuCash open) ends a reload, not a start; one going on, or a join, keeps the file.
  const ends = first === 'reload' || (first === 'start' && !event.bySetting);
  const joined = first === 'joins' || (first === 'start' && !ends);
  // Another file stays another (a restore refused for the old log beside it), counted once it serves.
  const there = joined ? servedAs(event.identity) : stillThere(event.identity, phase.look);
  const refused = event.bySetting && { refused: { identity: event.identity, written: event.written, changed: false } };
  const now: Phase<C> = { is: 'unavailable', cause, ...(event.gone ? {} : there), ...refused };
  const end = { do: 'ready', error: ends ? event.error : undefined, unservable: !event.bySetting } as const;
  const ready: Effect<C>[] = first ? [end] : [];
  if (ends) return { state: { ...state, phase: now }, effects: ready };
  if (state.stopped) return { state, effects: ready };
  // The message as /ready gives it; one that ends a sentence is followed by another.
  const searches = `${event.message}${event.message.endsWith('.') ? ' Searches' : '; searches'}`;
  const line = event.gone
    ? `database ${file} is gone; searches answer 500 until it is back`
    : `${searches} ${event.bySetting ? UNTIL_SET_BACK : 'answer 500 until a valid file is there'}`;
  return { state: { ...state, phase: now, lastLine: line }, effects: [...say(state, line, 'error'), ...ready] };
}

/** The phase an open ended in; `was`: the file last served found at the path not served, or another file there. */
function phaseOf<C>(outcome: Outcome<C>, was: There, backoff?: Backoff): Phase<C> {
  if (outcome.serving) return { is: 'served', connection: outcome.connection, inode: outcome.inode };
  const { cause, timedOut, quiet } = outcome;
  const more = { ...(timedOut !== undefined && { timedOut }), ...(quiet && { quiet }), ...(backoff && { backoff }) };
  return { is: 'unavailable', cause, ...more, ...was };
}

/** `{ served }` when the inode of the file last served is known, else nothing. */
function servedAs(inode: string | undefined): { served?: string } {
  return inode === undefined ? {} : { served: inode };
}

/** What is at the path (`identity`) of the file last served (There). */
function stillThere(identity: string | undefined, { served, another }: There): There {
  return another || (served !== undefined && identity !== undefined && identity !== served)
    ? { another: true }
    : servedAs(served);
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

/** A state as a word and its cause, to tell whether an event changed it. */
function describe<C>(phase: Phase<C>): string {
  const cause = phase.is === 'served' ? phase.lock : phase.cause;
  return cause === undefined ? 'serving' : `${cause.code}: ${cause.message}`;
}

/**
 * What a search the stand-in took answers: the cause of now, or, once the file is served
 * again (the search waited for its login or its turn), a file being opened, which a retry
 * a second later finds served.
 */
export function answerCause<C>(state: WatchState<C>): Cause {
  return state.phase.is === 'served' ? OPENING('the file is being opened') : state.phase.cause;
}
