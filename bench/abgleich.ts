// The reconciliation in one request (POST /api/v1/abgleich) beside the searches it stands
// for, on the 20k ANALYZEd file, the service as the command runs it (pinned to core 0):
//
// - a 400-line statement in one request, beside the same 400 lines as 400 single searches
//   (a week either side, half a euro) one after the other on one kept-alive connection:
//   wall time and the server's CPU time for the whole statement, median of the rounds,
//   the two in alternating order;
// - the wait of another client's /status (a new connection every 5 ms) while a 1,000-line
//   request runs, and while six clients post a 1 MiB body of numbers (under a key "0") over
//   and over for 3 s, each refused, beside the same while nothing runs.
//
// Part of `npm run bench` (bench/http.ts); `node --import tsx bench/abgleich.ts [--rounds 5]`
// runs it alone (after `npm run build && npm run bench:setup`).

import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import { type BankLine, statementOver } from './bank-statement.js';
import { cpuSeconds, serviceEnv as env, loadAverage, PASSWORD, USER } from './load.js';
import { serviceCommand, startServer, stopServer } from './process.js';
import { median } from './shapes.js';

const FILE = 'bench/data/bookings-20000-analyzed.sqlite';
const authorization = `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}`;
const DAY_MS = 86_400_000;

const shift = (date: string, days: number): string =>
  new Date(Date.parse(`${date}T00:00:00Z`) + days * DAY_MS).toISOString().slice(0, 10);

/** The single search a careful client sends for one line. */
const searchOf = (line: BankLine): string =>
  `/api/v1/buchungen?von=${shift(line.datum, -(line.tage ?? 3))}&bis=${shift(line.datum, line.tage ?? 3)}` +
  `&betrag=${line.betrag}&toleranz=${line.toleranz ?? '0'}`;

async function timed(pid: number, work: () => Promise<void>): Promise<{ ms: number; cpuMs: number }> {
  const cpu = cpuSeconds(pid);
  const started = performance.now();
  await work();
  return { ms: performance.now() - started, cpuMs: (cpuSeconds(pid) - cpu) * 1000 };
}

async function post(origin: string, zeilen: BankLine[]): Promise<void> {
  const response = await fetch(`${origin}/api/v1/abgleich`, {
    method: 'POST',
    headers: { authorization, 'content-type': 'application/json' },
    body: JSON.stringify({ zeilen }),
  });
  if (response.status !== 200) throw new Error(`abgleich: ${response.status} ${await response.text()}`);
  await response.arrayBuffer();
}

async function singles(origin: string, zeilen: BankLine[]): Promise<void> {
  for (const line of zeilen) {
    const response = await fetch(`${origin}${searchOf(line)}`, { headers: { authorization } });
    if (response.status !== 200) throw new Error(`search: ${response.status} ${await response.text()}`);
    await response.arrayBuffer();
  }
}

/** How long /status took, asked on a new connection every 5 ms while `running` lasts. */
async function statusWaits(origin: string, running: Promise<unknown>): Promise<number[]> {
  let done = false;
  void running.finally(() => {
    done = true;
  });
  const waits: number[] = [];
  while (!done) {
    const started = performance.now();
    const response = await fetch(`${origin}/api/v1/status`, { headers: { authorization, connection: 'close' } });
    await response.arrayBuffer();
    waits.push(performance.now() - started);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  await running;
  return waits;
}

/** Six clients posting a 1 MiB body of numbers over and over for `ms`, each refused (400), as a hostile one does. */
async function flood(origin: string, ms: number): Promise<void> {
  const body = `{"0":[${Array(520_000).fill(1).join(',')}]}`;
  const end = Date.now() + ms;
  const client = async (): Promise<void> => {
    while (Date.now() < end) {
      const response = await fetch(`${origin}/api/v1/abgleich`, {
        method: 'POST',
        headers: { authorization, 'content-type': 'application/json' },
        body,
      });
      if (response.status !== 400) throw new Error(`flood: ${response.status} ${await response.text()}`);
      await response.arrayBuffer();
    }
  };
  await Promise.all(Array.from({ length: 6 }, client));
}

const quantile = (values: number[], q: number): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
};

export async function reconcileScenario({ rounds }: { rounds: number }): Promise<void> {
  const db = new Database(FILE, { readonly: true, fileMustExist: true });
  const bookings = db
    .prepare<[], { id: number; date: string; amountCents: number }>(
      'SELECT id, date, amount_cents AS amountCents FROM entries ORDER BY date, id',
    )
    .all();
  db.close();
  // The last two years of the book, as a bank statement covers them.
  const recent = bookings.slice(-Math.round(bookings.length / 5));
  const statement = statementOver(recent, 400).zeilen;
  const big = statementOver(recent, 1000, 11).zeilen;
  const server = await startServer(serviceCommand(FILE), env, '0');
  const pid = server.child.pid as number;
  try {
    // Warm-up: the statements prepared, the pages cached.
    await post(server.origin, statement);
    await singles(server.origin, statement);
    const one: Array<{ ms: number; cpuMs: number }> = [];
    const many: Array<{ ms: number; cpuMs: number }> = [];
    for (let round = 0; round < rounds; round += 1) {
      const order = round % 2 === 0 ? ['one', 'many'] : ['many', 'one'];
      for (const kind of order) {
        if (kind === 'one') one.push(await timed(pid, () => post(server.origin, statement)));
        else many.push(await timed(pid, () => singles(server.origin, statement)));
      }
    }
    const idle: number[] = [];
    const busy: number[] = [];
    const flooded: number[] = [];
    for (let round = 0; round < rounds; round += 1) {
      idle.push(...(await statusWaits(server.origin, new Promise((resolve) => setTimeout(resolve, 300)))));
      busy.push(...(await statusWaits(server.origin, post(server.origin, big))));
      flooded.push(...(await statusWaits(server.origin, flood(server.origin, 3_000))));
    }
    const row = (name: string, runs: Array<{ ms: number; cpuMs: number }>): string =>
      `| ${name} | ${median(runs.map((r) => r.ms)).toFixed(1)} | ${median(runs.map((r) => r.cpuMs)).toFixed(0)} |`;
    console.log(`\nThe reconciliation on the 20k ANALYZEd file, ${rounds} rounds (load average ${loadAverage()}):\n`);
    console.log('| 400 bank lines | wall ms (median) | server CPU ms (median) |');
    console.log('|---|---:|---:|');
    console.log(row('one POST /api/v1/abgleich', one));
    console.log(row('400 GET /api/v1/buchungen, one after the other', many));
    console.log('\nAnother client’s /status (a new connection every 5 ms), ms:\n');
    console.log('| while | asked | p50 | p99 | max |');
    console.log('|---|---:|---:|---:|---:|');
    for (const [name, waits] of [
      ['nothing runs', idle],
      ['a 1,000-line reconciliation runs', busy],
      ['six clients post 1 MiB of numbers', flooded],
    ] as const) {
      console.log(
        `| ${name} | ${waits.length} | ${quantile(waits, 0.5).toFixed(2)} | ${quantile(waits, 0.99).toFixed(2)} | ${Math.max(...waits).toFixed(2)} |`,
      );
    }
  } finally {
    await stopServer(server);
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({ options: { rounds: { type: 'string', default: '5' } } });
  await reconcileScenario({ rounds: Number(values.rounds) });
}
