import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseAmount, parseUnsignedAmount } from '../../lib/query.js';
import { formatEuros } from '../../lib/search-endpoint.js';

test('parseAmount reads decimal text into exact integer cents', () => {
  const cases: Array<[string, number]> = [
    ['4.35', 435], // 4.35 * 100 === 434.99999999999994 in floating point
    ['-4.35', -435],
    ['+4.35', 435],
    ['-12.5', -1250],
    ['-12,50', -1250],
    ['7', 700],
    ['0.1', 10],
    ['0,01', 1],
    ['-0', 0],
    ['007', 700],
    ['1.10', 110],
    ['999999999999.99', 99_999_999_999_999],
    ['-999999999999.99', -99_999_999_999_999],
  ];
  for (const [text, cents] of cases) assert.equal(parseAmount(text), cents, text);
});

test('parseAmount never returns -0', () => {
  assert.ok(Object.is(parseAmount('-0.00'), 0));
});

test('parseAmount rejects everything but 1–12 digits with up to two decimals', () => {
  const rejected = [
    '',
    '-',
    '+',
    '.5',
    ',5',
    '5.',
    '5,',
    '1.234',
    '1e3',
    '1E3',
    ' 1',
    '1 ',
    '1 000',
    '1.000,00',
    '1,000.00',
    'NaN',
    'Infinity',
    '-Infinity',
    '0x10',
    '--1',
    '+-1',
    '1000000000000',
    '١٢',
    '１２',
    '12.5.1',
    '½',
  ];
  for (const text of rejected) assert.equal(parseAmount(text), undefined, JSON.stringify(text));
});

test('parseUnsignedAmount accepts no sign at all', () => {
  assert.equal(parseUnsignedAmount('0.10'), 10);
  assert.equal(parseUnsignedAmount('5'), 500);
  assert.equal(parseUnsignedAmount('-0.10'), undefined);
  assert.equal(parseUnsignedAmount('+0.10'), undefined);
});

test('formatEuros writes the exact decimal of whole cents', () => {
  const cases: Array<[number, string]> = [
    [-1250, '-12.5'],
    [3000, '30'],
    [435, '4.35'],
    [-435, '-4.35'],
    [5, '0.05'],
    [-5, '-0.05'],
    [50, '0.5'],
    [0, '0'],
    [-0, '0'],
    [100, '1'],
    [110, '1.1'],
    [99_999_999_999_999, '999999999999.99'],
    [Number.MAX_SAFE_INTEGER, '90071992547409.91'],
  ];
  for (const [cents, text] of cases) assert.equal(formatEuros(cents), text, String(cents));
});

test('formatEuros round-trips every parsed amount through JSON', () => {
  for (let cents = -100_000; cents <= 100_000; cents += 7) {
    const text = formatEuros(cents);
    assert.equal(parseAmount(text), cents);
    // What a client's JSON parser sees is the number it would have written itself.
    assert.equal(JSON.parse(text), Number(text));
  }
});

test('formatEuros refuses what it cannot write exactly', () => {
  assert.throws(() => formatEuros(12.5), RangeError);
  assert.throws(() => formatEuros(Number.NaN), RangeError);
  assert.throws(() => formatEuros(2 ** 53), RangeError);
});
