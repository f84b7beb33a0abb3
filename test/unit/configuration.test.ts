// Where a setting comes from (a flag, a BOOKING_SEARCH_ variable, the configuration file)
// and the file's books resolved, in-process: parseCommandLine with a parsed file, and
// resolveBooks against credentials. Every problem names its file and line, or its variable.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CliError } from '../../bin/base/errors.js';
import { CONFIG_KEYS, type Command, parseCommandLine } from '../../bin/config/args.js';
import { type BookConfig, usersOf } from '../../bin/config/book-config.js';
import { fromFolderPath, parseConfig } from '../../bin/config/config-file.js';
import { resolveBooks, strayVariables, variableName } from '../../bin/config/configuration.js';
import { readApp, type ServeCommand } from '../../bin/config/serve-command.js';
import { readTableNames } from '../../bin/config/setting-kinds.js';
import { unknownTimeZone } from '../../bin/serve/greeting.js';

const FILE = '/etc/booking-search-server/books.conf';
const USER = { BOOKING_SEARCH_USER: 'kasse', BOOKING_SEARCH_PASSWORD: 'ge:heim' };
const READERS = { readApp, readTableNames };

function config(text: string) {
  const parsed = parseConfig(text, FILE, CONFIG_KEYS);
  assert.ok(parsed.ok, parsed.ok ? '' : parsed.message);
  return parsed.config;
}

function outcome(run: () => unknown): unknown {
  try {
    return run();
  } catch (error: unknown) {
    if (!(error instanceof CliError)) throw error;
    return { error: error.message, exitCode: error.exitCode };
  }
}

const serve = (argv: string[], env: NodeJS.ProcessEnv, text?: string): ServeCommand => {
  const command = parseCommandLine(argv, env, text === undefined ? undefined : () => config(text)) as Command;
  assert.equal(command.command, 'serve');
  return command as ServeCommand;
};

test('variableName: BOOKING_SEARCH_ and the flag in capitals, _ for -', () => {
  assert.equal(variableName('port'), 'BOOKING_SEARCH_PORT');
  assert.equal(variableName('max-auth-failures'), 'BOOKING_SEARCH_MAX_AUTH_FAILURES');
  assert.equal(variableName('credentials-file'), 'BOOKING_SEARCH_CREDENTIALS_FILE');
});

test('the file may hold every option that takes a value, but not --config, --demo, --help, --version or --openapi', () => {
  for (const key of [
    'db',
    'app',
    'table-names',
    'port',
    'host',
    'socket-mode',
    'cors-origin',
    'tls-min-version',
    'send-timeout',
  ]) {
    assert.ok(CONFIG_KEYS.has(key), key);
  }
  for (const key of ['config', 'demo', 'help', 'version', 'openapi']) assert.ok(!CONFIG_KEYS.has(key), key);
});

test('a flag wins over its variable, the variable over the file; an empty variable is not set', () => {
  const file = 'port = 1\nhost = ::1\nname = Datei\nworkers = 2\ndb = /srv/kasse.sqlite';
  const command = serve(
    ['--port', '3'],
    { ...USER, BOOKING_SEARCH_PORT: '2', BOOKING_SEARCH_NAME: 'Umgebung', BOOKING_SEARCH_WORKERS: '' },
    file,
  );
  assert.deepEqual(
    {
      port: command.settings.port,
      host: command.settings.host,
      name: command.settings.name,
      workers: command.settings.workers,
      db: command.settings.db,
    },
    { port: 3, host: '::1', name: 'Umgebung', workers: 2, db: '/srv/kasse.sqlite' },
  );
  assert.equal(
    serve([], { ...USER, BOOKING_SEARCH_DB: '/srv/env.sqlite' }).settings.db,
    '/srv/env.sqlite',
    'a container needs no file',
  );
});

