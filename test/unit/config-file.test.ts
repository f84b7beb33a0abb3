// parseConfig as a table: a configuration file's text → its service entries and books, or
// the one message naming the file and the line. readConfigFile's refusal of a file others
// could change is file-safety's, tested with the credentials file.

import assert from 'node:assert/strict';
import { chmodSync, writeFileSync } from 'node:fs';
import { join, posix, win32 } from 'node:path';
import { test } from 'node:test';
import { CliError } from '../../bin/base/errors.js';
import { fromFolderPath, parseConfig, readConfigFile } from '../../bin/config/config-file.js';
import { tempDir } from '../support/helpers.js';

const FILE = '/etc/booking-search-server/books.conf';
const SERVICE_KEYS = new Set(['socket', 'port', 'host', 'credentials-file', 'name', 'db', 'base-path', 'cors-origin']);

function parse(text: string) {
  return parseConfig(text, FILE, SERVICE_KEYS);
}

test('a file with comments, service settings and three books → entries with their lines', () => {
  const parsed = parse(
    [
      '# Steuerbüro Beispiel',
      'port = 8080',
      '  credentials-file=/etc/booking-search-server/credentials  ',
      '',
      '[book mueller]',
      'db = /srv/mueller/kasse.sqlite',
      'base-path = /mueller',
      'users = mueller, buero',
      '   # indented comment',
      '[ book  "Schmidt & Co" ]',
      'db = "/srv/schmidt/Kasse 2026.mmb"',
      'app = mmex',
      '[book gnucash]',
      'db = /srv/g/book.gnucash',
      'app = gnucash',
      'base-path = "/g"',
    ].join('\n'),
  );
  assert.deepEqual(parsed, {
    ok: true,
    config: {
      file: FILE,
      service: [
        { key: 'port', value: '8080', line: 2 },
        { key: 'credentials-file', value: '/etc/booking-search-server/credentials', line: 3 },
      ],
      books: [
        {
          name: 'mueller',
          line: 5,
          entries: [
            { key: 'db', value: '/srv/mueller/kasse.sqlite', line: 6 },
            { key: 'base-path', value: '/mueller', line: 7 },
            { key: 'users', value: 'mueller, buero', line: 8 },
          ],
        },
        {
          name: 'Schmidt & Co',
          line: 10,
          entries: [
            { key: 'db', value: '/srv/schmidt/Kasse 2026.mmb', line: 11 },
            { key: 'app', value: 'mmex', line: 12 },
          ],
        },
        {
          name: 'gnucash',
          line: 13,
          entries: [
            { key: 'db', value: '/srv/g/book.gnucash', line: 14 },
            { key: 'app', value: 'gnucash', line: 15 },
            { key: 'base-path', value: '/g', line: 16 },
          ],
        },
      ],
    },
  });
});

test('Windows line ends and an empty file are read as the same file would be on Linux', () => {
  assert.deepEqual(parse('port = 1\r\n[book a]\r\ndb = x\r\n'), {
    ok: true,
    config: {
      file: FILE,
      service: [{ key: 'port', value: '1', line: 1 }],
      books: [{ name: 'a', line: 2, entries: [{ key: 'db', value: 'x', line: 3 }] }],
    },
  });
  assert.deepEqual(parse(''), { ok: true, config: { file: FILE, service: [], books: [] } });
});

test('quoted values keep their spaces, a # and an = ; \\" is a quote and \\\\ a backslash', () => {
  const parsed = parse('name = "  Kasse # Nord = 1 "\nhost = "a\\"b\\\\c"\ndb = a = b');
  assert.ok(parsed.ok);
  assert.deepEqual(
    parsed.config.service.map((entry) => entry.value),
    ['  Kasse # Nord = 1 ', 'a"b\\c', 'a = b'],
  );
});

test('a comment after a path is refused at its line, with where a comment goes; a quoted path may hold a #, an unquoted one # without a space', () => {
  for (const [text, line, key] of [
    ['[book a]\ndb = /srv/kasse.sqlite # the shop', 2, 'db'],
    ['credentials-file = /etc/credentials\t# the users', 1, 'credentials-file'],
  ] as const) {
    assert.deepEqual(parse(text), {
      ok: false,
      message: `${FILE}:${line}: ${key} holds ' #', but # starts a comment only at the start of a line: put the comment on a line of its own, or quote the path`,
    });
  }
  const parsed = parse('[book a]\ndb = "/srv/Kasse #2/kasse.sqlite"\n[book b]\ndb = /srv/Kasse#3/kasse.sqlite');
  assert.ok(parsed.ok);
  assert.deepEqual(
    parsed.config.books.map((book) => book.entries[0]?.value),
    ['/srv/Kasse #2/kasse.sqlite', '/srv/Kasse#3/kasse.sqlite'],
  );
  // A value that is no path may hold one: the service's name is the login's realm.
  assert.ok(parse('name = Kasse #1').ok);
});

