// The demo's greeting prints an example search: on any day of the year it finds bookings,
// through the real handler, and the amount it names is one the demo holds; its line is one
// the platform's shells take as it is.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createDemoDatabase } from '../../bin/books/index.js';
import { parseCommandLine } from '../../bin/config/args.js';
import type { ServeCommand } from '../../bin/config/serve-command.js';
import { ruleFor } from '../../bin/files/file-safety.js';
import { tryLine, warnAboutSetup } from '../../bin/serve/greeting.js';
import { createHandler } from '../../lib/index.js';
import { basicAuth, get, serve } from '../support/helpers.js';

test("the demo's example search finds bookings of its amount, whatever the day", async (t) => {
  for (let month = 0; month < 12; month += 1) {
    const today = new Date(Date.UTC(2026, month, 1 + month * 2));
    const demo = createDemoDatabase(today);
    t.after(() => demo.db.close());
    const api = await serve(t, createHandler(demo.db, { username: 'demo', password: 'demo' }));
    const { von, bis, betrag } = demo.example;
    const reply = await get(`${api}/api/v1/buchungen?von=${von}&bis=${bis}&betrag=${betrag}`, {
      authorization: basicAuth('demo', 'demo'),
    });
    assert.equal(reply.status, 200, reply.body);
    const found = JSON.parse(reply.body) as { anzahl: number; buchungen: Array<{ datum: string }> };
    assert.ok(found.anzahl > 0, `${today.toISOString()}: ${reply.body}`);
    assert.match(betrag, /^-\d+\.\d\d$/);
    assert.ok(found.buchungen.every((booking) => booking.datum >= von && booking.datum <= bis));
  }
});

const EXAMPLE = { von: '2026-03-01', bis: '2026-03-31', betrag: '-12.50' };
const API = 'http://127.0.0.1:8080/api/v1/';
type Given = Parameters<typeof tryLine>[0];

test("the demo's Try line on Windows works in cmd and PowerShell 5.1 (curl.exe, one double-quoted URL, no $VARIABLE); on POSIX it is for sh", () => {
  const demo: Given = { credentialsFrom: 'demo default', credentials: [], tls: undefined };
  assert.equal(
    tryLine(demo, API, EXAMPLE, 'win32'),
    'Try: curl.exe -u demo:demo "http://127.0.0.1:8080/api/v1/buchungen?von=2026-03-01&bis=2026-03-31&betrag=-12.50"',
  );
  assert.equal(
    tryLine(demo, API, EXAMPLE, 'linux'),
    "Try: curl -u demo:demo 'http://127.0.0.1:8080/api/v1/buchungen?von=2026-03-01&bis=2026-03-31&betrag=-12.50'",
  );
  const environment: Given = {
    ...demo,
    credentialsFrom: 'environment',
    credentials: [{ username: 'a', password: 'b' }],
  };
  assert.equal(
    tryLine(environment, API, EXAMPLE, 'win32'),
    'Try: curl.exe -u USER:PASSWORD "http://127.0.0.1:8080/api/v1/buchungen?von=2026-03-01&bis=2026-03-31&betrag=-12.50" (USER and PASSWORD: the values of BOOKING_SEARCH_USER and BOOKING_SEARCH_PASSWORD)',
  );
  assert.match(
    tryLine(environment, API, EXAMPLE, 'linux') ?? '',
    /^Try: curl -u "\$BOOKING_SEARCH_USER:\$BOOKING_SEARCH_PASSWORD" '/,
  );
  const hashed: Given = { ...environment, credentials: [{ username: 'a', passwordHash: '$scrypt$…' }] };
  assert.match(
    tryLine(hashed, API, EXAMPLE, 'win32') ?? '',
    /^Try: curl\.exe -u USER:PASSWORD ".*" \(USER: the value of BOOKING_SEARCH_USER; PASSWORD: its password\)$/,
  );
  const tls: Given = { ...demo, tls: { cert: 'c', key: 'k', minVersion: 'TLSv1.2' } };
  assert.match(
    tryLine(tls, API.replace('http', 'https'), EXAMPLE, 'win32') ?? '',
    /^Try: curl\.exe -k -u demo:demo "https:/,
  );
  for (const line of [tryLine(demo, API, EXAMPLE, 'win32'), tryLine(environment, API, EXAMPLE, 'win32')])
    assert.doesNotMatch(line ?? '', /'|\$|%/, 'nothing cmd or PowerShell reads otherwise');
  // A named pipe: curl cannot reach it, so no line to try.
  assert.equal(
    tryLine(demo, { socket: '\\\\.\\pipe\\bss', url: 'http://localhost/api/v1/' }, EXAMPLE, 'win32'),
    undefined,
  );
});

const ENV = { BOOKING_SEARCH_USER: 'buero', BOOKING_SEARCH_PASSWORD: 'geheim' };

test('the NTFS notice is said on Windows for a setup with files, not for --demo, which has none', (t) => {
  const said = (argv: string[], env: NodeJS.ProcessEnv = ENV): string[] => {
    let written = '';
    const write = t.mock.method(process.stderr, 'write', (chunk: string) => {
      written += chunk;
      return true;
    });
    try {
      warnAboutSetup(parseCommandLine(argv, env) as ServeCommand, ruleFor('win32'));
    } finally {
      write.mock.restore();
    }
    return written.split('\n').filter((line) => line.includes('NTFS'));
  };
  assert.deepEqual(said(['--demo']), []);
  assert.equal(said(['--demo', '--credentials-file', 'C:\\ProgramData\\bss\\credentials'], {}).length, 1);
  assert.equal(said(['--db', 'C:\\Buchhaltung\\kasse.sqlite']).length, 1);
});
