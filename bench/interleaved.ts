// Two or more builds side by side, in alternation: the whole typical search (or /status)
// in-process, as bench/phases.ts runs it (createHandler behind the access log, 16 requests
// of 16 connections at a time, no parser, no kernel), 800 requests a round, each build's
// round right after the other's, for as long as asked. The main thread's CPU µs per
// request, medians, and each build's median difference from the first, round by round: on
// a shared machine the load moves between two runs, far less between two rounds a few
// milliseconds apart. Each build runs in a process of its own, which this one tells when to
// run a round: in one process the builds shared node:http's code and its inline caches,
// which learnt the first build's objects first, and the second build of the same code
// measured 0.5 µs a /status and 0.8 µs a search more, whichever it was. What measured each
// cut of a few tenths of a µs (docs/design/README.md, "Where a request's time goes"). A
// build is a directory with dist/; each uses this checkout's better-sqlite3.
//
//   npm run bench:interleaved -- [--endpoint search|status] [--seconds 40] DIR [DIR…]

import { type ChildProcess, fork } from 'node:child_process';
import { once } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import { behindAccessLog, fakeExchange, fakeSocket } from './fake-http.js';
import { median, queriesFor, toQueryString } from './shapes.js';

const { values, positionals } = parseArgs({
  options: {
    endpoint: { type: 'string', default: 'search' },
    seconds: { type: 'string', default: '40' },
    // Internal: the process of one build, which runs a round whenever it is told.
    child: { type: 'string' },
  },
  allowPositionals: true,
});
if (
  (positionals.length === 0 && values.child === undefined) ||
  (values.endpoint !== 'search' && values.endpoint !== 'status')
) {
  console.error('usage: npm run bench:interleaved -- [--endpoint search|status] [--seconds 40] DIR [DIR…]');
  process.exit(2);
}
const FILE = resolve('bench/data/bookings-20000-analyzed.sqlite');
const PER_ROUND = 800;
const WARM_UP_ROUNDS = 10;

if (values.child !== undefined) await serveRounds(values.child);

// biome-ignore lint/suspicious/noExplicitAny: each build's own modules, whatever their types.
type Any = any;
/** What a build's process answers a round with: its main thread's CPU µs and its wall-clock ms. */
type Spent = { cpu: number; wall: number };

/** In the process of the build at `root`: a round each time the parent asks, its time sent back. */
async function serveRounds(root: string): Promise<never> {
  const targets = (() => {
    if (values.endpoint === 'status') return ['/api/v1/status'];
    const db = new Database(FILE, { readonly: true, fileMustExist: true });
    const paths = queriesFor(db, 'month exact', 2000, 11).map((q) => `/api/v1/buchungen?${toQueryString(q)}`);
    db.close();
    return paths;
  })();
  // The access lines go nowhere (the build's log writes them up to the exit).
  process.stdout.write = (() => true) as Any;
  const header = `Basic ${Buffer.from('bench:bench').toString('base64')}`;
  const connections = Array.from({ length: 16 }, fakeSocket);
  const load = async (path: string): Promise<Any> => import(pathToFileURL(join(resolve(root), 'dist', path)).href);
  const { createHandler, requestFacts } = await load('lib/index.js');
  // The access log: bin/base/log.js, or bin/log.js in a build from before bin/ had rooms.
  const log = await load('bin/base/log.js').catch(() => load('bin/log.js'));
  const db = new Database(FILE, { readonly: true, fileMustExist: true });
  const handler: (req: IncomingMessage, res: ServerResponse) => void = behindAccessLog(
    log,
    requestFacts,
    createHandler(db, { username: 'bench', password: 'bench' }, { maxAuthFailures: 0 }),
  );
  let next = 0;
  /** `PER_ROUND` requests, 16 at a time, each batch answered before the next. */
  async function round(): Promise<void> {
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
  for (let i = 0; i < WARM_UP_ROUNDS; i += 1) await round();
  process.on('message', async (message) => {
    // Ends as a process does (node --cpu-prof writes its profile then).
    if (message === 'exit') process.exit(0);
    const { user, system } = process.threadCpuUsage();
    const wall = performance.now();
    await round();
    const after = process.threadCpuUsage();
    process.send?.({ cpu: after.user + after.system - user - system, wall: performance.now() - wall } satisfies Spent);
  });
  process.send?.('ready');
  return new Promise<never>(() => {});
}

const children: ChildProcess[] = positionals.map((root) =>
  fork(process.argv[1] as string, ['--child', root, '--endpoint', values.endpoint as string], {
    execArgv: process.execArgv,
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  }),
);
await Promise.all(children.map((child) => once(child, 'message')));
/** One round of `child`'s build. */
async function round(child: ChildProcess): Promise<Spent> {
  child.send('round');
  const [spent] = (await once(child, 'message')) as [Spent];
  return spent;
}
// Each round's wall clock, and the CPU time summed over all rounds: the kernel counts a
// thread's CPU time in whole ticks (4 ms here), more than a round of 800 requests takes on
// a quiet machine, so a round's own CPU time says little and only the sum is exact.
const wallPerBuild: number[][] = children.map(() => []);
const cpuPerBuild = children.map(() => 0);
const until = performance.now() + Number(values.seconds) * 1000;
for (let r = 0; performance.now() < until; r += 1) {
  const order = children.map((_, i) => (r % 2 === 0 ? i : children.length - 1 - i));
  for (const i of order) {
    const { cpu, wall } = await round(children[i] as ChildProcess);
    wallPerBuild[i]?.push((wall * 1000) / PER_ROUND);
    cpuPerBuild[i] = (cpuPerBuild[i] as number) + cpu;
  }
}
const exits = children.map((child) => once(child, 'exit'));
for (const child of children) child.send('exit');
await Promise.all(exits);
const first = wallPerBuild[0] as number[];
const print = (text: string): boolean => process.stdout.write(`${text}\n`);
print(
  `In-process, the whole ${values.endpoint === 'search' ? 'typical search (20k ANALYZEd)' : '/api/v1/status'}, ${first.length} rounds of ${PER_ROUND} requests a build, in alternation, each build in a process of its own; µs per request, the main thread's CPU time over all rounds and each round's wall clock:\n`,
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
