// The client address rule (docs/API.md, Throttling), on the pure pieces.

import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { test } from 'node:test';
import { trustedPeers } from '../../lib/options.js';
import {
  canonicalAddress,
  clientAddress,
  isBadRequest,
  originForm,
  pathForLog,
  recordFacts,
  rememberPeer,
  throttleKey,
} from '../../lib/request.js';

test('canonicalAddress: one spelling per address, undefined for anything else', () => {
  const cases: Array<[string, string | undefined]> = [
    ['127.0.0.1', '127.0.0.1'],
    ['::ffff:127.0.0.1', '127.0.0.1'],
    ['::FFFF:10.0.0.1', '10.0.0.1'],
    ['::ffff:7f00:1', '127.0.0.1'],
    ['0:0:0:0:0:ffff:192.0.2.1', '192.0.2.1'],
    ['FE80:0:0::1', 'fe80::1'],
    ['2001:db8:0:0:0:0:0:1', '2001:db8::1'],
    ['::1', '::1'],
    ['localhost', undefined],
    ['10.0.0.0/8', undefined],
    ['1.2.3', undefined],
    ['', undefined],
    ['fe80::1%eth0', undefined],
    ['fe80::1234%lo', undefined],
  ];
  for (const [text, expected] of cases) assert.equal(canonicalAddress(text), expected, text);
});

/** A request on a socket with `remoteAddress`; without one, a Unix socket's (its local address has no family). */
function fakeRequest(
  remoteAddress: string | undefined,
  forwarded?: string,
  socket: object = { address: () => ({}), destroyed: false },
): IncomingMessage {
  const headers = forwarded === undefined ? {} : { 'x-forwarded-for': forwarded };
  return { socket: { ...socket, remoteAddress }, headers } as unknown as IncomingMessage;
}

test('clientAddress: the last X-Forwarded-For entry only from a named proxy', () => {
  const trusted = trustedPeers(['::ffff:127.0.0.1', 'unix']);
  const cases: Array<[string | undefined, string | undefined, string]> = [
    ['127.0.0.1', 'spoofed, 203.0.113.9', '203.0.113.9'],
    ['::ffff:127.0.0.1', '203.0.113.9', '203.0.113.9'],
    [undefined, '203.0.113.9', '203.0.113.9'],
    [undefined, undefined, 'unix'],
    ['127.0.0.1', undefined, '127.0.0.1'],
    ['127.0.0.1', 'garbage', '127.0.0.1'],
    ['127.0.0.2', '203.0.113.9', '127.0.0.2'],
    ['::ffff:127.0.0.2', '203.0.113.9', '127.0.0.2'],
  ];
  for (const [remote, forwarded, expected] of cases) {
    assert.equal(clientAddress(fakeRequest(remote, forwarded), trusted), expected, `${remote} ${forwarded}`);
  }
  assert.equal(clientAddress(fakeRequest(undefined, '203.0.113.9'), trustedPeers([])), 'unix');
});

test('clientAddress: a link-local peer with a zone id is its address without the zone; a zoned forwarded entry is ignored', () => {
  assert.equal(clientAddress(fakeRequest('fe80::1234%lo'), trustedPeers([])), 'fe80::1234');
  const trusted = trustedPeers(['fe80::1']);
  assert.equal(clientAddress(fakeRequest('fe80::1%eth0', '203.0.113.9'), trusted), '203.0.113.9');
  assert.equal(clientAddress(fakeRequest('fe80::1%eth0', 'fe80::2%eth0'), trusted), 'fe80::1');
});

test('clientAddress: a TCP connection whose peer is gone (reset by its client) is `unknown`, never `unix` and never a proxy; a TLS socket takes the peer read when its TCP socket was accepted', () => {
  const reset = { address: () => ({ address: '127.0.0.1', family: 'IPv4', port: 8080 }), destroyed: false };
  const destroyed = { address: () => ({}), destroyed: true };
  for (const trusted of [trustedPeers([]), trustedPeers(['unix', '127.0.0.1'])]) {
    assert.equal(clientAddress(fakeRequest(undefined, '203.0.113.9', reset), trusted), 'unknown');
    assert.equal(clientAddress(fakeRequest(undefined, '203.0.113.9', destroyed), trusted), 'unknown');
  }
  const accepted = { address: () => ({}), destroyed: false, remoteAddress: '::ffff:127.0.0.9' };
  rememberPeer(accepted as unknown as IncomingMessage['socket']);
  const tls = { ...reset, _parent: accepted };
  assert.equal(clientAddress(fakeRequest(undefined, undefined, tls), trustedPeers([])), '127.0.0.9');
  assert.equal(throttleKey('unknown'), 'unknown');
});

