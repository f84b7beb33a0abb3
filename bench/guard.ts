// What the guard process costs a book of plain tables (the common case), and whether the
// replacements of its file leave anything behind: the command on a copy of the 20,000-booking
// file, beside an earlier build (`--before DIR`, a checkout with its dist/ built) in the same
// run. For each: the processes of the service and their RSS summed, 2 s after the listening
// line (the guard that opened the file still waiting) and 8 s after it (the guard ends when
// it has been idle for 5 s), and again after 200 typical searches. Then, for each build,
// `--replacements` new copies renamed into place one after the other, each waited for until
// the service says it serves it; every `--every`, the service's processes, zombies among
// them, its open file descriptors, the RSS of all of them and the serving process's own;
// then 6 s and 36 s after the last. Prints markdown.
//
//   npm run bench:guard -- [--replacements 200] [--every 20] [--before DIR]     (about 5 min a build)

import { spawn } from 'node:child_process';
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import { PASSWORD, serviceEnv, USER } from './load.js';
import { queriesFor, toQueryString } from './shapes.js';

const { values } = parseArgs({
  options: {
    replacements: { type: 'string', default: '200' },
    every: { type: 'string', default: '20' },
    before: { type: 'string' },
  },
});
const replacements = Number(values.replacements);
const every = Number(values.every);
const SOURCE = 'bench/data/bookings-20000.sqlite';
const AUTHORIZATION = `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}`;

const dir = mkdtempSync(join(tmpdir(), 'guard-'));
process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
const file = join(dir, 'kasse.sqlite');

/** The process and all its descendants. */
function family(pid: number): number[] {
  let children: number[] = [];
  try {
    for (const task of readdirSync(`/proc/${pid}/task`)) {
      const listed = readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').trim();
      if (listed !== '') children = children.concat(listed.split(/\s+/).map(Number));
    }
  } catch {
    return [];
  }
  return [pid, ...children.flatMap(family)];
}

interface Look {
  processes: number;
  zombies: number;
  rssMb: number;
  /** The serving process's own. */
  ownRssMb: number;
  fds: number;
}

function look(pid: number): Look {
  let kb = 0;
  let ownKb = 0;
  let zombies = 0;
  const all = family(pid);
  for (const p of all) {
    const status = readFileSync(`/proc/${p}/status`, 'utf8');
    const rss = Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0);
    kb += rss;
    if (p === pid) ownKb = rss;
    if (/State:\s+Z/.test(status)) zombies += 1;
  }
  return {
    processes: all.length,
    zombies,
    rssMb: kb / 1024,
    ownRssMb: ownKb / 1024,
    fds: readdirSync(`/proc/${pid}/fd`).length,
  };
}

const sleep = (ms: number): Promise<void> => new Promise((done) => setTimeout(done, ms));

async function serve(root: string): Promise<{
  pid: number;
  origin: string;
  served: () => number;
  stop: () => Promise<void>;
}> {
  const child = spawn('node', [join(root, 'bin/booking-search-server.js'), '--db', file, '--port', '0'], {
    env: serviceEnv,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  const origin = await new Promise<string>((done, fail) => {
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
      const match = /listening on (http:\/\/[\d.:]+)\//.exec(stdout);
      if (match !== null) done(match[1] as string);
    });
    child.once('exit', (code) => fail(new Error(`exited with ${code}: ${stderr}`)));
  });
  child.stdout.removeAllListeners('data').resume();
  return {
    pid: child.pid as number,
    origin,
    served: () => stderr.split('was replaced; serving the new file').length - 1,
    stop: async () => {
      child.removeAllListeners('exit');
      const exited = new Promise((done) => child.once('exit', done));
      child.kill('SIGTERM');
      await exited;
    },
  };
}

const source = new Database(SOURCE, { readonly: true });
const queries = queriesFor(source, 'month exact', 200);
source.close();

async function searches(origin: string): Promise<void> {
  for (const query of queries) {
    const reply = await fetch(`${origin}/api/v1/buchungen?${toQueryString(query)}`, {
      headers: { authorization: AUTHORIZATION },
    });
    if (reply.status !== 200) throw new Error(`search answered ${reply.status}`);
    await reply.arrayBuffer();
  }
}

const row = (name: string, when: string, l: Look): string =>
  `| ${name} | ${when} | ${l.processes} | ${l.zombies} | ${l.fds} | ${l.rssMb.toFixed(1)} | ${l.ownRssMb.toFixed(1)} |`;

const builds: Array<[string, string]> = [['this build', '.']];
if (values.before !== undefined) builds.push([`before (${values.before})`, resolve(values.before)]);
console.log(
  '| build | when | processes | zombies | fds (service) | RSS MB (all processes) | RSS MB (serving process) |',
);
console.log('|---|---|---:|---:|---:|---:|---:|');
for (const [name, root] of builds) {
  copyFileSync(SOURCE, file);
  const server = await serve(root);
  await sleep(2_000);
  console.log(row(name, '2 s after listening', look(server.pid)));
  await sleep(6_000);
  console.log(row(name, '8 s after listening', look(server.pid)));
  await searches(server.origin);
  console.log(row(name, 'after 200 typical searches', look(server.pid)));
  if (replacements > 0) {
    let maxProcesses = 0;
    const started = performance.now();
    for (let i = 1; i <= replacements; i += 1) {
      const next = join(dir, 'new.sqlite');
      copyFileSync(SOURCE, next);
      renameSync(next, file);
      const deadline = performance.now() + 15_000;
      while (server.served() < i) {
        if (performance.now() > deadline) throw new Error(`replacement ${i} not served within 15 s`);
        maxProcesses = Math.max(maxProcesses, look(server.pid).processes);
        await sleep(20);
      }
      if (i % every === 0 || i === replacements) {
        await searches(server.origin);
        console.log(row(name, `after ${i} replacements and 200 searches`, look(server.pid)));
      }
    }
    const seconds = (performance.now() - started) / 1000;
    await sleep(6_000);
    console.log(row(name, `6 s after the last replacement`, look(server.pid)));
    await sleep(30_000);
    console.log(row(name, `36 s after the last replacement`, look(server.pid)));
    console.log(
      `\n${replacements} replacements in ${seconds.toFixed(0)} s; at most ${maxProcesses} processes at any look (every 20 ms while a replacement was waited for)\n`,
    );
  }
  await server.stop();
}
