// Heavy reconciliations at once: what the service's memory does while 12, then 24 clients
// each send a 1,000-line statement whose lines compete for the same bookings (a book of
// 5,000 bookings of 12.50 over 300 days, every line -12.50 on one date with 25 days either
// side: about 870 candidates a line). For each count, a server of its own (the command,
// pinned to core 0): its RSS before and its peak (VmHWM), the wall time until every answer
// is in, the answers by status, and another client's /status (a new connection every 20 ms)
// meanwhile.
//
// `npm run build`, then `node --import tsx bench/abgleich-parallel.ts [--counts 12,24]`
// (at most 48 at once; each request gives up after 120 s).

import { readFileSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import { serviceEnv as env, loadAverage, PASSWORD, rssMb, USER } from './load.js';
import { serviceCommand, startServer, stopServer } from './process.js';

const FILE = 'bench/data/abgleich-parallel.sqlite';
const MOST = 48;
const authorization = `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}`;
const DAY_MS = 86_400_000;

/** The book: 5,000 bookings of 12.50 (an expense), 16 or 17 a day from 2026-01-01. */
async function writeBook(): Promise<void> {
  await mkdir('bench/data', { recursive: true });
  await rm(FILE, { force: true });
  const db = new Database(FILE);
  db.exec(readFileSync('fixtures/schema.sql', 'utf8'));
  const insert = db.prepare('INSERT INTO entries (id, date, amount_cents, subject) VALUES (?, ?, 1250, ?)');
  const start = Date.parse('2026-01-01T00:00:00Z');
  db.transaction(() => {
    for (let i = 0; i < 5000; i += 1) {
      const date = new Date(start + Math.floor(i / 16.7) * DAY_MS).toISOString().slice(0, 10);
      insert.run(i + 1, date, `Barauslage ${i + 1}, ${'Quittung liegt bei, Kasse Büro. '.repeat(3)}`);
    }
  })();
  db.close();
}

const BODY = JSON.stringify({
  zeilen: Array.from({ length: 1000 }, () => ({ datum: '2026-06-01', betrag: '-12.50', tage: 25 })),
});

async function post(origin: string): Promise<number> {
  const response = await fetch(`${origin}/api/v1/abgleich`, {
    method: 'POST',
    headers: { authorization, 'content-type': 'application/json', connection: 'close' },
    body: BODY,
    signal: AbortSignal.timeout(120_000),
  });
  await response.arrayBuffer();
  return response.status;
}

/** The peak RSS of the process so far, in MB. */
const peakMb = (pid: number): number =>
  Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;

const quantile = (values: number[], q: number): number =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(q * values.length))] ?? Number.NaN;

async function run(count: number): Promise<string> {
  const server = await startServer(serviceCommand(FILE), env, '0');
  const pid = server.child.pid as number;
  try {
    await post(server.origin); // warm: the statements prepared, the pages cached
    const before = rssMb(pid);
    const started = performance.now();
    let done = false;
    const all = Promise.all(Array.from({ length: count }, () => post(server.origin).catch(() => 0))).finally(() => {
      done = true;
    });
    const waits: number[] = [];
    while (!done) {
      const asked = performance.now();
      const response = await fetch(`${server.origin}/api/v1/status`, {
        headers: { authorization, connection: 'close' },
      });
      await response.arrayBuffer();
      waits.push(performance.now() - asked);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const statuses = await all;
    const wall = (performance.now() - started) / 1000;
    const answers = [...new Set(statuses)].map(
      (status) => `${statuses.filter((s) => s === status).length}× ${status || 'failed'}`,
    );
    return (
      `| ${count} | ${before.toFixed(0)} | ${peakMb(pid).toFixed(0)} | ${wall.toFixed(1)} | ${answers.join(', ')} | ` +
      `${quantile(waits, 0.5).toFixed(1)} | ${quantile(waits, 0.99).toFixed(1)} | ${Math.max(...waits).toFixed(1)} |`
    );
  } finally {
    await stopServer(server);
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({ options: { counts: { type: 'string', default: '12,24' } } });
  const counts = values.counts.split(',').map(Number);
  if (counts.some((count) => !Number.isInteger(count) || count < 1 || count > MOST))
    throw new Error(`--counts: whole numbers from 1 to ${MOST}`);
  await writeBook();
  const rows: string[] = [];
  for (const count of counts) rows.push(await run(count));
  console.log(`\nHeavy reconciliations at once (1,000 lines, ~870 candidates each; load average ${loadAverage()}):\n`);
  console.log('| at once | RSS before MB | peak RSS MB | wall s | answers | /status p50 ms | p99 | max |');
  console.log('|---:|---:|---:|---:|---|---:|---:|---:|');
  for (const row of rows) console.log(row);
}
