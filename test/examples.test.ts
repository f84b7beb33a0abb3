// Each example under examples/ runs as its own process and serves the search under /kasse.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { test } from 'node:test';
import { AUTH, assertReply, buildDatabase, get, MARCH_COFFEE, request } from './support/helpers.js';
import { assertProtocolError, rawRequest } from './support/raw-http.js';

const EXAMPLES = ['node-http.mjs', 'express.mjs', 'fastify.mjs'];

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
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    t.after(() => void child.kill('SIGKILL'));
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
    const deadline = Date.now() + 10_000;
    const LISTENING = /listening on (http:\/\/127\.0\.0\.1:\d+)\/kasse\/api\/v1\//;
    let match = LISTENING.exec(out);
    while (match === null) {
      assert.ok(Date.now() < deadline && child.exitCode === null, `${example} did not start: ${out}`);
      await new Promise((resolve) => setTimeout(resolve, 25));
      match = LISTENING.exec(out);
    }
    const origin = match[1] as string;

    assertReply(
      await get(`${origin}/kasse/api/v1/buchungen?von=2026-03-01&bis=2026-03-31&betrag=-4.35`),
      200,
      MARCH_COFFEE,
    );
    assertReply(await get(`${origin}/kasse/api/v1/status`), 200, { name: 'booking-search-server', version: '1.0' });
    assertReply(await request(`${origin}/kasse/api/v1/status`), 401, {
      fehler: 'Anmeldung erforderlich.',
      code: 'unauthorized',
    });
    assertReply(await get(`${origin}/kasse/api/v2/x`), 404, { fehler: 'Nicht gefunden.', code: 'not_found' });
    const head = await request(`${origin}/kasse/api/v1/status`, { method: 'HEAD', headers: { authorization: AUTH } });
    assert.equal(head.status, 200);
    assert.equal(head.body, '');
    const post = await request(`${origin}/kasse/api/v1/status`, { method: 'POST', headers: { authorization: AUTH } });
    assertReply(post, 405, { fehler: 'Methode nicht erlaubt.', code: 'method_not_allowed' });
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
    assertReply(await rawRequest(origin, absolute), 200, { name: 'booking-search-server', version: '1.0' });
    child.kill('SIGTERM');
    await once(child, 'exit');
  });
}
