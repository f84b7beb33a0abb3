// Several books behind one listener: each request goes to the handler whose base path its
// path names (docs/API.md, Books). createHandler serves one book; this only chooses which.
//
// A path names a book when it starts with `{basePath}/api/`, the part createHandler owns
// (with a `next`, it hands on everything else); the longest base path wins, so `/a/b` is
// not taken by `/a`. A path that names no book goes to `next` when there is one, and to
// `fallback` when not: the handler that authenticates, as every answer must before it
// says a path does not exist, and then answers 404.

import { basePathMisuse, normalBasePath } from './base-path.js';
import { ensure } from './errors.js';
import { originForm } from './request.js';
import type { Next, RequestHandler } from './types.js';

const API = '/api/';

/** One book's handler and the base path it was created with. */
export interface Mount {
  /** The handler's `basePath` option, e.g. `"/mueller"`; a trailing slash is ignored. */
  readonly basePath: string;
  readonly handler: RequestHandler;
}

/**
 * A request handler that passes each request to the mount its path names, or to `fallback`
 * (with no `next`). Throws a TypeError naming the mount when a base path is not one or is
 * given twice.
 */
export function mountHandlers(mounts: readonly Mount[], fallback: RequestHandler): RequestHandler {
  ensure(Array.isArray(mounts), 'mounts must be an array of { basePath, handler }');
  ensure(typeof fallback === 'function', 'fallback must be a request handler');
  const prefixes = new Map<string, RequestHandler>();
  mounts.forEach((mount, index) => {
    const basePath = normalBasePath(mount?.basePath);
    ensure(basePath !== undefined, basePathMisuse(`mounts[${index}].basePath`, mount?.basePath));
    ensure(typeof mount.handler === 'function', `mounts[${index}].handler must be a request handler`);
    const prefix = `${basePath}${API}`;
    ensure(!prefixes.has(prefix), `mounts[${index}].basePath "${basePath}" is given twice`);
    prefixes.set(prefix, mount.handler);
  });
  const longest = Math.max(0, ...[...prefixes.keys()].map((prefix) => prefix.length));
  return (req, res, next?: Next) => {
    // An unusable target (user info in an absolute-form authority) is the fallback's 400.
    const path = originForm(req.url ?? '/');
    if (path !== undefined) {
      // A book's prefix ends with "/api/": the path up to the end of each "/api/" in it,
      // the longest first, is looked up, instead of trying every book's prefix in turn,
      // which a request of a service of 100 books paid for (BENCHMARKS.md, "Small costs").
      // Only where a prefix can end: a target of a thousand "/api/" costs no more than one.
      const from = path.lastIndexOf(API, longest - API.length);
      for (let at = from; at !== -1; at = at === 0 ? -1 : path.lastIndexOf(API, at - 1)) {
        const handler = prefixes.get(path.slice(0, at + API.length));
        if (handler !== undefined) return handler(req, res, next);
      }
    }
    if (next !== undefined && path !== undefined) return next();
    fallback(req, res);
  };
}
