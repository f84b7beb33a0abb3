// The query string of GET {base}/api/v1/buchungen, validated in docs/API.md's order.
// Untrusted input never throws out of here: the result is a query or a message.

import { QUERY_MESSAGES as MESSAGES } from './messages.js';
import { parseAmount, parseUnsignedAmount } from './money.js';

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
export const PARAMETERS = ['von', 'bis', 'betrag', 'toleranz', 'waehrung', 'limit'] as const;
type ParameterName = (typeof PARAMETERS)[number];
const KNOWN = new Set<string>(PARAMETERS);

const DATE = /^([0-9]{4})-([0-9]{2})-([0-9]{2})$/;
const CURRENCY = /^[A-Za-z]{3}$/;
// 0–1000; leading zeros are tolerated as long as the text stays short.
const LIMIT = /^[0-9]{1,4}$/;
const MAX_LIMIT = 1000;
const DEFAULT_LIMIT = 50;
// application/x-www-form-urlencoded: every `%` starts exactly two hex digits.
const MALFORMED_ESCAPE = /%(?![0-9A-Fa-f]{2})/;
// docs/API.md: a parameter name in a message is cut to 40 characters.
const MAX_NAME_IN_MESSAGE = 40;

/** Parses the raw query string (without the `?`) of a search request. */
export function parseSearchQuery(rawQuery: string): QueryParseResult {
  // Rule 1: a malformed escape anywhere, before any name is looked at.
  const pairs = decodeForm(rawQuery);
  if (pairs === undefined) return fail(MESSAGES.badEncoding);

  // Rule 2: names, in order of appearance.
  const values = new Map<ParameterName, string>();
  for (const [name, value] of pairs) {
    if (!isParameterName(name)) return fail(MESSAGES.unknown(shorten(name)));
    if (values.has(name)) return fail(MESSAGES.repeated(name));
    values.set(name, value);
  }
  // docs/API.md: an empty value counts as missing.
  const given = (name: ParameterName): string | undefined => values.get(name) || undefined;

  // Rule 3: each parameter in table order.
  const von = given('von');
  if (von === undefined) return fail(MESSAGES.missing('von'));
  if (!isCalendarDate(von)) return fail(MESSAGES.date('von'));

  const bis = given('bis');
  if (bis === undefined) return fail(MESSAGES.missing('bis'));
  if (!isCalendarDate(bis)) return fail(MESSAGES.date('bis'));

  const betragText = given('betrag');
  if (betragText === undefined) return fail(MESSAGES.missing('betrag'));
  const betragCents = parseAmount(betragText);
  if (betragCents === undefined) return fail(MESSAGES.betrag);

  const toleranzText = given('toleranz');
  const toleranzCents = toleranzText === undefined ? 0 : parseUnsignedAmount(toleranzText);
  if (toleranzCents === undefined) return fail(MESSAGES.toleranz);

  const waehrung = given('waehrung') ?? 'EUR';
  if (!CURRENCY.test(waehrung)) return fail(MESSAGES.waehrung);

  const limitText = given('limit');
  const limit = limitText === undefined ? DEFAULT_LIMIT : parseLimit(limitText);
  if (limit === undefined) return fail(MESSAGES.limit);

  // Rule 4. ISO dates compare correctly as text.
  if (von > bis) return fail(MESSAGES.range);

  return { ok: true, query: { von, bis, betragCents, toleranzCents, waehrung, limit } };
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
  const spaced = text.includes('+') ? text.replaceAll('+', ' ') : text;
  if (!spaced.includes('%')) return spaced;
  try {
    return decodeURIComponent(spaced);
  } catch {
    return undefined; // an escape sequence that is not UTF-8, such as %FF
  }
}

function isParameterName(name: string): name is ParameterName {
  return KNOWN.has(name);
}

/** A real date of the proleptic Gregorian calendar: `2024-02-29` yes, `2025-02-29` no. */
function isCalendarDate(text: string): boolean {
  const match = DATE.exec(text);
  if (match === null) return false;
  const year = Number(match[1]);
  const month = Number(match[2]);
  const day = Number(match[3]);
  return month >= 1 && month <= 12 && day >= 1 && day <= daysInMonth(year, month);
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

/** Cuts a client's parameter name to 40 characters (code points, so no half emoji). */
function shorten(name: string): string {
  if (name.length <= MAX_NAME_IN_MESSAGE) return name;
  return Array.from(name).slice(0, MAX_NAME_IN_MESSAGE).join('');
}

function fail(message: string): QueryParseResult {
  return { ok: false, message };
}