test('throttleKey: IPv4 as it is, IPv6 by its /64', () => {
  const cases: Array<[string, string]> = [
    ['203.0.113.9', '203.0.113.9'],
    ['2001:db8:1:2::5', '2001:db8:1:2::/64'],
    ['2001:db8:1:2:ffff:ffff:ffff:ffff', '2001:db8:1:2::/64'],
    ['2001:db8::1', '2001:db8::/64'],
    ['::1', '::/64'],
    ['unix', 'unix'],
  ];
  for (const [address, expected] of cases) assert.equal(throttleKey(address), expected, address);
});

test("the path the facts hold is pathForLog's: no query, fragment, scheme or authority, `/` for none", () => {
  const cases: Array<[string, string]> = [
    ['/api/v1/buchungen?von=2024-01-01&bis=2024-01-31', '/api/v1/buchungen'],
    ['/api/v1/status', '/api/v1/status'],
    ['/api/v1/status#top?x', '/api/v1/status'],
    ['/api/v1/status?x#top', '/api/v1/status'],
    ['http://host:8080/api/v1/status?x', '/api/v1/status'],
    ['http://host?x', '/'],
    ['HTTP://host', '/'],
    ['*', '*'],
  ];
  for (const [target, path] of cases) {
    assert.equal(pathForLog(target), path, target);
    const origin = originForm(target) as string;
    const mark = origin.indexOf('?');
    // The handler gives its facts the origin form without the query, as it routed it.
    const req = {} as IncomingMessage;
    assert.equal(
      recordFacts(req, '127.0.0.1', 'other', mark === -1 ? origin : origin.slice(0, mark)).path,
      path,
      target,
    );
  }
});

test('isBadRequest: Host is uri-host [":" port] by RFC 9110 §7.2 and RFC 3986 §3.2.2', () => {
  const one = (host: string): IncomingMessage =>
    ({
      headers: { host },
      rawHeaders: ['Host', host],
      httpVersion: '1.1',
      httpVersionMajor: 1,
    }) as unknown as IncomingMessage;
  const good = [
    'localhost',
    'localhost:8080',
    '127.0.0.1:3000',
    'buchungen.example.org',
    'xn--bcher-kva.example',
    'a,b',
    "a!$&'()*+;=b",
    'my_host~1',
    'caf%C3%A9',
    '999.1.1.1',
    'host:',
    ':80',
    '',
    '[::1]',
    '[::1]:8080',
    '[2001:db8::1]:443',
    '[::ffff:127.0.0.1]',
    '[v1.fe80::1+eth0]',
  ];
  const bad = [
    'a b',
    'x@evil',
    'a/b',
    '[::1',
    '::1',
    'a:notaport',
    'a:80:80',
    'a:-1',
    'a%2',
    'a%zz',
    'a?b',
    'a#b',
    'a"b',
    'caf\u00e9',
    '[::1]x',
    '[::1::2]',
    '[fe80::1%eth0]',
    '[1.2.3.4]',
    '[v1]',
    '[]',
  ];
  for (const host of good) assert.equal(isBadRequest(one(host)), false, host);
  for (const host of bad) assert.equal(isBadRequest(one(host)), true, host);
});

test('isBadRequest: a second Host, Authorization or Content-Type line, whatever its case; Transfer-Encoding in HTTP/1.0', () => {
  const request = (rawHeaders: string[], httpVersion = '1.1'): IncomingMessage => {
    const headers: Record<string, string> = {};
    for (let i = 0; i < rawHeaders.length; i += 2)
      headers[(rawHeaders[i] as string).toLowerCase()] ??= rawHeaders[i + 1] as string;
    const [major, minor] = httpVersion.split('.').map(Number);
    return {
      headers,
      rawHeaders,
      httpVersion,
      httpVersionMajor: major,
      httpVersionMinor: minor,
    } as unknown as IncomingMessage;
  };
  const host = ['Host', 'x'];
  assert.equal(isBadRequest(request([...host, 'Authorization', 'Basic a', 'Accept', '*/*'])), false);
  assert.equal(isBadRequest(request([...host, 'Authorization', 'Basic a', 'authorization', 'Basic b'])), true);
  assert.equal(isBadRequest(request([...host, 'Content-Type', 'a/b', 'CONTENT-TYPE', 'a/b'])), true);
  assert.equal(isBadRequest(request([...host, 'Host', 'x'])), true);
  // HTTP/1.0 without Host, and with two Authorization lines: the second is what is refused.
  assert.equal(isBadRequest(request(['Authorization', 'Basic a', 'Authorization', 'Basic a'], '1.0')), true);
  assert.equal(isBadRequest(request(['Transfer-Encoding', 'chunked'], '1.0')), true);
  assert.equal(isBadRequest(request([...host, 'Transfer-Encoding', 'chunked'])), false);
  assert.equal(isBadRequest(request([], '1.0')), false);
  assert.equal(isBadRequest(request(['Host', 'x', 'Transfer-Encoding', 'chunked'], '0.9')), true);
  assert.equal(isBadRequest(request(['Host', 'x'], '2.0')), true);
});
