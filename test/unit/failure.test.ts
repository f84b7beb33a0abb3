// lib/failure.ts: the unexpected is told to the hook, and the client gets the 500, or, once
// its answer has begun, a cut connection (a second status line would be a broken answer).

import assert from 'node:assert/strict';
import { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import { test } from 'node:test';
import { createFailures } from '../../lib/failure.js';
import { errorSent } from '../../lib/respond.js';

test('a failure before the answer: the hook hears it, the client gets the 500', () => {
  const heard: string[] = [];
  const failures = createFailures((error) => heard.push((error as Error).message));
  const res = new ServerResponse(new IncomingMessage(new Socket()));
  failures.fail(new Error('before'), res.req, res);
  assert.equal(res.statusCode, 500);
  assert.equal(errorSent(res)?.code, 'internal_error');
  assert.deepEqual(heard, ['before']);
});

test('a failure once the answer has begun: the hook hears it, the connection is cut, nothing answered twice', () => {
  const heard: string[] = [];
  const failures = createFailures((error) => heard.push((error as Error).message));
  const res = new ServerResponse(new IncomingMessage(new Socket()));
  res.writeHead(200, { 'Content-Type': 'application/json' });
  res.write('{"anzahl":1,');
  failures.fail(new Error('midway'), res.req, res);
  assert.equal(res.destroyed, true);
  assert.equal(errorSent(res), undefined);
  assert.deepEqual(heard, ['midway']);
});
