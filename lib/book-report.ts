// What `check` says of a book's file once it is open (the command adds what concerns the
// file itself: its journal, whether it can be read now, who may change it): whose tables it
// holds, whether they fit, whether a sample of its dates and amounts means what the contract
// needs, what the search needs that it lacks, and what one real search answers.

import type { Database as Db } from 'better-sqlite3';
import { findApplication } from './apps/index.js';
import { type AppSetting, appOption, type Judging, judgeMeaning, refusedFirst } from './database-handle.js';
import { type ApplicationMapping, type Mapping, ownSchema, quoteName, type TableNames, useMapping } from './mapping.js';
import type { MeaningReport } from './meaning.js';
import {
  detectApplication,
  findRecommendedIndexes,
  findSchemaProblems,
  recogniseOlder,
  recogniseOther,
} from './schema.js';
import { createBookingSearch, explainCount } from './search/index.js';
import { formatEuros, formatSearchResult } from './search-endpoint.js';

/** A book's file as `check` examines it: the mapping chosen on opening, the rest described after. */
export interface BookExamination {
  /**
   * Adds to `lines` what the file holds, a sentence a line (dates and names from the file
   * as they are: the command escapes them); false when the file cannot be served. `book`:
   * the file as a shell word, named in the commands its warnings give (else "the book").
   */
  describe(lines: string[], book?: string): boolean;
}

/**
 * Chooses the mapping of `db`: the one `app` names (`undefined`: the one its tables give away,
 * else the own schema under `tables`); throws for an unknown application. `appSetting`: how
 * the advice names the app a file of another application is served as; `judging`: how the
 * judgement of its bookings is run when their reads are not bounded (as the service's).
 */
export function examineBook(
  db: Db,
  app: string | undefined,
  tables: Partial<TableNames> = {},
  appSetting: AppSetting = appOption,
  judging?: Judging,
): BookExamination {
  // Refused by a setting (GnuCash holding a rollback-journal book), nothing else is read.
  const refused = refusedFirst(db, app, tables);
  if (refused !== undefined)
    return {
      describe(lines) {
        const { mapping, refusals } = refused;
        lines.push(mappingLine(mapping, app === undefined), tablesFit(mapping), REFUSED_HEAD, ...refusals.map(listed));
        return false;
      },
    };
  const chosen = chooseMapping(db, app, tables);
  return {
    describe(lines, book) {
      const { mapping } = chosen;
      if (!describeTables(lines, db, chosen, appSetting)) return false;
      const meaning = judgeMeaning(db, mapping, judging);
      if (!describeData(lines, db, mapping, meaning)) return false;
      lines.push(...harmsOf(db, mapping, book).map((harm) => `Warning: ${harm}.`));
      if (mapping.kind === 'own') lines.push(...describeIndexes(db, mapping.tables.entries));
      lines.push(describePlan(explainCount(db, undefined, mapping), mapping));
      if (meaning.newest !== undefined) lines.push(...describeSearch(db, mapping, meaning.newest));
      return true;
    },
  };
}

/**
 * How many bookings the typical search reads when its plan reads every one (of the
 * accounts), as `check` judges that plan (describePlan); `undefined` when an index reads
 * only its month. The service warns of a large book that reads them all.
 */
export function bookingsScanned(db: Db, mapping: Mapping): number | undefined {
  return readsEveryBooking(explainCount(db, undefined, mapping), mapping) ? bookingRange(db, mapping)[0] : undefined;
}

/**
 * How serving the file can harm its application (the mapping's `harms`): sentences the
 * service logs as it opens the file and `check` prints as warnings. `book`: the file as a
 * shell word, where the caller knows it.
 */
export function harmsOf(db: Db, mapping: Mapping, book?: string): string[] {
  if (mapping.kind !== 'application' || mapping.harms === undefined) return [];
  return db
    .prepare<[{ book: string | null }], string>(mapping.harms)
    .pluck()
    .all({ book: book ?? null });
}

/**
 * What the file holds that is not served (the mapping's `notes`: accounts at GnuCash's top
 * level, accounts that share a name): `check`'s notes, which the service logs as it opens it.
 */
export function notesOf(db: Db, mapping: Mapping): string[] {
  if (mapping.kind !== 'application' || mapping.notes === undefined) return [];
  useMapping(db, mapping);
  return db.prepare<[], string>(mapping.notes).pluck().all();
}

/**
 * Whether the typical search's plan reads every booking: it does not use the mapping's
 * window index where the mapping names one, else it scans the own schema's table.
 */
