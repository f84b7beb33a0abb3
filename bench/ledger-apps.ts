// GnuCash and KMyMoney files of 20,000 bookings (fixtures/ledger-books.ts) beside the own schema
// of 20,000 (bench/generate.ts), searched over HTTP: the typical search (one amount in a
// month) and a band of ±5 € over a month, one request at a time, p50 and p95 per shape.
// KMyMoney runs twice: as KMyMoney leaves its file, and with the date index an admin may
// add (docs/applications.md). Configurations take turns request by request, so a busy
// machine slows them alike; the ratio to the own schema is the figure to compare.
//
//   npm run bench:ledger-apps -- [--requests 300] [--bookings 20000]

import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, createServer, get } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import { mulberry32 } from '../bin/books/demo.js';
import { ledger, writeGnuCash, writeKMyMoney } from '../fixtures/ledger-books.js';
import { KMYMONEY_DATE_INDEX } from '../lib/apps/kmymoney.js';
import { createHandler } from '../lib/index.js';
import type { HandlerOptions } from '../lib/types.js';

const { values } = parseArgs({
  options: { requests: { type: 'string', default: '300' }, bookings: { type: 'string', default: '20000' } },
});
const requests = Number(values.requests);
const bookings = Number(values.bookings);

const dir = mkdtempSync(join(tmpdir(), 'ledger-apps-'));
process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
const book = ledger(bookings);
const files = {
  own: join(dir, 'own.sqlite'),
  gnucash: join(dir, 'book.gnucash'),
  kmymoney: join(dir, 'kmymoney.sqlite'),
  kmymoneyIndexed: join(dir, 'kmymoney-indexed.sqlite'),
};
execFileSync(process.execPath, [
  '--import',
  'tsx',
  'bench/generate.ts',
  '--rows',
  String(bookings),
  '--out',
  files.own,
]);
writeGnuCash(files.gnucash, book);
writeKMyMoney(files.kmymoney, book);
writeKMyMoney(files.kmymoneyIndexed, book);
const writer = new Database(files.kmymoneyIndexed);
writer.exec(KMYMONEY_DATE_INDEX);
writer.close();

const CREDENTIALS = { username: 'bench', password: 'bench' };
const AUTH = `Basic ${Buffer.from('bench:bench').toString('base64')}`;
const configs: Array<{ name: string; file: string; options: HandlerOptions }> = [
  { name: 'own schema', file: files.own, options: {} },
  { name: 'GnuCash', file: files.gnucash, options: { app: 'gnucash' } },
  { name: 'KMyMoney', file: files.kmymoney, options: { app: 'kmymoney' } },
  { name: 'KMyMoney + kmmSplits_account_date', file: files.kmymoneyIndexed, options: { app: 'kmymoney' } },
];
const agent = new Agent({ keepAlive: true, maxSockets: 1 });
const servers = await Promise.all(
  configs.map(async ({ file, options }) => {
    const db = new Database(file, { readonly: true, fileMustExist: true });
    const server = createServer(createHandler(db, CREDENTIALS, options));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return { db, server, port: (server.address() as AddressInfo).port };
  }),
);

function fetchOnce(port: number, path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    get({ host: '127.0.0.1', port, path, agent, headers: { authorization: AUTH } }, (res) => {
      res.resume();
      res.on('end', () =>
        res.statusCode === 200
          ? resolve(Number(process.hrtime.bigint() - started) / 1e6)
          : reject(new Error(`${path}: ${res.statusCode}`)),
      );
    }).on('error', reject);
  });
}

// A month in the ten years of bookings and a typical cash amount, the same for every configuration.
const random = mulberry32(7);
const AMOUNTS = ['-4.35', '-12.5', '-2.5', '-19.99', '-5', '-89.9'];
const shapes = {
  'month exact': (amount: string) => `betrag=${amount}`,
  'month ±5 €': (amount: string) => `betrag=${amount}&toleranz=5`,
};
const times: Record<string, Record<string, number[]>> = Object.fromEntries(
  Object.keys(shapes).map((shape) => [shape, Object.fromEntries(configs.map(({ name }) => [name, [] as number[]]))]),
);
for (let i = 0; i < requests; i++) {
  const year = 2017 + Math.floor(random() * 9);
  const month = String(1 + Math.floor(random() * 12)).padStart(2, '0');
  const amount = AMOUNTS[Math.floor(random() * AMOUNTS.length)] as string;
  const window = `von=${year}-${month}-01&bis=${year}-${month}-28`;
  for (const [shape, query] of Object.entries(shapes)) {
    for (const [c, config] of configs.entries()) {
      const server = servers[c] as (typeof servers)[number];
      const ms = await fetchOnce(server.port, `/api/v1/buchungen?${window}&${query(amount)}`);
      times[shape]?.[config.name]?.push(ms);
    }
  }
}
for (const { db, server } of servers) {
  server.close();
  db.close();
}
agent.destroy();

const quantile = (list: number[], q: number): number => {
  const sorted = [...list].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] as number;
};
console.log(`${bookings} bookings, ${requests} requests per shape and configuration, one at a time over HTTP\n`);
console.log('| shape | configuration | p50 ms | p95 ms | p50 ÷ own schema |');
console.log('|---|---|---:|---:|---:|');
for (const [shape, byConfig] of Object.entries(times)) {
  const own = quantile(byConfig['own schema'] ?? [], 0.5);
  for (const [name, list] of Object.entries(byConfig)) {
    const p50 = quantile(list, 0.5);
    console.log(
      `| ${shape} | ${name} | ${p50.toFixed(2)} | ${quantile(list, 0.95).toFixed(2)} | ${(p50 / own).toFixed(1)} |`,
    );
  }
}
