// The HTTP benchmark: the service beside its peers and the ceiling, over one file, in one
// run. Each server runs alone, pinned to core 0, while wrk loads it from core 1; servers
// alternate within each round, and every figure is also given as a ratio to the ceiling
// of the same round. Prints markdown.
//
//   npm run bench -- [--db bench/data/bookings-1000000.sqlite] [--rounds 3] [--seconds 8] [--connections 16]

import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import { median, queriesFor, toQueryString } from './shapes.js';

const { values } = parseArgs({
  options: {
    db: { type: 'string', default: 'bench/data/bookings-1000000.sqlite' },
    rounds: { type: 'string', default: '3' },
    seconds: { type: 'string', default: '8' },
    connections: { type: 'string', default: '16' },
    workers: { type: 'boolean', default: true },
  },
});
const file = values.db;
const rounds = Number(values.rounds);
const seconds = Number(values.seconds);
const connections = Number(values.connections);
const USER = 'bench';
const PASSWORD = 'bench';
const env = { ...process.env, BOOKING_SEARCH_USER: USER, BOOKING_SEARCH_PASSWORD: PASSWORD };

if (spawnSync('wrk', ['--version']).error) {
  console.error('wrk is needed: apt-get install wrk');
  process.exit(1);
}
const pinned = spawnSync('taskset', ['-c', '0', 'true']).status === 0;
const onCore = (core: string, command: string[]): string[] => (pinned ? ['taskset', '-c', core, ...command] : command);

const tsx = ['node', '--import', 'tsx'];
const SERVERS: Record<string, string[]> = {
  ceiling: [...tsx, 'bench/servers/ceiling.ts'],
  service: ['node', 'bin/booking-search-server.js', '--db', file, '--port', '0', '--max-auth-failures', '0'],
  fastify: [...tsx, 'bench/servers/fastify.ts', '--db', file],
  express: [...tsx, 'bench/servers/express.ts', '--db', file],
};

// The typical search of a reconciliation run: a month around a real booking, its exact amount.
const db = new Database(file, { readonly: true, fileMustExist: true });
const paths = queriesFor(db, 'month exact', 5000, 11).map((q) => `/api/v1/buchungen?${toQueryString(q)}`);
db.close();
const dir = mkdtempSync(join(tmpdir(), 'bench-'));
writeFileSync(join(dir, 'paths.txt'), `${paths.join('\n')}\n`);
const wrkEnv = {
  ...process.env,
  BENCH_PATHS: join(dir, 'paths.txt'),
  BENCH_AUTH: `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}`,
};

interface Running {
  child: ChildProcess;
  origin: string;
  startMs: number;
}

async function startServer(command: string[], core: string | undefined): Promise<Running> {
  const full = core === undefined ? command : onCore(core, command);
  const started = process.hrtime.bigint();
  const child = spawn(full[0] as string, full.slice(1), { env, stdio: ['ignore', 'pipe', 'inherit'] });
  let output = '';
  return new Promise((resolve, reject) => {
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
      if (output === undefined) return;
      output += chunk;
      const match = /listening on (http:\/\/[\d.:]+)\//.exec(output);
      if (match) {
        const startMs = Number(process.hrtime.bigint() - started) / 1e6;
        child.stdout?.removeAllListeners('data').resume(); // the access log goes nowhere
        resolve({ child, origin: match[1] as string, startMs });
      }
    });
    child.on('exit', (code) => reject(new Error(`${command.join(' ')} exited with ${code}: ${output}`)));
  });
}

