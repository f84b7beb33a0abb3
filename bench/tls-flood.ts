// Stalled TLS handshakes against the CLI: bursts of connections that send nothing or half
// a ClientHello, on 127.0.0.1. Prints the server's open descriptors and RSS before, at the
// peak of each burst and after it, as markdown.
//
//   npm run bench:tls-flood -- [--bursts 4] [--connections 2000] [--headers-timeout 10]

import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    bursts: { type: 'string', default: '4' },
    connections: { type: 'string', default: '2000' },
    'headers-timeout': { type: 'string', default: '10' },
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
    `node ${process.version}; ${bursts} bursts of ${connections} stalled connections (half send nothing, half half a ClientHello), --headers-timeout ${timeoutS}\n\n`,
  );
  process.stdout.write('| moment | open descriptors | RSS MB | closed by the server |\n|---|---:|---:|---:|\n');
  process.stdout.write(`| before | ${descriptors()} | ${rssMb().toFixed(0)} | |\n`);
  for (let burst = 1; burst <= bursts; burst += 1) {
    const sockets: Socket[] = [];
    let closed = 0;
    for (let i = 0; i < connections; i += 1) {
      const socket = connect(port, '127.0.0.1');
      socket.on('error', () => undefined);
      socket.on('close', () => (closed += 1));
      if (i % 2 === 1) socket.write(Buffer.from([0x16, 0x03, 0x01, 0x02, 0x00, 0x01]));
      sockets.push(socket);
    }
    await sleep(1_000);
    process.stdout.write(`| burst ${burst}, peak | ${descriptors()} | ${rssMb().toFixed(0)} | ${closed} |\n`);
    const deadline = Date.now() + (timeoutS + 10) * 1000;
    while (closed < connections && Date.now() < deadline) await sleep(200);
    await sleep(500);
    process.stdout.write(`| burst ${burst}, after | ${descriptors()} | ${rssMb().toFixed(0)} | ${closed} |\n`);
    for (const socket of sockets) socket.destroy();
  }
} finally {
  server.kill('SIGTERM');
  rmSync(dir, { recursive: true, force: true });
}
