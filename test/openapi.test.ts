// openapi.json describes the server as it is: the document is valid OpenAPI 3.1 that
// Redocly lints without a warning, and live answers of the real handler match it for every
// operation (GET, HEAD, OPTIONS) and every status code it lists: status, body schema, each
// documented header (present when required, valid when present) and no undocumented one.

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { promisify } from 'node:util';
import SwaggerParser from '@apidevtools/swagger-parser';
import { Ajv2020 } from 'ajv/dist/2020.js';
import Database from 'better-sqlite3';
import { createHandler } from '../lib/index.js';
import { ERRORS } from '../lib/messages.js';
import { parseAmount, parseSearchQuery, refuseQuery } from '../lib/query.js';
import { parseReconcileBody } from '../lib/reconcile/body.js';
import type { HandlerOptions } from '../lib/types.js';
import { run, start } from './support/cli-helpers.js';
import {
  AUTH,
  basicAuth,
  buildDatabase,
  CREDENTIALS,
  HASH_OF_ALT,
  openFixture,
  openReadOnly,
  type Reply,
  request,
  serve,
  serveFixture,
} from './support/helpers.js';
import { rawRequest } from './support/raw-http.js';

const FILE = new URL('../openapi.json', import.meta.url);
const raw = JSON.parse(readFileSync(FILE, 'utf8')) as object;
const REDOCLY = new URL('../node_modules/.bin/redocly', import.meta.url).pathname;

interface Header {
  required?: boolean;
  schema: object;
}
interface Response {
  content?: { 'application/json': { schema: Schema } };
  headers?: Record<string, Header>;
}
interface Operation {
  parameters?: Array<{ name: string; in: string; schema: Schema }>;
  responses: Record<string, Response>;
}
type Method = 'get' | 'head' | 'options' | 'post';
type Schema = Record<string, unknown>;
type Document = { paths: Record<string, Partial<Record<Method, Operation>>> };

async function dereferenced(): Promise<Document> {
  return (await SwaggerParser.dereference(structuredClone(raw) as never)) as unknown as Document;
}

function compiler(): Ajv2020 {
  // Strict as a client's validator is by default: a union `type` would need allowUnionTypes.
  const ajv = new Ajv2020({ strict: true, formats: { date: /^\d{4}-\d{2}-\d{2}$/ } });
  ajv.addKeyword('example');
  return ajv;
}

// Sent by node:http on every answer; not part of the API.
const TRANSPORT_HEADERS = new Set(['date', 'connection', 'keep-alive', 'transfer-encoding', 'content-type']);

test('openapi.json is valid OpenAPI 3.1', async () => {
  const api = await SwaggerParser.validate(structuredClone(raw) as never);
  assert.equal((api as { openapi: string }).openapi, '3.1.0');
});

test('redocly lint openapi.json: no error and no warning (was: 6 warnings)', async () => {
  const { stdout } = await promisify(execFile)(REDOCLY, ['lint', FILE.pathname, '--format=json'], {
    env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
    timeout: 60_000,
  });
  const report = JSON.parse(stdout) as { totals: object; problems: unknown[] };
  assert.deepEqual(report.totals, { errors: 0, warnings: 0, ignored: 0 }, JSON.stringify(report.problems, null, 1));
});

