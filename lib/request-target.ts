// The request target (RFC 9112 §3.2): what the handler routes on and what a log may show.

// A base path is compared with the path as the client sends it, percent-encoded and with
// its dot segments resolved, so it may hold only what every client sends as written: `""`
// or `/segment/segment…`, each segment of RFC 3986's unreserved characters (ASCII letters,
// digits, `-`, `.`, `_`, `~`) and none `.` or `..`. The sub-delimiters (`!$&'()*+,;=`),
// `:` and `@` are left out too: a path segment may hold them, but a client that builds its
// URL with encodeURIComponent or Python's quote() sends `%24` for `$`, `%40` for `@`, …
const BASE_PATH = /^(?:\/(?!\.\.?(?:\/|$))[A-Za-z0-9._~-]+)*$/;

/**
 * A base path (docs/API.md, Paths) without its trailing slashes (`/kasse/` → `/kasse`), or
 * `undefined` when it is none (basePathRefusal says why).
 */
export function normalBasePath(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  const path = value.replace(/\/+$/, '');
  return BASE_PATH.test(path) ? path : undefined;
}

/** Why a text is no base path, in a clause, and the base path to use instead. */
export interface BasePathRefusal {
  /** E.g. `a client sends "ä" percent-encoded`. */
  readonly reason: string;
  /** E.g. `/mueller` for `/müller`, `/y` for `/x/../y`, `/kasse` for `kasse`. */
  readonly instead: string;
}

/** Why `value` is no base path and what to use instead; `undefined` when it is one. */
export function basePathRefusal(value: string): BasePathRefusal | undefined {
  const path = value.replace(/\/+$/, '');
  if (BASE_PATH.test(path)) return undefined;
  const instead = likeBasePath(path);
  if (!path.startsWith('/')) return { reason: 'it must start with "/"', instead };
  const segments = path.slice(1).split('/');
  if (segments.some((segment) => segment === '.' || segment === '..'))
    return { reason: 'a client resolves "." and ".." segments before it sends the path', instead };
  if (segments.includes('')) return { reason: 'it has an empty segment ("//")', instead };
  const character = /[^A-Za-z0-9._~/-]/u.exec(path)?.[0] ?? '';
  const shown = JSON.stringify(character);
  if (character === '%') return { reason: '"%" starts a percent-encoding, and the path is compared as sent', instead };
  const who = /^[!$&'()*+,;=:@]$/.test(character) ? 'some clients send' : 'a client sends';
  return { reason: `${who} ${shown} percent-encoded`, instead };
}

const SPELLED = { ä: 'ae', ö: 'oe', ü: 'ue', Ä: 'Ae', Ö: 'Oe', Ü: 'Ue', ß: 'ss' } as const;

/** `text` made a base path: dot segments resolved, `ü` → `ue`, `é` → `e`, anything else → `-`. */
function likeBasePath(text: string): string {
  const segments: string[] = [];
  for (const given of text.split('/')) {
    if (given === '..') segments.pop();
    if (given === '' || given === '.' || given === '..') continue;
    let decoded = given;
    try {
      decoded = decodeURIComponent(given);
    } catch {
      // Not percent-encoded after all: its `%` becomes a `-` below.
    }
    const plain = decoded
      .replace(/[äöüÄÖÜß]/g, (letter) => SPELLED[letter as keyof typeof SPELLED])
      .normalize('NFKD')
      .replace(/\p{M}+/gu, '')
      .replace(/[^A-Za-z0-9._~-]+/g, '-')
      .replace(/^-+|-+$/g, '');
    if (plain !== '' && plain !== '.' && plain !== '..') segments.push(plain);
  }
  return segments.length === 0 ? '/kasse' : `/${segments.join('/')}`;
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

/**
 * The TypeError's sentence for `name` (`options.basePath`) given `value`, which is no base
 * path: what a base path is, why this one is not, and what to use instead.
 */
export function basePathMisuse(name: string, value: unknown): string {
  const rule = `${name} must be "" or a path such as "/kasse" whose segments hold only ASCII letters, digits, "-", ".", "_" and "~"`;
  if (typeof value !== 'string') return `${rule}, not ${value === null ? 'null' : typeof value}`;
  const refusal = basePathRefusal(value);
  const why = refusal === undefined ? '' : ` (${refusal.reason}); use ${JSON.stringify(refusal.instead)} instead`;
  return `${rule}, not ${JSON.stringify(value)}${why}`;
}
