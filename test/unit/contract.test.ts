// One source for each list. The code holds the query parameters (lib/query.ts), the
// errors (lib/messages.ts) and the CLI usage (bin/config/args.ts); docs/API.md, openapi.json,
// the README, docs/operations.md and the test oracle each repeat them for their readers.
// These tests fail as soon as one copy is changed without the others.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { USAGE } from '../../bin/config/args.js';
import { API_VERSION } from '../../lib/handler.js';
import { MAX_HASH_WAIT_MS } from '../../lib/hash-checks.js';
import { BODY_MESSAGES, ERROR_CODES, ERRORS, lineMessage, QUERY_MESSAGES } from '../../lib/messages.js';
import { resolveOptions } from '../../lib/options.js';
import { PARAMETERS } from '../../lib/query.js';
import { statusAnswer } from '../support/helpers.js';
import { NAMES } from '../support/oracle.js';

const read = (path: string): string => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');
const API = read('docs/API.md');
const README = read('README.md');
const OPERATIONS = read('docs/operations.md');
const CLIENTS = read('docs/clients.md');
/** Every document of the project a reader may quote a message from. */
const DOCUMENTS = [
  'README.md',
  'CONTRIBUTING.md',
  'docs/API.md',
  'docs/clients.md',
  'docs/embedding.md',
  'docs/operations.md',
  'docs/applications.md',
];
const OPENAPI = JSON.parse(read('openapi.json')) as Json;

type Json = { [key: string]: unknown };

/** The text of a Markdown section: from its heading line to the next heading of its level or above. */
function section(markdown: string, heading: string): string {
  const start = markdown.split('\n').findIndex((line) => line.trim() === heading);
  assert.notEqual(start, -1, `a section "${heading}"`);
  const level = heading.indexOf(' ');
  const lines = markdown.split('\n').slice(start + 1);
  const end = lines.findIndex((line) => /^#+ /.test(line) && line.indexOf(' ') <= level);
  return lines.slice(0, end === -1 ? undefined : end).join('\n');
}

/** The first cell of each body row of the first table in `text`, without backticks. */
function firstColumn(text: string): string[] {
  const rows = text.split('\n').filter((line) => line.startsWith('|'));
  return rows.slice(2).map((row) => (row.split('|')[1] ?? '').trim().replaceAll('`', ''));
}

/** Every `code span` in `text` that reads as a message: it ends with a full stop. */
function messagesIn(text: string): string[] {
  return [...text.matchAll(/`([^`]+\.)`/g)].map((match) => match[1] as string);
}

/** Resolves a local `$ref` of openapi.json. */
function resolve(node: unknown): Json {
  const ref = (node as Json)['$ref'];
  if (typeof ref !== 'string') return node as Json;
  return ref
    .slice(2)
    .split('/')
    .reduce<Json>((parent, key) => parent[key] as Json, OPENAPI);
}

/** Every message the code can send, parameterised ones with `NAME`. */
const CODE_MESSAGES: string[] = [
  ...Object.values(ERRORS).map((error) => error.fehler),
  ...Object.values(QUERY_MESSAGES).map((message) => (typeof message === 'function' ? message('NAME') : message)),
  ...Object.values(BODY_MESSAGES).map((message) => (typeof message === 'function' ? message('NAME') : message)),
];

/** `true` when `text` is a code message, `NAME` standing for any parameter name. */
function isCodeMessage(text: string): boolean {
  return CODE_MESSAGES.some((message) => {
    const [before, after] = message.split('NAME');
    if (after === undefined) return text === message;
    return text.startsWith(before as string) && text.endsWith(after) && text.length > message.length - 4;
  });
}

test('the query parameters are one list: code, docs/API.md, README, openapi.json and the oracle', () => {
  const code = [...PARAMETERS];
  assert.deepEqual(firstColumn(section(API, '### Parameters')), code, 'docs/API.md, "Parameters"');
  assert.deepEqual(firstColumn(section(README, '### `GET {base}/api/v1/buchungen`')), code, 'README parameter table');
  assert.deepEqual([...NAMES], code, 'test/support/oracle.ts NAMES');
  const operations = OPENAPI['paths'] as Record<string, Record<string, { parameters?: unknown[] }>>;
  // The search's two operations; OPTIONS (the CORS preflight) takes none of them.
  for (const method of ['get', 'head']) {
    const operation = operations['/api/v1/buchungen']?.[method] ?? {};
    const names = (operation.parameters ?? []).map((parameter) => resolve(parameter)['name']);
    assert.deepEqual(names, code, `openapi.json ${method.toUpperCase()} /api/v1/buchungen`);
  }
});

test('every message of the code is in docs/API.md, and docs/API.md holds no other', () => {
  const documented = [
    ...messagesIn(section(API, '## Errors')),
    ...messagesIn(section(API, '### Validation messages')),
    ...messagesIn(section(API, '### Body messages')),
  ];
  for (const message of CODE_MESSAGES) assert.ok(documented.includes(message), `docs/API.md lists "${message}"`);
  for (const message of documented) assert.ok(isCodeMessage(message), `"${message}" in docs/API.md is in the code`);
});

test("the API's version is one: API_VERSION, the status answer the tests expect, docs/API.md, embedding.md, the README and openapi.json", () => {
  assert.equal(statusAnswer().version, API_VERSION);
  assert.ok(section(API, '## GET {base}/api/v1/status').includes(`"version": "${API_VERSION}"`), 'docs/API.md, status');
  assert.ok(read('docs/embedding.md').includes(`\`API_VERSION\` (\`"${API_VERSION}"\`)`), 'docs/embedding.md');
  assert.ok(README.includes(`"version":"${API_VERSION}"`), 'README.md');
  const info = OPENAPI['info'] as Json;
  const status = ((OPENAPI['components'] as Json)['schemas'] as Record<string, Json>)['Status'] as Json;
  assert.equal(info['version'], API_VERSION, 'openapi.json info');
  assert.equal(((status['properties'] as Json)['version'] as Json)['const'], API_VERSION, 'openapi.json Status');
});

