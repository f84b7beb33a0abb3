// Where a request's time goes: the command under wrk's load, sampled, each sample put to
// the phase of the request it belongs to, in µs per request. The typical search on the 20k
// ANALYZEd book and /api/v1/status, this build and, with --before, an earlier one, beside
// the ceiling (bare node:http, under the /status load: what every server pays); the server
// on core 0 and wrk on core 1 as in `npm run bench`. Prints markdown.
//
//   npm run bench:profile -- [--rounds 3] [--seconds 6] [--before DIR] [--sampler perf|cpu-prof] [--keep DIR]
//   npm run bench:profile -- --analyze DIR      (the tables again from what --keep left)
//
// Two samplers:
// - perf (the default where `perf` runs; as root, or with kernel.perf_event_paranoid ≤ 1):
//   `perf record -e cpu-clock -g` of the server's threads, with node's --perf-basic-prof
//   naming the JavaScript frames. CPU time, the kernel's part included, so the phases add
//   up to the process's CPU time per request; SQLite's statements are told apart by
//   better-sqlite3's native frames (run: BEGIN and COMMIT, get: the count, all: the page).
//   The servers run with V8's inlining off (every function keeps a frame of its own, or its
//   samples would count to its caller), which costs them some speed: compare builds.
// - cpu-prof: `node --cpu-prof`, V8's own profiler of the main thread. Wall time: a phase
//   that waits (a write to a full pipe) counts as if it ran, and native calls have no frame
//   of their own (SQLite counts to the JavaScript that called it).
// Either sampler's own cost inflates the figures a little: compare builds, and phases,
// within one run.

import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
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
    seconds: { type: 'string', default: '6' },
    rounds: { type: 'string', default: '3' },
    connections: { type: 'string', default: '16' },
    before: { type: 'string' },
    sampler: { type: 'string' },
    // cpu-prof's sampling interval.
    'interval-us': { type: 'string', default: '100' },
    keep: { type: 'string' },
    // The tables again from the profiles a run kept, without running anything.
    analyze: { type: 'string' },
  },
});
const seconds = Number(values.seconds);
const rounds = Number(values.rounds);
const FILE = 'bench/data/bookings-20000-analyzed.sqlite';
const perfWorks = spawnSync('perf', ['record', '-e', 'cpu-clock', '-o', '/dev/null', 'true']).status === 0;
const sampler = values.sampler ?? (perfWorks ? 'perf' : 'cpu-prof');
if (sampler !== 'perf' && sampler !== 'cpu-prof') throw new Error('--sampler is perf or cpu-prof');

// ---------------------------------------------------------------------------------------
// The phases. A sample goes to the deepest frame of ours that a rule names.

