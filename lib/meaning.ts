// Whether a file's bookings mean what the contract needs, judged on a sample of the data
// rather than on column names: `check` refuses a mapping that would answer wrongly.
// (A column called `date` holding 20260314 has the right name and finds nothing.)

import type { Database } from 'better-sqlite3';
import { type Mapping, quoteName, useMapping } from './mapping.js';

/**
 * How many bookings are judged, by `check` and by `createHandler` alike: the first ones the
 * file gives, enough to see its habits, and cheap enough to read at every start.
 */
export const SAMPLE_SIZE = 20_000;

const DATE_WITH_TIME = /^[0-9]{4}-[0-9]{2}-[0-9]{2}[T ]/;

export interface MeaningReport {
  /** Bookings looked at. */
  sampled: number;
  /**
   * Why the file cannot be served exactly, each a sentence that says what to change; empty
   * when it can. `check` prints them and exits 1; `createHandler` throws with them.
   */
  problems: string[];
  /** Doubts that do not make the mapping wrong by themselves. */
  notes: string[];
  /** The newest valid booking of the sample, for a real search. */
  newest: { date: string; amountCents: number } | undefined;
}

type SampleRow = [id: unknown, date: unknown, amountCents: unknown];

/**
 * The one judgement of a file, made by `check` and by `createHandler` alike, so that the
 * service never starts on a file `check` refuses, nor refuses one `check` passes: what the
 * application's mapping cannot serve exactly (its `refusals`, e.g. a budget kept in another
 * currency), then up to `size` bookings as the search would see them (for the own schema:
 * the entries table itself, so that dates outside any text window are seen too): dates
 * 'YYYY-MM-DD' text, amounts whole cents (INTEGER), ids whole numbers and unique. A row
 * beyond the sample, or written later, is still never answered wrongly: the search answers
 * 500 for it (the row guard).
 */
export function checkMeaning(db: Database, mapping: Mapping, size = SAMPLE_SIZE): MeaningReport {
  useMapping(db, mapping);
  const refusals =
    mapping.kind === 'application' && mapping.refusals !== undefined
      ? db.prepare<[], string>(mapping.refusals).pluck().all()
      : [];
  const report = judge(readSample(db, mapping, size), mapping.kind === 'application' ? mapping.title : undefined);
  return { ...report, problems: [...refusals, ...report.problems] };
}

function readSample(db: Database, mapping: Mapping, size: number): SampleRow[] {
  return mapping.kind === 'own'
    ? db
        .prepare<[number], SampleRow>(`SELECT id, date, amount_cents FROM ${quoteName(mapping.tables.entries)} LIMIT ?`)
        .raw()
        .all(size)
    : db
        .prepare<[Record<string, unknown>], SampleRow>(
          `SELECT id, date, amount_cents FROM (${mapping.bookings}) LIMIT +:size`,
        )
        .raw()
        .all({ ...mapping.window('0000-01-01', '9999-12-31'), low: -(2 ** 53), high: 2 ** 53, size });
}

/**
 * The judgement of `rows`, apart from reading them (for tests). With `application` (a
 * built-in mapping's title) a broken row is the application's data, not a mapping to
 * correct: the sentence says so instead of proposing SQL.
 */
