// Peer: Express 5 with the straightforward query.

import type { AddressInfo } from 'node:net';
import express from 'express';
import { announce, args, authenticated, createPlainSearch } from './common.js';

const search = createPlainSearch(args.db as string);
const app = express();
app.disable('x-powered-by');
app.disable('etag');

app.use((req, res, next) => {
  if (authenticated(req.headers.authorization)) return next();
  res
    .status(401)
    .set('www-authenticate', 'Basic realm="bench", charset="UTF-8"')
    .json({ fehler: 'Anmeldung erforderlich.' });
});
app.get('/api/v1/status', (_req, res) => {
  res.json({ name: 'express-peer', version: '1.0' });
});
app.get('/api/v1/buchungen', (req, res) => {
  const url = req.originalUrl;
  const answer = search(url.includes('?') ? url.slice(url.indexOf('?') + 1) : '');
  res.status(answer.status).set('cache-control', 'no-store').json(answer.body);
});

const server = app.listen(Number(args.port), '127.0.0.1', () => announce((server.address() as AddressInfo).port));
