export { API_VERSION, createHandler, type Mount, mountHandlers } from './handler.js';
export { ERROR_CODES, type ErrorCode } from './messages.js';
export { answerClientError, answerConnect, answerExpectation, answerProtocolErrors } from './protocol-errors.js';
export { type RequestFacts, requestFacts } from './request.js';
export { createSharedParts } from './shared-parts.js';
export type {
  Amount,
  BankLine,
  Booking,
  BookingSearchHandler,
  Credentials,
  ErrorBody,
  HandlerOptions,
  HashedCredentials,
  Next,
  PasswordCredentials,
  ReconciledLine,
  ReconcileRequest,
  ReconcileResult,
  RequestHandler,
  SearchResult,
  SharedParts,
  StatusResult,
  Users,
} from './types.js';
