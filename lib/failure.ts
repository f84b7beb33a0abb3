// What the handler does with the unexpected: the cause to the `onError` hook, the client the
// fixed 500 (or, mid-answer, a cut connection). The hook's own failure never takes the
// request, or the server, down with it.

import type { IncomingMessage, ServerResponse } from 'node:http';
import { ERRORS } from './messages.js';
import { pathForLog, requestFacts } from './request.js';
import { sendError } from './respond.js';

export interface Failures {
  /** The cause of an answer already chosen (a search's 500) to the hook. */
  report(error: unknown, req: IncomingMessage): void;
  /** Anything unexpected: the cause to the hook, the client a 500 (or a cut connection, mid-answer). */
  fail(error: unknown, req: IncomingMessage, res: ServerResponse): void;
}

export function createFailures(onError: (error: unknown, req: IncomingMessage, path: string) => void): Failures {
  function report(error: unknown, req: IncomingMessage): void {
    // The path a log line may show: the routed one, or the target's for a request not routed yet.
    const path = requestFacts(req)?.path ?? pathForLog(req.url ?? '');
    // A failing error hook must not take the request, or the server, down with it, nor lose
    // the cause: stderr has both. An async hook fails by its promise, any thenable (one of
    // another realm, a library's) too.
    const failed = (hookError: unknown): void =>
      console.error(`booking-search-server: onError failed (${text(hookError)}) on ${req.method} ${path}:`, error);
    try {
      const returned: unknown = onError(error, req, path);
      if (typeof (returned as PromiseLike<unknown> | undefined)?.then === 'function') {
        Promise.resolve(returned).catch(failed);
      }
    } catch (hookError: unknown) {
      failed(hookError);
    }
  }
  return {
    report,
    fail(error, req, res) {
      report(error, req);
      if (res.headersSent) res.destroy();
      else sendError(res, ERRORS.internal);
    },
  };
}

/** `value` as text, also one that has none (an object without a prototype throws in String()). */
function text(value: unknown): string {
  try {
    return String(value);
  } catch {
    return 'a value without text';
  }
}
