// Peer: Fastify 5 with the straightforward query.
import Fastify from 'fastify';
import { announce, args, authenticated, createPlainSearch } from './common.js';

const search = createPlainSearch(args.db as string);
const app = Fastify({ logger: false });
const unauthorized = { fehler: 'Anmeldung erforderlich.' };

app.addHook('onRequest', async (req, reply) => {
  if (!authenticated(req.headers.authorization)) {
    return reply.code(401).header('www-authenticate', 'Basic realm="bench", charset="UTF-8"').send(unauthorized);
  }
});
app.get('/api/v1/status', async () => ({ name: 'fastify-peer', version: '1.0' }));
app.get('/api/v1/buchungen', async (req, reply) => {
  const url = req.raw.url ?? '';
  const answer = search(url.includes('?') ? url.slice(url.indexOf('?') + 1) : '');
  return reply.code(answer.status).header('cache-control', 'no-store').send(answer.body);
});

await app.listen({ port: Number(args.port), host: '127.0.0.1' });
announce((app.server.address() as { port: number }).port);
