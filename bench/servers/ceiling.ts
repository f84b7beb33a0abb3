// The ceiling: bare node:http answering every request with one constant JSON body of the
// size of a typical search answer. Nothing can serve this endpoint faster on this machine.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { announce, args } from './common.js';

const body = Buffer.from(
  '{"anzahl":1,"buchungen":[{"id":4711,"datum":"2026-03-14","betrag":-12.5,"zweck":"Briefmarken für Mahnungen","kategorie":"Porto","konto":"Barkasse"}]}',
);
// With --busy-us N: the same server made slower by N µs of work per request.
const busyMs = Number(args['busy-us']) / 1000;
const server = createServer((_req, res) => {
  if (busyMs > 0) {
    const until = performance.now() + busyMs;
    while (performance.now() < until);
  }
  res.writeHead(200, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': body.length });
  res.end(body);
});
server.listen(Number(args.port), '127.0.0.1', () => announce((server.address() as AddressInfo).port));
// A stop that exits normally, so that `node --cpu-prof` (bench/profile.ts) writes its profile.
process.on('SIGTERM', () => process.exit(0));
