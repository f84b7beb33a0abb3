// A listener under clients that pipeline a request without end and read nothing of the
// answers: the service's resident set before, during and after, and how long the API's
// /status takes meanwhile. `npm run bench:admin -- --flood SECONDS` floods the admin
// listener's GET /metrics, as a hostile client on its network could, without credentials.

import { request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { rssMb } from './load.js';
import { median } from './shapes.js';

export interface Flooded {
  /** The service's API origin, its admin listener's origin and its process. */
  origin: string;
  admin: string;
  pid: number;
}

export interface FloodOptions {
  seconds: number;
  connections: number;
  path: string;
  /** An Authorization header for the API's /status. */
  authorization: string;
}

/** Milliseconds /status takes to answer, or `undefined` when it did not within 5 s. */
function statusMs(origin: string, authorization: string): Promise<number | undefined> {
  const began = performance.now();
  return new Promise((resolve) => {
    const req = request(`${origin}/api/v1/status`, { headers: { authorization }, timeout: 5_000 }, (res) => {
      res.resume().on('end', () => resolve(performance.now() - began));
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(undefined));
    req.end();
  });
}

/** Writes `path` pipelined on `connections` connections until `deadline`, reading nothing. */
function flood(admin: string, path: string, connections: number, deadline: number): Socket[] {
  const { hostname, port } = new URL(admin);
  const one = `GET ${path} HTTP/1.1\r\nHost: ${hostname}\r\n\r\n`;
  const burst = one.repeat(Math.ceil((64 * 1024) / one.length));
  return Array.from({ length: connections }, () => {
    const socket = connect(Number(port), hostname);
    socket.pause();
    socket.on('error', () => undefined);
    const write = (): void => {
      while (!socket.destroyed && Date.now() < deadline) {
        if (!socket.write(burst)) return void socket.once('drain', write);
      }
    };
    socket.once('connect', write);
    return socket;
  });
}

/** Floods `service` for `seconds`, sampling every second; prints one markdown row. */
export async function measureFlood(service: Flooded, options: FloodOptions): Promise<string> {
  const before = rssMb(service.pid);
  const quiet = await statusMs(service.origin, options.authorization);
  const deadline = Date.now() + options.seconds * 1_000;
  const sockets = flood(service.admin, options.path, options.connections, deadline);
  const latencies: Array<number | undefined> = [];
  let peak = before;
  while (Date.now() < deadline) {
    const [latency] = await Promise.all([
      statusMs(service.origin, options.authorization),
      new Promise((resolve) => setTimeout(resolve, 1_000)),
    ]);
    latencies.push(latency);
    peak = Math.max(peak, rssMb(service.pid));
  }
  const atEnd = rssMb(service.pid);
  const open = sockets.filter((socket) => !socket.destroyed).length;
  for (const socket of sockets) socket.destroy();
  await new Promise((resolve) => setTimeout(resolve, 2_000));
  const after = rssMb(service.pid);
  const answered = latencies.filter((ms): ms is number => ms !== undefined);
  const slowest = answered.length === 0 ? 0 : Math.max(...answered);
  return `| ${options.connections} × GET ${options.path}, ${options.seconds} s | ${before.toFixed(0)} MB | ${peak.toFixed(0)} MB | ${atEnd.toFixed(0)} MB | ${after.toFixed(0)} MB | ${quiet?.toFixed(1) ?? '-'} ms | ${answered.length === 0 ? '-' : median(answered).toFixed(1)} / ${slowest.toFixed(1)} ms | ${latencies.length - answered.length} of ${latencies.length} | ${open} |`;
}

export const FLOOD_HEADER = [
  '| flood | RSS before | peak | at the end | 2 s after the clients left | /status before | /status during (median / slowest) | /status not answered within 5 s | flooding connections still open |',
  '|---|---:|---:|---:|---:|---:|---:|---:|---:|',
].join('\n');
