// parseCommandLine in-process, as a table: argv and environment → the command, or the one
// line and exit code the CLI ends with. test/cli.test.ts keeps the few cases that only a
// process can show (the line on stderr, the exit code, no stack trace).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CliError } from '../../bin/base/errors.js';
import { type Command, parseCommandLine } from '../../bin/config/args.js';
import { parseCredentialsFile } from '../../bin/config/credentials.js';
import { validateCredentials } from '../../lib/credentials.js';

const USER = { BOOKING_SEARCH_USER: 'kasse', BOOKING_SEARCH_PASSWORD: 'ge:heim' };

/** `parseCommandLine` → the command, or the CliError's line and exit code. */
function outcome(argv: string[], env: NodeJS.ProcessEnv): Command | { error: string; exitCode: number } {
  try {
    return parseCommandLine(argv, env);
  } catch (error: unknown) {
    if (!(error instanceof CliError)) throw error;
    return { error: error.message, exitCode: error.exitCode };
  }
}

/**
 * Only the keys the row names are compared, so a new option does not touch every row; a
 * key that is no field of the command is looked up among its settings (bin/config/settings.ts).
 */
function pick(value: object, keys: string[]): Record<string, unknown> {
  const fields = value as Record<string, unknown>;
  const settings = (fields['settings'] ?? {}) as Record<string, unknown>;
  return Object.fromEntries(keys.map((key) => [key, key in fields ? fields[key] : settings[key]]));
}

const COMMANDS: Array<[argv: string[], expected: Record<string, unknown>]> = [
  [['--help'], { command: 'help' }],
  [['-h', '--db', 'x'], { command: 'help' }],
  [['--version'], { command: 'version' }],
  [['-v'], { command: 'version' }],
  [['--openapi'], { command: 'openapi' }],
  [['check', '--db', 'kasse.sqlite'], { command: 'check', db: 'kasse.sqlite', app: undefined, tables: {} }],
  [['check', '--db', 'kasse.mmb', '--app', 'mmex'], { command: 'check', app: 'mmex', tables: {} }],
  [['--db', 'db.sqlite', '--app', 'actual'], { command: 'serve', app: 'actual', tableNames: {} }],
  // Without --app the file's tables tell (an application's file is served with its mapping).
  [['--db', 'kasse.sqlite'], { app: undefined, tableNames: {} }],
  [
    ['--db', 'book.sqlite', '--table-names', 'entries=bss_entries, payment_methods=temp.bss_konto'],
    { app: 'own', tableNames: { entries: 'bss_entries', paymentMethods: 'temp.bss_konto' } },
  ],
  [['hash-password'], { command: 'hash-password' }],
  [['hash-password', '--help'], { command: 'help' }],
  [['hash-password', '-v'], { command: 'version' }],
  [['--version', 'hash-password'], { command: 'version' }],
  // A flag's value that reads hash-password names a file, or the service.
  [['--db', 'hash-password'], { command: 'serve' }],
  [['--name', 'hash-password', '--db', 'k.sqlite'], { command: 'serve' }],
  [
    ['--demo'],
    { command: 'serve', db: undefined, host: '127.0.0.1', port: 8080, basePath: '', workers: 1, tls: undefined },
  ],
  [
    ['--db', 'kasse.sqlite', '--host', '::1', '--port', '0', '--base-path', '/kasse', '--name', 'Kasse Nord'],
    { db: 'kasse.sqlite', host: '::1', port: 0, basePath: '/kasse', name: 'Kasse Nord' },
  ],
  [
    ['--demo', '--max-auth-failures', '0', '--auth-failure-window', '5', '--workers', '4'],
    { maxAuthFailures: 0, authFailureWindow: 5, workers: 4 },
  ],
  [['--demo'], { maxAuthFailures: 10, maxUserFailures: 50, maxGlobalFailures: 100, maxUnauthenticated: 100 }],
  [
    ['--demo', '--max-user-failures', '5', '--max-global-failures', '0', '--max-unauthenticated', '7'],
    { maxUserFailures: 5, maxGlobalFailures: 0, maxUnauthenticated: 7 },
  ],
  [
    ['--demo', '--tls-cert', 'c.pem', '--tls-key', 'k.pem'],
    { tls: { cert: 'c.pem', key: 'k.pem', minVersion: 'TLSv1.2' } },
  ],
  [
    ['--demo', '--tls-cert', 'c.pem', '--tls-key', 'k.pem', '--tls-min-version', '1.3'],
    { tls: { cert: 'c.pem', key: 'k.pem', minVersion: 'TLSv1.3' } },
  ],
  [
    [
      '--demo',
      '--headers-timeout',
      '5',
      '--request-timeout',
      '6',
      '--keep-alive-timeout',
      '7',
      '--send-timeout',
      '8',
      '--search-timeout',
      '9',
    ],
    { timeouts: { headersMs: 5000, requestMs: 6000, keepAliveMs: 7000, sendMs: 8000, searchMs: 9000 } },
  ],
  [['--demo'], { trustProxy: [], socket: undefined, logFormat: 'text' }],
  [['--demo', '--trust-proxy', '127.0.0.1, ::1'], { trustProxy: ['127.0.0.1', '::1'] }],
  [
    ['--demo', '--socket', '/run/b/api.sock'],
    { socket: { path: '/run/b/api.sock', mode: 0o660, group: undefined }, trustProxy: ['unix'] },
  ],
  [
    ['--demo', '--socket', '/run/b/api.sock', '--socket-mode', '0600', '--socket-group', 'www-data'],
    { socket: { path: '/run/b/api.sock', mode: 0o600, group: 'www-data' } },
  ],
  [['--demo', '--log-format', 'json'], { logFormat: 'json' }],
  [['--demo'], { admin: undefined }],
  [['--demo', '--admin-port', '9469'], { admin: { host: '127.0.0.1', port: 9469 } }],
  [['--demo', '--admin-port', '0', '--admin-host', '::1'], { admin: { host: '::1', port: 0 } }],
  [
    ['--demo', '--socket', '/run/b/api.sock', '--admin-socket', '/run/b/admin.sock'],
    { admin: { socket: '/run/b/admin.sock' } },
  ],
  [['--demo'], { corsOrigin: [] }],
  [
    ['--demo', '--cors-origin', 'https://buchhaltung.example', '--cors-origin', 'http://127.0.0.1:8081'],
    { corsOrigin: ['https://buchhaltung.example', 'http://127.0.0.1:8081'] },
  ],
];

