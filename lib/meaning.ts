// Whether a file's bookings mean what the contract needs, judged on a sample of the data rather than on column
// names: `check` refuses a mapping that would answer wrongly (a `date` holding 20260314 finds nothing).

import type { Database } from 'better-sqlite3';
import { type Mapping, quoteName, useMapping } from './mapping.js';
import { isCalendarDate } from './query.js';
import {
  amountSaid,
  blobText,
  bookingFault,
  bookingNamed,
  bookingNamer,
  refusalsOf,
  shownValue,
} from './search/index.js';

/** How many bookings `check` and `createHandler` judge: the file's first, enough to see its habits, cheap to read. */
export const SAMPLE_SIZE = 20_000;

const DATE_WITH_TIME = /^[0-9]{4}-[0-9]{2}-[0-9]{2}[T ]/;
// 'YYYY-MM-DD' in form, but not a day of the calendar (2026-02-30, 2026-13-01).
const SHAPE_OF_A_DAY = /^[0-9]{4}-[0-9]{2}-[0-9]{2}$/;

export interface MeaningReport {
  /** Bookings looked at. */
  sampled: number;
  /**
   * Why the file cannot be served exactly, each a sentence that says what to change, with a value from the
   * bookings as an example where one shows the fault; empty when it can. `check` prints them and exits 1.
   */
  problems: string[];
  /**
   * The same sentences with no value from a booking, then, if they left one out, that
   * `check` names them: what the service says of a file it refuses (createHandler's error,
   * hence the command's log line and the admin listener's /ready, read without credentials).
   */
  withoutValues: string[];
  /** Doubts that do not make the mapping wrong by themselves. */
  notes: string[];
  /** The newest valid booking of the sample, for a real search. */
  newest: { date: string; amountCents: number } | undefined;
}

type SampleRow = [id: unknown, date: unknown, amountCents: unknown, held?: unknown];

/**
 * The one judgement of a file, made by `check` and by `createHandler` alike, so that the
 * service never starts on a file `check` refuses, nor refuses one `check` passes: what the
 * application's mapping refuses (its `refusals`, e.g. a budget kept in another currency, said
 * alike both ways), else up to `size` bookings as the search would see them (the own schema's
 * entries, an application's `allBookings`, dates no window admits too): dates 'YYYY-MM-DD'
 * text of a real calendar day, amounts whole cents (INTEGER), ids whole numbers and unique;
 * zweck, category and account text, not blobs. A row beyond the sample, or written later, is
 * still never answered wrongly: the search answers 500 for it.
 */
export function checkMeaning(db: Database, mapping: Mapping, size = SAMPLE_SIZE): MeaningReport {
  useMapping(db, mapping);
  const refusals = refusalsOf(db, mapping)?.() ?? [];
  // Refused, the bookings are not read (a GnuCash save fails while a read holds its book).
  if (refusals.length > 0)
    return { sampled: 0, problems: [...refusals], withoutValues: [...refusals], notes: [], newest: undefined };
  const application = mapping.kind === 'application' ? mapping.title : undefined;
  const report = judge(readSample(db, mapping, size), application, bookingNamer(db, mapping));
  const blob = blobText(db, mapping, size);
  const and = (found: readonly string[], said?: string): string[] => [...found, ...(said ? [said] : [])];
  return {
    ...report,
    problems: and(report.problems, blob?.named),
    withoutValues: and(report.withoutValues, blob?.unnamed),
  };
}

function readSample(db: Database, mapping: Mapping, size: number): SampleRow[] {
  return mapping.kind === 'own'
    ? db
        .prepare<[number], SampleRow>(`SELECT id, date, amount_cents FROM ${quoteName(mapping.tables.entries)} LIMIT ?`)
        .raw()
        .all(size)
    : db
        .prepare<[Record<string, unknown>], SampleRow>(
          `SELECT id, date, amount_cents, amount_held FROM (${mapping.allBookings}) LIMIT +:size`,
        )
        .raw()
        .all({ low: -(2 ** 53), high: 2 ** 53, size });
}

/**
 * The judgement of `rows`, apart from reading them (for tests), said both ways: naming
 * values from the bookings and naming none. With `application` (a built-in mapping's title)
 * a broken row is the application's data, not a mapping to correct: the sentence says so
 * instead of proposing SQL.
 */