test('Windows paths, quoted or not: a backslash before any other character stands for itself', () => {
  const parsed = parse(
    [
      'credentials-file = C:\\ProgramData\\booking-search-server\\credentials',
      '[book buero]',
      'db = "C:\\Users\\me\\Documents\\Kasse 2026.mmb"',
      '[book unc]',
      'db = "\\\\\\\\server\\kasse\\kasse.mmb"',
    ].join('\r\n'),
  );
  assert.ok(parsed.ok, parsed.ok ? '' : parsed.message);
  assert.deepEqual(
    [...parsed.config.service, ...parsed.config.books.flatMap((book) => book.entries)].map((entry) => entry.value),
    [
      'C:\\ProgramData\\booking-search-server\\credentials',
      'C:\\Users\\me\\Documents\\Kasse 2026.mmb',
      '\\\\server\\kasse\\kasse.mmb',
    ],
  );
  // A quoted path that ends in a backslash escapes its closing quote: said as broken quoting.
  assert.equal(parse('name = "C:\\books\\"').ok, false);
});

// In quotes a value that starts with \\ is refused only when written raw (a backslash that
// escapes nothing): one whose backslashes are all doubled is a path from the drive's root.
test('a quoted value starting with one backslash is taken as written when every backslash is doubled', () => {
  for (const [line, value] of [
    ['db = "\\\\Buchhaltung\\\\Müller & Söhne\\\\kasse.sqlite"', '\\Buchhaltung\\Müller & Söhne\\kasse.sqlite'],
    ['db = "\\\\kasse.sqlite"', '\\kasse.sqlite'],
    ['db = "\\\\\\\\server\\share\\kasse.sqlite"', '\\\\server\\share\\kasse.sqlite'],
    ['db = \\\\server\\share\\kasse.sqlite', '\\\\server\\share\\kasse.sqlite'],
  ]) {
    const parsed = parse(`[book a]\n${line}`);
    assert.ok(parsed.ok, parsed.ok ? '' : parsed.message);
    assert.equal(parsed.config.books[0]?.entries[0]?.value, value, line);
  }
});