test('parseCommandLine: each command line gives its command', () => {
  for (const [argv, expected] of COMMANDS) {
    const result = outcome(argv, USER);
    assert.deepEqual(pick(result, Object.keys(expected)), expected, argv.join(' '));
  }
});

const BASE_PATH_RULE = 'must be a path such as /kasse whose segments hold only ASCII letters, digits, -, ., _ and ~';

const USAGE_ERRORS: Array<[argv: string[], line: string]> = [
  [['--db'], 'option --db needs a value'],
  [['--frobnicate'], 'unknown option --frobnicate'],
  // An unknown flag is named whole, as typed (it was cut at the newline); the newline is
  // escaped where the line is printed or logged (bin/base/log.ts, logText), once.
  [['--po\nrt', '1'], 'unknown option --po\nrt; did you mean --port?'],
  [["--it's here"], "unknown option --it's here"],
  // A flag a few letters off gets the one meant, as a variable and a key of the file do.
  [['--demo', '--wokers', '3'], 'unknown option --wokers; did you mean --workers?'],
  [['--demo', '--wokers=3'], 'unknown option --wokers; did you mean --workers?'],
  [['--demo', '--max-auth-failure', '3'], 'unknown option --max-auth-failure; did you mean --max-auth-failures?'],
  [[], '--db FILE is required (or --demo for sample data, or --config FILE)'],
  [['--db', 'x.sqlite', '--demo'], 'give either --db FILE or --demo, not both'],
  [['check'], 'check needs --db FILE or --config FILE'],
  [['check', '--db', 'x', 'y'], "unexpected argument 'y'"],
  [['check', '--db', 'x', 'hash-password'], "unexpected argument 'hash-password'"],
  [['--demo', 'extra'], "unexpected argument 'extra'"],
  [['chek', '--db', 'x'], "unexpected argument 'chek'; did you mean check?"],
  [['hash-pasword'], "unexpected argument 'hash-pasword'; did you mean hash-password?"],
  [
    ['hash-password', 'geheim'],
    'hash-password takes no password as an argument (it would be kept in the shell history and shown in the process list): it reads it from standard input, or asks for it on a terminal',
  ],
  // hash-password reads standard input only: a flag given to it is refused, not ignored.
  [['hash-password', '--db', 'x'], "unexpected argument '--db'"],
  [['--demo', 'hash-password'], "unexpected argument '--demo'"],
  [['hash-password', '--port=8080'], "unexpected argument '--port'"],
  // A word that is no flag of the command, --Sommer2024 too, is likely the password: never repeated.
  ...[
    ['hash-password', '--Sommer2024'],
    ['--Sommer2024', 'hash-password'],
    ['hash-password', '-x'],
  ].map((argv): [string[], string] => [
    argv,
    'hash-password takes no password as an argument (it would be kept in the shell history and shown in the process list): it reads it from standard input, or asks for it on a terminal',
  ]),
  [['--demo', '--port', '70000'], "--port must be a whole number from 0 to 65535, not '70000'"],
  [['--demo', '--port', 'http'], "--port must be a whole number from 0 to 65535, not 'http'"],
  // A value that looks like a negative number is the flag's, judged by its rule; another
  // value starting with '-' is an option, and the flag before it has none.
  [['--demo', '--port', '-1'], "--port must be a whole number from 0 to 65535, not '-1'"],
  [['--demo', '--max-auth-failures', '-3'], "--max-auth-failures must be a whole number from 0 to 1000000, not '-3'"],
  [['--demo', '--search-timeout', '-.5'], "--search-timeout must be a whole number from 1 to 3600, not '-.5'"],
  [['--demo', '--name', '-x'], 'option --name needs a value'],
  [['--demo', '--port', '--workers', '-2'], 'option --port needs a value'],
  [['--demo', '--workers', '0'], "--workers must be a whole number from 1 to 64, not '0'"],
  [['--demo', '--max-auth-failures', '1e3'], "--max-auth-failures must be a whole number from 0 to 1000000, not '1e3'"],
  [['--demo', '--max-user-failures', '5x'], "--max-user-failures must be a whole number from 0 to 1000000, not '5x'"],
  [['--demo', '--tls-cert', 'c.pem'], '--tls-cert and --tls-key go together'],
  [['--demo', '--headers-timeout', '40'], '--headers-timeout must not be longer than --request-timeout'],
  [
    ['--demo', '--trust-proxy'],
    "--trust-proxy needs your proxy's addresses, e.g. --trust-proxy 127.0.0.1,::1 (or --socket PATH, whose peer is the proxy)",
  ],
  [
    ['--demo', '--trust-proxy', 'proxy.local'],
    "--trust-proxy takes IP addresses of your proxy, e.g. 127.0.0.1,::1, not 'proxy.local'",
  ],
  [['--demo', '--socket', '/s', '--host', '::1'], 'give either --socket PATH or --host/--port, not both'],
  [['--demo', '--socket', '/s', '--socket-mode', '8'], "--socket-mode must be octal permissions such as 660, not '8'"],
  [['--demo', '--socket-group', 'www-data'], '--socket-mode and --socket-group need --socket PATH'],
  [['--demo', '--log-format', 'JSON'], "--log-format must be text or json, not 'JSON'"],
  [
    ['--demo', '--name', 'Büro'],
    "--name must be 1 to 100 printable ASCII characters (it is the realm of the login), not 'Büro'",
  ],
  [
    ['--demo', '--base-path', 'kasse'],
    `--base-path ${BASE_PATH_RULE}, not 'kasse' (it must start with "/"); use /kasse instead`,
  ],
  [
    ['--demo', '--base-path', 'https://kasse.example.org/kasse/'],
    `--base-path ${BASE_PATH_RULE}, not 'https://kasse.example.org/kasse/' (it is the base URL's path, not the URL); use /kasse instead`,
  ],
  [
    ['--demo', '--base-path', 'https://kasse.example.org/kasse/api/v1/buchungen'],
    `--base-path ${BASE_PATH_RULE}, not 'https://kasse.example.org/kasse/api/v1/buchungen' (it is the base URL's path, not the URL); use /kasse instead`,
  ],
  // A URL's password is never shown; a host without its scheme is taken for the URL it is.
  [
    ['--demo', '--base-path', 'https://kasse:geheim@kasse.example.org/kasse'],
    `--base-path ${BASE_PATH_RULE}, not 'https://kasse.example.org/kasse' (it is the base URL's path, not the URL); use /kasse instead`,
  ],
  [
    ['--demo', '--base-path', 'kasse.example.org/kasse'],
    `--base-path ${BASE_PATH_RULE}, not 'kasse.example.org/kasse' (it is the base URL's path, not the URL); use /kasse instead`,
  ],
  [
    ['--demo', '--base-path', 'localhost:8080'],
    `--base-path ${BASE_PATH_RULE}, not 'localhost:8080' (it is the base URL's path, not the URL); leave it out`,
  ],
  [
    ['--demo', '--base-path', 'http://127.0.0.1:8080'],
    `--base-path ${BASE_PATH_RULE}, not 'http://127.0.0.1:8080' (it is the base URL's path, not the URL); leave it out`,
  ],
  [
    ['--demo', '--base-path', '/kä'],
    `--base-path ${BASE_PATH_RULE}, not '/kä' (a client sends "ä" percent-encoded); use /kae instead`,
  ],
  [
    ['--demo', '--base-path', '/x/../y/'],
    `--base-path ${BASE_PATH_RULE}, not '/x/../y/' (a client resolves "." and ".." segments before it sends the path); use /y instead`,
  ],
  [['--demo', '--admin-port', '65536'], "--admin-port must be a whole number from 0 to 65535, not '65536'"],
  [['--demo', '--admin-host', '::1'], '--admin-host needs --admin-port PORT'],
  [
    ['--demo', '--admin-socket', '/a', '--admin-port', '9469'],
    'give either --admin-socket PATH or --admin-port/--admin-host, not both',
  ],
  [['--demo', '--socket', '/s', '--admin-socket', '/s'], '--admin-socket needs a path of its own, not the API socket'],
  [['--demo', '--port', '8080', '--admin-port', '8080'], '--admin-port needs a port of its own, not the API port'],
  [
    ['--demo', '--cors-origin', '*'],
    '--cors-origin "*" is refused: no wildcard; with credentials it would let any web page read the bookings',
  ],
  [
    ['--demo', '--cors-origin', 'https://buchhaltung.example/kasse'],
    '--cors-origin "https://buchhaltung.example/kasse" is not an origin: give scheme://host[:port] with http or https, no path, e.g. "https://buchhaltung.example"',
  ],
  [
    ['--demo', '--cors-origin', 'https://buchhaltung.example:443'],
    '--cors-origin "https://buchhaltung.example:443" is not written as a browser sends it: write "https://buchhaltung.example"',
  ],
  [['--demo', '--cors-origin'], 'option --cors-origin needs a value'],
  [['--db', 'x', '--app', 'quicken'], "--app must be one of own, actual, mmex, gnucash, kmymoney, not 'quicken'"],
  [
    ['--db', 'x', '--app', 'mmex', '--table-names', 'entries=k'],
    "--table-names is for --app own; --app mmex reads the application's own tables",
  ],
  [
    ['--db', 'x', '--table-names', 'bookings=k'],
    "--table-names takes entries=NAME,categories=NAME,payment_methods=NAME, not 'bookings=k'",
  ],
  [
    ['--db', 'x', '--table-names', 'entries=k;x'],
    "--table-names: 'k;x' is not an SQL name such as kasse or temp.kasse",
  ],
  [['--db', 'x', '--table-names', 'entries=a,entries=b'], '--table-names names entries twice'],
  [['--demo', '--app', 'actual'], '--app and --table-names describe a --db FILE, not the demo'],
];

