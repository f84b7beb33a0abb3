// The guard: a child process that opens and judges a book's file before the serving
// process does, and runs the searches of a book that the serving process cannot bound
// itself. better-sqlite3 has no progress handler and no way to interrupt a statement, and a
// thread stuck in one cannot be ended (nor can a process that waits to join it): only a
// process can be killed. bin/guard/guarded.ts starts it, gives it a time limit for each answer,
// and kills and replaces it when the limit passes. What it answers on its channel
// (bin/base/channel.ts; the messages in bin/guard/messages.ts), by kind:
//
// - `open`: the file judged as the serving process would judge it (a regular file, the
//   owner rule, SQLite's answer, the schema loaded and the mapping validated, bookings
//   included), and whether the mapping reads only tables of the file, whose searches the
//   serving process may then run itself (lib/book.ts, unbounded). A file that
//   blocks its open (a named pipe put in its place) or a schema that takes seconds to load
//   holds up only this process. Bookings read through a view are judged between two
//   `judging` notes, so that the serving process ends a judgement past the time limit
//   and says which view was slow (bin/guard/messages.ts, slowJudgement).
// - `search`: one search over the file it opened last, in its own turns (lib/search/), for
//   a book whose mapping reads views, virtual tables or generated columns; as each starts
//   while others wait here, it says so (`running`), so that the serving process knows which
//   one did not end (alone, it is the one whose time runs out first there).
// - `check`: `check --db FILE` (bin/files/report.ts), written to the standard output it
//   shares; its judgement of the bookings as the open's.

import type Database from 'better-sqlite3';
import { CliError, createChannel, type Port, startLastResort } from '../base/index.js';
import {
  describeDatabaseError,
  identityOf,
  JudgedRefusal,
  openBookFile,
  openToServe,
  reportOnDatabase,
  type SearchTurns,
  SettingRefusal,
  walFilesOf,
} from '../files/index.js';
import {
  type GuardRequests,
  JUDGING,
  NO_FILE_OPEN,
  type OpenResult,
  RUNNING,
  toWire,
  type WireOutcome,
} from './messages.js';

let db: Database.Database | undefined;
let search: SearchTurns | undefined;
// The connections of the serving process's clients, by the number it gives each, so that
// the turns here rotate over them as they would there (lib/search/turns.ts).
const connections = new Map<number, object>();
// The number the serving process gave each search waiting here, said as it starts; and how
// many wait here, not answered yet.
const ids = new WeakMap<object, number>();
let unanswered = 0;

function closeFile(): void {
  search = undefined;
  connections.clear();
  if (db?.open === true) db.close();
  db = undefined;
}

function open(request: GuardRequests['open']): OpenResult {
  closeFile();
  const { file } = request;
  const before = identityOf(file);
  try {
    const opened = openToServe(
      file,
      (connection) => {
        const book = openBookFile(connection, request, judging).serve();
        return { book, unbounded: book.unbounded() };
      },
      undefined,
      request.application,
    );
    if (!opened.readable) return { kind: 'waiting', state: opened.state };
    const { book, unbounded } = opened.value;
    const log = walFilesOf(file);
    const identity = identityOf(file);
    if (identity === undefined || identity !== before) {
      opened.db.close();
      return { kind: 'changed' };
    }
    if (unbounded === undefined) opened.db.close();
    else {
      db = opened.db;
      // A schema changed under this connection (a view dropped or redefined) is refused as
      // the serving process's own searches refuse it; its error code, carried back, has the
      // book open and judge the file again (bin/guard/guarded-searches.ts).
      search = book.search({
        changed: () => {},
        waited: (_seconds, query) => {
          if (unanswered > 1) serving.notify(RUNNING, { id: ids.get(query) });
        },
      });
    }
    return { kind: 'ready', app: book.app, unbounded, schemaVersion: book.schemaVersion, identity, log };
  } catch (error: unknown) {
    const line = error instanceof CliError ? error.message : describeDatabaseError(file, error);
    return {
      kind: 'refused',
      line,
      ...(error instanceof JudgedRefusal && { judged: error instanceof SettingRefusal ? 'setting' : true }),
    };
  }
}

/** The judgement of the bookings through a view, said as it starts and ends: the serving process bounds it (JUDGING). */
function judging<T>(why: string, judge: () => T): T {
  serving.notify(JUDGING, { why });
  try {
    return judge();
  } finally {
    serving.notify(JUDGING, {});
  }
}

function connectionOf(id: number): object {
  let connection = connections.get(id);
  if (connection === undefined) {
    connection = {};
    connections.set(id, connection);
  }
  return connection;
}

const serving = createChannel(process as unknown as Port);
serving.handle('open', (body) => open(body as GuardRequests['open']));
serving.handle('check', (body) => {
  const book = body as GuardRequests['check'];
  return reportOnDatabase(book.db, book, judging);
});
serving.handle('forget', (body) => void connections.delete((body as GuardRequests['forget']).connection));
serving.handle('search', (body) => {
  const { query, id, from } = body as GuardRequests['search'];
  const current = search;
  if (current === undefined) {
    return { ok: false, error: { message: 'no file is open in the guard', code: NO_FILE_OPEN } } satisfies WireOutcome;
  }
  ids.set(query, id);
  unanswered += 1;
  return new Promise<WireOutcome>((resolve) => {
    const requester = { user: from.user, address: from.address, connection: connectionOf(from.connection) };
    current.queue(
      query,
      (outcome) => {
        unanswered -= 1;
        resolve(toWire(outcome));
      },
      requester,
    );
  });
});

// The serving process gone (killed, or its channel closed): this one goes too, also when
// it is stuck in a statement (bin/base/last-resort.ts).
process.on('disconnect', () => process.exit(0));
// Ctrl+C and Ctrl+Break reach every process of a terminal or console at once, WinSW stops
// the service with Ctrl+C, and a signal can be sent to the whole process group: SIGTERM
// (systemd's default KillMode, supervisord's stopasgroup, `kill -TERM -PGID`), SIGHUP (a
// terminal or ssh session closed, `systemctl kill -s HUP`). This one goes on answering the
// searches in flight; the serving process stops or reloads as the signal says, and ends it
// once it has answered them (or, gone, by the disconnect above).
for (const signal of ['SIGINT', 'SIGBREAK', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => {});
startLastResort({ parent: process.ppid });
