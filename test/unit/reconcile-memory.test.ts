// What one reconciliation holds: 1,000 lines that compete for the same 870 bookings (870,000
// candidates) keep their candidates in columns of typed arrays, a few bytes each, not as an
// object apiece (about 70 bytes each and a pointer: over 60 MB for this statement).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { parseReconcileBody } from '../../lib/reconcile/body.js';
import { reconcile } from '../../lib/reconcile/reconcile.js';
import type { BookingRow } from '../../lib/search/sql.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
const held = (): number => {
  gc();
  const { heapUsed, arrayBuffers } = process.memoryUsage();
  return heapUsed + arrayBuffers;
};

test('1,000 lines with 870 candidates each hold less than 50 MB while they are paired (as objects: about 80)', () => {
  const DAY_MS = 86_400_000;
  const rows: BookingRow[] = Array.from({ length: 870 }, (_, i) => [
    i + 1,
    new Date(Date.parse('2026-05-07T00:00:00Z') + Math.floor(i / 17) * DAY_MS).toISOString().slice(0, 10),
    1250,
    'Barauslage',
    null,
    'Kasse',
  ]);
  const body = JSON.stringify({
    zeilen: Array.from({ length: 1000 }, () => ({ datum: '2026-06-01', betrag: '-12.50', tage: 25 })),
  });
  const parsed = parseReconcileBody(Buffer.from(body));
  assert.ok(parsed.ok);
  const before = held();
  let most = 0;
  const work = reconcile(parsed.request, rows);
  let steps = 0;
  for (let step = work.next(); step.done !== true; step = work.next()) {
    steps += 1;
    if (steps % 100 === 0) most = Math.max(most, held() - before);
  }
  assert.ok(steps > 1000, `${steps} steps looked at`);
  assert.ok(most < 50e6, `${(most / 1e6).toFixed(1)} MB held`);
});
