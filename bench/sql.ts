// The query shapes measured in-process, at the SQLite level: count + page, the plain query
// beside the service's search, alternating, several rounds. Prints markdown.
//
//   npm run bench:sql -- [--db bench/data/bookings-1000000.sqlite] [--rounds 5] [--queries 200]

import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import type { SearchQuery } from '../lib/query.js';
import {
  type BookingRow,
  type Bounds,
  chooseCount,
  choosePage,
  createBookingSearch,
  estimateSource,
  PLAIN,
  planFor,
  SQL,
  toBounds,
} from '../lib/search/index.js';
import { median, percentile, queriesFor, SHAPES, type Shape } from './shapes.js';

const { values } = parseArgs({
  options: {
    db: { type: 'string', default: 'bench/data/bookings-1000000.sqlite' },
    rounds: { type: 'string', default: '5' },
    queries: { type: 'string', default: '200' },
  },
});
const db = new Database(values.db, { readonly: true, fileMustExist: true });
const rounds = Number(values.rounds);
const perRound = Number(values.queries);

// The straightforward design: the one plain query (PLAIN), the planner left to itself.
const plainCount = db.prepare<[Bounds], number>(PLAIN.count).pluck();
const plainPage = db.prepare<[Bounds & { limit: number }], BookingRow>(PLAIN.page).raw();
const plain = db.transaction((q: SearchQuery) => {
  const bounds = toBounds(q);
  const count = plainCount.get(bounds) ?? 0;
  return { count, rows: count === 0 || q.limit === 0 ? [] : plainPage.all({ ...bounds, limit: q.limit }) };
});
const service = createBookingSearch(db);
const strategies = { plain, service } as const;

function timeEach(search: (q: SearchQuery) => unknown, queries: readonly SearchQuery[]): number[] {
  return queries.map((q) => {
    const started = process.hrtime.bigint();
    search(q);
    return Number(process.hrtime.bigint() - started) / 1000;
  });
}

const fmt = (us: number): string => (us >= 1000 ? `${(us / 1000).toFixed(1)} ms` : `${us.toFixed(0)} µs`);
const rows = db.prepare<[], number>('SELECT count(*) FROM entries').pluck().get();
console.log(
  `In-process search, ${rows} bookings, ${rounds} rounds × ${perRound} queries per shape, strategies alternating.\n`,
);
console.log('| shape | plain median | plain p99 | service median | service p99 | plain / service |');
console.log('|---|---:|---:|---:|---:|---:|');
const plans: string[] = [];
for (const shape of SHAPES) {
  // "Everything" scans the whole window: fewer queries keep the run short.
  const count = shape === '10 years everything' ? Math.max(5, perRound / 20) : perRound;
  const samples: Record<keyof typeof strategies, number[]> = { plain: [], service: [] };
  const medians: Record<keyof typeof strategies, number[]> = { plain: [], service: [] };
  for (let round = 0; round < rounds; round += 1) {
    const queries = queriesFor(db, shape, count, 1 + round);
    for (const name of round % 2 === 0 ? (['plain', 'service'] as const) : (['service', 'plain'] as const)) {
      const times = timeEach(strategies[name], queries);
      samples[name].push(...times);
      medians[name].push(median(times));
    }
  }
  const p = median(medians.plain);
  const s = median(medians.service);
  console.log(
    `| ${shape} | ${fmt(p)} | ${fmt(percentile(samples.plain, 0.99))} | ${fmt(s)} | ${fmt(percentile(samples.service, 0.99))} | ${(p / s).toFixed(1)} |`,
  );
  plans.push(explain(shape, queriesFor(db, shape, 1, 99)[0] as SearchQuery));
}
console.log(
  `\nMedians are the median of the rounds' medians. EXPLAIN QUERY PLAN of one query per shape:\n\n${plans.join('\n')}`,
);

function explain(shape: Shape, q: SearchQuery): string {
  const bounds = toBounds(q);
  const plan = planFor(bounds, estimateSource(db).get());
  if (plan.kind === 'empty') return `${shape}: no bookings\n`;
  const countFilter = chooseCount(plan);
  const total = db.prepare<[Bounds], number>(SQL.count(countFilter)).pluck().get(bounds) ?? 0;
  const pageFilter = total === 0 || q.limit === 0 ? undefined : choosePage(plan, total, q.limit);
  const explained = (sql: string, parameters: object) =>
    (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(parameters) as Array<{ detail: string }>)
      .map((r) => `    ${r.detail}`)
      .join('\n');
  const parameters = { ...bounds, limit: q.limit };
  const lines = [
    `${shape} (${JSON.stringify(bounds)}, limit ${q.limit}):`,
    `  plain count:\n${explained(PLAIN.count, bounds)}`,
    `  service count (${countFilter}):\n${explained(SQL.count(countFilter), bounds)}`,
  ];
  if (pageFilter !== undefined) {
    lines.push(`  plain page:\n${explained(PLAIN.page, parameters)}`);
    lines.push(`  service page (${pageFilter}):\n${explained(SQL.page(pageFilter), parameters)}`);
  }
  return `\`\`\`\n${lines.join('\n')}\n\`\`\`\n`;
}
