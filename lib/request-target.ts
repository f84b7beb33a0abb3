// The request target (RFC 9112 §3.2): what the handler routes on and what a log may show.

// `""` or `/segment/segment…`: no empty segment, no query or fragment, no white space.
const BASE_PATH = /^(?:\/[^/?#\s]+)*$/;

/**
 * A base path (docs/API.md, Paths) without its trailing slashes (`/kasse/` → `/kasse`), or
 * `undefined` when it is none: `""` or `/segment/…`, no empty segment, query, fragment or space.
 */
export function normalBasePath(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  const path = value.replace(/\/+$/, '');
  return BASE_PATH.test(path) ? path : undefined;
}

// RFC 9112 §3.2.2: absolute-form `scheme://authority/path?query`, answered like its path.
const ABSOLUTE_FORM = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#]*/;

/**
 * The request target in origin form: an absolute-form target without its scheme and
 * authority; `undefined` when the authority holds user info (RFC 9110 §4.2.4: treat it
 * as an error — it would be a password in the request line).
 */
export function originForm(target: string): string | undefined {
  if (target.startsWith('/')) return target;
  const authority = ABSOLUTE_FORM.exec(target);
  if (authority === null) return target;
  if (authority[0].includes('@')) return undefined;
  const rest = target.slice(authority[0].length);
  return rest.startsWith('/') ? rest : `/${rest}`;
}

/**
 * The path of a request target for a log line: no query, and never the scheme or authority
 * of an absolute-form target, which may hold a user and password (`http://user:pw@host/`).
 */
export function pathForLog(target: string): string {
  const authority = ABSOLUTE_FORM.exec(target);
  const rest = authority === null ? target : target.slice(authority[0].length);
  const mark = rest.search(/[?#]/);
  return (mark === -1 ? rest : rest.slice(0, mark)) || '/';
}
