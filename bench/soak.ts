// Soak: at least 200,000 mixed requests (valid, invalid, unauthenticated, status) at 50
// connections against the real CLI; reports RSS at the half and at the end, open file
// descriptors before and after, and every error. Bounded to 3 minutes.
//
// The first half is also the warm-up: V8 grows its heap's capacity in steps during the
// first 100,000 requests or so (the live heap after each full collection stays flat), and
// RSS with it; a leak grows on through the second half. The username's and the global
// failure budgets are off (their own tests hold them): spent, they would answer the wrong
// passwords 429 before the address table filled.
//
//   npm run soak -- [--db bench/data/bookings-1000000.sqlite] [--requests 200000]

import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import { loopbackAddress } from './flood.js';
import { queriesFor, toQueryString } from './shapes.js';

const { values } = parseArgs({
  options: {
    db: { type: 'string', default: 'bench/data/bookings-1000000.sqlite' },
    requests: { type: 'string', default: '200000' },
    connections: { type: 'string', default: '50' },
  },
});
const total = Number(values.requests);
const connections = Number(values.connections);
const DEADLINE_MS = 170_000;
if (!existsSync(values.db)) {
  console.error(`no ${values.db}: run npm run bench:data -- --rows 1000000 first`);
  process.exit(1);
}

const db = new Database(values.db, { readonly: true });
const searches = queriesFor(db, 'month exact', 2000, 5).map((q) => `/api/v1/buchungen?${toQueryString(q)}`);
db.close();
const invalid = [
  '/api/v1/buchungen?von=2026-02-30&bis=2026-03-01&betrag=1',
  '/api/v1/buchungen?x=%zz',
  '/api/v1/buchungen?von=2026-01-01&bis=2026-01-31&betrag=1.234',
  '/api/v1/nirgends',
  '/api/v1/buchungen?limit=5000&von=2026-01-01&bis=2026-01-31&betrag=1',
];
const AUTH = `Basic ${Buffer.from('soak:soak').toString('base64')}`;
const WRONG = `Basic ${Buffer.from('soak:falsch').toString('base64')}`;

const server = spawn(
  process.execPath,
  [
    ...['bin/booking-search-server.js', '--db', values.db, '--port', '0'],
    ...['--max-user-failures', '0', '--max-global-failures', '0'],
  ],
  {
    env: { ...process.env, BOOKING_SEARCH_USER: 'soak', BOOKING_SEARCH_PASSWORD: 'soak' },
    stdio: ['ignore', 'pipe', 'pipe'],
  },
);
let stderr = '';
server.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
const origin = await new Promise<string>((resolve) => {
  let out = '';
  server.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    out += chunk;
    const match = /listening on (http:\/\/[\d.:]+)\//.exec(out);
    if (match) {
      server.stdout.removeAllListeners('data').resume();
      resolve(match[1] as string);
    }
  });
});
const pid = server.pid as number;
const rssMb = (): number => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]) / 1024;
const fds = (): number => readdirSync(`/proc/${pid}/fd`).length;
// The process that opened the book ends once idle (a few seconds), and its channel's
// descriptor with it: counted before once it has gone, at most 10 s after the start.
const atStart = fds();
for (let waited = 0; waited < 10_000 && fds() >= atStart; waited += 200) {
  await new Promise((resolve) => setTimeout(resolve, 200));
}
const fdsBefore = fds();

const agent = new Agent({ keepAlive: true, maxSockets: connections });
const statuses = new Map<string, number>();
const errors: string[] = [];
let sent = 0;
let rssHalf = 0;
const started = Date.now();

function one(i: number): Promise<void> {
  const roll = i % 20;
  // Unauthenticated requests (a wrong password: a request without credentials is not
  // counted) come each from a loopback address of its own, below the throttle's limit, so
  // that the throttle's table (10,000 addresses) fills and stays bounded.
  const kind = roll < 13 ? 'search' : roll < 16 ? 'invalid' : roll < 18 ? 'unauthenticated' : 'status';
  const path =
    kind === 'search'
      ? (searches[i % searches.length] as string)
      : kind === 'invalid'
        ? (invalid[i % invalid.length] as string)
        : '/api/v1/status';
  const expected = { search: [200], invalid: [400, 404], unauthenticated: [401], status: [200] }[kind];
  const options =
    kind === 'unauthenticated'
      ? {
          agent: false as const,
          // The how-manieth unauthenticated request this is: two of every 20.
          localAddress: loopbackAddress(2 * Math.floor(i / 20) + roll - 16, 1),
          headers: { authorization: WRONG },
        }
      : { agent, headers: { authorization: AUTH } };
  return new Promise((resolve) => {
    const req = request(`${origin}${path}`, options, (res) => {
      res.resume().on('end', () => {
        const key = `${kind} ${res.statusCode}`;
        statuses.set(key, (statuses.get(key) ?? 0) + 1);
        if (!expected.includes(res.statusCode ?? 0)) errors.push(key);
        resolve();
      });
    });
    req.on('error', (error) => {
      errors.push(`${kind} ${error.message}`);
      resolve();
    });
    req.end();
  });
}

async function loop(): Promise<void> {
  while (sent < total && Date.now() - started < DEADLINE_MS) {
    const i = sent;
    sent += 1;
    if (i === total / 2) rssHalf = rssMb();
    await one(i);
  }
}
await Promise.all(Array.from({ length: connections }, loop));
const seconds = (Date.now() - started) / 1000;
const rssEnd = rssMb();
agent.destroy();
await new Promise((resolve) => setTimeout(resolve, 1_000));
const fdsAfter = fds();
server.kill('SIGTERM');
const exitCode = await new Promise<number | null>((resolve) => server.on('exit', resolve));
const unexpectedStderr = stderr.split('\n').filter((line) => line !== '');

console.log(
  `Soak: ${sent} requests (${connections} connections) in ${seconds.toFixed(1)} s, ${Math.round(sent / seconds)} req/s, against ${values.db}.\n`,
);
console.log('| figure | value |');
console.log('|---|---:|');
console.log(`| RSS at the half | ${rssHalf.toFixed(1)} MB |`);
console.log(`| RSS at the end | ${rssEnd.toFixed(1)} MB |`);
console.log(`| end / half | ${(rssEnd / rssHalf).toFixed(3)} |`);
console.log(`| open fds before / after | ${fdsBefore} / ${fdsAfter} |`);
console.log(`| errors (unexpected status, network) | ${errors.length} |`);
console.log(`| lines on stderr | ${unexpectedStderr.length} |`);
console.log(`| exit code after SIGTERM | ${exitCode} |`);
console.log(
  `\nAnswers: ${[...statuses.entries()]
    .sort()
    .map(([k, v]) => `${k}: ${v}`)
    .join(', ')}`,
);
if (errors.length > 0) console.log(`First errors: ${errors.slice(0, 5).join('; ')}`);
if (unexpectedStderr.length > 0) console.log(`stderr: ${unexpectedStderr.slice(0, 5).join(' | ')}`);
const ok =
  sent >= total &&
  errors.length === 0 &&
  rssEnd / rssHalf < 1.1 &&
  fdsAfter === fdsBefore &&
  exitCode === 0 &&
  unexpectedStderr.length === 0;
console.log(`\n${ok ? 'PASS' : 'FAIL'}`);
process.exitCode = ok ? 0 : 1;
