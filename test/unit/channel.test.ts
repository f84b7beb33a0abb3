import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type ChannelError, createChannel, isChannelMessage, type Port } from '../../bin/base/channel.js';
import { portPair, settle } from '../support/port-pair.js';

test('a request gets the answer of the handler at the other end, a promise resolved or a value', async () => {
  const [a, b] = portPair();
  const primary = createChannel(a);
  const worker = createChannel(b);
  worker.handle('add', (body) => {
    const { x, y } = body as { x: number; y: number };
    return x + y;
  });
  worker.handle('later', async () => 'done');
  assert.equal(await primary.request<number>('add', { x: 2, y: 3 }, 1000), 5);
  assert.equal(await primary.request<string>('later', null, 1000), 'done');
});

test('a notification reaches its handler and gets no answer', async () => {
  const [a, b] = portPair();
  const primary = createChannel(a);
  const worker = createChannel(b);
  const heard: unknown[] = [];
  worker.handle('tell', (body) => heard.push(body));
  primary.notify('tell', { n: 1 });
  primary.notify('tell', { n: 2 });
  await settle();
  assert.deepEqual(heard, [{ n: 1 }, { n: 2 }]);
  assert.equal(b.sent.length, 0, 'nothing was sent back');
});

test('a handler that throws, or none at all, fails the request with its reason', async () => {
  const [a, b] = portPair();
  const primary = createChannel(a);
  const worker = createChannel(b);
  worker.handle('broken', () => {
    throw new TypeError('no such thing');
  });
  await assert.rejects(primary.request('broken', null, 1000), /^Error: TypeError: no such thing$/);
  await assert.rejects(primary.request('unknown', null, 1000), /nothing answers unknown/);
});

test('no answer within the time limit fails the request; a late answer is dropped', async () => {
  const [a, b] = portPair();
  const primary = createChannel(a);
  const worker = createChannel(b);
  worker.handle('slow', () => new Promise((resolve) => setTimeout(() => resolve('late'), 100)));
  await assert.rejects(primary.request('slow', null, 20), /no answer to slow within 20 ms/);
  await new Promise((resolve) => setTimeout(resolve, 150));
});

test('a closed channel fails requests at once, and close() fails those waiting', async () => {
  const [a, b] = portPair();
  const primary = createChannel(a);
  createChannel(b);
  const waiting = primary.request('never', null, 10_000);
  primary.close('the worker ended');
  await assert.rejects(waiting, /the worker ended/);
  a.close();
  await assert.rejects(primary.request('any', null, 1000), /the channel is closed/);
  assert.doesNotThrow(() => primary.notify('any', null));
});

test("messages of node:cluster and of the workers' start-up are not this channel's", async () => {
  const [a, b] = portPair();
  createChannel(b);
  assert.equal(isChannelMessage({ cmd: 'NODE_CLUSTER', act: 'online' }), false);
  assert.equal(isChannelMessage({ type: 'listening', greeting: [] }), false);
  a.send({ type: 'listening', greeting: [] });
  await settle();
  assert.equal(b.sent.length, 0, 'not answered');
});

test('a bounded channel whose other end takes nothing queues no more past the threshold: notifications are dropped, requests fail at once, until it has taken the backlog', async () => {
  const [a, b] = portPair();
  const heard: boolean[] = [];
  const worker = createChannel(a, { maxPending: 10, behind: (behind) => heard.push(behind) });
  const primary = createChannel(b);
  const told: unknown[] = [];
  primary.handle('tell', (body) => told.push(body));
  primary.handle('ask', (body) => body);
  a.stall(3);
  assert.equal(worker.notify('tell', 1), true);
  assert.equal(worker.notify('tell', 2), true);
  assert.equal(worker.notify('tell', 3), true, 'the message that passes the threshold is queued');
  assert.deepEqual(heard, [true]);
  assert.equal(worker.notify('tell', 4), false, 'dropped');
  await assert.rejects(worker.request('ask', 5, 1000), (error: ChannelError) => error.code === 'CHANNEL_FULL');
  assert.equal(a.sent.length, 4, 'three notifications and the probe: nothing more');
  a.resume();
  await settle();
  assert.deepEqual(heard, [true, false]);
  assert.deepEqual(told, [1, 2, 3]);
  assert.equal(await worker.request('ask', 6, 1000), 6);
});

