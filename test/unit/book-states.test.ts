// A followed book's file as states and transitions (bin/books/states.ts), without files: one
// row per transition, (state, event) → (state, effects). The connections are names; the
// driver that opens files and feeds these events is test/cli-database.test.ts's.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  answerCause,
  type Backoff,
  type Cause,
  type Effect,
  next,
  type Phase,
  STABLE_MS,
  start,
  type WatchEvent,
  type WatchState,
} from '../../bin/books/states.js';
import { statusOf } from '../../bin/books/status.js';
import { REFUSED_BY_SETTING } from '../../lib/errors.js';
import { LOCK_WAIT_MS } from '../../lib/search/index.js';

type C = string;
const FILE = '/srv/kasse.sqlite';
const T = 1_000;
const AT = 9_000;

const locked: Cause = { code: 'SQLITE_BUSY', message: 'database is locked (SQLITE_BUSY)', waits: true };
const opening: Cause = { code: 'SQLITE_BUSY', message: 'the file is being opened', waits: true };
const again: Cause = { code: 'SQLITE_BUSY', message: 'the file is being opened again', waits: true };
const changing: Cause = {
  code: 'SQLITE_BUSY',
  message: `${FILE} changed while it was opened; it is looked at again`,
  waits: true,
};
const timeout: Cause = { code: 'TIMEOUT', message: `database ${FILE} did not open within 5 s`, waits: false };
const goneText = `database ${FILE} does not exist`;
const gone: Cause = { code: 'ENOENT', message: goneText, waits: false };
const badText = `database ${FILE}: table bookings has no column amount`;
const bad: Cause = { code: 'INVALID', message: badText, waits: false };
const refusedText = `database ${FILE} cannot be served exactly while GnuCash holds it open`;
const refusedBySetting: Cause = { code: REFUSED_BY_SETTING, message: refusedText, waits: false };

const deniedText = `cannot open database ${FILE}: permission denied: the service may not read the file`;
const denied: Cause = { code: 'INVALID', message: deniedText, waits: false };
const DENIED_LINE = `${deniedText}; searches answer 500 until a valid file is there`;
const DENIED: WatchEvent<C> = {
  on: 'failed',
  error: new Error(deniedText),
  gone: false,
  identity: 'i1',
  message: deniedText,
  at: AT,
};
const GONE_LINE = `database ${FILE} is gone; searches answer 500 until it is back`;
const BAD_LINE = `${badText}; searches answer 500 until a valid file is there`;
const WAIT_LINE = `database ${FILE} cannot be read yet: ${locked.message}; searches answer 500 with Retry-After until it can`;
const TIMEOUT_LINE = `${timeout.message}; searches answer 500 until another file is there`;

const served = (connection: C, inode: string): Phase<C> => ({ is: 'served', connection, inode });
// Another program's lock, as the open beside the connection tells it: the connection is kept.
const held: Cause = { ...locked, lock: true };
// What a search does while the lock holds, as docs/API.md says: its wait, then the 500 with Retry-After.
const HELD_LINE = `database ${FILE} cannot be read yet: ${locked.message}; each search waits up to ${LOCK_WAIT_MS} ms for it, then answers 500 with Retry-After`;
const READ_LINE = `database ${FILE} can be read now; serving it`;
const holding = (connection: C, inode: string, more: { checking?: true } = {}): Phase<C> => ({
  is: 'served',
  connection,
  inode,
  ...more,
  lock: held,
});
const journal: Cause = {
  code: 'SQLITE_READONLY_ROLLBACK',
  message: 'kasse.sqlite-journal is a hot journal',
  waits: true,
};
const JOURNAL_LINE = `database ${FILE} cannot be read yet: ${journal.message}; searches answer 500 with Retry-After until it can`;
const ANSWERED: WatchEvent<C> = { on: 'answered', at: AT };
const brokenText = `database ${FILE} is damaged: a search read pages of it that are no database's`;
const broken: Cause = { code: 'SQLITE_CORRUPT', message: brokenText, waits: false };
const BROKEN: WatchEvent<C> = { on: 'broken', message: brokenText, written: 'f1', at: AT };
const BROKEN_LINE = `${brokenText}; searches answer 500 until another file is there`;
const checking = (connection: C, inode: string): Phase<C> => ({ is: 'served', connection, inode, checking: true });
const down = (
  cause: Cause,
  more: {
    timedOut?: string;
    quiet?: true;
    served?: string;
    another?: true;
    broken?: string;
    backoff?: Backoff;
    refused?: { identity: string | undefined; written: string | undefined; changed: boolean };
  } = {},
): Phase<C> => ({
  is: 'unavailable',
  cause,
  ...more,
});
const looking = (
  cause: Cause,
  look: {
    first?: false | 'start' | 'reload' | 'joins';
    sameFile?: boolean;
    wasWaiting?: boolean;
    served?: string;
    another?: true;
    backoff?: Backoff;
  } = {},
): Phase<C> => ({
  is: 'opening',
  cause,
  look: { first: false, sameFile: false, wasWaiting: false, ...look },
});
const first = looking(opening, { first: 'start' });

function state(phase: Phase<C>, more: Partial<WatchState<C>> = {}): WatchState<C> {
  return { file: FILE, phase, noticed: false, stopped: false, lastLine: '', since: T, replaced: 0, ...more };
}

