// A request as the handler first reads it, before it routes: its target (RFC 9112 §3.2) in
// origin form and as a log may show it; its `Host` field; its client's address, the
// socket's peer or, behind a proxy named in `trustProxy`, the last `X-Forwarded-For` entry
// (docs/API.md, Throttling); and the facts a log line or a count of /metrics may show,
// handed to a listener's log as each response closes.

import type { IncomingMessage, ServerResponse } from 'node:http';
import { type BlockList, isIP, isIPv6 } from 'node:net';
import { errorSent, wasDropped } from './respond.js';

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
 * A request the handler routed has it in its facts already (`RequestFacts.path`).
 */
export function pathForLog(target: string): string {
  const authority = ABSOLUTE_FORM.exec(target);
  return withoutQuery(authority === null ? target : target.slice(authority[0].length));
}

/** `target` up to its query or fragment, whichever comes first; `/` when nothing is left. */
function withoutQuery(target: string): string {
  const query = target.indexOf('?');
  const fragment = target.indexOf('#');
  const mark = fragment === -1 || (query !== -1 && query < fragment) ? query : fragment;
  return (mark === -1 ? target : target.slice(0, mark)) || '/';
}

// RFC 9110 §7.2, RFC 3986 §3.2.2: uri-host [ ":" port ]; a reg-name first (names, IPv4, `a,b`:
// sub-delims), then `[IPv6]` (isIPv6 confirms it) or `[vX.…]`. A reg-name is runs between
// `%XX`s, never runs within runs: a bad value fails in time linear in its length.
const HOST =
  /^(?:[\w.~!$&'()*+,;=-]*(?:%[0-9A-Fa-f]{2}[\w.~!$&'()*+,;=-]*)*|\[(?:[0-9A-Fa-f:.]+|[vV][0-9A-Fa-f]+\.[\w.~!$&'()*+,;=:-]+)\])(?::[0-9]*)?$/;

/**
 * A request refused with 400 before anything of it is read (RFC 9112 §3.2, §6.1; RFC 9110
 * §5.3): HTTP/1.1 without `Host`; a `Host` that is not a host and port (`a b`, `x@evil`,
 * `[::1`); more than one `Host`, `Authorization` or `Content-Type` line, since Node keeps
 * the first and a proxy may act on another (check one password, pass on the other); a
 * request of HTTP/1.0 (or 0.9) with `Transfer-Encoding`, a framing those do not have, which a
 * proxy of HTTP/1.0 would read otherwise (request smuggling); and a request line of another
 * major version than 1 (`HTTP/2.0`: HTTP/2 is never spoken in text).
 */
export function isBadRequest(req: IncomingMessage): boolean {
  const host = req.headers.host;
  if (host === undefined ? req.httpVersion === '1.1' : !isHostAndPort(host)) return true;
  if (req.httpVersionMajor !== 1) return true;
  if (req.httpVersion !== '1.1' && req.headers['transfer-encoding'] !== undefined) return true;
  const raw = req.rawHeaders;
  let hosts = 0;
  let logins = 0;
  let types = 0;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i] as string;
    if (name.length === 4 && name.toLowerCase() === 'host') hosts += 1;
    else if (name.length === 13 && name.toLowerCase() === 'authorization') logins += 1;
    else if (name.length === 12 && name.toLowerCase() === 'content-type') types += 1;
  }
  return hosts > 1 || logins > 1 || types > 1;
}

/** Whether `host` is uri-host [":" port] (HOST), an IPv6 literal one that is an IPv6 address. */
function isHostAndPort(host: string): boolean {
  if (!HOST.test(host)) return false;
  const ipv6 = host.charCodeAt(0) === 0x5b && !/^\[v/i.test(host);
  return !ipv6 || isIPv6(host.slice(1, host.indexOf(']')));
}

// The client address.

/** The name `trustProxy` uses for a peer on a Unix socket, which has no address. */
export const UNIX_SOCKET_PEER = 'unix';

/**
 * The client address of a TCP connection whose peer could not be read: its client reset
 * it before the server read the peer (the kernel forgets the peer of a reset connection,
 * while the request sent before the reset can still be read), so no answer can reach it
 * either. These requests are counted under this one name of their own, never under
 * `unix` (they would use up the budget of every Unix-socket client, a proxy's included)
 * and never one per connection (a client that resets every connection would have no
 * budget at all). Not an address, so never a proxy and never an `X-Forwarded-For` entry.
 */
export const UNKNOWN_PEER = 'unknown';

/** Which peers may speak for the client; built once, from `options.trustProxy`. */
export interface TrustedPeers {
  /** The proxies' addresses; BlockList compares IPv6 in any spelling. */
  addresses: BlockList;
  /** Whether a peer on a Unix socket is a proxy. */
  unix: boolean;
  /** Whether any peer is trusted at all. */
  any: boolean;
}

/**
 * The canonical form of an IP address, so that `::ffff:127.0.0.1` (how a dual-stack
 * socket reports an IPv4 peer) and `127.0.0.1` are one address, and `FE80:0::1` and
 * `fe80::1` are one too. `undefined` for anything that is not an IP address, an IPv6
 * address with a zone id (`fe80::1%eth0`) included: a zone names an interface of the
 * machine that wrote it, which means nothing here.
 */
export function canonicalAddress(text: string): string | undefined {
  const family = isIP(text);
  if (family === 4) return text;
  if (family !== 6 || text.includes('%')) return undefined;
  // The URL parser writes IPv6 in RFC 5952's canonical form, IPv4-mapped ones as `::ffff:7f00:1`.
  const canonical = new URL(`http://[${text}]/`).hostname.slice(1, -1);
  const mapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(canonical);
  if (mapped === null) return canonical;
  const high = Number.parseInt(mapped[1] ?? '', 16);
  const low = Number.parseInt(mapped[2] ?? '', 16);
  return `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`;
}

/**
 * What the throttle counts for a client address: an IPv4 address as it is, an IPv6
 * address by its /64 (`2001:db8:1:2::/64`; `address` is canonical), since one subscriber or host gets a whole /64
 * and can use any address in it.
 */
export function throttleKey(address: string): string {
  if (!address.includes(':')) return address;
  const [head = '', tail = ''] = address.split('::');
  const left = head === '' ? [] : head.split(':');
  const right = tail === '' ? [] : tail.split(':');
  const groups = address.includes('::')
    ? [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right]
    : left;
  return `${canonicalAddress(`${groups.slice(0, 4).join(':')}::`) ?? address}/64`;
}

/** The address a throttle counts and a log line shows for `req`. */
export function clientAddress(req: IncomingMessage, trusted: TrustedPeers): string {
  const peer = peerOf(req.socket);
  if (!isProxy(peer, trusted)) return peer;
  const forwarded = req.headers['x-forwarded-for'];
  const last = (Array.isArray(forwarded) ? forwarded.join(',') : forwarded)?.split(',').pop()?.trim();
  // A value that is not an address (a zone id included) is not the proxy's: count the proxy itself.
  return (last !== undefined && canonicalAddress(last)) || peer;
}

/** Whether `peer` (a connection's, as `rememberPeer` reads it) is a proxy `trusted` names. */
export function isProxy(peer: string, trusted: TrustedPeers): boolean {
  if (!trusted.any) return false;
  if (peer === UNIX_SOCKET_PEER) return trusted.unix;
  return peer !== UNKNOWN_PEER && trusted.addresses.check(peer, isIP(peer) === 6 ? 'ipv6' : 'ipv4');
}

// The peer of a connection, canonical, kept on its socket under a symbol of this module for
// the connection's later requests: a connection's peer does not change, and a keep-alive
// client spares the canonical form's two regular expressions on every request but the
// first. It is read on the connection's first request, or earlier with `rememberPeer`.
const PEER = Symbol('booking-search-server peer');
type WithPeer = IncomingMessage['socket'] & { [PEER]?: string };

/**
 * Reads the peer of a connection the moment the server accepts it, for its requests.
 * protectServer calls it on the server's 'connection' event: node's `socket.remoteAddress` asks
 * the kernel, which forgets the peer once the client resets the connection, and a client
 * that sends a request and resets at once is read only after the reset. Read on
 * acceptance, such a request is still counted and logged under its client's address.
 * Returns the peer: an address, `unix` or `unknown`.
 */
export function rememberPeer(socket: WithPeer): string {
  return peerOf(socket);
}

function peerOf(socket: WithPeer): string {
  const known = socket[PEER];
  if (known !== undefined) return known;
  const peer = readPeer(socket);
  socket[PEER] = peer;
  return peer;
}

function readPeer(socket: WithPeer): string {
  const remote = socket.remoteAddress;
  // A link-local peer comes with its zone (`fe80::1%lo`): the address without it.
  if (remote !== undefined) return canonicalAddress(remote.replace(/%.*$/, '')) ?? remote;
  // A TLS connection's socket wraps the TCP socket the server accepted (node keeps it as
  // `_parent`), where `rememberPeer` left the peer.
  const accepted = (socket as { _parent?: WithPeer | null })._parent?.[PEER];
  if (accepted !== undefined) return accepted;
  // No peer: a Unix socket, whose local address has no family, unlike a TCP socket's, even
  // after a reset. Once a socket is destroyed neither can be told: it is not taken for a
  // Unix socket, whose budget it would spend. (A stand-in socket without address(), as
  // request-injection tools make, is taken for a Unix socket, as it always was.)
  const local = typeof socket.address === 'function' ? socket.address() : {};
  return !socket.destroyed && !('family' in local) ? UNIX_SOCKET_PEER : UNKNOWN_PEER;
}

// What the handler learned about a request that a log line (or a count of the command's
// /metrics) may show, kept on the request under a symbol of this module: a WeakMap beside
// the request cost more CPU a request (its entry is an ephemeron, which every scavenge of
// the young generation visits again; BENCHMARKS.md, "Small costs").

export interface RequestFacts {
  /** Which endpoint the path names: `{base}/api/v1/status`, `…/buchungen`, `…/abgleich`, or none of them. */
  endpoint: 'status' | 'search' | 'abgleich' | 'other';
  /** The socket's address, or the trusted proxy's `X-Forwarded-For` entry. */
  clientAddress: string;
  /** The username of accepted credentials; `undefined` until (or unless) they are. */
  user: string | undefined;
  /**
   * The username of well-formed Basic credentials, accepted or not, when it is one of the
   * handler's users (escape it for a log line); `':unknown'` for any other name, which may be
   * a password typed into the wrong field; `undefined` without such credentials.
   */
  attempted: string | undefined;
  /** The target's path as a log line may show it (`pathForLog`): no query, scheme or authority. */
  path: string;
}

/** What `attempted` holds for a name that is none of the users: never a username (it holds a colon). */
export const UNKNOWN_USER = ':unknown';

const FACTS = Symbol('booking-search-server request facts');
type WithFacts = IncomingMessage & { [FACTS]?: RequestFacts };

/** What the handler recorded for `req`; `undefined` for a request it never saw. */
export function requestFacts(req: IncomingMessage): RequestFacts | undefined {
  return (req as WithFacts)[FACTS];
}

/** Records `req`'s facts; `target`: its target in origin form (`originForm`), the query cut off or not. */
export function recordFacts(
  req: IncomingMessage,
  clientAddress: string,
  endpoint: RequestFacts['endpoint'],
  target: string,
): RequestFacts {
  const path = withoutQuery(target);
  const recorded: RequestFacts = { endpoint, clientAddress, user: undefined, attempted: undefined, path };
  (req as WithFacts)[FACTS] = recorded;
  return recorded;
}

/** What a listener's edge hands its log of a response that closed (lib/protocol-errors.ts); `error`: the code it answered with, if an error. */
export type Answered = (
  res: ServerResponse,
  ms: number,
  facts: RequestFacts | undefined,
  path: string,
  error: string | undefined,
) => void;

// The request's start, on its response under a symbol of this module, and one 'close'
// listener for every response, made once a listener: no closure and no once() wrapper a request.
const STARTED = Symbol('booking-search-server request start');
type Timed = ServerResponse & { [STARTED]?: number };

/**
 * `handler`, and `answered` told of each response as it closes: its milliseconds since the
 * request came, its facts, the path a log line shows for it, routed or not (`pathForLog`),
 * and its error's code;
 * never of a request dropped unheard after an answer that closed its connection.
 */
export function whenAnswered(
  handler: (req: IncomingMessage, res: ServerResponse) => void,
  answered: Answered,
): (req: IncomingMessage, res: ServerResponse) => void {
  function closed(this: Timed): void {
    if (wasDropped(this)) return;
    const ms = performance.now() - (this[STARTED] ?? 0);
    const facts = requestFacts(this.req);
    answered(this, ms, facts, facts?.path ?? pathForLog(this.req.url ?? ''), errorSent(this)?.code);
  }
  return (req, res) => {
    (res as Timed)[STARTED] = performance.now();
    res.on('close', closed);
    handler(req, res);
  };
}
