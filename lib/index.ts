import { createSharedParts as sharedParts } from './shared-parts.js';
import type { HandlerOptions, SharedParts } from './types.js';

export { API_VERSION, createHandler, type Mount, mountHandlers } from './handler.js';
export { ERROR_CODES, type ErrorCode } from './messages.js';
export { answerClientError, answerConnect, answerExpectation, answerProtocolErrors } from './protocol-errors.js';
export { type RequestFacts, requestFacts } from './request.js';
export type {
  Booking,
  BookingSearchHandler,
  Credentials,
  ErrorBody,
  HandlerOptions,
  HashedCredentials,
  Next,
  PasswordCredentials,
  RequestHandler,
  SearchResult,
  SharedParts,
  StatusResult,
} from './types.js';

/**
 * One login throttle and one bound on password-hash checks for several handlers: pass the
 * result as the last argument of each (`createHandler(db, credentials, options, shared)`),
 * mountHandlers' fallback too, and failed logins on any of them spend one budget. Of
 * createHandler's `options`, the login limits (maxAuthFailures to maxKnownClients,
 * maxHashChecks, maxQueuedHashChecks) hold for every handler given the result, which then
 * refuses another value of one with a TypeError; the others are each handler's own.
 */
export const createSharedParts: (options?: HandlerOptions) => SharedParts = sharedParts;
