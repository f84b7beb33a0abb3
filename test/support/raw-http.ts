// Raw bytes over a socket, for what no HTTP client sends: broken request lines, absolute
// targets, oversized headers, unfinished requests.

import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { assertReply, type Reply } from './helpers.js';

export interface RawReply extends Reply {
  /** Whether the server closed the connection after its answer. */
  closed: boolean;
}

/** Sends `payload` to `origin` and reads one response; waits at most `timeoutMs` for it and the close. */
export function rawRequest(
  origin: string,
  payload: string | Buffer,
  timeoutMs = 10_000,
  /** The client's end of the connection closed after the payload, as `shutdown(SHUT_WR)` does. */
  halfClose = false,
): Promise<RawReply> {
  const { hostname, port } = new URL(origin);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    let closed = false;
    const finish = (): void => {
      clearTimeout(timer);
      const text = Buffer.concat(chunks).toString('utf8');
      const split = text.indexOf('\r\n\r\n');
      if (split === -1) return reject(new Error(`no complete response: ${JSON.stringify(text)}`));
      const [statusLine = '', ...lines] = text.slice(0, split).split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of lines) {
        const colon = line.indexOf(':');
        headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
      }
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body: text.slice(split + 4), closed });
    };
    const timer = setTimeout(() => {
      socket.destroy();
      finish();
    }, timeoutMs);
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('end', () => (closed = true));
    socket.on('close', finish);
    socket.on('error', () => undefined);
    if (halfClose) socket.end(payload);
    else socket.write(payload);
  });
}

/** docs/API.md, Errors: each status of the HTTP layer has one code. */
const PROTOCOL_CODES: Record<number, string> = {
  400: 'bad_request',
  405: 'method_not_allowed',
  408: 'request_timeout',
  417: 'expectation_failed',
  431: 'headers_too_large',
};

/** docs/API.md: a protocol error is JSON with the common headers, and the connection closes. */
export function assertProtocolError(reply: RawReply, status: number, fehler: string): void {
  assertReply(reply, status, { fehler, code: PROTOCOL_CODES[status] });
  assert.equal(reply.headers.connection, 'close');
  // RFC 9110 §6.6.1: an origin server dates every answer, those written past node:http too.
  assert.ok(!Number.isNaN(Date.parse(reply.headers.date ?? '')), `Date: ${reply.headers.date}`);
  assert.ok(reply.closed, 'the server closed the connection');
}

/**
 * Sends `parts` to `origin`, each after the answers to the one before have arrived (`gapMs`
 * without a byte more), and reads every byte until the server closes; waits at most `timeoutMs`.
 */
export function rawExchange(
  origin: string,
  parts: readonly string[],
  gapMs = 200,
  timeoutMs = 10_000,
): Promise<{ text: string; closed: boolean }> {
  const { hostname, port } = new URL(origin);
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    let closed = false;
    let next = 0;
    let quiet: NodeJS.Timeout | undefined;
    const send = (): void => {
      if (next < parts.length && socket.writable) socket.write(parts[next++] as string);
      if (next < parts.length) quiet = setTimeout(send, gapMs);
    };
    const timer = setTimeout(() => socket.destroy(), timeoutMs);
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      clearTimeout(quiet);
      if (next < parts.length) quiet = setTimeout(send, gapMs);
    });
    socket.on('end', () => (closed = true));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(timer);
      clearTimeout(quiet);
      resolve({ text: Buffer.concat(chunks).toString('utf8'), closed });
    });
    send();
  });
}

/** The status of every response in `text`, the bytes a connection received, in order. */
export function statusesIn(text: string): number[] {
  return [...text.matchAll(/HTTP\/1\.[01] (\d{3}) /g)].map((m) => Number(m[1]));
}
