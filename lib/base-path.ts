// A handler's base path (docs/API.md, Paths): which texts are one, and why another is not.

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
  // The base URL given whole (https://kasse.example.org/kasse), or an API URL: its path before the API's is meant.
  const url = /^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(path) ? URL.parse(path) : null;
  if (url !== null) {
    const meant = url.pathname.replace(/(?:\/api(?:\/v1(?:\/(?:buchungen|status|abgleich))?)?)?\/*$/, '');
    return { reason: "it is the base URL's path, not the URL", instead: meant === '' ? '' : likeBasePath(meant) };
  }
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
