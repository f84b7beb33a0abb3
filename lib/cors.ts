// Browser clients on other origins (docs/API.md, Browser clients (CORS); Fetch standard,
// "CORS protocol"). Off while the list is empty.

import type { IncomingMessage } from 'node:http';

// An origin as a browser serialises it (RFC 6454 §6.2): scheme "://" host [ ":" port ],
// http or https only, no user info, path, query, fragment or wildcard. The host is a
// DNS name or IPv4 address (letters, digits, "-", ".") or a bracketed IPv6 address.
// Whether it is also *canonical* (lowercase, no default port) is checked against URL.
const ORIGIN = /^https?:\/\/(?:[a-z0-9.-]+|\[[0-9a-f:.]+\])(?::[0-9]{1,5})?$/i;
/** What a preflight may ask for on a path, and what its answer grants (Fetch standard, "CORS protocol"). */
interface Grant {
  methods: ReadonlySet<string>;
  /** The request headers it may ask for, lowercase (a comma-separated list in the request). */
  headers: ReadonlySet<string>;
  allowMethods: string;
  allowHeaders: string;
}

/** docs/API.md: the two reading paths, and the reconciliation's POST with its JSON body. */
export const GRANTS = {
  read: {
    methods: new Set(['GET', 'HEAD']),
    headers: new Set(['authorization']),
    allowMethods: 'GET, HEAD',
    allowHeaders: 'Authorization',
  },
  post: {
    methods: new Set(['POST']),
    headers: new Set(['authorization', 'content-type']),
    allowMethods: 'POST',
    allowHeaders: 'Authorization, Content-Type',
  },
} as const satisfies Record<string, Grant>;

// A cache must not give an answer to one origin to another (Fetch standard, "CORS protocol and HTTP caches").
const VARY = ['Vary', 'Origin'] as const;

export interface Cors {
  /** `responseHeaders` of a request without `Origin`: the same for each, so that none need ask. */
  readonly withoutOrigin: readonly string[];
  /** Headers for every response to `req` that is not a preflight (may be empty). */
  responseHeaders(req: IncomingMessage): readonly string[];
  /** The headers of the 204 answering `req` when it is a preflight that `grant` answers, else `undefined`. */
  preflight(req: IncomingMessage, grant: Grant): readonly string[] | undefined;
}

/**
 * Checks `origins` (throws a TypeError naming the option and the bad value) and builds the
 * CORS headers for them. An empty list turns CORS off: no header is ever added.
 */
export function createCors(origins: unknown): Cors {
  const allowed = new Set(validateCorsOrigins(origins));
  if (allowed.size === 0) return { withoutOrigin: [], responseHeaders: () => [], preflight: () => undefined };

  const listedOrigin = (req: IncomingMessage): string | undefined => {
    const origin = req.headers.origin;
    return origin !== undefined && allowed.has(origin) ? origin : undefined;
  };

  return {
    withoutOrigin: VARY,
    responseHeaders(req) {
      const origin = listedOrigin(req);
      if (origin === undefined) return VARY;
      return [
        'Access-Control-Allow-Origin',
        origin,
        'Access-Control-Allow-Credentials',
        'true',
        // A page may read how long a 429 lasts (docs/API.md, Throttling).
        'Access-Control-Expose-Headers',
        'Retry-After',
        'Vary',
        'Origin',
      ];
    },

    preflight(req, grant) {
      if (req.method !== 'OPTIONS') return undefined;
      const origin = listedOrigin(req);
      const method = req.headers['access-control-request-method'];
      if (origin === undefined || method === undefined || !grant.methods.has(method)) return undefined;
      if (!onlyRequestableHeaders(req.headers['access-control-request-headers'], grant.headers)) return undefined;
      return [
        'Access-Control-Allow-Origin',
        origin,
        'Access-Control-Allow-Credentials',
        'true',
        'Access-Control-Allow-Methods',
        grant.allowMethods,
        'Access-Control-Allow-Headers',
        grant.allowHeaders,
        'Access-Control-Max-Age',
        '600',
        'Vary',
        'Origin',
      ];
    },
  };
}

/** The list itself, or a TypeError naming `options.corsOrigins` and the value that is wrong. */
export function validateCorsOrigins(origins: unknown): readonly string[] {
  if (!Array.isArray(origins)) {
    throw new TypeError('options.corsOrigins must be an array of origins such as ["https://buchhaltung.example"]');
  }
  origins.forEach((origin: unknown, index) => {
    const problem = originProblem(origin);
    if (problem !== undefined) throw new TypeError(`options.corsOrigins[${index}] ${problem}`);
  });
  return origins as string[];
}

/** Why `origin` cannot be listed, or `undefined` when it can. */
export function originProblem(origin: unknown): string | undefined {
  if (typeof origin !== 'string') return `must be a string, not ${typeof origin}`;
  const shown = JSON.stringify(origin);
  if (origin.includes('*')) {
    return `${shown} is refused: no wildcard; with credentials it would let any web page read the bookings`;
  }
  if (!ORIGIN.test(origin)) {
    return `${shown} is not an origin: give scheme://host[:port] with http or https, no path, e.g. "https://buchhaltung.example"`;
  }
  let canonical: string;
  try {
    canonical = new URL(origin).origin;
  } catch {
    return `${shown} is not an origin: the host or port is not valid`;
  }
  // A browser sends the origin lowercase and without a default port; a list entry in
  // another spelling would never match, so it is refused rather than silently ignored.
  if (canonical !== origin) return `${shown} is not written as a browser sends it: write ${JSON.stringify(canonical)}`;
  return undefined;
}

function onlyRequestableHeaders(requested: string | undefined, requestable: ReadonlySet<string>): boolean {
  if (requested === undefined) return true;
  return requested
    .split(',')
    .map((name) => name.trim().toLowerCase())
    .every((name) => name === '' || requestable.has(name));
}
