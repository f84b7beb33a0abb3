// What the running CLI writes: every line starts with an ISO 8601 time (UTC), or is one
// JSON object with a `time` field (`--log-format json`). stdout carries the greeting and
// the access log, stderr warnings and errors. Never a query string, never a secret.

import type { IncomingMessage, ServerResponse } from 'node:http';
import { requestFacts } from '../lib/request-facts.js';
import { pathForLog } from '../lib/request-target.js';

export type LogFormat = 'text' | 'json';

let format: LogFormat = 'text';

export function setLogFormat(chosen: LogFormat): void {
  format = chosen;
}

// One Date and one toISOString per millisecond, not per line: the access log stays cheap.
let cachedMs = -1;
let cachedTime = '';

export function isoTime(): string {
  const ms = Date.now();
  if (ms !== cachedMs) {
    cachedMs = ms;
    cachedTime = new Date(ms).toISOString();
  }
  return cachedTime;
}

function formatMessage(message: string): string {
  return format === 'json' ? `${JSON.stringify({ time: isoTime(), message })}\n` : `${isoTime()} ${message}\n`;
}

/** A warning or an error: one line on stderr. */
export function logLine(message: string): void {
  process.stderr.write(formatMessage(message));
}

/** Lines that tell the admin what the service does (the listening line first): stdout. */
export function logInfo(lines: readonly string[]): void {
  process.stdout.write(lines.map(formatMessage).join(''));
}

// Access lines of one turn of the event loop go out in one write: under load a turn ends
// a dozen requests, and a write per line was a tenth of the status endpoint's cost
// (BENCHMARKS.md). The lines are written before the next turn, and at exit.
let pendingAccess = '';

function writeAccessLine(line: string): void {
  if (pendingAccess === '') setImmediate(flushAccessLog);
  pendingAccess += line;
}

function flushAccessLog(): void {
  if (pendingAccess === '') return;
  const lines = pendingAccess;
  pendingAccess = '';
  process.stdout.write(lines);
}

// stdout to a pipe or a file is written synchronously on Linux, so nothing is lost here.
process.on('exit', flushAccessLog);

/**
 * One line per request on stdout, written when the response ends: time, client address
 * (after the proxy rule), user (`-` until credentials are accepted), method, path without
 * the query, status (`aborted` / `null` when the client left first) and milliseconds.
 */
export function withAccessLog(
  handler: (req: IncomingMessage, res: ServerResponse) => void,
): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    const started = performance.now();
    res.once('close', () => {
      const ms = Math.round((performance.now() - started) * 10) / 10;
      const path = pathForLog(req.url ?? '');
      const facts = requestFacts(req);
      const address = facts?.clientAddress ?? '-';
      const user = facts?.user ?? '-';
      const finished = res.writableFinished;
      writeAccessLine(
        format === 'json'
          ? `${JSON.stringify({ time: isoTime(), address, user, method: req.method, path, status: finished ? res.statusCode : null, ms })}\n`
          : `${isoTime()} ${address} ${user} ${req.method} ${path} ${finished ? res.statusCode : 'aborted'} ${ms.toFixed(1)}ms\n`,
      );
    });
    handler(req, res);
  };
}
