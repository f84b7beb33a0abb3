// The query string of GET {base}/api/v1/buchungen, validated in docs/API.md's order, and
// the amounts a client sends (here and in a reconciliation's lines), read into integer
// cents digit by digit: never a fraction, never a float (written back as euros by
// lib/search-endpoint.ts). Untrusted input never throws out of here: the result is a query
// or a message.

import { LIMITS, QUERY_MESSAGES as MESSAGES } from './messages.js';

/** A validated search. Amounts in integer cents, in the client's sign convention. */
export interface SearchQuery {
  /** `YYYY-MM-DD`, inclusive. */
  von: string;
  /** `YYYY-MM-DD`, inclusive, not before `von`. */
  bis: string;
  betragCents: number;
  toleranzCents: number;
  /** As the client sent it; only exactly `EUR` can match. */
  waehrung: string;
  limit: number;
}

export type QueryParseResult = { ok: true; query: SearchQuery } | { ok: false; message: string };

// Table order of docs/API.md: rule 3 reports the first failing parameter in this order.
// The one list of names: rule 2 knows a name by it, and rule 3 reads a value only by a
// name of it (test/unit/query.test.ts: each name read, plain and escaped, the same way).
export const PARAMETERS = ['von', 'bis', 'betrag', 'toleranz', 'waehrung', 'limit'] as const;
type Parameter = (typeof PARAMETERS)[number];
/** Each name's place in PARAMETERS, for rule 3's reads. */
const PLACE = Object.fromEntries(PARAMETERS.map((name, place) => [name, place])) as Record<Parameter, number>;

/** docs/API.md, `waehrung`: three letters. */
export const CURRENCY = /^[A-Za-z]{3}$/;
// 0–1000; leading zeros are tolerated as long as the text stays short.
const LIMIT = /^[0-9]{1,4}$/;
const MAX_LIMIT = LIMITS.limit;
const DEFAULT_LIMIT = 50;
// application/x-www-form-urlencoded: every `%` starts exactly two hex digits.
const MALFORMED_ESCAPE = /%(?![0-9A-Fa-f]{2})/;
// docs/API.md: a parameter name in a message is cut to 40 characters.
const MAX_NAME_IN_MESSAGE = 40;

/**
 * Parses the raw query string (without the `?`) of a search request. A query without `%`
 * is read in one pass; one with `%` is decoded whole first, since a bad escape anywhere
 * fails rule 1 before any name is looked at. Both take each name by `take`.
 */
export function parseSearchQuery(rawQuery: string): QueryParseResult {
  const values: Values = [];
  const problem = readQuery(rawQuery, values, PARAMETERS);
  if (problem !== undefined) return fail(problem);
  const von = given(values, 'von');
  const bis = given(values, 'bis');
  const betragText = given(values, 'betrag');
  const toleranzText = given(values, 'toleranz');
  const waehrungText = given(values, 'waehrung');
  const limitText = given(values, 'limit');

  // Rule 3: each parameter in table order.
  if (von === undefined) return fail(MESSAGES.missing('von'));
  if (!isCalendarDate(von)) return fail(MESSAGES.date('von'));

  if (bis === undefined) return fail(MESSAGES.missing('bis'));
  if (!isCalendarDate(bis)) return fail(MESSAGES.date('bis'));

  if (betragText === undefined) return fail(MESSAGES.missing('betrag'));
  const betragCents = parseAmount(betragText);
  if (betragCents === undefined) return fail(MESSAGES.betrag);

  const toleranzCents = toleranzText === undefined ? 0 : parseUnsignedAmount(toleranzText);
  if (toleranzCents === undefined) return fail(MESSAGES.toleranz);

  const waehrung = waehrungText ?? 'EUR';
  if (!CURRENCY.test(waehrung)) return fail(MESSAGES.waehrung);

  const limit = limitText === undefined ? DEFAULT_LIMIT : parseLimit(limitText);
  if (limit === undefined) return fail(MESSAGES.limit);

  // Rule 4. ISO dates compare correctly as text.
  if (von > bis) return fail(MESSAGES.range);

  return { ok: true, query: { von, bis, betragCents, toleranzCents, waehrung, limit } };
}

