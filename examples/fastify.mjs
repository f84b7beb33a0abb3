// Fastify: the handler answers in the route's onRequest hook, before Fastify reads the body
// (it reads it itself, after the login); reply.hijack() says the handler writes the response.
//   BOOKING_DB=kasse.sqlite BOOKING_SEARCH_USER=… BOOKING_SEARCH_PASSWORD=… node fastify.mjs
import Database from 'better-sqlite3';
import { answerClientError, answerExpectation, createHandler } from 'booking-search-server';
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

// Fastify answers clientError itself: hand it ours, and the rest of answerProtocolErrors by
// hand (Node's bodiless answer to a missing Host off, so the handler answers it as JSON).
const app = Fastify({ clientErrorHandler: answerClientError, http: { requireHostHeader: false } });
app.server.on('checkExpectation', answerExpectation);
app.all('/kasse/api/*', { onRequest: (request, reply) => handler(request.raw, reply.hijack().raw) }, () => {});
app.get('/', async () => ({ hallo: 'Die Buchungssuche liegt unter /kasse/api/v1/.' }));

const origin = await app.listen({ port: Number(PORT), host: '127.0.0.1' });
console.log(`listening on ${origin}/kasse/api/v1/`);
process.on('SIGTERM', () => app.close().then(() => db.close()));
