// Serves the lookup page (one bank line → its candidate cash bookings) on its own origin,
// the way a web application would:
//   node bin/booking-search-server.js --demo --cors-origin http://127.0.0.1:8081
//   node examples/browser/serve.mjs            (PORT=8081 by default)
// then open the address it prints. Only the three files of the page, nothing else.

import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';

const FILES = {
  '/': ['index.html', 'text/html; charset=utf-8'],
  '/app.js': ['app.js', 'text/javascript; charset=utf-8'],
  '/style.css': ['style.css', 'text/css; charset=utf-8'],
};
// No inline script or style, nothing from elsewhere; fetch may go to the API on another origin.
const POLICY =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src data:; connect-src http: https:; " +
  "form-action 'none'; base-uri 'none'; frame-ancestors 'none'";
const api = process.env.API ?? 'http://127.0.0.1:8080/api/v1/';

const server = createServer((req, res) => {
  const file = FILES[new URL(req.url ?? '/', 'http://page').pathname];
  if (file === undefined || (req.method !== 'GET' && req.method !== 'HEAD')) {
    res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' }).end('Nicht gefunden.\n');
    return;
  }
  const body = readFileSync(new URL(file[0], import.meta.url));
  res.writeHead(200, {
    'Content-Type': file[1],
    'Content-Length': body.length,
    'Content-Security-Policy': POLICY,
    'Cache-Control': 'no-store',
    'X-Content-Type-Options': 'nosniff',
  });
  res.end(req.method === 'HEAD' ? undefined : body);
});

server.listen(Number(process.env.PORT ?? 8081), '127.0.0.1', () => {
  const origin = `http://127.0.0.1:${server.address().port}`;
  console.log(`page on ${origin}/?api=${encodeURIComponent(api)}`);
  console.log(`(the API must be started with --cors-origin ${origin})`);
});
process.on('SIGTERM', () => server.close());
