// Online guessing against the CLI from fresh addresses, the worst case of docs/API.md,
// Throttling: a local user behind a proxy trusted on loopback picks a new X-Forwarded-For
// for every wrong password. Counts what the attacker got checked (401) and what was turned
// away (429), while a client that logged in before keeps searching from its own address,
// on one connection, and another reconnects for every request (with --workers, each
// connection may reach another worker).
//
//   npm run bench:guessing -- [--seconds 20] [--connections 8] [--usernames 1] [--workers 1]

import { spawn } from 'node:child_process';
import { Agent, request } from 'node:http';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '20' },
    connections: { type: 'string', default: '8' },
    // 1: every guess for the demo user; more: each guess for another of that many usernames.
    usernames: { type: 'string', default: '1' },
    // The service's --workers.
    workers: { type: 'string', default: '1' },
  },
});
const seconds = Number(values.seconds);
const connections = Number(values.connections);
const usernames = Number(values.usernames);
const workers = Number(values.workers);

const bin = new URL('../bin/booking-search-server.js', import.meta.url).pathname;
const server = spawn(
  process.execPath,
  [bin, '--demo', '--port', '0', '--trust-proxy', '127.0.0.1', '--workers', String(workers)],
  {
    stdio: ['ignore', 'pipe', 'ignore'],
  },
);
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const basic = (user: string, password: string): string =>
  `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

function get(port: number, agent: Agent | false, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve) => {
    const req = request({ port, host: '127.0.0.1', path: '/api/v1/status', agent, headers }, (res) => {
      res.resume().on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', () => resolve(0));
    req.end();
  });
}

try {
  let out = '';
  server.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  const listening = /listening on http:\/\/127\.0\.0\.1:(\d+)\//;
  for (let waited = 0; !listening.test(out); waited += 50) {
    if (waited > 10_000) throw new Error('the CLI did not start');
    await sleep(50);
  }
  const port = Number(listening.exec(out)?.[1]);
  const agent = new Agent({ keepAlive: true, maxSockets: connections });
  const client = new Agent({ keepAlive: true, maxSockets: 1 });
  const right = { authorization: basic('demo', 'demo'), 'x-forwarded-for': '192.0.2.7' };
  if ((await get(port, client, right)) !== 200) throw new Error('the client could not log in');

  const counts = new Map<number, number>();
  const clientStatuses = new Map<number, number>();
  const reconnectingStatuses = new Map<number, number>();
  // Its one login before the attack, through whichever worker takes that connection.
  if ((await get(port, false, { ...right, 'x-forwarded-for': '192.0.2.8' })) !== 200)
    throw new Error('the reconnecting client could not log in');
  const deadline = Date.now() + seconds * 1000;
  let guess = 0;
  const attacker = async (): Promise<void> => {
    while (Date.now() < deadline) {
      const i = guess++;
      const address = `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;
      const user = usernames === 1 ? 'demo' : `user${i % usernames}`;
      const status = await get(port, agent, { authorization: basic(user, `guess${i}`), 'x-forwarded-for': address });
      counts.set(status, (counts.get(status) ?? 0) + 1);
    }
  };
  const legitimate = async (): Promise<void> => {
    while (Date.now() < deadline) {
      const status = await get(port, client, right);
      clientStatuses.set(status, (clientStatuses.get(status) ?? 0) + 1);
      await sleep(100);
    }
  };
  const reconnecting = async (): Promise<void> => {
    while (Date.now() < deadline) {
      const status = await get(port, false, { ...right, 'x-forwarded-for': '192.0.2.8' });
      reconnectingStatuses.set(status, (reconnectingStatuses.get(status) ?? 0) + 1);
      await sleep(250);
    }
  };
  await Promise.all([...Array.from({ length: connections }, attacker), legitimate(), reconnecting()]);
  const show = (map: Map<number, number>): string =>
    [...map.entries()]
      .sort(([a], [b]) => a - b)
      .map(([status, n]) => `${n} × ${status}`)
      .join(', ');
  process.stdout.write(
    `node ${process.version}; ${workers === 1 ? 'one process' : `--workers ${workers}`}; ${seconds} s, ${connections} connections, a fresh address per guess, ${usernames === 1 ? 'one username' : `${usernames} usernames`}\n` +
      `attacker: ${guess} guesses: ${show(counts)} (401 = checked)\n` +
      `checked guesses per window of 60 s: ${((counts.get(401) ?? 0) / Math.ceil(seconds / 60)).toFixed(0)}, so ${(((counts.get(401) ?? 0) / Math.ceil(seconds / 60)) * 60).toFixed(0)} an hour\n` +
      `client that logged in before, every 100 ms from its own address: ${show(clientStatuses)}\n` +
      `client that logged in before, a new connection every 250 ms from its own address: ${show(reconnectingStatuses)}\n`,
  );
} finally {
  server.kill('SIGTERM');
}
