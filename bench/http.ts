// The HTTP benchmark: the service on the cash books people have (20,000 bookings) and on
// the stress file (1,000,000), each with and without ANALYZE, beside the ceiling and the
// peers, in one run. Each server runs alone, pinned to core 0, while wrk loads it from
// core 1; within a round every configuration runs once, in an order that rotates from
// round to round, and every figure is also given as a ratio to the ceiling of the same
// round. Then the writer: another process commits a booking every 10 ms while wrk loads
// the service (and, for comparison, the Fastify peer, whose transaction per statement is
// the design before the shared read transaction). Last, one client against the writer:
// 50 connections repeat the widest search on the 1M file while the writer commits with
// busy timeouts of 5 s, 1 s and 0 (bench/widest.ts); then the reconciliation in one request
// beside the single searches it stands for (bench/abgleich.ts). Prints markdown.
//
//   npm run bench -- [--rounds 3] [--seconds 5] [--connections 16] [--workers] [--before DIR]
//   npm run bench -- --widest-only [--rounds 3] [--seconds 6] [--before DIR]   (that last part alone)
//   npm run bench -- --widest-only --widest-query 'von=…&bis=…&betrag=…&toleranz=…'   (another search in its place)
//   BENCH_QUICK=1 npm run bench     (1 round of 2 s: about a minute; the full run about 6)

import { spawn } from 'node:child_process';
import { chmodSync, copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import { reconcileScenario } from './abgleich.js';
import { serviceEnv as env, type Load, load, loadAverage, requireWrk, wrk } from './load.js';
import { pinned, serviceCommand, startServer, stopServer } from './process.js';
import { median, queriesFor, toQueryString } from './shapes.js';
import { widestScenario } from './widest.js';

const quick = process.env['BENCH_QUICK'] === '1';
const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: quick ? '1' : '3' },
    seconds: { type: 'string', default: quick ? '2' : '5' },
    connections: { type: 'string', default: '16' },
    workers: { type: 'boolean', default: false },
    // A checkout of an earlier version, built (npm ci && npm run build), to run beside this one.
    before: { type: 'string' },
    'widest-only': { type: 'boolean', default: false },
    // With --widest-only: another search instead of the widest (its query string).
    'widest-query': { type: 'string' },
    // Only these rows of the first table (names as printed, e.g. 'service 20k ANALYZEd,before
    // status'), beside the ceiling, and nothing after it: for measuring a change quickly.
    only: { type: 'string' },
  },
});
if (values['widest-only']) {
  await widestScenario({
    rounds: Number(values.rounds),
    seconds: Number(values.seconds),
    before: values.before,
    query: values['widest-query'],
  });
  process.exit(0);
}
const rounds = Number(values.rounds);
const seconds = Number(values.seconds);
const connections = Number(values.connections);
requireWrk();

const DATA = {
  '20k': 'bench/data/bookings-20000.sqlite',
  '20k ANALYZEd': 'bench/data/bookings-20000-analyzed.sqlite',
  '1M': 'bench/data/bookings-1000000.sqlite',
  '1M ANALYZEd': 'bench/data/bookings-1000000-analyzed.sqlite',
} as const;
type Data = keyof typeof DATA;

const dir = mkdtempSync(join(tmpdir(), 'bench-'));
process.on('exit', () => rmSync(dir, { recursive: true, force: true }));

// The typical search of a reconciliation run: a month around a real booking, its exact
// amount. ANALYZE changes no booking, so both files of a size share their searches.
function pathsFile(file: string, name: string): string {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  const paths = queriesFor(db, 'month exact', 5000, 11).map((q) => `/api/v1/buchungen?${toQueryString(q)}`);
  db.close();
  const out = join(dir, `${name}.txt`);
  writeFileSync(out, `${paths.join('\n')}\n`);
  return out;
}
const PATHS = { small: pathsFile(DATA['20k'], 'small'), large: pathsFile(DATA['1M'], 'large') };
const STATUS_PATHS = join(dir, 'status.txt');
writeFileSync(STATUS_PATHS, '/api/v1/status\n');
const pathsOf = (data: Data): string => (data.startsWith('20k') ? PATHS.small : PATHS.large);

const tsx = ['node', '--import', 'tsx'];
const service = serviceCommand;

