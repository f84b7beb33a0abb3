// A worker of --workers asks its primary which command to serve (bin/cluster/worker.ts):
// here over the command's channel on in-process ports instead of node:cluster's.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createChannel } from '../../bin/base/channel.js';
import { answerCommand, commandFrom } from '../../bin/cluster/worker.js';
import { parseCommandLine, type ServeCommand } from '../../bin/config/index.js';
import { portPair } from '../support/port-pair.js';

const ENV = { BOOKING_SEARCH_USER: 'kasse', BOOKING_SEARCH_PASSWORD: 'geheim' };

test('a primary of a version before the question, which has no handler for it: the worker reads argv, as a first start does', async () => {
  const [primaryEnd, workerEnd] = portPair();
  createChannel(primaryEnd);
  assert.equal(await commandFrom(createChannel(workerEnd)), undefined);
});

test('a primary that answers: its command for a replacement (no credentials, no books), null at the first start (argv)', async () => {
  const command = parseCommandLine(['--demo', '--workers', '2'], ENV, () => undefined) as ServeCommand;
  for (const [replacement, expected] of [
    [command, { ...command, credentials: [], books: [] }],
    [undefined, undefined],
  ] as const) {
    const [primaryEnd, workerEnd] = portPair();
    answerCommand(createChannel(primaryEnd), replacement);
    assert.deepEqual(
      await commandFrom(createChannel(workerEnd)),
      JSON.parse(JSON.stringify(expected ?? null)) ?? undefined,
    );
  }
});

test("a primary whose answer fails otherwise: the worker's start fails with it", async () => {
  const [primaryEnd, workerEnd] = portPair();
  createChannel(primaryEnd).handle('command', () => {
    throw new Error('nothing answers command');
  });
  await assert.rejects(commandFrom(createChannel(workerEnd)), /^Error: Error: nothing answers command$/);
});
