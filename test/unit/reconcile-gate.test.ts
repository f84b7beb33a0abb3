// The gate of the reconciliations: at most its bound hold a place, one a user, the others wait
// and get one as places are freed, by user, then address, then connection in rotation, each in
// order of arrival; a place is freed once however often it is left; one whose client left
// while waiting never starts; the waiting are counted by address and by user.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createGate, RECONCILING_AT_ONCE } from '../../lib/reconcile/gate.js';

test('at most the bound hold a place; the others start in order as places are freed, each once', () => {
  const gate = createGate(2);
  const leaves: Array<() => void> = [];
  const started: number[] = [];
  for (let i = 0; i < 5; i += 1)
    gate.enter({ user: `u${i}`, address: 'a', connection: {} }, (leave) => {
      started.push(i);
      leaves.push(leave);
    });
  assert.deepEqual(started, [0, 1]);
  assert.equal(gate.waitingFrom('a'), 3);
  assert.equal(gate.waitingFor('u4'), 1);
  leaves[0]?.();
  leaves[0]?.(); // left twice: one place only
  assert.deepEqual(started, [0, 1, 2]);
  leaves[1]?.();
  leaves[2]?.();
  assert.deepEqual(started, [0, 1, 2, 3, 4]);
  assert.equal(gate.waitingFrom('a'), 0);
  assert.equal(gate.waitingFor('u4'), 0);
  assert.ok(RECONCILING_AT_ONCE >= 2);
});

test("a user holds one place at most: its next waits while it runs, counted, and another user's starts at once", () => {
  const gate = createGate(2);
  const started: string[] = [];
  const leaves = new Map<string, () => void>();
  const enter = (name: string, user: string) =>
    gate.enter({ user, address: 'a', connection: {} }, (leave) => {
      started.push(name);
      leaves.set(name, leave);
    });
  enter('alice 1', 'alice');
  enter('alice 2', 'alice');
  enter('alice 3', 'alice');
  assert.deepEqual(started, ['alice 1'], 'a place stays free rather than go to a user that holds one');
  assert.equal(gate.waitingFor('alice'), 2);
  assert.equal(gate.waitingFrom('a'), 2);
  enter('bob 1', 'bob');
  assert.deepEqual(started, ['alice 1', 'bob 1']);
  enter('carol 1', 'carol');
  leaves.get('alice 1')?.();
  // Alice's next joins the rotation behind carol, who waited while alice held her place.
  assert.deepEqual(started, ['alice 1', 'bob 1', 'carol 1']);
  leaves.get('bob 1')?.();
  assert.deepEqual(started, ['alice 1', 'bob 1', 'carol 1', 'alice 2']);
  leaves.get('carol 1')?.();
  assert.deepEqual(started, ['alice 1', 'bob 1', 'carol 1', 'alice 2'], "alice's third waits for her second");
  leaves.get('alice 2')?.();
  assert.deepEqual(started, ['alice 1', 'bob 1', 'carol 1', 'alice 2', 'alice 3']);
  assert.equal(gate.waitingFor('alice'), 0);
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
  assert.deepEqual(started, ['u1', 'w1', 'u2', 'u3']);
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
