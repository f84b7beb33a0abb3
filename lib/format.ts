// Search rows → the JSON text of docs/API.md's response, written by hand so that `betrag`
// is the exact decimal of the stored cents and the keys stand in the contract's order.

import { formatEuros } from './money.js';
import type { BookingRow, SearchRows } from './search/sql.js';

export const EMPTY_RESULT = '{"anzahl":0,"buchungen":[]}';

// docs/API.md, A booking: `datum` is a calendar date. Month 01–12 and day 01–31 is as far
// as a pattern goes; a mapping gives dates the application wrote, not arbitrary text.
const DATE = /^[0-9]{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12][0-9]|3[01])$/;

/** `{"anzahl": <int>, "buchungen": [<booking>...]}`, non-ASCII left unescaped. */
export function formatSearchResult({ count, rows }: SearchRows): string {
  // `count` and `id` are written as they are: anything but an integer (a view can hand
  // over a text id) would make the text invalid JSON, so it becomes the search's 500.
  // So does a row whose date or amount breaks the contract (below).
  if (!Number.isSafeInteger(count)) throw new RangeError(`count is not an integer: ${shown(count)}`);
  let bookings = '';
  for (const row of rows) {
    if (bookings !== '') bookings += ',';
    bookings += formatBooking(row);
  }
  return `{"anzahl":${count},"buchungen":[${bookings}]}`;
}

/**
 * One booking as docs/API.md's JSON object, keys in the contract's order. Throws a
 * RangeError naming the booking when its id, date or amount breaks the contract (below).
 */
export function formatBooking([id, date, amountCents, subject, category, paymentMethod]: BookingRow): string {
  if (!Number.isSafeInteger(id)) throw new RangeError(`booking id is not an integer: ${shown(id)}`);
  // docs/API.md: never a `datum` that is not a date, never an amount that is not whole
  // cents. The mapping (or the file) is wrong; the search answers its 500, with this
  // reason in the log, rather than a wrong answer.
  if (typeof date !== 'string' || !DATE.test(date)) {
    throw new RangeError(`booking ${id}: the date ${shown(date)} is not a YYYY-MM-DD date`);
  }
  if (!Number.isSafeInteger(amountCents)) {
    throw new RangeError(`booking ${id}: the amount ${shown(amountCents)} is not a whole number of cents`);
  }
  // docs/API.md, Sign convention: betrag = -amount_cents / 100.
  // The date is digits and dashes (DATE above): nothing in it to escape.
  let booking = `{"id":${id},"datum":"${date}","betrag":${formatEuros(-amountCents)},"zweck":${jsonString(subject ?? '')}`;
  if (category !== null) booking += `,"kategorie":${jsonString(category)}`;
  if (paymentMethod !== null) booking += `,"konto":${jsonString(paymentMethod)}`;
  return `${booking}}`;
}

// What JSON.stringify writes other than as it is (ECMA-262, QuoteJSONString): `"`, `\`, the
// C0 controls and a lone surrogate; a pair of surrogates is taken here too, and left to it.
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it finds, to escape them.
const ESCAPED_IN_JSON = /["\\\u0000-\u001f\ud800-\udfff]/;

/**
 * `JSON.stringify(text)`: the same text, at half its cost for a text with nothing to escape
 * (a subject, a category or an account name, three a booking; JSON.stringify is a call
 * into the runtime, a third of formatting an answer).
 */
export function jsonString(text: string): string {
  return ESCAPED_IN_JSON.test(text) ? JSON.stringify(text) : `"${text}"`;
}

// A value from the file in an error message: a text at most this long, quoted as JSON (a
// text id or date can be of any length and hold any character; the CLI escapes what it logs).
const SHOWN_CHARACTERS = 100;

function shown(value: unknown): string {
  if (typeof value === 'string') {
    return JSON.stringify(value.length > SHOWN_CHARACTERS ? `${value.slice(0, SHOWN_CHARACTERS)}…` : value);
  }
  if (value instanceof Uint8Array) return `a blob of ${value.length} bytes`;
  return String(value);
}
