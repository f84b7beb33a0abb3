// An answer given before a request's body was read (the 401 challenge, 413, 415) reaches a
// client that writes its whole body before it reads, as Python's urllib does: the connection
// is closed only once the body has been read and dropped, within bounds in bytes and time
// (lib/linger.ts), not with the body's bytes unread, which reset it under the client's write.
// A body that never ends is still cut off within them.

import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type RequestListener, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { createHandler } from '../lib/index.js';
import { protectServer } from '../lib/internal.js';
import { makeCertificate } from './support/cli-helpers.js';
import { AUTH, CREDENTIALS, openFixture } from './support/helpers.js';
import { answeredEveryTime, assertEndlessBodyCutOff, type Listening, listenCounting } from './support/linger.js';

const REQUEST_TIMEOUT_MS = 3_000;
const ABGLEICH = 'POST /api/v1/abgleich';

/** Behind the command's edge, over TLS too, or on a bare node:http server as an embedder wires it. */
type Kind = 'edge' | 'tls' | 'bare';

/** The service as `kind` says, listening: its port, and what it read of each connection. */
async function serving(t: TestContext, kind: Kind): Promise<Listening> {
  const handler = createHandler(openFixture(t), CREDENTIALS) as RequestListener;
  const options = { requestTimeout: REQUEST_TIMEOUT_MS, connectionsCheckingInterval: 500 };
  let server: Server = kind === 'bare' ? createServer(options, handler) : createServer(options);
  if (kind === 'tls') {
    const dir = mkdtempSync(join(tmpdir(), 'linger-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    makeCertificate(join(dir, 'cert.pem'), join(dir, 'key.pem'));
    const [cert, key] = [readFileSync(join(dir, 'cert.pem')), readFileSync(join(dir, 'key.pem'))];
    server = createHttpsServer({ ...options, cert, key });
  }
  if (kind !== 'bare') protectServer(server, handler, { most: 64, proxies: [] });
  return listenCounting(t, server);
}

const WHERE: Record<Kind, string> = {
  edge: "behind the command's edge",
  tls: "over TLS, behind the command's edge",
  bare: 'on a bare node:http server',
};

for (const kind of ['edge', 'tls', 'bare'] as const) {
  test(`a client that writes its whole body before it reads gets the 401, 413 and 415 every time, ${WHERE[kind]}`, async (t) => {
    const { port } = await serving(t, kind);
    const tls = kind === 'tls';
    const json = 'Content-Type: application/json\r\n';
    const everyTime = (headers: string, bytes: number, status: number): Promise<void> =>
      answeredEveryTime(port, tls, ABGLEICH, headers, bytes, status);
    await t.test('the challenge to ~1 MB sent without credentials', () => everyTime(json, 1_000_000, 401));
    await t.test('the 413 to 2 MB', () => everyTime(`Authorization: ${AUTH}\r\n${json}`, 2_000_000, 413));
    await t.test('the 415 to 600 KB not JSON', () =>
      everyTime(`Authorization: ${AUTH}\r\nContent-Type: text/plain\r\n`, 600_000, 415),
    );
  });
}

test('a body that never ends is cut off: at LINGER_BYTES after the answer, or by the request timeout; a larger announced one at once', async (t) => {
  await assertEndlessBodyCutOff(await serving(t, 'edge'), ABGLEICH, 'HTTP/1.1 401 Unauthorized', REQUEST_TIMEOUT_MS);
});