interface Config {
  name: string;
  command: string[];
  paths: string;
}
const ALL_CONFIGS: Config[] = [
  { name: 'ceiling', command: [...tsx, 'bench/servers/ceiling.ts'], paths: PATHS.small },
  ...(Object.keys(DATA) as Data[]).map((data) => ({
    name: `service ${data}`,
    command: service(DATA[data]),
    paths: pathsOf(data),
  })),
  ...(Object.keys(DATA) as Data[]).map((data) => ({
    name: `fastify ${data}`,
    command: [...tsx, 'bench/servers/fastify.ts', '--db', DATA[data]],
    paths: pathsOf(data),
  })),
  ...(['20k ANALYZEd', '1M'] as const).map((data) => ({
    name: `express ${data}`,
    command: [...tsx, 'bench/servers/express.ts', '--db', DATA[data]],
    paths: pathsOf(data),
  })),
  { name: 'service status', command: service(DATA['20k']), paths: STATUS_PATHS },
  ...(values.before === undefined
    ? []
    : (['20k', '20k ANALYZEd', '1M ANALYZEd'] as const).map((data) => ({
        name: `before ${data}`,
        command: service(DATA[data], values.before),
        paths: pathsOf(data),
      }))),
  ...(values.before === undefined
    ? []
    : [{ name: 'before status', command: service(DATA['20k'], values.before), paths: STATUS_PATHS }]),
];
const only = values.only?.split(',').map((name) => name.trim());
const unknown = only?.filter((name) => !ALL_CONFIGS.some((config) => config.name === name)) ?? [];
if (unknown.length > 0) {
  console.error(
    `--only: no configuration named ${unknown.join(', ')}; there are: ${ALL_CONFIGS.map((c) => c.name).join(', ')}`,
  );
  process.exit(1);
}
const CONFIGS = ALL_CONFIGS.filter(
  (config) => only === undefined || config.name === 'ceiling' || only.includes(config.name),
);

const loadOptions = { seconds, connections, core: '1' };

const results: Record<string, Load[]> = {};
const ratios: Record<string, number[]> = {};
const cpuRatios: Record<string, number[]> = {};
const started = Date.now();
console.log(
  `HTTP, typical search (a month around a real booking, its exact amount, 5000 searches in rotation), ${connections} connections, ${rounds} round(s) × ${seconds} s per configuration, ${pinned ? 'server on core 0, wrk on core 1' : 'unpinned (no taskset)'}. Load average at the start: ${loadAverage()}.\n`,
);
for (let round = 0; round < rounds; round += 1) {
  const order = CONFIGS.map((_, i) => CONFIGS[(i + round * 5) % CONFIGS.length] as Config);
  const roundResults: Record<string, Load> = {};
  for (const config of order) {
    const server = await startServer(config.command, env, '0');
    roundResults[config.name] = await load(server, config.paths, loadOptions);
    await stopServer(server);
  }
  for (const { name } of CONFIGS) {
    results[name] ??= [];
    results[name].push(roundResults[name] as Load);
    ratios[name] ??= [];
    ratios[name].push((roundResults[name] as Load).rps / (roundResults['ceiling'] as Load).rps);
    cpuRatios[name] ??= [];
    cpuRatios[name].push((roundResults['ceiling'] as Load).cpu / (roundResults[name] as Load).cpu);
  }
  process.stderr.write(
    `round ${round + 1}: ${CONFIGS.map(({ name }) => `${name} ${Math.round((roundResults[name] as Load).rps)}`).join(', ')} req/s\n`,
  );
}

const cell = (name: string, pick: (l: Load) => number, digits = 0): string =>
  median((results[name] as Load[]).map(pick)).toFixed(digits);
const ratio = (a: string, b: string): number =>
  median((results[a] as Load[]).map((l, i) => l.rps / ((results[b] as Load[])[i] as Load).rps));
console.log(
  '| server | file | CPU µs / request | × ceiling (CPU) | req/s | × ceiling (req/s) | p50 ms | p99 ms | RSS MB | non-2xx + socket errors |',
);
console.log('|---|---|---:|---:|---:|---:|---:|---:|---:|---:|');
for (const { name } of CONFIGS) {
  const [server, ...file] = name.split(' ');
  console.log(
    `| ${server} | ${file.join(' ') || '—'} | ${cell(name, (l) => l.cpu, 1)} | ${median(cpuRatios[name] as number[]).toFixed(3)} | ${cell(name, (l) => l.rps)} | ${median(ratios[name] as number[]).toFixed(2)} | ${cell(name, (l) => l.p50, 2)} | ${cell(name, (l) => l.p99, 2)} | ${cell(name, (l) => l.rss)} | ${(results[name] as Load[]).reduce((s, l) => s + l.errors, 0)} |`,
  );
}
const cpuRatio = (a: string, b: string): number =>
  median((results[a] as Load[]).map((l, i) => ((results[b] as Load[])[i] as Load).cpu / l.cpu));
