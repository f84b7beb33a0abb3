// One client against the writer: 50 connections repeat the widest search (every date,
// every amount, a page of 1,000) on the 1M file while another process commits a booking
// every 10 ms with a busy timeout of 5 s, 1 s and 0, and this process opens a new
// connection every 250 ms to ask /status. The writer's commit latencies and SQLITE_BUSY
// failures, the searches answered, and how long the new connection waited, beside the
// writer alone and, with --before, an earlier build, in rotating order each round.
// Part of `npm run bench` (bench/http.ts); `npm run bench -- --widest-only` runs it alone.

import { spawn } from 'node:child_process';
import { chmodSync, copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serviceEnv as env, loadAverage, PASSWORD, USER } from './load.js';
import { onCore, pinned, serviceCommand, startServer, stopServer } from './process.js';
import { median } from './shapes.js';

export const WIDEST = '/api/v1/buchungen?von=0000-01-01&bis=9999-12-31&betrag=0&toleranz=999999999999.99&limit=1000';
const FILE = 'bench/data/bookings-1000000.sqlite';
const CLIENTS = 50;
const BUSY_TIMEOUTS = [5000, 1000, 0] as const;
const authorization = `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}`;

interface Run {
  commits: number;
  busy: number;
  p50: number | null;
  p99: number | null;
  max: number | null;
  searches: number;
  failed: number;
  statusP50: number;
  statusMax: number;
}

