// Plain node:http: the handler is the whole server.
//   BOOKING_DB=kasse.sqlite BOOKING_SEARCH_USER=… BOOKING_SEARCH_PASSWORD=… node examples/node-http.mjs

import { createServer } from 'node:http';
import Database from 'better-sqlite3';
import { answerProtocolErrors, createHandler } from 'booking-search-server';

const db = new Database(process.env.BOOKING_DB, { readonly: true, fileMustExist: true, timeout: 100 });
const handler = createHandler(
  db,
  { username: process.env.BOOKING_SEARCH_USER, password: process.env.BOOKING_SEARCH_PASSWORD },
  { basePath: '/kasse' },
);

// Node's own answers to unparsable requests, timeouts and Expect have no body; these are JSON.
const server = answerProtocolErrors(createServer(handler));
server.listen(Number(process.env.PORT ?? 8080), '127.0.0.1', () => {
  console.log(`listening on http://127.0.0.1:${server.address().port}/kasse/api/v1/`);
});
process.on('SIGTERM', () => server.close(() => db.close()));
