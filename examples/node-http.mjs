// Plain node:http: the handler is the whole server.
//   BOOKING_DB=kasse.sqlite BOOKING_SEARCH_USER=… BOOKING_SEARCH_PASSWORD=… node node-http.mjs
import { createServer } from 'node:http';
import Database from 'better-sqlite3';
import { answerProtocolErrors, createHandler } from 'booking-search-server';

const { BOOKING_DB, BOOKING_SEARCH_USER, BOOKING_SEARCH_PASSWORD, PORT = '8080' } = process.env;
if (!BOOKING_DB || !BOOKING_SEARCH_USER || !BOOKING_SEARCH_PASSWORD) {
  throw new Error('set BOOKING_DB, BOOKING_SEARCH_USER and BOOKING_SEARCH_PASSWORD');
}
const db = new Database(BOOKING_DB, { readonly: true, fileMustExist: true, timeout: 0 });
const handler = createHandler(
  db,
  { username: BOOKING_SEARCH_USER, password: BOOKING_SEARCH_PASSWORD },
  { basePath: '/kasse' },
);

// Node's own answers to unparsable requests, timeouts and Expect have no body; these are JSON.
const server = answerProtocolErrors(createServer(handler));
server.listen(Number(PORT), '127.0.0.1', () => {
  const address = server.address();
  if (typeof address === 'object' && address !== null) {
    console.log(`listening on http://127.0.0.1:${address.port}/kasse/api/v1/`);
  }
});
process.on('SIGTERM', () => server.close(() => db.close()));
