// Where a request's time goes: the command under wrk's load with `node --cpu-prof`, each
// sample of its main thread put to the phase of the request it belongs to (the deepest
// frame of ours, or the native call it made), in µs per request. The typical search on the
// 20k ANALYZEd book and /api/v1/status, this build and, with --before, an earlier one, the
// server on core 0 and wrk on core 1 as in `npm run bench`. Prints markdown.
//
//   npm run bench:profile -- [--seconds 10] [--rounds 1] [--interval-us 100] [--before DIR] [--keep DIR]
//   npm run bench:profile -- --analyze DIR      (the tables again from the profiles --keep left)
//
// The ceiling (bare node:http) is profiled beside /status: what every server pays. The
// profiler's own cost inflates every figure a little; compare the builds, and the phases
// of one build, within one run. `--keep DIR` leaves the .cpuprofile files there (for
// Chrome's DevTools) with what each measured.

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
    // The tables again from the profiles a run kept, without running anything.
    analyze: { type: 'string' },
  },
});
const seconds = Number(values.seconds);
const rounds = Number(values.rounds);
const FILE = 'bench/data/bookings-20000-analyzed.sqlite';

// ---------------------------------------------------------------------------------------
// The phases. A sample goes to the deepest frame that one of these rules names; what no
// rule names is node:http's and the socket's (or, outside any JavaScript, the rows below).

interface Frame {
  functionName: string;
  url: string;
}
type Rule = [phase: string, file: RegExp, name: RegExp];
// Our own code, as the command runs it (this build's and the earlier one's alike).
const OURS = /\/dist\/(?:lib|bin)\//;
const SEARCH = /\/dist\/lib\/search(?:\/[^/]+)?\.js$/;
const ANY = /(?:)/;
// The first rule that names the deepest frame of ours takes the sample. Native calls (into
// better-sqlite3, node:crypto) show no frame of their own: they count to the frame that
// made them, so "the search" holds SQLite's count and page.
const RULES: Rule[] = [
  ['access log', /\/bin\/log\.js$/, ANY],
  ['parsing the query', /\/lib\/(?:query|money)\.js$/, /^(?!formatEuros$)/],
  ['formatting the answer', /\/lib\/(?:format|money)\.js$/, ANY],
  ['throttle', /\/lib\/throttle\.js$/, ANY],
  ['throttle keys', /\/lib\/client-address\.js$/, /^throttleKey$/],
  ['request facts (client address)', /\/lib\/(?:client-address|request-facts)\.js$/, ANY],
  ['login (the remembered header, its digest)', /\/lib\/(?:auth|login)\.js$/, ANY],
  ['routing (target, Host, CORS)', /\/lib\/(?:request-target|protocol-errors|cors|mount)\.js$/, ANY],
  ['writing the answer (node:http)', /\/lib\/respond\.js$/, ANY],
  ['the read transaction (BEGIN, COMMIT)', SEARCH, /^inTransaction$/],
  ['the queue and its turns', /\/lib\/search\/turns\.js$/, ANY],
  [
    'the queue and its turns',
    SEARCH,
    /^(?:search\.queue|runQueue|schedule|hop|runTurn|next|rotate|count|search\.waitingFrom|search\.waitingFor)$/,
  ],
  ['the search: count and page in SQLite, the plan', SEARCH, ANY],
  ['the handler (routing, the endpoint)', /\/lib\/[^/]+\.js$/, ANY],
  ['the command (bin/)', /\/bin\/[^/]+\.js$/, ANY],
];

