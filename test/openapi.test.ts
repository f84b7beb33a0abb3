// openapi.json describes the server as it is: the document is valid OpenAPI 3.1, and live
// answers of the real handler match its schemas for every status code it lists.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import SwaggerParser from '@apidevtools/swagger-parser';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { createHandler } from '../lib/index.js';
import { parseSearchQuery } from '../lib/query.js';
import { run } from './cli-helpers.js';
import { AUTH, CREDENTIALS, get, openFixture, type Reply, request, serve, serveFixture } from './helpers.js';

const FILE = new URL('../openapi.json', import.meta.url);
const raw = JSON.parse(readFileSync(FILE, 'utf8')) as object;

interface Operation {
  parameters?: Array<{ name: string; schema: Record<string, unknown> }>;
  responses: Record<
    string,
    { content?: { 'application/json': { schema: object } }; headers?: Record<string, { schema: object }> }
  >;
}
type Document = { paths: Record<string, { get: Operation }> };

async function dereferenced(): Promise<Document> {
  return (await SwaggerParser.dereference(structuredClone(raw) as never)) as unknown as Document;
}

test('openapi.json is valid OpenAPI 3.1', async () => {
  const api = await SwaggerParser.validate(structuredClone(raw) as never);
  assert.equal((api as { openapi: string }).openapi, '3.1.0');
});

test('every status code of each operation is answered as the document says', async (t) => {
  const doc = await dereferenced();
  const ajv = new Ajv2020({ strict: true, strictTypes: false, formats: { date: /^\d{4}-\d{2}-\d{2}$/ } });
  ajv.addKeyword('example');

  let broken = false;
  const db = openFixture(t);
  const origin = await serve(
    t,
    createHandler(db, CREDENTIALS, {
      maxAuthFailures: 1000,
      onError: () => undefined,
      now: () =>
        broken
          ? (() => {
              throw new Error('x');
            })()
          : Date.now(),
    }),
  );
  const searchDb = openFixture(t);
  const failing = await serve(t, createHandler(searchDb, CREDENTIALS, { onError: () => undefined }));
  searchDb.close();
  const throttled = await serveFixture(t, { maxAuthFailures: 1 });
  await request(`${throttled}/api/v1/status`, { headers: { authorization: 'Basic eDp5' } }); // x:y, a wrong password

  const search = '/api/v1/buchungen?von=2026-03-01&bis=2026-03-31&betrag=-12.5';
  const cases: Record<string, Record<string, () => Promise<Reply>>> = {
    '/api/v1/status': {
      200: () => get(`${origin}/api/v1/status`),
      401: () => request(`${origin}/api/v1/status`, { headers: { authorization: 'Basic eDp5' } }),
      404: () => get(`${origin}/api/v1/status/`),
      405: () => request(`${origin}/api/v1/status`, { method: 'POST', headers: { authorization: AUTH } }),
      429: () => get(`${throttled}/api/v1/status`),
      500: async () => {
        broken = true;
        const reply = await request(`${origin}/api/v1/status`, { headers: { authorization: 'Basic eDp5' } });
        broken = false;
        return reply;
      },
    },
    '/api/v1/buchungen': {
      200: () => get(`${origin}${search}`),
      400: () => get(`${origin}/api/v1/buchungen?seite=2`),
      401: () => request(`${origin}${search}`),
      404: () => get(`${origin}/api/v1/buchungen/`),
      405: () => request(`${origin}${search}`, { method: 'DELETE', headers: { authorization: AUTH } }),
      429: () => get(`${throttled}${search}`),
      500: () => get(`${failing}${search}`),
    },
  };

  for (const [path, byStatus] of Object.entries(cases)) {
    const documented = Object.keys(doc.paths[path]?.get.responses ?? {}).sort();
    assert.deepEqual(
      Object.keys(byStatus).sort(),
      documented,
      `${path}: the statuses the document lists are the ones tested`,
    );
    for (const [status, ask] of Object.entries(byStatus)) {
      const response = doc.paths[path]?.get.responses[status];
      const reply = await ask();
      assert.equal(reply.status, Number(status), `${path} ${status}: ${reply.body}`);
      const schema = response?.content?.['application/json'].schema;
      assert.ok(schema, `${path} ${status} has a schema`);
      const validate = ajv.compile(schema);
      assert.ok(
        validate(JSON.parse(reply.body)),
        `${path} ${status}: ${reply.body} ${ajv.errorsText(validate.errors)}`,
      );
      for (const [name, header] of Object.entries(response?.headers ?? {})) {
        const value = reply.headers[name.toLowerCase()];
        if (name === 'Retry-After' && status === '500') continue; // only when the database was busy
        assert.ok(value !== undefined, `${path} ${status} sends ${name}`);
        const check = ajv.compile(header.schema);
        assert.ok(check(value), `${path} ${status} ${name}: ${String(value)} ${ajv.errorsText(check.errors)}`);
      }
    }
  }
});

test('the documented parameter patterns accept exactly what the server accepts', async () => {
  const doc = await dereferenced();
  const parameters = doc.paths['/api/v1/buchungen']?.get.parameters ?? [];
  const samples = [
    '2026-03-01',
    '2026-3-1',
    '-12.5',
    '-12,50',
    '+7',
    '7',
    '1.234',
    '1e3',
    '0.10',
    '-0.10',
    'EUR',
    'eur',
    'EURO',
    '0',
    '1000',
    '1001',
    '-1',
    '12',
    '',
    'NaN',
    ' 5',
    '999999999999.99',
    '1000000000000',
  ];
  const base: Record<string, string> = { von: '2026-03-01', bis: '2026-03-31', betrag: '-1' };
  for (const parameter of parameters) {
    const schema = parameter.schema;
    for (const sample of samples) {
      if (sample === '') continue;
      const query = new URLSearchParams({
        ...base,
        [parameter.name]: sample,
        ...(parameter.name === 'von' ? { bis: '2026-12-31' } : {}),
        ...(parameter.name === 'bis' ? { von: '2000-01-01' } : {}),
      });
      const accepted = parseSearchQuery(query.toString()).ok;
      const documented =
        schema['type'] === 'integer'
          ? /^[0-9]+$/.test(sample) &&
            Number(sample) >= (schema['minimum'] as number) &&
            Number(sample) <= (schema['maximum'] as number)
          : new RegExp(schema['pattern'] as string).test(sample);
      // Dates: the pattern is the form; the calendar check (2025-02-29) is prose.
      assert.equal(accepted, documented, `${parameter.name}=${sample}`);
    }
  }
});

test('booking-search-server --openapi prints the document', async () => {
  const result = await run(['--openapi']);
  assert.equal(result.code, 0);
  assert.deepEqual(JSON.parse(result.stdout), raw);
});