interface Frame {
  functionName: string;
  url: string;
}
type Rule = [phase: string, file: RegExp, name: RegExp];
// Our own code, as the command runs it (this build's and the earlier one's alike).
const OURS = /\/dist\/(?:lib|bin)\//;
const SEARCH = /\/dist\/lib\/search(?:\/[^/]+)?\.js$/;
const ANY = /(?:)/;
const PHASES = {
  log: 'the access log',
  parse: 'parsing the query',
  format: 'formatting the answer',
  throttle: 'throttle',
  keys: 'throttle keys',
  facts: 'request facts (client address)',
  login: 'login (the remembered header, its digest)',
  routing: 'routing (target, Host, CORS)',
  write: 'writing the answer (node:http, the kernel)',
  transaction: 'the read transaction (BEGIN, COMMIT)',
  turns: 'the queue and its turns',
  count: 'count (SQLite)',
  page: 'page (SQLite)',
  search: 'the search around its statements (plan, binding, rows)',
  handler: 'the handler (routing, the endpoint)',
  command: 'the command (bin/)',
  gc: 'garbage collection',
  helpers: "V8's helper threads (compiler, GC)",
  kernel: 'the kernel: reading requests, polling, waking wrk',
  node: "node:http's parsing, the socket, timers",
  program: '(program): native, outside JavaScript',
} as const;
const RULES: Rule[] = [
  [PHASES.log, /\/bin\/(?:base\/)?log\.js$/, ANY],
  // The listener's edge times each response for the access log (lib/request.ts).
  [PHASES.log, /\/lib\/request\.js$/, /^(?:whenAnswered|closed)$/],
  [PHASES.parse, /\/lib\/(?:query|money)\.js$/, /^(?!formatEuros$)/],
  [PHASES.format, /\/lib\/(?:format|money)\.js$/, ANY],
  [PHASES.format, /\/lib\/search-endpoint\.js$/, /^(?:formatSearchResult|formatBooking|formatEuros|jsonString)$/],
  [PHASES.throttle, /\/lib\/throttle\.js$/, ANY],
  [PHASES.keys, /\/lib\/(?:client-address|request)\.js$/, /^throttleKey$/],
  [PHASES.facts, /\/lib\/(?:client-address|request-facts|request)\.js$/, /^(?!originForm$|hasBadHost$)/],
  [PHASES.login, /\/lib\/(?:auth|login)\.js$/, ANY],
  [PHASES.routing, /\/lib\/(?:request-target|protocol-errors|cors|mount|request)\.js$/, ANY],
  [PHASES.write, /\/lib\/respond\.js$/, ANY],
  [PHASES.transaction, SEARCH, /^inTransaction$/],
  [PHASES.turns, /\/lib\/search\/(?:turns|rotations)\.js$/, ANY],
  [
    PHASES.turns,
    SEARCH,
    /^(?:search\.queue|runQueue|schedule|hop|runTurn|next|rotate|count|search\.waitingFrom|search\.waitingFor)$/,
  ],
  [PHASES.search, SEARCH, ANY],
  [PHASES.handler, /\/lib\/[^/]+\.js$/, ANY],
  [PHASES.command, /\/bin\/.+\.js$/, ANY],
];

