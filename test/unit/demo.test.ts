// The demo's greeting prints an example search: on any day of the year it finds bookings,
// through the real handler, and the amount it names is one the demo holds.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createDemoDatabase } from '../../bin/books/index.js';
import { createHandler } from '../../lib/index.js';
import { basicAuth, get, serve } from '../support/helpers.js';

test("the demo's example search finds bookings of its amount, whatever the day", async (t) => {
  for (let month = 0; month < 12; month += 1) {
    const today = new Date(Date.UTC(2026, month, 1 + month * 2));
    const demo = createDemoDatabase(today);
    t.after(() => demo.db.close());
    const api = await serve(t, createHandler(demo.db, { username: 'demo', password: 'demo' }));
    const { von, bis, betrag } = demo.example;
    const reply = await get(`${api}/api/v1/buchungen?von=${von}&bis=${bis}&betrag=${betrag}`, {
      authorization: basicAuth('demo', 'demo'),
    });
    assert.equal(reply.status, 200, reply.body);
    const found = JSON.parse(reply.body) as { anzahl: number; buchungen: Array<{ datum: string }> };
    assert.ok(found.anzahl > 0, `${today.toISOString()}: ${reply.body}`);
    assert.match(betrag, /^-\d+\.\d\d$/);
    assert.ok(found.buchungen.every((booking) => booking.datum >= von && booking.datum <= bis));
  }
});