function readsEveryBooking(plan: readonly string[], mapping: Mapping): boolean {
  const index = mapping.kind === 'application' ? mapping.windowIndex : undefined;
  if (index === undefined) return plan.some((detail) => /^SCAN (?!\()/.test(detail));
  return !plan.some((detail) => detail.includes(` INDEX ${index.name} (`));
}

/**
 * The verdict on the typical search's plan: by the mapping's window index where it names
 * one, in words (an application's plan runs to a screenful an admin cannot act on); else
 * the plan of the own schema's one table, which names the index an admin may add.
 */
function describePlan(plan: string[], mapping: Mapping): string {
  const steps = plan.join('; ');
  const index = mapping.kind === 'application' ? mapping.windowIndex : undefined;
  const scans = readsEveryBooking(plan, mapping);
  if (index === undefined) {
    return scans
      ? `The typical search (one amount in a month) reads every booking: ${steps}. It will be slow on a large book.`
      : `The typical search (one amount in a month) uses an index: ${steps}.`;
  }
  if (!scans) return `The typical search (one amount in a month) reads only its month, by the index ${index.name}.`;
  const advice =
    index.create === undefined
      ? `The file lacks the index ${index.name} that ${mapping.title} creates itself.`
      : `An admin may add an index that reads only the month (docs/applications.md says what it costs ${mapping.title}): ${index.create}`;
  return `The typical search (one amount in a month) reads every booking of the accounts, not only its month. It will be slow on a large book. ${advice}`;
}

/** The mapping and whether the file's tables fit it; false when they do not. */
function describeTables(lines: string[], db: Db, chosen: ChosenMapping, appSetting: AppSetting): boolean {
  const { mapping, detected, problems, other, older } = chosen;
  if (mapping.kind === 'application') lines.push(mappingLine(mapping, detected));
  if (problems.length > 0) {
    const what = mapping.kind === 'own' ? 'Schema' : `Tables of ${mapping.title}`;
    lines.push(`${what}: does not fit. Missing:`, ...problems.map((problem) => `  - ${problem}`));
    if (other !== undefined) {
      lines.push(`The file has the tables of ${other.title}: serve it with ${appSetting(other.name)}.`);
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
  else lines.push(tablesFit(mapping));
  return true;
}

function mappingLine(mapping: ApplicationMapping, detected: boolean): string {
  return detected
    ? `Mapping: ${mapping.title} (recognised from its tables, as the service recognises it; --app ${mapping.name} names it).`
    : `Mapping: ${mapping.title} (--app ${mapping.name}).`;
}

const tablesFit = (mapping: ApplicationMapping): string =>
  `Tables of ${mapping.title}: fit (read as they are; nothing is created in the file).`;

const REFUSED_HEAD =
  'Data: refused while a setting of its application holds (no booking read); served once it no longer does:';
const listed = (problem: string): string => `  - ${problem}`;

/** The bookings' range and whether a sample of them means what the contract needs; false when not. */
function describeData(lines: string[], db: Db, mapping: Mapping, meaning: MeaningReport): boolean {
  // Problems with no booking looked at: the mapping's refusals (a setting of the application),
  // while which no booking is read (a GnuCash save fails while a read holds its book).
  const problems = meaning.problems.map(listed);
  if (meaning.sampled === 0 && problems.length > 0) {
    lines.push(REFUSED_HEAD, ...problems);
    return false;
  }
  const [count, first, last] = bookingRange(db, mapping);
  const lookedAt = `${meaning.sampled} booking${meaning.sampled === 1 ? '' : 's'} looked at`;
  lines.push(count === 0 ? 'Bookings: none.' : `Bookings: ${count}, dated ${first} to ${last}.`);
  if (problems.length > 0) {
    lines.push(`Data: does not fit (${lookedAt}); the search would answer wrongly:`, ...problems);
    return false;
  }
  lines.push(
    meaning.sampled === 0
      ? 'Data: no bookings to look at yet.'
      : `Data: fits (${lookedAt}: dates 'YYYY-MM-DD', amounts whole cents, ids whole and unique).`,
    ...[...meaning.notes, ...notesOf(db, mapping)].map((note) => `Note: ${note}`),
  );
  return true;
}

/** One real search for the newest booking's amount in its month, and what it answers. */
function describeSearch(db: Db, mapping: Mapping, newest: { date: string; amountCents: number }): string[] {
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
function chooseMapping(db: Db, app: string | undefined, tables: Partial<TableNames>): ChosenMapping {
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

function describeOwnTables(db: Db, tables: TableNames): string {
  const names = [tables.entries, tables.categories, tables.paymentMethods].sort();
  const kindOf = db.prepare<[string], string>('SELECT type FROM sqlite_schema WHERE name = ? COLLATE NOCASE').pluck();
  const kinds = names.map((name) => `${name}: ${kindOf.get(name.replace(/^\w+\./, '')) ?? 'table'}`);
  return `Schema: fits (${kinds.join(', ')}).`;
}

function describeIndexes(db: Db, entries: string): string[] {
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
function bookingRange(db: Db, mapping: Mapping): [number, string | null, string | null] {
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
        `SELECT count(*), min(date), max(date) FROM (${mapping.allBookings})`,
      )
      .raw()
      .get({ low: -(2 ** 53), high: 2 ** 53 }) ?? [0, null, null]
  );
}

/** The first and last day of the month of `date` ('YYYY-MM-DD'). */
function monthOf(date: string): [string, string] {
  const [year, month] = date.split('-').map(Number) as [number, number];
  const last = new Date(Date.UTC(year, month, 0)).getUTCDate();
  return [`${date.slice(0, 7)}-01`, `${date.slice(0, 7)}-${String(last).padStart(2, '0')}`];
}
