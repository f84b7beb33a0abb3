// Hono on @hono/node-server: the handler comes first on the node:http server and hands
// every request outside /kasse/api/ on to Hono. (Not inside a Hono route with
// RESPONSE_ALREADY_SENT: Hono rebuilds a HEAD's answer, and each HEAD then ends in
// ERR_HTTP_HEADERS_SENT.)
//   BOOKING_DB=kasse.sqlite BOOKING_SEARCH_USER=… BOOKING_SEARCH_PASSWORD=… node hono.mjs
import { createServer } from 'node:http';
import { getRequestListener } from '@hono/node-server';
import Database from 'better-sqlite3';
import { answerProtocolErrors, createHandler } from 'booking-search-server';
import { Hono } from 'hono';

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

const app = new Hono();
app.get('/', (c) => c.text('Die Buchhaltung. Die Buchungssuche liegt unter /kasse/api/v1/.'));
const hono = getRequestListener(app.fetch);

const server = answerProtocolErrors(createServer((req, res) => handler(req, res, () => void hono(req, res))));
server.listen(Number(PORT), '127.0.0.1', () => {
  const address = server.address();
  if (typeof address === 'object' && address !== null) {
    console.log(`listening on http://127.0.0.1:${address.port}/kasse/api/v1/`);
  }
});
process.on('SIGTERM', () => server.close(() => db.close()));
