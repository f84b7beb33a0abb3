// The one request/reply channel between two processes of the command: the primary of
// --workers and each worker (node:cluster's IPC channel), and the serving process and each
// guard process (bin/guard/guarded.ts, child_process's IPC channel). Notifications go one
// way; a request is answered once, or fails:
//
// - after its time limit, counted from its sending or from the last message the other end
//   sent, whichever is later: a process that answers, however much waits in it, is not
//   stalled, and one that has said nothing for that long while a request waited is;
// - at once, on a bounded channel, when `maxPending` requests already wait, or while the
//   other end takes no messages (below);
// - when the channel is closed (`close`): its owner closes it when the other end is gone,
//   and a request sent after that fails at once.
//
// Each message carries `channel: CHANNEL`, so that it is told apart from node:cluster's own
// messages and the start-up messages of bin/cluster/workers.ts that share the channel.
//
// Node queues in memory whatever the other side does not take (a process stopped, or
// stuck): a bounded channel queues no more once that backlog passes Node's threshold.
// Notifications are then dropped and requests fail at once, until the backlog has been
// taken, so that the sender decides on its own and its memory stays bounded.

import { describeError } from './errors.js';

const CHANNEL = 'booking-search-server';

/** One end of the IPC channel: `process` in a worker or a guard, a `Worker` or a `ChildProcess` in its parent. */
export interface Port {
  /** Returns false when the backlog of what the other side has not taken passes Node's threshold; `written` when it is taken. */
  send(message: unknown, written?: (error: Error | null) => void): unknown;
  on(event: 'message', listener: (message: unknown) => void): unknown;
}

type Message =
  | { channel: typeof CHANNEL; kind: string; body: unknown }
  | { channel: typeof CHANNEL; kind: string; body: unknown; request: number }
  | { channel: typeof CHANNEL; reply: number; body: unknown; error?: string };

export interface Channel {
  /** Sends `body` under `kind`; nothing comes back. A closed channel, or a bounded one behind, drops it (false). */
  notify(kind: string, body: unknown): boolean;
  /**
   * Sends `body` under `kind` and resolves with the other end's answer; rejects with a
   * ChannelError when the other end has said nothing for `timeoutMs` since it was sent,
   * when it is refused or closed, or with the other end's error.
   */
  request<T>(kind: string, body: unknown, timeoutMs: number): Promise<T>;
  /** Answers notifications and requests of `kind`; a request gets what `answer` returns (or resolves to). */
  handle(kind: string, answer: (body: unknown) => unknown): void;
  /** Requests waiting for an answer. */
  waiting(): number;
  /** Fails every request still waiting, with `reason` (an error as it is), and each sent later (the other end is gone). */
  close(reason: string | Error): void;
}

/** Why a request failed: its `code` says which of the channel's rules, or the other end's error. */
export class ChannelError extends Error {
  readonly code: 'CHANNEL_TIMEOUT' | 'CHANNEL_CLOSED' | 'CHANNEL_FULL' | 'CHANNEL_REMOTE';
  constructor(message: string, code: ChannelError['code']) {
    super(message);
    this.code = code;
  }
}

export interface ChannelBounds {
  /** Requests waiting for an answer at most: one more fails at once (CHANNEL_FULL). */
  maxPending: number;
  /** Hears when the other side stops taking messages (true) and when it has taken them all again (false). */
  behind?: (behind: boolean) => void;
}

interface Pending {
  kind: string;
  resolve: (body: unknown) => void;
  reject: (error: Error) => void;
  timer: NodeJS.Timeout;
  sent: number;
  timeoutMs: number;
}

/** What the other end answers a request of a kind it has no handler for (a process of an older version, say). */
const unhandled = (kind: string): string => `nothing answers ${kind}`;

/** Whether `error` failed a request of `kind` because the other end has no handler for it. */
export function isUnhandled(error: unknown, kind: string): boolean {
  return error instanceof ChannelError && error.code === 'CHANNEL_REMOTE' && error.message === unhandled(kind);
}

/** Whether `message` belongs to this channel (and not to node:cluster or bin/cluster/workers.ts). */
export function isChannelMessage(message: unknown): boolean {
  return (message as { channel?: unknown } | null)?.channel === CHANNEL;
}

/**
 * A channel over `port`. With `bounds`, what waits in this process for the other side is
 * bounded (maxPending requests, and a backlog of Node's threshold); without, it is not.
 */
export function createChannel(port: Port, bounds?: ChannelBounds): Channel {
  return new PortChannel(port, bounds);
}

class PortChannel implements Channel {
  private readonly port: Port;
  private readonly bounds: ChannelBounds | undefined;
  private readonly handlers = new Map<string, (body: unknown) => unknown>();
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private behind = false;
  private closed: Error | undefined;
  /** When the other end last sent anything: the time limits count from it. */
  private heard = performance.now();

  constructor(port: Port, bounds: ChannelBounds | undefined) {
    this.port = port;
    this.bounds = bounds;
    port.on('message', (raw) => this.receive(raw));
  }

