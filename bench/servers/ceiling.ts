// The ceiling: bare node:http answering every request with one constant JSON body of the
// size of a typical search answer, each answer written at once, as a plain node:http
// server does. The reference every benchmark's ratios are taken to.
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { announce, args } from './common.js';

const body = Buffer.from(
  '{"anzahl":1,"buchungen":[{"id":4711,"datum":"2026-03-14","betrag":-12.5,"zweck":"Briefmarken für Mahnungen","kategorie":"Porto","konto":"Barkasse"}]}',
);
// With --busy-us N: the same server made slower by N µs of work per request.
const busyMs = Number(args['busy-us']) / 1000;
// With --together: the answers to the requests that arrived together ended together, at the
// end of the turn of the event loop, as the service ends its own (docs/design/README.md, "Answers
// leave together"); without, each at once, as a plain node:http server does.
const together = args.together === true;
const held: ServerResponse[] = [];
function endHeld(): void {
  for (const res of held) res.end(body);
  held.length = 0;
}
const server = createServer((_req, res) => {
  if (busyMs > 0) {
    const until = performance.now() + busyMs;
    while (performance.now() < until);
  }
  res.writeHead(200, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': body.length });
  if (!together) {
    res.end(body);
    return;
  }
  if (held.push(res) === 1) setImmediate(endHeld);
});
server.listen(Number(args.port), '127.0.0.1', () => announce((server.address() as AddressInfo).port));
// A stop that exits normally, so that `node --cpu-prof` (bench/profile.ts) writes its profile.
process.on('SIGTERM', () => process.exit(0));
