// Many books in one service (docs/operations.md, Many books): 100 books of 20,000 bookings
// served by one process from one configuration file, beside one such book alone with the
// single-book command line, in the same run. For each: the time from spawn to the listening
// line (every book opened and checked by then), the RSS of the whole after the start and
// after the load, and the typical search (a month, the exact amount) under wrk, each
// request the next book of the rotation (the single book: the same searches on it): with
// `--connections` clients at once (throughput, and the latency of a saturated core), then
// with one client asking one search after the other (the latency a client sees). Then
// both again with --workers 2. Each configuration runs once a round, in an order that
// rotates from round to round; the tables give medians and the ratios to one book.
//
// Goals: RSS ≤ 1.5 × one book's, start ≤ 2 s, p50 ≤ 1.2 × one book's.
//
//   npm run bench:books -- [--books 100] [--rows 20000] [--rounds 3] [--seconds 5] [--connections 16] [--no-workers]

import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import { serviceEnv as env, type Load, load, loadAverage, requireWrk } from './load.js';
import { pinned, type Running, startServer, stopServer } from './process.js';
import { median, queriesFor, toQueryString } from './shapes.js';

const { values } = parseArgs({
  options: {
    books: { type: 'string', default: '100' },
    rows: { type: 'string', default: '20000' },
    rounds: { type: 'string', default: '3' },
    seconds: { type: 'string', default: '5' },
    connections: { type: 'string', default: '16' },
    'no-workers': { type: 'boolean', default: false },
  },
});
const books = Number(values.books);
const rows = Number(values.rows);
const rounds = Number(values.rounds);
const seconds = Number(values.seconds);
const connections = Number(values.connections);
requireWrk();

/**
 * `books` copies of one generated cash book of `rows` bookings, in a directory of their own
 * left 0555 (the service refuses a directory its user could write), and the configuration
 * file that serves them at /b000 … /b099. Copies, not `books` generated files: every book
 * costs the service what another of its size would, and the searches fit each of them.
 */
function prepareBooks(): { dir: string; first: string; config: string } {
  const source = `bench/data/bookings-${rows}.sqlite`;
  if (!existsSync(source)) {
    if (existsSync('bench/data')) chmodSync('bench/data', 0o755);
    const made = spawnSync('node', ['--import', 'tsx', 'bench/generate.ts', '--rows', String(rows)], {
      stdio: 'inherit',
    });
    if (made.status !== 0) process.exit(made.status ?? 1);
    chmodSync('bench/data', 0o555);
  }
  const dir = resolve(`bench/data/books-${books}x${rows}`);
  const name = (i: number): string => `book-${String(i).padStart(3, '0')}`;
  if (!existsSync(join(dir, `${name(books - 1)}.sqlite`))) {
    chmodSync('bench/data', 0o755);
    mkdirSync(dir, { recursive: true });
    chmodSync(dir, 0o755);
    for (let i = 0; i < books; i += 1) copyFileSync(source, join(dir, `${name(i)}.sqlite`));
    chmodSync(dir, 0o555);
    chmodSync('bench/data', 0o555);
  }
  // The configuration lives outside bench/data, which stays 0555.
  const config = join(work, 'books.conf');
  const sections = Array.from(
    { length: books },
    (_, i) => `[book ${name(i)}]\ndb = ${join(dir, `${name(i)}.sqlite`)}\nbase-path = /${name(i)}\n`,
  );
  writeFileSync(config, `# ${books} books of ${rows} bookings\nmax-auth-failures = 0\n\n${sections.join('\n')}`, {
    mode: 0o600,
  });
  return { dir, first: join(dir, `${name(0)}.sqlite`), config };
}

const work = mkdtempSync(join(tmpdir(), 'bench-books-'));
process.on('exit', () => rmSync(work, { recursive: true, force: true }));
const { first, config } = prepareBooks();

// The typical search of a reconciliation run, around real bookings; the same searches for
// every book (they are copies), each request the next book.
const db = new Database(first, { readonly: true, fileMustExist: true });
const queries = queriesFor(db, 'month exact', 5000, 11).map(toQueryString);
db.close();
const pathsFile = (name: string, base: (i: number) => string): string => {
  const out = join(work, `${name}.txt`);
  writeFileSync(out, `${queries.map((q, i) => `${base(i)}/api/v1/buchungen?${q}`).join('\n')}\n`);
  return out;
};
const PATHS = {
  one: pathsFile('one', () => ''),
  many: pathsFile('many', (i) => `/book-${String(i % books).padStart(3, '0')}`),
};

interface Setup {
  name: string;
  command: string[];
  paths: string;
  workers: number;
}
const bin = 'bin/booking-search-server.js';
const setups = (workers: number): Setup[] => {
  const extra = workers > 1 ? ['--workers', String(workers)] : [];
  return [
    {
      name: `1 book${workers > 1 ? `, ${workers} workers` : ''}`,
      command: ['node', bin, '--db', first, '--port', '0', '--max-auth-failures', '0', ...extra],
      paths: PATHS.one,
      workers,
    },
    {
      name: `${books} books${workers > 1 ? `, ${workers} workers` : ''}`,
      command: ['node', bin, '--config', config, '--port', '0', ...extra],
      paths: PATHS.many,
      workers,
    },
  ];
};

interface Run {
  startMs: number;
  /** CPU time of the process and its workers up to the listening line: the start, whatever else the machine runs. */
  startCpuMs: number;
  idleRss: number;
  load: Load;
  /** One client asking one search after the other: the latency a client sees on a service with room. */
  alone: Load;
}

