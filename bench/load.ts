// Loading a server with wrk and reading what it cost: requests per second, latency, and the
// server's own CPU time per request (what the ratios of BENCHMARKS.md are made of).

import { spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { onCore, type Running } from './process.js';

export const USER = 'bench';
export const PASSWORD = 'bench';
/** The environment a benchmarked service reads its one user from. */
export const serviceEnv = { ...process.env, BOOKING_SEARCH_USER: USER, BOOKING_SEARCH_PASSWORD: PASSWORD };

export function requireWrk(): void {
  if (spawnSync('wrk', ['--version']).error) {
    console.error('wrk is needed: apt-get install wrk');
    process.exit(1);
  }
}

export interface Load {
  rps: number;
  /** Requests answered in the measured run. */
  requests: number;
  /** CPU time of the server (user + system) per answered request, in µs. */
  cpu: number;
  p50: number;
  p99: number;
  errors: number;
  rss: number;
}

/** RSS of a process and its children, in MB (workers are children of the primary). */
export function rssMb(pid: number): number {
  const pids = [
    pid,
    ...readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number),
  ];
  let kb = 0;
  for (const p of pids) {
    // taskset execs node in place, so the pid is node's.
    const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${p}/status`, 'utf8'));
    kb += Number(match?.[1] ?? 0);
  }
  return kb / 1024;
}

function toMs(text: string): number {
  const match = /^([\d.]+)(us|ms|s)$/.exec(text);
  if (!match) return Number.NaN;
  const value = Number(match[1]);
  return match[2] === 'us' ? value / 1000 : match[2] === 's' ? value * 1000 : value;
}

/** wrk with one thread and `connections` connections, each request the next line of `paths`. */
export function wrk(
  origin: string,
  paths: string,
  seconds: number,
  connections: number,
  core: string | undefined,
): Promise<string> {
  const args = ['-t1', `-c${connections}`, `-d${seconds}s`, '--latency', '-s', 'bench/rotate.lua', origin];
  const command = core === undefined ? ['wrk', ...args] : onCore(core, ['wrk', ...args]);
  const wrkEnv = {
    ...process.env,
    BENCH_PATHS: paths,
    BENCH_AUTH: `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}`,
  };
  return new Promise((resolve) => {
    const child = spawn(command[0] as string, command.slice(1), { env: wrkEnv, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
    child.on('exit', () => resolve(out));
  });
}

/**
 * CPU seconds (user + system) a process has used so far. On a shared machine the CPU time
 * per request moves far less than requests per second: another program's load slows the
 * clock on the wall, not the work per request.
 */
export function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
}
const TICKS_PER_SECOND = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;

/** Requests wrk answered, from its report. */
export const requestsIn = (report: string): number => Number(/(\d+) requests in/.exec(report)?.[1]);

/** One second of warm-up (unless `warmUp` is false), then `seconds` measured. */
export async function load(
  server: Running,
  paths: string,
  options: { seconds: number; connections: number; core: string | undefined; warmUp?: boolean },
): Promise<Load> {
  const { seconds, connections, core } = options;
  if (options.warmUp !== false) await wrk(server.origin, paths, 1, connections, core);
  const pid = server.child.pid as number;
  const cpuBefore = cpuSeconds(pid);
  const out = await wrk(server.origin, paths, seconds, connections, core);
  const cpu = cpuSeconds(pid) - cpuBefore;
  const requests = requestsIn(out);
  const errors = /Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? '0';
  const socketErrors = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
  return {
    rps: Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1]),
    requests,
    cpu: (cpu * 1e6) / requests,
    p50: toMs(/^\s+50%\s+(\S+)$/m.exec(out)?.[1] ?? ''),
    p99: toMs(/^\s+99%\s+(\S+)$/m.exec(out)?.[1] ?? ''),
    errors: Number(errors) + (socketErrors ? socketErrors.slice(1).reduce((sum, n) => sum + Number(n), 0) : 0),
    rss: rssMb(pid),
  };
}

/** The load average now, as the tables' headers quote it. */
export function loadAverage(): string {
  return readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
}
