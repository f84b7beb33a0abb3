// lib/apps/mmex.ts: the cents Money Manager Ex shows for the REAL amounts it stores, in SQL.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { shownCents } from '../../lib/apps/mmex.js';
import { random } from '../support/cash-book.js';
import { mmexShownCents } from '../support/mmex-amounts.js';

const db = new Database(':memory:');
const shown = db.prepare<[{ amount: number }], number>(`SELECT ${shownCents(':amount')}`).pluck();

test("shownCents: amounts with more decimals as MMEX shows them (fmt's {:.2f} of amount + 1e-10), not as round(amount × 100)", () => {
  // What MMEX's formatting gives, as Python's correctly rounded '%.2f' prints it.
  const cases: Array<[number, number]> = [
    [1.005, 101], // round(1.005 × 100) is 100: 1.005 is 1.00499999… in binary
    [2.675, 268],
    [1.015, 102],
    [99.995, 10_000],
    [12.345, 1235],
    [0.005, 1],
    [0.125, 13],
    [1_234_567.125, 123_456_712], // 1e-10 is lost at this size: an exact tie, to even
    [8_388_608.125, 838_860_812],
    [1_048_576.375, 104_857_638],
    [1_000_000_000.005, 100_000_000_000],
    [4.35, 435],
    [0.1 + 0.2, 30],
    [0, 0],
    [1_234_567.89, 123_456_789],
    [-1.005, -100], // never stored by MMEX itself: -1.005 + 1e-10 is -1.0049999999
    [-4.35, -435],
  ];
  for (const [amount, cents] of cases) {
    assert.equal(shown.get({ amount }), cents, String(amount));
    assert.equal(mmexShownCents(amount), cents, `the oracle: ${amount}`);
  }
});

// Fractions at or near a half cent, where the roundings differ.
const HALF_CENTS = [0.125, 0.375, 0.625, 0.875, 0.005, 0.015];

test('shownCents agrees with the exact binary rounding on 100,000 amounts of up to six decimals and ten digits', () => {
  const next = random(26);
  for (let i = 0; i < 100_000; i += 1) {
    const decimals = Math.floor(next() * 7);
    const magnitude = 10 ** Math.floor(next() * 10);
    const amount =
      i % 4 === 0
        ? Math.floor(next() * magnitude) + (HALF_CENTS[Math.floor(next() * HALF_CENTS.length)] as number)
        : Math.round(next() * magnitude * 10 ** decimals) / 10 ** decimals;
    assert.equal(shown.get({ amount }), mmexShownCents(amount), String(amount));
    assert.equal(shown.get({ amount: -amount }), mmexShownCents(-amount), String(-amount));
  }
});
