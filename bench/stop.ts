// How long the service takes to stop after SIGTERM, against the unit's TimeoutStopSec:
// (1) 64 keep-alive clients sending /status steadily, straight to it and through nginx with
// upstream keep-alive; (2) two seconds after the start, 17 wrong passwords for a user with a password hash
// queued (each its own check). Each case --rounds times; the seconds from SIGTERM to the
// exit, and what the queued checks were answered. --before DIR runs the service of another
// checkout (a build of an earlier commit) the same way, first. Needs nginx.
//
//   npm run bench:stop -- [--rounds 3] [--before DIR]

import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { loadAverage } from './load.js';
import { median } from './shapes.js';

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '3' }, before: { type: 'string' } } });
const rounds = Number(values.rounds);
if (spawnSync('nginx', ['-v']).error !== undefined) {
  console.error('nginx is needed: apt-get install nginx');
  process.exit(1);
}
const FILE = 'bench/data/bookings-20000-analyzed.sqlite';
const dir = mkdtempSync(join(tmpdir(), 'bench-stop-'));
process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
// `alt`, hashed once with hash-password (OWASP's scrypt row, as the service requires).
const HASH = '$scrypt$ln=17,r=8,p=1$FDRD+btCnb1iWl60peMllg$bg0D73v1G6BkaqbMvdUC3nzRigVWvnPbFmIM9I9wqOU';
const CREDENTIALS = join(dir, 'credentials');
writeFileSync(CREDENTIALS, `bank:${HASH}\nbuero:klartext\n`, { mode: 0o600 });
const basic = (user: string, password: string): string =>
  `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

async function freePort(): Promise<number> {
  const probe = createServer().listen(0, '127.0.0.1');
  await once(probe, 'listening');
  const { port } = probe.address() as { port: number };
  probe.close();
  return port;
}

/** The service of the checkout at `root`; resolves with its origin once it listens. */
async function startService(root: string): Promise<{ child: ChildProcess; origin: string }> {
  const args = [join(root, 'bin/booking-search-server.js'), '--db', FILE, '--port', '0'];
  const child = spawn('node', [...args, '--credentials-file', CREDENTIALS, '--max-auth-failures', '0'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let output = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  for (;;) {
    const match = /listening on (http:\/\/[\d.:]+)\//.exec(output);
    if (match !== null) return { child, origin: match[1] as string };
    if (child.exitCode !== null) throw new Error(`the service exited: ${output}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** nginx on a port of its own, with upstream keep-alive to `origin`. */
async function startNginx(origin: string): Promise<{ child: ChildProcess; origin: string }> {
  const port = await freePort();
  const config = join(dir, 'nginx.conf');
  writeFileSync(
    config,
    `daemon off;
worker_processes 1;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log;
events { worker_connections 256; }
http {
  access_log off;
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  upstream service { server ${new URL(origin).host}; keepalive 16; }
  server {
    listen 127.0.0.1:${port};
    location / { proxy_pass http://service; proxy_http_version 1.1; proxy_set_header Connection ""; }
  }
}
`,
  );
  const child = spawn('nginx', ['-p', dir, '-e', join(dir, 'error.log'), '-c', config], { stdio: 'ignore' });
  const nginx = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 100; i += 1) {
    if ((await get(nginx, basic('buero', 'klartext'), false)) === 200) return { child, origin: nginx };
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error('nginx did not answer');
}

/** GET /api/v1/status; the status, or 0 without an answer. */
function get(origin: string, authorization: string, agent: Agent | false): Promise<number> {
  return new Promise((resolve) => {
    const req = request(`${origin}/api/v1/status`, { headers: { authorization }, agent }, (res) => {
      res.resume().on('end', () => resolve(res.statusCode ?? 0));
      res.on('error', () => resolve(0));
    });
    req.on('error', () => resolve(0));
    req.end();
  });
}

/** Seconds from SIGTERM to the exit of `child`. */
async function stopSeconds(child: ChildProcess): Promise<number> {
  const exited = once(child, 'exit');
  const began = performance.now();
  child.kill('SIGTERM');
  await exited;
  return (performance.now() - began) / 1000;
}

/** 64 keep-alive clients sending steadily, through nginx or straight to the service: seconds to stop. */
async function steadyTraffic(root: string, viaNginx: boolean): Promise<number> {
  const service = await startService(root);
  const nginx = viaNginx ? await startNginx(service.origin) : undefined;
  let running = true;
  const clients = Array.from({ length: 64 }, async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    while (running) await get(nginx?.origin ?? service.origin, basic('buero', 'klartext'), agent);
    agent.destroy();
  });
  await new Promise((resolve) => setTimeout(resolve, 2_000));
  const seconds = await stopSeconds(service.child);
  running = false;
  await Promise.all(clients);
  if (nginx !== undefined) {
    nginx.child.kill('SIGQUIT');
    await once(nginx.child, 'exit');
  }
  return seconds;
}

/** 17 hash checks queued 2 s after the start: seconds to stop, and what they were answered. */
async function queuedChecks(root: string): Promise<{ seconds: number; answers: string }> {
  const service = await startService(root);
  await new Promise((resolve) => setTimeout(resolve, 2_000));
  const checks = Array.from({ length: 17 }, (_, i) => get(service.origin, basic('bank', `falsch-${i}`), false));
  await new Promise((resolve) => setTimeout(resolve, 200));
  const seconds = await stopSeconds(service.child);
  const counts = new Map<number, number>();
  for (const status of await Promise.all(checks)) counts.set(status, (counts.get(status) ?? 0) + 1);
  const answers = [...counts]
    .sort(([a], [b]) => a - b)
    .map(([status, n]) => `${n} × ${status === 0 ? 'none' : status}`)
    .join(', ');
  return { seconds, answers };
}

console.log(
  `Seconds from SIGTERM to the exit, ${rounds} round(s) each, the service on the 20k ANALYZEd book. Load average at the start: ${loadAverage()}.\n`,
);
console.log(
  '| service | 64 keep-alive clients, straight (median, max) | the same through nginx (median, max) | 17 hash checks queued 2 s after the start (median, max) | what the queued checks got (last round) |',
);
console.log('|---|---:|---:|---:|---|');
for (const [name, root] of [
  ...(values.before === undefined ? [] : [['before', values.before] as const]),
  ['this checkout', '.'] as const,
]) {
  const straight: number[] = [];
  const nginx: number[] = [];
  const queued: number[] = [];
  let answers = '';
  for (let round = 0; round < rounds; round += 1) {
    straight.push(await steadyTraffic(root, false));
    nginx.push(await steadyTraffic(root, true));
    const checks = await queuedChecks(root);
    queued.push(checks.seconds);
    answers = checks.answers;
  }
  const figure = (list: number[]): string => `${median(list).toFixed(1)} s, ${Math.max(...list).toFixed(1)} s`;
  console.log(`| ${name} | ${figure(straight)} | ${figure(nginx)} | ${figure(queued)} | ${answers} |`);
}