test('every schema in openapi.json says its type (a typeless one became `unknown` in generated clients)', () => {
  const untyped: string[] = [];
  const visitSchema = (schema: Schema, where: string): void => {
    if ('$ref' in schema) return;
    // An `anyOf` of typed alternatives is typed (a union `type` beside it made generators repeat it).
    const alternatives = schema['anyOf'] as Schema[] | undefined;
    const typedAlternatives = alternatives?.every((one) => 'type' in one || '$ref' in one) === true;
    if (!('type' in schema) && !typedAlternatives) untyped.push(where);
    for (const key of ['anyOf', 'oneOf', 'allOf'] as const) {
      for (const [i, sub] of ((schema[key] ?? []) as Schema[]).entries()) visitSchema(sub, `${where}/${key}/${i}`);
    }
    if (schema['items'] !== undefined) visitSchema(schema['items'] as Schema, `${where}/items`);
    for (const [name, sub] of Object.entries((schema['properties'] ?? {}) as Record<string, Schema>)) {
      visitSchema(sub, `${where}/properties/${name}`);
    }
  };
  const walk = (node: unknown, where: string): void => {
    if (typeof node !== 'object' || node === null) return;
    for (const [key, value] of Object.entries(node)) {
      if (key === 'example' || key === 'examples') continue;
      if (key === 'schema') visitSchema(value as Schema, `${where}/schema`);
      else walk(value, `${where}/${key}`);
    }
  };
  walk(raw, '#');
  const { schemas } = (raw as { components: { schemas: Record<string, Schema> } }).components;
  for (const [name, schema] of Object.entries(schemas)) visitSchema(schema, `#/components/schemas/${name}`);
  assert.deepEqual(untyped, []);
});

// Answers for every documented operation and status, from the real handler.
interface Case {
  reply: () => Promise<Reply>;
}