const PROBLEMS: Array<[text: string, message: string]> = [
  // A misspelt key is named with the nearest one, as a misspelt variable is.
  [
    'prot = 8080',
    `${FILE}:1: unknown key prot: the keys are the long flags' names without -- (see --help); did you mean port?`,
  ],
  ['zzz = 1', `${FILE}:1: unknown key zzz: the keys are the long flags' names without -- (see --help)`],
  [
    '[book a]\nbse-path = /a',
    `${FILE}:2: unknown key bse-path in [book a]: a book holds db, app, table-names, base-path, users; did you mean base-path?`,
  ],
  [
    '\n\n--port = 8080',
    `${FILE}:3: '--port' is not a key: keys are the long flags' names without --; did you mean port?`,
  ],
  ['Port = 1', `${FILE}:1: 'Port' is not a key: keys are the long flags' names without --; did you mean port?`],
  [
    '[book a]\nbase_path = /a',
    `${FILE}:2: 'base_path' is not a key: keys are the long flags' names without --; did you mean base-path?`,
  ],
  ['Fremd = 1', `${FILE}:1: 'Fremd' is not a key: keys are the long flags' names without --`],
  // A key of the other place says where it goes: port is the service's, users a book's; nothing spelt, no hint.
  [
    '[book a]\nPORT = 1',
    `${FILE}:2: 'PORT' is not a key: keys are the long flags' names without --; port is the service's: put it before the first section`,
  ],
  [
    'Users = a',
    `${FILE}:1: 'Users' is not a key: keys are the long flags' names without --; users belongs in a [book NAME] section`,
  ],
  ['-- = 1', `${FILE}:1: '--' is not a key: keys are the long flags' names without --`],
  ['_ = 1', `${FILE}:1: '_' is not a key: keys are the long flags' names without --`],
  ['port 8080', `${FILE}:1: expected key = value, [book NAME] or a # comment`],
  ['port =', `${FILE}:1: port needs a value`],
  ['port = ""', `${FILE}:1: port needs a value`],
  ['port = 1\nport = 2', `${FILE}:2: port is given again (first on line 1)`],
  [
    'name = "Kasse',
    `${FILE}:1: the value of name starts with " but is not one quoted string (write \\" for a quote inside)`,
  ],
  [
    'name = "a" b"',
    `${FILE}:1: the value of name starts with " but is not one quoted string (write \\" for a quote inside)`,
  ],
  // A folder's path as Explorer copies it ends in a backslash, which in quotes escapes the closing quote.
  [
    '[book a]\ndb = "C:\\Users\\Jörg Müller\\Buchhaltung\\"',
    `${FILE}:2: the value of db ends in \\", which in quotes is a quote inside, not the closing one: end a path in quotes with \\\\ (one backslash), or leave it unquoted`,
  ],
  [
    'name = "a\\\\\\"',
    `${FILE}:1: the value of name ends in \\", which in quotes is a quote inside, not the closing one: end a path in quotes with \\\\ (one backslash), or leave it unquoted`,
  ],
  ['users = a', `${FILE}:1: users belongs in a [book NAME] section`],
  // In quotes \\ is one backslash: a network path written as Explorer shows it lost one.
  [
    '[book a]\ndb = "\\\\localhost\\C$\\temp\\kasse.sqlite"',
    `${FILE}:2: db starts with one backslash (in quotes \\\\ is one): a network path or pipe in quotes is written "\\\\\\\\server\\\\…", or leave it unquoted`,
  ],
  [
    'credentials-file = "\\\\server\\share\\zugang"',
    `${FILE}:1: credentials-file starts with one backslash (in quotes \\\\ is one): a network path or pipe in quotes is written "\\\\\\\\server\\\\…", or leave it unquoted`,
  ],
  [
    'socket = "\\\\.\\pipe\\bss"',
    `${FILE}:1: socket starts with one backslash (in quotes \\\\ is one): a network path or pipe in quotes is written "\\\\\\\\server\\\\…", or leave it unquoted`,
  ],
  ['[books a]', `${FILE}:1: unknown section [books]: a section is written [book NAME]`],
  ['[book]', `${FILE}:1: a section is written [book NAME]; the name is missing`],
  ['[book a', `${FILE}:1: a section is written [book NAME]`],
  ['[book ""]', `${FILE}:1: a section is written [book NAME]; the name is missing`],
  ['[book a]\ndb = x\n\n[book a]', `${FILE}:4: book 'a' is given again (first on line 1)`],
  [
    '[book a]\nport = 1',
    `${FILE}:2: unknown key port in [book a]: a book holds db, app, table-names, base-path, users; port is the service's: put it before the first section`,
  ],
  [
    '[book a]\nname = Anders',
    `${FILE}:2: unknown key name in [book a]: a book holds db, app, table-names, base-path, users; a book's name is its section's: [book NAME]`,
  ],
  [
    '[book a]\ndatabase = x',
    `${FILE}:2: unknown key database in [book a]: a book holds db, app, table-names, base-path, users`,
  ],
  ['[book a]\ndb = x\ndb = y', `${FILE}:3: db is given again (first on line 2)`],
  [`name = ${'x'.repeat(4090)}`, `${FILE}:1: the line is longer than 4096 characters`],
];

for (const [text, message] of PROBLEMS) {
  test(`${JSON.stringify(text.slice(0, 60))} → ${message.slice(FILE.length + 1)}`, () => {
    assert.deepEqual(parse(text), { ok: false, message });
  });
}

test('a line of 4,096 characters is read; one more is refused (the PROBLEMS above)', () => {
  const parsed = parse(`name = ${'x'.repeat(4089)}`);
  assert.ok(parsed.ok);
  assert.equal(parsed.config.service[0]?.value.length, 4089);
});

test('the same key in the service part and in a book is no duplicate: db of a section is that book’s', () => {
  const parsed = parse('db = /a\n[book b]\ndb = /b');
  assert.ok(parsed.ok);
  assert.equal(parsed.config.service[0]?.value, '/a');
  assert.equal(parsed.config.books[0]?.entries[0]?.value, '/b');
});

test('readConfigFile: a file others could change is refused; a missing one is named; a bad line is a CliError with file:line', (t) => {
  const dir = tempDir(t);
  const file = join(dir, 'books.conf');
  const expectCliError = (run: () => unknown, message: RegExp): void =>
    assert.throws(run, (error: unknown) => error instanceof CliError && message.test(error.message));

  expectCliError(
    () => readConfigFile(join(dir, 'missing.conf'), SERVICE_KEYS),
    /^cannot read configuration file .*: no such file$/,
  );
  writeFileSync(file, 'port = 1\nport = 2\n', { mode: 0o600 });
  expectCliError(() => readConfigFile(file, SERVICE_KEYS), new RegExp(`^${file}:2: port is given again`));
  chmodSync(file, 0o666);
  expectCliError(
    () => readConfigFile(file, SERVICE_KEYS),
    /^refusing configuration file .*: it is writable by every user/,
  );
  chmodSync(file, 0o600);
  writeFileSync(file, '[book a]\ndb = x\n');
  assert.deepEqual(readConfigFile(file, SERVICE_KEYS).books, [
    { name: 'a', line: 1, entries: [{ key: 'db', value: join(dir, 'x'), line: 2 }] },
  ]);
});

