// Messages between the primary of --workers and a worker, over node:cluster's IPC channel:
// notifications (one way) and requests (answered once, or failed after a time limit).
// Each message carries `channel: CHANNEL`, so that it is told apart from node:cluster's own
// messages and the start-up messages of bin/cluster/workers.ts that share the channel.

import { describeError } from '../../lib/internal.js';

const CHANNEL = 'booking-search-server';

/** One end of the IPC channel: `process` in a worker, a `Worker` in the primary. */
export interface Port {
  send(message: unknown): unknown;
  on(event: 'message', listener: (message: unknown) => void): unknown;
}

type Message =
  | { channel: typeof CHANNEL; kind: string; body: unknown }
  | { channel: typeof CHANNEL; kind: string; body: unknown; request: number }
  | { channel: typeof CHANNEL; reply: number; body: unknown; error?: string };

export interface Channel {
  /** Sends `body` under `kind`; nothing comes back. A closed channel drops it. */
  notify(kind: string, body: unknown): void;
  /** Sends `body` under `kind` and resolves with the other end's answer; rejects after `timeoutMs`, or with its error. */
  request<T>(kind: string, body: unknown, timeoutMs: number): Promise<T>;
  /** Answers notifications and requests of `kind`; a request gets what `answer` returns (or resolves to). */
  handle(kind: string, answer: (body: unknown) => unknown): void;
  /** Fails every request still waiting (the other end is gone). */
  close(reason: string): void;
}

/** Whether `message` belongs to this channel (and not to node:cluster or bin/cluster/workers.ts). */
export function isChannelMessage(message: unknown): boolean {
  return (message as { channel?: unknown } | null)?.channel === CHANNEL;
}

export function createChannel(port: Port): Channel {
  const handlers = new Map<string, (body: unknown) => unknown>();
  const waiting = new Map<
    number,
    { resolve: (body: unknown) => void; reject: (error: Error) => void; timer: NodeJS.Timeout }
  >();
  let nextId = 1;

  const send = (message: Message): boolean => {
    try {
      port.send(message);
      return true;
    } catch {
      // ERR_IPC_CHANNEL_CLOSED: the other end has gone; its requests fail by their timer or close().
      return false;
    }
  };

  port.on('message', (raw) => {
    if (!isChannelMessage(raw)) return;
    const message = raw as Message;
    if ('reply' in message) {
      const pending = waiting.get(message.reply);
      if (pending === undefined) return; // answered too late: its timer has failed it
      waiting.delete(message.reply);
      clearTimeout(pending.timer);
      if (message.error === undefined) pending.resolve(message.body);
      else pending.reject(new Error(message.error));
      return;
    }
    const answer = handlers.get(message.kind);
    const id = 'request' in message ? message.request : undefined;
    if (answer === undefined) {
      if (id !== undefined) send({ channel: CHANNEL, reply: id, body: null, error: `nothing answers ${message.kind}` });
      return;
    }
    let result: unknown;
    try {
      result = answer(message.body);
    } catch (error: unknown) {
      if (id !== undefined) send({ channel: CHANNEL, reply: id, body: null, error: describeError(error) });
      return;
    }
    if (id === undefined) return;
    if (result instanceof Promise) {
      result.then(
        (body: unknown) => send({ channel: CHANNEL, reply: id, body }),
        (error: unknown) => send({ channel: CHANNEL, reply: id, body: null, error: describeError(error) }),
      );
    } else send({ channel: CHANNEL, reply: id, body: result ?? null });
  });

  return {
    notify(kind, body) {
      send({ channel: CHANNEL, kind, body });
    },
    request<T>(kind: string, body: unknown, timeoutMs: number): Promise<T> {
      return new Promise<T>((resolve, reject) => {
        const id = nextId++;
        const timer = setTimeout(() => {
          waiting.delete(id);
          reject(new Error(`no answer to ${kind} within ${timeoutMs} ms`));
        }, timeoutMs);
        waiting.set(id, { resolve: resolve as (body: unknown) => void, reject, timer });
        if (!send({ channel: CHANNEL, kind, body, request: id })) {
          waiting.delete(id);
          clearTimeout(timer);
          reject(new Error(`cannot ask for ${kind}: the channel is closed`));
        }
      });
    },
    handle(kind, answer) {
      handlers.set(kind, answer);
    },
    close(reason) {
      for (const [id, pending] of waiting) {
        waiting.delete(id);
        clearTimeout(pending.timer);
        pending.reject(new Error(reason));
      }
    },
  };
}
