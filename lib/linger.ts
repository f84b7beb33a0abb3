// What is read of a connection after the answer that closes it (lib/respond.ts decides which
// answer does). The requests that follow are dropped unanswered, and past a bound read no
// more (`stopReading`). A body the answer came before is read and dropped: closed with its
// bytes unread, the kernel resets the connection, and a client that writes its whole body
// before it reads (Python's urllib, for the 401 challenge, a 413 or a 415) saw its write fail
// and never the answer. So, as nginx's and Apache's lingering close, the answer goes out, then
// the end of what the server sends, and what the client still sends is dropped, never kept,
// until it closes, or at most LINGER_BYTES more, or the request timeout (at most LINGER_MS),
// whichever comes first; a body announced larger is not waited for: closed at once.

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';

/** How much more of a body a client may send after the answer before its connection is closed all the same. */
export const LINGER_BYTES = 4 * 1024 * 1024;

/** How long, when the server's request timeout is longer or none (nginx's lingering_time). */
export const LINGER_MS = 30_000;

const BODY = Symbol('a body left unread');
const DROPPED = Symbol('the bytes of it dropped');

type Lingering = Socket & { [BODY]?: IncomingMessage; server?: { requestTimeout?: number } };
type Dropped = IncomingMessage & { [DROPPED]?: number };

/**
 * The answer on `res`, which closes its connection, leaves its request's body unread: from
 * now on the body is read and dropped, and once the answer is out the connection lingers
 * (above) instead of closing at once. node:http closes a connection after its last answer by
 * `destroySoon`, which this replaces for its socket.
 */
export function lingerAfter(res: ServerResponse): void {
  const req = res.req;
  if (Number(req.headers['content-length'] ?? 0) > LINGER_BYTES) return;
  const socket = req.socket as Lingering;
  socket[BODY] = req;
  socket.destroySoon = linger;
  // Read by a listener of its own, not node:http's dump of it after the answer, which counts
  // nothing; resumed, a body its reader paused at its limit too.
  req.on('data', countDropped).resume();
}

function countDropped(this: Dropped, chunk: Buffer): void {
  const dropped = (this[DROPPED] ?? 0) + chunk.length;
  this[DROPPED] = dropped;
  if (dropped > LINGER_BYTES) this.socket.destroy();
}

function linger(this: Lingering): void {
  const req = this[BODY];
  delete this[BODY];
  delete (this as { destroySoon?: unknown }).destroySoon;
  // A body node:http has read to its end left nothing to reset the connection.
  if (req === undefined || req.complete) return this.destroySoon();
  // The answer, then the end of what is sent (node:http's connections stay open for reading).
  this.end();
  const timeout = this.server?.requestTimeout ?? 0;
  const timer = setTimeout(() => this.destroy(), timeout > 0 ? Math.min(timeout, LINGER_MS) : LINGER_MS);
  timer.unref();
  this.once('close', () => clearTimeout(timer));
}

/**
 * How often a connection read no more is looked at: closed once nothing more of its answers
 * left since the last look. Over a Unix socket a client that reads nothing kept it, with the
 * requests dropped on it, until --send-timeout (over TCP node:http ends it).
 */
const STALLED_LOOK_MS = 100;

/**
 * No more of `socket` is read (`first`: from now on): node:http parses what it has read already and no more, as when
 * it pauses a connection whose answers wait (`_paused`, which it alone clears, once they have left; the answer that
 * closes the connection then ends it). Once its answers stand still, it is closed.
 */
export function stopReading(socket: Socket & { _paused?: boolean }, first: boolean): void {
  if (first) {
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
