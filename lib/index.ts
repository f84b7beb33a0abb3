export { API_VERSION, createHandler } from './handler.js';
export type {
  Booking,
  Credentials,
  ErrorBody,
  HandlerOptions,
  Next,
  RequestHandler,
  SearchResult,
  StatusResult,
} from './types.js';