test('every status code of each operation is answered as the document says', async (t) => {
  const doc = await dereferenced();
  const ajv = compiler();
  const PAGE = 'https://buchhaltung.example';

  let broken = false;
  const options: HandlerOptions = {
    maxAuthFailures: 1000,
    onError: () => undefined,
    corsOrigins: [PAGE],
    now: () => {
      if (broken) throw new Error('the clock broke');
      return Date.now();
    },
  };
  const origin = await serve(t, createHandler(openFixture(t), CREDENTIALS, options));
  const closedDb = openFixture(t);
  const failing = await serve(t, createHandler(closedDb, CREDENTIALS, { onError: () => undefined }));
  closedDb.close();
  const throttled = await serve(t, createHandler(openFixture(t), CREDENTIALS, { maxAuthFailures: 1 }));
  // A socket idle timeout of 100 ms: a hash check (hundreds of ms) outlasts the request's wait.
  const hashed = createHandler(openFixture(t), { username: CREDENTIALS.username, passwordHash: HASH_OF_ALT });
  const busy = await serve(t, (req, res) => {
    req.socket.setTimeout(100);
    hashed(req, res);
  });
  // A fresh wrong password each time: the same one would share a check already running.
  let guesses = 0;
  const fresh = (method: string, url: string) => () => {
    guesses += 1;
    return as(method, url, { authorization: basicAuth(CREDENTIALS.username, `falsch${guesses}`) })();
  };
  await request(`${throttled}/api/v1/status`, { headers: { authorization: 'Basic eDp5' } });

  // The HTTP layer's own errors (the `default` response) come from the CLI's server.
  const cli = await start(t, ['--demo']);
  const search = '/api/v1/buchungen?von=2026-03-01&bis=2026-03-31&betrag=-12.5';
  const as = (method: string, url: string, headers: Record<string, string> = {}): (() => Promise<Reply>) => {
    // Kept alive: a `Connection: close` in the answer is then the server's own.
    return () => request(url, { method, headers: { origin: PAGE, connection: 'keep-alive', ...headers } });
  };
  const withAuth = { authorization: AUTH };
  // Counting a failed authentication reads the clock: a broken clock is an unexpected error.
  const wrongAuth = { authorization: 'Basic eDp5' };
  const unmeetable = { ...withAuth, expect: 'bald' };
  const preflight = { 'access-control-request-method': 'GET', 'access-control-request-headers': 'authorization' };
  const whileBroken = (ask: () => Promise<Reply>) => async (): Promise<Reply> => {
    broken = true;
    try {
      return await ask();
    } finally {
      broken = false;
    }
  };

  const cases: Record<string, Case> = {};
  for (const method of ['GET', 'HEAD']) {
    const m = method.toLowerCase();
    Object.assign(cases, {
      [`${m} /api/v1/status 200`]: { reply: as(method, `${origin}/api/v1/status`, withAuth) },
      [`${m} /api/v1/status 401`]: { reply: as(method, `${origin}/api/v1/status`, wrongAuth) },
      [`${m} /api/v1/status 404`]: { reply: as(method, `${origin}/falsch/api/v1/status`, withAuth) },
      [`${m} /api/v1/status 429`]: { reply: as(method, `${throttled}/api/v1/status`, withAuth) },
      [`${m} /api/v1/status 500`]: { reply: whileBroken(as(method, `${origin}/api/v1/status`, wrongAuth)) },
      [`${m} /api/v1/status 503`]: { reply: fresh(method, `${busy}/api/v1/status`) },
      [`${m} /api/v1/buchungen 200`]: { reply: as(method, `${origin}${search}`, withAuth) },
      [`${m} /api/v1/buchungen 400`]: { reply: as(method, `${origin}/api/v1/buchungen?seite=2`, withAuth) },
      [`${m} /api/v1/buchungen 401`]: { reply: as(method, `${origin}${search}`) },
      [`${m} /api/v1/buchungen 404`]: { reply: as(method, `${origin}/falsch${search}`, withAuth) },
      [`${m} /api/v1/buchungen 429`]: { reply: as(method, `${throttled}${search}`, withAuth) },
      [`${m} /api/v1/buchungen 500`]: { reply: as(method, `${failing}${search}`, withAuth) },
      [`${m} /api/v1/buchungen 503`]: { reply: fresh(method, `${busy}${search}`) },
      [`${m} /api/v1/status default`]: { reply: as(method, `${cli.origin}/api/v1/status`, unmeetable) },
      [`${m} /api/v1/buchungen default`]: { reply: as(method, `${cli.origin}${search}`, unmeetable) },
    });
  }
  for (const path of ['/api/v1/status', '/api/v1/buchungen']) {
    Object.assign(cases, {
      [`options ${path} 204`]: { reply: as('OPTIONS', `${origin}${path}`, preflight) },
      // Not a preflight the server answers (another method requested): an ordinary request.
      [`options ${path} 401`]: { reply: as('OPTIONS', `${origin}${path}`, { 'access-control-request-method': 'PUT' }) },
      [`options ${path} 404`]: { reply: as('OPTIONS', `${origin}/falsch${path}`, withAuth) },
      [`options ${path} 405`]: { reply: as('OPTIONS', `${origin}${path}`, withAuth) },
      [`options ${path} 429`]: { reply: as('OPTIONS', `${throttled}${path}`, withAuth) },
      [`options ${path} 500`]: { reply: whileBroken(as('OPTIONS', `${origin}${path}`, wrongAuth)) },
      [`options ${path} 503`]: { reply: fresh('OPTIONS', `${busy}${path}`) },
      [`options ${path} default`]: { reply: as('OPTIONS', `${cli.origin}${path}`, unmeetable) },
    });
  }

  // The reconciliation: a POST with a JSON body, and its own preflight.
  const reconcile = '/api/v1/abgleich';
  const json = { 'content-type': 'application/json' };
  const statement = JSON.stringify({ zeilen: [{ datum: '2026-03-14', betrag: '-12.5' }] });
  const posted =
    (url: string, headers: Record<string, string>, body = statement): (() => Promise<Reply>) =>
    () =>
      request(url, { method: 'POST', headers: { origin: PAGE, connection: 'keep-alive', ...json, ...headers }, body });
  Object.assign(cases, {
    [`post ${reconcile} 200`]: { reply: posted(`${origin}${reconcile}`, withAuth) },
    [`post ${reconcile} 400`]: { reply: posted(`${origin}${reconcile}`, withAuth, '{"zeilen":[{}]}') },
    [`post ${reconcile} 401`]: { reply: posted(`${origin}${reconcile}`, {}) },
    [`post ${reconcile} 404`]: { reply: posted(`${origin}/falsch${reconcile}`, withAuth) },
    [`post ${reconcile} 413`]: {
      reply: posted(`${origin}${reconcile}`, withAuth, ' '.repeat(1024 * 1024 + 1)),
    },
    [`post ${reconcile} 415`]: {
      reply: posted(`${origin}${reconcile}`, { ...withAuth, 'content-type': 'text/plain' }),
    },
    [`post ${reconcile} 429`]: { reply: posted(`${throttled}${reconcile}`, withAuth) },
    [`post ${reconcile} 500`]: { reply: posted(`${failing}${reconcile}`, withAuth) },
    [`post ${reconcile} 503`]: { reply: fresh('POST', `${busy}${reconcile}`) },
    [`post ${reconcile} default`]: { reply: posted(`${cli.origin}${reconcile}`, unmeetable) },
    [`options ${reconcile} 204`]: {
      reply: as('OPTIONS', `${origin}${reconcile}`, {
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization, content-type',
      }),
    },
    [`options ${reconcile} 401`]: {
      reply: as('OPTIONS', `${origin}${reconcile}`, { 'access-control-request-method': 'GET' }),
    },
    [`options ${reconcile} 404`]: { reply: as('OPTIONS', `${origin}/falsch${reconcile}`, withAuth) },
    [`options ${reconcile} 405`]: { reply: as('OPTIONS', `${origin}${reconcile}`, withAuth) },
    [`options ${reconcile} 429`]: { reply: as('OPTIONS', `${throttled}${reconcile}`, withAuth) },
    [`options ${reconcile} 500`]: { reply: whileBroken(as('OPTIONS', `${origin}${reconcile}`, wrongAuth)) },
    [`options ${reconcile} 503`]: { reply: fresh('OPTIONS', `${busy}${reconcile}`) },
    [`options ${reconcile} default`]: { reply: as('OPTIONS', `${cli.origin}${reconcile}`, unmeetable) },
  });

  const documented = Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.entries(item).flatMap(([method, operation]) =>
      Object.keys(operation.responses).map((status) => `${method} ${path} ${status}`),
    ),
  );
  assert.deepEqual(Object.keys(cases).sort(), documented.sort(), 'the statuses the document lists are the ones tested');

  const bodies = new Map<string, Reply>();
  for (const [key, { reply: ask }] of Object.entries(cases)) {
    const [method, path, status] = key.split(' ') as [Method, string, string];
    const response = doc.paths[path]?.[method]?.responses[status];
    assert.ok(response, key);
    const reply = await ask();
    // `default`: the cases ask with an `Expect` the server cannot meet.
    assert.equal(reply.status, status === 'default' ? 417 : Number(status), `${key}: ${reply.body}`);

    const schema = response.content?.['application/json'].schema;
    if (method === 'head' || status === '204') {
      assert.equal(schema, undefined, `${key} documents no body`);
      assert.equal(reply.body, '', `${key} has no body`);
    } else {
      assert.ok(schema, `${key} has a schema`);
      const validate = ajv.compile(schema);
      assert.ok(validate(JSON.parse(reply.body)), `${key}: ${reply.body} ${ajv.errorsText(validate.errors)}`);
      if (method === 'get') bodies.set(`${path} ${status}`, reply);
    }
    if (method === 'head') {
      // docs/API.md: HEAD is answered like GET without a body.
      const get = bodies.get(`${path} ${status}`);
      assert.ok(get, `${key}: GET was asked first`);
      assert.equal(reply.headers['content-length'], String(Buffer.byteLength(get.body)), `${key}: GET's length`);
    }

    const headers = response.headers ?? {};
    for (const [name, header] of Object.entries(headers)) {
      // node:http's own `Connection: keep-alive` too: a client's strict validator checks it.
      const value = reply.headers[name.toLowerCase()];
      if (value === undefined) {
        assert.ok(!header.required, `${key} sends the required header ${name}`);
        continue;
      }
      const check = ajv.compile(header.schema);
      assert.ok(check(value), `${key} ${name}: ${String(value)} ${ajv.errorsText(check.errors)}`);
    }
    const documentedNames = new Set(Object.keys(headers).map((name) => name.toLowerCase()));
    // node:http sends `Connection` on every answer; the server's `close` is part of the API.
    if (reply.headers['connection'] === 'close')
      assert.ok(documentedNames.has('connection'), `${key} closes: documented?`);
    for (const name of Object.keys(reply.headers)) {
      assert.ok(TRANSPORT_HEADERS.has(name) || documentedNames.has(name), `${key} sends ${name}: is it documented?`);
    }
  }
});

