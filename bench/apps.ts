// The applications' own schemas over HTTP: for each --app, a 20,000-booking file in that
// application's schema (bench/app-data.ts, generated once into bench/data/), the real CLI
// serving it with --app, and the query shapes of a reconciliation run sent one after
// another over a keep-alive connection. Prints markdown: p50 and p95 per shape, and each
// p50 as a ratio to the own schema's in the same run.
//
//   npm run bench:apps -- [--apps own,actual,mmex,gnucash,kmymoney] [--queries 200] [--rows 20000]

import { chmodSync, existsSync, mkdirSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { parseArgs } from 'node:util';
import type { SearchQuery } from '../lib/query.js';
import { type BenchBooking, bookingStream, GENERATORS } from './app-data.js';
import { serviceEnv } from './load.js';
import { startServer, stopServer } from './process.js';
import { median, percentile, SHAPES, type Shape, seededRandom, shapeQuery, toQueryString } from './shapes.js';

const { values } = parseArgs({
  options: {
    apps: { type: 'string', default: Object.keys(GENERATORS).join(',') },
    queries: { type: 'string', default: '200' },
    rows: { type: 'string', default: '20000' },
  },
});
const apps = values.apps.split(',');
const perShape = Number(values.queries);
const rows = Number(values.rows);
const bookings = bookingStream(rows);
const AUTH = `Basic ${Buffer.from(`${serviceEnv['BOOKING_SEARCH_USER']}:${serviceEnv['BOOKING_SEARCH_PASSWORD']}`).toString('base64')}`;

/** bench/shapes.ts's shapes, around bookings of the stream that every application's file holds. */
function queriesFor(shape: Shape, count: number, seed: number): SearchQuery[] {
  const random = seededRandom(seed);
  const first = (bookings[0] as BenchBooking).date;
  const last = (bookings[bookings.length - 1] as BenchBooking).date;
  return Array.from({ length: count }, () => {
    const { date, cents } = bookings[Math.floor(random() * bookings.length)] as BenchBooking;
    return shapeQuery(shape, date, cents, first, last);
  });
}

const agent = new Agent({ keepAlive: true, maxSockets: 1 });
function timed(origin: string, path: string): Promise<number> {
  const started = process.hrtime.bigint();
  return new Promise((resolve, reject) => {
    request(`${origin}${path}`, { agent, headers: { authorization: AUTH } }, (res) => {
      res.resume();
      res.on('end', () => {
        if (res.statusCode !== 200) reject(new Error(`${path}: ${res.statusCode}`));
        else resolve(Number(process.hrtime.bigint() - started) / 1e6);
      });
    })
      .on('error', reject)
      .end();
  });
}

const fmt = (ms: number): string => (ms >= 10 ? ms.toFixed(0) : ms.toFixed(2));
mkdirSync('bench/data', { recursive: true });
chmodSync('bench/data', 0o755);
const results = new Map<string, Map<Shape, { p50: number; p95: number }>>();
for (const app of apps) {
  const generate = GENERATORS[app];
  if (generate === undefined) throw new Error(`no generator for --app ${app} in bench/app-data.ts`);
  const file = `bench/data/app-${app}-${rows}.sqlite`;
  if (!existsSync(file)) {
    const started = Date.now();
    await generate(file, bookings);
    process.stderr.write(`generated ${file} in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
  }
  // The service refuses a file in a directory its user could write (as root: by the mode
  // bits); bench/setup.ts leaves bench/data so too.
  chmodSync('bench/data', 0o555);
  const server = await startServer(
    ['node', 'bin/booking-search-server.js', '--db', file, '--app', app, '--port', '0', '--max-auth-failures', '0'],
    serviceEnv,
  );
  const byShape = new Map<Shape, { p50: number; p95: number }>();
  try {
    for (const q of queriesFor('month exact', 20, 99))
      await timed(server.origin, `/api/v1/buchungen?${toQueryString(q)}`);
    for (const shape of SHAPES) {
      const count = shape === '10 years everything' ? Math.max(10, perShape / 10) : perShape;
      const times: number[] = [];
      for (const q of queriesFor(shape, count, 7))
        times.push(await timed(server.origin, `/api/v1/buchungen?${toQueryString(q)}`));
      byShape.set(shape, { p50: median(times), p95: percentile(times, 0.95) });
    }
  } finally {
    await stopServer(server);
  }
  results.set(app, byShape);
}
agent.destroy();

const own = results.get('own');
console.log(
  `Over HTTP, one request at a time on a keep-alive connection, ${rows} bookings per file, ${perShape} searches per shape (everything: ${Math.max(10, perShape / 10)}). p50 / p95 in ms; in brackets the p50 as a multiple of the own schema's.\n`,
);
console.log(`| --app | ${SHAPES.join(' | ')} |`);
console.log(`|---|${SHAPES.map(() => '---:').join('|')}|`);
for (const [app, byShape] of results) {
  const cells = SHAPES.map((shape) => {
    const { p50, p95 } = byShape.get(shape) ?? { p50: Number.NaN, p95: Number.NaN };
    const base = own?.get(shape)?.p50;
    return `${fmt(p50)} / ${fmt(p95)}${base === undefined || app === 'own' ? '' : ` (${(p50 / base).toFixed(1)}×)`}`;
  });
  console.log(`| ${app} | ${cells.join(' | ')} |`);
}