const LOCKED: WatchEvent<C> = { on: 'locked' };
const READABLE: WatchEvent<C> = { on: 'readable', at: AT };
const tick = (identity: string | undefined, written?: string): WatchEvent<C> => ({
  on: 'tick',
  identity,
  ...(written !== undefined && { written }),
  at: AT,
});
const openedAs = (connection: C, inode: string, identity = inode): WatchEvent<C> => ({
  on: 'opened',
  outcome: { serving: true, connection, inode },
  identity,
  at: AT,
});
const openedDown = (cause: Cause, more: { timedOut?: string; quiet?: true } = {}): WatchEvent<C> => ({
  on: 'opened',
  outcome: { serving: false, cause, ...more },
  identity: 'i1',
  at: AT,
});
const ERROR = new Error('the CLI error');
const failed = (isGone: boolean): WatchEvent<C> => ({
  on: 'failed',
  error: ERROR,
  gone: isGone,
  identity: isGone ? undefined : 'i1',
  message: isGone ? goneText : badText,
  at: AT,
});
const log = (line: string, level: 'notice' | 'warning' | 'error'): Effect<C> => ({ do: 'log', line, level });
// A setting of the application refuses the file (an Actual budget set to USD while served).
const setText = `${FILE} cannot be served exactly: the budget is kept in USD, and the service answers in euros only.`;
const set: Cause = { code: REFUSED_BY_SETTING, message: setText, waits: false };
const SET_LINE = `${setText} Searches answer 500 until that no longer holds`;
/** Refused by a setting, as its line said: `refused` the file refused and how it was last seen; `was` the file served. */
const refusedAs = (
  refused: { identity: string; written: string; changed: boolean },
  was: { served: string } | { another: true } = { served: 'i1' },
): WatchState<C> => state(down(set, { ...was, refused }), { lastLine: SET_LINE });
const SETTING: WatchEvent<C> = {
  on: 'failed',
  error: ERROR,
  gone: false,
  identity: 'i1',
  written: 'f1',
  bySetting: true,
  message: setText,
  at: AT,
};
const open = (stillFor: number): Effect<C> => ({ do: 'open', stillFor });
const slowText =
  "judging its bookings took longer than --search-timeout (1 s) and was ended: 'kasse' is a view, slow to read now";
const slowView: Cause = { code: 'SQLITE_BUSY', message: slowText, waits: true };
const SLOW_LINE = `database ${FILE} cannot be read yet: ${slowText}; searches answer 500 with Retry-After until it can`;
// A try that began to read the file at `began` (its fingerprint then f1) and ended at AT.
const slowOpened = (began: number): WatchEvent<C> => ({
  on: 'opened',
  outcome: { serving: false, cause: slowView, slow: true, written: 'f1', began },
  identity: 'i1',
  at: AT,
});
const backoff = (waitMs: number): Backoff => ({ written: 'f1', ended: AT, leastMs: 6_000, waitMs });

interface Row {
  name: string;
  from: WatchState<C>;
  on: WatchEvent<C>;
  to: WatchState<C>;
  effects: Effect<C>[];
}

