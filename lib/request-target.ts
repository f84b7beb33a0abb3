// The request target (RFC 9112 §3.2): what the handler routes on and what a log may show.

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