/** Spawns a bench script, pinned to core 1, and resolves with the JSON line it prints. */
function runScript<T>(args: string[]): Promise<T> {
  const [command, ...rest] = onCore('1', ['node', '--import', 'tsx', ...args]);
  const child = spawn(command as string, rest, { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  return new Promise((resolve, reject) =>
    child.once('exit', (code) =>
      code === 0 ? resolve(JSON.parse(out) as T) : reject(new Error(`${args[0]}: ${code}`)),
    ),
  );
}

/** Milliseconds from a new connection to the answer of GET /api/v1/status (30 s when none came). */
function statusFromNewConnection(origin: string): Promise<number> {
  const started = performance.now();
  return new Promise((resolve) => {
    const req = request(`${origin}/api/v1/status`, { headers: { authorization }, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(performance.now() - started));
    });
    req.setTimeout(30_000, () => req.destroy());
    req.on('error', () => resolve(30_000));
    req.end();
  });
}

/** bench/clients.ts's arguments: `connections` clients searching `path` at `origin` for `seconds`. */
const clientsArgs = (origin: string, path: string, connections: number, seconds: number): string[] => [
  'bench/clients.ts',
  '--origin',
  origin,
  '--path',
  path,
  '--connections',
  String(connections),
  '--seconds',
  String(seconds),
];

async function once(
  command: string[] | undefined,
  file: string,
  busyMs: number,
  seconds: number,
  path: string,
): Promise<Run> {
  const server = command === undefined ? undefined : await startServer(command, env, '0');
  if (server !== undefined) await statusFromNewConnection(server.origin); // the process is up
  if (server !== undefined) {
    // Warm: the file's pages in the page cache, the statements prepared.
    await runScript(clientsArgs(server.origin, path, 1, 1));
  }
  const writer = runScript<{ commits: number; busy: number; p50: number; p99: number; max: number }>([
    'bench/writer.ts',
    '--db',
    file,
    '--interval',
    '10',
    '--seconds',
    String(seconds),
    '--busy-timeout',
    String(busyMs),
  ]);
  const clients =
    server === undefined
      ? Promise.resolve({ answered: 0, failed: 0 })
      : runScript<{ answered: number; failed: number }>(clientsArgs(server.origin, path, CLIENTS, seconds));
  const status: number[] = [];
  const probing = (async () => {
    if (server === undefined) return;
    const end = Date.now() + seconds * 1000;
    await new Promise((resolve) => setTimeout(resolve, 500)); // the load is on
    while (Date.now() < end) {
      status.push(await statusFromNewConnection(server.origin));
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  })();
  const [w, c] = await Promise.all([writer, clients, probing]);
  if (server !== undefined) await stopServer(server);
  return {
    ...w,
    searches: c.answered / seconds,
    failed: c.failed,
    statusP50: status.length === 0 ? Number.NaN : median(status),
    statusMax: status.length === 0 ? Number.NaN : Math.max(...status),
  };
}

export async function widestScenario(options: {
  rounds: number;
  seconds: number;
  before?: string | undefined;
  /** Another search than the widest (a query string), to measure its neighbours. */
  query?: string | undefined;
}): Promise<void> {
  const { rounds, seconds, before } = options;
  const path = options.query === undefined ? WIDEST : `/api/v1/buchungen?${options.query}`;
  const dir = mkdtempSync(join(tmpdir(), 'bench-widest-'));
  try {
    // A copy, so that the benchmark file stays as it is; the writer's few thousand
    // bookings over the runs change nothing that matters.
    const file = join(dir, 'widest.sqlite');
    copyFileSync(FILE, file);
    // The service refuses a directory its user could write (docs/operations.md); the
    // writer, root here, creates its journal there all the same.
    chmodSync(dir, 0o555);
    const service = (root: string): string[] => serviceCommand(file, root);
    const configs: Array<{ reader: string; busyMs: number; command: string[] | undefined }> = [
      { reader: 'none (writer alone)', busyMs: 5000, command: undefined },
      ...BUSY_TIMEOUTS.map((busyMs) => ({ reader: 'service', busyMs, command: service('.') })),
      ...(before === undefined
        ? []
        : BUSY_TIMEOUTS.map((busyMs) => ({ reader: 'before', busyMs, command: service(before) }))),
    ];
    console.log(
      `\nOne client against the writer: ${CLIENTS} connections repeat ${path === WIDEST ? 'the widest search' : 'the search'} (${path.split('?')[1]}) on the 1M file; another process commits a booking every 10 ms (rollback journal, synchronous FULL) with the busy timeout given; this process opens a new connection every 250 ms for /status. ${rounds} round(s) × ${seconds} s per configuration, ${pinned ? 'server on core 0, clients and writer on core 1' : 'unpinned (no taskset)'}. Load average at the start: ${loadAverage()}. Medians over the rounds.\n`,
    );
    const results = new Map<string, Run[]>();
    const key = (c: { reader: string; busyMs: number }): string => `${c.reader}|${c.busyMs}`;
    for (let round = 0; round < rounds; round += 1) {
      const order = configs.map((_, i) => configs[(i + round * 3) % configs.length] as (typeof configs)[number]);
      for (const config of order) {
        const run = await once(config.command, file, config.busyMs, seconds, path);
        results.set(key(config), [...(results.get(key(config)) ?? []), run]);
        process.stderr.write(
          `round ${round + 1}: ${config.reader}, busy timeout ${config.busyMs} ms: ${JSON.stringify(run)}\n`,
        );
      }
    }
    const cell = (runs: Run[], pick: (r: Run) => number | null, digits: number): string => {
      const values = runs.map(pick).filter((v): v is number => v !== null && !Number.isNaN(v));
      return values.length === 0 ? '—' : median(values).toFixed(digits);
    };
    console.log(
      '| reader | writer busy_timeout | commits | SQLITE_BUSY | commit p50 ms | commit p99 ms | commit max ms | widest searches/s | searches not 200 | new connection /status p50 ms | /status max ms |',
    );
    console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
    for (const config of configs) {
      const runs = results.get(key(config)) as Run[];
      const alone = config.command === undefined;
      console.log(
        `| ${config.reader} | ${config.busyMs / 1000} s | ${cell(runs, (r) => r.commits, 0)} | ${cell(runs, (r) => r.busy, 0)} | ${cell(runs, (r) => r.p50, 1)} | ${cell(runs, (r) => r.p99, 1)} | ${cell(runs, (r) => r.max, 1)} | ${alone ? '—' : cell(runs, (r) => r.searches, 1)} | ${alone ? '—' : cell(runs, (r) => r.failed, 0)} | ${alone ? '—' : cell(runs, (r) => r.statusP50, 1)} | ${alone ? '—' : cell(runs, (r) => r.statusMax, 0)} |`,
      );
    }
    if (before !== undefined) {
      console.log('\n| writer busy_timeout | before / service: commit p99 | before / service: /status max |');
      console.log('|---:|---:|---:|');
      for (const busyMs of BUSY_TIMEOUTS) {
        const b = results.get(`before|${busyMs}`) as Run[];
        const s = results.get(`service|${busyMs}`) as Run[];
        const ratio = (pick: (r: Run) => number | null): string => {
          const ratios = b
            .map((r, i) => {
              const x = pick(r);
              const y = pick(s[i] as Run);
              return x === null || y === null ? Number.NaN : x / y;
            })
            .filter((v) => !Number.isNaN(v));
          return ratios.length === 0 ? '—' : median(ratios).toFixed(1);
        };
        console.log(`| ${busyMs / 1000} s | ${ratio((r) => r.p99)} | ${ratio((r) => r.statusMax)} |`);
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