/** The value of each parameter given, at the parameter's place in PARAMETERS. */
type Values = Array<string | undefined>;

/** The value given for `name`; docs/API.md: an empty value counts as missing. */
function given(values: Values, name: Parameter): string | undefined {
  return values[PLACE[name]] || undefined;
}

/**
 * Rules 1 and 2 for an endpoint that takes no parameter (POST abgleich, whose question is its
 * body): why its query is refused, as the search's would be, or `undefined` for none.
 */
export function refuseQuery(rawQuery: string): string | undefined {
  return readQuery(rawQuery, [], []);
}

/** Rules 1 and 2 over a query, `known` its parameters: why it fails, or `undefined` with `values` filled. */
function readQuery(raw: string, values: Values, known: readonly string[]): string | undefined {
  return raw.includes('%') ? readDecoded(raw, values, known) : readPlain(raw, values, known);
}

/** Rules 1 and 2 over a query with escapes. */
function readDecoded(raw: string, values: Values, known: readonly string[]): string | undefined {
  const pairs = decodeForm(raw);
  if (pairs === undefined) return MESSAGES.badEncoding;
  for (const [name, value] of pairs) {
    const problem = take(values, name, value, known);
    if (problem !== undefined) return problem;
  }
  return undefined;
}

/** Rule 2 over a query without escapes, each name and value sliced as found (a `+` still a space). */
function readPlain(raw: string, values: Values, known: readonly string[]): string | undefined {
  const end = raw.length;
  for (let start = 0; start < end; ) {
    let amp = raw.indexOf('&', start);
    if (amp === -1) amp = end;
    // Empty pieces (`a=1&&b=2`) are skipped, as URLSearchParams does.
    if (amp > start) {
      let eq = raw.indexOf('=', start);
      if (eq === -1 || eq > amp) eq = amp;
      const value = eq === amp ? '' : spaces(raw.slice(eq + 1, amp));
      const problem = take(values, spaces(raw.slice(start, eq)), value, known);
      if (problem !== undefined) return problem;
    }
    start = amp + 1;
  }
  return undefined;
}

/** Rule 2 for one name: its value kept, or why the query fails (unknown or repeated). */
function take(values: Values, name: string, value: string, known: readonly string[]): string | undefined {
  const index = known.indexOf(name);
  if (index === -1) return MESSAGES.unknown(shorten(name));
  if (values[index] !== undefined) return MESSAGES.repeated(name);
  values[index] = value;
  return undefined;
}

function spaces(text: string): string {
  return text.includes('+') ? text.replaceAll('+', ' ') : text;
}

/**
 * application/x-www-form-urlencoded → name/value pairs in order, or `undefined` when an
 * escape is malformed or does not decode to UTF-8. Empty pieces (`a=1&&b=2`) are skipped,
 * as URLSearchParams does; a piece without `=` is a name with an empty value.
 */
function decodeForm(raw: string): Array<[string, string]> | undefined {
  if (MALFORMED_ESCAPE.test(raw)) return undefined;
  const pairs: Array<[string, string]> = [];
  for (const piece of raw.split('&')) {
    if (piece === '') continue;
    const eq = piece.indexOf('=');
    const name = decodeComponent(eq === -1 ? piece : piece.slice(0, eq));
    const value = decodeComponent(eq === -1 ? '' : piece.slice(eq + 1));
    if (name === undefined || value === undefined) return undefined;
    pairs.push([name, value]);
  }
  return pairs;
}

function decodeComponent(text: string): string | undefined {
  const spaced = spaces(text);
  if (!spaced.includes('%')) return spaced;
  try {
    return decodeURIComponent(spaced);
  } catch {
    return undefined; // an escape sequence that is not UTF-8, such as %FF
  }
}

/**
 * The end, exclusive, of a window whose last day is `day`: the day followed by the highest
 * code point, so `2026-07-04 12:00` is inside a window ending on 2026-07-04 and the search
 * answers 500 for it rather than skipping it (or reads the day, where an application stores
 * its days so). Windows read one after another meet without a gap.
 */
export const endOfDay = (day: string): string => `${day}\u{10FFFF}`;