/** A process and its children (the workers). */
function family(pid: number): number[] {
  const children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8');
  return [pid, ...children.trim().split(/\s+/).filter(Boolean).map(Number)];
}

/** RSS of a process and its children, in MB. */
function rssMb(pid: number): number {
  let kb = 0;
  for (const p of family(pid))
    kb += Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${p}/status`, 'utf8'))?.[1] ?? 0);
  return kb / 1024;
}

const TICKS_PER_SECOND = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;

/** CPU time (user + system) of a process and its children so far, in ms. */
function cpuMs(pid: number): number {
  let ticks = 0;
  for (const p of family(pid)) {
    const fields = readFileSync(`/proc/${p}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
    ticks += Number(fields[11]) + Number(fields[12]);
  }
  return (1000 * ticks) / TICKS_PER_SECOND;
}

async function measure(setup: Setup): Promise<Run> {
  // One process pinned to core 0 and wrk on core 1; workers share both cores with wrk.
  const core = setup.workers === 1 ? '0' : undefined;
  const server: Running = await startServer(setup.command, env, core);
  const startCpuMs = cpuMs(server.child.pid as number);
  // A moment for the garbage collector after the start, as a service has before its first client.
  await new Promise((done) => setTimeout(done, 500));
  const idleRss = rssMb(server.child.pid as number);
  const wrkCore = core === undefined ? undefined : '1';
  const measured = await load(server, setup.paths, { seconds, connections, core: wrkCore });
  // wrk takes whole seconds.
  const alone = await load(server, setup.paths, {
    seconds: Math.max(2, Math.round(seconds / 2)),
    connections: 1,
    core: wrkCore,
  });
  await stopServer(server);
  return { startMs: server.startMs, startCpuMs, idleRss, load: measured, alone };
}

async function table(workers: number): Promise<void> {
  const list = setups(workers);
  const runs = new Map<string, Run[]>(list.map((setup) => [setup.name, []]));
  for (let round = 0; round < rounds; round += 1) {
    // The order rotates, so that neither always runs on a warmer machine.
    const order = round % 2 === 0 ? list : [...list].reverse();
    for (const setup of order) {
      const run = await measure(setup);
      runs.get(setup.name)?.push(run);
      if (run.load.errors > 0) console.error(`${setup.name}: ${run.load.errors} errors`);
    }
  }
  const summary = (name: string) => {
    const of = runs.get(name) ?? [];
    return {
      start: median(of.map((r) => r.startMs)),
      startCpu: median(of.map((r) => r.startCpuMs)),
      idle: median(of.map((r) => r.idleRss)),
      rss: median(of.map((r) => r.load.rss)),
      rps: median(of.map((r) => r.load.rps)),
      p50: median(of.map((r) => r.load.p50)),
      p99: median(of.map((r) => r.load.p99)),
      cpu: median(of.map((r) => r.load.cpu)),
      aloneP50: median(of.map((r) => r.alone.p50)),
      aloneP99: median(of.map((r) => r.alone.p99)),
      aloneCpu: median(of.map((r) => r.alone.cpu)),
    };
  };
  const [one, many] = list.map((setup) => summary(setup.name)) as [
    ReturnType<typeof summary>,
    ReturnType<typeof summary>,
  ];
  console.log(
    `\n${workers === 1 ? 'One process, pinned to core 0 (wrk on core 1)' : `--workers ${workers}, unpinned (wrk shares the two cores)`}: medians of ${rounds} rounds of ${seconds} s, ${connections} connections, the typical search, load average ${loadAverage()}\n`,
  );
  console.log(
    `| served | start s | start, CPU s | RSS after start MB | RSS after load MB | req/s (${connections} conn.) | µs CPU/req | p50 ms | p99 ms | one client: p50 ms | p99 ms | µs CPU/req |`,
  );
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const [setup, s] of [
    [list[0] as Setup, one],
    [list[1] as Setup, many],
  ] as const) {
    console.log(
      // With --workers the CPU time is the workers', which load() does not read: left out.
      `| ${setup.name} | ${(s.start / 1000).toFixed(2)} | ${(s.startCpu / 1000).toFixed(2)} | ${s.idle.toFixed(0)} | ${s.rss.toFixed(0)} | ${s.rps.toFixed(0)} | ${workers > 1 ? '–' : s.cpu.toFixed(0)} | ${s.p50.toFixed(2)} | ${s.p99.toFixed(2)} | ${s.aloneP50.toFixed(2)} | ${s.aloneP99.toFixed(2)} | ${workers > 1 ? '–' : s.aloneCpu.toFixed(0)} |`,
    );
  }
  const ratio = (a: number, b: number): string => (a / b).toFixed(2);
  console.log(
    `\n${books} books ÷ 1 book: RSS after load ${ratio(many.rss, one.rss)} (goal ≤ 1.5), start ${(many.start / 1000).toFixed(2)} s (goal ≤ 2; CPU ${(many.startCpu / 1000).toFixed(2)} s), p50 ${ratio(many.p50, one.p50)} (goal ≤ 1.2), p99 ${ratio(many.p99, one.p99)}, req/s ${ratio(many.rps, one.rps)}; one client: p50 ${ratio(many.aloneP50, one.aloneP50)}, p99 ${ratio(many.aloneP99, one.aloneP99)}`,
  );
}

console.log(
  `# ${books} books of ${rows} bookings in one service, beside one book alone${pinned ? '' : ' (taskset missing: nothing pinned)'}`,
);
await table(1);
if (!values['no-workers']) await table(2);
