// What is read of a connection after the answer that closes it (lib/respond.ts decides which
// answer does). The requests that follow are dropped unanswered, and past a bound read no
// more (`stopReading`). A body the answer came before is read and dropped: closed with its
// bytes unread, the kernel resets the connection, and a client that writes its body while or
// before it reads (Python's urllib, Node's http.request, Go's net/http, for the 401 challenge,
// a 413 or a 415) saw its write fail and never the answer. So, as nginx's and Apache's
// lingering close, the answer goes out, then the end of what the server sends, and the rest of
// the body is dropped, never kept, until it ends (the connection closes, read no further than
// the read that held its end), the request timeout (at most LINGER_MS) passes, or LINGER_BYTES
// of it are dropped, a piece counted as PIECE_BYTES at least (a chunked body cut into a parser
// callback per byte is cut off early): then it is read no more and closed once its answer
// stands still (`stopReading`), a reset the client meets long after the answer reached it.

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';

/** The most of a body dropped after its answer before its connection is closed. */
export const LINGER_BYTES = 4 * 1024 * 1024;

/**
 * The least a piece of body dropped counts as: a parser callback each costs node:http more
 * than reading a few hundred bytes does.
 */
export const PIECE_BYTES = 256;

/** How long, when the server's request timeout is longer or none (nginx's lingering_time). */
export const LINGER_MS = 30_000;

const BODY = Symbol('a body left unread');
const DROPPED = Symbol('bytes of body dropped');

type Lingering = Socket & { [BODY]?: IncomingMessage; server?: { requestTimeout?: number } };

/**
 * The answer on `res`, which closes its connection, leaves its request's body unread: from
 * now on the body is read and dropped, and once the answer is out the connection lingers
 * (above) instead of closing at once. node:http closes a connection after its last answer
 * by `destroySoon`, which this replaces for its socket.
 */
export function lingerAfter(res: ServerResponse): void {
  const req = res.req;
  const socket = req.socket as Lingering;
  socket[BODY] = req;
  socket.destroySoon = linger;
  // Resumed, a body its reader paused too. Its end, and each piece of it, is heard once
  // node:http has parsed the read that held it, before it reads again.
  req.once('end', bodyEnded).on('data', counted).resume();
}

/** A piece of the body dropped: past LINGER_BYTES, nothing more is read. */
function counted(this: IncomingMessage & { [DROPPED]?: number }, piece: Buffer): void {
  this[DROPPED] = (this[DROPPED] ?? 0) + Math.max(piece.length, PIECE_BYTES);
  if (this[DROPPED] <= LINGER_BYTES) return;
  this.off('data', counted);
  // Closed once its answer stands still: the client has that moment more to read it.
  stopReading(this.socket);
}

/** The body is read: nothing more of its connection is, and once the answer is out it closes. */
function bodyEnded(this: IncomingMessage): void {
  const socket = this.socket as Lingering;
  if (socket.destroyed) return;
  stopReading(socket);
  // Still `linger` while the answer is on its way; it finds the body complete and closes.
  if (socket[BODY] === undefined) socket.destroySoon();
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

const STOPPED = Symbol('read no more');

/**
 * No more of `socket` is read: node:http parses what it has read already and no more, as when it pauses a connection
 * whose answers wait (`_paused`, which it alone clears, once they have left; the answer that closes the connection
 * then ends it). Once its answers stand still, it is closed. Asked again (a dropped request more, a body's end),
 * it only pauses the socket again.
 */
export function stopReading(socket: Socket & { _paused?: boolean; [STOPPED]?: true }): void {
  if (socket[STOPPED] !== true) {
    socket[STOPPED] = true;
    // node:http reads on once what it holds to write drains (it clears `_paused` and resumes
    // the socket): paused again first, its resume finds the connection paused and keeps it so.
    socket.prependListener('resume', () => (socket._paused = true));
    closeOnceStalled(socket, -1);
  }
  if (socket._paused === true) return;
  socket._paused = true;
  socket.pause();
}

function closeOnceStalled(
  socket: Duplex & { bytesWritten: number; _httpMessage?: { headersSent: boolean } | null },
  written: number,
): void {
  if (socket.destroyed) return;
  // An answer not begun (node:http's first in line: a password check, a search in its turn,
  // with the closing answer queued behind it) is no stall: it is waited for, within its own bounds.
  if (socket.bytesWritten === written && socket._httpMessage?.headersSent !== false) return void socket.destroy();
  setTimeout(() => closeOnceStalled(socket, socket.bytesWritten), STALLED_LOOK_MS).unref();
}