/** A real date of the proleptic Gregorian calendar: `2024-02-29` yes, `2025-02-29` no. */
export function isCalendarDate(text: string): boolean {
  // YYYY-MM-DD, read digit by digit: no match array, no number parsing.
  if (text.length !== 10 || text.charCodeAt(4) !== DASH || text.charCodeAt(7) !== DASH) return false;
  const year = digits(text, 0, 4);
  const month = digits(text, 5, 7);
  const day = digits(text, 8, 10);
  return year >= 0 && month >= 1 && month <= 12 && day >= 1 && day <= daysInMonth(year, month);
}

const DASH = 0x2d;
const ZERO = 0x30;

/** The decimal number of `text`'s digits from `start` to `end`, or -1 if any is not an ASCII digit. */
function digits(text: string, start: number, end: number): number {
  let value = 0;
  for (let i = start; i < end; i += 1) {
    const digit = text.charCodeAt(i) - ZERO;
    if (digit < 0 || digit > 9) return -1;
    value = value * 10 + digit;
  }
  return value;
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) {
    const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
    return leap ? 29 : 28;
  }
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

function parseLimit(text: string): number | undefined {
  if (!LIMIT.test(text)) return undefined;
  const limit = Number(text);
  return limit <= MAX_LIMIT ? limit : undefined;
}

// What a message must not show as is: control characters (a line break, an escape sequence)
// and the bidirectional controls that would turn the text around it (U+202A–202E, U+2066–2069).
const UNSHOWABLE = /[\p{Cc}\p{Bidi_Control}]/gu;

/**
 * A client's parameter or field name for a message: cut to 40 characters (code points, so no
 * half emoji), each it could not show as is (UNSHOWABLE) as U+FFFD.
 */
export function shorten(name: string): string {
  const cut = name.length <= MAX_NAME_IN_MESSAGE ? name : Array.from(name).slice(0, MAX_NAME_IN_MESSAGE).join('');
  return cut.replace(UNSHOWABLE, '\uFFFD');
}

function fail(message: string): QueryParseResult {
  return { ok: false, message };
}

// Amounts.

// docs/API.md: optional sign, 1–12 integer digits, optional `.` or `,` with 1–2 decimals,
// that is /^[+-]?[0-9]{1,12}(?:[.,][0-9]{1,2})?$/, read character by character below.
// 12 digits keep every value (and a sum of two) far below Number.MAX_SAFE_INTEGER cents.
const MAX_EURO_DIGITS = 12;

/** `'-12,5'` → `-1250`; `undefined` when the text is not such an amount. */
export function parseAmount(text: string): number | undefined {
  return toCents(text, true);
}

/** Like `parseAmount`, but no sign is allowed: `'0.10'` → `10`. */
export function parseUnsignedAmount(text: string): number | undefined {
  return toCents(text, false);
}

function toCents(text: string, signed: boolean): number | undefined {
  const end = text.length;
  let i = 0;
  let negative = false;
  const first = text.charCodeAt(0);
  if (signed && (first === PLUS || first === DASH)) {
    negative = first === DASH;
    i = 1;
  }
  let euros = 0;
  const eurosStart = i;
  for (; i < end; i += 1) {
    const digit = text.charCodeAt(i) - ZERO;
    if (digit < 0 || digit > 9) break;
    euros = euros * 10 + digit;
  }
  const eurosDigits = i - eurosStart;
  if (eurosDigits < 1 || eurosDigits > MAX_EURO_DIGITS) return undefined;
  let cents = euros * 100;
  if (i < end) {
    const separator = text.charCodeAt(i);
    if (separator !== DOT && separator !== COMMA) return undefined;
    const decimals = end - i - 1;
    if (decimals < 1 || decimals > 2) return undefined;
    const tenths = text.charCodeAt(i + 1) - ZERO;
    const hundredths = decimals === 2 ? text.charCodeAt(i + 2) - ZERO : 0;
    if (tenths < 0 || tenths > 9 || hundredths < 0 || hundredths > 9) return undefined;
    cents += tenths * 10 + hundredths;
  }
  // `|| 0` turns `-0` into `0`.
  return (negative ? -cents : cents) || 0;
}

const PLUS = 0x2b;
const DOT = 0x2e;
const COMMA = 0x2c;