export function judge(rows: readonly SampleRow[], application?: string): MeaningReport {
  // One pass over the sample, at every start of every book: the first row of each kind of
  // fault, in the sample's order, and what the notes and the real search of `check` need.
  // Costs at every start of every book: no Set of 20,000 ids and no regular expression
  // per row (together about four fifths of the pass); the same verdicts, row for row.
  let badDate: SampleRow | undefined;
  let badAmount: SampleRow | undefined;
  let badId: SampleRow | undefined;
  let nullDates = 0;
  let amounts = 0;
  let negative = 0;
  let newest: MeaningReport['newest'];
  // The ids before the first one that is not a whole number, and whether they rose all along.
  const ids = new Float64Array(rows.length);
  let idCount = 0;
  let rising = true;
  for (const row of rows) {
    const id = row[0];
    const date = row[1];
    const amount = row[2];
    const dateOk = typeof date === 'string' && isDay(date);
    const amountOk = Number.isSafeInteger(amount);
    if (!dateOk) {
      badDate ??= row;
      if (date === null) nullDates += 1;
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

  const problems: string[] = [];
  const notes: string[] = [];
  if (badDate !== undefined) {
    problems.push(
      application === undefined
        ? dateProblem(badDate[1], nullDates)
        : `booking ${shown(badDate[0])} has ${badDate[1] === null ? 'no date the service can read' : `the date ${shown(badDate[1])}, not a day`}: ${application} holds a date the service cannot answer (a value written by another program). A search that finds it would answer 500; correct the booking's date in ${application}.`,
    );
  }
  if (badAmount !== undefined) {
    problems.push(
      application === undefined
        ? amountProblem(badAmount[2])
        : `booking ${shown(badAmount[0])} has the amount ${shown(badAmount[2])} (in cents), not whole cents: ${application} holds an amount the service cannot answer exactly (a fraction of a cent, or a value written by another program). A search that finds it would answer 500; correct the booking in ${application}.`,
    );
  }
  if (badId !== undefined) {
    problems.push(
      `ids such as ${shown(badId[0])} are not whole numbers within ±${Number.MAX_SAFE_INTEGER} (2^53 − 1), where an id is still exact: give an INTEGER id (a table's INTEGER PRIMARY KEY, or its rowid).`,
    );
  } else if (twice !== undefined) {
    problems.push(
      `ids are not unique (${shown(twice[0])} is given to two bookings): each booking needs an id of its own.`,
    );
  }
  if (amounts >= 20 && negative > 0.8 * amounts) {
    notes.push(
      `${Math.round((100 * negative) / amounts)}% of the amounts are negative; expenses must be POSITIVE in amount_cents (docs/API.md): if the application stores expenses negative, the mapping must negate them.`,
    );
  }
  return { sampled: rows.length, problems, notes, newest };
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
 * Whether `text` is a day as 'YYYY-MM-DD': four digits, a month 01 to 12, a day 01 to 31
 * (the regular expression ^[0-9]{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12][0-9]|3[01])$, without
 * running one per booking).
 */
export function isDay(text: string): boolean {
  if (text.length !== 10 || text.charCodeAt(4) !== DASH || text.charCodeAt(7) !== DASH) return false;
  for (const at of DIGITS_AT) {
    const code = text.charCodeAt(at);
    if (code < ZERO || code > ZERO + 9) return false;
  }
  const month = (text.charCodeAt(5) - ZERO) * 10 + text.charCodeAt(6) - ZERO;
  const day = (text.charCodeAt(8) - ZERO) * 10 + text.charCodeAt(9) - ZERO;
  return month >= 1 && month <= 12 && day >= 1 && day <= 31;
}

const DASH = 0x2d;
const ZERO = 0x30;
const DIGITS_AT = [0, 1, 2, 3, 5, 6, 8, 9] as const;

function dateProblem(date: unknown, nulls: number): string {
  if (date === null) {
    return `${nulls} booking${nulls === 1 ? ' has' : 's have'} no date (NULL): no search can find ${nulls === 1 ? 'it' : 'them'}; give every booking a 'YYYY-MM-DD' date, or leave such rows out of the mapping.`;
  }
  if (typeof date === 'number' && Number.isInteger(date) && date >= 10_000_101 && date <= 99_991_231) {
    return `dates are numbers such as ${date}, not 'YYYY-MM-DD' text: every search would find nothing (a number sorts before any text). Give the date as text: printf('%04d-%02d-%02d', d / 10000, d / 100 % 100, d % 100).`;
  }
  if (typeof date === 'string' && DATE_WITH_TIME.test(date)) {
    return `dates carry a time, such as '${date}': a search would miss its last day, and 'datum' must be a date. Give the day alone: substr(date, 1, 10).`;
  }
  if (typeof date === 'number') {
    return `dates are numbers such as ${date}, not 'YYYY-MM-DD' text: convert them, e.g. date(d, 'unixepoch') for unix seconds or date(d) for a Julian day.`;
  }
  return `dates such as ${shown(date)} are not 'YYYY-MM-DD' text: convert them, e.g. substr(d, 7, 4) || '-' || substr(d, 4, 2) || '-' || substr(d, 1, 2) for 'DD.MM.YYYY'.`;
}

function amountProblem(amount: unknown): string {
  if (typeof amount === 'number' && Number.isInteger(amount)) {
    // An INTEGER beyond 2^53 − 1 is read as the nearest double: whole, but not the file's.
    return `amounts such as ${amount} lie beyond ±${Number.MAX_SAFE_INTEGER} cents, where a number in the answer is no longer exact (the figure shown is already rounded): give amounts within that range, in INTEGER cents.`;
  }
  if (typeof amount === 'number') {
    return `amounts are REAL numbers such as ${amount}, not whole cents: an exact search misses them (4.35 × 100 is 434.99999999999994). Give INTEGER cents, expenses positive: CAST(round(x * 100) AS INTEGER) for euros.`;
  }
  if (amount === null) {
    return 'some amounts are NULL: no search can find those bookings; give every booking an amount in whole cents, or leave such rows out of the mapping.';
  }
  return `amounts such as ${shown(amount)} are not whole cents: give INTEGER cents, expenses positive (text fractions such as '-25/2' must be computed in the mapping).`;
}

function shown(value: unknown): string {
  if (typeof value === 'string') return `'${value.length > 40 ? `${value.slice(0, 40)}…` : value}'`;
  if (value instanceof Uint8Array) return 'a BLOB';
  return String(value);
}

/**
 * What comes before and after each value from a booking in the sentences above (`shown`
 * and the numbers put in them): `withoutBookingValues` cuts out what lies between.
 */
const AROUND_VALUES: ReadonlyArray<readonly [before: string, after: string]> = [
  ['booking ', ' has no date the service can read'],
  ['booking ', ' has the date '],
  [' has the date ', ', not a day: '],
  ['booking ', ' has the amount '],
  [' has the amount ', ' (in cents), not whole cents: '],
  ['ids such as ', ' are not whole numbers within '],
  ['ids are not unique (', ' is given to two bookings)'],
  ['dates are numbers such as ', ", not 'YYYY-MM-DD' text: "],
  ['dates carry a time, such as ', ': a search would miss its last day'],
  ['dates such as ', " are not 'YYYY-MM-DD' text: "],
  ['amounts are REAL numbers such as ', ', not whole cents: '],
  ['amounts such as ', ' are not whole cents: '],
  ['amounts such as ', ' lie beyond '],
];

/**
 * `text` (a judgement's sentences, as a log line or an error carries them) with every value
 * from a booking replaced by '…', and what to do left as it is: for the admin listener's
 * /ready, which anyone who reaches it reads without credentials. Each stretch cut runs
 * from the first place the words before a value appear to the last place the words after
 * it appear, all found in `text` as given, and overlapping stretches are cut as one: so
 * what is cut holds every value whatever a value holds (even these words); at worst it
 * takes more than the value.
 */
export function withoutBookingValues(text: string): string {
  const stretches: Array<[from: number, to: number]> = [];
  for (const [before, after] of AROUND_VALUES) {
    const start = text.indexOf(before);
    if (start === -1) continue;
    const from = start + before.length;
    const to = text.lastIndexOf(after);
    if (to >= from) stretches.push([from, to]);
  }
  stretches.sort((a, b) => a[0] - b[0]);
  let result = '';
  let at = 0;
  for (const [from, to] of stretches) {
    if (from >= at) {
      result += `${text.slice(at, from)}…`;
      at = to;
    } else at = Math.max(at, to);
  }
  return result + text.slice(at);
}