async function stopServer({ child }: Running): Promise<void> {
  child.removeAllListeners('exit');
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

/** RSS of a process and its children, in MB (workers are children of the primary). */
function rssMb(pid: number): number {
  const pids = [
    pid,
    ...readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number),
  ];
  let kb = 0;
  for (const p of pids) {
    // taskset execs node in place, so the pid is node's.
    const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${p}/status`, 'utf8'));
    kb += Number(match?.[1] ?? 0);
  }
  return kb / 1024;
}

interface Load {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  rss: number;
}

function toMs(text: string): number {
  const match = /^([\d.]+)(us|ms|s)$/.exec(text);
  if (!match) return Number.NaN;
  const value = Number(match[1]);
  return match[2] === 'us' ? value / 1000 : match[2] === 's' ? value * 1000 : value;
}

function wrk(origin: string, runSeconds: number, core: string | undefined): Promise<string> {
  const args = ['-t1', `-c${connections}`, `-d${runSeconds}s`, '--latency', '-s', 'bench/rotate.lua', origin];
  const command = core === undefined ? ['wrk', ...args] : onCore(core, ['wrk', ...args]);
  return new Promise((resolve) => {
    const child = spawn(command[0] as string, command.slice(1), { env: wrkEnv, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
    child.on('exit', () => resolve(out));
  });
}

async function load(server: Running, core: string | undefined): Promise<Load> {
  await wrk(server.origin, 1, core); // warm-up
  const out = await wrk(server.origin, seconds, core);
  const rss = rssMb(server.child.pid as number);
  const errors = /Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? '0';
  const socketErrors = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
  return {
    rps: Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1]),
    p50: toMs(/^\s+50%\s+(\S+)$/m.exec(out)?.[1] ?? ''),
    p99: toMs(/^\s+99%\s+(\S+)$/m.exec(out)?.[1] ?? ''),
    errors: Number(errors) + (socketErrors ? socketErrors.slice(1).reduce((sum, n) => sum + Number(n), 0) : 0),
    rss,
  };
}

const results: Record<string, Load[]> = {};
const ratios: Record<string, number[]> = {};
const names = Object.keys(SERVERS);
console.log(
  `HTTP, typical search (a month, exact amount, ${paths.length} real bookings in rotation), ${connections} connections, ${rounds} rounds × ${seconds} s per server, ${pinned ? 'server on core 0, wrk on core 1' : 'unpinned (no taskset)'}.\n`,
);
for (let round = 0; round < rounds; round += 1) {
  const order = names.map((_, i) => names[(i + round) % names.length] as string);
  const roundResults: Record<string, Load> = {};
  for (const name of order) {
    const server = await startServer(SERVERS[name] as string[], '0');
    roundResults[name] = await load(server, '1');
    await stopServer(server);
  }
  for (const name of names) {
    results[name] ??= [];
    results[name].push(roundResults[name] as Load);
    ratios[name] ??= [];
    ratios[name].push((roundResults[name] as Load).rps / (roundResults['ceiling'] as Load).rps);
  }
  process.stderr.write(
    `round ${round + 1}: ${names.map((n) => `${n} ${Math.round((roundResults[n] as Load).rps)}`).join(', ')} req/s\n`,
  );
}

const cell = (name: string, pick: (l: Load) => number, digits = 0): string =>
  median((results[name] as Load[]).map(pick)).toFixed(digits);
console.log('| server | req/s | × ceiling | p50 ms | p99 ms | RSS MB | non-2xx + socket errors |');
console.log('|---|---:|---:|---:|---:|---:|---:|');
for (const name of names) {
  console.log(
    `| ${name} | ${cell(name, (l) => l.rps)} | ${median(ratios[name] as number[]).toFixed(2)} | ${cell(name, (l) => l.p50, 2)} | ${cell(name, (l) => l.p99, 2)} | ${cell(name, (l) => l.rss)} | ${(results[name] as Load[]).reduce((s, l) => s + l.errors, 0)} |`,
  );
}
const vsFastify = median(
  (results['service'] as Load[]).map((l, i) => l.rps / ((results['fastify'] as Load[])[i] as Load).rps),
);
console.log(`\nservice / fastify: ${vsFastify.toFixed(2)} (median of the rounds' ratios).`);

// Start-up: spawn to the listening line, on this file.
const starts: number[] = [];
for (let i = 0; i < 5; i += 1) {
  const server = await startServer(SERVERS['service'] as string[], undefined);
  starts.push(server.startMs);
  await stopServer(server);
}
console.log(`Start to listening (service, this file): median ${median(starts).toFixed(0)} ms of 5.`);

// Where the time goes: the same rotation, only the page size changed.
const byLimit: string[] = [];
for (const limit of [0, 1, 50]) {
  writeFileSync(join(dir, 'paths.txt'), `${paths.map((p) => p.replace(/limit=\d+/, `limit=${limit}`)).join('\n')}\n`);
  const runs: Load[] = [];
  for (let round = 0; round < rounds; round += 1) {
    const server = await startServer(SERVERS['service'] as string[], '0');
    runs.push(await load(server, '1'));
    await stopServer(server);
  }
  byLimit.push(
    `| ${limit} | ${median(runs.map((l) => l.rps)).toFixed(0)} | ${median(runs.map((l) => l.p50)).toFixed(2)} | ${median(runs.map((l) => l.p99)).toFixed(2)} |`,
  );
}
writeFileSync(join(dir, 'paths.txt'), `${paths.join('\n')}\n`);
console.log('\nThe service on the same searches by page size (limit), pinned as above:\n');
console.log('| limit | req/s | p50 ms | p99 ms |');
console.log('|---:|---:|---:|---:|');
console.log(byLimit.join('\n'));

if (values.workers) {
  // --workers: nothing pinned, since the workers and wrk share the two cores.
  const rows: string[] = [];
  for (const workers of [1, 2]) {
    const runs: Load[] = [];
    for (let round = 0; round < rounds; round += 1) {
      const server = await startServer([...(SERVERS['service'] as string[]), '--workers', String(workers)], undefined);
      runs.push(await load(server, undefined));
      await stopServer(server);
    }
    rows.push(
      `| ${workers} | ${median(runs.map((l) => l.rps)).toFixed(0)} | ${median(runs.map((l) => l.p99)).toFixed(2)} | ${median(runs.map((l) => l.rss)).toFixed(0)} |`,
    );
  }
  console.log('\n--workers, unpinned (wrk shares the same two cores):\n');
  console.log('| workers | req/s | p99 ms | RSS MB (all processes) |');
  console.log('|---:|---:|---:|---:|');
  console.log(rows.join('\n'));
}
