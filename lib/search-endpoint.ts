// GET {base}/api/v1/buchungen for a client that is let in: the query validated (400), the
// waiting searches bounded per client and per user (429), the search answered at once or
// in a later turn, its rows written as the JSON answer or its failure as the 500.

import type { IncomingMessage, ServerResponse } from 'node:http';
import { isNotReadableNow } from './errors.js';
import type { Failures } from './failure.js';
import { EMPTY_RESULT, formatSearchResult } from './format.js';
import { badQuery, ERRORS } from './messages.js';
import { parseSearchQuery } from './query.js';
import { RETRY_IN_A_SECOND, send, sendError } from './respond.js';
import type { SearchOutcome, SearchRequest } from './search/booking-search.js';
import type { SearchRows } from './search/sql.js';
import type { Turns } from './search/turns.js';

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
export function tooManyWaiting(search: SearchTurns, limits: SearchLimits, user: string, client: string): boolean {
  return (
    search.waitingFrom(client) >= limits.maxWaitingSearches || search.waitingFor(user) >= limits.maxUserWaitingSearches
  );
}

/** A search's failure: its cause to the hook, the client the 500 (with Retry-After when the file is only busy). */
export function sendSearchFailure(
  report: Failures['report'],
  failure: unknown,
  req: IncomingMessage,
  res: ServerResponse,
): void {
  report(failure, req);
  if (isNotReadableNow(failure)) sendError(res, ERRORS.databaseUnavailable, RETRY_IN_A_SECOND);
  else sendError(res, ERRORS.searchFailed);
}