test('the error codes are one list: lib/messages.ts, docs/API.md and openapi.json', () => {
  const fixed = Object.values(ERRORS).map((error) => error.code);
  assert.deepEqual(new Set(fixed).size, fixed.length, 'each fixed error has a code of its own');
  assert.deepEqual([...new Set([...fixed, 'bad_query', 'bad_body'])].sort(), [...ERROR_CODES].sort(), 'ERROR_CODES');
  assert.deepEqual(firstColumn(section(API, '## Errors')).sort(), [...ERROR_CODES].sort(), 'docs/API.md, "Errors"');
  const schemas = (OPENAPI['components'] as Json)['schemas'] as Record<string, Json>;
  assert.deepEqual(schemas['ErrorCode']?.['enum'], [...ERROR_CODES], 'openapi.json ErrorCode');
  // Each error response of openapi.json names the codes it carries, all of them known.
  const responses = (OPENAPI['components'] as Json)['responses'] as Record<string, Json>;
  const described = new Set<string>();
  for (const [name, response] of Object.entries(responses)) {
    const schema = ((response['content'] as Json | undefined)?.['application/json'] as Json | undefined)?.['schema'];
    const code = ((schema as Json | undefined)?.['properties'] as Json | undefined)?.['code'] as Json | undefined;
    if (code === undefined) continue;
    const codes = (code['enum'] as string[] | undefined) ?? [code['const'] as string];
    for (const one of codes) assert.ok(ERROR_CODES.includes(one as never), `${name}: ${one} is a code`);
    for (const one of codes) described.add(one);
  }
  assert.deepEqual([...described].sort(), [...ERROR_CODES].sort(), 'every code is in some response of openapi.json');
});

test("the errors that end the connection are docs/API.md's rows that say `Connection: close`", () => {
  const rows = section(API, '## Errors')
    .split('\n')
    .filter((line) => line.startsWith('| `'));
  const documented = rows.filter((row) => row.includes('`Connection: close`')).map((row) => /`(\w+)`/.exec(row)?.[1]);
  const closing = Object.values(ERRORS)
    .filter((error) => error.closes)
    .map((error) => error.code);
  assert.deepEqual(documented.sort(), closing.sort());
});

test("docs/clients.md's table of what to do goes by code: every code has its row, each code once", () => {
  const cells = section(CLIENTS, '## Errors')
    .split('\n')
    .filter((line) => line.startsWith('|'))
    .slice(2)
    .map((row) => row.split('|')[1] ?? '');
  const codes = cells.flatMap((cell) => [...cell.matchAll(/`([a-z_]+)`/g)].map((match) => match[1] as string));
  assert.deepEqual([...codes].sort(), [...ERROR_CODES].sort());
});

test('every message quoted in the README and docs/ is one of the code', () => {
  for (const path of DOCUMENTS) {
    for (const message of messagesIn(read(path))) {
      assert.ok(isCodeMessage(message), `"${message}" in ${path} is in the code`);
    }
  }
});

