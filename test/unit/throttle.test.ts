import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createThrottle } from '../../lib/throttle.js';

function clock(start = 1_000_000) {
  let time = start;
  return { now: () => time, advance: (ms: number) => (time += ms) };
}

test('the 10th failure within 60 s blocks the address until its window ends', () => {
  const { now, advance } = clock();
  const throttle = createThrottle({ maxFailures: 10, windowMs: 60_000, maxAddresses: 100, now });
  for (let i = 0; i < 9; i += 1) throttle.recordFailure('10.0.0.1');
  assert.equal(throttle.retryAfter('10.0.0.1'), 0);
  advance(20_000);
  throttle.recordFailure('10.0.0.1');
  assert.equal(throttle.retryAfter('10.0.0.1'), 40);
  advance(39_001);
  assert.equal(throttle.retryAfter('10.0.0.1'), 1);
  advance(999);
  assert.equal(throttle.retryAfter('10.0.0.1'), 0);
});

test('other addresses are not affected', () => {
  const { now } = clock();
  const throttle = createThrottle({ maxFailures: 10, windowMs: 60_000, maxAddresses: 100, now });
  for (let i = 0; i < 10; i += 1) throttle.recordFailure('10.0.0.1');
  assert.equal(throttle.retryAfter('10.0.0.1'), 60);
  assert.equal(throttle.retryAfter('10.0.0.2'), 0);
});

test('failures spread over more than the window never block', () => {
  const { now, advance } = clock();
  const throttle = createThrottle({ maxFailures: 10, windowMs: 60_000, maxAddresses: 100, now });
  for (let i = 0; i < 100; i += 1) {
    throttle.recordFailure('10.0.0.1');
    advance(7_000);
    assert.equal(throttle.retryAfter('10.0.0.1'), 0, `after failure ${i}`);
  }
});

test('the table keeps at most maxAddresses, dropping the oldest window', () => {
  const { now, advance } = clock();
  const throttle = createThrottle({ maxFailures: 2, windowMs: 60_000, maxAddresses: 3, now });
  throttle.recordFailure('a');
  throttle.recordFailure('a');
  for (const address of ['b', 'c', 'd']) {
    advance(1);
    throttle.recordFailure(address);
  }
  assert.equal(throttle.size, 3);
  assert.equal(throttle.retryAfter('a'), 0, 'a, the oldest, was dropped');
  for (let i = 0; i < 10_000; i += 1) throttle.recordFailure(`10.0.${i >> 8}.${i & 255}`);
  assert.equal(throttle.size, 3);
});

test('maxFailures 0 turns throttling off', () => {
  const { now } = clock();
  const throttle = createThrottle({ maxFailures: 0, windowMs: 60_000, maxAddresses: 3, now });
  for (let i = 0; i < 50; i += 1) throttle.recordFailure('a');
  assert.equal(throttle.retryAfter('a'), 0);
  assert.equal(throttle.size, 0);
});
