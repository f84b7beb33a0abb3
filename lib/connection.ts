// What one connection may have waiting (docs/API.md, Responses in general): requests whose
// answers its client has not taken are bounded, and after an answer that closes the
// connection no later request on it is processed, and no more of it is read.
//
// node:http parses every request of a chunk it reads (a 64 KiB read holds hundreds of
// pipelined requests) and calls the handler for each, also after an answer that closes
// the connection, and holds each answer until the one before it has been taken by the
// kernel. A client that pipelined and never read so had thousands of requests answered and
// held per connection, and every one of them cost a request's work.

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';

/**
 * Requests of one connection whose answers have not been taken yet (by the kernel, from
 * node:http's queue) at which the next is refused with `429` and `Connection: close`:
 * twice the waiting searches one address may have (`maxWaitingSearches`, 64), so a client
 * that pipelines searches meets that 429 first, and far above what a client pipelines that
 * reads its answers. node:http then closes the connection once the client has taken what
 * was answered before; a client that reads nothing holds no more than these answers.
 */
export const MAX_UNANSWERED = 128;

/** Requests read after the answer that closes their connection, at which it is read no more. */
const MAX_DROPPED = 1_024;

const UNANSWERED = Symbol('unanswered requests');
const DROPPED = Symbol('dropped requests');
const ADMISSION = Symbol('admission');
const CLOSING = Symbol('closing');
const AFTER = Symbol('after the answers');

type Admission = 'process' | 'refuse' | 'drop';

interface Counted {
  [UNANSWERED]?: number;
  [CLOSING]?: true;
  [DROPPED]?: number;
  [AFTER]?: () => void;
}

/**
 * What the handler does with `req`: `process` it; `refuse` it with `429` and
 * `Connection: close` (its connection has `MAX_UNANSWERED` answers its client has not
 * taken); or `drop` it, unanswered, because an answer on its connection already closes it
 * (RFC 9112 §9.6: the server processes no further request; node:http drops what is left
 * when the connection ends). A request is counted once: asked again (the CLI's listener
 * asks before the handler from `createHandler` does), `admit` says what it said first.
 */
export function admit(req: IncomingMessage, res: ServerResponse): Admission {
  const asked = res as ServerResponse & { [ADMISSION]?: Admission };
  const first = asked[ADMISSION];
  if (first !== undefined) return first;
  const socket = req.socket as IncomingMessage['socket'] & Counted;
  let admission: Admission = 'drop';
  if (socket[CLOSING] === true) {
    // What a client sent after the answer that closes is read and dropped: closed with
    // unread bytes, its connection would be reset, and the answers on their way to it lost.
    // But each dropped request costs node:http its objects until the connection ends: past
    // MAX_DROPPED (far more than a client pipelines that reads), it is read no more.
    const dropped = (socket[DROPPED] ?? 0) + 1;
    socket[DROPPED] = dropped;
    if (dropped > MAX_DROPPED) stopReading(socket);
  } else {
    const unanswered = socket[UNANSWERED] ?? 0;
    socket[UNANSWERED] = unanswered + 1;
    // A response finishes once: on() spares the wrapper once() makes for every request.
    res.on('finish', taken);
    admission = unanswered < MAX_UNANSWERED ? 'process' : 'refuse';
  }
  asked[ADMISSION] = admission;
  return admission;
}

function taken(this: ServerResponse): void {
  const socket = this.req.socket as IncomingMessage['socket'] & Counted;
  const left = (socket[UNANSWERED] ?? 1) - 1;
  socket[UNANSWERED] = left;
  const then = socket[AFTER];
  if (left === 0 && then !== undefined) {
    delete socket[AFTER];
    then();
  }
}

/**
 * `then`, once the kernel has taken the answers to every request of `socket` that the
 * handler admitted: at once when none is waiting; else after the last one, whether it is
 * still being written, waits in node:http's queue behind another or has not been given yet
 * (a hash check, a search in its turn). For what is written to the socket past node:http
 * (lib/protocol-errors.ts), which must come after them. A connection that closes first
 * never calls it. A later call replaces an earlier one that still waits.
 */
export function afterAnswers(socket: Duplex, then: () => void): void {
  const counted = socket as Duplex & Counted;
  if ((counted[UNANSWERED] ?? 0) === 0) return then();
  counted[AFTER] = then;
}

/** The answer on `res` closes its connection: no later request on it is processed. */
export function markClosing(res: ServerResponse): void {
  const socket = res.req?.socket as (IncomingMessage['socket'] & Counted) | undefined;
  if (socket !== undefined) socket[CLOSING] = true;
}

/**
 * How often a connection read no more (past `MAX_DROPPED`) is looked at: once nothing more
 * of its answers has left since the last look, it is closed. Over TCP the kernel's buffers
 * take what was answered at once and node:http ends it; over a Unix socket they hold far
 * less, and a client that reads nothing kept the connection, with the thousands of
 * requests dropped on it, until --send-timeout, and reconnected as fast as it was closed.
 * A client that reads takes its answers well within.
 */
const STALLED_LOOK_MS = 100;

/**
 * No more of `socket` is read: node:http parses what it has read already and no more, as
 * when it pauses a connection whose answers wait (`_paused`, which it alone clears, once
 * they have left; the answer that closes the connection then ends it). Once its answers
 * stand still, it is closed.
 */
function stopReading(socket: IncomingMessage['socket'] & Counted & { _paused?: boolean }): void {
  if (socket[DROPPED] === MAX_DROPPED + 1) {
    // node:http reads on once what it holds to write drains (it clears `_paused` and resumes
    // the socket): paused again first, its resume finds the connection paused and keeps it so.
    socket.prependListener('resume', () => (socket._paused = true));
    closeOnceStalled(socket, -1);
  }
  if (socket._paused === true) return;
  socket._paused = true;
  socket.pause();
}

function closeOnceStalled(socket: Duplex & { bytesWritten: number }, written: number): void {
  if (socket.destroyed) return;
  if (socket.bytesWritten === written) return void socket.destroy();
  setTimeout(() => closeOnceStalled(socket, socket.bytesWritten), STALLED_LOOK_MS).unref();
}