test('parseCommandLine: a wrong command line is a usage error (exit 2) that points at --help', () => {
  for (const [argv, line] of USAGE_ERRORS) {
    assert.deepEqual(outcome(argv, USER), { error: `${line} (see --help)`, exitCode: 2 }, argv.join(' '));
  }
  // A base path is a flag like any other: checked before the credentials, whose absence is exit 1.
  assert.deepEqual(outcome(['--db', 'x', '--base-path', 'kasse'], {}), {
    error: `--base-path ${BASE_PATH_RULE}, not 'kasse' (it must start with "/"); use /kasse instead (see --help)`,
    exitCode: 2,
  });
  // One that ends in the API's own path would serve /kasse/api/v1/api/v1/: refused with the one meant.
  const own = "the service puts the API's path after it";
  for (const [given, status, instead] of [
    ['/kasse/api/v1', '/kasse/api/v1/api/v1/status', 'use /kasse instead'],
    ['/kasse/api/', '/kasse/api/api/v1/status', 'use /kasse instead'],
    ['/api/v1', '/api/v1/api/v1/status', 'leave it out'],
    ['/kasse/api//', '/kasse/api/api/v1/status', 'use /kasse instead'],
    ['/kasse/api/v1/api', '/kasse/api/v1/api/api/v1/status', 'use /kasse instead'],
    ['/kasse/api/v1/buchungen', '/kasse/api/v1/buchungen/api/v1/status', 'use /kasse instead'],
  ]) {
    assert.deepEqual(outcome(['--db', 'x', '--base-path', given ?? ''], {}), {
      error: `--base-path ${BASE_PATH_RULE}, not '${given}' (${own}: ${status}); ${instead} (see --help)`,
      exitCode: 2,
    });
  }
  for (const fine of ['/apis', '/apiv1', '/x/api-docs', '/api/v2', '/kasse/Api']) {
    const taken = outcome(['--db', 'x', '--base-path', fine], USER) as { command?: string };
    assert.equal(taken.command, 'serve', `${fine}: ${JSON.stringify(taken)}`);
  }
});