test("the edge's `bad_request` on each endpoint is an answer its 400 describes, the close included", async (t) => {
  const doc = await dereferenced();
  const ajv = compiler();
  const origin = await serveFixture(t);
  const post = (lines: string, target = '/api/v1/abgleich', version = '1.1'): string =>
    `POST ${target} HTTP/${version}\r\n${lines}Content-Length: 2\r\n\r\n{}`;
  const json = 'Content-Type: application/json\r\n';
  const login = `Authorization: ${AUTH}\r\n`;
  const host = 'Host: 127.0.0.1\r\n';
  const requests: Record<string, string> = {
    'two Content-Type lines': post(`${host}${login}${json}${json}`),
    'two Authorization lines': post(`${host}${login}${login}${json}`),
    'a bad Host': post(`Host: a b\r\n${login}${json}`),
    'user info in an absolute-form target': post(`${host}${login}${json}`, 'http://x@127.0.0.1/api/v1/abgleich'),
    'HTTP/1.0 with Transfer-Encoding': `POST /api/v1/abgleich HTTP/1.0\r\n${host}${login}${json}Transfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n`,
    'a search with two Authorization lines': `GET /api/v1/buchungen?von=2026-03-01&bis=2026-03-31&betrag=-1 HTTP/1.1\r\n${host}${login}${login}\r\n`,
  };
  for (const [what, payload] of Object.entries(requests)) {
    const path = what.startsWith('a search') ? '/api/v1/buchungen' : '/api/v1/abgleich';
    const response = doc.paths[path]?.[path === '/api/v1/abgleich' ? 'post' : 'get']?.responses['400'];
    const schema = response?.content?.['application/json'].schema;
    assert.ok(schema, path);
    const reply = await rawRequest(origin, payload);
    assert.deepEqual([reply.status, JSON.parse(reply.body)], [400, JSON.parse(ERRORS.badRequest.body)], what);
    const validate = ajv.compile(schema);
    assert.ok(validate(JSON.parse(reply.body)), `${what}: ${reply.body} ${ajv.errorsText(validate.errors)}`);
    assert.equal(reply.headers['connection'], 'close', what);
    assert.ok(response?.headers?.['Connection'], `${what}: the 400 of ${path} says the connection may close`);
  }
});