test('openapi.json knows every message of the code, and no other', () => {
  const documented: string[] = [];
  const patterns: RegExp[] = [];
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(visit);
    if (typeof node !== 'object' || node === null) return;
    for (const [key, value] of Object.entries(node)) {
      if (key === 'fehler' && typeof value === 'string') documented.push(value);
      if (key === 'fehler' && typeof value === 'object' && value !== null) {
        const schema = value as Json;
        for (const alternative of [schema, ...((schema['oneOf'] ?? schema['anyOf'] ?? []) as Json[])]) {
          if (typeof alternative['const'] === 'string') documented.push(alternative['const']);
          if (Array.isArray(alternative['enum'])) documented.push(...(alternative['enum'] as string[]));
          if (typeof alternative['pattern'] === 'string') patterns.push(new RegExp(alternative['pattern']));
        }
      }
      visit(value);
    }
  };
  visit(OPENAPI);

  for (const message of documented) assert.ok(isCodeMessage(message), `"${message}" in openapi.json is in the code`);
  for (const message of CODE_MESSAGES) {
    const instances = message.includes('NAME') ? PARAMETERS.map((name) => message.replace('NAME', name)) : [message];
    // A message for a parameter (NAME) is described for some; "repeated" for every one of them.
    const unknown = instances.filter(
      (instance) => !documented.includes(instance) && !patterns.some((pattern) => pattern.test(instance)),
    );
    const known =
      message === QUERY_MESSAGES.repeated('NAME') ? unknown.length === 0 : unknown.length < instances.length;
    assert.ok(known, `openapi.json describes "${message}": not ${unknown.join(' ')}`);
  }
});

test("the hash-check queue in the docs is the code's: how many may wait, and how long a request waits at most", () => {
  const { maxQueuedHashChecks } = resolveOptions({});
  const seconds = MAX_HASH_WAIT_MS / 1000;
  const EMBEDDING = read('docs/embedding.md');
  const CLIENTS = read('docs/clients.md');
  assert.match(API, new RegExp(`\`maxQueuedHashChecks\` \\(${maxQueuedHashChecks},`));
  assert.match(OPERATIONS, new RegExp(`with at most ${maxQueuedHashChecks} more waiting`));
  assert.match(EMBEDDING, new RegExp(`\\| \`maxQueuedHashChecks\` \\| \`${maxQueuedHashChecks}\` \\|`));
  assert.match(API, new RegExp(`waiting\\s+for its check after ${seconds} s`));
  assert.match(OPERATIONS, new RegExp(`waiting for its check after ${seconds} s`));
  assert.match(EMBEDDING, new RegExp(`still waiting after ${seconds} s`));
  assert.match(CLIENTS, new RegExp(`\\(${seconds} s at most\\)`));
});