test('parseCommandLine: every flag is checked before the credentials', () => {
  assert.deepEqual(outcome(['--db', 'x.sqlite', '--port', '65536'], {}), {
    error: "--port must be a whole number from 0 to 65535, not '65536' (see --help)",
    exitCode: 2,
  });
});

test('parseCommandLine: a bcrypt hash in BOOKING_SEARCH_PASSWORD, whole or cut short, is refused, not taken for a password', () => {
  const BCRYPT = '$2y$10$GEHEIMNISabcdefghijklmuH6mZ9rH9uJ3k8E1pY6v9gqXw0y3m2e';
  const advice = 'make a scrypt hash with booking-search-server hash-password';
  const rows: Array<[secret: string, problem: string]> = [
    [BCRYPT, `the secret is a hash of type bcrypt, which this service cannot check; ${advice}`],
    [
      BCRYPT.slice(0, -1),
      `the secret starts as a hash of type bcrypt but is cut short or damaged, and this service cannot check bcrypt anyway; ${advice}`,
    ],
  ];
  for (const [secret, problem] of rows) {
    assert.deepEqual(outcome(['--demo'], { BOOKING_SEARCH_USER: 'bc', BOOKING_SEARCH_PASSWORD: secret }), {
      error: `BOOKING_SEARCH_PASSWORD: ${problem}`,
      exitCode: 1,
    });
  }
});

