// Clients that repeat one search: --connections keep-alive connections, each sending the
// next request as soon as the last is answered, for --seconds. For the load wrk cannot
// give: searches that take tens of milliseconds each, where a round of 50 connections
// outlasts wrk's timeout.
//
//   node --import tsx bench/clients.ts --origin http://127.0.0.1:PORT --path /api/v1/… [--connections 50] [--seconds 10]
// Prints one JSON line: {"answered", "failed", "p50", "p99"} (milliseconds).

import { Agent, request } from 'node:http';
import { parseArgs } from 'node:util';
import { PASSWORD, USER } from './load.js';
import { percentile } from './shapes.js';

const { values } = parseArgs({
  options: {
    origin: { type: 'string' },
    path: { type: 'string' },
    connections: { type: 'string', default: '50' },
    seconds: { type: 'string', default: '10' },
  },
});
const connections = Number(values.connections);
const url = `${values.origin as string}${values.path as string}`;
const authorization = `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}`;
const agent = new Agent({ keepAlive: true, maxSockets: connections });
const deadline = Date.now() + Number(values.seconds) * 1000;
const latencies: number[] = [];
let failed = 0;

function once(): Promise<void> {
  const started = performance.now();
  return new Promise((resolve) => {
    const req = request(url, { agent, headers: { authorization } }, (res) => {
      res.resume();
      res.on('end', () => {
        if (res.statusCode === 200) latencies.push(performance.now() - started);
        else failed += 1;
        resolve();
      });
    });
    req.setTimeout(60_000, () => req.destroy(new Error('timeout')));
    req.on('error', () => {
      failed += 1;
      resolve();
    });
    req.end();
  });
}

async function client(): Promise<void> {
  while (Date.now() < deadline) await once();
}

await Promise.all(Array.from({ length: connections }, client));
agent.destroy();
const ms = (p: number): number | null => (latencies.length === 0 ? null : Number(percentile(latencies, p).toFixed(1)));
process.stdout.write(`${JSON.stringify({ answered: latencies.length, failed, p50: ms(0.5), p99: ms(0.99) })}\n`);
