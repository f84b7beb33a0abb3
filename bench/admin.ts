// What the admin listener's counting costs: the service on the 20k ANALYZEd book, with and
// without --admin-port (the handlers count only where an admin listener will read it), the
// typical search and the status endpoint, each server pinned to core 0 while wrk loads it
// from core 1, and the admin listener scraped every second as Prometheus would, from core 1
// too. Within a round both variants of a load run one after the other, in an order that
// alternates from round to round; the cost is the median over the rounds of the ratio
// within each round. First, in-process, what the counting of one answer costs alone (a
// figure a shared machine disturbs far less than a ratio of two loads). Prints markdown.
//
//   npm run bench:admin -- [--rounds 5] [--seconds 5] [--connections 16]
//
// With --flood SECONDS, instead: the admin listener under --flood-connections (60) clients
// that pipeline GET /metrics (--flood-path) without credentials and read nothing, for that
// long; the service's RSS and the API's /status meanwhile (bench/flood.ts). --before DIR
// runs the service of another checkout (a build of an earlier commit) the same way, first.
// Over TCP the clients come from several loopback addresses, below one address's share;
// --flood-socket floods the listener over --admin-socket instead.
//
//   npm run bench:admin -- --flood 20 [--flood-connections 60] [--flood-socket] [--before DIR]

import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { type IncomingMessage, request, type ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import { ERRORS } from '../lib/messages.js';
import { Metrics } from '../lib/metrics.js';
import { recordFacts } from '../lib/request.js';
import { sendError } from '../lib/respond.js';
import { FLOOD_HEADER, floodSources, measureFlood } from './flood.js';
import { serviceEnv as env, type Load, load, loadAverage, PASSWORD, requireWrk, USER } from './load.js';
import { onCore, pinned, type Running, serviceCommand, stopServer } from './process.js';
import { median, queriesFor, toQueryString } from './shapes.js';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '5' },
    seconds: { type: 'string', default: '5' },
    connections: { type: 'string', default: '16' },
    flood: { type: 'string' },
    'flood-connections': { type: 'string', default: '60' },
    'flood-path': { type: 'string', default: '/metrics' },
    'flood-socket': { type: 'boolean', default: false },
    before: { type: 'string' },
  },
});
const rounds = Number(values.rounds);
const seconds = Number(values.seconds);
const connections = Number(values.connections);
const FILE = 'bench/data/bookings-20000-analyzed.sqlite';
const dir = mkdtempSync(join(tmpdir(), 'bench-admin-'));
process.on('exit', () => rmSync(dir, { recursive: true, force: true }));

if (values.flood !== undefined) {
  const options = {
    seconds: Number(values.flood),
    connections: Number(values['flood-connections']),
    path: values['flood-path'],
    authorization: `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}`,
  };
  const over = values['flood-socket'] ? 'socket' : 'TCP';
  console.log(
    `The admin listener flooded: ${options.connections} connections ${floodSources(options.connections, over)} pipelining GET ${options.path} without credentials and reading nothing, ${options.seconds} s, the service on the 20k ANALYZEd book. Load average at the start: ${loadAverage()}.\n\n${FLOOD_HEADER}`,
  );
  for (const [name, root] of [
    ...(values.before === undefined ? [] : [['before', values.before] as const]),
    ['this checkout', '.'] as const,
  ]) {
    const service = await startService(over, root);
    const row = await measureFlood(
      { origin: service.origin, admin: service.admin as string, pid: service.child.pid as number },
      options,
    );
    await stopServer(service);
    console.log(row.replace(/^\| /, `| ${name}: `));
  }
  process.exit(0);
}
requireWrk();

const db = new Database(FILE, { readonly: true, fileMustExist: true });
const SEARCH_PATHS = join(dir, 'search.txt');
writeFileSync(
  SEARCH_PATHS,
  `${queriesFor(db, 'month exact', 5000, 11)
    .map((q) => `/api/v1/buchungen?${toQueryString(q)}`)
    .join('\n')}\n`,
);
db.close();
const STATUS_PATHS = join(dir, 'status.txt');
writeFileSync(STATUS_PATHS, '/api/v1/status\n');

interface Admin extends Running {
  /** The admin listener's origin, with --admin-port. */
  admin: string | undefined;
}

/** The service, without the admin listener or with it over TCP or a socket; resolves once both listen. */
function startService(admin: 'TCP' | 'socket' | undefined, root = '.'): Promise<Admin> {
  const withAdmin = admin !== undefined;
  const listen = { TCP: ['--admin-port', '0'], socket: ['--admin-socket', join(dir, 'admin.sock')] };
  const command = onCore('0', [...serviceCommand(FILE, root), ...(withAdmin ? listen[admin] : [])]);
  const started = process.hrtime.bigint();
  const child: ChildProcess = spawn(command[0] as string, command.slice(1), {
    env,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let output = '';
  return new Promise((resolve, reject) => {
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
      output += chunk;
      const api = /listening on (http:\/\/[\d.:]+)\//.exec(output);
      const address = /admin listener on (http:\/\/[\d.:]+|unix:\S+:)\//.exec(output);
      if (api === null || (withAdmin && address === null)) return;
      child.stdout?.removeAllListeners('data').resume();
      resolve({
        child,
        origin: api[1] as string,
        admin: address?.[1],
        startMs: Number(process.hrtime.bigint() - started) / 1e6,
      });
    });
    child.on('exit', (code) => reject(new Error(`the service exited with ${code}: ${output}`)));
  });
}