test('parseCommandLine: a hash cut before its first $ or } (a known scheme alone) is refused, not taken for a password', () => {
  const advice = 'make a scrypt hash with booking-search-server hash-password';
  for (const secret of [
    '$scrypt',
    '$argon2id',
    '$2b',
    '{SSHA',
    '$6',
    '{SSHA512',
    '{ARGON2',
    '$pbkdf2-sha256',
    '$bcrypt',
    '$bcrypt-sha256',
    '$sha512',
    '{ARGON2ID',
    '{argon2i',
    '{SHA512-CRYPT',
    '{BLF-CRYPT',
    '{SCRAM-SHA-256',
    '{CRAM-MD5',
  ]) {
    assert.deepEqual(outcome(['--demo'], { BOOKING_SEARCH_USER: 'bc', BOOKING_SEARCH_PASSWORD: secret }), {
      error: `BOOKING_SEARCH_PASSWORD: the secret is the start of a password hash, cut short; ${advice}`,
      exitCode: 1,
    });
  }
  // A password that merely starts with a dollar sign is one.
  assert.deepEqual(
    pick(outcome(['--demo'], { BOOKING_SEARCH_USER: 'bc', BOOKING_SEARCH_PASSWORD: '$ecret' }), ['credentialsFrom']),
    {
      credentialsFrom: 'environment',
    },
  );
});