function classify(stack: Frame[]): string {
  // stack[0] is the leaf.
  const leaf = stack[0] as Frame;
  if (leaf.functionName === '(garbage collector)') return 'garbage collection';
  if (leaf.functionName === '(program)') return '(program): native, outside JavaScript';
  for (const frame of stack) {
    if (!OURS.test(frame.url)) continue;
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
/** What `--keep` writes beside each profile, and `--analyze` reads. */
interface Kept {
  build: string;
  loadName: string;
  round: number;
  requests: number;
  load: Load;
}
const loadNames = ['typical search, 20k ANALYZEd', '/api/v1/status'];
const builds: string[] = [];
const runs = new Map<string, Run[]>();
function add(kept: Kept, profile: Profile): void {
  if (!builds.includes(kept.build)) builds.push(kept.build);
  const phases = new Map([...phasesOf(profile)].map(([phase, us]) => [phase, us / kept.requests]));
  const key = `${kept.build}|${kept.loadName}`;
  runs.set(key, [...(runs.get(key) ?? []), { phases, load: kept.load }]);
}

if (values.analyze !== undefined) {
  const from = values.analyze;
  console.log(`The profiles kept in ${from}.\n`);
  for (const name of readdirSync(from)
    .filter((n) => n.endsWith('.json'))
    .sort()) {
    const kept = JSON.parse(readFileSync(join(from, name), 'utf8')) as Kept;
    add(kept, JSON.parse(readFileSync(join(from, name.replace(/\.json$/, '.cpuprofile')), 'utf8')) as Profile);
  }
} else {
  await measure();
}
print();

async function measure(): Promise<void> {
  requireWrk();
  const dir = mkdtempSync(join(tmpdir(), 'bench-profile-'));
  process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
  const db = new Database(FILE, { readonly: true, fileMustExist: true });
  const searches = join(dir, 'search.txt');
  writeFileSync(
    searches,
    `${queriesFor(db, 'month exact', 5000, 11)
      .map((q) => `/api/v1/buchungen?${toQueryString(q)}`)
      .join('\n')}\n`,
  );
  db.close();
  const status = join(dir, 'status.txt');
  writeFileSync(status, '/api/v1/status\n');
  const paths = [searches, status];
  // The ceiling (bare node:http, a constant body) beside /status: what no server avoids.
  const commands: Array<[string, (file: string) => string[], boolean]> = [
    ['this build', (file) => serviceCommand(file), true],
    ...(values.before === undefined
      ? []
      : [
          ['before', (file: string) => serviceCommand(file, values.before), true] as [
            string,
            (file: string) => string[],
            boolean,
          ],
        ]),
    ['ceiling', () => ['node', '--import', 'tsx', 'bench/servers/ceiling.ts'], false],
  ];
  const options = { seconds, connections: Number(values.connections), core: '1' };
  console.log(
    `node --cpu-prof (sampling every ${values['interval-us']} µs) of the command under wrk, ${options.connections} connections, ${rounds} round(s) × ${seconds} s, ${pinned ? 'server on core 0, wrk on core 1' : 'unpinned'}; load average at the start ${loadAverage()}.\n`,
  );
  for (let round = 0; round < rounds; round += 1) {
    for (const [l, loadName] of (round % 2 === 0 ? loadNames : [...loadNames].reverse()).entries()) {
      const which = round % 2 === 0 ? l : loadNames.length - 1 - l;
      for (const [build, commandFor, searches] of round % 2 === 0 ? commands : [...commands].reverse()) {
        // The ceiling answers every path alike: beside /status only.
        if (!searches && which === 0) continue;
        const profiles = join(dir, `${round}-${build}-${loadName}`.replace(/[^a-z0-9-]+/gi, '_'));
        mkdirSync(profiles);
        const [node, ...rest] = commandFor(FILE);
        const command = [
          node as string,
          '--cpu-prof',
          `--cpu-prof-dir=${profiles}`,
          `--cpu-prof-interval=${values['interval-us']}`,
          ...rest,
        ];
        const server = await startServer(command, serviceEnv, '0');
        const path = paths[which] as string;
        // The profile covers the warm-up and the measured run: both are counted.
        const warmUp = requestsIn(await wrk(server.origin, path, 1, options.connections, options.core));
        const measured = await load(server, path, { ...options, warmUp: false });
        await stopServer(server);
        const file = readdirSync(profiles).find((name) => name.endsWith('.cpuprofile'));
        if (file === undefined) throw new Error(`no profile written in ${profiles}`);
        const text = readFileSync(join(profiles, file), 'utf8');
        const kept: Kept = { build, loadName, round, requests: warmUp + measured.requests, load: measured };
        if (values.keep !== undefined) {
          const name = `${round}-${build}-${loadName}`.replace(/[^a-z0-9-]+/gi, '_');
          mkdirSync(values.keep, { recursive: true });
          writeFileSync(join(values.keep, `${name}.cpuprofile`), text);
          writeFileSync(join(values.keep, `${name}.json`), JSON.stringify(kept));
        }
        add(kept, JSON.parse(text) as Profile);
        process.stderr.write(`round ${round + 1}: ${build}, ${loadName}: ${Math.round(measured.rps)} req/s\n`);
      }
    }
  }
}

function print(): void {
  for (const loadName of loadNames) {
    const shown = builds.filter((build) => runs.has(`${build}|${loadName}`));
    const columns = shown.map((build) => runs.get(`${build}|${loadName}`) as Run[]);
    const compared = shown[1] === 'before';
    const phases = new Set(columns.flatMap((list) => list.flatMap((run) => [...run.phases.keys()])));
    const cell = (list: Run[], phase: string): number => median(list.map((run) => run.phases.get(phase) ?? 0));
    const ordered = [...phases].sort((a, b) => cell(columns[0] as Run[], b) - cell(columns[0] as Run[], a));
    const diff = (xs: number[]): string => (compared ? ` ${((xs[0] ?? 0) - (xs[1] ?? 0)).toFixed(1)} |` : '');
    console.log(`\n${loadName}, µs per request (median of ${(columns[0] as Run[]).length}):\n`);
    console.log(`| phase | ${shown.join(' | ')} |${compared ? ' this build − before |' : ''}`);
    console.log(`|---|${shown.map(() => '---:').join('|')}|${compared ? '---:|' : ''}`);
    for (const phase of ordered) {
      const figures = columns.map((list) => cell(list, phase));
      console.log(`| ${phase} | ${figures.map((f) => f.toFixed(1)).join(' | ')} |${diff(figures)}`);
    }
    const totals = columns.map((list) =>
      median(list.map((run) => [...run.phases.values()].reduce((s, v) => s + v, 0))),
    );
    const cpu = columns.map((list) => median(list.map((run) => run.load.cpu)));
    const rps = columns.map((list) => median(list.map((run) => run.load.rps)));
    console.log(`| **main thread, sampled** | ${totals.map((f) => f.toFixed(1)).join(' | ')} |${diff(totals)}`);
    console.log(
      `| process CPU (/proc: all threads, the kernel's part included) | ${cpu.map((f) => f.toFixed(1)).join(' | ')} |${diff(cpu)}`,
    );
    console.log(`| req/s under the profiler | ${rps.map((f) => f.toFixed(0)).join(' | ')} |${compared ? ' |' : ''}`);
  }
}
