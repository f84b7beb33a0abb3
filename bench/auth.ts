// The cost of password hashes (docs/API.md, Credentials), measured. Prints markdown.
//
//   npm run bench:auth -- [--rounds 3] [--seconds 5] [--flood-seconds 8] [--samples 15]
//
// 1. A hash check: how long the first request of a client waits.
// 2. /api/v1/status with a hashed credential (after its first request) beside a plain
//    password: the CLI pinned to core 0, wrk to core 1, alternating within each round.
// 3. A flood of wrong passwords (wrk, more connections than hash checks and queue) while a
//    verified client asks every 20 ms: its slowest answer, and the CPU the server used.
// 4. An unknown user beside a known user with a wrong password: medians of interleaved samples.

import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import { createHandler } from '../lib/index.js';
import { hashPassword, parsePasswordHash, verifyPassword } from '../lib/password-hash.js';
import { requireWrk } from './load.js';
import { onCore, pinned, type Running, startServer, stopServer } from './process.js';
import { median } from './shapes.js';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '3' },
    seconds: { type: 'string', default: '5' },
    'flood-seconds': { type: 'string', default: '8' },
    samples: { type: 'string', default: '15' },
  },
});
const rounds = Number(values.rounds);
const seconds = Number(values.seconds);
const floodSeconds = Number(values['flood-seconds']);
const samples = Number(values.samples);