test('where a listener listens is one choice: the highest source that says anything of it decides, a lower one’s other half is dropped', () => {
  const asked = (argv: string[], env: NodeJS.ProcessEnv, text: string) => {
    const command = serve(['--db', 'x', ...argv], { ...USER, ...env }, text);
    return {
      socket: command.socket?.path,
      port: command.settings.port,
      host: command.settings.host,
      admin: command.admin,
    };
  };
  const rows: Array<[string, string[], NodeJS.ProcessEnv, string, ReturnType<typeof asked>]> = [
    [
      'flag socket over file port',
      ['--socket', '/run/b.sock'],
      {},
      'port = 0\nhost = ::1',
      { socket: '/run/b.sock', port: 8080, host: '127.0.0.1', admin: undefined },
    ],
    [
      'flag port over file socket',
      ['--port', '8081'],
      {},
      'socket = /run/a.sock\nsocket-mode = 600',
      { socket: undefined, port: 8081, host: '127.0.0.1', admin: undefined },
    ],
    [
      'flag host over file socket',
      ['--host', '::1'],
      {},
      'socket = /run/a.sock',
      { socket: undefined, port: 8080, host: '::1', admin: undefined },
    ],
    [
      'variable socket over file port',
      [],
      { BOOKING_SEARCH_SOCKET: '/run/c.sock' },
      'port = 0',
      { socket: '/run/c.sock', port: 8080, host: '127.0.0.1', admin: undefined },
    ],
    [
      'variable port over file socket, the file host kept',
      [],
      { BOOKING_SEARCH_PORT: '8082' },
      'socket = /run/a.sock\nhost = ::1',
      { socket: undefined, port: 8082, host: '::1', admin: undefined },
    ],
    [
      'flag socket over variable port',
      ['--socket', '/run/b.sock'],
      { BOOKING_SEARCH_PORT: '8082' },
      '',
      { socket: '/run/b.sock', port: 8080, host: '127.0.0.1', admin: undefined },
    ],
    [
      'flag admin-socket over file admin-port',
      ['--admin-socket', '/run/adm.sock'],
      {},
      'admin-port = 9090\nadmin-host = ::1',
      { socket: undefined, port: 8080, host: '127.0.0.1', admin: { socket: '/run/adm.sock' } },
    ],
    [
      'variable admin-port over file admin-socket',
      [],
      { BOOKING_SEARCH_ADMIN_PORT: '9091' },
      'admin-socket = /run/adm.sock',
      { socket: undefined, port: 8080, host: '127.0.0.1', admin: { host: '127.0.0.1', port: 9091 } },
    ],
  ];
  for (const [name, argv, env, text, expected] of rows) assert.deepEqual(asked(argv, env, text), expected, name);
});

test('where a listener listens, given both ways in one source, is still refused', () => {
  const rows: Array<[string[], NodeJS.ProcessEnv, string, { error: string; exitCode: number }]> = [
    [
      [],
      {},
      'port = 0\nsocket = /run/a.sock',
      { error: `${FILE}:2: give either socket PATH or host/port, not both`, exitCode: 1 },
    ],
    [
      [],
      { BOOKING_SEARCH_SOCKET: '/run/a.sock', BOOKING_SEARCH_HOST: '::1' },
      'port = 0',
      { error: 'BOOKING_SEARCH_SOCKET: give either --socket PATH or --host/--port, not both', exitCode: 1 },
    ],
    [
      ['--socket', '/run/a.sock', '--port', '0'],
      {},
      'socket = /run/b.sock',
      { error: 'give either --socket PATH or --host/--port, not both (see --help)', exitCode: 2 },
    ],
    [
      [],
      {},
      'admin-socket = /run/adm.sock\nadmin-port = 9090',
      { error: `${FILE}:1: give either admin-socket PATH or admin-port/admin-host, not both`, exitCode: 1 },
    ],
  ];
  for (const [argv, env, text, expected] of rows) {
    assert.deepEqual(
      outcome(() => parseCommandLine(['--db', 'x', ...argv], { ...USER, ...env }, () => config(text))),
      expected,
      text,
    );
  }
});