// A CONNECT's 405 came before any path and was in no `default` the document gave: a client
// that checks answers against it refused the service's own answer.
test("every error of the HTTP layer is an answer each path's `default` describes, CONNECT's 405 included", async (t) => {
  const doc = await dereferenced();
  const ajv = compiler();
  // The command's listener: the library's handler answers none of these (answerProtocolErrors does).
  const { origin } = await start(t, ['--demo']);
  const requests: Record<string, [payload: string, status: number]> = {
    'a CONNECT': ['CONNECT 127.0.0.1:80 HTTP/1.1\r\nHost: 127.0.0.1:80\r\n\r\n', 405],
    'an Expect it cannot meet': ['GET /api/v1/status HTTP/1.1\r\nHost: 127.0.0.1\r\nExpect: foo\r\n\r\n', 417],
    'a request line it cannot parse': ['GARBAGE\r\n\r\n', 400],
    'headers over the limit': [
      `GET /api/v1/status HTTP/1.1\r\nHost: 127.0.0.1\r\nX: ${'x'.repeat(20_000)}\r\n\r\n`,
      431,
    ],
  };
  for (const [path, item] of Object.entries(doc.paths)) {
    const schema = (item.get ?? item.post)?.responses['default']?.content?.['application/json'].schema;
    assert.ok(schema, path);
    const validate = ajv.compile(schema);
    for (const [what, [payload, status]] of Object.entries(requests)) {
      const reply = await rawRequest(origin, payload);
      assert.equal(reply.status, status, what);
      assert.ok(validate(JSON.parse(reply.body)), `${path}, ${what}: ${reply.body} ${ajv.errorsText(validate.errors)}`);
    }
  }
});

