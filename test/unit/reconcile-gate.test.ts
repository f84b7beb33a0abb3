// The gate of the reconciliations: at most its bound hold a place, the others wait and get
// one as places are freed, by user, then address, then connection in rotation, each in
// order of arrival; a place is freed once however often it is left; one whose client left
// while waiting never starts; the waiting are counted by address and by user.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createGate, RECONCILING_AT_ONCE } from '../../lib/reconcile/gate.js';

test('at most the bound hold a place; the others start in order as places are freed, each once', () => {
  const gate = createGate(2);
  const from = { user: 'u', address: 'a', connection: {} };
  const leaves: Array<() => void> = [];
  const started: number[] = [];
  for (let i = 0; i < 5; i += 1)
    gate.enter(from, (leave) => {
      started.push(i);
      leaves.push(leave);
    });
  assert.deepEqual(started, [0, 1]);
  assert.equal(gate.waitingFrom('a'), 3);
  assert.equal(gate.waitingFor('u'), 3);
  leaves[0]?.();
  leaves[0]?.(); // left twice: one place only
  assert.deepEqual(started, [0, 1, 2]);
  leaves[1]?.();
  leaves[2]?.();
  assert.deepEqual(started, [0, 1, 2, 3, 4]);
  assert.equal(gate.waitingFrom('a'), 0);
  assert.equal(gate.waitingFor('u'), 0);
  assert.ok(RECONCILING_AT_ONCE >= 1);
});

test('the waiting take turns by user; one whose client left while waiting never starts', () => {
  const gate = createGate(1);
  const started: string[] = [];
  let leave = (): void => {};
  const enter = (name: string, from: { user: string; address: string; connection: { destroyed?: boolean } }) =>
    gate.enter(from, (done) => {
      started.push(name);
      leave = done;
    });
  const gone = { destroyed: false };
  enter('u1', { user: 'u', address: 'a', connection: {} });
  enter('u2', { user: 'u', address: 'a', connection: {} });
  enter('u3', { user: 'u', address: 'a', connection: {} });
  enter('v1 (left)', { user: 'v', address: 'b', connection: gone });
  enter('w1', { user: 'w', address: 'c', connection: {} });
  gone.destroyed = true;
  for (let i = 0; i < 4; i += 1) leave();
  assert.deepEqual(started, ['u1', 'u2', 'w1', 'u3']);
});

test('one whose client left while waiting is no longer counted, before a place is free', () => {
  const gate = createGate(1);
  gate.enter({ user: 'u', address: 'a', connection: {} }, () => {});
  const gone = { destroyed: false };
  for (let i = 0; i < 3; i += 1)
    gate.enter({ user: 'u', address: 'a', connection: gone }, () => assert.fail('a client that left was started'));
  gate.enter({ user: 'v', address: 'a', connection: {} }, () => {});
  assert.equal(gate.waitingFrom('a'), 4);
  gone.destroyed = true;
  assert.equal(gate.waitingFrom('a'), 1, 'its address gets the places back');
  assert.equal(gate.waitingFor('u'), 0);
  assert.equal(gate.waitingFor('v'), 1);
});