const ROWS: Row[] = [
  // The first look: the start goes on, or ends; nothing said of a file served (the greeting is).
  {
    name: 'first open serves',
    from: state(first),
    on: openedAs('A', 'i1'),
    to: state(served('A', 'i1'), { since: AT }),
    effects: [{ do: 'serve', connection: 'A', inode: 'i1' }, { do: 'ready' }],
  },
  {
    name: 'first open finds the file locked: waited for, said once',
    from: state(first),
    on: openedDown(locked),
    to: state(down(locked), { since: AT, lastLine: WAIT_LINE }),
    effects: [log(WAIT_LINE, 'warning'), { do: 'ready' }],
  },
  {
    name: 'first open finds the file changing: said all the same',
    from: state(first),
    on: openedDown(changing, { quiet: true }),
    to: state(down(changing, { quiet: true }), {
      since: AT,
      lastLine: `database ${FILE} cannot be read yet: ${changing.message}; searches answer 500 with Retry-After until it can`,
    }),
    effects: [
      log(
        `database ${FILE} cannot be read yet: ${changing.message}; searches answer 500 with Retry-After until it can`,
        'warning',
      ),
      { do: 'ready' },
    ],
  },
  {
    name: 'first open finds no database: the start ends',
    from: state(first),
    on: failed(true),
    to: state(down(gone), { since: AT }),
    effects: [{ do: 'ready', error: ERROR, unservable: true }],
  },
  {
    name: 'first open finds a schema that does not fit: the start ends',
    from: state(first),
    on: failed(false),
    to: state(down(bad), { since: AT }),
    effects: [{ do: 'ready', error: ERROR, unservable: true }],
  },
  // GnuCash keeping a book in rollback-journal mode open as the service starts: the other books are served.
  {
    name: 'first open refused by a setting of its application: the start goes on, the file refused until it changes, said',
    from: state(first),
    on: SETTING,
    to: { ...refusedAs({ identity: 'i1', written: 'f1', changed: false }), since: AT },
    effects: [log(SET_LINE, 'error'), { do: 'ready', error: undefined, unservable: false }],
  },
  {
    name: "a reload's first open refused by a setting of its application: the reload ends, the running books kept",
    from: state(looking(opening, { first: 'reload' })),
    on: SETTING,
    to: state(down(set, { refused: { identity: 'i1', written: 'f1', changed: false } }), { since: AT }),
    effects: [{ do: 'ready', error: ERROR, unservable: false }],
  },
  // A worker in place of another joins the running service: the file is in the state it is in.
  {
    name: 'first open of a process that joins the service finds no database: said as a deleted file, the start goes on',
    from: state(looking(opening, { first: 'joins' })),
    on: failed(true),
    to: state(down(gone), { since: AT, lastLine: GONE_LINE }),
    effects: [log(GONE_LINE, 'error'), { do: 'ready', error: undefined, unservable: true }],
  },
  {
    name: 'first open of a process that joins the service finds a schema that does not fit: said, the start goes on',
    from: state(looking(opening, { first: 'joins' })),
    on: failed(false),
    to: state(down(bad, { served: 'i1' }), {
      since: AT,
      lastLine: `${badText}; searches answer 500 until a valid file is there`,
    }),
    effects: [
      log(`${badText}; searches answer 500 until a valid file is there`, 'error'),
      { do: 'ready', error: undefined, unservable: true },
    ],
  },
  {
    // Its file is the one the service serves as far as it can tell: read again, it is that file, not a replacement.
    name: 'first open of a process that joins the service cannot read the file: said, the file at the path kept in mind',
    from: state(looking(opening, { first: 'joins' })),
    on: DENIED,
    to: state(down(denied, { served: 'i1' }), { since: AT, lastLine: DENIED_LINE }),
    effects: [log(DENIED_LINE, 'error'), { do: 'ready', error: undefined, unservable: true }],
  },
  // Served: the tick looks at the path.
  {
    name: 'served, the same file at the path: read through its search',
    from: state(served('A', 'i1')),
    on: tick('i1'),
    to: state(served('A', 'i1')),
    effects: [{ do: 'read' }],
  },
  {
    name: 'served, another file renamed into place (a restore): closed, opened at once',
    from: state(served('A', 'i1')),
    on: tick('i2'),
    to: state(looking(again, { another: true }), { since: AT }),
    effects: [{ do: 'close', connection: 'A' }, { do: 'stand in' }, open(0)],
  },
  {
    // Nothing seen at the path: deleted, or behind a directory closed to the service (chmod 700).
    name: 'served, the file deleted or out of sight: closed, opened at once, the file served kept in mind',
    from: state(served('A', 'i1')),
    on: tick(undefined),
    to: state(looking(again, { served: 'i1' }), { since: AT }),
    effects: [{ do: 'close', connection: 'A' }, { do: 'stand in' }, open(0)],
  },
  {
    name: 'its directory closed to the service: not served, the file kept in mind, said as /ready says it',
    from: state(looking(again, { served: 'i1' })),
    on: DENIED,
    to: state(down(denied, { served: 'i1' }), { since: AT, lastLine: DENIED_LINE }),
    effects: [log(DENIED_LINE, 'error')],
  },
  {
    name: 'still out of sight at the retry tick: looked at as the file served',
    from: state(down(denied, { served: 'i1' }), { lastLine: DENIED_LINE }),
    on: tick(undefined),
    to: state(looking(denied, { served: 'i1' }), { lastLine: DENIED_LINE }),
    effects: [open(STABLE_MS)],
  },
  {
    // Waiting while it was opened (`since` the look), served from the open's end.
    name: 'the replacement serves: counted, said',
    from: state(looking(again), { lastLine: 'an older line' }),
    on: openedAs('B', 'i2'),
    to: state(served('B', 'i2'), { since: AT, replaced: 1 }),
    effects: [
      { do: 'serve', connection: 'B', inode: 'i2' },
      log(`database ${FILE} was replaced; serving the new file`, 'notice'),
    ],
  },
  {
    // A backup moved over a WAL file, refused for the old log beside it, then waited for.
    name: 'another file that cannot be served stays another: counted once it serves',
    from: state(looking(again, { another: true })),
    on: failed(false),
    to: state(down(bad, { another: true }), { since: AT, lastLine: BAD_LINE }),
    effects: [log(BAD_LINE, 'error')],
  },
  {
    name: 'the deleted file is gone',
    from: state(looking(again)),
    on: failed(true),
    to: state(down(gone), { since: AT, lastLine: GONE_LINE }),
    effects: [log(GONE_LINE, 'error')],
  },
  // Not served: every tick is the retry, once the path stood still.
  {
    name: 'missing, the retry tick: opened again, its reason kept meanwhile',
    from: state(down(gone), { lastLine: GONE_LINE }),
    on: tick(undefined),
    to: state(looking(gone), { lastLine: GONE_LINE }),
    effects: [open(STABLE_MS)],
  },
  {
    name: 'still missing: not said again, since kept',
    from: state(looking(gone), { lastLine: GONE_LINE }),
    on: failed(true),
    to: state(down(gone), { lastLine: GONE_LINE }),
    effects: [],
  },
  {
    name: 'the file is back: counted as another file, said',
    from: state(looking(gone), { lastLine: GONE_LINE, replaced: 1 }),
    on: openedAs('C', 'i3'),
    to: state(served('C', 'i3'), { since: AT, replaced: 2 }),
    effects: [
      { do: 'serve', connection: 'C', inode: 'i3' },
      log(`database ${FILE} was replaced; serving the new file`, 'notice'),
    ],
  },
  // Locked: waited for with Retry-After, and not counted as another file when it passes.
  {
    name: 'opened again, the file is locked',
    from: state(looking(again)),
    on: openedDown(locked),
    to: state(down(locked), { since: AT, lastLine: WAIT_LINE }),
    effects: [log(WAIT_LINE, 'warning')],
  },
  {
    name: 'locked, the retry tick',
    from: state(down(locked), { lastLine: WAIT_LINE }),
    on: tick('i1'),
    to: state(looking(locked, { wasWaiting: true }), { lastLine: WAIT_LINE }),
    effects: [open(STABLE_MS)],
  },
  {
    name: 'still locked: not said again',
    from: state(looking(locked, { wasWaiting: true }), {
      lastLine: WAIT_LINE,
    }),
    on: openedDown(locked),
    to: state(down(locked), { lastLine: WAIT_LINE }),
    effects: [],
  },
  {
    name: 'the lock passed: served, not counted',
    from: state(looking(locked, { wasWaiting: true }), {
      lastLine: WAIT_LINE,
    }),
    on: openedAs('A', 'i1'),
    to: state(served('A', 'i1'), { since: AT }),
    effects: [
      { do: 'serve', connection: 'A', inode: 'i1' },
      log(`database ${FILE} can be read now; serving it`, 'notice'),
    ],
  },
  // A lock that outlasted a search's wait: the file opened beside the connection; a lock
  // still held then is waited for as one the start found, a short one changes nothing.
  {
    name: 'served, a search meets a lock it could not wait out: opened beside the connection once the path stands still',
    from: state(served('A', 'i1')),
    on: LOCKED,
    to: state(checking('A', 'i1')),
    effects: [{ do: 'open', stillFor: STABLE_MS, check: true }],
  },
  {
    name: 'a lock met again while the file is opened beside the connection: one open',
    from: state(checking('A', 'i1')),
    on: LOCKED,
    to: state(checking('A', 'i1')),
    effects: [],
  },
  {
    name: 'a lock met after a search found the schema changed: left to that look',
    from: state(served('A', 'i1'), { noticed: true }),
    on: LOCKED,
    to: state(served('A', 'i1'), { noticed: true }),
    effects: [],
  },
  {
    name: 'a lock met while the file is opened: left to that look',
    from: state(looking(again)),
    on: LOCKED,
    to: state(looking(again)),
    effects: [],
  },
  {
    name: 'a tick while the file is opened beside the connection, even another file at the path: left to the open',
    from: state(checking('A', 'i1')),
    on: tick('i2'),
    to: state(checking('A', 'i1')),
    effects: [],
  },
  {
    name: 'the open beside the connection finds the file readable: the lock was short; served on, nothing said',
    from: state(checking('A', 'i1'), { lastLine: 'an older line' }),
    on: READABLE,
    to: state(served('A', 'i1'), { lastLine: 'an older line' }),
    effects: [],
  },
  {
    name: 'the file readable, a search found the schema changed meanwhile: looked at at once',
    from: state(checking('A', 'i1'), { noticed: true }),
    on: READABLE,
    to: state(served('A', 'i1'), { noticed: true }),
    effects: [{ do: 'look soon' }],
  },
  {
    name: 'readable, not opened beside a connection: nothing',
    from: state(served('A', 'i1')),
    on: READABLE,
    to: state(served('A', 'i1')),
    effects: [],
  },
  {
    name: 'the open beside the connection finds the lock held: closed, waiting with its reason, said once',
    from: state(checking('A', 'i1')),
    on: openedDown(locked),
    to: state(down(locked, { served: 'i1' }), { since: AT, lastLine: WAIT_LINE }),
    effects: [{ do: 'close', connection: 'A' }, { do: 'stand in' }, log(WAIT_LINE, 'warning')],
  },
  {
    name: 'the open beside the connection finds a schema that does not fit: closed, said',
    from: state(checking('A', 'i1')),
    on: failed(false),
    to: state(down(bad, { served: 'i1' }), { since: AT, lastLine: BAD_LINE }),
    effects: [{ do: 'close', connection: 'A' }, { do: 'stand in' }, log(BAD_LINE, 'error')],
  },
  // A lock is not a broken file: while it holds the file, the connection is kept and its
  // searches go on trying; only what is said of the book changes, once each way.
  {
    name: 'the open beside the connection finds a lock held: served on, said waiting once',
    from: state(checking('A', 'i1')),
    on: openedDown(held),
    to: state(holding('A', 'i1'), { since: AT, lastLine: HELD_LINE }),
    effects: [log(HELD_LINE, 'warning')],
  },
  {
    name: 'a lock held, the tick: opened beside the connection at once',
    from: state(holding('A', 'i1'), { lastLine: HELD_LINE }),
    on: tick('i1'),
    to: state(holding('A', 'i1', { checking: true }), { lastLine: HELD_LINE }),
    effects: [{ do: 'open', stillFor: 0, check: true }],
  },
  {
    name: 'a lock held, a search meets it again: opened beside the connection once the path stands still',
    from: state(holding('A', 'i1'), { lastLine: HELD_LINE }),
    on: LOCKED,
    to: state(holding('A', 'i1', { checking: true }), { lastLine: HELD_LINE }),
    effects: [{ do: 'open', stillFor: STABLE_MS, check: true }],
  },
  {
    name: 'a lock still held: served on, not said again, since unchanged',
    from: state(holding('A', 'i1', { checking: true }), { lastLine: HELD_LINE }),
    on: openedDown(held),
    to: state(holding('A', 'i1'), { lastLine: HELD_LINE }),
    effects: [],
  },
  {
    name: 'a lock held, the open beside the connection finds the file readable: serving, said once',
    from: state(holding('A', 'i1', { checking: true }), { lastLine: HELD_LINE }),
    on: READABLE,
    to: state(served('A', 'i1'), { since: AT }),
    effects: [log(READ_LINE, 'notice')],
  },
  {
    name: 'a lock held, a search is answered: serving, said once',
    from: state(holding('A', 'i1'), { lastLine: HELD_LINE }),
    on: ANSWERED,
    to: state(served('A', 'i1'), { since: AT }),
    effects: [log(READ_LINE, 'notice')],
  },
  {
    name: 'a lock held, a search answered while the file is opened beside the connection: serving; that open is dropped',
    from: state(holding('A', 'i1', { checking: true }), { lastLine: HELD_LINE }),
    on: ANSWERED,
    to: state(served('A', 'i1'), { since: AT }),
    effects: [log(READ_LINE, 'notice')],
  },
  {
    name: 'served, its lock gone, the dropped open finds the lock: nothing',
    from: state(served('A', 'i1'), { since: AT }),
    on: openedDown(held),
    to: state(served('A', 'i1'), { since: AT }),
    effects: [],
  },
  {
    name: 'a search answered with no lock held: nothing',
    from: state(served('A', 'i1')),
    on: ANSWERED,
    to: state(served('A', 'i1')),
    effects: [],
  },
  {
    name: 'a lock held, the open beside the connection finds a hot journal: closed as any state that is not a lock',
    from: state(holding('A', 'i1', { checking: true }), { lastLine: HELD_LINE }),
    on: openedDown(journal),
    to: state(down(journal, { served: 'i1' }), { since: AT, lastLine: JOURNAL_LINE }),
    effects: [{ do: 'close', connection: 'A' }, { do: 'stand in' }, log(JOURNAL_LINE, 'warning')],
  },
  // A file waited for, out of sight (its directory closed), and another renamed into place meanwhile.
  {
    name: 'a hot journal on the file served, its path out of sight: waited for as the file served',
    from: state(looking(again, { served: 'i1' })),
    on: { on: 'opened', outcome: { serving: false, cause: journal }, identity: undefined, at: AT },
    to: state(down(journal, { served: 'i1' }), { since: AT, lastLine: JOURNAL_LINE }),
    effects: [log(JOURNAL_LINE, 'warning')],
  },
  {
    name: 'waited for, the file served back at the path: still the file waited for',
    from: state(down(journal, { served: 'i1' }), { lastLine: JOURNAL_LINE }),
    on: tick('i1'),
    to: state(looking(journal, { wasWaiting: true, served: 'i1' }), { lastLine: JOURNAL_LINE }),
    effects: [open(STABLE_MS)],
  },
  {
    name: 'waited for, another file at the path: not the file waited for',
    from: state(down(journal, { served: 'i1' }), { lastLine: JOURNAL_LINE }),
    on: tick('i2'),
    to: state(looking(journal, { another: true }), { lastLine: JOURNAL_LINE }),
    effects: [open(STABLE_MS)],
  },
  {
    name: 'the other file serves: counted and said as a replacement, not as the file waited for',
    from: state(looking(journal, { another: true }), { lastLine: JOURNAL_LINE }),
    on: openedAs('B', 'i2'),
    to: state(served('B', 'i2'), { since: AT, replaced: 1 }),
    effects: [
      { do: 'serve', connection: 'B', inode: 'i2' },
      log(`database ${FILE} was replaced; serving the new file`, 'notice'),
    ],
  },
  // The replacement must itself be waited for (a hot journal of its own): a replacement all the same.
  {
    name: 'another file at the path, with a hot journal of its own: waited for as that other file',
    from: state(looking(journal, { another: true }), { lastLine: JOURNAL_LINE }),
    on: { on: 'opened', outcome: { serving: false, cause: journal }, identity: 'i2', at: AT },
    to: state(down(journal, { another: true }), { lastLine: JOURNAL_LINE }),
    effects: [],
  },
  {
    name: 'the other file waited for, at the path still: looked at as a replacement, not as the file served',
    from: state(down(journal, { another: true }), { lastLine: JOURNAL_LINE }),
    on: tick('i2'),
    to: state(looking(journal, { another: true }), { lastLine: JOURNAL_LINE }),
    effects: [open(STABLE_MS)],
  },
  {
    name: 'served, another file renamed in that cannot be read yet: waited for as another file',
    from: state(looking(again, { another: true })),
    on: { on: 'opened', outcome: { serving: false, cause: journal }, identity: 'i2', at: AT },
    to: state(down(journal, { another: true }), { since: AT, lastLine: JOURNAL_LINE }),
    effects: [log(JOURNAL_LINE, 'warning')],
  },
  {
    name: 'a lock held, another file at the path: opened again as any replaced file',
    from: state(holding('A', 'i1'), { lastLine: HELD_LINE }),
    on: tick('i2'),
    to: state(looking(again, { another: true }), { since: AT, lastLine: HELD_LINE }),
    effects: [{ do: 'close', connection: 'A' }, { do: 'stand in' }, open(0)],
  },
  {
    name: 'stopped, a lock held, a search answered: nothing',
    from: state(holding('A', 'i1'), { stopped: true }),
    on: ANSWERED,
    to: state(holding('A', 'i1'), { stopped: true }),
    effects: [],
  },
  // The schema changed under a search (or a torn read, or its guard ended): looked at at once.
  {
    name: 'served, a search finds the schema changed',
    from: state(served('A', 'i1')),
    on: { on: 'notice' },
    to: state(served('A', 'i1'), { noticed: true }),
    effects: [{ do: 'look soon' }],
  },
  {
    name: 'noticed twice: one look',
    from: state(served('A', 'i1'), { noticed: true }),
    on: { on: 'notice' },
    to: state(served('A', 'i1'), { noticed: true }),
    effects: [],
  },
  {
    name: 'noticed, the same file: closed, opened once it stands still',
    from: state(served('A', 'i1'), { noticed: true }),
    on: tick('i1'),
    to: state(looking(again, { sameFile: true, served: 'i1' }), { since: AT }),
    effects: [{ do: 'close', connection: 'A' }, { do: 'stand in' }, open(STABLE_MS)],
  },
  {
    name: 'noticed while it is opened: looked at again after',
    from: state(looking(again)),
    on: { on: 'notice' },
    to: state(looking(again), { noticed: true }),
    effects: [{ do: 'look soon' }],
  },
  {
    name: 'a tick while it is opened',
    from: state(looking(again)),
    on: tick('i2'),
    to: state(looking(again)),
    effects: [],
  },
  {
    name: 'the new schema serves: the same file, not counted',
    from: state(looking(again, { sameFile: true, served: 'i1' })),
    on: openedAs('B', 'i1'),
    to: state(served('B', 'i1'), { since: AT }),
    effects: [
      { do: 'serve', connection: 'B', inode: 'i1' },
      log(`database ${FILE} was opened and checked again; serving it`, 'notice'),
    ],
  },
  {
    name: 'the same inode, but another file by the time it served: counted',
    from: state(looking(again, { sameFile: true, served: 'i1' })),
    on: openedAs('B', 'i1', 'i2'),
    to: state(served('B', 'i1'), { since: AT, replaced: 1 }),
    effects: [
      { do: 'serve', connection: 'B', inode: 'i1' },
      log(`database ${FILE} was replaced; serving the new file`, 'notice'),
    ],
  },
  {
    name: 'the new schema does not fit: not served until a valid file is there',
    from: state(looking(again, { sameFile: true, served: 'i1' })),
    on: failed(false),
    to: state(down(bad, { served: 'i1' }), { since: AT, lastLine: BAD_LINE }),
    effects: [log(BAD_LINE, 'error')],
  },
  // Its group's read taken away (chmod g-r) and given back: the same file, not another.
  {
    name: 'the file served cannot be read when opened again: not served, the file kept in mind',
    from: state(looking(again, { sameFile: true, served: 'i1' })),
    on: DENIED,
    to: state(down(denied, { served: 'i1' }), { since: AT, lastLine: DENIED_LINE }),
    effects: [log(DENIED_LINE, 'error')],
  },
  {
    name: 'unreadable, the retry tick, the file served still at the path: looked at as that file',
    from: state(down(denied, { served: 'i1' }), { lastLine: DENIED_LINE }),
    on: tick('i1'),
    to: state(looking(denied, { served: 'i1' }), { lastLine: DENIED_LINE }),
    effects: [open(STABLE_MS)],
  },
  {
    name: 'still unreadable: not said again, the file kept in mind',
    from: state(looking(denied, { served: 'i1' }), { lastLine: DENIED_LINE }),
    on: DENIED,
    to: state(down(denied, { served: 'i1' }), { lastLine: DENIED_LINE }),
    effects: [],
  },
  {
    name: 'the file served can be read again (chmod g+r): served, said so, not counted as another file',
    from: state(looking(denied, { served: 'i1' }), {
      lastLine: DENIED_LINE,
      replaced: 1,
    }),
    on: openedAs('B', 'i1'),
    to: state(served('B', 'i1'), { since: AT, replaced: 1 }),
    effects: [{ do: 'serve', connection: 'B', inode: 'i1' }, log(READ_LINE, 'notice')],
  },
  {
    name: 'a setting of the application refuses the file served: the line names the setting, not a valid file to come',
    from: state(looking(again, { sameFile: true, served: 'i1' })),
    on: SETTING,
    to: state(down(set, { served: 'i1', refused: { identity: 'i1', written: 'f1', changed: false } }), {
      since: AT,
      lastLine: SET_LINE,
    }),
    effects: [log(SET_LINE, 'error')],
  },
  // A refused file is read again only once written and then still for a look: a GnuCash book
  // in rollback-journal mode is not read while GnuCash saves it.
  {
    name: 'refused, the file as it was when refused: not opened again',
    from: refusedAs({ identity: 'i1', written: 'f1', changed: false }),
    on: tick('i1', 'f1'),
    to: refusedAs({ identity: 'i1', written: 'f1', changed: false }),
    effects: [],
  },
  {
    name: 'refused, the file written since: not opened while it is written',
    from: refusedAs({ identity: 'i1', written: 'f1', changed: false }),
    on: tick('i1', 'f2'),
    to: refusedAs({ identity: 'i1', written: 'f2', changed: true }),
    effects: [],
  },
  {
    name: 'refused, written, then still for a look: looked at as the file served, refused by a setting',
    from: refusedAs({ identity: 'i1', written: 'f2', changed: true }),
    on: tick('i1', 'f2'),
    to: state(looking(set, { served: 'i1' }), { lastLine: SET_LINE }),
    effects: [open(STABLE_MS)],
  },
  {
    name: 'a replacement refused (another file than the one served): not opened again while it is as it was',
    from: refusedAs({ identity: 'i2', written: 'f1', changed: false }),
    on: tick('i2', 'f1'),
    to: refusedAs({ identity: 'i2', written: 'f1', changed: false }),
    effects: [],
  },
  {
    name: 'a replacement refused with no file served before: not opened again while it is as it was',
    from: refusedAs({ identity: 'i2', written: 'f1', changed: false }, { another: true }),
    on: tick('i2', 'f1'),
    to: refusedAs({ identity: 'i2', written: 'f1', changed: false }, { another: true }),
    effects: [],
  },
  {
    name: 'refused, another file at the path: opened at once',
    from: refusedAs({ identity: 'i1', written: 'f1', changed: false }),
    on: tick('i2', 'f9'),
    to: state(looking(set, { another: true }), { lastLine: SET_LINE }),
    effects: [open(STABLE_MS)],
  },
  {
    name: 'the setting changed back: served again, said so',
    from: state(looking(set, { served: 'i1' }), { lastLine: SET_LINE }),
    on: openedAs('B', 'i1'),
    to: state(served('B', 'i1'), { since: AT }),
    effects: [
      { do: 'serve', connection: 'B', inode: 'i1' },
      log(`database ${FILE}: what refused it no longer holds; serving it`, 'notice'),
    ],
  },
  {
    name: 'the setting changed back while the application writes: after a passing moment, still said as the setting',
    from: state(looking(changing, { wasWaiting: true, served: 'i1' }), {
      lastLine: SET_LINE,
    }),
    on: openedAs('B', 'i1'),
    to: state(served('B', 'i1'), { since: AT }),
    effects: [
      { do: 'serve', connection: 'B', inode: 'i1' },
      log(`database ${FILE}: what refused it no longer holds; serving it`, 'notice'),
    ],
  },
  {
    name: 'refused by a setting, another file restored at the path: the new file served, counted',
    from: state(looking(set), { lastLine: SET_LINE }),
    on: openedAs('B', 'i2'),
    to: state(served('B', 'i2'), { since: AT, replaced: 1 }),
    effects: [
      { do: 'serve', connection: 'B', inode: 'i2' },
      log(`database ${FILE} was replaced; serving the new file`, 'notice'),
    ],
  },
  {
    name: 'unreadable, another file at the path: no longer the file served',
    from: state(down(denied, { served: 'i1' }), { lastLine: DENIED_LINE }),
    on: tick('i2'),
    to: state(looking(denied, { another: true }), { lastLine: DENIED_LINE }),
    effects: [open(STABLE_MS)],
  },
  {
    name: 'unreadable, the file served gone from the path: forgotten',
    from: state(looking(denied, { served: 'i1' }), { lastLine: DENIED_LINE }),
    on: failed(true),
    to: state(down(gone), { since: AT, lastLine: GONE_LINE }),
    effects: [log(GONE_LINE, 'error')],
  },
  {
    name: 'unreadable, then another file there serves: counted, said replaced',
    from: state(looking(denied), { lastLine: DENIED_LINE }),
    on: openedAs('B', 'i2'),
    to: state(served('B', 'i2'), { since: AT, replaced: 1 }),
    effects: [
      { do: 'serve', connection: 'B', inode: 'i2' },
      log(`database ${FILE} was replaced; serving the new file`, 'notice'),
    ],
  },
  // A cp over the file: it changed while it was opened, quietly looked at again.
  {
    name: 'the file changed while it was opened: not said',
    from: state(looking(again), { lastLine: 'an older line' }),
    on: openedDown(changing, { quiet: true }),
    to: state(down(changing, { quiet: true }), { since: AT, lastLine: 'an older line' }),
    effects: [],
  },
  {
    name: 'changing, the retry tick: "being opened again" meanwhile',
    from: state(down(changing, { quiet: true })),
    on: tick('i1'),
    to: state(looking(again, { wasWaiting: true }), { since: AT }),
    effects: [open(STABLE_MS)],
  },
  // An open that did not end in time: not tried again until another file is there.
  {
    name: 'the open timed out',
    from: state(looking(again)),
    on: openedDown(timeout, { timedOut: 'i1' }),
    to: state(down(timeout, { timedOut: 'i1' }), { since: AT, lastLine: TIMEOUT_LINE }),
    effects: [log(TIMEOUT_LINE, 'warning')],
  },
  {
    name: 'timed out, the same file: left alone',
    from: state(down(timeout, { timedOut: 'i1' })),
    on: tick('i1'),
    to: state(down(timeout, { timedOut: 'i1' })),
    effects: [],
  },
  {
    name: 'timed out, another file: opened',
    from: state(down(timeout, { timedOut: 'i1' })),
    on: tick('i2'),
    to: state(looking(timeout)),
    effects: [open(STABLE_MS)],
  },
  // Stopped: what is served is closed, what is opened meanwhile too, and nothing more said.
  {
    name: 'stop while served',
    from: state(served('A', 'i1')),
    on: { on: 'stop' },
    to: state(served('A', 'i1'), { stopped: true }),
    effects: [{ do: 'stop ticking' }, { do: 'close', connection: 'A' }],
  },
  {
    name: 'stop while opened',
    from: state(looking(again)),
    on: { on: 'stop' },
    to: state(looking(again), { stopped: true }),
    effects: [{ do: 'stop ticking' }],
  },
  {
    name: 'stopped, the open ends served: closed',
    from: state(looking(again), { stopped: true }),
    on: openedAs('B', 'i2'),
    to: state(looking(again), { stopped: true }),
    effects: [{ do: 'close', connection: 'B' }],
  },
  {
    name: 'stopped during the first look: closed, the start still settled',
    from: state(first, { stopped: true }),
    on: openedAs('B', 'i2'),
    to: state(first, { stopped: true }),
    effects: [{ do: 'close', connection: 'B' }, { do: 'ready' }],
  },
  {
    name: 'stopped, the open fails: nothing said',
    from: state(looking(again), { stopped: true }),
    on: failed(true),
    to: state(looking(again), { stopped: true }),
    effects: [],
  },
  {
    name: 'stopped, a tick',
    from: state(down(gone), { stopped: true }),
    on: tick('i2'),
    to: state(down(gone), { stopped: true }),
    effects: [],
  },
  {
    name: 'stopped, a notice',
    from: state(served('A', 'i1'), { stopped: true }),
    on: { on: 'notice' },
    to: state(served('A', 'i1'), { stopped: true }),
    effects: [],
  },
  {
    name: 'stopped, a lock met',
    from: state(served('A', 'i1'), { stopped: true }),
    on: LOCKED,
    to: state(served('A', 'i1'), { stopped: true }),
    effects: [],
  },
  {
    name: 'stop while the file is opened beside the connection',
    from: state(checking('A', 'i1')),
    on: { on: 'stop' },
    to: state(checking('A', 'i1'), { stopped: true }),
    effects: [{ do: 'stop ticking' }, { do: 'close', connection: 'A' }],
  },
  {
    name: 'stopped, the open beside the connection finds the file readable: nothing',
    from: state(checking('A', 'i1'), { stopped: true }),
    on: READABLE,
    to: state(served('A', 'i1'), { stopped: true }),
    effects: [],
  },
  {
    name: 'stopped, the open beside the connection finds the lock: nothing said',
    from: state(checking('A', 'i1'), { stopped: true }),
    on: openedDown(locked),
    to: state(served('A', 'i1'), { stopped: true }),
    effects: [],
  },
  // Broken pages read from a served file that did not change since it was opened.
  {
    name: 'broken pages of an unchanged served file: not served, said why, the connection closed',
    from: state(served('A', 'i1'), { noticed: true }),
    on: BROKEN,
    to: state(down(broken, { served: 'i1', broken: 'f1' }), { since: AT, lastLine: BROKEN_LINE }),
    effects: [{ do: 'close', connection: 'A' }, { do: 'stand in' }, log(BROKEN_LINE, 'error')],
  },
  {
    name: 'broken pages, the file the same at the next look: not opened again',
    from: state(down(broken, { served: 'i1', broken: 'f1' })),
    on: { on: 'tick', identity: 'i1', written: 'f1', at: AT },
    to: state(down(broken, { served: 'i1', broken: 'f1' })),
    effects: [],
  },
  {
    name: 'broken pages, the file written since (restored with cp): opened again as the file last served',
    from: state(down(broken, { served: 'i1', broken: 'f1' })),
    on: { on: 'tick', identity: 'i1', written: 'f2', at: AT },
    to: state(looking(broken, { served: 'i1' })),
    effects: [open(STABLE_MS)],
  },
  {
    name: 'broken pages read while the file is not served: nothing',
    from: state(down(bad)),
    on: BROKEN,
    to: state(down(bad)),
    effects: [],
  },
  // A view too slow to judge the bookings of a file opened again: tried again after a wait.
  {
    name: 'a view too slow to judge: waiting, the next try four times as long after as this one held the file',
    from: state(looking(again)),
    on: slowOpened(AT - 1_500),
    to: state(down(slowView, { backoff: backoff(6_000) }), { since: AT, lastLine: SLOW_LINE }),
    effects: [log(SLOW_LINE, 'warning')],
  },
  {
    name: 'a view too slow, the file as it was, before its wait passed: not opened',
    from: state(down(slowView, { backoff: backoff(6_000) })),
    on: { on: 'tick', identity: 'i1', written: 'f1', at: AT + 5_999 },
    to: state(down(slowView, { backoff: backoff(6_000) })),
    effects: [],
  },
  {
    name: 'a view too slow, the file as it was, its wait passed: opened again, the wait kept to double',
    from: state(down(slowView, { backoff: backoff(6_000) })),
    on: { on: 'tick', identity: 'i1', written: 'f1', at: AT + 6_000 },
    to: state(looking(slowView, { wasWaiting: true, backoff: backoff(6_000) })),
    effects: [open(STABLE_MS)],
  },
  {
    name: 'a view too slow, the file written since its try: opened again after the least wait, not the doubled one',
    from: state(down(slowView, { backoff: backoff(24_000) })),
    on: { on: 'tick', identity: 'i1', written: 'f2', at: AT + 6_000 },
    to: state(looking(slowView, { wasWaiting: true, backoff: backoff(24_000) })),
    effects: [open(STABLE_MS)],
  },
  {
    name: 'a view too slow, the file written since its try, before the least wait: not opened',
    from: state(down(slowView, { backoff: backoff(24_000) })),
    on: { on: 'tick', identity: 'i1', written: 'f2', at: AT + 5_999 },
    to: state(down(slowView, { backoff: backoff(24_000) })),
    effects: [],
  },
  {
    name: 'a view still too slow: the wait doubles, nothing said again',
    from: state(looking(slowView, { wasWaiting: true, backoff: backoff(6_000) }), { lastLine: SLOW_LINE }),
    on: slowOpened(AT - 1_500),
    to: state(down(slowView, { backoff: backoff(12_000) }), { lastLine: SLOW_LINE }),
    effects: [],
  },
  {
    name: 'a view still too slow: the wait doubles up to a minute',
    from: state(looking(slowView, { wasWaiting: true, backoff: backoff(48_000) }), { lastLine: SLOW_LINE }),
    on: slowOpened(AT - 1_500),
    to: state(down(slowView, { backoff: backoff(60_000) }), { lastLine: SLOW_LINE }),
    effects: [],
  },
  {
    name: 'stopped twice',
    from: state(served('A', 'i1'), { stopped: true }),
    on: { on: 'stop' },
    to: state(served('A', 'i1'), { stopped: true }),
    effects: [],
  },
];

