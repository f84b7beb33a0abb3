// GET {base}/api/v1/buchungen for a client that is let in: the query validated (400), the
// waiting searches bounded per client and per user (429), the search answered at once or
// in a later turn, its rows written as the JSON answer or its failure as the 500.
//
// The answer is written by hand (below), so that `betrag` is the exact decimal of the
// stored cents and the keys stand in the contract's order: amounts are integer cents from
// the moment the query is parsed (lib/query.ts) until a booking is written, split into euros
// and cents by integer division, which is exact.

import type { IncomingMessage, ServerResponse } from 'node:http';
import { passesLater } from './errors.js';
import type { Failures } from './failure.js';
import { badQuery, ERRORS } from './messages.js';
import { isCalendarDate, parseSearchQuery } from './query.js';
import { RETRY_IN_A_SECOND, send, sendError } from './respond.js';
import {
  type BookingRow,
  type SearchOutcome,
  type SearchRequest,
  type SearchRows,
  shownValue,
  type Turns,
  unreadableBooking,
} from './search/index.js';

/**
 * What the endpoints need of a search: its turns (lib/search/turns.ts), for one search or
 * several from one snapshot; in the command, perhaps run in another process.
 */
export type SearchTurns = Turns<SearchRequest, SearchRows>;

export interface SearchLimits {
  maxWaitingSearches: number;
  maxUserWaitingSearches: number;
}

/**
 * The endpoint over `search`: `query` is the raw query string (without `?`), `user` the
 * user let in, `client` the client as the throttle counts it (an IPv6 address by its /64).
 */
export type SearchEndpoint = (
  req: IncomingMessage,
  res: ServerResponse,
  query: string,
  user: string,
  client: string,
) => void;

export function createSearchEndpoint(search: SearchTurns, limits: SearchLimits, failures: Failures): SearchEndpoint {
  const { report, fail } = failures;
  return (req, res, query, user, client) => {
    const parsed = parseSearchQuery(query);
    if (!parsed.ok) return sendError(res, badQuery(parsed.message));
    // docs/API.md: only EUR is stored; any other (valid) code matches nothing.
    if (parsed.query.waehrung !== 'EUR') return send(res, 200, EMPTY_RESULT);
    // Per address, and per user whatever number of addresses it comes from: the waiting
    // searches, and the memory they hold, stay bounded (docs/API.md).
    if (tooManyWaiting(search, limits, user, client)) return sendError(res, ERRORS.tooManySearches, RETRY_IN_A_SECOND);
    // Answered at once when no other search waits; otherwise in a later turn of the event
    // loop, in one read transaction with other queued searches, each client's in turn
    // (lib/search/booking-search.ts says why that is exact, cheaper and fair to the other
    // clients and to the application's writer).
    search.answer(
      parsed.query,
      (outcome) => {
        try {
          answer(req, res, outcome);
        } catch (error: unknown) {
          fail(error, req, res);
        }
      },
      { user, address: client, connection: req.socket },
    );
  };

  /** The search's rows as the answer, or its 500 (with Retry-After when the file is only busy). */
  function answer(req: IncomingMessage, res: ServerResponse, outcome: SearchOutcome): void {
    let body: string | undefined;
    let failure: unknown;
    if (outcome.ok) {
      try {
        body = formatSearchResult(outcome.result);
      } catch (error: unknown) {
        failure = error;
      }
    } else failure = outcome.error;
    if (body !== undefined) return send(res, 200, body);
    sendSearchFailure(report, failure, req, res);
  }
}

/** Whether `user` or `client` has as many searches waiting as it may (429 `too_many_searches`). */
export function tooManyWaiting(
  search: Pick<SearchTurns, 'waitingFrom' | 'waitingFor'>,
  limits: SearchLimits,
  user: string,
  client: string,
): boolean {
  return (
    search.waitingFrom(client) >= limits.maxWaitingSearches || search.waitingFor(user) >= limits.maxUserWaitingSearches
  );
}