  notify(kind: string, body: unknown): boolean {
    return this.closed === undefined && !this.behind && this.send({ channel: CHANNEL, kind, body });
  }

  request<T>(kind: string, body: unknown, timeoutMs: number): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const refused = this.refusal(kind);
      if (refused !== undefined) return reject(refused);
      const id = this.nextId++;
      const timer = setTimeout(() => this.expire(id), timeoutMs);
      const sent = performance.now();
      this.pending.set(id, { kind, resolve: resolve as (body: unknown) => void, reject, timer, sent, timeoutMs });
      if (!this.send({ channel: CHANNEL, kind, body, request: id })) {
        this.pending.delete(id);
        clearTimeout(timer);
        reject(new ChannelError(`cannot ask for ${kind}: the channel is closed`, 'CHANNEL_CLOSED'));
      }
    });
  }

  handle(kind: string, answer: (body: unknown) => unknown): void {
    this.handlers.set(kind, answer);
  }

  waiting(): number {
    return this.pending.size;
  }

  close(reason: string | Error): void {
    const closed = typeof reason === 'string' ? new ChannelError(reason, 'CHANNEL_CLOSED') : reason;
    this.closed = closed;
    for (const [id, pending] of this.pending) {
      this.pending.delete(id);
      clearTimeout(pending.timer);
      pending.reject(closed);
    }
  }

  private send(message: Message): boolean {
    try {
      if (this.port.send(message) === false && this.bounds !== undefined && !this.behind) {
        this.behind = true;
        this.bounds.behind?.(true);
        // A message of no kind, which the other side ignores, written once all before it are.
        this.port.send({ channel: CHANNEL, kind: '', body: null } satisfies Message, (error) => {
          // Not written: the other end has gone (Node returns false and calls back with
          // ERR_IPC_CHANNEL_CLOSED). Caught up, the owner would send again, to be told so
          // again in the next tick, for ever; it stays behind until its owner closes it.
          if (error instanceof Error) return;
          this.behind = false;
          this.bounds?.behind?.(false);
        });
      }
      return true;
    } catch {
      // ERR_IPC_CHANNEL_CLOSED: the other end has gone; its requests fail by their timer or close().
      return false;
    }
  }

  private reply(id: number, body: unknown, error?: unknown): void {
    this.send(
      error === undefined
        ? { channel: CHANNEL, reply: id, body: body ?? null }
        : { channel: CHANNEL, reply: id, body: null, error: describeError(error) },
    );
  }

  private expire(id: number): void {
    const pending = this.pending.get(id);
    if (pending === undefined) return;
    const quiet = performance.now() - Math.max(this.heard, pending.sent);
    if (quiet < pending.timeoutMs) {
      pending.timer = setTimeout(() => this.expire(id), pending.timeoutMs - quiet);
      return;
    }
    this.pending.delete(id);
    pending.reject(new ChannelError(`no answer to ${pending.kind} within ${pending.timeoutMs} ms`, 'CHANNEL_TIMEOUT'));
  }

  private receive(raw: unknown): void {
    if (!isChannelMessage(raw)) return;
    this.heard = performance.now();
    const message = raw as Message;
    if (!('reply' in message)) return this.answer(message);
    const pending = this.pending.get(message.reply);
    if (pending === undefined) return; // answered too late: its timer has failed it
    this.pending.delete(message.reply);
    clearTimeout(pending.timer);
    if (message.error === undefined) pending.resolve(message.body);
    else pending.reject(new ChannelError(message.error, 'CHANNEL_REMOTE'));
  }

  /** Hands a notification or a request to its handler; a request gets what it returns (or resolves to). */
  private answer(message: { kind: string; body: unknown; request?: number }): void {
    const answer = this.handlers.get(message.kind);
    const id = message.request;
    if (answer === undefined) {
      if (id !== undefined) this.reply(id, null, unhandled(message.kind));
      return;
    }
    let result: unknown;
    try {
      result = answer(message.body);
    } catch (error: unknown) {
      if (id !== undefined) this.reply(id, null, error);
      return;
    }
    if (id === undefined) return;
    if (result instanceof Promise) {
      result.then(
        (body: unknown) => this.reply(id, body),
        (error: unknown) => this.reply(id, null, error),
      );
    } else this.reply(id, result);
  }

  private refusal(kind: string): ChannelError | undefined {
    const { closed, bounds } = this;
    if (closed !== undefined) {
      return new ChannelError(`cannot ask for ${kind}: the channel is closed (${closed.message})`, 'CHANNEL_CLOSED');
    }
    if (this.behind)
      return new ChannelError(`cannot ask for ${kind}: the other end takes no messages now`, 'CHANNEL_FULL');
    if (bounds !== undefined && this.pending.size >= bounds.maxPending) {
      return new ChannelError(
        `cannot ask for ${kind}: ${bounds.maxPending} requests wait for an answer`,
        'CHANNEL_FULL',
      );
    }
    return undefined;
  }
}