test("readConfigFile: a relative path is relative to the file's folder, whatever the working directory; an absolute one and other values are as written", (t) => {
  const dir = tempDir(t);
  const file = join(dir, 'books.conf');
  writeFileSync(
    file,
    'credentials-file = zugang\nname = kasse\nbase-path = kasse\n[book a]\ndb = ../b/kasse.sqlite\nusers = x\n[book c]\ndb = /srv/c.sqlite\n',
    { mode: 0o600 },
  );
  const config = readConfigFile(file, SERVICE_KEYS);
  assert.notEqual(process.cwd(), dir);
  assert.deepEqual(
    config.service.map((entry) => entry.value),
    [join(dir, 'zugang'), 'kasse', 'kasse'],
  );
  assert.deepEqual(
    config.books.flatMap((book) => book.entries.map((entry) => entry.value)),
    [join(dir, '..', 'b', 'kasse.sqlite'), 'x', '/srv/c.sqlite'],
  );
  assert.equal(config.file, file);
});

// Resolved after an absolute test, \Buchhaltung\kasse.sqlite was on the working directory's drive.
test("fromFolderPath: on Windows a path from the drive's root is on the configuration's drive; elsewhere an absolute path is as written", () => {
  const folder = 'D:\\Buchhaltung';
  for (const [value, found] of [
    ['\\Buchhaltung\\kasse.sqlite', 'D:\\Buchhaltung\\kasse.sqlite'],
    ['kasse.sqlite', 'D:\\Buchhaltung\\kasse.sqlite'],
    ['..\\Kasse\\kasse.mmb', 'D:\\Kasse\\kasse.mmb'],
    ['C:\\Daten\\kasse.sqlite', 'C:\\Daten\\kasse.sqlite'],
    ['\\\\server\\share\\kasse.sqlite', '\\\\server\\share\\kasse.sqlite'],
    ['\\\\.\\pipe\\bss', '\\\\.\\pipe\\bss'],
  ]) {
    assert.equal(fromFolderPath(folder, value as string, win32), found, value);
  }
  assert.equal(fromFolderPath('/etc/bss', '/srv/link/../kasse.sqlite', posix), '/srv/link/../kasse.sqlite');
  assert.equal(fromFolderPath('/etc/bss', 'kasse.sqlite', posix), '/etc/bss/kasse.sqlite');
});

// Regression guards against seconds, not timings: a backtracking pattern took 9–11 s on
// the first line, and a quadratic check of the names 37 s on 100,000 sections.
test('a section line of 4,088 spaces parses in well under a second; so do a setting and a quote of them', () => {
  const spaces = ' '.repeat(4088);
  for (const [line, message] of [
    [`[book${spaces}]x`, 'a section is written [book NAME]'],
    [`[${spaces}x${spaces.slice(4)}`, 'a section is written [book NAME]'],
    [`port${spaces}x`, 'expected key = value, [book NAME] or a # comment'],
    [`port = "${'\\"'.repeat(2000)}`, 'the value of port ends in \\", which in quotes is a quote inside'],
    [`port = "${'\\"'.repeat(2000)}x`, 'the value of port starts with " but'],
  ] as const) {
    const started = performance.now();
    const parsed = parse(line);
    const elapsed = performance.now() - started;
    assert.ok(!parsed.ok && parsed.message.startsWith(`${FILE}:1: ${message}`), `${line.slice(0, 12)}…`);
    assert.ok(elapsed < 500, `${elapsed} ms`);
  }
});

test('100,000 sections parse in CPU time near-linear in their number, and a name given again is found', () => {
  const text = (count: number): string =>
    Array.from({ length: count }, (_, index) => `[book b${index}]\ndb = /srv/${index}.sqlite\n`).join('');
  /** CPU milliseconds, the least of three: what other processes on the machine do is not counted. */
  const cpu = (source: string): number => {
    const times = [0, 1, 2].map(() => {
      const started = process.cpuUsage();
      assert.ok(parse(source).ok);
      const used = process.cpuUsage(started);
      return (used.user + used.system) / 1000;
    });
    return Math.min(...times);
  };
  const small = text(10_000);
  const large = text(100_000);
  cpu(small); // warm up
  const [tenThousand, hundredThousand] = [cpu(small), cpu(large)];
  // Linear parsing measures a ratio of 25 to 35 (the larger no longer fits the caches), a
  // quadratic check of the names about 340; 100,000 sections took 37 s of it.
  assert.ok(hundredThousand < 10_000, `${hundredThousand} ms`);
  assert.ok(hundredThousand / Math.max(tenThousand, 1) < 100, `${hundredThousand} ms / ${tenThousand} ms`);
  const again = parse(`${large}[book b99999]\n`);
  assert.ok(!again.ok);
  assert.equal(again.message, `${FILE}:200001: book 'b99999' is given again (first on line 199999)`);
});