function ruleFor(frame: Frame): string | undefined {
  if (!OURS.test(frame.url)) return undefined;
  for (const [phase, file, name] of RULES) {
    if (file.test(frame.url) && name.test(frame.functionName)) return phase;
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------
// cpu-prof: V8's profile of the main thread.

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

function classifyCpuProf(stack: Frame[]): string {
  const leaf = stack[0] as Frame;
  if (leaf.functionName === '(garbage collector)') return PHASES.gc;
  if (leaf.functionName === '(program)') return PHASES.program;
  for (const frame of stack) {
    const phase = ruleFor(frame);
    if (phase !== undefined) return phase;
  }
  return PHASES.node;
}

/** µs per phase in the profile, over the samples between the first and last request seen. */
function phasesOfCpuProf(profile: Profile): Map<string, number> {
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
    phaseOf.set(node.id, classifyCpuProf(stack));
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
// perf: `perf script` of a `perf record -g` of the server's threads.

const SAMPLE_HEADER = /^(\S.*?)\s+\d+\s+[\d.]+:\s+(\d+)\s+cpu-clock/;
const FRAME = /^\s*[0-9a-f]+ (.*?)(?:\+0x[0-9a-f]+)? \((.*)\)$/;
// A JavaScript frame in node's perf map: `JS:*name file:///…/x.js:12:3` (the mark: the tier).
const JS_FRAME = /^JS:[*+^~]?(\S*) (\S+?)(?::\d+:\d+)?$/;
const GC = /Heap::(?:CollectGarbage|PerformGarbageCollection)|Scavenger|MarkCompact|MinorMarkSweep/;
const STATEMENT = /Statement::JS_(run|get|all|iterate)/;
const SQL_PHASE: Record<string, string> = {
  run: PHASES.transaction,
  get: PHASES.count,
  all: PHASES.page,
  iterate: PHASES.page,
};

/** CPU µs per phase in `perf script`'s text. */
function phasesOfPerf(script: string): Map<string, number> {
  const spent = new Map<string, number>();
  let thread = '';
  let periodNs = 0;
  let phase: string | undefined;
  let kernel = false;
  const finish = (): void => {
    if (periodNs === 0) return;
    const decided = thread !== 'MainThread' ? PHASES.helpers : (phase ?? (kernel ? PHASES.kernel : PHASES.node));
    spent.set(decided, (spent.get(decided) ?? 0) + periodNs / 1000);
    periodNs = 0;
  };
  for (const line of script.split('\n')) {
    const header = SAMPLE_HEADER.exec(line);
    if (header !== null) {
      finish();
      thread = header[1] as string;
      periodNs = Number(header[2]);
      phase = undefined;
      kernel = false;
      continue;
    }
    if (phase !== undefined || periodNs === 0) continue;
    const frame = FRAME.exec(line);
    if (frame === null) continue;
    const [, symbol = '', dso = ''] = frame;
    if (dso.includes('kernel')) kernel = true;
    if (GC.test(symbol)) {
      phase = PHASES.gc;
      continue;
    }
    const statement = STATEMENT.exec(symbol);
    if (statement !== null) {
      phase = SQL_PHASE[statement[1] as string];
      continue;
    }
    const js = JS_FRAME.exec(symbol);
    if (js !== null) phase = ruleFor({ functionName: js[1] as string, url: js[2] as string });
  }
  finish();
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
  sampler: string;
  requests: number;
  load: Load;
}
const loadNames = ['typical search, 20k ANALYZEd', '/api/v1/status'];
const builds: string[] = [];
const runs = new Map<string, Run[]>();
let samplerUsed = sampler;
function add(kept: Kept, text: string): void {
  if (!builds.includes(kept.build)) builds.push(kept.build);
  samplerUsed = kept.sampler;
  const spent = kept.sampler === 'perf' ? phasesOfPerf(text) : phasesOfCpuProf(JSON.parse(text) as Profile);
  const phases = new Map([...spent].map(([phase, us]) => [phase, us / kept.requests]));
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
    add(kept, readFileSync(join(from, name.replace(/\.json$/, '.profile')), 'utf8'));
  }
} else {
  await measure();
}
print();

/** The server's command with the sampler's node flags, and how to read its profile. */
function sampled(command: string[], dir: string): string[] {
  const [node, ...rest] = command;
  const flags =
    sampler === 'perf'
      ? // --perf-basic-prof also turns V8's log on: into the run's directory, not the current one.
        // Inlining off: a function the compilers inline has no frame of its own, and its
        // samples would count to its caller's phase.
        [
          '--no-turbo-inlining',
          '--no-maglev-inlining',
          '--perf-basic-prof',
          '--interpreted-frames-native-stack',
          '--no-logfile-per-isolate',
          `--logfile=${join(dir, 'v8.log')}`,
        ]
      : ['--cpu-prof', `--cpu-prof-dir=${dir}`, `--cpu-prof-interval=${values['interval-us']}`];
  return [node as string, ...flags, ...rest];
}

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
  type Command = [build: string, command: (file: string) => string[], searches: boolean];
  const commands: Command[] = [
    ['this build', (file) => serviceCommand(file), true],
    ...(values.before === undefined
      ? []
      : [['before', (file: string) => serviceCommand(file, values.before), true] as Command]),
    ['ceiling', () => ['node', '--import', 'tsx', 'bench/servers/ceiling.ts'], false],
  ];
  const options = { seconds, connections: Number(values.connections), core: '1' };
  console.log(
    `${sampler === 'perf' ? 'perf record -e cpu-clock -g (CPU time, kernel included)' : `node --cpu-prof (wall time of the main thread, every ${values['interval-us']} µs)`} of the server under wrk, ${options.connections} connections, ${rounds} round(s) × ${seconds} s after 1 s of warm-up, ${pinned ? 'server on core 0, wrk on core 1' : 'unpinned'}; load average at the start ${loadAverage()}.\n`,
  );
  for (let round = 0; round < rounds; round += 1) {
    for (const [l, loadName] of (round % 2 === 0 ? loadNames : [...loadNames].reverse()).entries()) {
      const which = round % 2 === 0 ? l : loadNames.length - 1 - l;
      for (const [build, commandFor, answersSearches] of round % 2 === 0 ? commands : [...commands].reverse()) {
        // The ceiling answers every path alike: beside /status only.
        if (!answersSearches && which === 0) continue;
        const profiles = join(dir, `${round}-${build}-${loadName}`.replace(/[^a-z0-9-]+/gi, '_'));
        mkdirSync(profiles);
        const server = await startServer(sampled(commandFor(FILE), profiles), serviceEnv, '0');
        const path = paths[which] as string;
        const pid = server.child.pid as number;
        let text: string;
        let kept: Kept;
        if (sampler === 'perf') {
          await wrk(server.origin, path, 1, options.connections, options.core); // warm-up
          const data = join(profiles, 'perf.data');
          const perf = spawn('perf', ['record', '-e', 'cpu-clock', '-F', '4999', '-g', '-p', String(pid), '-o', data], {
            stdio: 'ignore',
          });
          await new Promise((resolve) => setTimeout(resolve, 200)); // perf attaches
          const measured = await load(server, path, { ...options, warmUp: false });
          perf.kill('SIGINT');
          await once(perf, 'exit');
          await stopServer(server);
          text = spawnSync('perf', ['script', '-i', data], { encoding: 'utf8', maxBuffer: 1 << 30 }).stdout;
          rmSync(`/tmp/perf-${pid}.map`, { force: true });
          kept = { build, loadName, round, sampler, requests: measured.requests, load: measured };
        } else {
          // The profile covers the warm-up and the measured run: both are counted.
          const warmUp = requestsIn(await wrk(server.origin, path, 1, options.connections, options.core));
          const measured = await load(server, path, { ...options, warmUp: false });
          await stopServer(server);
          const file = readdirSync(profiles).find((name) => name.endsWith('.cpuprofile'));
          if (file === undefined) throw new Error(`no profile written in ${profiles}`);
          text = readFileSync(join(profiles, file), 'utf8');
          kept = { build, loadName, round, sampler, requests: warmUp + measured.requests, load: measured };
        }
        if (values.keep !== undefined) {
          const name = `${round}-${build}-${loadName}`.replace(/[^a-z0-9-]+/gi, '_');
          mkdirSync(values.keep, { recursive: true });
          writeFileSync(join(values.keep, `${name}.profile`), text);
          writeFileSync(join(values.keep, `${name}.json`), JSON.stringify(kept));
        }
        add(kept, text);
        process.stderr.write(`round ${round + 1}: ${build}, ${loadName}: ${Math.round(kept.load.rps)} req/s\n`);
      }
    }
  }
}

function print(): void {
  const unit = samplerUsed === 'perf' ? 'CPU µs' : 'µs (wall time of the main thread)';
  for (const loadName of loadNames) {
    const shown = builds.filter((build) => runs.has(`${build}|${loadName}`));
    const columns = shown.map((build) => runs.get(`${build}|${loadName}`) as Run[]);
    const compared = shown[1] === 'before';
    const phases = new Set(columns.flatMap((list) => list.flatMap((run) => [...run.phases.keys()])));
    const cell = (list: Run[], phase: string): number => median(list.map((run) => run.phases.get(phase) ?? 0));
    const ordered = [...phases].sort((a, b) => cell(columns[0] as Run[], b) - cell(columns[0] as Run[], a));
    const diff = (xs: number[]): string => (compared ? ` ${((xs[0] ?? 0) - (xs[1] ?? 0)).toFixed(1)} |` : '');
    console.log(`\n${loadName}, ${unit} per request, medians of ${(columns[0] as Run[]).length} round(s):\n`);
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
    console.log(`| **all samples** | ${totals.map((f) => f.toFixed(1)).join(' | ')} |${diff(totals)}`);
    console.log(
      `| process CPU (/proc: all threads, the kernel's part included) | ${cpu.map((f) => f.toFixed(1)).join(' | ')} |${diff(cpu)}`,
    );
    console.log(`| req/s while sampled | ${rps.map((f) => f.toFixed(0)).join(' | ')} |${compared ? ' |' : ''}`);
  }
}