export function judge(
  rows: readonly SampleRow[],
  application?: string,
  named: Named = ([id, date]) => bookingNamed(id, date, undefined, undefined),
): MeaningReport {
  // One pass over the sample, at every start of every book: the first row of each kind of
  // fault, in the sample's order, and what the notes and the real search of `check` need;
  // no Set of 20,000 ids and no regular expression per row (four fifths of the pass).
  const dates: BadDates = { rows: [], count: 0, nulls: 0, sampled: rows.length };
  let badAmount: SampleRow | undefined;
  let badId: SampleRow | undefined;
  let amounts = 0;
  let negative = 0;
  let newest: MeaningReport['newest'];
  // The ids before the first one that is not a whole number, and whether they rose all along.
  const ids = new Float64Array(rows.length);
  let idCount = 0;
  let rising = true;
  for (const row of rows) {
    const [id, date, amount] = row;
    const dateOk = typeof date === 'string' && isCalendarDate(date);
    const amountOk = Number.isSafeInteger(amount);
    if (!dateOk) {
      if (dates.rows.length < 3) dates.rows.push(row);
      dates.count += 1;
      if (date === null) dates.nulls += 1;
    }
    if (!amountOk) badAmount ??= row;
    if (typeof amount === 'number') {
      amounts += 1;
      if (amount < 0) negative += 1;
    }
    if (badId === undefined) {
      if (!Number.isSafeInteger(id)) badId = row;
      else {
        if (idCount > 0 && (id as number) <= (ids[idCount - 1] as number)) rising = false;
        ids[idCount] = id as number;
        idCount += 1;
      }
    }
    if (dateOk && amountOk && (newest === undefined || (date as string) > newest.date)) {
      newest = { date: date as string, amountCents: amount as number };
    }
  }
  // Only said when every id is a whole number: the first booking whose id an earlier one has.
  const twice = badId === undefined && !rising ? firstRepeated(rows, ids) : undefined;

  const found: Problem[] = [];
  if (dates.count > 0) found.push(dateProblem(dates, application, named));
  if (badAmount !== undefined) found.push(amountProblem(badAmount, application, named));
  if (badId !== undefined) {
    found.push(
      said(
        `ids such as ${shownValue(badId[0])}${Number.isInteger(badId[0]) ? ' (the figure shown is already rounded)' : ''}`,
        'some ids',
        ` are not whole numbers within ±${Number.MAX_SAFE_INTEGER} (2^53 − 1), where an id is still exact: give an INTEGER id (a table's INTEGER PRIMARY KEY, or its rowid).`,
      ),
    );
  } else if (twice !== undefined) {
    found.push(
      said(
        `ids are not unique (${shownValue(twice[0])} is given to two bookings)`,
        'ids are not unique (two bookings have the same one)',
        ': each booking needs an id of its own.',
      ),
    );
  }
  const notes: string[] = [];
  if (amounts >= 20 && negative > 0.8 * amounts) {
    notes.push(
      `${Math.round((100 * negative) / amounts)}% of the amounts are negative; expenses must be POSITIVE in amount_cents (docs/API.md): if the application stores expenses negative, the mapping must negate them.`,
    );
  }
  const withoutValues = found.map((problem) => problem.unnamed);
  if (found.some((problem) => problem.named !== problem.unnamed)) withoutValues.push(CHECK_NAMES_THEM);
  return { sampled: rows.length, problems: found.map((problem) => problem.named), withoutValues, notes, newest };
}

/** Whether `ids` (whole numbers) hold one twice; then the first row, in order, whose id an earlier row has. */
function firstRepeated(rows: readonly SampleRow[], ids: Float64Array): SampleRow | undefined {
  const sorted = ids.sort();
  let repeated = false;
  for (let i = 1; i < sorted.length && !repeated; i += 1) repeated = sorted[i] === sorted[i - 1];
  if (!repeated) return undefined;
  const seen = new Set<unknown>();
  for (const row of rows) if (seen.size === seen.add(row[0]).size) return row;
  return undefined;
}

/**
 * A problem of the sample said twice from the one finding: `named`, with a value from the bookings as an example,
 * for `check`; `unnamed`, with none, for what the service says of a file it refuses. Only those words differ.
 */
type Problem = { named: string; unnamed: string };

const said = (named: string, plain: string, rest: string): Problem => ({ named: named + rest, unnamed: plain + rest });
const OTHER_PROGRAM = "a value written by another program, an import or the application's own API";

/** Said after the problems of the service's sentences when they left a value out. */
const CHECK_NAMES_THEM = 'booking-search-server check names examples from the bookings.';

type Named = (row: SampleRow) => string;

/** Of the `sampled`, the first bookings whose date is no day (check names up to three), how many, how many NULL. */
type BadDates = { rows: SampleRow[]; count: number; nulls: number; sampled: number };

