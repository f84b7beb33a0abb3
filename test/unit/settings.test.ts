// Each setting is defined once: the command's in bin/config/settings.ts, the library's defaults in
// lib/options.ts (DEFAULTS). Everything else that names a setting derives from them or is
// held to them here: --help's Options, the flags parseArgs takes, the keys of the
// configuration file, the library options a setting feeds, and the defaults the documents
// (lib/types.ts, docs/embedding.md, docs/API.md) write down.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { CliError } from '../../bin/base/errors.js';
import { CONFIG_KEYS, parseCommandLine, USAGE } from '../../bin/config/args.js';
import type { ServeCommand } from '../../bin/config/serve-command.js';
import type { Setting } from '../../bin/config/setting-kinds.js';
import { camel, type Flag, handlerOptions, SETTINGS } from '../../bin/config/settings.js';
import { DEFAULTS, OPTION_NAMES, resolveOptions } from '../../lib/options.js';
import { settingsReference } from '../../scripts/settings-doc.js';

const ROOT = join(import.meta.dirname, '../..');
const read = (path: string): string => readFileSync(join(ROOT, path), 'utf8');
const ROWS = Object.entries(SETTINGS) as Array<[Flag, Setting<unknown>]>;
const USER = { BOOKING_SEARCH_USER: 'kasse', BOOKING_SEARCH_PASSWORD: 'geheim' };

