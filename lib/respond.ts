// The one place that writes responses: every status goes through `send`, which always
// sets the same headers (docs/API.md, Responses in general).

import type { IncomingMessage, ServerResponse } from 'node:http';

/** Writes a complete JSON response; `HEAD` gets the same headers and no body. */
export function send(
  req: IncomingMessage,
  res: ServerResponse,
  status: number,
  json: string,
  extraHeaders: readonly string[] = [],
): void {
  res.writeHead(status, [
    'Content-Type',
    'application/json; charset=utf-8',
    'Content-Length',
    String(Buffer.byteLength(json)),
    'Cache-Control',
    'no-store',
    'X-Content-Type-Options',
    'nosniff',
    ...extraHeaders,
  ]);
  res.end(req.method === 'HEAD' ? undefined : json);
}

/** `{"fehler": message}` with `status`. */
export function sendError(
  req: IncomingMessage,
  res: ServerResponse,
  status: number,
  message: string,
  extraHeaders: readonly string[] = [],
): void {
  send(req, res, status, JSON.stringify({ fehler: message }), extraHeaders);
}
