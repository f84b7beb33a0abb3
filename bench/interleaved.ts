// Two or more builds side by side in one process, in alternation: the whole typical search
// (or /status) in-process, as bench/phases.ts runs it (createHandler behind the access
// log, 16 requests of 16 connections at a time, no parser, no kernel), 800 requests a
// round, each build's round right after the other's, for as long as asked. The main
// thread's CPU µs per request, medians, and each build's median difference from the
// first, round by round: on a shared machine the load moves between two runs, far less
// between two rounds a few milliseconds apart. What measured each cut of a few tenths of
// a µs (docs/design/README.md, "Where a request's time goes"). The builds share this checkout's
// better-sqlite3 (one native module a process); a build is a directory with dist/.
//
//   npm run bench:interleaved -- [--endpoint search|status] [--seconds 40] DIR [DIR…]

import type { IncomingMessage, ServerResponse } from 'node:http';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import { fakeExchange, fakeSocket } from './fake-http.js';
import { median, queriesFor, toQueryString } from './shapes.js';

const { values, positionals } = parseArgs({
  options: {
    endpoint: { type: 'string', default: 'search' },
    seconds: { type: 'string', default: '40' },
  },
  allowPositionals: true,
});
if (positionals.length === 0 || (values.endpoint !== 'search' && values.endpoint !== 'status')) {
  console.error('usage: npm run bench:interleaved -- [--endpoint search|status] [--seconds 40] DIR [DIR…]');
  process.exit(2);
}
const FILE = resolve('bench/data/bookings-20000-analyzed.sqlite');
const PER_ROUND = 800;
const WARM_UP_ROUNDS = 10;

const targets = (() => {
  if (values.endpoint === 'status') return ['/api/v1/status'];
  const db = new Database(FILE, { readonly: true, fileMustExist: true });
  const paths = queriesFor(db, 'month exact', 2000, 11).map((q) => `/api/v1/buchungen?${toQueryString(q)}`);
  db.close();
  return paths;
})();

// biome-ignore lint/suspicious/noExplicitAny: each build's own modules, whatever their types.
type Any = any;
// The access lines go nowhere (the builds' logs write theirs up to the exit); the table
// goes out through `print`.
const write = process.stdout.write.bind(process.stdout);
const print = (text: string): boolean => write(`${text}\n`);
process.stdout.write = (() => true) as Any;
const header = `Basic ${Buffer.from('bench:bench').toString('base64')}`;
const connections = Array.from({ length: 16 }, fakeSocket);

const handlers: Array<(req: IncomingMessage, res: ServerResponse) => void> = [];
for (const root of positionals) {
  const load = async (path: string): Promise<Any> => import(pathToFileURL(join(resolve(root), 'dist', path)).href);
  const db = new Database(FILE, { readonly: true, fileMustExist: true });
  const { createHandler } = await load('lib/index.js');
  // The access log: bin/base/log.js, or bin/log.js in a build from before bin/ had rooms.
  const { withAccessLog } = await load('bin/base/log.js').catch(() => load('bin/log.js'));
  handlers.push(withAccessLog(createHandler(db, { username: 'bench', password: 'bench' }, { maxAuthFailures: 0 })));
}

let next = 0;
/** `PER_ROUND` requests through `handler`, 16 at a time, each batch answered before the next. */
async function round(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<void> {
  for (let i = 0; i < PER_ROUND; i += 16) {
    const answered: Array<Promise<unknown>> = [];
    for (let j = 0; j < 16; j += 1) {
      const [req, res] = fakeExchange(connections[j], targets[next++ % targets.length] as string, header);
      answered.push(new Promise((done) => res.once('close', done)));
      handler(req, res);
    }
    await Promise.all(answered);
  }
}

const cpu = (): number => {
  const { user, system } = process.threadCpuUsage();
  return user + system;
};
for (const handler of handlers) for (let i = 0; i < WARM_UP_ROUNDS; i += 1) await round(handler);
// Each round's wall clock, and the CPU time summed over all rounds: the kernel counts a
// thread's CPU time in whole ticks (4 ms here), more than a round of 800 requests takes on
// a quiet machine, so a round's own CPU time says little and only the sum is exact.
const wallPerBuild: number[][] = handlers.map(() => []);
const cpuPerBuild = handlers.map(() => 0);
const until = performance.now() + Number(values.seconds) * 1000;
for (let r = 0; performance.now() < until; r += 1) {
  const order = handlers.map((_, i) => (r % 2 === 0 ? i : handlers.length - 1 - i));
  for (const i of order) {
    const started = cpu();
    const startedWall = performance.now();
    await round(handlers[i] as (req: IncomingMessage, res: ServerResponse) => void);
    wallPerBuild[i]?.push(((performance.now() - startedWall) * 1000) / PER_ROUND);
    cpuPerBuild[i] = (cpuPerBuild[i] as number) + cpu() - started;
  }
}
const first = wallPerBuild[0] as number[];
print(
  `In-process, the whole ${values.endpoint === 'search' ? 'typical search (20k ANALYZEd)' : '/api/v1/status'}, ${first.length} rounds of ${PER_ROUND} requests a build, in alternation; µs per request, the main thread's CPU time over all rounds and each round's wall clock:\n`,
);
print('| build | CPU, all rounds | wall, median | wall, median difference from the first |');
print('|---|---:|---:|---:|');
positionals.forEach((root, i) => {
  const own = wallPerBuild[i] as number[];
  const difference = median(own.map((v, k) => v - (first[k] as number)));
  const cpuMean = (cpuPerBuild[i] as number) / (own.length * PER_ROUND);
  print(`| ${root} | ${cpuMean.toFixed(2)} | ${median(own).toFixed(2)} | ${difference.toFixed(2)} |`);
});
process.exit(0);
