// The client address of a request (docs/API.md, Throttling): the socket's peer, or — when
// that peer is one of the proxies named in `trustProxy` — the last `X-Forwarded-For`
// entry, the one that proxy appended. Earlier entries are whatever the client sent.

import type { IncomingMessage } from 'node:http';
import { isIP } from 'node:net';

/** The name `trustProxy` uses for a peer on a Unix socket, which has no address. */
export const UNIX_SOCKET_PEER = 'unix';

/** Which peers may speak for the client; built once by createHandler. */
export type TrustedPeers = ReadonlySet<string>;

/**
 * The canonical form of an IP address, so that `::ffff:127.0.0.1` (how a dual-stack
 * socket reports an IPv4 peer) and `127.0.0.1` are one address, and `FE80:0::1` and
 * `fe80::1` are one too. `undefined` for anything that is not an IP address.
 */
export function canonicalAddress(text: string): string | undefined {
  const family = isIP(text);
  if (family === 4) return text;
  if (family !== 6) return undefined;
  // The URL parser writes IPv6 in RFC 5952's canonical form, IPv4-mapped ones as `::ffff:7f00:1`.
  const canonical = new URL(`http://[${text}]/`).hostname.slice(1, -1);
  const mapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(canonical);
  if (mapped === null) return canonical;
  const high = Number.parseInt(mapped[1] ?? '', 16);
  const low = Number.parseInt(mapped[2] ?? '', 16);
  return `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`;
}

/** Canonical forms of the configured proxies; the caller has validated each entry. */
export function trustedPeers(addresses: readonly string[]): TrustedPeers {
  return new Set(addresses.map((address) => canonicalAddress(address) ?? address));
}

/** The address a throttle counts and a log line shows for `req`. */
export function clientAddress(req: IncomingMessage, trusted: TrustedPeers): string {
  const remote = req.socket.remoteAddress;
  const peer = remote === undefined ? UNIX_SOCKET_PEER : (canonicalAddress(remote) ?? remote);
  if (trusted.size === 0 || !trusted.has(peer)) return peer;
  const forwarded = req.headers['x-forwarded-for'];
  const last = (Array.isArray(forwarded) ? forwarded.join(',') : forwarded)?.split(',').pop()?.trim();
  // A value that is not an address is not the proxy's: count the proxy itself.
  return (last !== undefined && canonicalAddress(last)) || peer;
}
