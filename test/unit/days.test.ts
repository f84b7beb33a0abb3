// Calendar days as numbers, and where a search's window ends: after every text that begins
// with its last day.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { dayNumber, isoDate } from '../../lib/days.js';
import { endOfDay } from '../../lib/query.js';

test('every day of the years 0000 to 9999 is its day number and back, one after another', () => {
  const first = dayNumber('0000-01-01');
  const last = dayNumber('9999-12-31');
  let previous = '';
  for (let day = first; day <= last; day += 1) {
    const text = isoDate(day);
    assert.ok(text > previous, `${text} after ${previous}`);
    if (dayNumber(text) !== day) assert.fail(`${text}: ${dayNumber(text)}, not ${day}`);
    previous = text;
  }
  assert.equal(isoDate(first - 1), '0000-01-01', 'clamped');
  assert.equal(isoDate(last + 1), '9999-12-31', 'clamped');
});

test("a window's end is after every text that begins with its last day, and before the next day, as SQLite orders text", () => {
  const db = new Database(':memory:');
  const before = db.prepare<[string, string], number>('SELECT ? < ?').pluck();
  for (const [day, next] of [
    ['2026-03-14', '2026-03-15'],
    ['2024-02-29', '2024-03-01'],
    ['2026-12-31', '2027-01-01'],
    ['9999-12-31', '9999-12-32'],
  ] as const) {
    const end = endOfDay(day);
    assert.equal(before.get(end, next), 1, `${day}'s end before ${next}`);
    for (const written of [day, `${day} 12:00`, `${day}T23:59:59`, `${day}~`, `${day}\u00a012:00`, `${day}\ufffd`]) {
      assert.equal(before.get(written, end), 1, `${JSON.stringify(written)} before the end`);
    }
  }
  db.close();
});
