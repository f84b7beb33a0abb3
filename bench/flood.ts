// A listener under clients that pipeline a request without end and read nothing of the
// answers: the service's resident set before, during and after, and how long the API's
// /status takes meanwhile. `npm run bench:admin -- --flood SECONDS` floods the admin
// listener's GET /metrics, as a hostile client on its network could, without credentials.
//
// A listener lets one TCP address hold at most half of its connections (bin/listen/server.ts),
// so a flood from 127.0.0.1 alone would meet that share, not the protections it means to
// measure: over TCP its connections come from several loopback addresses (`loopbackAddress`).

import { request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { rssMb } from './load.js';
import { median } from './shapes.js';

/** Connections a flood opens from one loopback address: below the smallest share (the admin listener's 32). */
export const PER_ADDRESS = 16;

/**
 * The source address of a flood's `i`-th connection: 127.0.0.2, 127.0.0.3, … a new one
 * every `perAddress` connections. Linux answers all of 127/8 on the loopback interface.
 */
export function loopbackAddress(i: number, perAddress = PER_ADDRESS): string {
  const n = 2 + Math.floor(i / perAddress);
  return `127.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`;
}

/** How `connections` flooding connections reach the listener, for a bench's output. */
export function floodSources(connections: number, over: 'TCP' | 'socket'): string {
  if (over === 'socket') return 'over the Unix socket, whose peer no share bounds,';
  const addresses = Math.ceil(connections / PER_ADDRESS);
  return `from ${addresses} loopback address${addresses === 1 ? '' : 'es'}, at most ${PER_ADDRESS} from each, below one address's share,`;
}

export interface Flooded {
  /** The service's API origin, its admin listener's origin (`unix:PATH:` for a socket) and its process. */
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
  const socketPath = /^unix:(.+):$/.exec(admin)?.[1];
  const { hostname, port } = socketPath === undefined ? new URL(admin) : { hostname: 'localhost', port: '' };
  const one = `GET ${path} HTTP/1.1\r\nHost: ${hostname}\r\n\r\n`;
  const burst = one.repeat(Math.ceil((64 * 1024) / one.length));
  return Array.from({ length: connections }, (_, i) => {
    const socket =
      socketPath === undefined
        ? connect({ port: Number(port), host: hostname, localAddress: loopbackAddress(i) })
        : connect(socketPath);
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