// Beside the older build: the CPU a request of this build over the older one's, round by
// round (the two ran within seconds of each other), then the median of those ratios, which
// the load moving between rounds does not shift as it shifts each column's own median.
const pairs = CONFIGS.filter(({ name }) => name.startsWith('service ') && results[name.replace('service', 'before')]);
if (pairs.length > 0) {
  console.log('\n| file | this build / before (CPU), median | each round |');
  console.log('|---|---:|---|');
  for (const { name } of pairs) {
    const each = (results[name] as Load[]).map(
      (l, i) => l.cpu / ((results[name.replace('service', 'before')] as Load[])[i] as Load).cpu,
    );
    const percent = (r: number): string => `${r >= 1 ? '+' : ''}${((r - 1) * 100).toFixed(1)} %`;
    console.log(`| ${name.slice('service '.length)} | ${percent(median(each))} | ${each.map(percent).join(', ')} |`);
  }
}
if (only !== undefined) {
  console.log(`\nRun time: ${((Date.now() - started) / 1000).toFixed(0)} s (--only: the rest left out).`);
  process.exit(0);
}
console.log('\n| file | service / fastify (CPU) | service / express (CPU) | service / fastify (req/s) |');
console.log('|---|---:|---:|---:|');
for (const data of Object.keys(DATA) as Data[]) {
  const express = results[`express ${data}`] ? cpuRatio(`service ${data}`, `express ${data}`).toFixed(2) : '';
  console.log(
    `| ${data} | ${cpuRatio(`service ${data}`, `fastify ${data}`).toFixed(2)} | ${express} | ${ratio(`service ${data}`, `fastify ${data}`).toFixed(2)} |`,
  );
}
console.log(
  "\n(× ceiling (CPU) = the ceiling's CPU time per request / this server's: the share of the ceiling's throughput this server reaches when each has a core to itself. Ratios are medians over the rounds of the ratio within each round. 'service status' is GET /api/v1/status with the access log that the CLI writes to stdout, here a pipe that the benchmark reads.)",
);

// Start-up: spawn to the listening line, on the large file.
const starts: number[] = [];
for (let i = 0; i < 5; i += 1) {
  const server = await startServer(service(DATA['1M']), env);
  starts.push(server.startMs);
  await stopServer(server);
}
console.log(`\nStart to listening (service, 1M file): median ${median(starts).toFixed(0)} ms of 5.`);

// The writer: a copy of the small ANALYZEd file, so that the benchmark data stays as it is.
console.log(
  `\nA writer in another process commits one booking every 10 ms (better-sqlite3 defaults: rollback journal, synchronous FULL, busy timeout 5 s) during ${seconds} s of full load on the 20k ANALYZEd file:\n`,
);
console.log(
  '| reader under load | req/s | p99 ms | non-2xx | commits | writer SQLITE_BUSY | commit p50 ms | commit p99 ms | commit max ms |',
);
console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|');
for (const [name, command] of [
  ['none (writer alone)', undefined],
  ['service', service],
  ['fastify (transaction per statement)', (file: string) => [...tsx, 'bench/servers/fastify.ts', '--db', file]],
  ...(values.before === undefined
    ? []
    : [['before (transaction per search)', (file: string) => service(file, values.before)] as const]),
] as const) {
  const file = join(dir, 'writer.sqlite');
  copyFileSync(DATA['20k ANALYZEd'], file);
  // A directory the service may not write, or it refuses the file; the writer stands in for
  // the application and, as root (as CI runs this), still creates its journal there.
  chmodSync(dir, 0o555);
  const server = command === undefined ? undefined : await startServer(command(file), env, '0');
  if (server !== undefined) await wrk(server.origin, PATHS.small, 1, connections, '1'); // warm-up
  const writer = spawn(
    'node',
    ['--import', 'tsx', 'bench/writer.ts', '--db', file, '--interval', '10', '--seconds', String(seconds)],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  let report = '';
  writer.stdout.setEncoding('utf8').on('data', (chunk: string) => (report += chunk));
  const writerDone = new Promise((resolve) => writer.once('exit', resolve));
  const loaded = server === undefined ? undefined : await load(server, PATHS.small, loadOptions);
  await writerDone;
  if (server !== undefined) await stopServer(server);
  const w = JSON.parse(report) as { commits: number; busy: number; p50: number; p99: number; max: number };
  console.log(
    `| ${name} | ${loaded ? loaded.rps.toFixed(0) : '—'} | ${loaded ? loaded.p99.toFixed(2) : '—'} | ${loaded ? loaded.errors : '—'} | ${w.commits} | ${w.busy} | ${w.p50} | ${w.p99} | ${w.max} |`,
  );
}

if (values.workers) {
  // --workers: nothing pinned, since the workers and wrk share the two cores.
  const rows: string[] = [];
  for (const workers of [1, 2]) {
    const runs: Load[] = [];
    for (let round = 0; round < rounds; round += 1) {
      const server = await startServer([...service(DATA['20k ANALYZEd']), '--workers', String(workers)], env);
      runs.push(await load(server, PATHS.small, { ...loadOptions, core: undefined }));
      await stopServer(server);
    }
    rows.push(
      `| ${workers} | ${median(runs.map((l) => l.rps)).toFixed(0)} | ${median(runs.map((l) => l.p99)).toFixed(2)} | ${median(runs.map((l) => l.rss)).toFixed(0)} |`,
    );
  }
  console.log('\n--workers on the 20k ANALYZEd file, unpinned (wrk shares the same two cores):\n');
  console.log('| workers | req/s | p99 ms | RSS MB (all processes) |');
  console.log('|---:|---:|---:|---:|');
  console.log(rows.join('\n'));
}
await widestScenario({ rounds, seconds, before: values.before });
await reconcileScenario({ rounds });
console.log(`\nRun time: ${((Date.now() - started) / 1000).toFixed(0)} s.`);