test('HEAD takes the parameters of GET', async () => {
  const doc = await dereferenced();
  for (const [path, item] of Object.entries(doc.paths)) {
    assert.deepEqual(item.head?.parameters, item.get?.parameters, path);
  }
});

test('the documented parameter patterns accept exactly what the server accepts', async () => {
  const doc = await dereferenced();
  const parameters = doc.paths['/api/v1/buchungen']?.get?.parameters ?? [];
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
    '-0',
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

test("BankLine's amounts accept exactly what the server accepts, signs and -0 included", async () => {
  const { components } = (await SwaggerParser.dereference(structuredClone(raw) as never)) as unknown as {
    components: { schemas: Record<string, Schema> };
  };
  const validate = compiler().compile(components.schemas['BankLine'] as Schema);
  // Exponents and a third decimal are refused in prose: a schema cannot say so of a number.
  const samples = ['0', '-0', '-0.0', '-0.00', '0.5', '-0.01', '-1', '"0"', '"-0"', '"+0"', '"-0.10"', '"0,1"'];
  // The bounds of a number: 12 digits before the point, as a string's.
  samples.push('999999999999.99', '-999999999999.99', '1000000000000', '-1000000000000', '9999999999999');
  for (const field of ['betrag', 'toleranz']) {
    for (const sample of samples) {
      const text = `{"datum":"2026-01-01",${field === 'betrag' ? '' : '"betrag":1,'}"${field}":${sample}}`;
      const accepted = parseReconcileBody(new TextEncoder().encode(`{"zeilen":[${text}]}`)).ok;
      assert.equal(accepted, validate(JSON.parse(text)), `${field}: ${sample}`);
    }
  }
});

test("a statement's dates and excluded ids are bounded in the document as the server bounds them, formats unchecked", async () => {
  const { components } = (await SwaggerParser.dereference(structuredClone(raw) as never)) as unknown as {
    components: { schemas: Record<string, Schema> };
  };
  // A validator that treats `format` as an annotation, as JSON Schema 2020-12 does by default.
  const ajv = new Ajv2020({ strict: true, validateFormats: false });
  ajv.addKeyword('example');
  const validate = ajv.compile(components.schemas['ReconcileRequest'] as Schema);
  const samples = [
    '"datum":"2026-03-01"',
    '"datum":"2026-3-1"',
    '"datum":"01.03.2026"',
    '"datum":"2026-03-01T00:00:00Z"',
    '"datum":"2026-03-01","ausser":[9007199254740991,-9007199254740991]',
    '"datum":"2026-03-01","ausser":[9007199254740992]',
    '"datum":"2026-03-01","ausser":[-9007199254740992]',
    '"datum":"2026-03-01","ausser":[1e300]',
  ];
  for (const sample of samples) {
    const [line, rest = ''] = sample.split(',"ausser":');
    const text = `{"zeilen":[{${line},"betrag":"1"}]${rest === '' ? '' : `,"ausser":${rest}`}}`;
    const accepted = parseReconcileBody(new TextEncoder().encode(text)).ok;
    assert.equal(validate(JSON.parse(text)), accepted, sample);
  }
});

test("every message of the validator matches the document's 400 schema", async () => {
  const doc = await dereferenced();
  const schema = doc.paths['/api/v1/buchungen']?.get?.responses['400']?.content?.['application/json'].schema;
  assert.ok(schema);
  const validate = compiler().compile(schema);
  const valid = 'von=2026-03-01&bis=2026-03-31&betrag=-1';
  const queries = [
    `${valid}&x=%ZZ`,
    `${valid}&seite=2`,
    `${valid}&${'n'.repeat(60)}=1`,
    // Line and paragraph separators are kept in the name, and a schema's `.` matches neither.
    `${valid}&a%E2%80%A8b%E2%80%A9c=1`,
    `${valid}&limit=1&limit=2`,
    `${valid}&von=2026-03-01`,
    'bis=2026-03-31&betrag=-1',
    'von=2026-03-01&betrag=-1',
    'von=2026-03-01&bis=2026-03-31',
    'von=2026-02-30&bis=2026-03-31&betrag=-1',
    'von=2026-03-01&bis=31.03.2026&betrag=-1',
    'von=2026-03-01&bis=2026-03-31&betrag=1e3',
    `${valid}&toleranz=-1`,
    `${valid}&waehrung=EURO`,
    `${valid}&limit=1001`,
    'von=2026-03-31&bis=2026-03-01&betrag=-1',
  ];
  for (const query of queries) {
    const parsed = parseSearchQuery(query);
    assert.ok(!parsed.ok, query);
    assert.ok(validate({ fehler: parsed.message, code: 'bad_query' }), `${query}: ${parsed.message}`);
  }
  assert.ok(
    !validate({ fehler: 'Parameter ‘von’ fehlt.', code: 'bad_query' }),
    'a message the server never sends does not match',
  );
  // The reconciliation refuses any query string with the search's first two rules.
  const reconcile = doc.paths['/api/v1/abgleich']?.post?.responses['400']?.content?.['application/json'].schema;
  assert.ok(reconcile);
  const validateReconcile = compiler().compile(reconcile);
  for (const query of ['waehrung=USD', `${'n'.repeat(60)}=1`, 'x=%ZZ', 'tage=3&%FF']) {
    const message = refuseQuery(query);
    assert.ok(message !== undefined, query);
    assert.ok(validateReconcile({ fehler: message, code: 'bad_query' }), `${query}: ${message}`);
  }
});

test('booking-search-server --openapi prints the document', async () => {
  const result = await run(['--openapi']);
  assert.equal(result.code, 0);
  assert.deepEqual(JSON.parse(result.stdout), raw);
});

test("the reconciliation's examples are one exchange: the request, sent to a book of the answer's booking and of those it excludes, gets that answer", async (t) => {
  type Example = { content: { 'application/json': { example: unknown } } };
  const post = (
    raw as { paths: Record<string, { post: { requestBody: Example; responses: Record<string, Example> } }> }
  ).paths['/api/v1/abgleich']?.post;
  const asked = post?.requestBody.content['application/json'].example as { ausser: number[] };
  const answered = post?.responses['200']?.content['application/json'].example as {
    zeilen: Array<{ buchungen: Array<{ id: number; datum: string; betrag: number; zweck: string }> }>;
  };
  const file = buildDatabase(t, ['schema.sql']);
  const writer = new Database(file);
  writer.exec("INSERT INTO categories VALUES (1, 'Porto'); INSERT INTO payment_methods VALUES (1, 'Barkasse')");
  const insert = writer.prepare('INSERT INTO entries VALUES (?, ?, ?, ?, 1, 1)');
  for (const { id, datum, betrag, zweck } of answered.zeilen.flatMap((line) => line.buchungen)) {
    insert.run(id, datum, -(parseAmount(String(betrag)) as number), zweck);
  }
  // Each excluded booking the line's nearest: were it not excluded, the line would get it.
  for (const id of asked.ausser) insert.run(id, '2026-03-14', 1260, 'ausgeschlossen');
  writer.close();
  const origin = await serve(t, createHandler(openReadOnly(t, file), CREDENTIALS));
  const reply = await request(`${origin}/api/v1/abgleich`, {
    method: 'POST',
    headers: { authorization: AUTH, 'content-type': 'application/json' },
    body: JSON.stringify(asked),
  });
  assert.equal(reply.status, 200, reply.body);
  assert.deepEqual(JSON.parse(reply.body), answered);
});
