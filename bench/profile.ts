// Where a request's time goes: the command under wrk's load with `node --cpu-prof`, each
// sample of its main thread put to the phase of the request it belongs to (the deepest
// frame of ours, or the native call it made), in µs per request. The typical search on the
// 20k ANALYZEd book and /api/v1/status, this build and, with --before, an earlier one, the
// server on core 0 and wrk on core 1 as in `npm run bench`. Prints markdown.
//
//   npm run bench:profile -- [--seconds 10] [--rounds 1] [--interval-us 100] [--before DIR] [--keep DIR]
//
// The profiler's own cost inflates every figure a little; compare the builds, and the
// phases of one build, within one run. `--keep DIR` leaves the .cpuprofile files there
// (for Chrome's DevTools).

import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import { type Load, load, loadAverage, requestsIn, requireWrk, serviceEnv, wrk } from './load.js';
import { pinned, serviceCommand, startServer, stopServer } from './process.js';
import { median, queriesFor, toQueryString } from './shapes.js';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '10' },
    rounds: { type: 'string', default: '1' },
    'interval-us': { type: 'string', default: '100' },
    connections: { type: 'string', default: '16' },
    before: { type: 'string' },
    keep: { type: 'string' },
  },
});
requireWrk();
const seconds = Number(values.seconds);
const rounds = Number(values.rounds);
const FILE = 'bench/data/bookings-20000-analyzed.sqlite';
const dir = mkdtempSync(join(tmpdir(), 'bench-profile-'));
process.on('exit', () => rmSync(dir, { recursive: true, force: true }));

const db = new Database(FILE, { readonly: true, fileMustExist: true });
const SEARCHES = join(dir, 'search.txt');
writeFileSync(
  SEARCHES,
  `${queriesFor(db, 'month exact', 5000, 11)
    .map((q) => `/api/v1/buchungen?${toQueryString(q)}`)
    .join('\n')}\n`,
);
db.close();
const STATUS = join(dir, 'status.txt');
writeFileSync(STATUS, '/api/v1/status\n');

// ---------------------------------------------------------------------------------------
// The phases. A sample goes to the deepest frame that one of these rules names; what no
// rule names is node:http's and the socket's (or, outside any JavaScript, the rows below).

interface Frame {
  functionName: string;
  url: string;
}
type Rule = [phase: string, file: RegExp, name: RegExp];
const OURS = /\/(?:lib|bin)\/[^/]+\.js$/;
const RULES: Rule[] = [
  ['access log', /\/bin\/log\.js$/, /./],
  ['parsing the query', /\/lib\/(?:query|money)\.js$/, /^(?!formatEuros)/],
  ['formatting the answer', /\/lib\/(?:format|money)\.js$/, /./],
  ['throttle', /\/lib\/throttle\.js$/, /./],
  ['throttle keys', /\/lib\/client-address\.js$/, /^throttleKey$/],
  ['request facts (client address)', /\/lib\/(?:client-address|request-facts)\.js$/, /./],
  ['login', /\/lib\/(?:auth|login)\.js$/, /./],
  ['routing (target, Host, CORS)', /\/lib\/(?:request-target|protocol-errors|cors)\.js$/, /./],
  ['writing the answer (node:http)', /\/lib\/respond\.js$/, /./],
  [
    'the queue and its turns',
    /\/lib\/search(?:\/[^/]+)?\.js$/,
    /^(?:queue|search\.queue|schedule|hop|runTurn|runQueue|next|rotate|count|waitingFrom|waitingFor|search\.waitingFrom|search\.waitingFor|take|enqueue|runAlone|runNow)$/,
  ],
  ['the search: plan, bounds, names', /\/lib\/search(?:\/[^/]+)?\.js$/, /./],
  ['the handler (routing, the endpoint)', /\/lib\/handler\.js$/, /./],
  ['the command (bin/)', /\/bin\/[^/]+\.js$/, /./],
];
// Native calls into better-sqlite3 under a frame of the search: which statement it ran.
const SQLITE_CALLS: Record<string, string> = {
  run: 'the transaction (BEGIN, COMMIT)',
  get: 'count',
  pluck: 'count',
  all: 'page',
  iterate: 'page',
};

