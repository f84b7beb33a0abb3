// The other application: commits one booking every --interval ms (autocommit, so one
// transaction each) to a copy of the cash book while the benchmark loads the server, and
// reports its commit latencies and every SQLITE_BUSY. By default better-sqlite3's busy
// timeout (5 s), as an application left at its defaults has; --busy-timeout sets another
// (0: SQLite's own default, fail at once).
//
//   node --import tsx bench/writer.ts --db FILE [--interval 10] [--seconds 10] [--busy-timeout 5000]
// Prints one JSON line: {"commits", "busy", "p50", "p99", "max"} (milliseconds).

import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import { percentile } from './shapes.js';

const { values } = parseArgs({
  options: {
    db: { type: 'string' },
    interval: { type: 'string', default: '10' },
    seconds: { type: 'string', default: '10' },
    'busy-timeout': { type: 'string', default: '5000' },
  },
});
const db = new Database(values.db as string, { fileMustExist: true, timeout: Number(values['busy-timeout']) });
const insert = db.prepare(
  "INSERT INTO entries (date, amount_cents, subject, category_id, payment_method_id) VALUES ('2026-10-31', ?, 'Nachtrag', 1, 1)",
);
const latencies: number[] = [];
let busy = 0;
const timer = setInterval(() => {
  const started = process.hrtime.bigint();
  try {
    insert.run(435 + (latencies.length % 7));
    latencies.push(Number(process.hrtime.bigint() - started) / 1e6);
  } catch (error: unknown) {
    if ((error as { code?: unknown }).code?.toString().startsWith('SQLITE_BUSY')) busy += 1;
    else throw error;
  }
}, Number(values.interval));
setTimeout(() => {
  clearInterval(timer);
  db.close();
  const ms = (p: number): number | null =>
    latencies.length === 0 ? null : Number(percentile(latencies, p).toFixed(2));
  process.stdout.write(
    `${JSON.stringify({ commits: latencies.length, busy, p50: ms(0.5), p99: ms(0.99), max: ms(1) })}\n`,
  );
}, Number(values.seconds) * 1000);
