// Stalled TLS handshakes against the CLI: bursts of connections that send nothing or half
// a ClientHello, from several loopback addresses (bench/flood.ts: from one address alone
// they would meet its share of the connections, not the handshake's bound). Prints the
// server's open descriptors and RSS before, at the peak of each burst (sampled every
// 200 ms) and once the server is back to its descriptors of before (or the timeout and
// 10 s more have passed), as markdown.
//
//   npm run bench:tls-flood -- [--bursts 4] [--connections 2000] [--headers-timeout 10] [--hold]

import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { floodSources, loopbackAddress } from './flood.js';

const { values } = parseArgs({
  options: {
    bursts: { type: 'string', default: '4' },
    connections: { type: 'string', default: '2000' },
    'headers-timeout': { type: 'string', default: '10' },
    // Keep every burst's sockets open until the end, as an attacker would, instead of
    // closing them after each burst.
    hold: { type: 'boolean', default: false },
  },
});
const bursts = Number(values.bursts);
const connections = Number(values.connections);
const timeoutS = Number(values['headers-timeout']);

const dir = mkdtempSync(join(tmpdir(), 'bench-tls-flood-'));
const cert = join(dir, 'cert.pem');
const key = join(dir, 'key.pem');
execFileSync(
  'openssl',
  ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=127.0.0.1'].concat([
    '-keyout',
    key,
    '-out',
    cert,
  ]),
  { stdio: 'ignore' },
);

const bin = new URL('../bin/booking-search-server.js', import.meta.url).pathname;
const server = spawn(
  process.execPath,
  [bin, '--demo', '--port', '0', '--tls-cert', cert, '--tls-key', key, '--headers-timeout', String(timeoutS)],
  { stdio: ['ignore', 'pipe', 'inherit'] },
);
const pid = server.pid as number;
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const descriptors = (): number => readdirSync(`/proc/${pid}/fd`).length;
const rssMb = (): number => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]) / 1024;

try {
  let out = '';
  server.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  for (let waited = 0; !/listening on https:\/\/127\.0\.0\.1:(\d+)\//.test(out); waited += 50) {
    if (waited > 10_000) throw new Error(`the CLI did not start: ${out}`);
    await sleep(50);
  }
  const port = Number(/listening on https:\/\/127\.0\.0\.1:(\d+)\//.exec(out)?.[1]);
  await sleep(500);
  process.stdout.write(
    `node ${process.version}; ${bursts} bursts of ${connections} stalled connections ${floodSources(connections, 'TCP')} half sending nothing, half half a ClientHello; --headers-timeout ${timeoutS}${values.hold ? ', every socket held open until the end' : ', each burst closed by the client after it'}\n\n`,
  );
  process.stdout.write(
    '| moment | open descriptors (server) | RSS MB (server) | stalled connections closed by the server |\n|---|---:|---:|---:|\n',
  );
  const baseline = descriptors();
  const held: Socket[] = [];
  process.stdout.write(`| before | ${baseline} | ${rssMb().toFixed(0)} | |\n`);
  for (let burst = 1; burst <= bursts; burst += 1) {
    const burstStarted = Date.now();
    const sockets: Socket[] = [];
    let closed = 0;
    for (let i = 0; i < connections; i += 1) {
      const socket = connect({ port, host: '127.0.0.1', localAddress: loopbackAddress(i) });
      socket.on('error', () => undefined);
      socket.on('close', () => (closed += 1));
      if (i % 2 === 1) socket.write(Buffer.from([0x16, 0x03, 0x01, 0x02, 0x00, 0x01]));
      sockets.push(socket);
    }
    let peakFds = 0;
    let peakRss = 0;
    const sample = (): number => {
      const fds = descriptors();
      peakFds = Math.max(peakFds, fds);
      peakRss = Math.max(peakRss, rssMb());
      return fds;
    };
    for (let waited = 0; waited < 2_000; waited += 200) {
      sample();
      await sleep(200);
    }
    // Until the server holds no more descriptors than before, or the timeout and 10 s more.
    const deadline = Date.now() + (timeoutS + 10) * 1000;
    while (sample() > baseline + 2 && Date.now() < deadline) await sleep(200);
    await sleep(500);
    process.stdout.write(`| burst ${burst}, peak | ${peakFds} | ${peakRss.toFixed(0)} | |\n`);
    const took = ((Date.now() - burstStarted) / 1000).toFixed(1);
    process.stdout.write(
      `| burst ${burst}, after ${took} s | ${descriptors()} | ${rssMb().toFixed(0)} | ${closed} |\n`,
    );
    if (values.hold) held.push(...sockets);
    else for (const socket of sockets) socket.destroy();
  }
  await sleep(10_000);
  process.stdout.write(
    `| 10 s after the last burst${values.hold ? ' (sockets still held)' : ''} | ${descriptors()} | ${rssMb().toFixed(0)} | |\n`,
  );
  for (const socket of held) socket.destroy();
} finally {
  server.kill('SIGTERM');
  rmSync(dir, { recursive: true, force: true });
}