test('strayVariables: a BOOKING_SEARCH_ variable that names no setting, with the nearest known name; those read by name and empty ones are not stray', () => {
  const keys = [...CONFIG_KEYS];
  const env = {
    BOOKING_SEARCH_SOKET: '/run/api.sock',
    BOOKING_SEARCH_PROT: '8080',
    BOOKING_SEARCH_CREDENTIALS: '/etc/credentials',
    BOOKING_SEARCH_USERNAME: 'kasse',
    BOOKING_SEARCH_FROBNICATE: '1',
    BOOKING_SEARCH_DEMO: '1',
    BOOKING_SEARCH_TYPO_EMPTY: '',
    BOOKING_SEARCH_USER: 'kasse',
    BOOKING_SEARCH_PASSWORD: 'ge:heim',
    BOOKING_SEARCH_CONFIG: FILE,
    BOOKING_SEARCH_SOCKET: '/run/api.sock',
    BOOKING_SEARCH_MAX_AUTH_FAILURES: '5',
    OTHER_SOKET: 'x',
  };
  assert.deepEqual(strayVariables(env, keys), [
    { variable: 'BOOKING_SEARCH_CREDENTIALS', nearest: 'BOOKING_SEARCH_CREDENTIALS_FILE' },
    { variable: 'BOOKING_SEARCH_DEMO', nearest: undefined },
    { variable: 'BOOKING_SEARCH_FROBNICATE', nearest: undefined },
    { variable: 'BOOKING_SEARCH_PROT', nearest: 'BOOKING_SEARCH_PORT' },
    { variable: 'BOOKING_SEARCH_SOKET', nearest: 'BOOKING_SEARCH_SOCKET' },
    { variable: 'BOOKING_SEARCH_USERNAME', nearest: 'BOOKING_SEARCH_USER' },
  ]);
  const parsed = parseCommandLine(['--db', 'x.sqlite'], { ...USER, BOOKING_SEARCH_SOKET: '/run/api.sock' }, undefined);
  assert.deepEqual((parsed as ServeCommand).strayVariables, [
    { variable: 'BOOKING_SEARCH_SOKET', nearest: 'BOOKING_SEARCH_SOCKET' },
  ]);
});

