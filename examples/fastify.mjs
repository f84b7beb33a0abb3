// Fastify: the handler comes first on the node:http server (Fastify's serverFactory) and
// hands every request outside /kasse/api/ on to Fastify, so that Fastify never routes,
// parses or answers one of the handler's (it reads the body itself, after the login).
//   BOOKING_DB=kasse.sqlite BOOKING_SEARCH_USER=… BOOKING_SEARCH_PASSWORD=… node fastify.mjs
import { createServer } from 'node:http';
import Database from 'better-sqlite3';
import { answerClientError, answerProtocolErrors, createHandler } from 'booking-search-server';
import Fastify from 'fastify';

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

// Fastify answers 'clientError' on the server itself: it is given ours.
const app = Fastify({
  clientErrorHandler: answerClientError,
  serverFactory: (fastify) =>
    answerProtocolErrors(createServer((req, res) => handler(req, res, () => fastify(req, res)))),
});
app.get('/', async () => ({ hallo: 'Die Buchungssuche liegt unter /kasse/api/v1/.' }));

const origin = await app.listen({ port: Number(PORT), host: '127.0.0.1' });
console.log(`listening on ${origin}/kasse/api/v1/`);
process.on('SIGTERM', () => app.close().then(() => db.close()));
