// One office behind one address (NAT), against the CLI: after a password rotation one
// client keeps the old password and sends it as fast as it can, while another user's
// client, which logged in before from the same address, keeps asking, and a username never
// seen there tries once a second. Counts each one's answers (docs/API.md, Throttling). The
// address is an X-Forwarded-For entry from a proxy trusted on loopback.
//
//   npm run bench:shared-address -- [--seconds 60] [--connections 8] [--workers 1] [--root DIR]
//
// --root: the checkout whose build to run (default: this one), to measure an earlier build.

import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '60' },
    connections: { type: 'string', default: '8' },
    workers: { type: 'string', default: '1' },
    root: { type: 'string', default: new URL('..', import.meta.url).pathname },
  },
});
const seconds = Number(values.seconds);
const connections = Number(values.connections);
const OFFICE = '203.0.113.9';

const dir = mkdtempSync(join(tmpdir(), 'shared-address-'));
const credentials = join(dir, 'users');
writeFileSync(credentials, 'kasse:alt\nbuero:b-geheim\n', { mode: 0o600 });
const server = spawn(
  process.execPath,
  [
    join(resolve(values.root), 'bin', 'booking-search-server.js'),
    '--demo',
    '--port',
    '0',
    '--trust-proxy',
    '127.0.0.1',
    '--credentials-file',
    credentials,
    '--workers',
    values.workers,
  ],
  { stdio: ['ignore', 'pipe', 'pipe'] },
);
const sleep = (ms: number): Promise<void> => new Promise((done) => setTimeout(done, ms));
const as = (user: string, password: string): Record<string, string> => ({
  authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`,
  'x-forwarded-for': OFFICE,
});

function get(port: number, agent: Agent | false, headers: Record<string, string>): Promise<number> {
  return new Promise((done) => {
    const req = request({ port, host: '127.0.0.1', path: '/api/v1/status', agent, headers }, (res) => {
      res.resume().on('end', () => done(res.statusCode ?? 0));
    });
    req.on('error', () => done(0));
    req.end();
  });
}

/** Waits until `pattern` is in what `text` returns, for at most 10 s. */
async function waitFor(text: () => string, pattern: RegExp): Promise<RegExpExecArray> {
  for (let waited = 0; waited <= 10_000; waited += 50) {
    const match = pattern.exec(text());
    if (match !== null) return match;
    await sleep(50);
  }
  throw new Error(`the CLI did not say ${pattern}`);
}

const tally = (): Map<number, number> => new Map();
const count = (map: Map<number, number>, status: number): void => void map.set(status, (map.get(status) ?? 0) + 1);
const show = (map: Map<number, number>): string =>
  [...map.entries()]
    .sort(([a], [b]) => a - b)
    .map(([status, n]) => `${n} × ${status}`)
    .join(', ');

try {
  let out = '';
  let err = '';
  server.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  server.stderr.setEncoding('utf8').on('data', (chunk: string) => (err += chunk));
  const port = Number((await waitFor(() => out, /listening on http:\/\/127\.0\.0\.1:(\d+)\//))[1]);
  const stale = new Agent({ keepAlive: true, maxSockets: connections });
  const colleague = new Agent({ keepAlive: true, maxSockets: 1 });
  // Both clients logged in before, from the office.
  if ((await get(port, false, as('kasse', 'alt'))) !== 200) throw new Error('kasse could not log in');
  if ((await get(port, colleague, as('buero', 'b-geheim'))) !== 200) throw new Error('buero could not log in');
  // The rotation: kasse's password changes; its client does not hear of it.
  writeFileSync(credentials, 'kasse:neu\nbuero:b-geheim\n');
  server.kill('SIGHUP');
  await waitFor(() => err, /SIGHUP: credentials re-read/);

  const answers = { stale: tally(), colleague: tally(), stranger: tally() };
  const deadline = Date.now() + seconds * 1000;
  const staleClient = async (): Promise<void> => {
    while (Date.now() < deadline) count(answers.stale, await get(port, stale, as('kasse', 'alt')));
  };
  const colleagueClient = async (): Promise<void> => {
    while (Date.now() < deadline) {
      count(answers.colleague, await get(port, colleague, as('buero', 'b-geheim')));
      await sleep(10);
    }
  };
  const stranger = async (): Promise<void> => {
    for (let i = 0; Date.now() < deadline; i += 1) {
      count(answers.stranger, await get(port, false, as(`fremd${i}`, 'raten')));
      await sleep(1_000);
    }
  };
  await Promise.all([...Array.from({ length: connections }, staleClient), colleagueClient(), stranger()]);
  process.stdout.write(
    `node ${process.version}; ${values.workers === '1' ? 'one process' : `--workers ${values.workers}`}; ${seconds} s from ${OFFICE}\n` +
      `kasse's client with the old password, ${connections} connections: ${show(answers.stale)}\n` +
      `buero's client, logged in before, every 10 ms: ${show(answers.colleague)}\n` +
      `a new username each second: ${show(answers.stranger)}\n`,
  );
} finally {
  server.kill('SIGTERM');
  rmSync(dir, { recursive: true, force: true });
}
