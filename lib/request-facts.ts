// What the handler learned about a request that a log line may show: the client address
// after the proxy rule, the username its credentials named, and the user whose credentials
// were accepted. Kept beside the
// request, not on it, so nothing is added to node:http's objects.

import type { IncomingMessage } from 'node:http';

export interface RequestFacts {
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

const facts = new WeakMap<IncomingMessage, RequestFacts>();

/** What the handler recorded for `req`; `undefined` for a request it never saw. */
export function requestFacts(req: IncomingMessage): RequestFacts | undefined {
  return facts.get(req);
}

export function recordFacts(req: IncomingMessage, clientAddress: string): RequestFacts {
  const recorded: RequestFacts = { clientAddress, user: undefined, attempted: undefined };
  facts.set(req, recorded);
  return recorded;
}
