// Each example under examples/ runs as its own process and serves the search under /kasse.

import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import './support/built.js';
import { blocksAfter } from './support/doc-snippets.js';
import { AUTH, assertReply, buildDatabase, get, MARCH_COFFEE, request, statusAnswer } from './support/helpers.js';
import { assertProtocolError, rawRequest } from './support/raw-http.js';

const EXAMPLES = ['node-http.mjs', 'express.mjs', 'fastify.mjs', 'hono.mjs'];
const UNAUTHORIZED = { fehler: 'Anmeldung erforderlich.', code: 'unauthorized' };

// The examples import express, fastify and hono from examples/node_modules (npm test installs them).
if (!existsSync(new URL('../examples/node_modules', import.meta.url)))
  throw new Error('examples/node_modules is missing: run `npm run examples:install` first');

for (const example of EXAMPLES) {
  test(`examples/${example} serves the search under /kasse and nothing else of ours`, async (t) => {
    const child = spawn(process.execPath, [new URL(`../examples/${example}`, import.meta.url).pathname], {
      env: {
        ...process.env,
        BOOKING_DB: buildDatabase(t),
        PORT: '0',
        BOOKING_SEARCH_USER: 'kasse',
        BOOKING_SEARCH_PASSWORD: 'ge:heim',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    t.after(() => void child.kill('SIGKILL'));
    let out = '';
    let errors = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (errors += chunk));
    const deadline = Date.now() + 10_000;
    const LISTENING = /listening on (http:\/\/127\.0\.0\.1:\d+)\/kasse\/api\/v1\//;
    let match = LISTENING.exec(out);
    while (match === null) {
      assert.ok(Date.now() < deadline && child.exitCode === null, `${example} did not start: ${out}${errors}`);
      await new Promise((resolve) => setTimeout(resolve, 25));
      match = LISTENING.exec(out);
    }
    const origin = match[1] as string;

    assertReply(
      await get(`${origin}/kasse/api/v1/buchungen?von=2026-03-01&bis=2026-03-31&betrag=-4.35`),
      200,
      MARCH_COFFEE,
    );
    assertReply(await get(`${origin}/kasse/api/v1/status`), 200, statusAnswer());
    assertReply(await request(`${origin}/kasse/api/v1/status`), 401, {
      fehler: 'Anmeldung erforderlich.',
      code: 'unauthorized',
    });
    assertReply(await get(`${origin}/kasse/api/v2/x`), 404, { fehler: 'Nicht gefunden.', code: 'not_found' });
    const head = await request(`${origin}/kasse/api/v1/status`, { method: 'HEAD', headers: { authorization: AUTH } });
    assert.equal(head.status, 200);
    assert.equal(head.body, '');
    const headSearch = await request(`${origin}/kasse/api/v1/buchungen?von=2026-03-01&bis=2026-03-31&betrag=-4.35`, {
      method: 'HEAD',
      headers: { authorization: AUTH },
    });
    assert.equal(headSearch.status, 200);
    assert.equal(headSearch.body, '');
    assert.equal(headSearch.headers['content-length'], String(Buffer.byteLength(JSON.stringify(MARCH_COFFEE))));
    const headDenied = await request(`${origin}/kasse/api/v1/status`, { method: 'HEAD' });
    assert.equal(headDenied.status, 401);
    const post = await request(`${origin}/kasse/api/v1/status`, { method: 'POST', headers: { authorization: AUTH } });
    assertReply(post, 405, { fehler: 'Methode nicht erlaubt.', code: 'method_not_allowed' });
    await assertAbgleichBodyIsTheHandlers(origin);
    // Nothing under /kasse/api/ is the framework's: a target it cannot decode, a method it
    // does not route, a CONNECT (Fastify answered the first two itself, the last not at all).
    const ours = `HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`;
    assertReply(await rawRequest(origin, `GET /kasse/api/v1/%E0 ${ours}`), 401, UNAUTHORIZED);
    assertReply(await rawRequest(origin, `PROPFIND /kasse/api/v1/status ${ours}`), 401, UNAUTHORIZED);
    assertProtocolError(await rawRequest(origin, `CONNECT x:1 ${ours}`), 405, 'Methode nicht erlaubt.');
    // A client that waits for 100 Continue is refused before it sends its body.
    const expecting = `POST /kasse/api/v1/abgleich HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Type: application/json\r\nContent-Length: 14\r\n\r\n`;
    assertReply(await rawRequest(origin, expecting, 5_000), 401, UNAUTHORIZED);
    if (example !== 'node-http.mjs') {
      const home = await request(`${origin}/`);
      assert.equal(home.status, 200, "the framework's own route still answers");
      assert.match(home.body, /Buchungssuche liegt unter \/kasse\/api\/v1\//);
    }

    // The protocol edge, wired with what the library exports (docs/API.md, Responses in general).
    const status = '/kasse/api/v1/status';
    assertProtocolError(await rawRequest(origin, 'GARBAGE\r\n\r\n'), 400, 'Ungültige Anfrage.');
    assertProtocolError(await rawRequest(origin, `GET ${status} HTTP/1.1\r\n\r\n`), 400, 'Ungültige Anfrage.');
    const expect = `GET ${status} HTTP/1.1\r\nHost: x\r\nExpect: 200-ok\r\nAuthorization: ${AUTH}\r\n\r\n`;
    assertProtocolError(await rawRequest(origin, expect), 417, 'Erwartung nicht erfüllbar.');
    const huge = `GET ${status} HTTP/1.1\r\nHost: x\r\nX-Gross: ${'a'.repeat(20 * 1024)}\r\n\r\n`;
    assertProtocolError(await rawRequest(origin, huge), 431, 'Anfragekopf zu groß.');
    const absolute = `GET ${origin}${status} HTTP/1.1\r\nHost: x\r\nAuthorization: ${AUTH}\r\nConnection: close\r\n\r\n`;
    assertReply(await rawRequest(origin, absolute), 200, statusAnswer());
    child.kill('SIGTERM');
    await once(child, 'exit');
    // Mounted inside a Hono route, every HEAD logged ERR_HTTP_HEADERS_SENT here.
    assert.equal(errors, '', 'nothing on stderr');
  });
}

/**
 * POST abgleich through an example: the handler reads the body itself, after the login. A
 * framework that parsed it first left the handler waiting for a body already read, and
 * answered a broken, oversized or mistyped one itself, before the login.
 */
async function assertAbgleichBodyIsTheHandlers(origin: string): Promise<void> {
  const path = '/kasse/api/v1/abgleich';
  const json = { 'content-type': 'application/json' };
  const coffee = JSON.stringify({ zeilen: [{ datum: '2026-03-31', betrag: '-4.35' }] });
  const paired = await request(`${origin}${path}`, {
    method: 'POST',
    headers: { ...json, authorization: AUTH },
    body: coffee,
  });
  assertReply(paired, 200, {
    zeilen: [
      {
        ref: '1',
        buchungen: MARCH_COFFEE.buchungen,
        kandidaten: 2,
        eindeutig: false,
        alternativen: [
          {
            id: 10,
            datum: '2026-04-01',
            betrag: -4.35,
            zweck: 'Kaffee am Folgetag',
            kategorie: 'Bewirtung',
            konto: 'Barkasse',
          },
        ],
      },
    ],
  });
  const unauthorized = { fehler: 'Anmeldung erforderlich.', code: 'unauthorized' };
  assertReply(await request(`${origin}${path}`, { method: 'POST', headers: json, body: '{"a":' }), 401, unauthorized);
  const mistyped = { 'content-type': 'kaputt' };
  assertReply(
    await request(`${origin}${path}`, { method: 'POST', headers: mistyped, body: coffee }),
    401,
    unauthorized,
  );
  const oversized = `POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2000000\r\n\r\n{`;
  assertReply(await rawRequest(origin, oversized), 401, unauthorized);
  assertReply(
    await request(`${origin}${path}`, { method: 'POST', headers: { ...mistyped, authorization: AUTH }, body: coffee }),
    415,
    { fehler: 'Der Inhalt muss JSON sein (application/json).', code: 'unsupported_media_type' },
  );
  const loggedIn = oversized.replace('Host: x', `Host: x\r\nAuthorization: ${AUTH}`);
  assertReply(await rawRequest(origin, loggedIn), 413, {
    fehler: 'Der Inhalt ist zu groß: höchstens 1 MiB.',
    code: 'body_too_large',
  });
}

test("the examples and docs/embedding.md's code type-check under strict TypeScript, as a TypeScript user pastes them", () => {
  const examples = new URL('../examples/', import.meta.url).pathname;
  const dir = mkdtempSync(join(examples, '.typecheck-'));
  try {
    const files: string[] = [];
    for (const example of EXAMPLES) {
      const file = join(dir, example.replace(/\.mjs$/, '.mts'));
      writeFileSync(file, readFileSync(join(examples, example), 'utf8'));
      files.push(file);
    }
    // The page's other snippets are pieces of a program: what they take for granted is
    // declared before them, and nothing else.
    const embedding = readFileSync(new URL('../docs/embedding.md', import.meta.url), 'utf8');
    EMBEDDING_PIECES.forEach(({ marker, lang, preamble }, i) => {
      const [code] = blocksAfter(embedding, marker, lang);
      const file = join(dir, `piece-${i}.mts`);
      writeFileSync(file, `${preamble}\n${code}\nexport {};\n`);
      files.push(file);
    });
    const checked = spawnSync(
      process.execPath,
      [
        new URL('../node_modules/typescript/bin/tsc', import.meta.url).pathname,
        '--noEmit',
        '--strict',
        '--exactOptionalPropertyTypes',
        '--noUncheckedIndexedAccess',
        '--module',
        'nodenext',
        '--moduleResolution',
        'nodenext',
        '--target',
        'es2023',
        '--types',
        'node',
        '--skipLibCheck',
        ...files,
      ],
      { encoding: 'utf8' },
    );
    assert.equal(checked.stdout + checked.stderr, '', 'no type error');
    assert.equal(checked.status, 0);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('docs/embedding.md shows each example whole, as the file that is run and type-checked', () => {
  const embedding = readFileSync(new URL('../docs/embedding.md', import.meta.url), 'utf8');
  for (const example of EXAMPLES) {
    const file = readFileSync(new URL(`../examples/${example}`, import.meta.url), 'utf8');
    const [shown] = blocksAfter(embedding, `\`examples/${example}\``, 'js');
    assert.equal(shown, file, `docs/embedding.md shows examples/${example} as it is`);
  }
});

// docs/embedding.md's snippets that are not a whole example, with what each takes for granted.
const EMBEDDING_PIECES = [
  {
    marker: 'you **must set `handshakeTimeout`**',
    lang: 'js',
    preamble: `import * as https from 'node:https';
import { answerProtocolErrors, type BookingSearchHandler } from 'booking-search-server';
declare const handler: BookingSearchHandler;
declare const cert: string;
declare const key: string;`,
  },
  {
    marker: '`mountHandlers(mounts, fallback)`',
    lang: 'ts',
    preamble: `import Database from 'better-sqlite3';
import { type Credentials, createHandler, createSharedParts, mountHandlers } from 'booking-search-server';
declare const mueller: Credentials[];
declare const schmidt: Credentials[];
declare const emptyBook: Database.Database;`,
  },
];
