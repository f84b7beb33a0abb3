// Where the status endpoint's cost goes, one layer at a time, in one run: the ceiling
// (bare node:http, a constant body); the ceiling made slower by a busy wait of a few µs a
// request, which shows what any extra work costs on this machine beyond the work itself;
// the ceiling with its answers ended together at the end of each turn of the event loop,
// as the service ends its own; the library alone (createHandler on node:http); and the CLI
// as admins run it, with its access log on a pipe. Every configuration runs once per
// round, in a rotating order, with the server on core 0 and wrk on core 1; ratios are to
// the ceiling of the same round.
//
//   npm run bench:ladder -- [--rounds 7] [--seconds 3] [--before DIR]

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { type Load, load, loadAverage, requireWrk, serviceEnv } from './load.js';
import { pinned, serviceCommand, startServer, stopServer } from './process.js';
import { median } from './shapes.js';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '7' },
    seconds: { type: 'string', default: '3' },
    connections: { type: 'string', default: '16' },
    before: { type: 'string' },
  },
});
const rounds = Number(values.rounds);
const options = { seconds: Number(values.seconds), connections: Number(values.connections), core: '1' };
requireWrk();

const FILE = 'bench/data/bookings-20000-analyzed.sqlite';
const dir = mkdtempSync(join(tmpdir(), 'bench-ladder-'));
process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
const STATUS = join(dir, 'status.txt');
writeFileSync(STATUS, '/api/v1/status\n');

const tsx = ['node', '--import', 'tsx'];
const cli = (root: string): string[] => serviceCommand(FILE, root);
const CONFIGS: Array<{ name: string; command: string[] }> = [
  { name: 'ceiling', command: [...tsx, 'bench/servers/ceiling.ts'] },
  { name: 'ceiling, answers ended together', command: [...tsx, 'bench/servers/ceiling.ts', '--together'] },
  ...[5, 10, 20].map((us) => ({
    name: `ceiling + ${us} µs busy`,
    command: [...tsx, 'bench/servers/ceiling.ts', '--busy-us', String(us)],
  })),
  { name: 'createHandler on node:http', command: [...tsx, 'bench/servers/handler.ts', '--db', FILE] },
  { name: 'the CLI, access log on a pipe', command: cli('.') },
  ...(values.before === undefined ? [] : [{ name: 'the CLI, before', command: cli(values.before) }]),
];

console.log(
  `GET /api/v1/status, ${options.connections} connections, ${rounds} rounds × ${options.seconds} s, ${pinned ? 'server on core 0, wrk on core 1' : 'unpinned (no taskset)'}. Load average at the start: ${loadAverage()}.\n`,
);
const results = new Map<string, Load[]>(CONFIGS.map(({ name }) => [name, []]));
const cpuRatios = new Map<string, number[]>(CONFIGS.map(({ name }) => [name, []]));
for (let round = 0; round < rounds; round += 1) {
  const order = CONFIGS.map((_, i) => CONFIGS[(i + round) % CONFIGS.length] as (typeof CONFIGS)[number]);
  const roundResults = new Map<string, Load>();
  for (const config of order) {
    const server = await startServer(config.command, serviceEnv, '0');
    roundResults.set(config.name, await load(server, STATUS, options));
    await stopServer(server);
  }
  const ceiling = roundResults.get('ceiling') as Load;
  for (const [name, result] of roundResults) {
    results.get(name)?.push(result);
    cpuRatios.get(name)?.push(ceiling.cpu / result.cpu);
  }
  process.stderr.write(`round ${round + 1} of ${rounds}\n`);
}

console.log('| server | CPU µs / request | × ceiling (CPU) | req/s | p50 ms | p99 ms | non-2xx + socket errors |');
console.log('|---|---:|---:|---:|---:|---:|---:|');
for (const { name } of CONFIGS) {
  const runs = results.get(name) as Load[];
  const m = (pick: (l: Load) => number, digits: number): string => median(runs.map(pick)).toFixed(digits);
  console.log(
    `| ${name} | ${m((l) => l.cpu, 1)} | ${median(cpuRatios.get(name) as number[]).toFixed(3)} | ${m((l) => l.rps, 0)} | ${m((l) => l.p50, 2)} | ${m((l) => l.p99, 2)} | ${runs.reduce((s, l) => s + l.errors, 0)} |`,
  );
}
console.log('\n(medians over the rounds; × ceiling is the median of the ratios within each round)');
