// What `check --db FILE` says of one file (run in a guard process, bin/guard/guard.ts):
// whether it fits, whether its dates and amounts mean what the contract needs (on a sample
// of the data), its journal and whether it can be read now, what the search needs that it
// lacks, and what one real search answers. Opens read-only and changes nothing; it opens
// the file as the service would (database-file.ts), so run as the file's owner it lets
// SQLite create a WAL file's missing -wal and -shm, which are the owner's, as the service does.

import type Database from 'better-sqlite3';
import {
  checkMeaning,
  createBookingSearch,
  detectApplication,
  explainCount,
  findApplication,
  findRecommendedIndexes,
  findSchemaProblems,
  formatEuros,
  formatSearchResult,
  type Mapping,
  ownSchema,
  quoteName,
  recogniseOlder,
  recogniseOther,
  type TableNames,
  useMapping,
} from '../../lib/internal.js';
import { logValue, MAX_LINE_CHARACTERS } from '../base/index.js';
import { describeDatabaseError, ensureDatabaseFile, journalOf, notReadableNow, openDatabase } from './database-file.js';
import { judgeDatabaseFile } from './file-safety.js';

/** The verdict on the typical search's plan: by the mapping's window index where it names one. */
function describePlan(plan: string[], mapping: Mapping): string {
  const steps = plan.join('; ');
  const index = mapping.kind === 'application' ? mapping.windowIndex : undefined;
  if (index === undefined) {
    return plan.some((detail) => /^SCAN (?!\()/.test(detail))
      ? `The typical search (one amount in a month) reads every booking: ${steps}. It will be slow on a large book.`
      : `The typical search (one amount in a month) uses an index: ${steps}.`;
  }
  if (plan.some((detail) => detail.includes(` INDEX ${index.name} (`))) {
    return `The typical search (one amount in a month) reads only its month, by the index ${index.name}: ${steps}.`;
  }
  const advice =
    index.create === undefined
      ? `The file lacks the index ${index.name} that ${mapping.title} creates itself.`
      : `An admin may add an index that reads only the month (docs/applications.md says what it costs ${mapping.title}): ${index.create}`;
  return `The typical search (one amount in a month) reads every booking of the accounts, not only its month: ${steps}. It will be slow on a large book. ${advice}`;
}

/**
 * Writes the report to stdout; returns the exit code: 0 when the file fits the mapping
 * (given, or detected when `app` is undefined), its sample means what it must, it can be
 * read now, and the service would not refuse it for its directory (judged as the service
 * judges it, for the user that runs `check`); else 1.
 */
export function reportOnDatabase(file: string, app?: string, tables: Partial<TableNames> = {}): number {
  const lines: string[] = [`Database: ${file}`];
  // The rest of the report is still worth reading: the refusal is said last, and decides.
  let refusal: string | undefined;
  const finish = (code: number): number => {
    if (refusal !== undefined) lines.push(`Cannot be served: ${refusal}`);
    return writeReport(lines, refusal === undefined ? code : 1);
  };
  let db: Database.Database | undefined;
  try {
    // As the service does it: a file that is not a database is told so first, and alone.
    ensureDatabaseFile(file);
    const access = judgeDatabaseFile(file);
    if (access.kind === 'refused') refusal = access.line;
    // A refused file is still read, as a reader that creates nothing, so that the report is whole.
    const opened = openDatabase(file, (db) => chooseMapping(db, app, tables), access.kind === 'owner');
    lines.push(`Journal: ${journalOf(file).description}.`);
    if (!opened.readable) {
      lines.push(`Cannot be read now: ${opened.state.explanation}.`);
      return finish(1);
    }
    db = opened.db;
    const { mapping } = opened.value;
    if (!describeTables(lines, db, opened.value)) return finish(1);
    const meaning = checkMeaning(db, mapping);
    if (!describeData(lines, db, mapping, meaning)) return finish(1);
    if (mapping.kind === 'own') lines.push(...describeIndexes(db, mapping.tables.entries));
    lines.push(describePlan(explainCount(db, undefined, mapping), mapping));
    if (meaning.newest !== undefined) lines.push(...describeSearch(db, mapping, meaning.newest));
    return finish(0);
  } catch (error: unknown) {
    const state = notReadableNow(file, error);
    lines.push(
      state === undefined
        ? `Cannot check: ${describeDatabaseError(file, error)}`
        : `Cannot be read now: ${state.explanation}.`,
    );
    return finish(1);
  } finally {
    db?.close();
  }
}

/** The mapping and whether the file's tables fit it; false when they do not. */
function describeTables(lines: string[], db: Database.Database, chosen: ChosenMapping): boolean {
  const { mapping, detected, problems, other, older } = chosen;
  if (mapping.kind === 'application') {
    lines.push(
      detected
        ? `Mapping: ${mapping.title} (recognised from its tables, as the service recognises it; --app ${mapping.name} names it).`
        : `Mapping: ${mapping.title} (--app ${mapping.name}).`,
    );
  }
  if (problems.length > 0) {
    const what = mapping.kind === 'own' ? 'Schema' : `Tables of ${mapping.title}`;
    lines.push(`${what}: does not fit. Missing:`, ...problems.map((problem) => `  - ${problem}`));
    if (other !== undefined) {
      lines.push(`The file has the tables of ${other.title}: serve it with --app ${other.name}.`);
    }
    if (older !== undefined) {
      lines.push(
        `The file has the tables of ${older.title}, but not every column the service reads (a file of an older version?): check --app ${older.name} names them.`,
      );
    }
    lines.push('See docs/applications.md for the applications served with --app, and for serving another schema.');
    return false;
  }
  if (mapping.kind === 'own') lines.push(describeOwnTables(db, mapping.tables));
  else lines.push(`Tables of ${mapping.title}: fit (read as they are; nothing is created in the file).`);
  return true;
}

/** The bookings' range and whether a sample of them means what the contract needs; false when not. */
function describeData(
  lines: string[],
  db: Database.Database,
  mapping: Mapping,
  meaning: ReturnType<typeof checkMeaning>,
): boolean {
  const [count, first, last] = bookingRange(db, mapping);
  lines.push(count === 0 ? 'Bookings: none.' : `Bookings: ${count}, dated ${first} to ${last}.`);
  if (meaning.problems.length > 0) {
    lines.push(
      `Data: does not fit (${meaning.sampled} bookings looked at); the search would answer wrongly:`,
      ...meaning.problems.map((problem) => `  - ${problem}`),
    );
    return false;
  }
  lines.push(
    meaning.sampled === 0
      ? 'Data: no bookings to look at yet.'
      : `Data: fits (${meaning.sampled} bookings looked at: dates 'YYYY-MM-DD', amounts whole cents, ids whole and unique).`,
    ...meaning.notes.map((note) => `Note: ${note}`),
  );
  if (mapping.kind === 'application' && mapping.notes !== undefined) {
    useMapping(db, mapping);
    const notes = db.prepare<[], string>(mapping.notes).pluck().all();
    lines.push(...notes.map((note) => `Note: ${note}`));
  }
  return true;
}

/** One real search for the newest booking's amount in its month, and what it answers. */
function describeSearch(
  db: Database.Database,
  mapping: Mapping,
  newest: { date: string; amountCents: number },
): string[] {
  const [von, bis] = monthOf(newest.date);
  const betragCents = -newest.amountCents;
  const answer = createBookingSearch(
    db,
    mapping,
  )({ von, bis, betragCents, toleranzCents: 0, waehrung: 'EUR', limit: 3 });
  return [
    `A real search, ?von=${von}&bis=${bis}&betrag=${formatEuros(betragCents)}&limit=3, answers:`,
    `  ${formatSearchResult(answer)}`,
  ];
}

interface ChosenMapping {
  mapping: Mapping;
  detected: boolean;
  problems: string[];
  other?: Mapping | undefined;
  older?: Mapping | undefined;
}

/** The mapping asked for, or the one the file's tables give away. */
function chooseMapping(db: Database.Database, app: string | undefined, tables: Partial<TableNames>): ChosenMapping {
  const asked = app === undefined || app === 'own' ? ownSchema(tables) : findApplication(app);
  if (asked === undefined) throw new Error(`unknown application '${app}'`);
  const problems = findSchemaProblems(db, asked);
  if (problems.length === 0) return { mapping: asked, detected: false, problems };
  if (app === undefined) {
    const detected = detectApplication(db);
    if (detected !== undefined) return { mapping: detected, detected: true, problems: [] };
    const older = recogniseOlder(db);
    if (older !== undefined) return { mapping: asked, detected: false, problems, older };
  }
  // Asked for a mapping the file does not fit: name the one it fits, if any.
  return { mapping: asked, detected: false, problems, other: recogniseOther(db, asked) };
}

function describeOwnTables(db: Database.Database, tables: TableNames): string {
  const names = [tables.entries, tables.categories, tables.paymentMethods].sort();
  const kindOf = db.prepare<[string], string>('SELECT type FROM sqlite_schema WHERE name = ? COLLATE NOCASE').pluck();
  const kinds = names.map((name) => `${name}: ${kindOf.get(name.replace(/^\w+\./, '')) ?? 'table'}`);
  return `Schema: fits (${kinds.join(', ')}).`;
}

function describeIndexes(db: Database.Database, entries: string): string[] {
  const kind = db
    .prepare<[string], string>('SELECT type FROM sqlite_schema WHERE name = ? COLLATE NOCASE')
    .pluck()
    .get(entries.replace(/^\w+\./, ''));
  if (kind === 'view' || kind === undefined) {
    return [`Indexes: ${entries} is a view, so the search uses the indexes of the tables behind it.`];
  }
  return findRecommendedIndexes(db, entries).map((index) =>
    index.presentAs === undefined
      ? `Index on (${index.columns.join(', ')}) for ${index.purpose}: missing. To add it (the owning application must allow it): ${index.createStatement}`
      : `Index on (${index.columns.join(', ')}) for ${index.purpose}: present (${index.presentAs}).`,
  );
}

/** How many bookings the mapping serves, and their first and last date. */
function bookingRange(db: Database.Database, mapping: Mapping): [number, string | null, string | null] {
  if (mapping.kind === 'own') {
    const entries = quoteName(mapping.tables.entries);
    return (
      db
        .prepare<[], [number, string | null, string | null]>(
          `SELECT count(*), (SELECT min(date) FROM ${entries}), (SELECT max(date) FROM ${entries}) FROM ${entries}`,
        )
        .raw()
        .get() ?? [0, null, null]
    );
  }
  useMapping(db, mapping);
  return (
    db
      .prepare<[Record<string, unknown>], [number, string | null, string | null]>(
        `SELECT count(*), min(date), max(date) FROM (${mapping.bookings})`,
      )
      .raw()
      .get({ ...mapping.window('0000-01-01', '9999-12-31'), low: -(2 ** 53), high: 2 ** 53 }) ?? [0, null, null]
  );
}

/** The first and last day of the month of `date` ('YYYY-MM-DD'). */
function monthOf(date: string): [string, string] {
  const [year, month] = date.split('-').map(Number) as [number, number];
  const last = new Date(Date.UTC(year, month, 0)).getUTCDate();
  return [`${date.slice(0, 7)}-01`, `${date.slice(0, 7)}-${String(last).padStart(2, '0')}`];
}

/**
 * The report, a line each: dates, names and sentences from the file (an account name, a
 * booking's date) are printed escaped and bounded (bin/base/log.ts), never as terminal control
 * sequences or lines of their own.
 */
export function writeReport(lines: string[], code: number): number {
  const shown = lines.map((line) => logValue(line, MAX_LINE_CHARACTERS, { quotes: false }));
  process.stdout.write(`${shown.join('\n')}\n`);
  return code;
}