requireWrk();
const basic = (user: string, password: string): string =>
  `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

const PASSWORD = 'bench-passwort';
const HASH = await hashPassword(PASSWORD);
const parsed = parsePasswordHash(HASH);
if (!parsed.ok) throw new Error(parsed.problem);

// 1. One hash check.
const checks: number[] = [];
for (let i = 0; i < 5; i += 1) {
  const started = process.hrtime.bigint();
  await new Promise((resolve) => verifyPassword(PASSWORD, parsed.hash, resolve));
  checks.push(Number(process.hrtime.bigint() - started) / 1e6);
}
console.log(`One hash check (scrypt N=2^17, r=8, p=1): median ${median(checks).toFixed(0)} ms of 5.\n`);

// 2. Throughput, plain password beside hash.
function startCli(secret: string): Promise<Running> {
  const command = ['node', 'bin/booking-search-server.js', '--demo', '--port', '0', '--max-auth-failures', '0'];
  return startServer(command, { ...process.env, BOOKING_SEARCH_USER: 'bench', BOOKING_SEARCH_PASSWORD: secret }, '0');
}

// The flood: 20,000 different wrong passwords, so that no two requests share a hash check.
const dir = mkdtempSync(join(tmpdir(), 'bench-auth-'));
const wrongHeaders = join(dir, 'headers.txt');
writeFileSync(wrongHeaders, `${Array.from({ length: 20_000 }, (_, i) => basic('bench', `falsch-${i}`)).join('\n')}\n`);

/** wrk with one Authorization header, or (`'flood'`) a different wrong password each request. */
function wrk(
  url: string,
  authorization: string,
  runSeconds: number,
  connections: number,
  core?: string,
): Promise<string> {
  const auth = authorization === 'flood' ? ['-s', 'bench/headers.lua'] : ['-H', `Authorization: ${authorization}`];
  const args = ['-t1', `-c${connections}`, `-d${runSeconds}s`, '--latency', ...auth, url];
  const command = core === undefined ? ['wrk', ...args] : onCore(core, ['wrk', ...args]);
  const env = { ...process.env, BENCH_HEADERS: wrongHeaders };
  return new Promise((resolve) => {
    const child = spawn(command[0] as string, command.slice(1), { env, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
    child.on('exit', () => resolve(out));
  });
}
const rps = (out: string): number => Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1]);
const non2xx = (out: string): number => Number(/Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? 0);

const throughput: Record<'plain' | 'hash', number[]> = { plain: [], hash: [] };
const ratios: number[] = [];
for (let round = 0; round < rounds; round += 1) {
  const order: Array<'plain' | 'hash'> = round % 2 === 0 ? ['plain', 'hash'] : ['hash', 'plain'];
  const roundRps: Partial<Record<'plain' | 'hash', number>> = {};
  for (const kind of order) {
    const server = await startCli(kind === 'plain' ? PASSWORD : HASH);
    const url = `${server.origin}/api/v1/status`;
    await wrk(url, basic('bench', PASSWORD), 2, 16, '1'); // warm-up; the first request pays the hash
    const out = await wrk(url, basic('bench', PASSWORD), seconds, 16, '1');
    if (non2xx(out) > 0) throw new Error(`${kind}: ${non2xx(out)} answers were not 200`);
    roundRps[kind] = rps(out);
    throughput[kind].push(rps(out));
    await stopServer(server);
  }
  ratios.push((roundRps.hash as number) / (roundRps.plain as number));
  process.stderr.write(
    `round ${round + 1}: plain ${roundRps.plain?.toFixed(0)}, hash ${roundRps.hash?.toFixed(0)} req/s\n`,
  );
}
console.log(
  `GET /api/v1/status, 16 connections, ${rounds} rounds × ${seconds} s, ${pinned ? 'server on core 0, wrk on core 1' : 'unpinned (no taskset)'}:\n`,
);
console.log('| credential | req/s (median) |');
console.log('|---|---:|');
console.log(`| plain password | ${median(throughput.plain).toFixed(0)} |`);
console.log(`| scrypt hash, after the first request | ${median(throughput.hash).toFixed(0)} |`);
console.log(`\nhash / plain: ${median(ratios).toFixed(2)} (median of the rounds' ratios; goal ≥ 0.90).\n`);

// 3 and 4 in this process: the server and the verified client share one event loop, so the
// client's answer times include everything the server's loop does.
const db = new Database(':memory:');
db.exec(readFileSync(new URL('../fixtures/schema.sql', import.meta.url), 'utf8'));

async function serveInProcess(maxHashChecks: number) {
  const handler = createHandler(db, [{ username: 'bench', passwordHash: HASH }], { maxAuthFailures: 0, maxHashChecks });
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1/status` };
}

function timedGet(url: string, authorization: string, agent: Agent | false): Promise<{ ms: number; status: number }> {
  const started = process.hrtime.bigint();
  return new Promise((resolve, reject) => {
    request(url, { agent, headers: { authorization } }, (res) => {
      res
        .resume()
        .on('end', () => resolve({ ms: Number(process.hrtime.bigint() - started) / 1e6, status: res.statusCode ?? 0 }));
    })
      .on('error', reject)
      .end();
  });
}

console.log(
  `A flood of different wrong passwords (wrk, ${floodSeconds} s, the throttle off so that every one is checked) while a verified client asks every 20 ms, server and client in one process, unpinned. "At the queue's size": as many flood connections as checks may run and wait (no 429), so the event loop has little else to do; "beyond": 256 connections, most answered 429 at once, which keeps the event loop busy answering them:\n`,
);
console.log(
  '| maxHashChecks | flood connections | verified answers | slowest ms | p99 ms | all 200 | server CPU (cores) | flood answers (401 + 429) |',
);
console.log('|---:|---|---:|---:|---:|---|---:|---:|');
for (const maxHashChecks of [1, 2]) {
  for (const connections of [maxHashChecks + 32, 256]) {
    const { server, url } = await serveInProcess(maxHashChecks);
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    await timedGet(url, basic('bench', PASSWORD), agent); // verified once
    const cpuBefore = process.cpuUsage();
    const wallBefore = process.hrtime.bigint();
    const flood = wrk(url, 'flood', floodSeconds, connections);
    const times: number[] = [];
    let all200 = true;
    const until = Date.now() + floodSeconds * 1000;
    while (Date.now() < until) {
      const { ms, status } = await timedGet(url, basic('bench', PASSWORD), agent);
      times.push(ms);
      all200 &&= status === 200;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const out = await flood;
    const cpu = process.cpuUsage(cpuBefore);
    const wallUs = Number(process.hrtime.bigint() - wallBefore) / 1e3;
    const cores = (cpu.user + cpu.system) / wallUs;
    const sorted = [...times].sort((x, y) => x - y);
    const label = connections === 256 ? 'beyond: 256' : `at the queue's size: ${connections}`;
    console.log(
      `| ${maxHashChecks} | ${label} | ${times.length} | ${(sorted.at(-1) ?? 0).toFixed(1)} | ${(sorted[Math.floor(sorted.length * 0.99)] ?? 0).toFixed(1)} | ${all200 ? 'yes' : 'NO'} | ${cores.toFixed(2)} | ${non2xx(out)} |`,
    );
    agent.destroy();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
}

// 4. No user oracle.
{
  const { server, url } = await serveInProcess(2);
  const kinds = { 'unknown user': basic('niemand', 'falsch'), 'known user, wrong password': basic('bench', 'falsch') };
  const names = Object.keys(kinds) as Array<keyof typeof kinds>;
  const times: Record<string, number[]> = Object.fromEntries(names.map((name) => [name, []]));
  for (let i = 0; i < samples; i += 1) {
    for (const name of i % 2 === 0 ? names : [...names].reverse()) {
      const { ms, status } = await timedGet(url, kinds[name], false);
      if (status !== 401) throw new Error(`${name}: ${status}`);
      times[name]?.push(ms);
    }
  }
  const [unknown, wrong] = names.map((name) => median(times[name] as number[])) as [number, number];
  console.log(`\nAnswer times over HTTP, ${samples} interleaved samples each:\n`);
  console.log('| request | median ms |');
  console.log('|---|---:|');
  for (const name of names) console.log(`| ${name} | ${median(times[name] as number[]).toFixed(1)} |`);
  console.log(`\nunknown / wrong password: ${(unknown / wrong).toFixed(2)} (goal within 0.75–1.25).`);
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
}
db.close();
rmSync(dir, { recursive: true, force: true });