test('parseCommandLine: credentials come from the environment, or the demo default', () => {
  assert.deepEqual(pick(outcome(['--db', 'x.sqlite'], USER), ['credentialsFrom']), { credentialsFrom: 'environment' });
  assert.deepEqual(pick(outcome(['--demo'], {}), ['credentialsFrom']), { credentialsFrom: 'demo default' });
  assert.deepEqual(pick(outcome(['--demo'], USER), ['credentialsFrom']), { credentialsFrom: 'environment' });
  assert.deepEqual(outcome(['--db', 'x.sqlite'], {}), {
    error: 'no credentials: set BOOKING_SEARCH_USER and BOOKING_SEARCH_PASSWORD, or pass --credentials-file FILE',
    exitCode: 1,
  });
  assert.deepEqual(outcome(['--db', 'x.sqlite'], { BOOKING_SEARCH_USER: 'kasse' }), {
    error: 'BOOKING_SEARCH_USER is set but BOOKING_SEARCH_PASSWORD is empty or missing',
    exitCode: 1,
  });
  assert.deepEqual(outcome(['--db', 'x.sqlite', '--credentials-file', 'zugang'], USER), {
    error:
      'credentials are given twice: use BOOKING_SEARCH_USER/BOOKING_SEARCH_PASSWORD or --credentials-file, not both',
    exitCode: 1,
  });
});

test('parseCommandLine: an empty variable counts as not set; BOOKING_SEARCH_PASSWORD may hold a hash', () => {
  const empty = { BOOKING_SEARCH_USER: '', BOOKING_SEARCH_PASSWORD: '' };
  assert.deepEqual(pick(outcome(['--demo'], empty), ['credentialsFrom']), { credentialsFrom: 'demo default' });
  assert.deepEqual(outcome(['--db', 'x.sqlite'], empty), {
    error: 'no credentials: set BOOKING_SEARCH_USER and BOOKING_SEARCH_PASSWORD, or pass --credentials-file FILE',
    exitCode: 1,
  });
  const hash = '$scrypt$ln=17,r=8,p=1$FDRD+btCnb1iWl60peMllg$bg0D73v1G6BkaqbMvdUC3nzRigVWvnPbFmIM9I9wqOU';
  assert.deepEqual(
    pick(outcome(['--demo'], { BOOKING_SEARCH_USER: 'kasse', BOOKING_SEARCH_PASSWORD: hash }), ['credentials']),
    {
      credentials: [{ username: 'kasse', passwordHash: hash }],
    },
  );
  assert.deepEqual(outcome(['--demo'], { BOOKING_SEARCH_USER: 'kasse', BOOKING_SEARCH_PASSWORD: `${hash}!` }), {
    error:
      'BOOKING_SEARCH_PASSWORD holds a hash that is not usable: not a scrypt hash of the form $scrypt$ln=17,r=8,p=1$<salt>$<hash>; booking-search-server hash-password makes one',
    exitCode: 1,
  });
  assert.deepEqual(outcome(['--demo'], { BOOKING_SEARCH_USER: 'ka:sse', BOOKING_SEARCH_PASSWORD: 'x' }), {
    error: 'BOOKING_SEARCH_USER must not contain a colon',
    exitCode: 1,
  });
  assert.deepEqual(outcome(['--demo'], { BOOKING_SEARCH_USER: 'ka\u001bsse', BOOKING_SEARCH_PASSWORD: 'x' }), {
    error: 'BOOKING_SEARCH_USER must not contain a control character',
    exitCode: 1,
  });
  // Their Basic header would be longer than the login reads: refused at the start, not at every login.
  assert.deepEqual(outcome(['--demo'], { BOOKING_SEARCH_USER: 'long', BOOKING_SEARCH_PASSWORD: 'x'.repeat(3500) }), {
    error: 'BOOKING_SEARCH_USER and BOOKING_SEARCH_PASSWORD together are too long: at most 3065 bytes of UTF-8',
    exitCode: 1,
  });
});