/**
 * A search's failure: its cause to the hook, the client the 500, with Retry-After when it
 * passes once someone acts (a lock, a state SQLite waits out, the application's setting).
 */
export function sendSearchFailure(
  report: Failures['report'],
  failure: unknown,
  req: IncomingMessage,
  res: ServerResponse,
): void {
  report(failure, req);
  if (passesLater(failure)) sendError(res, ERRORS.databaseUnavailable, RETRY_IN_A_SECOND);
  else sendError(res, ERRORS.searchFailed);
}

// The answer.

export const EMPTY_RESULT = '{"anzahl":0,"buchungen":[]}';

/** `{"anzahl": <int>, "buchungen": [<booking>...]}`, non-ASCII left unescaped. */
export function formatSearchResult({ count, rows }: SearchRows): string {
  // `count` and `id` are written as they are: anything but an integer (a view can hand
  // over a text id) would make the text invalid JSON, so it becomes the search's 500.
  // So does a row whose date or amount breaks the contract (below).
  if (!Number.isSafeInteger(count)) throw new RangeError(`count is not an integer: ${shownValue(count)}`);
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
  if (!Number.isSafeInteger(id)) {
    // An integer beyond 2^53 came out of SQLite rounded: not an id to look for in the book.
    const rounded = Number.isInteger(id) ? ' (the figure shown is already rounded)' : '';
    throw new RangeError(`booking id is not an integer: ${shownValue(id)}${rounded}`);
  }
  // docs/API.md: never a `datum` that is not a date, never an amount that is not whole
  // cents. The mapping (or the file) is wrong; the search answers its 500, with the booking
  // named in the log as the count's guard names it, rather than a wrong answer.
  if (typeof date !== 'string' || !isCalendarDate(date) || !Number.isSafeInteger(amountCents)) {
    // In the order bookingFault reads a booking: without its category.
    throw unreadableBooking([id, date, amountCents, subject, paymentMethod]);
  }
  // docs/API.md, Sign convention: betrag = -amount_cents / 100.
  // The date is digits and dashes (isCalendarDate above): nothing in it to escape.
  let booking = `{"id":${id},"datum":"${date}","betrag":${formatEuros(-amountCents)},"zweck":${text(id, 'zweck', subject ?? '')}`;
  if (category !== null) booking += `,"kategorie":${text(id, 'kategorie', category)}`;
  if (paymentMethod !== null) booking += `,"konto":${text(id, 'konto', paymentMethod)}`;
  return `${booking}}`;
}

/**
 * A booking's text as a JSON string. SQLite hands over what the file holds, whatever the
 * column says: a number is written as its digits; a blob has no one text (its bytes need
 * not be UTF-8), so its booking is the search's 500, as a broken amount is.
 */
function text(id: number, field: string, value: unknown): string {
  if (typeof value === 'string') return jsonString(value);
  if (typeof value === 'number') return `"${value}"`;
  throw new RangeError(`booking ${id}: its ${field} is ${shownValue(value)}, not text`);
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

/**
 * Integer cents → the decimal text of a JSON number in euros, exact to the digit:
 * `-1250` → `'-12.5'`, `3000` → `'30'`, `5` → `'0.05'`. Throws on anything but a
 * safe integer, because no other value can be formatted exactly.
 */
export function formatEuros(cents: number): string {
  if (!Number.isSafeInteger(cents)) {
    throw new RangeError(`amount is not a whole number of cents: ${String(cents)}`);
  }
  // Integer arithmetic on a safe integer is exact: the euros and the cents apart, then the
  // cents without trailing zeros (`.5`, `.05`, `.25`, none for whole euros).
  const negative = cents < 0;
  const abs = negative ? -cents : cents;
  const fraction = abs % 100;
  const euros = (abs - fraction) / 100;
  const text =
    fraction === 0
      ? `${euros}`
      : fraction % 10 === 0
        ? `${euros}.${fraction / 10}`
        : `${euros}.${fraction < 10 ? '0' : ''}${fraction}`;
  return negative ? `-${text}` : text;
}
