// A reconciliation's body that never completes, against the real CLI: a client that hangs
// up (FIN) in the middle of it is let go at once, its descriptor, its connection and its
// address's share with it, and one that trickles its body is cut by --request-timeout with
// the JSON 408 (docs/API.md, Errors), one whose body breaks off with a malformed chunk gets
// its 400 at once. A leaked connection also held SIGTERM to the end of its budget.

import assert from 'node:assert/strict';
import { once } from 'node:events';
import { readdirSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { type TestContext, test } from 'node:test';
import { type Running, start, waitFor } from './support/cli-helpers.js';
import { AUTH, buildDatabase, request } from './support/helpers.js';

const HEAD = `POST /api/v1/abgleich HTTP/1.1\r\nHost: x\r\nAuthorization: ${AUTH}\r\nContent-Type: application/json\r\n`;
const PARTS = {
  'Content-Length': `${HEAD}Content-Length: 50\r\n\r\n{"zeilen":`,
  chunked: `${HEAD}Transfer-Encoding: chunked\r\n\r\na\r\n{"zeilen":\r\n`,
};

interface Client {
  socket: Socket;
  /** What the server sent, once it has closed the connection. */
  closed: Promise<string>;
}

async function open(server: Running, first: string): Promise<Client> {
  const socket = connect(Number(new URL(server.origin).port), '127.0.0.1');
  socket.on('error', () => undefined);
  let received = '';
  socket.setEncoding('utf8').on('data', (chunk: string) => (received += chunk));
  const closed = once(socket, 'close').then(() => received);
  await once(socket, 'connect');
  socket.write(first);
  return { socket, closed };
}

async function serving(t: TestContext, args: string[] = []): Promise<{ server: Running; admin: string }> {
  const server = await start(t, ['--db', buildDatabase(t), '--admin-port', '0', ...args]);
  const admin = /admin listener on (http:\/\/127\.0\.0\.1:\d+)\//.exec(server.output().stdout)?.[1] as string;
  // Logged in once, the client's later logins are decided at once (no hash check).
  assert.equal((await request(`${server.api}status`, { headers: { authorization: AUTH } })).status, 200);
  return { server, admin };
}

async function openConnections(admin: string): Promise<number> {
  const match = /^booking_search_open_connections (\d+)$/m.exec((await request(`${admin}/metrics`)).body);
  assert.ok(match !== null);
  return Number(match[1]);
}

function within<T>(ms: number, what: Promise<T>, failure: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(failure)), ms);
  });
  return Promise.race([what, late]).finally(() => clearTimeout(timer));
}

test('a client that hangs up in the middle of a reconciliation body is let go at once, Content-Length and chunked; SIGTERM is quick after', async (t) => {
  const { server, admin } = await serving(t);
  const pid = server.child.pid as number;
  const descriptors = (): number => readdirSync(`/proc/${pid}/fd`).length;
  const before = descriptors();
  const clients: Client[] = [];
  for (const part of Object.values(PARTS)) for (let i = 0; i < 5; i += 1) clients.push(await open(server, part));
  t.after(() => {
    for (const client of clients) client.socket.destroy();
  });
  // The body reader has started on each (the login is remembered), then the client sends FIN.
  await new Promise((resolve) => setTimeout(resolve, 300));
  assert.equal(await openConnections(admin), 10, 'the ten are held while their bodies come');
  for (const client of clients) client.socket.end();
  const answers = await within(
    2_000,
    Promise.all(clients.map((client) => client.closed)),
    'the server kept connections whose client had hung up mid-body',
  );
  for (const answer of answers)
    assert.match(answer, /^HTTP\/1\.1 400 [\s\S]*\r\nConnection: close\r\n[\s\S]*"bad_request"/);
  const deadline = Date.now() + 2_000;
  while ((await openConnections(admin)) > 0 && Date.now() < deadline)
    await new Promise((resolve) => setTimeout(resolve, 20));
  assert.equal(await openConnections(admin), 0);
  // Then the descriptors, with no request of the test's own open: the admin listener's
  // connection that just answered may still be closing.
  while (descriptors() > before && Date.now() < deadline + 1_000)
    await new Promise((resolve) => setTimeout(resolve, 20));
  assert.ok(descriptors() <= before, `descriptors back to ${before} (now ${descriptors()})`);
  // Each logged with the answer it got, as any request (the access log is written in batches).
  await waitFor(() => server.output().stdout, / kasse POST \/api\/v1\/abgleich 400 /, 10);
  assert.doesNotMatch(server.output().stdout, / aborted /);

  // One more, and SIGTERM right after its FIN: nothing is left to wait for.
  const last = await open(server, PARTS.chunked);
  await new Promise((resolve) => setTimeout(resolve, 300));
  last.socket.end();
  const stopping = Date.now();
  const stopped = await server.stop();
  assert.equal(stopped.code, 0, stopped.stderr);
  assert.ok(Date.now() - stopping < 3_000, `stopped after ${Date.now() - stopping} ms`);
});

test('a reconciliation body trickled a byte at a time is cut by --request-timeout with the JSON 408, after the answer before it', async (t) => {
  const { server, admin } = await serving(t, ['--headers-timeout', '1', '--request-timeout', '2']);
  const status = `GET /api/v1/status HTTP/1.1\r\nHost: x\r\nAuthorization: ${AUTH}\r\n\r\n`;
  const opened = Date.now();
  const client = await open(server, `${status}${PARTS['Content-Length']}`);
  t.after(() => client.socket.destroy());
  const trickle = setInterval(() => client.socket.writable && client.socket.write(' '), 200);
  t.after(() => clearInterval(trickle));
  const answer = await within(6_000, client.closed, 'a trickled body was never cut');
  const after = Date.now() - opened;
  assert.ok(after >= 1_800, `cut after ${after} ms, not before --request-timeout`);
  const [first, second] = answer.split(/(?=HTTP\/1\.1 )/);
  assert.match(first as string, /^HTTP\/1\.1 200 /);
  assert.match(second as string, /^HTTP\/1\.1 408 Request Timeout\r\n[\s\S]*\r\nConnection: close\r\n/);
  assert.ok(
    (second as string).endsWith('{"fehler":"Zeitüberschreitung der Anfrage.","code":"request_timeout"}'),
    second,
  );
  // Logged and counted as the answer it is, not as a client that left.
  await waitFor(() => server.output().stdout, / kasse POST \/api\/v1\/abgleich 408 /);
  assert.match(
    (await request(`${admin}/metrics`)).body,
    /^booking_search_requests_total\{endpoint="abgleich",status="408",error="request_timeout"\} 1$/m,
  );
  const deadline = Date.now() + 2_000;
  while ((await openConnections(admin)) > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  assert.equal(await openConnections(admin), 0);
});

test('a malformed chunk in a reconciliation body gets the JSON 400 at once, and the connection closes', async (t) => {
  const { server, admin } = await serving(t);
  const client = await open(server, PARTS.chunked);
  t.after(() => client.socket.destroy());
  await new Promise((resolve) => setTimeout(resolve, 300));
  client.socket.write('ZZ\r\n');
  const answer = await within(2_000, client.closed, 'a broken body was never answered');
  assert.match(answer, /^HTTP\/1\.1 400 [\s\S]*\r\nConnection: close\r\n[\s\S]*"bad_request"}$/);
  assert.equal(await openConnections(admin), 0);
  await waitFor(() => server.output().stdout, / kasse POST \/api\/v1\/abgleich 400 /);
});
