// --workers with the primary stopped (SIGSTOP): what a flood of requests without
// credentials costs the workers while the primary takes no messages, and whether the
// service comes back after SIGCONT. The connections are opened (and taken by a worker)
// before the stop, since the primary is what hands new connections to the workers; each
// then pipelines requests in batches of 100 until it is closed (a 429 closes it) or the
// time is up. Prints the answers by status and each worker's RSS before, at its peak and
// after.
//
//   npm run bench:stalled-primary -- [--seconds 10] [--connections 8] [--rotate]
//
// --rotate: a new X-Forwarded-For for every request (one address otherwise).

import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '10' },
    connections: { type: 'string', default: '8' },
    rotate: { type: 'boolean', default: false },
  },
});
const seconds = Number(values.seconds);
const connections = Number(values.connections);

const bin = new URL('../bin/booking-search-server.js', import.meta.url).pathname;
const server = spawn(process.execPath, [bin, '--demo', '--port', '0', '--trust-proxy', '127.0.0.1', '--workers', '2'], {
  stdio: ['ignore', 'pipe', 'ignore'],
});
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const rssMb = (pid: number): number => {
  const match = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Math.round(Number(match?.[1] ?? 0) / 1024);
};

/** A connection a worker has taken: it answered a HEAD request. */
async function connected(port: number): Promise<Socket> {
  const socket = connect(port, '127.0.0.1').on('error', () => {});
  await once(socket, 'connect');
  socket.write('HEAD /api/v1/status HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
  let head = '';
  while (!head.includes('\r\n\r\n')) head += String((await once(socket, 'data'))[0]);
  return socket;
}

let sent = 0;
const statuses = new Map<number, number>();

/** Batches of 100 pipelined requests on `socket` until it closes, answers nothing for 5 s, or `deadline`. */
async function flood(socket: Socket, deadline: number): Promise<void> {
  let answered = 0;
  let open = true;
  let tail = '';
  socket.on('data', (chunk: Buffer) => {
    const text = tail + chunk.toString('latin1');
    for (const [, status] of text.matchAll(/HTTP\/1\.1 (\d{3})/g)) {
      statuses.set(Number(status), (statuses.get(Number(status)) ?? 0) + 1);
      answered += 1;
    }
    tail = text.slice(-12);
  });
  socket.once('close', () => {
    open = false;
  });
  let mine = 0;
  while (open && Date.now() < deadline) {
    let batch = '';
    for (let i = 0; i < 100; i += 1) {
      const n = sent++;
      const address = values.rotate ? `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}` : '192.0.2.66';
      batch += `GET /api/v1/status HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Forwarded-For: ${address}\r\n\r\n`;
    }
    mine += 100;
    socket.write(batch);
    const quiet = Date.now() + 5_000;
    while (open && answered < mine && Date.now() < quiet) await sleep(1);
    if (answered < mine) break;
  }
  socket.destroy();
}

try {
  let out = '';
  server.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  const listening = /listening on http:\/\/127\.0\.0\.1:(\d+)\/[\s\S]*\(pids (\d+), (\d+)\)/;
  for (let waited = 0; !listening.test(out); waited += 50) {
    if (waited > 10_000) throw new Error('the CLI did not start');
    await sleep(50);
  }
  const [, port, first, second] = listening.exec(out)?.map(Number) ?? [];
  const workers = [first as number, second as number];
  const sockets = await Promise.all(Array.from({ length: connections }, () => connected(port as number)));
  const before = workers.map(rssMb);
  const peak = [...before];
  const primary = server.pid as number;
  process.kill(primary, 'SIGSTOP');
  const started = Date.now();
  const sampler = setInterval(() => {
    for (const [i, pid] of workers.entries()) peak[i] = Math.max(peak[i] as number, rssMb(pid));
  }, 250);
  await Promise.all(sockets.map((socket) => flood(socket, started + seconds * 1000)));
  clearInterval(sampler);
  const stalled = Date.now() - started;
  const atEnd = workers.map(rssMb);
  process.kill(primary, 'SIGCONT');
  await sleep(2_000);
  const after = workers.map(rssMb);
  const login = await fetch(`http://127.0.0.1:${port}/api/v1/status`, {
    headers: { authorization: `Basic ${Buffer.from('demo:demo').toString('base64')}`, 'x-forwarded-for': '192.0.2.77' },
  });
  const show = [...statuses.entries()]
    .sort(([a], [b]) => a - b)
    .map(([status, n]) => `${n.toLocaleString('en')} × ${status}`)
    .join(', ');
  process.stdout.write(
    `node ${process.version}; --workers 2; primary stopped ${(stalled / 1000).toFixed(1)} s; ${connections} connections opened before, ${values.rotate ? 'a new address a request' : 'one address'}, no credentials\n` +
      `answers while stopped: ${show || 'none'} (${sent.toLocaleString('en')} requests sent)\n` +
      `worker RSS (MB) before / peak / at SIGCONT / 2 s after: ${workers.map((_, i) => `${before[i]} / ${peak[i]} / ${atEnd[i]} / ${after[i]}`).join('; ')}\n` +
      `after SIGCONT, the right password from a new address: ${login.status}\n`,
  );
} finally {
  server.kill('SIGCONT');
  server.kill('SIGTERM');
}
