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
  return BASE_PATH.test(path) && !API_PATH.test(path) ? path : undefined;
}

// The API's own path, or its start, which the handler puts after the base path: given at its
// end (`/kasse/api/v1`, `/kasse/api`, `/kasse/api/v1/buchungen`), the path before it is meant.
const API_PATH = /(?:\/api(?:\/v1)?)*(?:\/api(?:\/v1)?|\/api\/v1\/(?:buchungen|status|abgleich))$/;
// A URL with its scheme, or a host with a dot or a port and no scheme (kasse.example.org/kasse).
const URL_START = /^[A-Za-z][A-Za-z0-9+.-]*:\/\//;
const HOST_START = /^(?:localhost|[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+)(?::[0-9]+)?(?=\/|$)/;

/** `value` as a message may show it: a URL's user and password left out. */
function shown(value: string): string {
  return value.replace(/^([A-Za-z][A-Za-z0-9+.-]*:\/\/)[^/?#]*@/, '$1');
}

/** Why a text is no base path, in a clause, and the base path to use instead. */
export interface BasePathRefusal {
  /** The text as a message may show it: a URL's password left out. */
  readonly given: string;
  /** E.g. `a client sends "ä" percent-encoded`. */
  readonly reason: string;
  /** E.g. `/mueller` for `/müller`, `/y` for `/x/../y`, `/kasse` for `kasse`. */
  readonly instead: string;
}

/** Why `value` is no base path and what to use instead; `undefined` when it is one. */
export function basePathRefusal(value: string): BasePathRefusal | undefined {
  const refusal = refusalOf(value.replace(/\/+$/, ''));
  return refusal && { given: shown(value), ...refusal };
}

function refusalOf(path: string): Omit<BasePathRefusal, 'given'> | undefined {
  // The base URL given whole (https://kasse.example.org/kasse), or an API URL: its path before the API's is meant.
  const url = URL_START.test(path) ? URL.parse(path) : HOST_START.test(path) ? URL.parse(`http://${path}`) : null;
  if (url !== null) {
    const meant = url.pathname.replace(/\/+$/, '').replace(API_PATH, '');
    return { reason: "it is the base URL's path, not the URL", instead: meant === '' ? '' : likeBasePath(meant) };
  }
  if (BASE_PATH.test(path)) {
    const api = API_PATH.exec(path)?.[0];
    if (api === undefined) return undefined;
    return {
      reason: `the service puts the API's path after it: ${path}/api/v1/status`,
      instead: path.slice(0, -api.length),
    };
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
  if (refusal === undefined) return `${rule}, not ${JSON.stringify(value)}`;
  return `${rule}, not ${JSON.stringify(refusal.given)} (${refusal.reason}); use ${JSON.stringify(refusal.instead)} instead`;
}
