// Shared by the integration tests: fixture databases from fixtures/*.sql in a temp dir,
// the real handler on 127.0.0.1 port 0, and real HTTP requests.

import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, request as httpRequest, type IncomingHttpHeaders, type RequestListener } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import Database from 'better-sqlite3';
import type { Accepted, Authenticator, Verdict } from '../../lib/auth.js';
import { parseBasicAuth } from '../../lib/basic-auth.js';
import { createHandler } from '../../lib/index.js';
import type { HandlerOptions, PasswordCredentials } from '../../lib/types.js';

export const FIXTURES = new URL('../../fixtures/', import.meta.url);
export const CREDENTIALS: PasswordCredentials = { username: 'kasse', password: 'ge:heim' };
export const AUTH = basicAuth(CREDENTIALS.username, CREDENTIALS.password);

/** `alt` and `neu`, each hashed once with `booking-search-server hash-password`. */
export const HASH_OF_ALT = '$scrypt$ln=17,r=8,p=1$FDRD+btCnb1iWl60peMllg$bg0D73v1G6BkaqbMvdUC3nzRigVWvnPbFmIM9I9wqOU';
export const HASH_OF_NEU = '$scrypt$ln=17,r=8,p=1$cIL/S/R36BWpaBqUjWyzoQ$s/QhyAt8SgOi/rcVBo/qeCL6jCaP4cUYKipnIp5CHsI';

/**
 * What GET {base}/api/v1/status answers a book named `name` (docs/API.md): the one place the
 * tests name the API's version, which a new field or parameter steps up.
 */
export function statusAnswer(name = 'booking-search-server'): { name: string; version: string } {
  return { name, version: '1.0' };
}

export function basicAuth(username: string, password: string): string {
  return `Basic ${Buffer.from(`${username}:${password}`, 'utf8').toString('base64')}`;
}

export function fixtureSql(name: string): string {
  return readFileSync(new URL(name, FIXTURES), 'utf8');
}

/** A fresh temp dir, removed after the test. */
export function tempDir(t: TestContext): string {
  const dir = mkdtempSync(join(tmpdir(), 'booking-search-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/**
 * A directory for a database the CLI serves: mode 0555, as a directory the service may read
 * but not write (docs/operations.md, Users and permissions). The CLI refuses a database in a
 * directory its user could write; for root it judges by the mode bits, while the tests,
 * running as root, may still create and replace files in it.
 */
export function databaseDir(t: TestContext): string {
  const dir = tempDir(t);
  chmodSync(dir, 0o555);
  return dir;
}

/** A database file built from schema.sql and the given fixtures; returns its path. */
export function buildDatabase(t: TestContext, fixtures: readonly string[] = ['schema.sql', 'bookings.sql']): string {
  const file = join(databaseDir(t), 'kasse.sqlite');
  const db = new Database(file);
  for (const name of fixtures) db.exec(fixtureSql(name));
  db.close();
  return file;
}

/** `file` opened read-only, as the CLI opens it, until the test ends. */
export function openReadOnly(t: TestContext, file: string, options: Database.Options = {}): Database.Database {
  const db = new Database(file, { readonly: true, fileMustExist: true, ...options });
  t.after(() => db.close());
  return db;
}

/** A fresh fixture database, opened read-only. */
export function openFixture(t: TestContext, fixtures?: readonly string[]): Database.Database {
  return openReadOnly(t, buildDatabase(t, fixtures));
}

/** Serves `listener` on 127.0.0.1 at a free port until the test ends; returns its origin. */
export async function serve(t: TestContext, listener: RequestListener): Promise<string> {
  const server = createServer(listener);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  t.after(() => server.closeAllConnections());
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** The handler over the fixture database, served; returns its origin. */
export async function serveFixture(t: TestContext, options?: HandlerOptions): Promise<string> {
  return serve(t, createHandler(openFixture(t), CREDENTIALS, options));
}

export interface Reply {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

export function request(
  url: string,
  {
    method = 'GET',
    headers = {},
    body,
  }: { method?: string; headers?: Record<string, string>; body?: string | Buffer } = {},
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }),
      );
      res.on('error', reject);
    });
    // A test that waits forever tells nothing; this one fails instead.
    req.setTimeout(10_000, () => req.destroy(new Error(`no answer within 10 s: ${method} ${url}`)));
    req.on('error', reject);
    req.end(body);
  });
}

/** A GET with the right credentials. */
export function get(url: string, headers: Record<string, string> = {}): Promise<Reply> {
  return request(url, { headers: { authorization: AUTH, ...headers } });
}

/** docs/API.md: every response carries these. */
export function assertCommonHeaders(reply: Reply): void {
  assert.equal(reply.headers['content-type'], 'application/json; charset=utf-8');
  assert.equal(reply.headers['cache-control'], 'no-store');
  assert.equal(reply.headers['x-content-type-options'], 'nosniff');
  assert.ok(reply.headers['content-length'] !== undefined, 'Content-Length is set');
}

/** Asserts status, common headers, an exact JSON body, and a Content-Length that fits it. */
export function assertReply(reply: Reply, status: number, body: unknown): void {
  assert.equal(reply.status, status, reply.body);
  assertCommonHeaders(reply);
  assert.deepEqual(JSON.parse(reply.body), body);
  assert.equal(Number(reply.headers['content-length']), Buffer.byteLength(reply.body));
}

/** A request sent from `localAddress` (another loopback address is another client). */
export function requestFrom(localAddress: string, url: string, headers: Record<string, string>): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { headers, localAddress, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** fixtures/bookings.sql's answer to `von=2026-03-01&bis=2026-03-31&betrag=-4.35`. */
export const MARCH_COFFEE = {
  anzahl: 1,
  buchungen: [
    {
      id: 8,
      datum: '2026-03-31',
      betrag: -4.35,
      zweck: 'Kaffee ☕ & Croissant',
      kategorie: 'Bewirtung',
      konto: 'Barkasse',
    },
  ],
};

/** fixtures/existing-app.sql's answer, through its views, to `von=2026-03-01&bis=2026-03-31&betrag=-4.35`. */
export const EXISTING_APP_MARCH_COFFEE = {
  anzahl: 1,
  buchungen: [
    {
      id: 2,
      datum: '2026-03-14',
      betrag: -4.35,
      zweck: 'Kaffee für Kundengespräch',
      kategorie: 'Bewirtung',
      konto: 'Barkasse',
    },
  ],
};

/** `check` on what an `Authorization` header holds; `undefined` when it holds no credentials. */
export function checkHeader(authenticator: Authenticator, header: string | undefined): Verdict | undefined {
  const given = parseBasicAuth(header);
  return given === undefined ? undefined : authenticator.check(given);
}

/** The verdict that accepts `user`. */
export function accepted(user: string): Accepted {
  return { kind: 'user', user };
}
