// Answers leave together (lib/respond.ts): those given while answeringTogether hands
// requests over are ended at the end of the turn of the event loop, all of them, in order;
// one that cannot be ended has its connection closed and keeps no other from leaving.

import assert from 'node:assert/strict';
import { IncomingMessage, ServerResponse } from 'node:http';
import { Duplex } from 'node:stream';
import { test } from 'node:test';
import { admit, answeringTogether, endHeldAnswers, MAX_UNANSWERED, send } from '../../lib/respond.js';

/** A GET and its response on a connection that takes every byte written. */
function exchange(): { req: IncomingMessage; res: ServerResponse; written: () => string } {
  let bytes = '';
  const socket = new Duplex({
    read() {},
    write(chunk, _encoding, done) {
      bytes += String(chunk);
      done();
    },
  });
  const req = new IncomingMessage(socket as never);
  req.method = 'GET';
  req.headers = {};
  const res = new ServerResponse(req);
  res.shouldKeepAlive = true;
  (res as unknown as { assignSocket(socket: Duplex): void }).assignSocket(socket);
  return { req, res, written: () => bytes };
}

const answer = answeringTogether((_req, res) => send(res, 200, '{"ok":true}'));

test('the answers to requests handed over together are ended together, at the end of the turn of the event loop', async () => {
  const first = exchange();
  const second = exchange();
  answer(first.req, first.res);
  answer(second.req, second.res);
  assert.equal(first.res.writableEnded, false, 'held while other requests may still be handed over');
  assert.equal(second.res.writableEnded, false);
  await new Promise(setImmediate);
  for (const { res, written } of [first, second]) {
    assert.equal(res.writableEnded, true);
    assert.match(written(), /^HTTP\/1\.1 200 OK\r\n[\s\S]*\r\n\r\n\{"ok":true\}$/);
  }
});

test('a request asked about twice (the listener, then the handler) is counted once against its connection', () => {
  const { req } = exchange();
  for (let i = 0; i < MAX_UNANSWERED; i += 1) {
    const next = new IncomingMessage(req.socket);
    const res = new ServerResponse(next);
    assert.equal(admit(next, res), 'process');
    assert.equal(admit(next, res), 'process', `request ${i + 1}, asked again`);
  }
  const beyond = new IncomingMessage(req.socket);
  assert.equal(admit(beyond, new ServerResponse(beyond)), 'refuse');
});

test('an answer given outside answeringTogether (a turn of searches, a hash check, an embedder) is ended at once', () => {
  const { res } = exchange();
  send(res, 200, '{"ok":true}');
  assert.equal(res.writableEnded, true);
});

test('endHeldAnswers ends the held answers at once, for what must come after them', () => {
  const { req, res } = exchange();
  answer(req, res);
  assert.equal(res.writableEnded, false);
  endHeldAnswers();
  assert.equal(res.writableEnded, true);
});

test('an answer that cannot be ended closes its connection, and the others still leave', async () => {
  const broken = exchange();
  const fine = exchange();
  broken.res.end = () => {
    throw new Error('cannot write');
  };
  answer(broken.req, broken.res);
  answer(fine.req, fine.res);
  await new Promise(setImmediate);
  assert.equal(broken.res.destroyed, true);
  assert.equal(fine.res.writableEnded, true);
  assert.match(fine.written(), /\{"ok":true\}$/);
});
