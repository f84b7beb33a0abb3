// Calendar days as numbers, and where a search's window ends: before the first text that
// does not begin with its last day or an earlier one.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { dayNumber, isoDate, textAfterDay } from '../../lib/days.js';

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

test("a window's end is the next day, past the last '9999-12-32': a time of day written with the last day sorts before it", () => {
  for (const [day, after] of [
    ['2026-03-14', '2026-03-15'],
    ['2024-02-28', '2024-02-29'],
    ['2024-02-29', '2024-03-01'],
    ['2026-12-31', '2027-01-01'],
    ['0000-01-01', '0000-01-02'],
    ['9999-12-31', '9999-12-32'],
  ]) {
    assert.equal(textAfterDay(day as string), after);
    for (const written of [`${day}`, `${day} 12:00`, `${day}T23:59:59`, `${day}x`, `${day}\u{10FFFF}`]) {
      assert.ok(written < (after as string), `${written} before ${after}`);
    }
  }
});
