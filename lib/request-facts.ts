// What the handler learned about a request that a log line (or a count of the CLI's
// /metrics) may show: the endpoint its path names, the client address after the proxy
// rule, the username its credentials named, and the user whose credentials were accepted.
// Kept on the request under a symbol of this module, which no other code can name or
// collide with: a WeakMap beside the request cost more CPU a request (its entry is an
// ephemeron, which every scavenge of the young generation visits again; BENCHMARKS.md,
// "Small costs").

import type { IncomingMessage } from 'node:http';

export interface RequestFacts {
  /** Which endpoint the path names: `{base}/api/v1/status`, `…/buchungen`, `…/abgleich`, or none of them. */
  endpoint: 'status' | 'search' | 'abgleich' | 'other';
  /** The socket's address, or the trusted proxy's `X-Forwarded-For` entry. */
  clientAddress: string;
  /** The username of accepted credentials; `undefined` until (or unless) they are. */
  user: string | undefined;
  /**
   * The username of well-formed Basic credentials, accepted or not, as the client sent it
   * (untrusted: escape it for a log line); `undefined` without such credentials.
   */
  attempted: string | undefined;
}

const FACTS = Symbol('booking-search-server request facts');
type WithFacts = IncomingMessage & { [FACTS]?: RequestFacts };

/** What the handler recorded for `req`; `undefined` for a request it never saw. */
export function requestFacts(req: IncomingMessage): RequestFacts | undefined {
  return (req as WithFacts)[FACTS];
}

export function recordFacts(
  req: IncomingMessage,
  clientAddress: string,
  endpoint: RequestFacts['endpoint'] = 'other',
): RequestFacts {
  const recorded: RequestFacts = { endpoint, clientAddress, user: undefined, attempted: undefined };
  (req as WithFacts)[FACTS] = recorded;
  return recorded;
}