test('a bounded channel lets at most maxPending requests wait for an answer', async () => {
  const [a, b] = portPair();
  const worker = createChannel(a, { maxPending: 2 });
  createChannel(b).handle('ask', () => new Promise(() => {}));
  // Each outcome heard from the start: the two may time out together, before a later
  // handler would be attached (a loaded machine), and a rejection nobody hears fails the run.
  const outcomes = [worker.request('ask', null, 500), worker.request('ask', null, 500)].map((request) =>
    request.then(
      () => 'answered',
      (error: ChannelError) => error.code,
    ),
  );
  await assert.rejects(worker.request('ask', null, 500), (error: ChannelError) => error.code === 'CHANNEL_FULL');
  assert.deepEqual(await Promise.all(outcomes), ['CHANNEL_TIMEOUT', 'CHANNEL_TIMEOUT']);
});

test("the time limit counts from the other end's last message: a request waiting behind answers that keep coming is not failed", async (t) => {
  // Time is the test's, moved 10 ms at a time: both ends share this process, and a stall of
  // it longer than the limit (a loaded machine) fired the limit's timer before the next
  // answer's, failing a request whose other end was answering at its pace.
  t.mock.timers.enable({ apis: ['setTimeout', 'Date'] });
  t.mock.method(performance, 'now', () => Date.now());
  const [a, b] = portPair();
  const serving = createChannel(a);
  const guard = createChannel(b);
  // One answer every 40 ms, in order, as a guard working through its queue.
  let queue = Promise.resolve();
  guard.handle('search', (body) => {
    queue = queue.then(() => new Promise((resolve) => setTimeout(resolve, 40)));
    return queue.then(() => body);
  });
  const numbers = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10];
  const answered: number[] = [];
  const failed: string[] = [];
  for (const n of numbers) {
    serving.request<number>('search', n, 250).then(
      (answer) => answered.push(answer),
      (error: Error) => failed.push(error.message),
    );
  }
  for (let ms = 0; ms < 400; ms += 10) {
    await settle();
    t.mock.timers.tick(10);
  }
  await settle();
  assert.deepEqual(failed, []);
  assert.deepEqual(answered, numbers, 'the last waited 400 ms, its limit 250 ms since the last answer');
});

test('close() with an error fails what waits with that error, and each request after it at once', async () => {
  const [a, b] = portPair();
  const serving = createChannel(a);
  createChannel(b);
  const ended = new Error('the guard was ended');
  const waiting = serving.request('never', null, 10_000);
  assert.equal(serving.waiting(), 1);
  serving.close(ended);
  await assert.rejects(waiting, (error) => error === ended);
  assert.equal(serving.waiting(), 0);
  await assert.rejects(serving.request('any', null, 10_000), (error: ChannelError) => error.code === 'CHANNEL_CLOSED');
  assert.equal(serving.notify('any', null), false);
});

test('a bounded channel whose other end has gone stays behind: an owner that sends again once caught up does not loop', async () => {
  // Node's send on a channel whose other end has gone: false, and the callback gets the error.
  let sends = 0;
  const gone: Port = {
    send: (_message, written) => {
      sends += 1;
      if (written !== undefined) process.nextTick(written, new Error('Channel closed'));
      return false;
    },
    on: () => gone,
  };
  const heard: boolean[] = [];
  // As the primary's throttle does: caught up, it sends what the worker missed.
  const channel = createChannel(gone, {
    maxPending: 10,
    behind: (behind) => {
      heard.push(behind);
      if (!behind && heard.length < 10) channel.notify('tell', 2);
    },
  });
  channel.notify('tell', 1);
  await settle();
  assert.deepEqual(heard, [true]);
  assert.equal(sends, 2, 'the notification and the probe');
  assert.equal(channel.notify('tell', 3), false, 'dropped while behind');
});