/** What is said of the bookings whose date is no day; of an application's book, of the first, `named`. */
function dateProblem(dates: BadDates, application: string | undefined, named: Named): Problem {
  const { rows, count, nulls, sampled } = dates;
  const row = rows[0] as SampleRow;
  if (application !== undefined) return applicationDate(row, application, named);
  const date = row[1];
  if (date === null) {
    const none = `${nulls} booking${nulls === 1 ? ' has' : 's have'} no date (NULL)`;
    return said(
      none,
      none,
      `: no search can find ${nulls === 1 ? 'it' : 'them'}; give every booking a 'YYYY-MM-DD' date, or leave such rows out of the mapping.`,
    );
  }
  if (typeof date === 'number' && Number.isInteger(date) && date >= 10_000_101 && date <= 99_991_231) {
    return said(
      `dates are numbers such as ${date}`,
      'dates are numbers',
      ", not 'YYYY-MM-DD' text: every search would find nothing (a number sorts before any text). Give the date as text: printf('%04d-%02d-%02d', d / 10000, d / 100 % 100, d % 100).",
    );
  }
  if (typeof date === 'string' && DATE_WITH_TIME.test(date)) {
    return said(
      `dates carry a time, such as '${date}'`,
      'dates carry a time',
      ": a search would miss its last day, and 'datum' must be a date. Give the day alone: substr(date, 1, 10).",
    );
  }
  if (typeof date === 'string' && SHAPE_OF_A_DAY.test(date)) {
    // Each booking as the search's 500 names it in the log, so that its owner finds it.
    const them = rows.map((bad) => bookingFault(bad, named(bad))).join('; ');
    const more = count > rows.length ? `; and ${count - rows.length} more` : '';
    const some = `${count} of ${sampled} bookings ha${count === 1 ? 's' : 've'} a date that is no day of the calendar`;
    const rest = ': a search would answer a day that does not exist. Correct those bookings.';
    return { named: `${some} (${them}${more})${rest}`, unnamed: some + rest };
  }
  if (typeof date === 'number') {
    return said(
      `dates are numbers such as ${date}`,
      'dates are numbers',
      ", not 'YYYY-MM-DD' text: convert them, e.g. date(d, 'unixepoch') for unix seconds or date(d) for a Julian day.",
    );
  }
  return said(
    `dates such as ${shownValue(date)}`,
    'some dates',
    " are not 'YYYY-MM-DD' text: convert them, e.g. substr(d, 7, 4) || '-' || substr(d, 4, 2) || '-' || substr(d, 1, 2) for 'DD.MM.YYYY'.",
  );
}

/** What is said of `row`, the first whose amount is not whole cents; of an application's book, its booking `named`. */
function amountProblem(row: SampleRow, application: string | undefined, named: Named): Problem {
  if (application !== undefined) return applicationAmount(row, application, named);
  const amount = row[2];
  if (typeof amount === 'number' && Number.isInteger(amount)) {
    // An INTEGER beyond 2^53 − 1 is read as the nearest double: whole, but not the file's.
    const beyond = `lie beyond ±${Number.MAX_SAFE_INTEGER} cents, where a number in the answer is no longer exact`;
    return said(
      `amounts such as ${amount} ${beyond} (the figure shown is already rounded)`,
      `some amounts ${beyond}`,
      ': give amounts within that range, in INTEGER cents.',
    );
  }
  if (typeof amount === 'number') {
    return said(
      `amounts are REAL numbers such as ${amount}`,
      'some amounts are REAL numbers',
      ', not whole cents: an exact search misses them (4.35 × 100 is 434.99999999999994). Give INTEGER cents, expenses positive: CAST(round(x * 100) AS INTEGER) for euros.',
    );
  }
  if (amount === null) {
    const none = 'some amounts are NULL';
    return said(
      none,
      none,
      ': no search can find those bookings; give every booking an amount in whole cents, or leave such rows out of the mapping.',
    );
  }
  return said(
    `amounts such as ${shownValue(amount)}`,
    'some amounts',
    " are not whole cents: give INTEGER cents, expenses positive (text fractions such as '-25/2' must be computed in the mapping).",
  );
}

function applicationDate(row: SampleRow, application: string, named: Named): Problem {
  const text = typeof row[1] === 'string' || typeof row[1] === 'number';
  return said(
    bookingFault(row, named(row)),
    `a booking has ${text ? 'a date that is not a day of the calendar as YYYY-MM-DD' : 'no date the service can read'}`,
    `: ${application} holds a date the service cannot answer (${OTHER_PROGRAM}). A search that finds it would answer 500; correct the booking's date in ${application}.`,
  );
}

function applicationAmount([id, date, amount, held]: SampleRow, application: string, named: Named): Problem {
  return said(
    amountSaid(named([id, date, amount]), amount, held),
    amountSaid('a booking', amount, held, false),
    `: ${application} holds an amount the service cannot answer exactly${Number.isInteger(amount) ? '' : ` (a fraction of a cent, or ${OTHER_PROGRAM})`}. A search that finds it would answer 500; correct the booking in ${application}.`,
  );
}