for (const row of ROWS) {
  test(`file states: ${row.name}`, () => {
    assert.deepEqual(next(row.from, row.on), { state: row.to, effects: row.effects });
  });
}

test('file states: the start opens the file at once, its searches answered as being opened', () => {
  const { state: begun, effects } = start<C>(FILE, T);
  assert.deepEqual(begun, state(first));
  assert.deepEqual(effects, [open(0)]);
  assert.deepEqual(answerCause(begun), opening);
  assert.deepEqual(statusOf(begun), { state: 'waiting', reason: opening.message, since: T, replaced: 0 });
});

test('file states: a lock held on a served book: /ready says waiting with the lock, searches go on', () => {
  const status = statusOf(state(holding('A', 'i1'), { replaced: 3 }));
  assert.deepEqual(status, { state: 'waiting', reason: locked.message, since: T, replaced: 3 });
});

test('file states: what /ready says and what the stand-in answers, state by state', () => {
  const rows: [Phase<C>, string, Cause][] = [
    [served('A', 'i1'), 'serving', opening],
    [checking('A', 'i1'), 'serving', opening],
    [down(locked), 'waiting', locked],
    [down(gone), 'missing', gone],
    [down(bad), 'unusable', bad],
    [down(refusedBySetting), 'waiting', refusedBySetting],
    [down(timeout, { timedOut: 'i1' }), 'unusable', timeout],
    [down(broken, { served: 'i1', broken: 'f1' }), 'unusable', broken],
    [looking(again), 'waiting', again],
  ];
  for (const [phase, kind, cause] of rows) {
    const status = statusOf(state(phase, { replaced: 3 }));
    assert.deepEqual(status, {
      state: kind,
      reason: kind === 'serving' ? undefined : cause.message,
      since: T,
      replaced: 3,
    });
    assert.deepEqual(answerCause(state(phase)), cause);
  }
});
