// bin/listen/server.ts's stop on a listener it made, in this process: a request that
// arrives on a busy keep-alive connection after the stop began is answered, and its answer
// closes the connection (docs/operations.md, "The command").

import assert from 'node:assert/strict';
import { once } from 'node:events';
import { connect } from 'node:net';
import { test } from 'node:test';
import { createListener, stopListening } from '../bin/listen/server.js';

const LIMITS = { headersMs: 5_000, requestMs: 5_000, keepAliveMs: 5_000, sendMs: 5_000, maxConnections: 10 };

test('once a listener stops, a request on a busy keep-alive connection is answered with Connection: close', async () => {
  const server = createListener(
    (req, res) => {
      // The first request is answered late: its connection is busy when the stop begins.
      const delay = req.url === '/slow' ? 300 : 0;
      setTimeout(() => res.end('ok'), delay);
    },
    { limits: LIMITS },
  );
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  const socket = connect(port, '127.0.0.1');
  let received = '';
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => (received += chunk));
  await once(socket, 'connect');
  socket.write('GET /slow HTTP/1.1\r\nHost: x\r\n\r\n');
  await new Promise((resolve) => setTimeout(resolve, 50));
  const stopped = stopListening(server, 2_000);
  await new Promise((resolve) => setTimeout(resolve, 50));
  socket.write('GET /after HTTP/1.1\r\nHost: x\r\n\r\n');
  await Promise.race([once(socket, 'close'), new Promise((resolve) => setTimeout(resolve, 3_000))]);
  socket.destroy();
  await stopped;
  const answers = received.split('HTTP/1.1 ').filter((part) => part !== '');
  assert.equal(answers.length, 2, received);
  assert.match(answers[0] ?? '', /\r\nConnection: keep-alive\r\n/i, 'the request from before the stop');
  assert.match(answers[1] ?? '', /\r\nConnection: close\r\n/i, 'the request from after it');
});