/** GET /metrics every second until `stop()`; resolves with how many scrapes succeeded. */
function scrapeEverySecond(origin: string): { stop: () => Promise<number> } {
  let scrapes = 0;
  let running = true;
  const once = (): Promise<void> =>
    new Promise((resolve) => {
      const req = request(`${origin}/metrics`, (res) => {
        res.resume().on('end', () => {
          if (res.statusCode === 200) scrapes += 1;
          resolve();
        });
      });
      req.on('error', () => resolve());
      req.end();
    });
  const loop = (async () => {
    while (running) {
      await once();
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      return scrapes;
    },
  };
}

/**
 * Nanoseconds of counting per answer, in-process: the access log's hook on a 200 of a search
 * (with its search wait) and on a 401, over fake requests and responses as the handler
 * leaves them; the median of 7 rounds of 200,000.
 */
function countingCost(): { ok: number; refused: number } {
  const metrics = new Metrics();
  const fake = (error: boolean) => {
    const req = { headers: {} } as unknown as IncomingMessage;
    recordFacts(req, '127.0.0.1', 'search', '/api/v1/buchungen');
    const res = { writableFinished: true, statusCode: 200, writeHead() {}, end() {} } as unknown as ServerResponse;
    if (error) sendError(res, ERRORS.unauthorized);
    return [req, res] as const;
  };
  const measure = (error: boolean): number => {
    const [req, res] = fake(error);
    const rounds: number[] = [];
    for (let round = 0; round < 7; round += 1) {
      const started = process.hrtime.bigint();
      for (let i = 0; i < 200_000; i += 1) {
        metrics.countAnswer(req, res, 0.0004);
        if (!error) metrics.countSearchWait(0);
      }
      rounds.push(Number(process.hrtime.bigint() - started) / 200_000);
    }
    return median(rounds);
  };
  const refused = measure(true);
  return { ok: measure(false), refused };
}
const alone = countingCost();
console.log(
  `In-process, the counting of one answer: ${alone.ok.toFixed(0)} ns for a search's 200 (its wait included), ${alone.refused.toFixed(0)} ns for a 401.\n`,
);

const LOADS = [
  { name: 'typical search', paths: SEARCH_PATHS },
  { name: 'status', paths: STATUS_PATHS },
] as const;
const results: Record<string, { off: Load[]; on: Load[]; scrapes: number[] }> = {};

console.log(
  `The admin listener's counting: the service on the 20k ANALYZEd book, without and with --admin-port (scraped every second), ${connections} connections, ${rounds} round(s) × ${seconds} s per variant, ${pinned ? 'server on core 0, wrk on core 1' : 'unpinned (no taskset)'}. Load average at the start: ${loadAverage()}.\n`,
);
for (let round = 0; round < rounds; round += 1) {
  for (const { name, paths } of LOADS) {
    results[name] ??= { off: [], on: [], scrapes: [] };
    const entry = results[name];
    const variants = round % 2 === 0 ? [false, true] : [true, false];
    for (const withAdmin of variants) {
      const server = await startService(withAdmin ? 'TCP' : undefined);
      const scraper = server.admin === undefined ? undefined : scrapeEverySecond(server.admin);
      const result = await load(server, paths, { seconds, connections, core: '1' });
      if (scraper !== undefined) entry.scrapes.push(await scraper.stop());
      await stopServer(server);
      (withAdmin ? entry.on : entry.off).push(result);
    }
  }
  process.stderr.write(
    `round ${round + 1}: ${LOADS.map(({ name }) => {
      const entry = results[name] as { off: Load[]; on: Load[] };
      return `${name} ${Math.round(entry.off[round]?.rps ?? 0)} / ${Math.round(entry.on[round]?.rps ?? 0)} req/s`;
    }).join(', ')}\n`,
  );
}

console.log(
  '| load | CPU µs / request, without | with | × without (CPU) | req/s, without | with | × without (req/s) | scrapes | non-2xx + socket errors |',
);
console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|');
for (const { name } of LOADS) {
  const { off, on, scrapes } = results[name] as { off: Load[]; on: Load[]; scrapes: number[] };
  const pairs = off.map((o, i) => [o, on[i] as Load] as const);
  console.log(
    `| ${name} | ${median(off.map((l) => l.cpu)).toFixed(1)} | ${median(on.map((l) => l.cpu)).toFixed(1)} | ${median(pairs.map(([o, n]) => o.cpu / n.cpu)).toFixed(3)} | ${median(off.map((l) => l.rps)).toFixed(0)} | ${median(on.map((l) => l.rps)).toFixed(0)} | ${median(pairs.map(([o, n]) => n.rps / o.rps)).toFixed(3)} | ${scrapes.reduce((a, b) => a + b, 0)} | ${[...off, ...on].reduce((sum, l) => sum + l.errors, 0)} |`,
  );
}
console.log(
  "\n(× without = the throughput with the admin listener as a share of the throughput without it, within a round, the median over the rounds: from the server's own CPU time per request (the without variant's CPU time / the with variant's), the figure a shared machine disturbs least, and from requests per second. 0.95 would be a cost of 5 %.)",
);