test('parseCommandLine reads no file: --credentials-file is named for the caller to read', () => {
  const missing = '/nonexistent/booking-search-server/credentials';
  assert.deepEqual(
    pick(outcome(['--db', 'x.sqlite', '--credentials-file', missing], {}), [
      'credentials',
      'credentialsFrom',
      'credentialsFile',
    ]),
    {
      credentials: [],
      credentialsFrom: 'file',
      credentialsFile: missing,
    },
  );
});

test('a credentials file and the environment are checked by the library, and named by line or variable', () => {
  const file = 'zugang';
  const lines = '# Kommentar\n\nbank:geheim\nkas:se:x\nbank:anders\n';
  assert.throws(() => parseCredentialsFile(lines, file), {
    message: 'credentials file zugang, line 5: the user of line 3 is given again',
  });
  assert.throws(
    () => validateCredentials(parseCredentialsFile('bank:geheim\n', file).concat({ username: 'bank', password: 'x' })),
    {
      message: 'credentials[1].username is the same as credentials[0].username',
    },
  );
  assert.deepEqual(parseCredentialsFile('bank:ge:heim\r\npruefer:x\r\n', file), [
    { username: 'bank', password: 'ge:heim' },
    { username: 'pruefer', password: 'x' },
  ]);
});

test('a plain password that begins or ends with white space is refused, from the file and the environment, never echoed', () => {
  const advice =
    'the password begins or ends with a space or tab, which a copy often adds: remove it; a password that has one is given as its hash (booking-search-server hash-password)';
  for (const [secret, line] of [
    ['alicepw7 ', 2],
    ['\tgeheim', 2],
    ['ge heim\u00a0', 2],
  ] as const) {
    assert.throws(() => parseCredentialsFile(`bank:eins\nalice:${secret}\n`, 'zugang'), {
      message: `credentials file zugang, line ${line}: ${advice}`,
    });
    assert.deepEqual(outcome(['--demo'], { BOOKING_SEARCH_USER: 'alice', BOOKING_SEARCH_PASSWORD: secret }), {
      error: `BOOKING_SEARCH_PASSWORD: ${advice}`,
      exitCode: 1,
    });
  }
  // Within the password a space is the password's.
  assert.deepEqual(parseCredentialsFile('alice:ge heim\n', 'zugang'), [{ username: 'alice', password: 'ge heim' }]);
});

test('a user that begins or ends with white space is refused, from the file and the environment, whatever its secret', () => {
  const advice = 'begins or ends with a space or tab, which a copy often adds: remove it';
  for (const user of ['bob ', ' bob', 'bob\t']) {
    for (const secret of [
      'pw2',
      '$scrypt$ln=17,r=8,p=1$FDRD+btCnb1iWl60peMllg$bg0D73v1G6BkaqbMvdUC3nzRigVWvnPbFmIM9I9wqOU',
    ]) {
      assert.throws(() => parseCredentialsFile(`alice:eins\n${user}:${secret}\n`, 'zugang'), {
        message: `credentials file zugang, line 2: the user ${advice}`,
      });
    }
    assert.deepEqual(outcome(['--demo'], { BOOKING_SEARCH_USER: user, BOOKING_SEARCH_PASSWORD: 'pw2' }), {
      error: `BOOKING_SEARCH_USER ${advice}`,
      exitCode: 1,
    });
  }
  // Within the user a space is the user's.
  assert.deepEqual(parseCredentialsFile('bob smith:pw2\n', 'zugang'), [{ username: 'bob smith', password: 'pw2' }]);
});