test("--help lists every setting once, in the table's order, with the default the table holds", () => {
  const options = USAGE.slice(USAGE.indexOf('Options:\n'));
  const listed = [...options.matchAll(/^ {2}--([a-z-]+)/gm)].map((match) => match[1]);
  assert.deepEqual(
    listed,
    ROWS.map(([flag]) => flag),
  );
  for (const [flag, setting] of ROWS) {
    // A default is written only where the row says, and only from its value: a figure in the
    // words themselves would be a copy.
    assert.doesNotMatch(setting.help, /\(default [0-9]/, `--${flag} writes its default through {default}`);
    if (setting.help.includes('{default}')) {
      assert.ok(options.includes(setting.show(setting.default)), `--${flag} shows ${setting.show(setting.default)}`);
    }
  }
});

test('the configuration file and the variables take every setting with a value, and no switch or --config', () => {
  for (const [flag, setting] of ROWS) {
    assert.equal(CONFIG_KEYS.has(flag), setting.placeholder !== undefined && flag !== 'config', flag);
  }
});

test("each whole number's bounds are its parser's: the bounds pass, one beyond them is refused, naming the flag", () => {
  for (const [flag, setting] of ROWS) {
    if (setting.bounds === undefined) continue;
    const [min, max] = setting.bounds;
    assert.equal(setting.parse(String(min), `--${flag}`), min);
    assert.equal(setting.parse(String(max), `--${flag}`), max);
    for (const beyond of [String(max + 1), ...(min > 0 ? [String(min - 1)] : []), 'x']) {
      assert.throws(() => setting.parse(beyond, `--${flag}`), {
        message: `--${flag} must be a whole number from ${min} to ${max}, not '${beyond}' (see --help)`,
      });
      assert.throws(() => setting.parse(beyond, `--${flag}`), CliError);
    }
  }
});

test('a setting that feeds a library option has its name there too (the unit, Ms, or the plural of a list aside)', () => {
  for (const [flag, setting] of ROWS) {
    if (setting.option === undefined) continue;
    const name = camel(flag);
    assert.ok([name, `${name}Ms`, `${name}s`].includes(setting.option.name), `--${flag} feeds ${setting.option.name}`);
  }
});

test("the command's defaults for library options are the library's: nothing given, the same options resolve", () => {
  const command = parseCommandLine(['--demo'], USER) as ServeCommand;
  const given = handlerOptions(command.settings);
  assert.deepEqual(Object.keys(given).sort(), [
    'authFailureWindowMs',
    'corsOrigins',
    'maxAuthFailures',
    'maxGlobalFailures',
    'maxUnauthenticated',
    'maxUserFailures',
  ]);
  const resolved = resolveOptions(given) as unknown as Record<string, unknown>;
  const library = resolveOptions({}) as unknown as Record<string, unknown>;
  for (const name of Object.keys(given)) {
    if (name !== 'corsOrigins') assert.equal(resolved[name], library[name], name);
  }
  assert.deepEqual(
    handlerOptions((parseCommandLine(['--demo', '--auth-failure-window', '5'], USER) as ServeCommand).settings)
      .authFailureWindowMs,
    5000,
  );
});

/** The defaults a document may name: the library's, whole numbers and strings. */
const NAMED = Object.entries(DEFAULTS).filter(
  (entry): entry is [string, number | string] => typeof entry[1] === 'number' || typeof entry[1] === 'string',
);

test("lib/types.ts writes each option's default as lib/options.ts holds it", () => {
  const types = read('lib/types.ts');
  const documented = new Map(
    [...types.matchAll(/\/\*\*((?:(?!\*\/)[\s\S])*)\*\/\s*(\w+)\?:/g)].map((match) => [match[2], match[1] ?? '']),
  );
  for (const [name, value] of NAMED) {
    if (name === 'maxHashChecks') continue; // written as the rule it is computed by
    const doc = (documented.get(name) ?? '').replace(/\s*\n\s*\*\s*/g, ' ');
    assert.ok(doc.includes(`Default \`${JSON.stringify(value)}\``), `lib/types.ts: ${name} has Default \`${value}\``);
  }
});

test("docs/embedding.md's table of options gives each default as lib/options.ts holds it", () => {
  const embedding = read('docs/embedding.md');
  for (const [name, value] of NAMED) {
    if (name === 'maxHashChecks') continue;
    assert.ok(
      embedding.includes(`| \`${name}\` | \`${JSON.stringify(value)}\` |`),
      `docs/embedding.md: ${name} | ${JSON.stringify(value)}`,
    );
  }
});

test("docs/embedding.md's table of options has a row for each option createHandler takes, no more", () => {
  const embedding = read('docs/embedding.md');
  const table = embedding.slice(embedding.indexOf('| option |'), embedding.indexOf('Their type is `HandlerOptions`.'));
  const rows = [...table.matchAll(/^\| `(\w+)` \|/gm)].map((match) => match[1]);
  assert.deepEqual([...rows].sort(), [...OPTION_NAMES].sort());
});

test('docs/API.md, wherever it writes a figure beside an option, writes its default', () => {
  const api = read('docs/API.md');
  const figure = (text: string): number => Number(text.replaceAll(',', ''));
  let seen = 0;
  for (const [name, value] of NAMED) {
    if (typeof value !== 'number') continue;
    // `10 (`maxAuthFailures`` and `` `maxKnownClients` (1000)`` and `(`maxTrackedAddresses`, 10,000`.
    const patterns = [
      new RegExp(`([0-9][0-9,]*) \\(\`${name}\``, 'g'),
      new RegExp(`\`${name}\` \\(([0-9][0-9,]*)[),]`, 'g'),
      new RegExp(`\\(\`${name}\`, ([0-9][0-9,]*)`, 'g'),
    ];
    for (const pattern of patterns) {
      for (const match of api.matchAll(pattern)) {
        seen += 1;
        assert.equal(figure(match[1] ?? ''), value, `docs/API.md: ${match[0]}`);
      }
    }
  }
  assert.ok(seen >= 8, `the figures are found (${seen})`);
});

test('docs/settings.md is what npm run docs:settings writes from the table: flag, key, variable, default, bounds, reload', () => {
  assert.equal(read('docs/settings.md'), settingsReference(), 'run npm run docs:settings');
  const reference = read('docs/settings.md');
  for (const [flag, setting] of ROWS) {
    const line = reference.split('\n').find((text) => text.startsWith(`| \`--${flag}`));
    assert.ok(line !== undefined, `a row for --${flag}`);
    if (setting.bounds !== undefined) assert.ok(line.includes(`${setting.bounds[0]}–${setting.bounds[1]}`), flag);
    if (setting.configurable)
      assert.ok(line.includes(`\`BOOKING_SEARCH_${flag.toUpperCase().replaceAll('-', '_')}\``), flag);
  }
});

test("each row's reload is what a reload does: the book rows are what a [book NAME] section is read for", () => {
  const marked = (reload: Setting<unknown>['reload']): Flag[] =>
    ROWS.filter(([, setting]) => setting.reload === reload).map(([flag]) => flag);
  // BOOK_SETTINGS are these rows; resolveBooks reads each from a [book NAME] section, and its users.
  const keys = [...read('bin/config/configuration.ts').matchAll(/\bentry\('([a-z-]+)'\)/g)];
  assert.deepEqual(
    keys.map((match) => match[1]).sort(),
    [...marked('book'), 'users'].sort(),
    'resolveBooks reads the book rows',
  );
  // What the reload reads again: --config, the credentials file (bin/serve/serve.ts), the TLS files (listener.ts).
  assert.deepEqual(marked('file'), ['config', 'credentials-file', 'tls-cert', 'tls-key']);
});