test('unknownTimeZone: a TZ that names no time zone (local times would be UTC) is warned of with the nearest name; a known one, a POSIX rule or none is not', (t) => {
  const was = process.env['TZ'];
  t.after(() => {
    if (was === undefined) delete process.env['TZ'];
    else process.env['TZ'] = was;
  });
  const warning = (tz: string | undefined): string | undefined => {
    // Node.js takes a TZ assigned to process.env as the process's time zone at once.
    if (tz === undefined) delete process.env['TZ'];
    else process.env['TZ'] = tz;
    return unknownTimeZone(tz);
  };
  assert.equal(
    warning('Europe/Berln'),
    "warning: TZ=Europe/Berln names no time zone Node.js knows: local times, a GnuCash booking's day among them, are UTC's; did you mean Europe/Berlin?",
  );
  assert.match(warning(':Mars/Olympus_Mons') ?? '', /^warning: TZ=:Mars\/Olympus_Mons names no time zone .*are UTC's$/);
  for (const fine of ['Europe/Berlin', ':Europe/Berlin', 'UTC', 'CET-1CEST,M3.5.0,M10.5.0/3', undefined]) {
    assert.equal(warning(fine), undefined, String(fine));
  }
});

test('a repeated option is one comma-separated value in a variable or the file', () => {
  const fromFile = serve(['--db', 'x'], USER, 'cors-origin = https://a.example, https://b.example');
  assert.deepEqual(fromFile.settings.corsOrigin, ['https://a.example', 'https://b.example']);
  const fromVariable = serve(['--db', 'x'], { ...USER, BOOKING_SEARCH_CORS_ORIGIN: 'https://c.example' });
  assert.deepEqual(fromVariable.settings.corsOrigin, ['https://c.example']);
});

test("a path written with a shell's ~ (in the file, a variable, or quoted) is refused by its name, not taken for a folder named ~", () => {
  const advice = 'a ~ is expanded by a shell, not here: write the whole path';
  assert.deepEqual(
    outcome(() => parseCommandLine([], USER, () => config('db = ~/Dokumente/kasse.mmb'))),
    { error: `${FILE}:1: db ~/Dokumente/kasse.mmb: ${advice}`, exitCode: 1 },
  );
  assert.deepEqual(
    outcome(() => parseCommandLine([], { ...USER, BOOKING_SEARCH_DB: '~anna/kasse.mmb' })),
    { error: `BOOKING_SEARCH_DB: --db ~anna/kasse.mmb: ${advice}`, exitCode: 1 },
  );
  assert.deepEqual(
    outcome(() => parseCommandLine(['--db', '~'], USER)),
    {
      error: `--db ~: ${advice} (see --help)`,
      exitCode: 2,
    },
  );
  // Read from the file, it is left as written for that refusal, not made ~ in the file's folder.
  assert.equal(fromFolderPath('/etc/booking-search-server', '~/kasse.mmb'), '~/kasse.mmb');
  // A file's name that starts with ~ is no home folder.
  for (const name of ['./~kasse.sqlite', '~kasse.sqlite', '~1'])
    assert.equal(serve(['--db', name], USER).books[0]?.db, name);
});

test('a value refused is named where it was written: the flag (exit 2), the variable or the line of the file (exit 1)', () => {
  const file = 'name = Kasse\nport = achtzig\ndb = /srv/kasse.sqlite';
  assert.deepEqual(
    outcome(() => parseCommandLine([], USER, () => config(file))),
    {
      error: `${FILE}:2: port must be a whole number from 0 to 65535, not 'achtzig'`,
      exitCode: 1,
    },
  );
  assert.deepEqual(
    outcome(() => parseCommandLine(['--db', 'x'], { ...USER, BOOKING_SEARCH_LOG_FORMAT: 'xml' })),
    {
      error: "BOOKING_SEARCH_LOG_FORMAT: --log-format must be text or json, not 'xml'",
      exitCode: 1,
    },
  );
  assert.deepEqual(
    outcome(() => parseCommandLine(['--port', 'x'], USER, () => config(file))),
    {
      error: "--port must be a whole number from 0 to 65535, not 'x' (see --help)",
      exitCode: 2,
    },
  );
  // A base path no client can send, named where it was written as every other value is.
  assert.deepEqual(
    outcome(() => parseCommandLine(['--db', 'x'], { ...USER, BOOKING_SEARCH_BASE_PATH: 'kasse' })),
    {
      error: `BOOKING_SEARCH_BASE_PATH: --base-path ${BASE_PATH_RULE}, not 'kasse' (it must start with "/"); use /kasse instead`,
      exitCode: 1,
    },
  );
  assert.deepEqual(
    outcome(() => parseCommandLine([], USER, () => config('db = x\nbase-path = /kä'))),
    {
      error: `${FILE}:2: base-path ${BASE_PATH_RULE}, not '/kä' (a client sends "ä" percent-encoded); use /kae instead`,
      exitCode: 1,
    },
  );
  // A name that check accepted and the start refused with a stack's words, before it was read here.
  assert.deepEqual(
    outcome(() => parseCommandLine([], USER, () => config('name = "Büro"\ndb = x'))),
    {
      error: `${FILE}:1: name must be 1 to 100 printable ASCII characters (it is the realm of the login), not 'Büro'`,
      exitCode: 1,
    },
  );
  assert.deepEqual(
    outcome(() => parseCommandLine([], USER, () => config('tls-cert = /a.pem\ndb = x'))),
    {
      error: `${FILE}:1: tls-cert and tls-key go together`,
      exitCode: 1,
    },
  );
});

test('a value of the file is judged where a flag or variable outranks it, as check --config judges it', () => {
  const rows: Array<[string[], NodeJS.ProcessEnv, string, string]> = [
    [['--port', '0'], {}, 'port = 8080 # web', "port must be a whole number from 0 to 65535, not '8080 # web'"],
    [
      [],
      { BOOKING_SEARCH_PORT: '0' },
      'port = 8080 # web',
      "port must be a whole number from 0 to 65535, not '8080 # web'",
    ],
    [
      ['--port', '0'],
      {},
      'socket = /run/a.sock\nsocket-mode = 999',
      "socket-mode must be octal permissions such as 660, not '999'",
    ],
    [['--cors-origin', 'https://a.example'], {}, 'cors-origin = https://b.example, b.example', 'cors-origin'],
    [['--app', 'own'], {}, 'app = kasse', 'app must be one of'],
  ];
  for (const [argv, env, text, problem] of rows) {
    const refused = outcome(() => parseCommandLine(['--db', 'x', ...argv], { ...USER, ...env }, () => config(text)));
    const line = text.split('\n').findIndex((l) => l.startsWith(problem.split(' ')[0] as string)) + 1;
    assert.equal((refused as { exitCode: number }).exitCode, 1, text);
    assert.ok((refused as { error: string }).error.startsWith(`${FILE}:${line}: ${problem}`), JSON.stringify(refused));
  }
  assert.deepEqual(
    outcome(() =>
      parseCommandLine(['check', '--port', '0'], USER, () => config('port = 8080 # web\n[book a]\ndb = /a')),
    ),
    {
      error: `${FILE}:1: port must be a whole number from 0 to 65535, not '8080 # web' (# starts a comment only at the start of a line)`,
      exitCode: 1,
    },
  );
  // A flat file is one book, its db: without one, check (even with --demo) has no file to judge.
  for (const argv of [['check'], ['check', '--demo']]) {
    assert.deepEqual(
      outcome(() => parseCommandLine(argv, USER, () => config('port = 8080'))),
      {
        error: 'check needs --db FILE, or a db or [book NAME] sections in --config FILE (see --help)',
        exitCode: 2,
      },
    );
  }
  // A command that reads no setting reads no file, nor does a command line wrong in itself.
  const unread = () => assert.fail('the file was read');
  assert.deepEqual(parseCommandLine(['hash-password'], USER, unread), { command: 'hash-password' });
  assert.deepEqual(parseCommandLine(['--help', '--port', 'x'], USER, unread), { command: 'help' });
  assert.deepEqual(
    outcome(() => parseCommandLine(['check', 'x'], USER, unread)),
    {
      error: "unexpected argument 'x' (see --help)",
      exitCode: 2,
    },
  );
});

test('with [book NAME] sections, db, app, table-names and base-path belong in the sections', () => {
  const books = '[book a]\ndb = /srv/a.sqlite\n';
  assert.deepEqual(serve([], USER, books).books, [], 'resolved by the caller, once it has the credentials');
  assert.deepEqual(
    outcome(() => parseCommandLine([], USER, () => config(`base-path = /x\n${books}`))),
    {
      error: `${FILE}:1: base-path belongs in a [book NAME] section when the file has books`,
      exitCode: 1,
    },
  );
  assert.deepEqual(
    outcome(() => parseCommandLine(['--db', 'y'], USER, () => config(books))),
    {
      error: 'give either --db or books in --config FILE, not both (see --help)',
      exitCode: 2,
    },
  );
  assert.deepEqual(
    outcome(() => parseCommandLine([], { ...USER, BOOKING_SEARCH_APP: 'mmex' }, () => config(books))),
    {
      error: 'BOOKING_SEARCH_APP is set, but the books come from --config FILE; unset it',
      exitCode: 1,
    },
  );
  // The configuration named by its variable is named so.
  assert.deepEqual(
    outcome(() => parseCommandLine(['--db', 'y'], { ...USER, BOOKING_SEARCH_CONFIG: FILE }, () => config(books))),
    {
      error: "give either --db or books in BOOKING_SEARCH_CONFIG's file, not both (see --help)",
      exitCode: 2,
    },
  );
  assert.deepEqual(
    outcome(() => parseCommandLine(['--demo'], USER, () => config(books))),
    {
      error: 'give either --demo or books in --config FILE, not both (see --help)',
      exitCode: 2,
    },
  );
  // Its trailing slashes, however many, are dropped.
  const single = serve(['--db', '/srv/k.sqlite', '--base-path', '/kasse//', '--name', 'Kasse'], USER);
  assert.deepEqual(single.books, [
    {
      name: 'Kasse',
      db: '/srv/k.sqlite',
      app: undefined,
      appIn: 'flag',
      tables: {},
      basePath: '/kasse',
      users: undefined,
      named: true,
    },
  ]);
  // Without --name, the lines of its file's states name the file alone, as before there were books.
  assert.equal(serve(['--db', '/srv/k.sqlite'], USER).books[0]?.named, undefined);
});

const CREDENTIALS = [
  { username: 'mueller', password: 'a' },
  { username: 'buero', password: 'b' },
];

test('resolveBooks: each book with its file, mapping, base path and users', () => {
  const { books, warnings } = resolveBooks(
    config(
      [
        '[book mueller]',
        'db = /srv/m.sqlite',
        'base-path = /mueller/',
        'users = mueller, buero',
        '[book schmidt]',
        'db = /srv/s.mmb',
        'app = mmex',
        'base-path = /schmidt',
        '[book kasse]',
        'db = /srv/k.sqlite',
        'table-names = entries=kasse',
      ].join('\n'),
    ),
    CREDENTIALS,
    READERS,
  );
  assert.deepEqual(books, [
    {
      name: 'mueller',
      db: '/srv/m.sqlite',
      dbOrigin: `${FILE}:2: book mueller`,
      app: undefined,
      appIn: 'file',
      tables: {},
      basePath: '/mueller',
      users: ['mueller', 'buero'],

      named: true,
    },
    {
      name: 'schmidt',
      db: '/srv/s.mmb',
      dbOrigin: `${FILE}:6: book schmidt`,
      app: 'mmex',
      appIn: 'file',
      tables: {},
      basePath: '/schmidt',
      users: undefined,

      named: true,
    },
    {
      name: 'kasse',
      db: '/srv/k.sqlite',
      dbOrigin: `${FILE}:10: book kasse`,
      app: 'own',
      appIn: 'file',
      tables: { entries: 'kasse' },
      basePath: '',
      users: undefined,

      named: true,
    },
  ]);
  assert.deepEqual(warnings, []);
});

const BASE_PATH_RULE = 'must be a path such as /kasse whose segments hold only ASCII letters, digits, -, ., _ and ~';

const BOOK_PROBLEMS: Array<[text: string, message: string]> = [
  ['[book a]\nbase-path = /a', `${FILE}:1: book 'a' has no db = FILE`],
  [
    '[book a]\ndb = x\napp = quicken',
    `${FILE}:3: app must be one of own, actual, mmex, gnucash, kmymoney, not 'quicken'`,
  ],
  [
    '[book a]\ndb = x\ntable-names = entries=1x',
    `${FILE}:3: table-names: '1x' is not an SQL name such as kasse or temp.kasse`,
  ],
  [
    '[book a]\ndb = x\napp = mmex\ntable-names = entries=k',
    `${FILE}:3: table-names is for app own; app mmex reads the application's own tables`,
  ],
  [
    '[book a]\ndb = x\nbase-path = kasse',
    `${FILE}:3: base-path ${BASE_PATH_RULE}, not 'kasse' (it must start with "/"); use /kasse instead`,
  ],
  [
    '[book a]\ndb = x\nbase-path = /müller',
    `${FILE}:3: base-path ${BASE_PATH_RULE}, not '/müller' (a client sends "ü" percent-encoded); use /mueller instead`,
  ],
  [
    '[book a]\ndb = x\nbase-path = /x/../y',
    `${FILE}:3: base-path ${BASE_PATH_RULE}, not '/x/../y' (a client resolves "." and ".." segments before it sends the path); use /y instead`,
  ],
  // A book's db and base-path by the flags' own rules, as the service part's are read.
  [
    '[book a]\ndb = x\nbase-path = /kasse/api/v1',
    `${FILE}:3: base-path ${BASE_PATH_RULE}, not '/kasse/api/v1' (the service puts the API's path after it: /kasse/api/v1/api/v1/status); use /kasse instead`,
  ],
  [
    '[book a]\ndb = ~/alt.sqlite',
    `${FILE}:2: db ~/alt.sqlite: a ~ is expanded by a shell, not here: write the whole path`,
  ],
  [
    '[book a]\ndb = x\nbase-path = /k\n[book b]\ndb = y\nbase-path = /k/',
    `${FILE}:6: base-path /k is already the one of the book on line 1`,
  ],
  [
    '[book a]\ndb = x\n[book b]\ndb = y',
    `${FILE}:3: the base path "" (none given) is already the one of the book on line 1`,
  ],
  [
    '[book a]\ndb = x\nusers = mueller,, buero',
    `${FILE}:3: users takes names separated by commas, such as mueller, buero`,
  ],
  ['[book a]\ndb = x\nusers = buero, buero', `${FILE}:3: user 'buero' is named twice`],
  ['[book "Müller"]\ndb = x', `${FILE}:1: the book's name 'Müller' must be 1 to 100 printable ASCII characters`],
];

for (const [text, message] of BOOK_PROBLEMS) {
  test(`resolveBooks: ${JSON.stringify(text).slice(0, 70)} → ${message.slice(FILE.length + 1)}`, () => {
    assert.deepEqual(
      outcome(() => resolveBooks(config(text), CREDENTIALS, READERS)),
      { error: message, exitCode: 1 },
    );
  });
}

// Refusing the whole file for a user the credentials lack kept the running credentials on a
// reload: a user removed from them went on logging in to every book until the next start.
test('resolveBooks: a user the credentials lack is a warning, also for a book that names only such users, which stays (no one logs in to it); names compared in NFC', () => {
  const text = [
    '[book a]',
    'db = x',
    'users = mueller, weber',
    '[book b]',
    'db = y',
    'base-path = /b',
    'users = weber, schmitt',
    '[book c]',
    'db = z',
    'base-path = /c',
  ].join('\n');
  const { books, warnings } = resolveBooks(config(text), CREDENTIALS, READERS, '/etc/c (--credentials-file)');
  assert.deepEqual(
    books.map((book) => [book.name, book.users]),
    [
      ['a', ['mueller', 'weber']],
      ['b', ['weber', 'schmitt']],
      ['c', undefined],
    ],
  );
  assert.deepEqual(warnings, [
    `warning: ${FILE}:3: user 'weber' is not in the credentials of /etc/c (--credentials-file): it cannot log in to book a`,
    `warning: ${FILE}:7: users 'weber', 'schmitt' are not in the credentials of /etc/c (--credentials-file): book b names no other, so no one can log in to it (/ready names it) until one is`,
  ]);
  // A name written composed in one file and decomposed in the other is one user, as a login compares them.
  const decomposed = [{ username: 'j\u0075\u0308rgen', password: 'p' }];
  const composed = resolveBooks(config('[book a]\ndb = x\nusers = j\u00fcrgen'), decomposed, READERS);
  assert.deepEqual(composed.warnings, []);
  assert.equal(usersOf(composed.books[0] as BookConfig, decomposed).length, 1);
});

test('resolveBooks without credentials (check, where they cannot be read) does not judge the users', () => {
  const { books, warnings } = resolveBooks(config('[book a]\ndb = x\nusers = weber'), undefined, READERS);
  assert.deepEqual(books[0]?.users, ['weber']);
  assert.deepEqual(warnings, []);
});