function classify(stack: Frame[]): string {
  // stack[0] is the leaf.
  const leaf = stack[0] as Frame;
  if (leaf.functionName === '(garbage collector)') return 'garbage collection';
  if (leaf.functionName === '(program)') return '(program): native, outside JavaScript';
  for (let i = 0; i < stack.length; i += 1) {
    const frame = stack[i] as Frame;
    if (!OURS.test(frame.url)) continue;
    // A native call made by the search: the statement's own work.
    if (/\/lib\/search(?:\/[^/]+)?\.js$/.test(frame.url) && i > 0) {
      const callee = stack[i - 1] as Frame;
      const sqlite = callee.url === '' ? SQLITE_CALLS[callee.functionName] : undefined;
      if (sqlite !== undefined) return sqlite;
    }
    for (const [phase, file, name] of RULES) {
      if (file.test(frame.url) && name.test(frame.functionName)) return phase;
    }
  }
  return "node:http's parsing, the socket, timers";
}

interface ProfileNode {
  id: number;
  callFrame: Frame;
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** µs per phase in the profile, over the samples between the first and last request seen. */
function phasesOf(profile: Profile): Map<string, number> {
  const parent = new Map<number, ProfileNode>();
  const byId = new Map<number, ProfileNode>();
  for (const node of profile.nodes) {
    byId.set(node.id, node);
    for (const child of node.children ?? []) parent.set(child, node);
  }
  const phaseOf = new Map<number, string>();
  const handling = new Map<number, boolean>();
  for (const node of profile.nodes) {
    const stack: Frame[] = [];
    let handles = false;
    for (let n: ProfileNode | undefined = node; n !== undefined; n = parent.get(n.id)) {
      stack.push(n.callFrame);
      if (n.callFrame.functionName === 'parserOnIncoming') handles = true;
    }
    phaseOf.set(node.id, classify(stack));
    handling.set(node.id, handles);
  }
  // The load's window: from the first sample in a request handler to the last one.
  const times: number[] = [];
  let t = 0;
  for (const delta of profile.timeDeltas) {
    t += delta;
    times.push(t);
  }
  let first = -1;
  let last = -1;
  profile.samples.forEach((id, i) => {
    if (handling.get(id) === true) {
      if (first === -1) first = i;
      last = i;
    }
  });
  const spent = new Map<string, number>();
  for (let i = first; i <= last && i >= 0; i += 1) {
    const id = profile.samples[i] as number;
    const node = byId.get(id) as ProfileNode;
    if (node.callFrame.functionName === '(idle)') continue;
    // A sample stands for the time until the next one.
    const duration = (times[i + 1] ?? times[i] ?? 0) - (times[i] ?? 0);
    const phase = phaseOf.get(id) as string;
    spent.set(phase, (spent.get(phase) ?? 0) + duration);
  }
  return spent;
}

// ---------------------------------------------------------------------------------------

interface Run {
  phases: Map<string, number>; // µs per request
  load: Load;
}
const builds: Array<[string, string]> = [['this build', '.']];
if (values.before !== undefined) builds.push(['before', values.before]);
const loads: Array<[string, string]> = [
  ['typical search, 20k ANALYZEd', SEARCHES],
  ['/api/v1/status', STATUS],
];
const options = { seconds, connections: Number(values.connections), core: '1' };
const runs = new Map<string, Run[]>();
console.log(
  `node --cpu-prof (sampling every ${values['interval-us']} µs) of the command under wrk, ${options.connections} connections, ${rounds} round(s) × ${seconds} s, ${pinned ? 'server on core 0, wrk on core 1' : 'unpinned'}; load average at the start ${loadAverage()}.\n`,
);
for (let round = 0; round < rounds; round += 1) {
  for (const [loadName, paths] of round % 2 === 0 ? loads : [...loads].reverse()) {
    for (const [build, root] of round % 2 === 0 ? builds : [...builds].reverse()) {
      const profiles = join(dir, `${round}-${build}-${loadName}`.replace(/[^a-z0-9-]+/gi, '_'));
      mkdirSync(profiles);
      const [node, ...rest] = serviceCommand(FILE, root);
      const command = [
        node as string,
        '--cpu-prof',
        `--cpu-prof-dir=${profiles}`,
        `--cpu-prof-interval=${values['interval-us']}`,
        ...rest,
      ];
      const server = await startServer(command, serviceEnv, '0');
      // The profile covers the warm-up and the measured run: both are counted.
      const warmUp = requestsIn(await wrk(server.origin, paths, 1, options.connections, options.core));
      const measured = await load(server, paths, { ...options, warmUp: false });
      await stopServer(server);
      const file = readdirSync(profiles).find((name) => name.endsWith('.cpuprofile'));
      if (file === undefined) throw new Error(`no profile written in ${profiles}`);
      const profile = JSON.parse(readFileSync(join(profiles, file), 'utf8')) as Profile;
      const requests = warmUp + measured.requests;
      if (values.keep !== undefined) {
        // The name says how many requests the profile holds, to turn its times into µs per request.
        const name = `${build}-${loadName}-${round}-${requests}requests.cpuprofile`.replace(/[^a-z0-9.-]+/gi, '_');
        mkdirSync(values.keep, { recursive: true });
        writeFileSync(join(values.keep, name), JSON.stringify(profile));
      }
      const phases = new Map([...phasesOf(profile)].map(([phase, us]) => [phase, us / requests]));
      const key = `${build}|${loadName}`;
      runs.set(key, [...(runs.get(key) ?? []), { phases, load: measured }]);
      process.stderr.write(`round ${round + 1}: ${build}, ${loadName}: ${Math.round(measured.rps)} req/s\n`);
    }
  }
}

for (const [loadName] of loads) {
  const columns = builds.map(([build]) => runs.get(`${build}|${loadName}`) as Run[]);
  const phases = new Set(columns.flatMap((list) => list.flatMap((run) => [...run.phases.keys()])));
  const cell = (list: Run[], phase: string): number => median(list.map((run) => run.phases.get(phase) ?? 0));
  const ordered = [...phases].sort((a, b) => cell(columns[0] as Run[], b) - cell(columns[0] as Run[], a));
  console.log(`\n${loadName}, µs per request (median of ${rounds}):\n`);
  console.log(`| phase | ${builds.map(([b]) => b).join(' | ')} |${builds.length > 1 ? ' difference |' : ''}`);
  console.log(`|---|${builds.map(() => '---:').join('|')}|${builds.length > 1 ? '---:|' : ''}`);
  for (const phase of ordered) {
    const figures = columns.map((list) => cell(list, phase));
    const difference = builds.length > 1 ? ` ${((figures[0] ?? 0) - (figures[1] ?? 0)).toFixed(1)} |` : '';
    console.log(`| ${phase} | ${figures.map((f) => f.toFixed(1)).join(' | ')} |${difference}`);
  }
  const totals = columns.map((list) => median(list.map((run) => [...run.phases.values()].reduce((s, v) => s + v, 0))));
  const cpu = columns.map((list) => median(list.map((run) => run.load.cpu)));
  const rps = columns.map((list) => median(list.map((run) => run.load.rps)));
  const diff = (xs: number[]): string => (builds.length > 1 ? ` ${((xs[0] ?? 0) - (xs[1] ?? 0)).toFixed(1)} |` : '');
  console.log(`| **main thread, sampled** | ${totals.map((f) => f.toFixed(1)).join(' | ')} |${diff(totals)}`);
  console.log(
    `| process CPU (/proc, all threads, kernel included) | ${cpu.map((f) => f.toFixed(1)).join(' | ')} |${diff(cpu)}`,
  );
  console.log(
    `| req/s under the profiler | ${rps.map((f) => f.toFixed(0)).join(' | ')} |${builds.length > 1 ? ' |' : ''}`,
  );
}