test('docs/settings.md shows the usage and its closing words exactly as --help prints them, a row for each of its options, and is the only document that does', () => {
  const reference = read('docs/settings.md');
  const [commands = '', rest = ''] = USAGE.split('Options:\n');
  const closing = rest.slice(rest.indexOf('\n\n') + 2);
  assert.ok(reference.includes(`\`\`\`text\n${commands.trimEnd()}\n\`\`\``), 'the commands, verbatim');
  assert.ok(reference.includes(`\`\`\`text\n${closing.trimEnd()}\n\`\`\``), 'the closing words, verbatim');
  // --help's options, one a line: each is a row of the reference, in the same order.
  const options = [...rest.matchAll(/^ {2}(--[a-z-]+)/gm)].map((match) => match[1]);
  const rows = [...reference.matchAll(/^\| `(--[a-z-]+)/gm)].map((match) => match[1]);
  assert.deepEqual(rows, options, 'a row for every option of --help, in its order');
  const firstLine = USAGE.split('\n').find((line) => line.includes('--db FILE [options]')) as string;
  for (const path of DOCUMENTS) {
    assert.ok(!read(path).includes(firstLine), `${path} leaves the usage to docs/settings.md`);
  }
});

test('bench/README.md lists every benchmark script of package.json, and is the only document with such a table', () => {
  const scripts = Object.keys((JSON.parse(read('package.json')) as { scripts: Json }).scripts);
  const benchmarks = scripts.filter((name) => /^(bench(:.+)?|soak)$/.test(name) && name !== 'bench:install');
  assert.ok(benchmarks.includes('bench:guessing'), 'the benchmark scripts are found');
  const readme = read('bench/README.md');
  for (const name of benchmarks) {
    assert.ok(readme.includes(`\`npm run ${name}`), `bench/README.md shows npm run ${name}`);
  }
  for (const path of ['README.md', 'CONTRIBUTING.md', 'BENCHMARKS.md']) {
    const rows = read(path)
      .split('\n')
      .filter((line) => /^\| `npm run (bench|soak)/.test(line));
    assert.deepEqual(rows, [], `${path} links to bench/README.md instead of listing the benchmarks`);
  }
});

test('a benchmark that opens the generated books (bench/data/bookings-…) sets them up first: its script runs bench:setup', () => {
  const scripts = (JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts;
  const missing: string[] = [];
  let opening = 0;
  for (const [name, script] of Object.entries(scripts)) {
    const file = /node --import tsx (bench\/[\w-]+\.ts)/.exec(script)?.[1];
    if (file === undefined || file === 'bench/generate.ts') continue;
    const text = read(file);
    // A benchmark that generates what it opens (bench:books) needs no setup.
    const opensGenerated = text.includes('bench/data/bookings-') && !text.includes('bench/generate.ts');
    if (opensGenerated) opening += 1;
    if (opensGenerated && !script.includes('npm run bench:setup')) missing.push(name);
  }
  assert.ok(opening >= 5, `${opening} benchmarks open the generated books`);
  assert.deepEqual(missing, []);
});

test("every message of the reconciliation's body, alone and on a line, is one the document's 400 describes", () => {
  const schema = resolve(
    ((OPENAPI['paths'] as Json)['/api/v1/abgleich'] as Record<string, { responses: Json }>)['post']?.responses['400'],
  );
  const fehler = (((schema['content'] as Json)['application/json'] as Json)['schema'] as Json)['properties'] as Json;
  const pattern = new RegExp((fehler['fehler'] as Json)['pattern'] as string);
  for (const message of Object.values(BODY_MESSAGES)) {
    const text = typeof message === 'function' ? message('NAME') : message;
    for (const instance of [text, lineMessage(3, text)]) assert.match(instance, pattern);
  }
});

test("the reconciliation body's messages are one list: lib/messages.ts and docs/API.md, in the order they are checked", () => {
  const code = Object.values(BODY_MESSAGES).map((message) =>
    typeof message === 'function' ? message('NAME') : message,
  );
  // `missing` and `unknown` stand once for the body and for a line.
  assert.deepEqual(messagesIn(section(API, '### Body messages')), code, 'docs/API.md, "Body messages"');
});

test("openapi.json's throttle and not-found texts say what docs/API.md says", () => {
  const components = OPENAPI['components'] as Record<string, Record<string, Json>>;
  const described = (name: string): string => components['responses']?.[name]?.['description'] as string;
  // The login throttle's wait ends with its window, which the admin sets (60 s by default).
  const retryAfter = components['headers']?.['Retry-After']?.['description'] as string;
  assert.match(retryAfter, /until the window that caused it ends, at most the window \(60 s by default/);
  assert.match(API, /`Retry-After` \(the seconds\s+until the window that caused it ends/);
  assert.ok(!CLIENTS.includes('(≤ 60 s)'), 'docs/clients.md bounds the wait by the window');
  // Requests without credentials: a known client at the address lets them through.
  assert.match(API, /from an address where no known client is, the next get `429`/);
  const info = (OPENAPI['info'] as Json)['description'] as string;
  const throttles = ['TooManyFailedLogins', 'TooManyFailedLoginsHead', 'TooManyRequestsSearch', 'Preflight'];
  for (const [where, text] of [['info', info], ...throttles.map((name) => [name, described(name)])]) {
    assert.ok(!text?.includes('no login in between'), `${where}: no known client, not no login`);
    assert.match(text ?? '', /where no known client is/, where);
  }
  assert.equal(described('TooManyRequestsSearchHead'), `${described('TooManyRequestsSearch')} No body.`);
  // Every endpoint is a path that does not get 404.
  for (const name of ['NotFound', 'NotFoundHead']) {
    for (const path of Object.keys(OPENAPI['paths'] as Json)) {
      assert.ok(described(name).includes(`\`{basePath}${path}\``), `${name} names ${path}`);
    }
  }
});

test("which answers carry the CORS headers: docs/API.md and openapi.json name the HTTP parser's errors and those of them the service answers", () => {
  const cors = section(API, '## Browser clients (CORS)').replaceAll(/\s+/g, ' ');
  assert.match(
    cors,
    /the HTTP parser's errors none, but those the service answers \(a `400` for the `Host`, a body's `408`\)/,
  );
  const info = ((OPENAPI['info'] as Json)['description'] as string).replaceAll(/\s+/g, ' ');
  assert.match(info, /The HTTP layer's errors \(the `default` response\) get none of these headers, `Vary` included/);
  const vary = ((OPENAPI['components'] as Json)['headers'] as Record<string, Json>)['Vary']?.['description'];
  assert.match(String(vary), /only when the service answers them: a `400` for the `Host`, a body's `408`/);
});
