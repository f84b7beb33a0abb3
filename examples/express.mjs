// Express: app.use() the handler, before any body parser (it reads the body itself);
// requests outside /kasse/api/ go on to the app's routes.
//   BOOKING_DB=kasse.sqlite BOOKING_SEARCH_USER=… BOOKING_SEARCH_PASSWORD=… node express.mjs
import Database from 'better-sqlite3';
import { answerProtocolErrors, createHandler } from 'booking-search-server';
import express from 'express';

const { BOOKING_DB, BOOKING_SEARCH_USER, BOOKING_SEARCH_PASSWORD, PORT = '8080' } = process.env;
if (!BOOKING_DB || !BOOKING_SEARCH_USER || !BOOKING_SEARCH_PASSWORD) {
  throw new Error('set BOOKING_DB, BOOKING_SEARCH_USER and BOOKING_SEARCH_PASSWORD');
}
const db = new Database(BOOKING_DB, { readonly: true, fileMustExist: true, timeout: 0 });
const app = express();
app.use(
  createHandler(db, { username: BOOKING_SEARCH_USER, password: BOOKING_SEARCH_PASSWORD }, { basePath: '/kasse' }),
);
app.get('/', (_req, res) => {
  res.type('text/plain').send('Die Buchhaltung. Die Buchungssuche liegt unter /kasse/api/v1/.');
});

const server = app.listen(Number(PORT), '127.0.0.1', () => {
  const address = server.address();
  if (typeof address === 'object' && address !== null) {
    console.log(`listening on http://127.0.0.1:${address.port}/kasse/api/v1/`);
  }
});
// Unparsable requests, timeouts and Expect failures answered as JSON, like the API's errors.
answerProtocolErrors(server);
process.on('SIGTERM', () => server.close(() => db.close()));
