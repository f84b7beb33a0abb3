// lib/search/application-search.ts: an amount an application holds as a fraction, as a message shows it.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fractionAsAmount } from '../../lib/search/application-search.js';

test('fractionAsAmount shows a fraction exactly: its decimal where it has a finite one, else the fraction as held, never a float', () => {
  const cases: Array<[string, string | undefined]> = [
    ['-37/3', '-37/3'],
    ['-200/600', '-200/600'],
    ['-1115/1000', '-1.115'],
    ['-12345/1000', '-12.345'],
    ['7/40', '0.175'],
    ['-1/1024', '-0.0009765625'],
    ['25/2', '12.50'],
    ['-25', '-25.00'],
    // Beyond a double's digits: still exact.
    ['100000000000000000000001/1000', '100000000000000000000.001'],
    ['1/0', undefined],
    ['1.5', undefined],
    ['x/1', undefined],
    ['', undefined],
  ];
  for (const [held, shown] of cases) assert.equal(fractionAsAmount(held), shown, held);
});
