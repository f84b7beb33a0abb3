// A client generated from openapi.json works: openapi-typescript turns the document into
// types, a consumer written with openapi-fetch against the three endpoints (GET, HEAD, POST)
// type-checks strictly, reading `fehler` as a string for every error status, and run
// against the real CLI it sees what docs/API.md promises. The package's types of the bodies
// (lib/types.ts) are held to the generated ones (openapi-client/wire-types.ts).

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { copyFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';
import openapiTS, { astToString } from 'openapi-typescript';
import { start } from './support/cli-helpers.js';
import { statusAnswer, tempDir } from './support/helpers.js';

const ROOT = new URL('../', import.meta.url);
const TSC = new URL('node_modules/typescript/bin/tsc', ROOT).pathname;
const exec = promisify(execFile);

test('a typed openapi-fetch client generated from openapi.json compiles and talks to the CLI', async (t) => {
  const dir = tempDir(t);
  symlinkSync(new URL('node_modules', ROOT).pathname, join(dir, 'node_modules'), 'dir');
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ private: true, type: 'module' }));
  writeFileSync(join(dir, 'api.ts'), astToString(await openapiTS(new URL('openapi.json', ROOT))));
  copyFileSync(new URL('test/openapi-client/consumer.ts', ROOT), join(dir, 'consumer.ts'));
  copyFileSync(new URL('test/openapi-client/wire-types.ts', ROOT), join(dir, 'wire-types.ts'));
  writeFileSync(
    join(dir, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'ES2023',
        lib: ['ES2023', 'DOM'],
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        types: ['node'],
        strict: true,
        noUncheckedIndexedAccess: true,
        exactOptionalPropertyTypes: true,
        noUnusedLocals: true,
        outDir: 'out',
      },
      files: ['consumer.ts'],
    }),
  );
  // The package's own types, read from its source, held to the generated ones: checked only.
  writeFileSync(
    join(dir, 'tsconfig.types.json'),
    JSON.stringify({
      extends: './tsconfig.json',
      compilerOptions: { noEmit: true, paths: { 'booking-search-server': [new URL('lib/index.ts', ROOT).pathname] } },
      files: ['wire-types.ts'],
    }),
  );
  for (const [config, what] of [
    ['tsconfig.json', 'the consumer type-checks against the generated types'],
    ['tsconfig.types.json', "the package's types of the bodies are the generated ones"],
  ] as const) {
    const compiled = await exec(process.execPath, [TSC, '-p', join(dir, config)], { cwd: dir }).catch(
      (error: { stdout?: string; stderr?: string }) => ({
        stdout: error.stdout ?? '',
        stderr: error.stderr ?? 'failed',
      }),
    );
    assert.equal(`${compiled.stdout}${compiled.stderr}`, '', what);
  }

  const server = await start(t, ['--demo']);
  const base = server.api.replace(/\/api\/v1\/$/, '');
  const { stdout } = await exec(process.execPath, [join(dir, 'out/consumer.js'), base, 'kasse', 'ge:heim'], {
    timeout: 30_000,
  });
  const seen = JSON.parse(stdout) as Record<string, Record<string, unknown>>;

  assert.deepEqual(seen['status'], { http: 200, ...statusAnswer() });
  assert.deepEqual(seen['headStatus'], { http: 200, data: null });
  const search = seen['search'] as { http: number; anzahl: number; buchungen: number; length: string };
  assert.equal(search.http, 200);
  assert.ok(search.anzahl > 3, `the demo holds bookings: ${JSON.stringify(search)}`);
  assert.equal(search.buchungen, 3);
  assert.deepEqual(seen['headSearch'], { http: 200, data: null, length: search.length });
  assert.deepEqual(seen['headBad'], { http: 400 });
  assert.deepEqual(seen['abgleich'], {
    http: 200,
    ref: 'erste',
    sameAmount: true,
    kandidaten: true,
    eindeutig: 'boolean',
  });
  assert.deepEqual(seen['badBody'], {
    http: 400,
    fehler: "Zeile 1: Feld 'betrag' muss ein Betrag mit höchstens zwei Nachkommastellen sein, als Text oder Zahl.",
    code: 'bad_body',
  });
  assert.deepEqual(seen['400'], { http: 400, fehler: "Der Zeitraum ist ungültig: 'von' liegt nach 'bis'." });
  assert.deepEqual(seen['404'], { http: 404, fehler: 'Nicht gefunden.' });
  assert.deepEqual(seen['401'], { http: Array(10).fill(401) });
  assert.deepEqual(seen['429'], {
    http: 429,
    fehler: 'Zu viele fehlgeschlagene Anmeldeversuche. Bitte später erneut versuchen.',
    retryAfter: true,
  });
});
