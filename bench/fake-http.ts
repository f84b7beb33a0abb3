// A request and its response without node:http's parser or the kernel, for the in-process
// benchmarks (bench/phases.ts, bench/interleaved.ts): an HTTP/1.1 GET with Basic
// credentials on a connection from 127.0.0.1, whose socket takes every byte written.

import { IncomingMessage, ServerResponse } from 'node:http';
import { Duplex } from 'node:stream';

// biome-ignore lint/suspicious/noExplicitAny: node:http's internals (assignSocket, shouldKeepAlive) are not in its types.
type Any = any;

/** A connection from 127.0.0.1 that takes every byte written and sends nothing. */
export function fakeSocket(): Any {
  const s = new Duplex({ read() {}, write: (_chunk, _encoding, done) => done() }) as Any;
  s.remoteAddress = ['127', '0', '0', '1'].join('.');
  return s;
}

/** `GET url` on `connection` with `authorization`, and its response, which emits close once written. */
export function fakeExchange(connection: Any, url: string, authorization: string): [Any, Any] {
  const req = new IncomingMessage(connection) as Any;
  req.url = url;
  req.method = 'GET';
  req.httpVersion = '1.1';
  req.httpVersionMajor = 1;
  req.httpVersionMinor = 1;
  req.rawHeaders = ['Host', '127.0.0.1', 'Authorization', authorization];
  req.headers = { host: '127.0.0.1', authorization };
  const res = new ServerResponse(req) as Any;
  res.shouldKeepAlive = true; // as node:http decides for an HTTP/1.1 request
  res.assignSocket(fakeSocket());
  // node:http emits close once the answer is out; here, once it is written.
  res.once('finish', () => res.emit('close'));
  return [req, res];
}

/**
 * `handler` behind a build's access log (`log`, its bin/base/log.js or bin/log.js): its
 * withAccessLog, or where the listener's edge times each response and hands it to the log
 * (`accessLog`), the same done here, with the facts read by the build's `requestFacts`.
 */
export function behindAccessLog(log: Any, requestFacts: (req: Any) => Any, handler: Any): Any {
  if (log.withAccessLog !== undefined) return log.withAccessLog(handler);
  const answered = log.accessLog();
  return (req: Any, res: Any) => {
    const started = performance.now();
    res.on('close', () => {
      const facts = requestFacts(req);
      answered(res, performance.now() - started, facts, facts?.path ?? req.url);
    });
    handler(req, res);
  };
}
