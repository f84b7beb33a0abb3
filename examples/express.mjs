// Express: app.use() the handler; requests outside /kasse/api/ go on to the app's routes.
//   BOOKING_DB=kasse.sqlite BOOKING_SEARCH_USER=… BOOKING_SEARCH_PASSWORD=… node examples/express.mjs
import Database from 'better-sqlite3';
import { answerProtocolErrors, createHandler } from 'booking-search-server';
import express from 'express';

const db = new Database(process.env.BOOKING_DB, { readonly: true, fileMustExist: true, timeout: 100 });
const app = express();
app.use(
  createHandler(
    db,
    { username: process.env.BOOKING_SEARCH_USER, password: process.env.BOOKING_SEARCH_PASSWORD },
    { basePath: '/kasse' },
  ),
);
app.get('/', (_req, res) => {
  res.type('text/plain').send('Die Buchhaltung. Die Buchungssuche liegt unter /kasse/api/v1/.');
});

const server = app.listen(Number(process.env.PORT ?? 8080), '127.0.0.1', () => {
  console.log(`listening on http://127.0.0.1:${server.address().port}/kasse/api/v1/`);
});
// Unparsable requests, timeouts and Expect failures answered as JSON, like the API's errors.
answerProtocolErrors(server);
process.on('SIGTERM', () => server.close(() => db.close()));
